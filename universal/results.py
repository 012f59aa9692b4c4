"""Results files: what a long run has finished, one JSON line per finished cell (SPEC §8).

Scenario sweeps (:mod:`universal.sweep`) and open-loop studies (:mod:`universal.openloop.study`)
write every finished cell to a JSON Lines file as soon as it finishes, so that an interrupted run
keeps what it finished and ``--resume`` skips it. This module holds what they share:

* the first line, the *header* ``{"sweep": NAME, "settings": {...}, "version": V, "command": C}``
  (what the results were computed with, by which version of ``universal`` and which command
  line); resuming under other settings is refused;
* the safety rules (README "Files and safety"): an existing results file is continued only with
  ``resume`` and replaced only with ``overwrite``; anything else at that name is refused and left
  as it is (:func:`check_results_path`);
* atomic writes: the whole file is written to a temporary file that then replaces it
  (:func:`universal.output_files.write_atomically`), so a reader, a Ctrl-C or a SIGKILL never
  leaves half a line; a temporary file a SIGKILL left behind is removed by the next run
  (:func:`remove_stale_temporaries`);
* reading back: every line is checked (by a function the caller gives) before anything is
  used, and the first bad line is named (:func:`read_results_file`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Callable, Hashable

from universal import __version__
from universal.datafiles import load_json, output_kind, read_text, write_atomically
from universal.errors import UserError

__all__ = ["BadLine", "check_field_names", "check_results_path", "is_results_file", "remove_stale_temporaries",
           "read_results_file", "write_results_file"]


class BadLine(Exception):
    """A results-file line that does not have the expected shape (turned into a UserError that
    names the file and the line)."""


def check_field_names(row: object, names, what: str) -> None:
    """Raise :class:`BadLine` unless ``row`` is an object with exactly the fields ``names``
    (a row written by another version of the tool has others).

    Examples
    --------
    >>> check_field_names({"T": 3}, ["T"], "row 1")
    >>> check_field_names({"T": 3, "x": 1}, ["T"], "row 1")
    Traceback (most recent call last):
    ...
    universal.results.BadLine: row 1 has an unknown field 'x' (written by another version of universal?)
    """
    if not isinstance(row, dict):
        raise BadLine(f"{what} is not an object")
    missing = [name for name in names if name not in row]
    extra = [name for name in row if name not in names]
    if missing or extra:
        problem = f"lacks {missing[0]!r}" if missing else f"has an unknown field {extra[0]!r}"
        raise BadLine(f"{what} {problem} (written by another version of universal?)")


def write_results_file(path: Path, name: str, settings: dict, lines: list[dict], command: str | None) -> None:
    """Write the header and ``lines`` (one JSON object each) atomically.

    Parameters
    ----------
    path : Path
    name : str
        The sweep's or study's name (the header's ``"sweep"``).
    settings : dict
        What the results depend on; :func:`read_results_file` refuses other settings.
    lines : list of dict
        The finished cells, in the order they should be read.
    command : str or None
        The command line that ran the work.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> write_results_file(path, "demo", {"n": 2}, [{"cell": 1}], "universal demo")
    >>> print(path.read_text().splitlines()[1])
    {"cell": 1}
    """
    header = {"sweep": name, "settings": settings, "version": __version__, "command": command}
    text = "\n".join(json.dumps(line) for line in [header, *lines]) + "\n"
    write_atomically(path, text)


def read_results_file(path: Path, settings: dict, parse_line: Callable[[object], tuple[Hashable, object]]) -> dict:
    """The finished cells of a results file written with ``settings``, keyed as ``parse_line`` says.

    Every line is checked before anything is used: the header (line 1), then each cell line by
    ``parse_line``, which returns ``(key, value)`` or raises :class:`BadLine`; a key seen twice is
    refused too.

    Parameters
    ----------
    path : Path
    settings : dict
        Must equal the header's settings (after a JSON round trip).
    parse_line : callable
        Checks one parsed JSON line and returns its key and value.

    Returns
    -------
    dict
        Key -> value, in file order.

    Raises
    ------
    UserError
        Naming the first line that fails; the file is left as it is.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> write_results_file(path, "demo", {"n": 2}, [{"cell": 1}, {"cell": 2}], None)
    >>> read_results_file(path, {"n": 2}, lambda line: (line["cell"], line))
    {1: {'cell': 1}, 2: {'cell': 2}}
    >>> read_results_file(path, {"n": 3}, lambda line: (line["cell"], line))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    universal.errors.UserError: results file '...r.jsonl' was computed with other settings ...
    """
    lines = read_text(path, "results").split("\n")
    if not lines[0].strip():
        raise UserError(f"results file {str(path)!r} is not a sweep results file: line 1 is not a sweep "
                        f"header; remove the file or run without --resume")
    _check_header(_json_line(path, 1, lines[0]), path, settings)
    done: dict = {}
    for lineno, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        where = f"results file {str(path)!r}, line {lineno}"
        try:
            key, value = parse_line(_json_line(path, lineno, line))
        except BadLine as exc:
            raise UserError(f"{where}: {exc}; remove the file or run without --resume") from None
        if key in done:
            raise UserError(f"{where}: cell {_show(key)} appears a second time; remove the file or run "
                            f"without --resume")
        done[key] = value
    return done


def _show(key: Hashable) -> str:
    try:
        return json.dumps(json.loads(key)) if isinstance(key, str) else str(key)
    except ValueError:
        return str(key)


def _json_line(path: Path, lineno: int, line: str) -> object:
    try:
        json.loads(line)            # the syntax first, for a message that says what the file is not
    except RecursionError:
        pass                        # load_json names the nesting
    except json.JSONDecodeError as exc:
        where = " is not a sweep results file: line 1" if lineno == 1 else f", line {lineno}"
        raise UserError(f"results file {str(path)!r}{where} is not JSON ({exc.msg}); "
                        f"remove the file or run without --resume") from None
    except ValueError:
        pass                        # too many digits: load_json says so
    return load_json(line, f"results file {str(path)!r}, line {lineno}")


_HEADER_TYPES = {"sweep": str, "settings": dict, "version": str, "command": (str, type(None))}


def _check_header(header: object, path: Path, settings: dict) -> None:
    where = f"results file {str(path)!r}, line 1"
    if not isinstance(header, dict) or not isinstance(header.get("sweep"), str) or "settings" not in header:
        raise UserError(f"results file {str(path)!r} is not a sweep results file: line 1 is not a sweep header "
                        f"(an object with \"sweep\" and \"settings\"); remove the file or run without --resume")
    for key, value in header.items():
        if key not in _HEADER_TYPES or not isinstance(value, _HEADER_TYPES[key]):
            raise UserError(f"{where}: unexpected {key!r} in the sweep header; remove the file or run "
                            f"without --resume")
    if header["settings"] != json.loads(json.dumps(settings)):
        by = f" (by: {header['command']})" if header.get("command") else ""
        raise UserError(f"results file {str(path)!r} was computed with other settings than this run{by}; "
                        f"remove it or run without --resume")


def is_results_file(path: Path) -> bool:
    """Whether ``path`` is a regular file whose first line is a results-file header of this tool.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "notes.txt").write_text("my notes\\n")
    >>> is_results_file(folder / "notes.txt"), is_results_file(folder / "new.jsonl")
    (False, False)
    """
    if output_kind(path) != "file":
        return False
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 20)
        header = load_json(first.decode("utf-8"), str(path))
    except (OSError, ValueError):  # UnicodeDecodeError and UserError are ValueErrors
        return False
    return isinstance(header, dict) and isinstance(header.get("sweep"), str) and isinstance(
        header.get("settings"), dict)


def resumes_itself(path: str | Path, settings: dict, *, resume: bool = False, overwrite: bool = False) -> bool:
    """Whether a run should continue results file ``path``: with ``resume``, or when the file is
    a finished or partial results file of exactly these ``settings`` and ``overwrite`` is not
    asked for. Running the same study a second time then shows the stored results and computes
    only the cells missing, instead of refusing (a file of other settings is still refused by
    :func:`check_results_path`).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_results_file(folder / "r.jsonl", "demo", {"d": [2, 3]}, [], None)
    >>> resumes_itself(folder / "r.jsonl", {"d": [2, 3]}), resumes_itself(folder / "r.jsonl", {"d": [4]})
    (True, False)
    """
    if resume or overwrite:
        return resume
    path = Path(path).expanduser()
    if output_kind(path) != "file" or not is_results_file(path):
        return False
    with open(path, "rb") as handle:
        header = load_json(handle.readline(1 << 20).decode("utf-8"), str(path))
    return header["settings"] == json.loads(json.dumps(settings))


def check_results_path(path: str | Path, *, resume: bool = False, overwrite: bool = False) -> Path:
    """Refuse a results file name that would replace something else, before any work.

    A name that does not exist yet is fine. An existing results file of this tool is continued
    with ``resume`` (:func:`read_results_file` then checks it line by line) or replaced with
    ``overwrite``; without either it is refused, so that running
    a sweep again never throws away its results by accident. Anything else (the user's notes, a
    scenario, a FIFO, a folder) is refused and left as it is. A link to a results file counts as
    the results file (its target is written and the link kept).

    Parameters
    ----------
    path : str or Path
    resume, overwrite : bool

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
    >>> _ = (folder / "notes.txt").write_text("my notes\\n")
    >>> check_results_path(folder / "notes.txt", overwrite=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    universal.errors.UserError: ...notes.txt' exists and is not a sweep results file; ...
    """
    path = Path(path).expanduser()
    if str(path) in ("", "."):
        raise UserError("the results file name is empty")
    kind = output_kind(path)
    if kind == "stream":
        raise UserError(f"results file {str(path)!r} must be a regular file (it is read back by --resume), "
                        f"not a FIFO or device")
    if kind != "file":
        raise UserError(f"cannot write results file {str(path)!r}: {kind}")
    if not os.path.lexists(path) or not os.path.exists(path):
        return path  # a new name, or a link to a name not written yet
    if resume:
        return path  # read_results_file checks every line and names the first that is wrong
    if not is_results_file(path):
        raise UserError(f"{str(path)!r} exists and is not a sweep results file; it is left as "
                        f"it is (choose another --out)")
    if not (resume or overwrite):
        raise UserError(f"results file {str(path)!r} exists and holds another study's results (other "
                        f"settings): give --overwrite to replace it, or choose another --out")
    return path


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove the temporary files an earlier run killed mid-write left next to results file ``path``.

    :func:`universal.output_files.write_atomically` names them ``.NAME.XXXXXXXX.tmp`` in the folder of
    the file (the target's folder for a link), :func:`universal.output_files.check_writable` its probe
    ``.NAME.XXXXXXXX.probe``; only those exact patterns are removed.

    Returns
    -------
    list of Path
        The files removed.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / ".r.jsonl.ab_cd123.tmp").write_text("{")
    >>> [p.name for p in remove_stale_temporaries(folder / "r.jsonl")]
    ['.r.jsonl.ab_cd123.tmp']
    """
    target = Path(os.path.realpath(path))
    pattern = re.compile(re.escape(f".{target.name}.") + r"[A-Za-z0-9_]{8}\.(tmp|probe)")
    removed = []
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if pattern.fullmatch(entry.name) and entry.is_file() and not entry.is_symlink():
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed
