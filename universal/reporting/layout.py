"""Tables that fit the terminal: numbers are never cut and names are never made ambiguous.

rich shrinks a table that is wider than the console by cutting cells with an ellipsis, which
turns ``(287–320)`` into ``(287–3…`` and both ``random-rank`` and ``random`` into ``rando…``.
A :class:`FitTable` instead picks, at render time, the first layout of a fixed ladder that fits
the console's width without cutting anything:

1. everything on one line;
2. *folded*: a cell made of parts (a mean and its range, a decimal and its fraction) puts each
   part on its own line, and long headers take two lines;
3. optional columns are left out one at a time, least useful first, and the caption names them
   (not when every column was asked for, ``wide=True``);
4. names fold after ``:`` and ``,`` (one parameter per line);
5. long protocol and path-system names are replaced by short labels, explained in a legend line
   under the table; a label is only used where it is unique in its column;
6. a compact frame: no outer border, one space between columns.

Free-text columns (a description, how a value was found) wrap between words at every step. When
even the last layout is too wide (``wide=True`` on a narrow terminal), the table is printed in
pieces, each with the name columns and as many value columns as fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

#: Short labels for long protocol and path-system names (used only when a table is too wide,
#: and always explained by a legend). A test checks that none is itself a registered name.
SHORT_NAMES: dict[str, str] = {
    "random-rank": "RR",
    "growing-rank": "GR",
    "farthest-to-go": "FTG",
    "nearest-to-go": "NTG",
    "longest-in-system": "LIS",
    "trial-and-failure": "T&F",
    "duplication": "DUP",
    "dimension-order": "dim-ord",
    "random-shortest": "rnd-short",
}


@dataclass(frozen=True)
class Fold:
    """A cell of several parts: one line when there is room, one part per line when folded.

    Examples
    --------
    >>> Fold("11.3", "(10–13)").text(folded=True)
    '11.3\\n(10–13)'
    """

    parts: tuple[str, ...]

    def __init__(self, *parts: str) -> None:
        object.__setattr__(self, "parts", tuple(p for p in parts if p))

    def text(self, folded: bool) -> str:
        return ("\n" if folded else " ").join(self.parts)


Cell = str | Fold


@dataclass
class Col:
    """One column of a :class:`FitTable`.

    Attributes
    ----------
    header : str
        The header.
    justify : str
        ``"left"`` or ``"right"``.
    kind : str
        ``"number"`` (never wrapped; folds only at :class:`Fold` parts), ``"name"`` (never
        wrapped; folds after ``:`` and ``,`` and may take a short label from :data:`SHORT_NAMES`),
        ``"label"`` (never wrapped, never shortened; an identifier such as B or a link) or
        ``"text"`` (wraps between words).
    folded_header : str or None
        The header in a folded layout (may hold a line break), e.g. ``"T/\\n(C+D)"``.
    drop : int
        0 for a column that is always shown; otherwise columns are left out in decreasing order
        of ``drop`` when the table is too wide.
    """

    header: str
    justify: str = "right"
    kind: str = "number"
    folded_header: str | None = None
    drop: int = 0


@dataclass(frozen=True)
class Layout:
    """One rung of the ladder: which simplifications are applied."""

    fold: bool = False
    dropped: tuple[str, ...] = ()
    fold_names: bool = False
    short: bool = False
    compact: bool = False


@dataclass
class FitTable:
    """A table that chooses its layout for the console it is printed on.

    Parameters
    ----------
    columns : list of Col
    rows : list of (cells, style)
        One entry per row: the cells (str or :class:`Fold`) and a rich style or None.
    title : str
    caption : list of str
        Caption lines; notes about left-out columns and short labels are added below them.
    sections : set of int
        Row indexes before which a separating line is drawn.
    wide : bool
        Never leave out a column.

    Examples
    --------
    >>> t = FitTable([Col("protocol", "left", "name"), Col("T")],
    ...              [(["random-rank", Fold("11.3", "(10–13)")], None)], title="demo")
    >>> t.layout_for(80)
    Layout(fold=False, dropped=(), fold_names=False, short=False, compact=False)
    >>> t.layout_for(24).fold, t.layout_for(24).short
    (True, True)
    >>> print(render_text(t, 24))
             demo
    ┏━━━━━━━━━━┳━━━━━━━━━┓
    ┃ protocol ┃       T ┃
    ┡━━━━━━━━━━╇━━━━━━━━━┩
    │ RR       │    11.3 │
    │          │ (10–13) │
    └──────────┴─────────┘
       RR = random-rank
    """

    columns: list[Col]
    rows: list[tuple[Sequence[Cell], str | None]]
    title: str | None = None
    caption: list[str] = field(default_factory=list)
    sections: set[int] = field(default_factory=set)
    wide: bool = False

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def headers(self) -> list[str]:
        return [c.header for c in self.columns]

    # -- the ladder -------------------------------------------------------------------------
    def layouts(self) -> list[Layout]:
        """The layouts to try, in order."""
        ladder = [Layout(), Layout(fold=True)]
        dropped: tuple[str, ...] = ()
        if not self.wide:
            for col in sorted((c for c in self.columns if c.drop), key=lambda c: -c.drop):
                dropped += (col.header,)
                ladder.append(Layout(fold=True, dropped=dropped))
        ladder.append(Layout(fold=True, dropped=dropped, fold_names=True))
        ladder.append(Layout(fold=True, dropped=dropped, fold_names=True, short=True))
        ladder.append(Layout(fold=True, dropped=dropped, fold_names=True, short=True, compact=True))
        return ladder

    def layout_for(self, width: int) -> Layout:
        """The first layout whose table is at most ``width`` cells wide (else the last one)."""
        ladder = self.layouts()
        for layout in ladder:
            if self._fits(layout, width):
                return layout
        return ladder[-1]

    def table(self, width: int) -> Table:
        """The rich table for a console ``width`` cells wide (one piece: see :meth:`parts`).

        Examples
        --------
        >>> FitTable([Col("T")], [([Fold("11.3", "(10–13)")], None)]).table(80).row_count
        1
        """
        layout = self.layout_for(width)
        return self._build(layout, self._text_widths(layout, width))

    def visible(self, width: int) -> tuple[list[str], list[list[str]]]:
        """The headers and cells as shown on a console ``width`` cells wide (line breaks kept).

        Examples
        --------
        >>> t = FitTable([Col("protocol", "left", "name")], [(["growing-rank"], None)])
        >>> t.visible(80), t.visible(10)
        ((['protocol'], [['growing-rank']]), (['protocol'], [['GR']]))
        """
        _, headers, body = self._grid(self.layout_for(width))
        return headers, body

    def parts(self, width: int) -> list["FitTable"]:
        """This table, or, when even its last layout is wider than ``width``, consecutive pieces
        of it: each repeats the label columns (names, B, b) and takes as many of the value
        columns as fit; the caption goes under the last piece.

        Examples
        --------
        >>> t = FitTable([Col("paths", "left", "name")] + [Col(f"value {i}") for i in range(6)],
        ...              [(["valiant"] + [str(10 ** i) for i in range(6)], None)], caption=["note"])
        >>> [p.headers for p in t.parts(40)]
        [['paths', 'value 0', 'value 1', 'value 2'], ['paths', 'value 3', 'value 4', 'value 5']]
        """
        if self._fits(self.layout_for(width), width):
            return [self]
        labels = [i for i, c in enumerate(self.columns) if c.kind in ("name", "label")]
        left_out = set(self.layouts()[-1].dropped)      # none with wide=True
        values = [i for i, c in enumerate(self.columns) if i not in labels and c.header not in left_out]
        pieces: list[FitTable] = []
        while values:
            take = 1
            while take < len(values) and self._piece(labels, values[:take + 1], last=False).layout_fits(width):
                take += 1
            last = take == len(values)
            pieces.append(self._piece(labels, values[:take], last=last, first=not pieces))
            values = values[take:]
        if left_out:
            pieces[-1].caption = pieces[-1].caption + [f"left out at this width: {', '.join(sorted(left_out))} "
                                                       "(--columns chooses the columns)"]
        return pieces

    def _piece(self, labels: list[int], values: list[int], last: bool, first: bool = True) -> "FitTable":
        index = sorted(labels + values)
        return FitTable([self.columns[i] for i in index], [([cells[i] for i in index], style) for cells, style in self.rows],
                        title=self.title if first else f"{self.title} (continued)" if self.title else None,
                        caption=self.caption if last else [], sections=self.sections, wide=True)

    def layout_fits(self, width: int) -> bool:
        """Whether some layout of this table is at most ``width`` cells wide.

        Examples
        --------
        >>> t = FitTable([Col("T")], [(["12345"], None)])
        >>> t.layout_fits(6), t.layout_fits(5)         # 5 digits and one space before them
        (True, False)
        """
        return self._fits(self.layout_for(width), width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from universal.ascii import can_encode
        table = self if can_encode(options.encoding) else self.spelled_ascii()
        for part in table.parts(options.max_width):
            yield part.table(options.max_width)

    def spelled_ascii(self) -> "FitTable":
        """The same table with every symbol spelled in ASCII (``C̄`` as ``Cbar``, ``±`` as ``+/-``),
        measured as printed: spelling after the layout was chosen made an ASCII-only table wider
        than the console, and rich then cut its headers.

        Examples
        --------
        >>> FitTable([Col("C̄"), Col("±")], [(["0.5", "—"], None)]).spelled_ascii().headers
        ['Cbar', '+/-']
        """
        from dataclasses import replace

        from universal.ascii import spell_ascii

        def cell(c: Cell) -> Cell:
            return Fold(*(spell_ascii(p) for p in c.parts)) if isinstance(c, Fold) else spell_ascii(c)

        columns = [replace(c, header=spell_ascii(c.header),
                           folded_header=None if c.folded_header is None else spell_ascii(c.folded_header))
                   for c in self.columns]
        rows = [([cell(c) for c in cells], style) for cells, style in self.rows]
        return FitTable(columns, rows, title=None if self.title is None else spell_ascii(self.title),
                        caption=[spell_ascii(line) for line in self.caption], sections=self.sections,
                        wide=self.wide)

    # -- measuring ----------------------------------------------------------------------------
    def _shown(self, layout: Layout) -> list[int]:
        return [i for i, c in enumerate(self.columns) if c.header not in layout.dropped]

    def _labels(self, layout: Layout) -> dict[int, dict[str, str]]:
        """Per name column: full name -> label shown (short only where unique in the column)."""
        out: dict[int, dict[str, str]] = {}
        for i, col in enumerate(self.columns):
            if col.kind != "name":
                continue
            names = list(dict.fromkeys(str(cells[i]) for cells, _ in self.rows))
            labels = {n: (short_name(n) if layout.short else n) for n in names}
            shown = list(labels.values())
            out[i] = {n: (lab if shown.count(lab) == 1 and lab not in names or lab == n else n)
                      for n, lab in labels.items()}
        return out

    def _cell_text(self, i: int, cell: Cell, layout: Layout, labels: dict[int, dict[str, str]]) -> str:
        col = self.columns[i]
        if isinstance(cell, Fold):
            return cell.text(layout.fold)
        if col.kind == "name":
            cell = labels[i].get(cell, cell)
            return _fold_name(cell) if layout.fold_names else cell
        return cell

    def _header_text(self, col: Col, layout: Layout) -> str:
        return col.folded_header if layout.fold and col.folded_header else col.header

    def _grid(self, layout: Layout) -> tuple[list[int], list[str], list[list[str]]]:
        labels = self._labels(layout)
        shown = self._shown(layout)
        headers = [self._header_text(self.columns[i], layout) for i in shown]
        body = [[self._cell_text(i, cells[i], layout, labels) for i in shown] for cells, _ in self.rows]
        return shown, headers, body

    def _column_extent(self, layout: Layout) -> list[tuple[int, int]]:
        """(natural, minimum) width of every shown column."""
        shown, headers, body = self._grid(layout)
        out = []
        for j, i in enumerate(shown):
            texts = [headers[j]] + [row[j] for row in body]
            lines = [line for t in texts for line in t.split("\n")]
            natural = max(cell_len(line) for line in lines)
            if self.columns[i].kind == "text":
                minimum = max([cell_len(w) for line in lines for w in line.split()] or [1])
                minimum = max(minimum, max(cell_len(h) for h in headers[j].split("\n")))
            else:
                minimum = natural
            out.append((natural, minimum))
        return out

    def _frame(self, layout: Layout, n: int) -> int:
        """Cells taken by borders and padding for n columns."""
        return 2 * n - 1 if layout.compact else 3 * n + 1

    def _width(self, layout: Layout) -> int:
        extent = self._column_extent(layout)
        return sum(m for _, m in extent) + self._frame(layout, len(extent))

    def _fits(self, layout: Layout, width: int) -> bool:
        return self._width(layout) <= width

    def _text_widths(self, layout: Layout, width: int) -> dict[int, int]:
        """Widths for the wrapping text columns so that the table fits (water-filling: the
        widest text columns give way first, none below its longest word)."""
        shown = self._shown(layout)
        extent = self._column_extent(layout)
        total = sum(n for n, _ in extent) + self._frame(layout, len(extent))
        text = [j for j, i in enumerate(shown) if self.columns[i].kind == "text"]
        if total <= width or not text:
            return {}
        fixed = total - sum(extent[j][0] for j in text)
        room = width - fixed
        lo, hi = 1, max(extent[j][0] for j in text)
        while lo < hi:  # the largest cap L with sum(max(min, min(natural, L))) <= room
            mid = (lo + hi + 1) // 2
            if sum(max(extent[j][1], min(extent[j][0], mid)) for j in text) <= room:
                lo = mid
            else:
                hi = mid - 1
        return {shown[j]: max(extent[j][1], min(extent[j][0], lo)) for j in text}

    # -- building -------------------------------------------------------------------------------
    def _build(self, layout: Layout, text_widths: dict[int, int]) -> Table:
        shown, headers, body = self._grid(layout)
        # A caption part "NAME: explanation" of a column left out goes with it.
        caption = ["; ".join(part for part in line.split("; ")
                             if not any(part.startswith(f"{name}: ") for name in layout.dropped))
                   for line in self.caption]
        if layout.dropped:
            caption.append(f"left out at this width: {', '.join(layout.dropped)} (--wide shows every column)")
        legend = self._legend(layout)
        if legend:
            caption.append(legend)
        frame = dict(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0, 0, 1)) if layout.compact else {}
        table = Table(title=self.title, caption="\n".join(caption) or None, header_style="bold", **frame)
        for j, i in enumerate(shown):
            col = self.columns[i]
            table.add_column(headers[j], justify=col.justify, no_wrap=col.kind != "text", overflow="fold",
                             width=text_widths.get(i))
        for r, ((_, style), cells) in enumerate(zip(self.rows, body)):
            if r in self.sections:
                table.add_section()
            table.add_row(*cells, style=style)
        return table

    def _legend(self, layout: Layout) -> str:
        if not layout.short:
            return ""
        shown = set(self._shown(layout))
        pairs = {lab: n for i, labels in self._labels(layout).items() if i in shown
                 for n, lab in labels.items() if lab != n}
        return ", ".join(f"{lab} = {n}" for lab, n in pairs.items())


def short_name(name: str) -> str:
    """The short label of a protocol or path-system name, its parameters kept.

    Examples
    --------
    >>> short_name("random-rank:K=40"), short_name("valiant:base=dimension-order"), short_name("fifo")
    ('RR:K=40', 'valiant:base=dim-ord', 'fifo')
    """
    head, colon, params = name.partition(":")
    if not colon:
        return SHORT_NAMES.get(head, head)
    parts = []
    for p in params.split(","):
        key, eq, value = p.partition("=")
        parts.append(f"{key}={SHORT_NAMES.get(value, value)}" if eq else p)
    return f"{SHORT_NAMES.get(head, head)}:{','.join(parts)}"


def _fold_name(name: str) -> str:
    """``hotspot:count=2,factor=4`` -> one line per parameter, the separators kept."""
    head, colon, params = name.partition(":")
    if not colon or not params:
        return name
    return head + ":\n" + ",\n".join(params.split(","))


def render_text(renderable, width: int) -> str:
    """What ``renderable`` prints on a plain console ``width`` cells wide (for tests and docs).

    Examples
    --------
    >>> print(render_text("abc", 10))
    abc
    """
    console = Console(width=width, record=True, color_system=None, emoji=False, markup=False,
                      highlight=False, file=_Discard())
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


class _Discard:
    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        pass
