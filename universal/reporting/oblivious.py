"""Rich tables for the load analysis: ``universal load``, ``universal worstcase`` and
``kind = "load"`` scenarios.

Throughput is printed as a fraction of capacity with three digits, as in Towles' Table 1
("Finding worst-case permutations for oblivious routing algorithms").
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Sequence

import numpy as np
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from universal.load_analysis import LoadReport
from universal.reporting.layout import Col, FitTable, Fold
from universal.oblivious import LoadResult, Torus, WorstCaseResult

__all__ = ["sparkline", "load_results_table", "worstcase_table", "permutation_view",
           "graph_permutation_view", "comparison_table", "print_load_report"]

_BARS = " ▁▂▃▄▅▆▇█"


def _thr(x: float | None) -> str:
    """A throughput with three digits (``∞`` for a pattern that loads no channel)."""
    if x is None:
        return "—"
    return "∞" if math.isinf(x) else f"{x:.3f}"


def _fraction(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


#: Longest exact fraction a table shows (both parts together); a designed routing's loads are
#: fractions over 2^40 and more, shown as decimals in tables while JSON keeps them exact.
SHORT_FRACTION = 12


def _short_fraction(x: Fraction) -> str | None:
    """``x`` as a fraction when it is short enough to read (else None)."""
    text = _fraction(x)
    return text if len(text) <= SHORT_FRACTION + 1 else None


def _exact_cell(x: Fraction) -> str:
    """An exact value for a table: its fraction if short, else ten significant digits."""
    return _short_fraction(x) or f"{float(x):.10g}"


def sparkline(counts: Sequence[int]) -> str:
    """One character per histogram bin, its height proportional to the count (blank for 0).

    Parameters
    ----------
    counts : sequence of int

    Returns
    -------
    str

    Examples
    --------
    >>> sparkline([0, 1, 4, 8, 2])
    ' ▁▄█▂'
    """
    top = max(counts, default=0)
    if top <= 0:
        return ""
    return "".join(_BARS[math.ceil(8 * c / top)] if c > 0 else " " for c in counts)


def _capacity_caption(report: LoadReport) -> str:
    net = report.network
    if "terminals" in net:
        return (f"{net['nodes']:,} nodes ({net['terminals']:,} terminals), {net['links']:,} channels; "
                f"throughput = 1 / max channel load, in packets per terminal per step (capacity load "
                f"{report.capacity_rule}); traffic between terminals only")
    text = (f"{net['nodes']:,} nodes, {net['links']:,} channels; throughput = fraction of capacity = "
            f"capacity load / max channel load, capacity load = {_fraction(report.capacity_load)} = "
            f"{report.capacity_rule}")
    if report.torus is not None:
        text += ", the uniform load under minimal balanced routing"
    return text


def _pair_loads_caption(rows: Sequence) -> str:
    """Which routings' pair loads are exact and which are sampled (general graphs)."""
    how = dict.fromkeys((r.routing, getattr(r, "pair_loads", "exact")) for r in rows)
    sampled = [f"{routing}: {h}" for routing, h in how if h != "exact"]
    if not sampled:
        return "pair loads: exact (every path enumerated with its probability)"
    return "pair loads: exact, except " + "; ".join(sampled)


def load_results_table(report: LoadReport) -> FitTable:
    """Throughput, max load and locality of every (routing, traffic) row.

    ``random-perms:M`` rows show the worst throughput, the mean and the best beside it and a
    histogram of all M throughputs (20 bins from worst to best).

    Parameters
    ----------
    report : LoadReport

    Returns
    -------
    FitTable
        A table that fits the console it is printed on (:mod:`universal.reporting.layout`).

    Examples
    --------
    >>> from universal.load_analysis import LoadAnalysis, run_load_analysis
    >>> rep = run_load_analysis(LoadAnalysis("torus:k=5,n=2", ["dor"], ["uniform", "random-perms:20"]))
    >>> load_results_table(rep).row_count
    2
    """
    random = any(r.mean is not None for r in report.loads)
    caption = [_capacity_caption(report),
               "locality: average path length over all pairs / minimal average path length",
               _pair_loads_caption(report.loads)]
    if random:
        caption.append(f"random-perms:M: throughput of the worst of M random permutations (seed "
                       f"{report.seed}), mean and best beside it; histogram from worst to best, 20 bins"
                       + ("; one bin where every permutation gave the same throughput"
                          if any(r.histogram is not None and len(r.histogram[0]) == 1 for r in report.loads)
                          else ""))
    cols = [Col("routing", "left", "name"), Col("traffic", "left", "name"),
            Col("throughput", folded_header="through-\nput"), Col("max load", folded_header="max\nload"),
            Col("locality", folded_header="local-\nity")]
    if random:
        cols += [Col("mean"), Col("best"), Col("histogram", "left", "label", folded_header="histo-\ngram", drop=1)]
    rows = []
    for r in report.loads:
        cells = [r.routing, r.traffic, _thr(r.throughput), _max_load(r), f"{r.locality:.3f}"]
        if random:
            hist = sparkline(r.histogram[0].tolist()) if r.histogram is not None else ""
            cells += [_thr(r.mean), _thr(r.best), hist]
        rows.append((cells, None))
    return FitTable(cols, rows, title=f"load: {report.network['name']}", caption=caption)


