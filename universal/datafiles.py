"""Reading the plain data files users give (edge lists, permutations, pairs, paths, matrices):
whitespace-separated fields, one record per line, ``#`` starts a comment (SPEC §8).

Writing the files a run outputs (:func:`write_atomically`, :func:`check_writable`, ...) is in
:mod:`universal.output_files`; its public names are imported here under the same names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from universal.errors import UserError
# imported here too: other modules and tests name them universal.datafiles.X
from universal.output_files import (check_writable, forget_inputs, output_kind, protect_inputs,  # noqa: F401
                                    release_streams, same_file, write_atomically)


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


#: Deepest nesting of arrays and tables accepted in scenario (TOML) and results (JSON) files; real
#: files nest a few levels, and the Python parsers recurse once per level.
MAX_NESTING = 64


def parse_nested(parse: Callable[[str], object], text: str, where: str) -> object:
    """``parse(text)`` (e.g. ``tomllib.loads`` or ``json.loads``), refusing nesting deeper than
    :data:`MAX_NESTING` levels with one clear error instead of a ``RecursionError``.

    Parameters
    ----------
    parse : callable
    text : str
    where : str
        The file, for the message.

    Returns
    -------
    object
        What ``parse`` returned.

    Examples
    --------
    >>> import json
    >>> parse_nested(json.loads, "[[1], {\\"a\\": [2]}]", "x.json")
    [[1], {'a': [2]}]
    >>> parse_nested(json.loads, "[" * 100 + "]" * 100, "x.json")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: x.json: arrays or tables nested deeper than 64 levels
    """
    try:
        value = parse(text)
    except RecursionError:
        value = None
    else:
        if _depth(value) <= MAX_NESTING:
            return value
    raise UserError(f"{where}: arrays or tables nested deeper than {MAX_NESTING} levels")


def _depth(value: object) -> int:
    """Nesting depth of lists and dicts, without recursion (a scalar is 0, ``[]`` is 1)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            level += 1
            deepest = max(deepest, level)
            stack.extend((v, level) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def load_json(text: str, where: str) -> object:
    """JSON as this tool's files hold it, every defect one UserError naming ``where``.

    Stricter than :func:`json.loads`: a key given twice in one object, and the non-standard
    ``NaN`` and ``Infinity``, are refused (Python's reader keeps the last key and accepts both);
    so are numbers of more digits than Python converts and nesting deeper than
    :data:`MAX_NESTING` levels.

    Examples
    --------
    >>> load_json('{"a": [1, 2]}', "x.json")
    {'a': [1, 2]}
    >>> load_json('{"a": 1, "a": 2}', "x.json")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: x.json: key 'a' is given twice in one object
    """
    import json

    def pairs(items: list) -> dict:
        out: dict = {}
        for key, value in items:
            if key in out:
                raise UserError(f"{where}: key {key[:40]!r} is given twice in one object")
            out[key] = value
        return out

    def constant(name: str) -> float:
        raise UserError(f"{where}: {name} is not a number this tool reads (JSON has no {name})")

    def loads(s: str) -> object:
        return json.loads(s, object_pairs_hook=pairs, parse_constant=constant)

    try:
        return parse_nested(loads, text, where)
    except UserError:
        raise
    except json.JSONDecodeError as exc:
        raise UserError(f"{where} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    except ValueError:      # an integer of more digits than int() converts
        raise UserError(f"{where}: a number has far too many digits") from None
