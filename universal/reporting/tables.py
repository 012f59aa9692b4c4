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


def _ratio(x: float | None) -> str:
    """A ratio to T, or n/a for a run that did not finish (its T is not a routing time)."""
    return "n/a" if x is None else f"{x:.2f}"


def _spread(s: dict) -> str:
    if s["T_min"] == s["T_max"]:
        return _num(s["T"])
    return f"{_num(s['T'])} ({s['T_min']}–{s['T_max']})"


def _t_cell(s: dict) -> str:
    cell = _spread(s)
    if s["deadlocks"]:
        cell += f" deadlock x{s['deadlocks']}" if s["seeds"] > 1 else " deadlock"
    elif not s["all_delivered"]:
        cell += " (limit)"
    return cell


def _caption(result: ExperimentResult) -> list[str]:
    net = result.network
    seeds = len({r.seed for r in result.rows})
    bandwidth = "B in column B" if isinstance(result.bandwidth, list) else f"B = {result.bandwidth}"
    if isinstance(result.buffer, list):
        buffers = "link-buffer size in column b (0: bufferless protocol)"
    else:
        buffers = "unbounded link buffers" if result.buffer is None else f"link buffers of size b = {result.buffer}"
    lines = [
        f"{net.num_nodes:,} nodes, {net.num_links:,} links; {bandwidth}; {buffers}; {seeds} seed{'s' if seeds != 1 else ''}",
        "T: routing time in steps, mean (range) over seeds; LB = max(C/B, D), a lower bound on T; "
        "buf: largest link-buffer occupancy; lat: mean packet latency",
    ]
    if any(r.rounds is not None for r in result.rows):
        lines.append("bufferless protocols: T is the step of the last acknowledgement (last del: of the last "
                     "delivery), rounds of 4D steps; disc: discarded packet attempts (trial-and-failure) or "
                     "copies (duplication); means over seeds")
    unfinished = sorted({r.status for r in result.rows if r.status != "delivered"})
    if unfinished:
        why = " or ".join({"deadlock": "deadlocked", "step-limit": "hit the step limit"}.get(u, u) for u in unfinished)
        lines.append(f"n/a: some run {why} before every packet arrived, so its T is not a routing time and "
                     f"T/(C+D), T/bound and lat (over the packets that arrived) would mislead")
    if any(r.opt_status is not None for r in result.rows):
        lines.append("OPT: fewest steps of any schedule on the same paths (CP-SAT, proven; [lower, upper] where the "
                     "time limit left a gap), mean over seeds; OPT >= LB")
    if any(r.R_pi_status is not None for r in result.rows):
        lines.append("R(G,π): fewest steps when the paths may change too (free paths, proven or [lower, upper])")
    if any(r.copies_capped for r in result.rows):
        lines.append("duplication reached its cap on copies per packet (duplication:copies=N; default max(1, floor(B·D/C)))")
    return lines + result.captions


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
    title = f"{result.name or 'route'}: {result.problem} on {net.name}"
    table = Table(title=title, caption="\n".join(_caption(result)), header_style="bold")
    summary = summarize(result.rows)
    # Sweeps produce a protocol's rows for every B and b far apart: keep them together.
    first_seen = {key: i for i, key in reversed(list(enumerate((s["problem"], s["paths"], s["protocol"])
                                                               for s in summary)))}
    summary.sort(key=lambda s: first_seen[(s["problem"], s["paths"], s["protocol"])])
    problems = list(dict.fromkeys(s["problem"] for s in summary))
    swept_b = isinstance(result.bandwidth, list)
    swept_buffer = isinstance(result.buffer, list)
    swept = swept_b or swept_buffer
    bufferless = any(s["rounds"] is not None for s in summary)
    columns = ([("problem", "left")] if len(problems) > 1 else []) + [("paths", "left"), ("protocol", "left")]
    columns += [("B", "right")] if swept_b else []
    columns += [("b", "right")] if swept_buffer else []
    columns += [("C", "right"), ("D", "right"), ("C+D", "right"), ("LB", "right"), ("T", "right"),
                ("T/(C+D)", "right"), ("bound", "right"), ("T/bound", "right"), ("buf", "right"), ("lat", "right")]
    columns += [("rounds", "right"), ("disc", "right"), ("last del", "right")] if bufferless else []
    with_opt = any(s["opt_status"] is not None for s in summary)
    with_free = any(s["R_pi_status"] is not None for s in summary)
    columns += [("OPT", "right"), ("T/OPT", "right")] if with_opt else []
    columns += [("R(G,π)", "right")] if with_free else []
    for name, justify in columns:
        table.add_column(name, justify=justify)
    best = [] if swept else [fastest(summary, p) for p in problems]
    for s in summary:
        style = "bold green" if any(s is b for b in best) else ("red" if not s["all_delivered"] else None)
        cells = [s["problem"]] if len(problems) > 1 else []
        cells += [s["paths"], s["protocol"]] + ([str(s["bandwidth"])] if swept_b else [])
        cells += [_buffer_cell(s["buffer"])] if swept_buffer else []
        cells += [_num(s["C"]), _num(s["D"]), _num(s["C_plus_D"]), _num(s["lower_bound"]), _t_cell(s),
                  _ratio(s["T_over_CD"]), _num(s["bound"]),
                  _bound_ratio(s), str(s["max_buffer"]),
                  "n/a" if s["mean_latency"] is None else f"{s['mean_latency']:.1f}"]
        if bufferless:
            bufferless_row = s["rounds"] is not None
            cells += [_num(s["rounds"]), _num(s["discarded"], 0),
                      _num(s["last_delivery"]) if bufferless_row else "—"]
        if with_opt:
            cells += [_optimum_cell(s, "opt"), _opt_ratio(s)]
        if with_free:
            cells += [_optimum_cell(s, "R_pi")]
        table.add_row(*cells, style=style)
    return table


