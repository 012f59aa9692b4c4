"""Rich tables for routing experiments: one row per (path system, protocol), averaged over seeds."""

from __future__ import annotations

import errno
import os

from rich.console import Console

from universal.errors import UserError
from universal.experiment import ExperimentResult, fastest, summarize
from universal.ascii import ascii_renderable, can_encode
from universal.reporting.columns import CORE_COLUMNS, FOLDED_HEADERS, OPTIMUM_COLUMNS, OPTIONAL_COLUMNS
from universal.reporting.layout import Col, FitTable, Fold


def _num(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "—"
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.{digits}f}"


def _ratio(x: float | None) -> str:
    """A ratio to T, or n/a for a run that did not finish (its T is not a routing time)."""
    return "n/a" if x is None else f"{x:.2f}"


def _spread_cell(s: dict) -> Fold:
    """T's mean with its range over seeds as a cell that folds the range onto a second line."""
    if s["T_min"] == s["T_max"]:
        return Fold(_num(s["T"]))
    return Fold(_num(s["T"]), f"({s['T_min']}–{s['T_max']})")


def _t_cell(s: dict) -> Fold:
    cell = _spread_cell(s)
    if s["deadlocks"]:
        return Fold(*cell.parts, f"deadlock x{s['deadlocks']}" if s["seeds"] > 1 else "deadlock")
    if not s["all_delivered"]:
        return Fold(*cell.parts, "(limit)")
    return cell


def _caption(result: ExperimentResult) -> list[str]:
    net = result.network
    seeds = len({r.seed for r in result.rows})
    bandwidth = "B in column B" if isinstance(result.bandwidth, list) else f"B = {result.bandwidth}"
    if isinstance(result.buffer, list):
        buffers = "link-buffer size in column b (0: bufferless protocol)"
    else:
        buffers = "unbounded link buffers" if result.buffer is None else f"link buffers of size b = {result.buffer}"
    several_vcs = isinstance(result.vcs, list)
    if several_vcs:
        # no "; buf: " part: the layout would drop it with the buf column, and the parenthesis with it
        bufferless = "0: bufferless protocol; " if any(r.vcs == 0 for r in result.rows) else ""
        buffers += (f", virtual channels per link in column V ({bufferless}with V >= 2 buf counts one class's VCs "
                    "on paths fixed in advance, all of a link's VCs with adaptive routing)")
    elif result.vcs != 1:
        buffers += (f", V = {result.vcs} virtual channels per link (buf: in one class's VCs on paths fixed in "
                    "advance, in all of a link's VCs with adaptive routing)")
    if result.source_queue == "fifo":
        buffers += "; FIFO source queues (a node's packets leave in order, B per step)"
    elif result.source_queue != "all":
        buffers += f"; FIFO source queues, look-ahead window {result.source_queue[7:]} (any of the first W may leave)"
    if result.vc_buffer == "fifo" and several_vcs:
        buffers += "; FIFO VCs (every VC, with V = 1 every link buffer, a FIFO of b packets whose head alone may leave)"
    elif result.vc_buffer == "fifo":
        buffers += ("; FIFO VCs (every VC a FIFO of b packets whose head alone may leave)" if result.vcs != 1 else
                    "; FIFO link buffers (a buffer's head alone may leave)")
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
        why = " or ".join({"deadlock": "deadlocked", "step-limit": "hit the step limit",
                           "copy-limit": "stopped at the copy limit"}.get(u, u) for u in unfinished)
        lines.append(f"n/a: some run {why} before every packet arrived, so its T is not a routing time and "
                     f"T/(C+D), T/bound and lat (over the packets that arrived) would mislead")
    if any(r.opt_status is not None for r in result.rows):
        lines.append("OPT: fewest steps of any schedule on the same paths (CP-SAT, proven; [lower, upper] where the "
                     "time limit left a gap), mean over seeds; OPT >= LB")
    if any(r.R_pi_status is not None for r in result.rows):
        lines.append("R(G,π): fewest steps when the paths may change too (free paths, proven or [lower, upper])")
    if any(r.copies_capped for r in result.rows):
        lines.append("duplication:copies=N capped the copies per packet and round: a variant of the survey's "
                     "doubling, so its bound is not shown")
    return lines + bound_lines(result.rows) + result.captions


def bound_lines(rows) -> list[str]:
    """One caption line per (paths, protocol, failed hypothesis): where the table says n/a for a
    bound, which hypothesis of the protocol's theorem the runs do not meet, and how.

    Examples
    --------
    >>> from universal.experiment import Experiment, run_experiment
    >>> res = run_experiment(Experiment("mesh:k=4,n=2", "permutation:transpose", ["valiant"], ["random-rank"]))
    >>> bound_lines(res.rows)
    ['bound n/a, valiant / random-rank: survey §4.1 needs a leveled path collection (these paths are not leveled)']
    """
    why: dict[tuple[str, str, str], list[str]] = {}
    for r in rows:
        for part in (r.bound_note or "").split("; ") if r.bound_note else []:
            needs, _, reason = part.partition(": ")
            reasons = why.setdefault((r.paths, r.protocol, needs), [])
            if reason not in reasons:
                reasons.append(reason)
    return [f"bound n/a, {paths} / {protocol}: {needs} ({'; '.join(reasons)})"
            for (paths, protocol, needs), reasons in why.items()]


def _value_columns(bufferless: bool, with_opt: bool = False, with_free: bool = False) -> list[Col]:
    names = CORE_COLUMNS + ["buf", "lat"] + (["rounds", "disc", "last del"] if bufferless else [])
    # The offline optimum was asked for (--opt): its columns are never left out.
    names += (OPTIMUM_COLUMNS[:2] if with_opt else []) + (OPTIMUM_COLUMNS[2:] if with_free else [])
    return [Col(name, folded_header=FOLDED_HEADERS.get(name), drop=OPTIONAL_COLUMNS.get(name, 0))
            for name in names]


def select_columns(columns: list[Col], wanted: list[str] | None) -> list[Col]:
    """Keep the label columns and, if ``wanted`` is given, only the value columns it names (in
    the table's order); an unknown name is a :class:`UserError` listing the known ones.

    Examples
    --------
    >>> [c.header for c in select_columns([Col("paths", "left", "name"), Col("C"), Col("T")], ["T"])]
    ['paths', 'T']
    """
    if wanted is None:
        return columns
    values = [c.header for c in columns if c.kind == "number"]
    unknown = [w for w in wanted if w not in values]
    if unknown:
        raise UserError(f"unknown column {unknown[0]!r}; the columns of this table are: {', '.join(values)}")
    return [c for c in columns if c.kind != "number" or c.header in wanted]


def experiment_tables(result: ExperimentResult, columns: list[str] | None = None,
                      wide: bool = False) -> list[FitTable]:
    """One :func:`experiment_table` per problem (the problem in its title), the caption under the
    last: narrower than one table with a problem column.

    Examples
    --------
    >>> from universal.experiment import Experiment, run_experiment
    >>> res = run_experiment(Experiment("hypercube:d=4", ["permutation:transpose", "permutation:bit-reversal"],
    ...                                 ["dimension-order"], ["fifo"]))
    >>> [t.title for t in experiment_tables(res)]
    ['route: permutation:transpose on hypercube:d=4', 'route: permutation:bit-reversal on hypercube:d=4']
    """
    problems = list(dict.fromkeys(r.problem for r in result.rows))
    if len(problems) < 2:
        return [experiment_table(result, columns, wide)]
    return [experiment_table(result, columns, wide, problem=p, caption=p == problems[-1]) for p in problems]


