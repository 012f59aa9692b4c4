"""Run a routing experiment: one network, one or more problems, several path systems and
protocols, several seeds; one :class:`Row` per (problem, path system, protocol, seed).

This is the Python API behind ``python -m universal route`` and ``scenario``.

Randomness: seed ``s`` gives a :class:`numpy.random.SeedSequence` split into three streams,
for the problem, the paths and the protocol. Every path system starts from the same paths
stream and every protocol from the same protocol stream, so a row depends only on its own
(path system, protocol, seed), not on what else is in the run.

What to run (:class:`Experiment`) and the checks made before the first run (:func:`check_experiment`)
are in :mod:`universal.experiment_plan`; they are imported here under the same names.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from universal.engine import ENGINES
# imported here too: other modules, tests and benchmarks name them universal.experiment.X
from universal.experiment_plan import (MAX_HOPS, MAX_SEEDS, AdaptiveRouting, Experiment,  # noqa: F401
                                       _check_size, _estimate_bytes, _plan, _writes_path_array, check_experiment,
                                       check_seed_count)
from universal.networks import Network
from universal.offline import fill_free, fill_opt, hint_of, offline_summary
from universal.paths import PathCollection
from universal.protocols import Protocol, build_protocol
from universal.protocols.hypotheses import Setting, check_bound
from universal.registry import parse_spec
from universal.workloads import build_problem


#: The statuses a run ends with: every packet delivered, the step limit reached, a deadlock of
#: bounded buffers, or a bufferless protocol's copy limit (duplication).
ROW_STATUSES = ("delivered", "step-limit", "deadlock", "copy-limit")


@dataclass
class Row:
    """One routing run, with the path collection's parameters and the protocol's bound.

    The field names are the keys of the CLI's JSON rows (documented in the README). A run that
    did not deliver every packet (``status`` ``"deadlock"`` or ``"step-limit"``) has no routing
    time: its ``T`` is the steps it ran, and the ratios to T and the latency statistics, which
    would describe only the packets that happened to arrive, are None.
    """

    problem: str
    paths: str
    protocol: str
    seed: int
    n: int
    C: int
    D: int
    C_plus_D: int
    lower_bound: int
    T: int
    bound: float | None
    bound_expr: str | None
    bound_note: str | None
    T_over_CD: float | None
    T_over_maxCD: float | None
    T_over_bound: float | None
    delivered: int
    status: str
    max_buffer: int
    mean_latency: float | None
    latency_p50: float | None
    latency_p99: float | None
    max_latency: int
    hops: int
    bandwidth: int
    buffer: int | None
    vcs: int
    rounds: int | None
    discarded: int | None
    copies_capped: bool | None
    last_delivery: int
    deadlock: bool
    deadlock_step: int | None
    blocked_count: int
    blocked_packets: list[int] | None
    full_links: list[str] | None
    seconds: float
    # The offline optimum (``opt``: SPEC §12), null unless asked for.
    opt: int | None = None
    opt_lower: int | None = None
    opt_upper: int | None = None
    opt_status: str | None = None
    T_over_opt: float | None = None
    R_pi: int | None = None
    R_pi_lower: int | None = None
    R_pi_upper: int | None = None
    R_pi_status: str | None = None


@dataclass
class ExperimentResult:
    """The rows of an experiment and what they ran on."""

    name: str
    network: Network
    problem: str
    bandwidth: int | list[int]
    rows: list[Row]
    captions: list[str] = field(default_factory=list)
    collections: list[dict] = field(default_factory=list)
    buffer: int | None | list[int | None] = None
    deliveries: list[np.ndarray] = field(default_factory=list, repr=False)
    path_systems: list[dict] = field(default_factory=list)
    link_loads: list[tuple[Network, np.ndarray]] = field(default_factory=list, repr=False)
    runs: list[tuple[PathCollection, object]] = field(default_factory=list, repr=False)
    vcs: int | list[int] = 1
    source_queue: str = "all"
    vc_buffer: str = "set"

    def to_json(self) -> dict:
        """The CLI's ``--json`` object: ``scenario``, ``network``, ``problem``, ``bandwidth`` (a number,
        or a list when swept), ``buffer`` (null: unbounded; a list when swept), ``vcs`` (only when
        the links have several virtual channels; a list when swept), ``source_queue`` (only when ``fifo``), ``vc_buffer``
        (only when ``fifo``: every VC a FIFO whose head alone leaves), ``rows`` (and ``collections`` and
        ``path_systems`` when the run analysed its path collections)."""
        out = {
            "scenario": self.name,
            "network": self.network.summary(),
            "problem": self.problem,
            "bandwidth": self.bandwidth,
            "buffer": self.buffer,
            **({"vcs": self.vcs} if self.vcs != 1 else {}),
            **({"source_queue": self.source_queue} if self.source_queue != "all" else {}),
            **({"vc_buffer": self.vc_buffer} if self.vc_buffer != "set" else {}),
            "rows": [asdict(r) for r in self.rows],
        }
        if self.collections:
            out["collections"] = self.collections
        if self.path_systems:
            out["path_systems"] = self.path_systems
        return out


def lower_bound(C: int, D: int, bandwidth: int) -> int:
    """max(ceil(C/B), D): no schedule of a collection with congestion C and dilation D is faster."""
    return max(-(-C // bandwidth), D)


#: Blocked packets and full links listed in a deadlocked row (the counts are always complete).
DEADLOCK_LISTED = 20

#: The bound note of a row routed adaptively.
ADAPTIVE_NOTE = ("the survey's bounds need paths fixed in advance: an adaptive routing chose these paths during "
                 "the run, and C and D are those of the paths the packets took")


def make_row(problem: str, paths: PathCollection, protocol: Protocol, seed: int, result, bandwidth: int,
             seconds: float, paths_label: str | None = None, protocol_label: str | None = None,
             adaptive: bool = False, vcs: int = 1) -> Row:
    """Combine a path collection, a protocol and an engine result into a :class:`Row`.

    ``paths_label`` and ``protocol_label`` name them as the user did (with their parameters,
    e.g. ``duplication:copies=4``), so that variants of one protocol stay apart. With
    ``adaptive`` the paths are the ones the packets took (chosen hop by hop): C and D are the
    realised ones and no bound is given (the survey's bounds are for paths fixed in advance).
    ``vcs`` is the run's V; a bufferless protocol's row has 0, as its ``buffer`` has (it has no
    buffers to divide into VCs).
    """
    C, D, n = paths.congestion, paths.dilation, paths.size
    deadlock = result.status == "deadlock"
    finished = result.status == "delivered"
    T = result.T
    # the bound only where its theorem's hypotheses hold; else the note says which failed
    if adaptive:                 # a protocol with a bound says why there is none here
        bound, bound_note = None, ADAPTIVE_NOTE if protocol.bound_expr else None
    else:
        bound, bound_note = check_bound(Setting(paths, bandwidth, result.buffer, protocol, result.copies_capped))
    p50, p99 = latency_percentiles(result.delivery) if finished else (None, None)
    return Row(
        problem=problem,
        paths=paths_label or paths.system,
        protocol=protocol_label or protocol.name,
        seed=seed,
        n=n,
        C=C,
        D=D,
        C_plus_D=C + D,
        lower_bound=lower_bound(C, D, bandwidth),
        T=T,
        bound=None if bound is None else round(bound, 3),
        bound_expr=protocol.bound_expr,
        bound_note=bound_note,
        T_over_CD=round(T / max(C + D, 1), 4) if finished else None,
        T_over_maxCD=round(T / max(C, D, 1), 4) if finished else None,
        T_over_bound=None if bound is None or not finished else round(T / bound, 4),
        delivered=result.delivered,
        status=result.status,
        max_buffer=result.max_buffer,
        mean_latency=round(result.mean_latency, 3) if finished else None,
        latency_p50=p50,
        latency_p99=p99,
        max_latency=result.max_latency,
        hops=result.hops,
        bandwidth=bandwidth,
        buffer=result.buffer,
        vcs=0 if protocol.bufferless else vcs,
        rounds=result.rounds,
        discarded=result.discarded,
        copies_capped=result.copies_capped,
        last_delivery=result.last_delivery,
        deadlock=deadlock,
        deadlock_step=result.deadlock_step,
        blocked_count=len(result.blocked) if deadlock else 0,
        blocked_packets=[int(p) for p in result.blocked[:DEADLOCK_LISTED]] if deadlock else None,
        full_links=[paths.network.link_label(l) for l in result.full_links[:DEADLOCK_LISTED]] if deadlock else None,
        seconds=round(seconds, 4),
    )


def latency_percentiles(delivery: np.ndarray) -> tuple[float, float]:
    """The median and 99th percentile of the packets' latencies (their delivery steps).

    Percentiles are the order statistics of the "lower" method (a latency some packet had):
    p50 is the smallest latency at least half the packets did not exceed, p99 the same for 99%.

    Parameters
    ----------
    delivery : ndarray of int
        Delivery step of every packet (all injected at step 0).

    Returns
    -------
    (float, float)
        p50 and p99 (0.0 for no packets).

    Examples
    --------
    >>> latency_percentiles(np.array([1, 2, 3, 4, 100]))
    (3.0, 100.0)
    """
    if not len(delivery):
        return 0.0, 0.0
    p50, p99 = np.percentile(delivery, [50, 99], method="inverted_cdf")
    return float(p50), float(p99)


def run_experiment(exp: Experiment, progress: Callable[[str], None] | None = None, *,
                   keep_delivery: bool = False, keep_link_loads: bool = False,
                   keep_runs: bool = False) -> ExperimentResult:
    """Route ``exp.problem`` on ``exp.network`` with every path system, protocol and seed.

    Parameters
    ----------
    exp : Experiment
    progress : callable, optional
        Called with a short description before every run (for progress bars).
    keep_delivery : bool
        Keep every run's per-packet delivery steps in ``ExperimentResult.deliveries`` (aligned
        with the rows), e.g. to plot packets delivered against steps.
    keep_link_loads : bool
        Keep the number of paths on every link of every path collection (its host network and
        the loads) in ``ExperimentResult.link_loads``, aligned with ``collections`` when
        ``exp.analyze`` is set.
    keep_runs : bool
        Keep every run's path collection and engine result, with the step of every hop
        (``record_hops``), in ``ExperimentResult.runs`` (aligned with the rows): what the HTML
        view draws.

    Returns
    -------
    ExperimentResult
    """
    plan = _plan(exp, keep_link_loads, keep_runs)
    network, systems, protocols = plan.network, plan.systems, plan.protocols
    bandwidths, buffers, vcs_values = plan.bandwidths, plan.buffers, plan.vcs
    simulate = ENGINES[exp.engine]
    router = {}
    if exp.source_queue != "all":
        router["source_queue"] = exp.source_queue
    if exp.vc_buffer != "set":
        router["vc_buffer"] = exp.vc_buffer
    rows: list[Row] = []
    deliveries: list[np.ndarray] = []
    captions = [s.caption for s in systems if s.caption] + ([exp.note] if exp.note else [])
    collections: list[dict] = []
    link_loads: list[tuple[Network, np.ndarray]] = []
    runs: list = []
    for (spec, problem_name), seed in itertools.product(zip(plan.problems, plan.names), exp.seeds):
        problem_ss, paths_ss, protocol_ss = np.random.SeedSequence(seed).spawn(3)
        problem = build_problem(spec, network, np.random.default_rng(problem_ss), exp.base_dir)
        if problem.note and problem.note not in captions:
            captions.append(problem.note)
        problem_rows = len(rows)
        for system, system_label in zip(systems, plan.system_labels):
            if isinstance(system, AdaptiveRouting):
                for bandwidth, buffer, vcs, (protocol, protocol_label) in itertools.product(
                        bandwidths, buffers, vcs_values, zip(protocols, plan.protocol_labels)):
                    if progress:
                        at = _axes_text(bandwidths, buffers, vcs_values, bandwidth, buffer, vcs)
                        progress(f"{problem_name} / {system_label} / {protocol_label}{at} / seed {seed}")
                    row, run = _adaptive_row(network, problem, problem_name, system, protocol, seed, protocol_ss,
                                             bandwidth, buffer, system_label, protocol_label, vcs,
                                             exp.source_queue, exp.vc_buffer)
                    rows.append(row)
                    if keep_delivery:
                        deliveries.append(run.result.delivery)
                    if keep_runs:
                        runs.append((run.paths, run.result))
                continue
            _check_size(network, problem.size, system.name, plan.runs)
            paths = system.route(problem, network, np.random.default_rng(paths_ss))
            if paths.level_rows is not None:    # kept as rows: C now known (the words may not hold it)
                _check_size(network, problem.size, system.name, plan.runs, paths.congestion)
            system_rows, hints = len(rows), {}
            if exp.analyze or keep_link_loads:
                collections.append({"problem": problem_name, "seed": seed, **paths.summary(),
                                    "host": paths.network.name, "load_histogram": paths.load_histogram()})
            if keep_link_loads:
                link_loads.append((paths.network, paths.link_loads))
            for bandwidth, buffer, vcs, (protocol, protocol_label) in itertools.product(
                    bandwidths, buffers, vcs_values, zip(protocols, plan.protocol_labels)):
                if protocol.bufferless and (buffer != buffers[0] or vcs != vcs_values[0]):
                    continue  # a bufferless protocol runs the same whatever the buffer size and VCs
                if progress:
                    at = _axes_text(bandwidths, buffers, vcs_values, bandwidth, buffer, vcs)
                    progress(f"{problem_name} / {system_label} / {protocol_label}{at} / seed {seed}")
                start = time.perf_counter()
                # V = 1 is not passed: the plain engine's fast paths stay open to it
                result = simulate(paths, protocol, np.random.default_rng(protocol_ss), bandwidth=bandwidth,
                                  buffer=buffer, record_hops=exp.opt is not None or keep_runs,
                                  **({"vcs": vcs} if vcs != 1 else {}), **router)
                seconds = time.perf_counter() - start
                rows.append(make_row(problem_name, paths, protocol, seed, result, bandwidth, seconds,
                                     system_label, protocol_label, vcs=vcs))
                if keep_delivery:
                    deliveries.append(result.delivery)
                if keep_runs:
                    runs.append((paths, result))
                if exp.opt is not None:
                    hints.setdefault(bandwidth, []).append(hint_of(result, protocol_label))
            for bandwidth in bandwidths if exp.opt is not None else []:
                if progress:
                    progress(f"OPT of {problem_name} / {system_label} / B = {bandwidth} / seed {seed}")
                fill_opt([r for r in rows[system_rows:] if r.bandwidth == bandwidth], paths, bandwidth,
                         [h for h in hints.get(bandwidth, []) if h is not None], exp.time_limit, seed)
        for bandwidth in bandwidths if exp.opt == "free" else []:
            if progress:
                progress(f"R(G, π) of {problem_name} / B = {bandwidth} / seed {seed}")
            fill_free([r for r in rows[problem_rows:] if r.bandwidth == bandwidth], problem, network, bandwidth,
                      exp.time_limit, seed)
    shown = bandwidths[0] if len(bandwidths) == 1 else bandwidths
    shown_buffer = buffers[0] if len(buffers) == 1 else buffers
    shown_vcs = vcs_values[0] if len(vcs_values) == 1 else vcs_values
    path_systems = []
    for label in plan.system_labels if exp.analyze else []:
        if progress:
            progress(f"expected congestion of {label}")
        path_systems.append(_expected_congestion(label, network, exp))
    return ExperimentResult(exp.name, network, ", ".join(plan.names), shown, rows, captions, collections,
                            shown_buffer, deliveries, path_systems, link_loads, runs, shown_vcs, exp.source_queue,
                            exp.vc_buffer)


def _adaptive_row(network: Network, problem, problem_name: str, system: AdaptiveRouting, protocol: Protocol,
                  seed: int, protocol_ss, bandwidth: int, buffer: int | None, system_label: str,
                  protocol_label: str, vcs: int = 1, source_queue: str = "all", vc_buffer: str = "set"):
    """One batch routed adaptively (:func:`universal.engine.batch.route_batch`) and its row."""
    from universal.engine.batch import route_batch
    start = time.perf_counter()
    run = route_batch(network, problem.sources, problem.dests, system.name, protocol.name, seed=protocol_ss,
                      bandwidth=bandwidth, buffer=buffer, vcs=vcs, source_queue=source_queue, vc_buffer=vc_buffer)
    row = make_row(problem_name, run.paths, protocol, seed, run.result, bandwidth, time.perf_counter() - start,
                   system_label, protocol_label, adaptive=True, vcs=vcs)
    return row, run


def _expected_congestion(system: str, network: Network, exp: Experiment) -> dict:
    """The expected congestion of one path system (drawn from the experiment's first seed)."""
    from universal.engine.batch import is_adaptive_routing
    if is_adaptive_routing(system):
        return {"paths": system, "expected_congestion": None, "exact": None, "error": None, "link": None,
                "host": None, "how": "not defined: an adaptive routing chooses its paths during the run"}
    if parse_spec(system).name == "explicit":
        return {"paths": system, "expected_congestion": None, "exact": None, "error": None, "link": None,
                "host": None, "how": "not defined: explicit paths belong to one problem"}
    from universal.oblivious.expected import expected_congestion  # only with --analyze: kept off start-up
    rng = np.random.default_rng(exp.seeds[0] if exp.seeds else 0)
    return expected_congestion(system, network, rng=rng, base_dir=exp.base_dir).to_dict()


def _buffer_name(buffer: int | None) -> str:
    return "unbounded" if buffer is None else str(buffer)


def _axes_text(bandwidths: list, buffers: list, vcs_values: list, bandwidth: int, buffer: int | None,
               vcs: int) -> str:
    """`` / B = 2 / b = 1 / V = 2`` for a progress line: the values of the axes compared."""
    at = f" / B = {bandwidth}" if len(bandwidths) > 1 else ""
    at += f" / b = {_buffer_name(buffer)}" if len(buffers) > 1 else ""
    return at + (f" / V = {vcs}" if len(vcs_values) > 1 else "")


def rows_in(exp: Experiment) -> int:
    """Number of rows (engine runs) an experiment makes."""
    problems = len(exp.problem) if isinstance(exp.problem, (list, tuple)) else 1
    bandwidths = 1 if isinstance(exp.bandwidth, int) else len(exp.bandwidth)
    buffers = 1 if exp.buffer is None or isinstance(exp.buffer, int) else len(exp.buffer)
    vcs = len(exp.vcs) if isinstance(exp.vcs, (list, tuple)) else 1
    per_system = sum(1 if build_protocol(p).bufferless else buffers * vcs for p in exp.protocols)
    systems = 1 if exp.paths is None else len(exp.paths)
    return problems * len(exp.seeds) * systems * per_system * bandwidths


def runs_in(exp: Experiment) -> int:
    """Number of units of work an experiment makes (for progress bars): its runs, and the
    expected congestions and optima it computes."""
    problems = len(exp.problem) if isinstance(exp.problem, (list, tuple)) else 1
    bandwidths = 1 if isinstance(exp.bandwidth, int) else len(exp.bandwidth)
    systems = 1 if exp.paths is None else len(exp.paths)
    expected_congestions = systems if exp.analyze else 0  # one per path system, after the runs
    # OPT once per path collection and B; R(G, π) once per problem instance and B.
    optima = (systems + (exp.opt == "free")) * bandwidths if exp.opt is not None else 0
    return rows_in(exp) + problems * len(exp.seeds) * optima + expected_congestions


def summarize(rows: Sequence[Row]) -> list[dict]:
    """Group rows by (problem, paths, protocol, bandwidth, buffer, vcs) in first-seen order; means
    and spreads over seeds."""
    groups: dict[tuple, list[Row]] = {}
    for r in rows:
        groups.setdefault((r.problem, r.paths, r.protocol, r.bandwidth, r.buffer, r.vcs), []).append(r)
    out = []
    for (problem, paths, protocol, bandwidth, buffer, vcs), rs in groups.items():
        rounds = [r.rounds for r in rs if r.rounds is not None]
        T = np.array([r.T for r in rs], dtype=float)
        bound = [r.bound for r in rs if r.bound is not None]
        shown = len(bound) == len(rs)  # a bound over seeds only where every seed's run is covered
        out.append({
            "problem": problem,
            "paths": paths,
            "protocol": protocol,
            "bandwidth": bandwidth,
            "buffer": buffer,
            "vcs": vcs,
            "seeds": len(rs),
            "C": float(np.mean([r.C for r in rs])),
            "D": float(np.mean([r.D for r in rs])),
            "C_plus_D": float(np.mean([r.C_plus_D for r in rs])),
            "lower_bound": float(np.mean([r.lower_bound for r in rs])),
            "T": float(T.mean()),
            "T_min": int(T.min()),
            "T_max": int(T.max()),
            "T_std": float(T.std()),
            "T_over_CD": _mean_if_all([r.T_over_CD for r in rs]),
            "bound": float(np.mean(bound)) if shown else None,
            "bound_expr": rs[0].bound_expr,
            "bound_notes": list(dict.fromkeys(r.bound_note for r in rs if r.bound_note)),
            "T_over_bound": _mean_if_all([r.T_over_bound for r in rs]) if shown else None,
            "max_buffer": max(r.max_buffer for r in rs),
            "mean_latency": _mean_if_all([r.mean_latency for r in rs]),
            "latency_p50": _mean_if_all([r.latency_p50 for r in rs]),
            "latency_p99": _mean_if_all([r.latency_p99 for r in rs]),
            "all_delivered": all(r.status == "delivered" for r in rs),
            "deadlocks": sum(r.deadlock for r in rs),
            "rounds": float(np.mean(rounds)) if rounds else None,
            "discarded": float(np.mean([r.discarded for r in rs])) if rounds else None,
            "last_delivery": float(np.mean([r.last_delivery for r in rs])),
            "copies_capped": any(bool(r.copies_capped) for r in rs),
            **offline_summary(rs),
        })
    return out


def _mean_if_all(values: list[float | None]) -> float | None:
    """The mean, or None if some value is missing (a run that did not finish has no ratio)."""
    return None if any(v is None for v in values) else float(np.mean(values))


def fastest(summary: Sequence[dict], problem: str | None = None) -> dict | None:
    """The group with the smallest mean T among those that delivered everything (for one problem)."""
    done = [s for s in summary if s["all_delivered"] and (problem is None or s["problem"] == problem)]
    return min(done, key=lambda s: (s["T"], s["T_max"])) if done else None
