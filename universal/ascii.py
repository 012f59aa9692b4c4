"""ASCII spellings of the symbols the tables print, for terminals and pipes that cannot show them.

The tables use a few non-ASCII symbols (``C̄``, ``—``, ``∞``, ``±``, the sparkline blocks). Where
the output encoding cannot encode them (``PYTHONIOENCODING=ascii``, an ASCII-only terminal) the
console spells them in ASCII *before* rich measures the columns, so the table stays aligned
(``C̄`` becomes ``Cbar``, ``—`` becomes ``-``, ``…`` becomes ``...``); whatever else reaches
standard output goes through :func:`install_ascii_fallback`'s error handler, which uses the same
spellings and ``?`` for anything else, so the output is complete instead of a
``UnicodeEncodeError``.
"""

from __future__ import annotations

import codecs
import copy
import sys

#: Every non-ASCII symbol the reports print, and how it is spelled in ASCII.
SPELLINGS: dict[str, str] = {
    "\u0304": "bar",      # combining macron: C̄ (expected congestion) -> Cbar
    "—": "-", "–": "-", "…": "...", "∞": "inf", "±": "+/-", "·": "*", "²": "^2", "×": "x", "§": "section ",
    "≤": "<=", "≥": ">=", "≈": "~", "→": "->", "≠": "!=", "√": "sqrt",
    # Greek letters the papers name parameters with
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "eps", "λ": "lambda", "μ": "mu",
    "π": "pi", "ρ": "rho", "σ": "sigma", "Θ": "Theta", "Ω": "Omega",
    # sparkline blocks, lowest to highest
    "▁": "_", "▂": ".", "▃": ",", "▄": "-", "▅": "~", "▆": "=", "▇": "*", "█": "#",
    # subscripts (lat₀: the zero-load latency)
    "₀": "0", "₁": "1", "₂": "2",
}
_TABLE = str.maketrans(SPELLINGS)
_ERRORS = "universal-ascii"


def spell_ascii(text: str) -> str:
    """``text`` with every symbol of :data:`SPELLINGS` spelled in ASCII.

    Examples
    --------
    >>> spell_ascii("C̄ = 1.5 ± 0.1, T 3–5, b = ∞")
    'Cbar = 1.5 +/- 0.1, T 3-5, b = inf'
    """
    return text.translate(_TABLE)


def can_encode(encoding: str, text: str = "".join(SPELLINGS)) -> bool:
    """Whether ``encoding`` encodes every symbol the reports print.

    Examples
    --------
    >>> can_encode("utf-8"), can_encode("ascii")
    (True, False)
    """
    try:
        text.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _replace(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: the ASCII spelling of the characters that do not encode, or ``?``."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start:error.end]
    return "".join(SPELLINGS.get(c, "?") for c in bad), error.end


def install_ascii_fallback(stream=None) -> bool:
    """Make ``stream`` (standard output by default) spell unencodable characters in ASCII instead
    of raising ``UnicodeEncodeError``; nothing changes when its encoding shows every symbol.

    Returns
    -------
    bool
        Whether the fallback was installed.

    Examples
    --------
    >>> import io
    >>> out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    >>> install_ascii_fallback(out)
    True
    >>> _ = out.write("C̄ ∞"); out.flush(); out.buffer.getvalue()
    b'Cbar inf'
    """
    stream = sys.stdout if stream is None else stream
    encoding = getattr(stream, "encoding", None) or "ascii"
    if can_encode(encoding) or not hasattr(stream, "reconfigure"):
        return False
    try:
        codecs.lookup_error(_ERRORS)
    except LookupError:
        codecs.register_error(_ERRORS, _replace)
    stream.reconfigure(errors=_ERRORS)
    return True


def ascii_renderable(obj):
    """A copy of a string, rich Text or rich Table with its symbols spelled in ASCII (anything
    else unchanged); a console that cannot encode the symbols prints this instead of ``obj``.

    Examples
    --------
    >>> from rich.table import Table
    >>> table = Table("C̄", "±")
    >>> table.add_row("1.5", "—")
    >>> [c.header for c in ascii_renderable(table).columns], list(ascii_renderable(table).columns[1].cells)
    (['Cbar', '+/-'], ['-'])
    """
    from rich.table import Table
    from rich.text import Text

    if isinstance(obj, str):
        return spell_ascii(obj)
    if isinstance(obj, Text):
        spelled = spell_ascii(obj.plain)
        if spelled == obj.plain:
            return obj
        return Text(spelled, style=obj.style, justify=obj.justify, overflow=obj.overflow, no_wrap=obj.no_wrap)
    if isinstance(obj, Table):
        table = copy.copy(obj)
        table.title = ascii_renderable(obj.title) if obj.title is not None else None
        table.caption = ascii_renderable(obj.caption) if obj.caption is not None else None
        table.columns = []
        for column in obj.columns:
            column = copy.copy(column)
            column.header = ascii_renderable(column.header)
            column.footer = ascii_renderable(column.footer)
            column._cells = [ascii_renderable(c) for c in column._cells]
            table.columns.append(column)
        return table
    return obj