def _max_load(r: LoadResult) -> str | Fold:
    """The largest channel load: the exact fraction when it is known, else three digits."""
    x = r.max_load_exact
    if x is None:
        return f"{r.max_load:.3f}"
    if x.denominator == 1:
        return _fraction(x)
    short = _short_fraction(x)
    return Fold(f"{float(x):.3f} =", short) if short else f"{float(x):.10g}"


def _exactness(w: WorstCaseResult) -> str:
    # Every worst case is exact now; "certified": a float matching proved optimal by exact dual
    # potentials (huge denominators), see universal.oblivious.matching.
    return "yes, certified" if w.method == "certified" else "yes"


def worstcase_table(report: LoadReport) -> FitTable:
    """The exact worst case of every routing: throughput, max load, the channel and exactness.

    Parameters
    ----------
    report : LoadReport

    Returns
    -------
    FitTable
        A table that fits the console it is printed on (:mod:`universal.reporting.layout`).

    Examples
    --------
    >>> from universal.load_analysis import LoadAnalysis, run_load_analysis
    >>> rep = run_load_analysis(LoadAnalysis("torus:k=5,n=2", ["dor", "romm"], worstcase=True))
    >>> worstcase_table(rep).row_count
    2
    """
    where = "focus channel" if report.torus is not None else "link (all links)"
    caption = [_capacity_caption(report),
               f"worst case over all traffic: a max-weight perfect matching per {where} "
               "(Towles, \"Finding worst-case permutations for oblivious routing algorithms\")",
               _pair_loads_caption(report.worst)]
    cols = [Col("routing", "left", "name"), Col("throughput", folded_header="through-\nput"),
            Col("max load", folded_header="max\nload"), Col("exact max load", folded_header="exact\nmax load"),
            Col("channel", "left", "label"), Col("exact", "left", "text")]
    rows = []
    for w in report.worst:
        throughput: str | Fold = _thr(w.throughput)
        short = _short_fraction(w.throughput_exact) if w.exact else None
        if short and w.throughput_exact.denominator != 1:
            throughput = Fold(f"{throughput} =", short)
        rows.append(([w.routing, throughput, f"{w.max_load:.3f}", _exact_cell(w.max_load_exact),
                      f"{w.channel[0]}->{w.channel[1]}", _exactness(w)], None))
    return FitTable(cols, rows, title=f"worst case: {report.network['name']}", caption=caption)


def permutation_view(torus: Torus, result: WorstCaseResult) -> "_GridOrList":
    """The worst permutation as a grid of destination labels.

    On a 2-D torus row ``x``, column ``y`` holds the destination of source ``(x, y)`` (the layout
    of Towles' Figure 9); on a ring one row; on higher dimensions, and wherever the grid would be
    wider than the console, one row per source.

    Parameters
    ----------
    torus : Torus
    result : WorstCaseResult

    Returns
    -------
    a rich renderable choosing the grid or the list for the console it is printed on

    Examples
    --------
    >>> from universal.oblivious import worst_case
    >>> permutation_view(Torus(5, 2), worst_case(5, 2, "dor")).grid.row_count
    5
    """
    perm = np.asarray(result.permutation)
    title = (f"worst-case permutation of {result.routing} on {torus.name} "
             f"(loads {result.channel[0]}->{result.channel[1]} to {_exact_cell(result.max_load_exact)})")
    listing = _source_list(title, [(torus.label(s), torus.label(d)) for s, d in enumerate(perm)])
    if torus.n > 2:
        return _GridOrList(None, listing)
    table = Table(title=title, header_style="bold", show_lines=False)
    if torus.n == 2:
        table.caption = "row x, column y: destination of source x,y"
        table.add_column("x \\ y", justify="right", style="bold")
        for y in range(torus.k):
            table.add_column(str(y), justify="center", no_wrap=True)
        for x in range(torus.k):
            table.add_row(str(x), *(torus.label(perm[torus.node((x, y))]) for y in range(torus.k)))
    else:
        table.add_column("source", style="bold")
        for s in range(torus.k):
            table.add_column(str(s), justify="center", no_wrap=True)
        table.add_row("destination", *(torus.label(d) for d in perm))
    return _GridOrList(table, listing)


