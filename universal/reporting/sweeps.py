"""Tables and conclusions for sweeps: how T grows with the size next to C + D and the bounds."""

from __future__ import annotations

import math

import numpy as np
from rich.console import Group

from universal.experiment import summarize
from universal.reporting.layout import Col, FitTable
from universal.reporting.columns import CORE_COLUMNS, FOLDED_HEADERS, OPTIMUM_COLUMNS
from universal.reporting.tables import (_bound_cell, _bound_ratio, _num, _opt_ratio, _optimum_cell,
                                       _ratio, _selected, _spread_cell, bound_lines)
from universal.sweep import SweepResult


def sweep_summaries(result: SweepResult) -> list[dict]:
    """One summary per (cell, problem, paths, protocol, B, b, V): :func:`summarize` per cell, plus
    the cell's axis values (``cell``) and node count (``N``)."""
    out = []
    for cell in result.cells:
        for s in summarize(cell.rows):
            out.append({**s, "cell": cell.cell, "N": cell.network["nodes"], "network": cell.network["name"]})
    return out


def growth_exponent(sizes: list[float], times: list[float]) -> float | None:
    """Least-squares slope of log T against log N: T grows like N to this power (None if < 2 sizes).

    Examples
    --------
    >>> round(growth_exponent([16, 64, 256], [4, 8, 16]), 3)
    0.5
    """
    points = [(math.log(n), math.log(t)) for n, t in zip(sizes, times) if n > 0 and t > 0]
    if len({x for x, _ in points}) < 2:
        return None
    x, y = np.array(points).T
    return float(np.polyfit(x, y, 1)[0])


def sweep_table(result: SweepResult, columns: list[str] | None = None, wide: bool = False) -> Group:
    """The tables of :func:`sweep_tables` as one renderable.

    Examples
    --------
    >>> from universal.experiment import Experiment
    >>> from universal.sweep import Sweep, run_sweep
    >>> res = run_sweep(Sweep("demo", Experiment("butterfly:d={d}", "h-relation:h=1", ["valiant"], ["fifo"]),
    ...                       {"d": [3, 4]}))
    >>> len(sweep_table(res).renderables)
    1
    """
    return Group(*sweep_tables(result, columns, wide))


def sweep_tables(result: SweepResult, columns: list[str] | None = None, wide: bool = False) -> list[FitTable]:
    """One table per problem: every cell's rows (means over seeds), grouped by (paths, protocol),
    sizes in order; a group's paths and protocol are written on its first row only.

    Parameters
    ----------
    result : SweepResult
    columns : list of str, optional
        Show only these value columns (``N``, ``C``, ``D``, ``C+D``, ``LB``, ``T``, ``T/(C+D)``,
        ``bound``, ``T/bound``).
    wide : bool
        Never leave a column out to fit the terminal.

    Returns
    -------
    list of FitTable
        Tables that fit the console they are printed on (:mod:`universal.reporting.layout`); the
        caption is under the last one.

    Examples
    --------
    >>> from universal.experiment import Experiment
    >>> from universal.sweep import Sweep, run_sweep
    >>> res = run_sweep(Sweep("demo", Experiment("butterfly:d={d}", ["permutation:bit-reversal", "h-relation:h=1"],
    ...                                          ["valiant"], ["fifo"]), {"d": [3, 4]}))
    >>> [t.title for t in sweep_tables(res, columns=["T"])]
    ['demo: permutation:bit-reversal, sweep over d', 'demo: h-relation:h=1, sweep over d']
    >>> sweep_tables(res, columns=["T"])[0].headers
    ['paths', 'protocol', 'd', 'T']
    """
    summaries = sweep_summaries(result)
    axes = list(result.sweep.axes)
    problems = list(dict.fromkeys(s["problem"] for s in summaries))
    caption = [f"{len(result.cells)} cells x {len(result.sweep.experiment.seeds)} seeds; N: nodes; "
               "T: routing time, mean (range) over seeds; LB = max(C/B, D); bound: the survey's bound"]
    caption += list(dict.fromkeys(c for cell in result.cells for c in cell.captions))
    caption += bound_lines([r for cell in result.cells for r in cell.rows])
    if result.results_file is not None:
        caption.append(f"results: {result.results_file}" +
                       (f" ({result.resumed} cells read back, {result.computed} computed)" if result.resumed else ""))
    cols = [Col("paths", "left", "name"), Col("protocol", "left", "name")]
    cols += [Col(a, kind="label") for a in axes]
    with_opt = any(s["opt_status"] is not None for s in summaries)
    # On a narrow terminal what the other columns imply gives way first (C+D from C and D, N from
    # the network's name, LB from C and D), then T/bound and the bound itself; OPT, when asked for,
    # is never left out: one table at 80 columns rather than a second "(continued)" one, the
    # caption naming what was left out
    drop = {"C+D": 5, "N": 4, "LB": 3, "T/bound": 2, "bound": 1}
    cols += [Col(name, folded_header=FOLDED_HEADERS.get(name), drop=drop.get(name, 0))
             for name in ["N", *CORE_COLUMNS]]
    cols += [Col(name) for name in OPTIMUM_COLUMNS[:2]] if with_opt else []
    if with_opt:
        caption.append("OPT: fewest steps of any schedule on the same paths (proven, or [lower, upper] where the "
                       "time limit left a gap), mean over seeds")
    order = {k: i for i, k in reversed(list(enumerate(_group(s) for s in summaries)))}
    tables = []
    for problem in problems:
        rows, sections = [], set()
        previous = None
        mine = [s for s in summaries if s["problem"] == problem]
        for s in sorted(mine, key=lambda s: order[_group(s)]):  # stable: sizes stay in cell order
            first = _group(s) != previous
            if previous is not None and first:
                sections.add(len(rows))
            previous = _group(s)
            cells = [s["paths"], s["protocol"]] if first else ["", ""]
            cells += [str(s["cell"][a]) for a in axes]
            cells += [f"{s['N']:,}", _num(s["C"]), _num(s["D"]), _num(s["C_plus_D"]), _num(s["lower_bound"]),
                      _spread_cell(s), _ratio(s["T_over_CD"]), _bound_cell(s), _bound_ratio(s)]
            cells += [_optimum_cell(s, "opt"), _opt_ratio(s)] if with_opt else []
            rows.append((cells, None if s["all_delivered"] else "red"))
        title = f"{result.sweep.name}: {problem}, sweep over {', '.join(axes)}"
        last = problem == problems[-1]
        tables.append(_selected(FitTable(cols, rows, title=title, caption=caption if last else [],
                                         sections=sections, wide=wide), columns))
    return tables


def _group(s: dict) -> tuple:
    return (s["problem"], s["paths"], s["protocol"], s["bandwidth"], s["buffer"], s["vcs"])


def sweep_conclusion(result: SweepResult) -> str:
    """One line per (problem, paths, protocol): the range of T/(C+D) and how T and C grow with N."""
    groups: dict[tuple, list[dict]] = {}
    for s in sweep_summaries(result):
        groups.setdefault(_group(s), []).append(s)
    problems = {g[0] for g in groups}
    lines = []
    for (problem, paths, protocol, *_), ss in groups.items():
        ratio = [s["T_over_CD"] for s in ss if s["T_over_CD"] is not None]
        growth = _growth_by_family(ss)
        head = f"{problem}: " if len(problems) > 1 else ""
        if ratio:
            line = f"{head}{paths} / {protocol}: T/(C+D) from {min(ratio):.2f} to {max(ratio):.2f}"
        else:
            line = f"{head}{paths} / {protocol}: no size delivered every packet"
        if len(ratio) < len(ss):
            line += f" (n/a at {len(ss) - len(ratio)} size{'s' if len(ss) - len(ratio) > 1 else ''}: not every packet arrived)"
        if growth:
            line += "; T grows like " + ", ".join(growth)
        over_opt = [s["T_over_opt"] for s in ss if s["T_over_opt"] is not None]
        if over_opt:
            line += f"; T/OPT from {min(over_opt):.2f} to {max(over_opt):.2f}"
        lines.append(line + ".")
    return "\n".join(lines + _optimum_lines(result))


def _power(x: float) -> str:
    return f"{round(x, 2) + 0.0:.2f}"  # + 0.0: a fit of a flat line shows 0.00, not -0.00


def _growth_by_family(ss: list[dict]) -> list[str]:
    """``N^x (C like N^y)`` per network family (``butterfly``, ``torus``, ...) with two sizes or more.

    A power law fitted across unlike networks (a butterfly beside a mesh) says nothing, so the
    fit is made within each family; the family is named when the sweep mixes several.

    Examples
    --------
    >>> rows = [{"network": f"butterfly:d={d}", "N": n, "T": t, "C": 2, "all_delivered": True}
    ...         for d, n, t in [(3, 32, 4), (4, 80, 5)]] + [
    ...        {"network": "mesh:k=4,n=2", "N": 16, "T": 9, "C": 3, "all_delivered": True}]
    >>> _growth_by_family(rows)
    ['N^0.24 (C like N^0.00) on butterfly']
    """
    families: dict[str, list[dict]] = {}
    for s in ss:
        families.setdefault(s["network"].split(":")[0], []).append(s)
    out = []
    for family, fs in families.items():
        done = [s for s in fs if s["all_delivered"]]  # T of an unfinished run is the steps it ran
        t_exp = growth_exponent([s["N"] for s in done], [s["T"] for s in done])
        if t_exp is None:
            continue
        c_exp = growth_exponent([s["N"] for s in fs], [s["C"] for s in fs])
        text = f"N^{_power(t_exp)}" + (f" (C like N^{_power(c_exp)})" if c_exp is not None else "")
        out.append(text + (f" on {family}" if len(families) > 1 else ""))
    return out


def _optimum_lines(result: SweepResult) -> list[str]:
    """OPT of every path collection (one per cell, problem, paths, seed and B) against LB and C + D."""
    optima = {(c.network["name"], r.problem, r.paths, r.seed, r.bandwidth): r for c in result.cells for r in c.rows
              if r.opt_status is not None}
    if not optima:
        return []
    proven = [r for r in optima.values() if r.opt_status == "optimal"]
    line = (f"OPT proven on {len(proven)} of {len(optima)} path collections; OPT = max(ceil(C/B), D) on "
            f"{sum(r.opt == r.lower_bound for r in proven)}")
    if proven:
        ratios = [r.opt / r.C_plus_D for r in proven]
        line += (f"; OPT/(C+D) from {min(ratios):.2f} to {max(ratios):.2f}, OPT - LB at most "
                 f"{max(r.opt - r.lower_bound for r in proven)} steps")
    return [line + "."]