def experiment_table(result: ExperimentResult, columns: list[str] | None = None, wide: bool = False,
                     problem: str | None = None, caption: bool = True) -> FitTable:
    """The comparison table of an experiment (means over seeds; T with its range).

    The table fits the console it is printed on (see :mod:`universal.reporting.layout`).

    Parameters
    ----------
    result : ExperimentResult
    columns : list of str, optional
        Show only these value columns (``C``, ``D``, ``C+D``, ``LB``, ``T``, ``T/(C+D)``,
        ``bound``, ``T/bound``, ``buf``, ``lat``; for bufferless protocols also ``rounds``,
        ``disc``, ``last del``).
    wide : bool
        Never leave a column out to fit the terminal (short names and folding instead).
    problem : str, optional
        Only the rows of this problem (named in the title instead of a column).
    caption : bool
        Print the caption under the table.

    Returns
    -------
    FitTable

    Examples
    --------
    >>> from universal.experiment import Experiment, run_experiment
    >>> res = run_experiment(Experiment("hypercube:d=4", "permutation:transpose", ["dimension-order"], ["fifo"]))
    >>> experiment_table(res).row_count
    1
    >>> experiment_table(res, columns=["T", "C"]).headers
    ['paths', 'protocol', 'C', 'T']
    """
    net = result.network
    title = f"{result.name or 'route'}: {problem or result.problem} on {net.name}"
    summary = [s for s in summarize(result.rows) if problem is None or s["problem"] == problem]
    # Sweeps produce a protocol's rows for every B and b far apart: keep them together.
    first_seen = {key: i for i, key in reversed(list(enumerate((s["problem"], s["paths"], s["protocol"])
                                                               for s in summary)))}
    summary.sort(key=lambda s: first_seen[(s["problem"], s["paths"], s["protocol"])])
    problems = list(dict.fromkeys(s["problem"] for s in summary))
    swept_b = isinstance(result.bandwidth, list)
    swept_buffer = isinstance(result.buffer, list)
    swept_vcs = isinstance(result.vcs, list)
    swept = swept_b or swept_buffer or swept_vcs
    bufferless = any(s["rounds"] is not None for s in summary)
    cols = [Col("problem", "left", "name")] if len(problems) > 1 else []
    cols += [Col("paths", "left", "name"), Col("protocol", "left", "name")]
    cols += [Col("B", kind="label")] if swept_b else []
    cols += [Col("b", kind="label")] if swept_buffer else []
    cols += [Col("V", kind="label")] if swept_vcs else []
    with_opt = any(s["opt_status"] is not None for s in summary)
    with_free = any(s["R_pi_status"] is not None for s in summary)
    cols += _value_columns(bufferless, with_opt, with_free)
    best = [] if swept else [fastest(summary, p) for p in problems]
    rows = []
    for s in summary:
        style = "bold green" if any(s is b for b in best) else ("red" if not s["all_delivered"] else None)
        cells = [s["problem"]] if len(problems) > 1 else []
        cells += [s["paths"], s["protocol"]] + ([str(s["bandwidth"])] if swept_b else [])
        cells += [_buffer_cell(s["buffer"])] if swept_buffer else []
        cells += [str(s["vcs"])] if swept_vcs else []
        cells += [_num(s["C"]), _num(s["D"]), _num(s["C_plus_D"]), _num(s["lower_bound"]), _t_cell(s),
                  _ratio(s["T_over_CD"]), _bound_cell(s),
                  _bound_ratio(s), str(s["max_buffer"]),
                  "n/a" if s["mean_latency"] is None else f"{s['mean_latency']:.1f}"]
        if bufferless:
            bufferless_row = s["rounds"] is not None
            cells += [_num(s["rounds"]), _num(s["discarded"], 0),
                      _num(s["last_delivery"]) if bufferless_row else "—"]
        cells += [_optimum_cell(s, "opt"), _opt_ratio(s)] if with_opt else []
        cells += [_optimum_cell(s, "R_pi")] if with_free else []
        rows.append((cells, style))
    return _selected(FitTable(cols, rows, title=title, caption=_caption(result) if caption else [], wide=wide),
                     columns)


def _selected(table: FitTable, columns: list[str] | None) -> FitTable:
    """``table`` with only the value columns in ``columns`` (all when None)."""
    if columns is None:
        return table
    keep = select_columns(table.columns, columns)
    index = [table.columns.index(c) for c in keep]
    table.rows = [([cells[i] for i in index], style) for cells, style in table.rows]
    table.columns = keep
    table.wide = True  # the user chose the columns: leave none of them out
    return table


def _bound_cell(s: dict) -> str:
    """bound: — where the protocol has none, n/a where its theorem's hypotheses fail (the
    caption says which)."""
    if s["bound_expr"] is None:
        return "—"
    return "n/a" if s["bound"] is None else _num(s["bound"])


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
    """T/bound: — where the protocol has no bound, n/a where the bound does not apply or a run
    did not finish."""
    if s["bound_expr"] is None:
        return "—"
    return "n/a" if s["bound"] is None else _ratio(s["T_over_bound"])


def _buffer_cell(buffer: int | None) -> str:
    return "∞" if buffer is None else str(buffer)


def deadlock_lines(result: ExperimentResult) -> list[str]:
    """One line per deadlocked run: when, which packets wait, and for which full links."""
    lines = []
    with_vcs = result.vcs != 1       # V named where the run had VCs or compared them
    for r in result.rows:
        if not r.deadlock:
            continue
        more = f" (first {len(r.blocked_packets)})" if r.blocked_count > len(r.blocked_packets) else ""
        at = f", V = {r.vcs}" if with_vcs else ""
        lines.append(f"Deadlock: {r.paths} / {r.protocol}, B = {r.bandwidth}, b = {r.buffer}{at}, seed {r.seed}: "
                     f"no packet could move in step {r.deadlock_step}; {r.blocked_count} packets wait{more}: "
                     f"{' '.join(map(str, r.blocked_packets))}; each needs a full link buffer: "
                     f"{', '.join(r.full_links)}.")
    return lines


