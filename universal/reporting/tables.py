"""Rich tables for routing experiments: one row per (path system, protocol), averaged over seeds."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from universal.experiment import ExperimentResult, fastest, summarize


def _num(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "—"
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.{digits}f}"


def _spread(s: dict) -> str:
    if s["T_min"] == s["T_max"]:
        return _num(s["T"])
    return f"{_num(s['T'])} ({s['T_min']}–{s['T_max']})"


def experiment_table(result: ExperimentResult) -> Table:
    """The comparison table of an experiment (means over seeds; T with its range).

    Examples
    --------
    >>> from universal.experiment import Experiment, run_experiment
    >>> res = run_experiment(Experiment("hypercube:d=4", "permutation:transpose", ["dimension-order"], ["fifo"]))
    >>> experiment_table(res).row_count
    1
    """
    net = result.network
    seeds = len({r.seed for r in result.rows})
    title = f"{result.name or 'route'}: {result.problem} on {net.name}"
    caption_lines = [
        f"{net.num_nodes:,} nodes, {net.num_links:,} links; B = {result.bandwidth}; {seeds} seed{'s' if seeds != 1 else ''}",
        "T: routing time in steps, mean (range) over seeds; LB = max(C/B, D), a lower bound on T; "
        "buf: largest link-buffer occupancy; lat: mean packet latency",
    ]
    caption_lines += result.captions
    table = Table(title=title, caption="\n".join(caption_lines), header_style="bold")
    summary = summarize(result.rows)
    problems = list(dict.fromkeys(s["problem"] for s in summary))
    if len(problems) > 1:
        table.add_column("problem")
    for name, justify in [("paths", "left"), ("protocol", "left"), ("C", "right"), ("D", "right"),
                          ("C+D", "right"), ("LB", "right"), ("T", "right"), ("T/(C+D)", "right"),
                          ("bound", "right"), ("T/bound", "right"), ("buf", "right"), ("lat", "right")]:
        table.add_column(name, justify=justify)
    best = [fastest(summary, p) for p in problems]
    for s in summary:
        style = "bold green" if any(s is b for b in best) else ("red" if not s["all_delivered"] else None)
        cells = [s["problem"]] if len(problems) > 1 else []
        table.add_row(
            *cells, s["paths"], s["protocol"], _num(s["C"]), _num(s["D"]), _num(s["C_plus_D"]),
            _num(s["lower_bound"]), _spread(s), f"{s['T_over_CD']:.2f}",
            _num(s["bound"]), "—" if s["T_over_bound"] is None else f"{s['T_over_bound']:.2f}",
            str(s["max_buffer"]), f"{s['mean_latency']:.1f}", style=style,
        )
    return table


def _conclusion_for(summary: list[dict], problem: str, named: bool) -> str:
    best = fastest(summary, problem)
    prefix = f"{problem}: " if named else ""
    if best is None:
        return f"{prefix}no combination delivered every packet."
    line = (f"{prefix}fastest: {best['paths']} paths with {best['protocol']}, T = {_num(best['T'])} steps "
            f"= {best['T_over_CD']:.2f} x (C + D)")
    others = [s for s in summary if s is not best and s["all_delivered"] and s["problem"] == problem]
    if others:
        slowest = max(others, key=lambda s: s["T"])
        line += f"; slowest: {slowest['paths']} with {slowest['protocol']}, T = {_num(slowest['T'])}"
    return line + "."


def conclusion(result: ExperimentResult) -> str:
    """One line per problem naming the fastest (paths, protocol) combination and how close it came to C + D."""
    summary = summarize(result.rows)
    problems = list(dict.fromkeys(s["problem"] for s in summary))
    lines = [_conclusion_for(summary, p, len(problems) > 1) for p in problems]
    line = "\n".join(x if len(problems) > 1 else x[0].upper() + x[1:] for x in lines)
    bounds = sorted({(s["protocol"], s["bound_expr"]) for s in summary if s["bound_expr"]})
    if bounds:
        line += "\nBounds (survey, log base 2): " + "; ".join(f"{p}: {e}" for p, e in bounds) + "."
    return line


def make_console() -> Console:
    """A console for stdout; wide enough for the tables when output is not a terminal."""
    # Names such as permutation:tornado must not turn into emoji or markup.
    console = Console(emoji=False, markup=False, highlight=False)
    if not console.is_terminal:
        console = Console(width=150, emoji=False, markup=False, highlight=False)
    return console


def collections_table(result: ExperimentResult) -> Table:
    """Path-collection analysis: n, C, D, the simple / shortest / leveled flags and link loads."""
    table = Table(title="Path collections", header_style="bold",
                  caption="loads: number of links carrying each load (load:links), idle links left out")
    for name in ["problem", "seed", "paths", "host network", "n", "C", "D", "simple", "shortest", "leveled", "loads"]:
        table.add_column(name, justify="right" if name in ("seed", "n", "C", "D") else "left")

    def flag(value: bool | None) -> str:
        return "?" if value is None else ("yes" if value else "no")

    for c in result.collections:
        loads = " ".join(f"{load}:{count}" for load, count in sorted(c["load_histogram"].items()) if load)
        table.add_row(c["problem"], str(c["seed"]), c["paths"], c["host"], str(c["n"]), str(c["C"]), str(c["D"]),
                      flag(c["simple"]), flag(c["shortest"]), flag(c["leveled"]), loads)
    return table


def print_experiment(result: ExperimentResult, console: Console | None = None) -> None:
    """Print the table and the conclusion (and the path-collection analysis if it was asked for)."""
    console = console or make_console()
    if result.collections:
        console.print(collections_table(result))
    console.print(experiment_table(result))
    console.print(conclusion(result))
