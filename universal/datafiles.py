"""Reading the plain data files users give (edge lists, permutations, pairs, paths, matrices):
whitespace-separated fields, one record per line, ``#`` starts a comment (SPEC §8)."""

from __future__ import annotations

from pathlib import Path

from universal.errors import UserError


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
        If the file cannot be read.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("# pairs\\n0 1  # first\\n\\n2 3\\n")
    >>> read_rows(f.name, "pairs")
    [(2, ['0', '1']), (4, ['2', '3'])]
    >>> os.remove(f.name)
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise UserError(f"cannot read {what} file {str(path)!r}: {exc.strerror}") from None
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if fields:
            rows.append((lineno, fields))
    return rows