def _sweep_line(summary: list[dict], problem: str, named: bool, by_bandwidth: bool, by_buffer: bool,
                by_vcs: bool = False) -> list[str]:
    """For a sweep: T of every (paths, protocol) as B (and/or b, V) changes."""
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
        if by_vcs and ss[0]["rounds"] is None:
            keys.append(("V", [str(s["vcs"]) for s in ss]))
        where = " and ".join(f"{name} = {', '.join(values)}" for name, values in keys)
        out.append(f"{prefix}{paths} / {protocol}: T = {steps}" + (f" for {where}" if where else ""))
    return out


def _steps(T: float) -> str:
    """``1 step``, ``4 steps``, ``4.5 steps``."""
    return f"{_num(T)} step{'' if T == 1 else 's'}"


def _conclusion_for(summary: list[dict], problem: str, named: bool) -> str:
    best = fastest(summary, problem)
    prefix = f"{problem}: " if named else ""
    if best is None:
        return f"{prefix}no combination delivered every packet."
    rows = [s for s in summary if s["problem"] == problem]
    done = [s for s in rows if s["all_delivered"]]
    if len(done) > 1 and all(s["T"] == best["T"] for s in done):  # naming one "fastest" would be arbitrary
        which = "combinations" if len(done) == len(rows) else "combinations that delivered every packet"
        return f"{prefix}all {len(done)} {which} tie at T = {_steps(best['T'])}."
    tied = [s for s in done if s["T"] == best["T"]]
    line = (f"{prefix}fastest{' (tied)' if len(tied) > 1 else ''}: {_combinations(tied, ' paths')}, "
            f"T = {_steps(best['T'])} = {best['T_over_CD']:.2f} x (C + D)")
    others = [s for s in done if s["T"] != best["T"]]
    if others:
        worst = max(s["T"] for s in others)
        slowest = [s for s in others if s["T"] == worst]
        line += (f"; slowest{' (tied)' if len(slowest) > 1 else ''}: {_combinations(slowest, '')}, "
                 f"T = {_num(worst)}")
    return line + "."


def _combinations(rows: list[dict], paths_word: str) -> str:
    """``valiant with growing-rank and fifo``, ``bit-fixing with fifo and valiant with fifo``."""
    by_paths: dict[str, list[str]] = {}
    for s in rows:
        by_paths.setdefault(s["paths"], []).append(s["protocol"])
    return " and ".join(f"{paths}{paths_word} with {' and '.join(protocols)}" for paths, protocols in by_paths.items())


def conclusion(result: ExperimentResult) -> str:
    """One line per problem naming the fastest (paths, protocol) combination and how close it came to
    C + D; for a sweep of B, b or V, one line per (paths, protocol) with T for every value."""
    summary = summarize(result.rows)
    problems = list(dict.fromkeys(s["problem"] for s in summary))
    by_bandwidth, by_buffer = isinstance(result.bandwidth, list), isinstance(result.buffer, list)
    by_vcs = isinstance(result.vcs, list)
    if by_bandwidth or by_buffer or by_vcs:
        lines = [line for p in problems
                 for line in _sweep_line(summary, p, len(problems) > 1, by_bandwidth, by_buffer, by_vcs)]
        if any(not s["all_delivered"] for s in summary):
            lines.append("(* not every packet delivered in some seed)")
    else:
        lines = [_conclusion_for(summary, p, len(problems) > 1) for p in problems]
        lines = [x if len(problems) > 1 else x[0].upper() + x[1:] for x in lines]
    line = "\n".join(lines + deadlock_lines(result))
    # a formula is named only where some row's hypotheses hold and its bound was computed
    bounds = sorted({(s["protocol"], s["bound_expr"]) for s in summary if s["bound_expr"] and s["bound"] is not None})
    if bounds:
        line += "\nBounds (survey, log base 2): " + "; ".join(f"{p}: {e} ({_theorem(p)})" for p, e in bounds) + "."
    return line