def _optimum_cell(s: dict, key: str) -> str:
    """OPT (or R(G, π)) proven, or ``[lower, upper]`` when a time limit left a gap."""
    if s[f"{key}_status"] is None:
        return "—"
    if s[f"{key}_status"] == "optimal":
        return _num(s[key])
    return f"[{_num(s[f'{key}_lower'])}, {_num(s[f'{key}_upper'])}]"


def _opt_ratio(s: dict) -> str:
    """T/OPT, or the range T/upper–T/lower it lies in when OPT is only bounded."""
    if s["T_over_opt"] is not None:
        return f"{s['T_over_opt']:.2f}"
    if s["opt_status"] == "bounds" and s["all_delivered"]:
        return f"{s['T'] / s['opt_upper']:.2f}–{s['T'] / s['opt_lower']:.2f}"
    return "n/a" if s["opt_status"] is not None else "—"


def _bound_ratio(s: dict) -> str:
    """T/bound: — where the protocol has no bound, n/a where a run did not finish."""
    return "—" if s["bound"] is None else _ratio(s["T_over_bound"])


def _buffer_cell(buffer: int | None) -> str:
    return "∞" if buffer is None else str(buffer)


def deadlock_lines(result: ExperimentResult) -> list[str]:
    """One line per deadlocked run: when, which packets wait, and for which full links."""
    lines = []
    for r in result.rows:
        if not r.deadlock:
            continue
        more = f" (first {len(r.blocked_packets)})" if r.blocked_count > len(r.blocked_packets) else ""
        lines.append(f"Deadlock: {r.paths} / {r.protocol}, B = {r.bandwidth}, b = {r.buffer}, seed {r.seed}: "
                     f"no packet could move in step {r.deadlock_step}; {r.blocked_count} packets wait{more}: "
                     f"{' '.join(map(str, r.blocked_packets))}; each needs a full link buffer: "
                     f"{', '.join(r.full_links)}.")
    return lines


def _sweep_line(summary: list[dict], problem: str, named: bool, by_bandwidth: bool, by_buffer: bool) -> list[str]:
    """For a sweep: T of every (paths, protocol) as B (and/or b) changes."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for s in summary:
        if s["problem"] == problem:
            groups.setdefault((s["paths"], s["protocol"]), []).append(s)
    prefix = f"{problem}: " if named else ""
    out = []
    for (paths, protocol), ss in groups.items():
        steps = ", ".join(f"{_num(s['T'])}" + ("" if s["all_delivered"] else "*") for s in ss)
        keys = []
        if by_bandwidth:
            keys.append(("B", [str(s["bandwidth"]) for s in ss]))
        if by_buffer and ss[0]["rounds"] is None:
            keys.append(("b", [_buffer_cell(s["buffer"]) for s in ss]))
        where = " and ".join(f"{name} = {', '.join(values)}" for name, values in keys)
        out.append(f"{prefix}{paths} / {protocol}: T = {steps}" + (f" for {where}" if where else ""))
    return out


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
    """One line per problem naming the fastest (paths, protocol) combination and how close it came to
    C + D; for a bandwidth sweep, one line per (paths, protocol) with T for every B."""
    summary = summarize(result.rows)
    problems = list(dict.fromkeys(s["problem"] for s in summary))
    by_bandwidth, by_buffer = isinstance(result.bandwidth, list), isinstance(result.buffer, list)
    if by_bandwidth or by_buffer:
        lines = [line for p in problems
                 for line in _sweep_line(summary, p, len(problems) > 1, by_bandwidth, by_buffer)]
        if any(not s["all_delivered"] for s in summary):
            lines.append("(* not every packet delivered in some seed)")
    else:
        lines = [_conclusion_for(summary, p, len(problems) > 1) for p in problems]
        lines = [x if len(problems) > 1 else x[0].upper() + x[1:] for x in lines]
    line = "\n".join(lines + deadlock_lines(result))
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


def path_systems_table(result: ExperimentResult) -> Table:
    """Expected congestion of every path system over random functions (survey §2.3)."""
    table = Table(title="Path systems: expected congestion over random functions", header_style="bold",
                  caption="C̄: largest expected number of packets on one link when every source sends one "
                          "packet to a uniformly random destination; ± standard error when sampled")
    for name in ["paths", "C̄", "±", "exact", "busiest link", "host network", "how"]:
        table.add_column(name, justify="right" if name in ("C̄", "±") else "left")
    for p in result.path_systems:
        if p["expected_congestion"] is None:
            table.add_row(p["paths"], "—", "", "", "", "", p["how"])
            continue
        error = "" if p["exact"] is not None else f"{p['error']:.3f}"
        table.add_row(p["paths"], f"{p['expected_congestion']:.4g}", error, p["exact"] or "no", p["link"],
                      p["host"], p["how"])
    return table


def print_experiment(result: ExperimentResult, console: Console | None = None) -> None:
    """Print the table and the conclusion (and the path-collection analysis if it was asked for)."""
    console = console or make_console()
    if result.collections:
        console.print(collections_table(result))
    if result.path_systems:
        console.print(path_systems_table(result))
    console.print(experiment_table(result))
    console.print(conclusion(result))
