"""Reading the plain data files users give (edge lists, permutations, pairs, paths, matrices):
whitespace-separated fields, one record per line, ``#`` starts a comment (SPEC §8)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable

from universal.errors import UserError


def read_text(path: str | Path, what: str) -> str:
    """The text of a file the user gave, decoded as UTF-8 (a leading byte-order mark is dropped).

    Parameters
    ----------
    path : str or Path
    what : str
        What the file holds, for the error message (``"scenario"``, ``"edge list"``).

    Returns
    -------
    str

    Raises
    ------
    UserError
        If the file cannot be read or is not UTF-8 text (the message names the line and byte).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as f:
    ...     _ = f.write(b"# caf\\xe9\\n0 1\\n")
    >>> read_text(f.name, "pairs")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    universal.errors.UserError: pairs file '...' is not UTF-8 text: line 1 holds the byte 0xe9; save it as UTF-8
    >>> os.remove(f.name)
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {what} file {str(path)!r}: {exc.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(f"{what} file {str(path)!r} is not UTF-8 text: line {line} holds the byte "
                        f"0x{data[exc.start]:02x}; save it as UTF-8") from None


def read_rows(path: str | Path, what: str) -> list[tuple[int, list[str]]]:
    """The non-empty lines of a data file as ``(line number, fields)``, comments removed.

    Parameters
    ----------
    path : str or Path
    what : str
        What the file holds, for the error message (``"permutation"``, ``"edge list"``).

    Returns
    -------
    list of (int, list of str)

    Raises
    ------
    UserError
        If the file cannot be read or is not UTF-8 text.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("# pairs\\n0 1  # first\\n\\n2 3\\n")
    >>> read_rows(f.name, "pairs")
    [(2, ['0', '1']), (4, ['2', '3'])]
    >>> os.remove(f.name)
    """
    text = read_text(path, what)
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if fields:
            rows.append((lineno, fields))
    return rows


def check_writable(path: str | Path, what: str) -> Path:
    """Check, before any work, that a file could be written at ``path``.

    A probe file is created in the folder and removed at once (the only test that also holds
    for read-only mounts and for the superuser, whom permission bits do not stop).

    Parameters
    ----------
    path : str or Path
    what : str
        What will be written, for the error message (``"plot"``, ``"results file"``).

    Returns
    -------
    Path
        ``path`` with ``~`` expanded.

    Raises
    ------
    UserError
        If ``path`` is empty or a folder, or its folder is missing or cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> check_writable(Path(tempfile.mkdtemp()) / "loads.txt", "links file").name
    'loads.txt'
    >>> check_writable("", "plot")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: the plot file name is empty
    """
    if not str(path).strip():
        raise UserError(f"the {what} file name is empty")
    path = Path(path).expanduser()
    if path.is_dir():
        raise UserError(f"cannot write {what} {str(path)!r}: it is a folder")
    if not path.parent.is_dir():
        raise UserError(f"cannot write {what} {str(path)!r}: folder {str(path.parent)!r} does not exist")
    try:
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".probe")
    except OSError as exc:
        raise UserError(f"cannot write {what} {str(path)!r}: {exc.strerror}") from None
    os.close(fd)
    os.unlink(probe)
    return path


def write_atomically(path: str | Path, content: str | bytes | Callable[[BinaryIO], None]) -> Path:
    """Write a file so that no reader ever sees it half-written.

    The content goes to a temporary file in the same folder, which then replaces ``path``
    (``os.replace`` is atomic on POSIX and Windows) with the mode a new file would get; on any
    failure the temporary file is removed and ``path`` is left as it was.

    Parameters
    ----------
    path : str or Path
    content : str, bytes or callable
        The text (written as UTF-8), the bytes, or a function that writes to the binary file
        handle it is given (e.g. ``lambda f: figure.savefig(f, format="png")``).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    UserError
        If the folder cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_atomically(folder / "a.txt", "hello\\n").read_text()
    'hello\\n'
    >>> sorted(p.name for p in folder.iterdir())
    ['a.txt']
    """
    path = Path(path).expanduser()
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise UserError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            if callable(content):
                content(handle)
            else:
                handle.write(content.encode() if isinstance(content, str) else content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _mode_for(path))  # mkstemp makes the file private; give it the usual mode
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _mode_for(path: Path) -> int:
    """The mode a new file would get from the umask, or the mode ``path`` already has."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask
