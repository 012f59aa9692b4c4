"""Tables and conclusions for sweeps: how T grows with the size next to C + D and the bounds."""

from __future__ import annotations

import math

import numpy as np
from rich.table import Table

from universal.experiment import summarize
from universal.reporting.tables import _bound_ratio, _num, _opt_ratio, _optimum_cell, _ratio, _spread
from universal.sweep import SweepResult


def sweep_summaries(result: SweepResult) -> list[dict]:
    """One summary per (cell, problem, paths, protocol, B, b): :func:`summarize` per cell, plus
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


def sweep_table(result: SweepResult) -> Table:
    """Every cell's rows (means over seeds), grouped by (problem, paths, protocol), sizes in order."""
    summaries = sweep_summaries(result)
    axes = list(result.sweep.axes)
    problems = list(dict.fromkeys(s["problem"] for s in summaries))
    with_opt = any(s["opt_status"] is not None for s in summaries)
    caption = [f"{len(result.cells)} cells x {len(result.sweep.experiment.seeds)} seeds; N: nodes; "
               "T: routing time, mean (range) over seeds; LB = max(C/B, D)" +
               ("" if with_opt else "; bound: the survey's bound")]
    caption += list(dict.fromkeys(c for cell in result.cells for c in cell.captions))
    if result.results_file is not None:
        caption.append(f"results: {result.results_file}" +
                       (f" ({result.resumed} cells read back, {result.computed} computed)" if result.resumed else ""))
    table = Table(title=f"{result.sweep.name}: sweep over {', '.join(axes)}", caption="\n".join(caption),
                  header_style="bold")
    columns = ([("problem", "left")] if len(problems) > 1 else []) + [("paths", "left"), ("protocol", "left")]
    columns += [(a, "right") for a in axes] + [("N", "right"), ("C", "right"), ("D", "right"), ("C+D", "right"),
                                               ("LB", "right"), ("T", "right"), ("T/(C+D)", "right")]
    # Beside OPT the survey's bounds give way (they stay in --json / --csv), so the table fits 120 columns.
    columns += [("OPT", "right"), ("T/OPT", "right")] if with_opt else [("bound", "right"), ("T/bound", "right")]
    if with_opt:
        caption.append("OPT: fewest steps of any schedule on the same paths (proven, or [lower, upper] where the "
                       "time limit left a gap), mean over seeds; the survey's bounds are in --json and --csv")
        table.caption = "\n".join(caption)
    for name, justify in columns:
        table.add_column(name, justify=justify)
    order = {k: i for i, k in reversed(list(enumerate(_group(s) for s in summaries)))}
    previous = None
    for s in sorted(summaries, key=lambda s: order[_group(s)]):  # stable: sizes stay in cell order
        if previous is not None and _group(s) != previous:
            table.add_section()
        previous = _group(s)
        cells = [s["problem"]] if len(problems) > 1 else []
        cells += [s["paths"], s["protocol"]] + [str(s["cell"][a]) for a in axes]
        cells += [f"{s['N']:,}", _num(s["C"]), _num(s["D"]), _num(s["C_plus_D"]), _num(s["lower_bound"]),
                  _spread(s), _ratio(s["T_over_CD"])]
        cells += [_optimum_cell(s, "opt"), _opt_ratio(s)] if with_opt else [_num(s["bound"]), _bound_ratio(s)]
        table.add_row(*cells, style=None if s["all_delivered"] else "red")
    return table


def _group(s: dict) -> tuple:
    return (s["problem"], s["paths"], s["protocol"], s["bandwidth"], s["buffer"])


def sweep_conclusion(result: SweepResult) -> str:
    """One line per (problem, paths, protocol): the range of T/(C+D) and how T and C grow with N."""
    groups: dict[tuple, list[dict]] = {}
    for s in sweep_summaries(result):
        groups.setdefault(_group(s), []).append(s)
    problems = {g[0] for g in groups}
    lines = []
    for (problem, paths, protocol, *_), ss in groups.items():
        ratio = [s["T_over_CD"] for s in ss if s["T_over_CD"] is not None]
        sizes = [s["N"] for s in ss]
        done = [s for s in ss if s["all_delivered"]]  # T of an unfinished run is the steps it ran
        t_exp = growth_exponent([s["N"] for s in done], [s["T"] for s in done])
        c_exp = growth_exponent(sizes, [s["C"] for s in ss])
        head = f"{problem}: " if len(problems) > 1 else ""
        if ratio:
            line = f"{head}{paths} / {protocol}: T/(C+D) from {min(ratio):.2f} to {max(ratio):.2f}"
        else:
            line = f"{head}{paths} / {protocol}: no size delivered every packet"
        if len(ratio) < len(ss):
            line += f" (n/a at {len(ss) - len(ratio)} size{'s' if len(ss) - len(ratio) > 1 else ''}: not every packet arrived)"
        if t_exp is not None:
            line += f"; T grows like N^{t_exp:.2f}"
            line += f" (C like N^{c_exp:.2f})" if c_exp is not None else ""
        over_opt = [s["T_over_opt"] for s in ss if s["T_over_opt"] is not None]
        if over_opt:
            line += f"; T/OPT from {min(over_opt):.2f} to {max(over_opt):.2f}"
        lines.append(line + ".")
    return "\n".join(lines + _optimum_lines(result))


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