def _source_list(title: str, pairs: list[tuple[str, str]]) -> Table:
    table = Table(title=title, header_style="bold")
    table.add_column("source", justify="right")
    table.add_column("destination", justify="right")
    for s, d in pairs:
        table.add_row(s, d)
    return table


class _GridOrList:
    """The grid where it fits the console, else the list of (source, destination) rows: a label
    is never cut."""

    def __init__(self, grid: Table | None, listing: Table) -> None:
        self.grid, self.listing = grid, listing

    @property
    def row_count(self) -> int:
        return (self.grid or self.listing).row_count

    def __rich_console__(self, console: Console, options):
        unbounded = options.update_width(1_000_000)
        fits = self.grid is not None and Measurement.get(console, unbounded, self.grid).maximum <= options.max_width
        yield self.grid if fits else self.listing


def graph_permutation_view(network, result: WorstCaseResult) -> Table:
    """The worst permutation on a general graph: one row per source, with node labels.

    Examples
    --------
    >>> from universal.load_analysis import LoadAnalysis, run_load_analysis
    >>> rep = run_load_analysis(LoadAnalysis("mesh:k=3,n=2", ["dimension-order"], worstcase=True))
    >>> graph_permutation_view(rep.graph, rep.worst[0]).row_count
    9
    """
    title = (f"worst-case permutation of {result.routing} on {network.name} "
             f"(loads {result.channel[0]}->{result.channel[1]} to {_exact_cell(result.max_load_exact)})")
    return _source_list(title, [(network.label_of(int(s)), network.label_of(int(d)))
                                for s, d in enumerate(result.permutation)])


def comparison_table(report: LoadReport) -> FitTable:
    """Throughput side by side: one row per traffic (and the worst case), one column per routing.

    This is the layout of Towles' Table 1.

    Examples
    --------
    >>> from universal.load_analysis import LoadAnalysis, run_load_analysis
    >>> rep = run_load_analysis(LoadAnalysis("torus:k=5,n=2", ["dor", "romm"], ["tornado"], worstcase=True))
    >>> comparison_table(rep).row_count
    2
    """
    routings = list(dict.fromkeys([r.routing for r in report.loads] + [w.routing for w in report.worst]))
    title = f"{report.name or 'load'}: throughput on {report.network['name']} (fraction of capacity)"
    caption = "worst case: exact, by max-weight matching"
    if any(r.mean is not None for r in report.loads):
        caption += f"; worst of random-perms:M: the worst of a sample of M permutations (seed {report.seed})"
    cols = [Col("pattern", "left", "text")] + [Col(routing) for routing in routings]
    rows = []
    for traffic in dict.fromkeys(r.traffic for r in report.loads):
        cells = {r.routing: r.throughput for r in report.loads if r.traffic == traffic}
        label = f"worst of {traffic}" if traffic.startswith("random-perms") else traffic
        rows.append(([label] + [_thr(cells.get(routing)) for routing in routings], None))
    if report.worst:
        cells = {w.routing: w.throughput for w in report.worst}
        rows.append((["worst case (exact)"] + [_thr(cells.get(routing)) for routing in routings], None))
    return FitTable(cols, rows, title=title, caption=[caption])


def print_load_report(report: LoadReport, console: Console, show_permutation: bool = False,
                      files: dict[str, Path] | None = None, compare: bool = False, wide: bool = False) -> None:
    """Print the load table, the worst-case table and (optionally) the permutations.

    Parameters
    ----------
    report : LoadReport
    console : rich.console.Console
    show_permutation : bool
        Also print each routing's worst permutation (see :func:`permutation_view`).
    files : dict routing -> Path, optional
        Files the worst permutations were written to.
    compare : bool
        Also print the side-by-side :func:`comparison_table` (scenarios).
    wide : bool
        Never leave a column out to fit the terminal.
    """
    if report.loads:
        table = load_results_table(report)
        table.wide = wide
        console.print(table)
    if report.worst:
        console.print(worstcase_table(report))
        for routing, path in (files or {}).items():
            console.print(f"{routing}: worst permutation written to {path} "
                          f"(route it with --problem permutation:file={path})")
        if show_permutation:
            for w in report.worst:
                console.print(permutation_view(report.torus, w) if report.torus is not None
                              else graph_permutation_view(report.graph, w))
    if compare:
        console.print(comparison_table(report))
