"""The HTML view as one self-contained file: the template with the stylesheet, the script and
the run's data inlined (no network access, no server: it opens from disk and works offline).

The file's first line marks it as a view written by this tool; :func:`check_html_path` lets
``--html`` replace only such a file (re-running a command refreshes its view), never any other
existing file, and refuses folders and FIFOs, all before any work.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from universal.errors import UserError

#: The first line of every view this tool writes (how it recognises its own files).
MARKER = "<!DOCTYPE html><!-- universal: HTML view of one run -->"


def _asset(name: str) -> str:
    return resources.files("universal.reporting.html").joinpath(name).read_text(encoding="utf-8")


def is_view_file(path: str | Path) -> bool:
    """Whether ``path`` is a regular file whose first line is a view's :data:`MARKER`.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    bool

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "notes.html").write_text("<html>my notes</html>")
    >>> is_view_file(folder / "notes.html"), is_view_file(folder / "new.html")
    (False, False)
    """
    try:
        with open(path, "rb") as handle:
            return handle.readline(len(MARKER) + 2).decode("utf-8", "replace").rstrip("\r\n") == MARKER
    except OSError:
        return False


def check_html_path(path: str | Path) -> Path:
    """Refuse, before any work, an ``--html`` name that the view must not be written to.

    A new name is fine, and so is an existing view written by this tool (it is replaced
    atomically). Refused with one line: a folder, a FIFO, a device or socket, an existing file
    that is not such a view, an input of the run, a missing or unwritable folder.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    Path

    Raises
    ------
    UserError

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "notes.html").write_text("<html>mine</html>")
    >>> check_html_path(folder / "notes.html")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    universal.errors.UserError: '...notes.html' exists and is not an HTML view written by universal; ...
    >>> check_html_path(folder / "run.html").name
    'run.html'
    >>> check_html_path(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    universal.errors.UserError: cannot write the HTML view to '...': it is a folder
    """
    from universal.datafiles import check_writable, output_kind

    kind = output_kind(path)
    if kind == "stream":
        raise UserError(f"cannot write the HTML view to {str(path)!r}: it is not a regular file (a FIFO or "
                        f"device); give a file name")
    if kind != "file":
        raise UserError(f"cannot write the HTML view to {str(path)!r}: {kind}")
    checked = check_writable(path, "the HTML view")
    if checked.exists() and not is_view_file(checked):
        raise UserError(f"{str(path)!r} exists and is not an HTML view written by universal; it is left as it "
                        f"is: remove it or choose another name")
    return checked


def render(view: dict) -> str:
    """The page of ``view`` (from :mod:`universal.reporting.html.data`) as one HTML text.

    The data goes in as JSON inside a ``<script type="application/json">`` element; ``</`` and
    ``://`` are written ``<\\/`` and ``:\\/\\/`` (the same JSON), so the data can neither end the
    element nor hold an address.

    Examples
    --------
    >>> page = render({"title": "a <b> & c", "x": "see https://example.org"})
    >>> page.startswith(MARKER), "https://" in page, "<title>a &lt;b&gt; &amp; c</title>" in page
    (True, False, True)
    """
    import html

    from universal import __version__

    data = json.dumps(view, separators=(",", ":"), allow_nan=False)
    data = data.replace("</", "<\\/").replace("://", ":\\/\\/")
    page = _asset("template.html")
    for key, value in [("{{CSS}}", _asset("view.css")), ("{{JS}}", _asset("view.js")),
                       ("{{TITLE}}", html.escape(str(view.get("title", "universal")))),
                       ("{{VERSION}}", html.escape(__version__))]:
        page = page.replace(key, value)
    return page.replace("{{DATA}}", data)     # last: the data may hold any of the keys above


def write_view(path: str | Path, view: dict) -> tuple[Path, int]:
    """Write the page of ``view`` to ``path`` atomically (a temporary file, then a rename).

    Parameters
    ----------
    path : str or Path
        Checked again with :func:`check_html_path` (the CLI checks it before any work).
    view : dict
        From :func:`universal.reporting.html.data.batch_view` or ``openloop_view``.

    Returns
    -------
    (Path, int)
        The file and its size in bytes.

    Examples
    --------
    >>> import tempfile
    >>> path, size = write_view(Path(tempfile.mkdtemp()) / "v.html", {"title": "t"})
    >>> is_view_file(path), size == path.stat().st_size
    (True, True)
    """
    from universal.datafiles import write_atomically

    text = render(view).encode("utf-8")
    return write_atomically(check_html_path(path), text), len(text)