class AsciiAwareConsole(Console):
    """A rich console that spells the tables' symbols in ASCII (C̄ as Cbar, — as -) before measuring
    the columns when its output encoding cannot show them (:mod:`universal.ascii`); every piece
    of a composite renderable (a fitted table yields rich tables) passes through :meth:`render`."""

    def render(self, renderable, options=None):  # type: ignore[override]
        if not can_encode(self.encoding):
            renderable = ascii_renderable(renderable)
        return super().render(renderable, options)

    def on_broken_pipe(self) -> None:
        """The reader of standard output went away: raise it to the CLI, which ends quietly with the
        status of a closed pipe (rich's own handling would exit with status 1 from inside the
        table)."""
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def _theorem(protocol: str) -> str:
    """Where the survey proves the bound of ``protocol`` (a name as the rows give it)."""
    from universal.protocols import build_protocol

    return (build_protocol(protocol).theorem or "").replace("survey ", "")


def make_console() -> Console:
    """A console for stdout: the terminal's width, or ``COLUMNS``, or 120 columns when output
    goes to a pipe or a file (rich's own default there, 80, would squeeze tables that a file
    has room for; the tables fit 80-120 columns either way)."""
    # Names such as permutation:tornado must not turn into emoji or markup.
    console = AsciiAwareConsole(emoji=False, markup=False, highlight=False)
    if not console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        console = AsciiAwareConsole(width=120, emoji=False, markup=False, highlight=False)
    return console


def collections_table(result: ExperimentResult) -> FitTable:
    """Path-collection analysis: n, C, D, the simple / shortcut-free / shortest / leveled flags and
    link loads."""
    problems = list(dict.fromkeys(c["problem"] for c in result.collections))
    several = len(problems) > 1  # one problem goes into the title
    cols = [Col("problem", "left", "name")] if several else []
    cols += [Col("seed", kind="label"), Col("paths", "left", "name"),
            Col("host network", "left", "name", folded_header="host\nnetwork"), Col("n"), Col("C"), Col("D"),
            Col("simple", "left", "label"),
            Col("shortcut-free", "left", "label", folded_header="short-\ncut-\nfree"),
            Col("shortest", "left", "label", folded_header="short-\nest"),
            Col("leveled", "left", "label", folded_header="level-\ned"), Col("loads", "left", "text")]

    def flag(value: bool | None) -> str:
        return "?" if value is None else ("yes" if value else "no")

    rows = []
    for c in result.collections:
        loads = " ".join(f"{load}:{count}" for load, count in sorted(c["load_histogram"].items()) if load)
        rows.append(([c["problem"]] * several + [str(c["seed"]), c["paths"], c["host"], str(c["n"]), str(c["C"]), str(c["D"]),
                      flag(c["simple"]), flag(c["shortcut_free"]), flag(c["shortest"]), flag(c["leveled"]),
                      loads], None))
    title = "Path collections" + ("" if several else f" for {problems[0]}" if problems else "")
    return FitTable(cols, rows, title=title,
                    caption=["loads: number of links carrying each load (load:links), idle links left out"])


def path_systems_table(result: ExperimentResult) -> FitTable:
    """Expected congestion of every path system over random functions (survey §2.3)."""
    cols = [Col("paths", "left", "name"), Col("C̄"), Col("±"), Col("exact", "left", "label"),
            Col("busiest link", "left", "label", folded_header="busiest\nlink"),
            Col("host network", "left", "name", folded_header="host\nnetwork"), Col("how", "left", "text")]
    rows = []
    for p in result.path_systems:
        if p["expected_congestion"] is None:
            rows.append(([p["paths"], "—", "", "", "", "", p["how"]], None))
            continue
        error = "" if p["exact"] is not None else f"{p['error']:.3f}"
        rows.append(([p["paths"], f"{p['expected_congestion']:.4g}", error, p["exact"] or "no", p["link"],
                      p["host"], p["how"]], None))
    return FitTable(cols, rows, title="Path systems: expected congestion over random functions",
                    caption=["C̄: largest expected number of packets on one link when every source sends one "
                             "packet to a uniformly random destination; ± standard error when sampled"])


def print_experiment(result: ExperimentResult, console: Console | None = None, columns: list[str] | None = None,
                     wide: bool = False) -> None:
    """Print the table and the conclusion (and the path-collection analysis if it was asked for).

    ``columns`` and ``wide`` are passed to :func:`experiment_table`."""
    console = console or make_console()
    if result.collections:
        console.print(collections_table(result))
    if result.path_systems:
        console.print(path_systems_table(result))
    for table in experiment_tables(result, columns=columns, wide=wide):
        console.print(table)
    console.print(conclusion(result))
