"""Tables of ``universal design``: one designed routing, a tradeoff curve, the named algorithms.

Throughputs are fractions of capacity; locality is the mean path length over the minimal one
(Towles, Dally & Boyd, "Throughput-centric routing algorithm design", 2003, eqs. 4-5).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

__all__ = ["design_table", "curve_table", "algorithms_table", "print_design", "study_table", "print_study"]


def _f(x, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _gap(gap: float | None) -> str:
    """Locality above the curve in percent (round-off below the curve shows as +0.0%)."""
    return "-" if gap is None else f"{100 * max(gap, 0.0) if gap > -1e-4 else 100 * gap:+.1f}%"


def _short_status(status: str) -> str:
    """The solver's verdict in words: ``HiGHS: optimal`` out of SciPy's ``Optimization terminated
    successfully. (HiGHS Status 7: Optimal)``; the full message stays in ``--json``."""
    import re

    found = re.search(r"\(HiGHS Status \d+: (.*)\)\s*$", status)
    return f"HiGHS: {found.group(1).strip().lower()}" if found else status


def design_table(result) -> Table:
    """One designed routing: its figures, recomputed exactly from the routing, and the solver's.

    Parameters
    ----------
    result : universal.design.DesignResult

    Returns
    -------
    rich.table.Table
    """
    title = f"optimal routing by LP: {result.network}, {result.objective}, {result.paths} paths"
    table = Table(title=title, caption="throughputs: fraction of capacity; figures below the LP's "
                  "are recomputed from the rounded routing")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("meaning")
    rows = [
        ("LP optimum", _f(result.lp_throughput, 6), f"the LP's {result.objective} optimum"),
        ("worst case", _f(result.throughput_worst, 6), "exact: max-weight matching"),
        ("average", _f(result.throughput_average),
         f"LP's sample: {result.samples} perms, seed {result.seed}"),
        ("held-out avg", _f(result.throughput_average_heldout), f"second sample, seed {result.seed + 1}"),
        ("uniform", _f(result.throughput_capacity), "uniform traffic"),
        ("locality", _f(result.locality, 6), "H_avg / minimal; H_avg: mean path length"),
    ]
    if result.locality_bound is not None:
        rows.append(("locality bound", _f(result.locality_bound), "L: constraint H_avg <= L x minimal"))
    rows.append(("solver", f"{result.seconds:.1f} s", _short_status(result.status)))
    for row in rows:
        table.add_row(*row)
    return table


def curve_table(curve: list) -> Table:
    """The tradeoff curve: one row per locality bound."""
    obj = curve[0].objective if curve else ""
    table = Table(title=f"optimal tradeoff: {obj} throughput against locality")
    for name in ("locality bound", "locality", f"{obj} throughput", "seconds"):
        table.add_column(name, justify="right")
    for r in curve:
        table.add_row(_f(r.locality_bound), _f(r.locality), _f(r.lp_throughput), f"{r.seconds:.1f}")
    return table


def algorithms_table(points: dict[str, dict], curve: list | None = None) -> Table:
    """Named algorithms with their throughputs, locality and distance to the curve.

    Parameters
    ----------
    points : dict
        Name -> figures from :func:`universal.design.evaluate_routing`.
    curve : list of DesignResult, optional
        When given, each algorithm's locality above the curve at its own throughput.
    """
    table = Table(title="named algorithms (exact figures)")
    for name in ("routing", "worst case", "average", "avg held-out", "locality", "above curve"):
        table.add_column(name, justify="right" if name != "routing" else "left")
    for name, f in points.items():
        gap = None
        if curve:
            from universal.design.tradeoffs import locality_above_curve
            gap = locality_above_curve(curve, f)
        table.add_row(name, _f(f.get("throughput_worst")), _f(f.get("throughput_average")),
                      _f(f.get("throughput_average_heldout")), _f(f.get("locality")),
                      _gap(gap))
    return table


def print_design(console: Console, result=None, curve=None, points=None) -> None:
    """Print whichever of the three tables are given."""
    if result is not None:
        console.print(design_table(result))
    if curve:
        console.print(curve_table(curve))
    if points:
        console.print(algorithms_table(points, curve))


def study_table(result) -> Table:
    """The named algorithms of a design study, with their distance to each curve.

    Parameters
    ----------
    result : universal.design.study.StudyResult
    """
    s = result.study
    table = Table(title=f"{s.name or 'design study'}: {s.network}, named algorithms against the optimal curves")
    table.add_column("routing")
    for name in ("worst case", f"average ({s.samples})", "avg held-out", "locality"):
        table.add_column(name, justify="right")
    for obj in result.gaps:
        table.add_column(f"{obj.split('-')[0]} gap", justify="right")
    for name, f in result.points.items():
        gaps = [_gap(result.gaps[o].get(name)) for o in result.gaps]
        table.add_row(name, _f(f.get("throughput_worst")), _f(f.get("throughput_average")),
                      _f(f.get("throughput_average_heldout")), _f(f.get("locality")), *gaps)
    return table


def print_study(console: Console, result) -> None:
    """Every curve, then the algorithms table and a note on what the columns mean."""
    for curve in result.curves.values():
        console.print(curve_table(curve))
    console.print(study_table(result))
    s = result.study
    console.print(f"throughput = fraction of capacity; average = capacity / mean max channel load over "
                  f"{s.samples} random permutations (seed {s.seed}, the sample the average-case LP "
                  f"optimises); held-out = the same on seed {s.seed + 1}; gap = locality above the "
                  "curve's optimal locality at the same throughput (interpolated between solved points)")
