"""Run a routing experiment: one network, one or more problems, several path systems and
protocols, several seeds; one :class:`Row` per (problem, path system, protocol, seed).

This is the Python API behind ``python -m universal route`` and ``scenario``.

Randomness: seed ``s`` gives a :class:`numpy.random.SeedSequence` split into three streams,
for the problem, the paths and the protocol. Every path system starts from the same paths
stream and every protocol from the same protocol stream, so a row depends only on its own
(path system, protocol, seed), not on what else is in the run.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from universal.engine import ENGINES
from universal.errors import UserError
from universal import memory
from universal.memory import check_link_sizes
from universal.memory import ROWS_FROM_HOPS, check_memory, kept_rows_bytes, route_bytes
from universal.networks import Network, build_network, resolve_path
from universal.offline import check_opt, fill_free, fill_opt, hint_of, offline_summary
from universal.paths import (PATH_SYSTEMS, PathCollection, PathSystem, build_path_system, default_base,
                             longest_path_bound)
from universal.paths.systems import keeps_rows
from universal.protocols import Protocol, build_protocol
from universal.protocols.hypotheses import Setting, check_bound
from universal.registry import parse_spec
from universal.workloads import Problem, build_problem, estimate_packets

#: Runs whose paths would hold more link crossings than this are refused before allocating.
MAX_HOPS = 300_000_000

#: Experiments with more seeds than this are refused before the seed list is made.
MAX_SEEDS = 100_000

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
class Experiment:
    """What to run. Strings are the registered names of SPEC §8.

    ``paths=None`` picks the network's usual path system (:func:`universal.paths.default_base`):
    dimension order where the network has dimensions (meshes, tori, hypercubes, butterflies),
    shortest paths elsewhere (edge lists, networkx graphs).

    Examples
    --------
    >>> exp = Experiment("butterfly:d=4", "h-relation:h=2", ["dimension-order", "valiant"],
    ...                  ["random-rank", "fifo"], seeds=[0, 1])
    >>> result = run_experiment(exp)
    >>> len(result.rows)
    8
    >>> all(r.T >= r.lower_bound for r in result.rows)
    True
    """

    network: str | Network
    problem: str | Problem | Sequence[str | Problem]
    paths: Sequence[str | PathSystem] | None
    protocols: Sequence[str | Protocol]
    seeds: Sequence[int] = (0,)
    bandwidth: int | Sequence[int] = 1
    buffer: int | None | Sequence[int | None] = None
    vcs: int = 1
    #: The sources' model (:mod:`universal.engine.source_queue`): ``all`` or ``fifo``.
    source_queue: str = "all"
    #: The VC buffer's model (:mod:`universal.engine.fifo_vcs`): ``set`` or ``fifo``.
    vc_buffer: str = "set"
    engine: str = "one"
    name: str = ""
    base_dir: Path | None = None
    analyze: bool = False
    note: str = ""
    opt: str | None = None
    time_limit: float = 10.0


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
    vcs: int = 1
    source_queue: str = "all"
    vc_buffer: str = "set"

    def to_json(self) -> dict:
        """The CLI's ``--json`` object: ``scenario``, ``network``, ``problem``, ``bandwidth`` (a number,
        or a list when swept), ``buffer`` (null: unbounded; a list when swept), ``vcs`` (only when
        the links have several virtual channels), ``source_queue`` (only when ``fifo``), ``vc_buffer``
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


def _estimate_hops(network: Network, packets: int, system: str) -> int:
    return packets * longest_path_bound(network, system)


@dataclass(frozen=True)
class _Runs:
    """What the runs of one path collection ask of it: the protocols, Bs and buffers it is routed
    with, whether its link loads are read (``--analyze``, ``--links``), whether every hop's step
    is recorded (``--opt``, ``--html``), and whether it runs with one set buffer per link and
    every source routed from step 1 on the one engine (``plain``)."""

    protocols: tuple
    bandwidths: tuple
    buffers: tuple
    reads_loads: bool = False
    record_hops: bool = False
    plain: bool = True


def _writes_path_array(network: Network, packets: int, system: str, runs: _Runs | None,
                       congestion: int | None = None) -> bool:
    """Whether routing ``system``'s paths writes their path array (4 bytes per hop): always, but
    for a butterfly's level paths kept as rows (:func:`universal.paths.systems.keeps_rows`) that
    every run routes from their rows (:func:`universal.engine.batch.writes_level_path_array`) and
    nothing else reads. With ``runs`` None (not known) it is written."""
    if runs is None or not keeps_rows(network, system, packets):
        return True
    from universal.engine.batch import writes_level_path_array

    passes = 2 if parse_spec(system).name == "valiant" else 1
    # a host too large to keep the link loads counts them again from the path array when read
    if runs.reads_loads and network.num_links * passes > memory.KEEP_LOADS_LINKS:
        return True
    return any(writes_level_path_array(protocol, d=network.params["d"], passes=passes, packets=packets,
                                       bandwidth=bandwidth, buffer=buffer, congestion=congestion,
                                       record_hops=runs.record_hops, plain=runs.plain)
               for protocol, bandwidth, buffer in itertools.product(runs.protocols, runs.bandwidths, runs.buffers))


def _estimate_bytes(network: Network, packets: int, system: str, runs: _Runs | None = None,
                    congestion: int | None = None) -> int:
    """Peak memory of routing ``packets`` packets on ``network`` with ``system`` paths, roughly:
    :func:`universal.memory.kept_rows_bytes` where the path array is never written
    (:func:`_writes_path_array`), else :func:`universal.memory.route_bytes`.

    Valiant's trick on a butterfly routes on two butterflies back to back: twice the links.
    """
    host_links = network.num_links * (2 if parse_spec(system).name == "valiant" else 1)
    if not _writes_path_array(network, packets, system, runs, congestion):
        return kept_rows_bytes(packets, host_links)
    # the compiled kernel reads a large batch of a butterfly's level paths where they are and
    # copies all others
    hops = _estimate_hops(network, packets, system)
    return route_bytes(hops, host_links, packets, copied=network.kind != "butterfly" or hops < ROWS_FROM_HOPS)


def _check_size(network: Network, packets: int, system: str, runs: _Runs | None = None,
                congestion: int | None = None) -> None:
    estimate = _estimate_hops(network, packets, system)
    if estimate > MAX_HOPS:
        raise UserError(
            f"{packets:,} packets on {network.name} with {system} paths could need "
            f"{estimate:,} link crossings, more than this tool handles ({MAX_HOPS:,})"
        )
    check_memory(_estimate_bytes(network, packets, system, runs, congestion),
                 f"{packets:,} packets on {network.name} with {system} paths")


def _resolve(spec: str, base_dir: Path | None) -> str:
    """The problem name with a relative ``file=`` resolved against ``base_dir`` (for size estimates)."""
    parsed = parse_spec(spec)
    if "file" in parsed.params and base_dir is not None:
        return spec.replace(parsed.params["file"], str(resolve_path(parsed.params["file"], base_dir)))
    return spec


#: Blocked packets and full links listed in a deadlocked row (the counts are always complete).
DEADLOCK_LISTED = 20

#: The bound note of a row routed adaptively.
ADAPTIVE_NOTE = ("the survey's bounds need paths fixed in advance: an adaptive routing chose these paths during "
                 "the run, and C and D are those of the paths the packets took")


@dataclass
class AdaptiveRouting:
    """An adaptive routing named under ``paths`` (``min-adaptive``, ``goal``, ``ugal``): it has no
    path collection before the run; :func:`universal.engine.batch.route_batch` routes it."""

    name: str
    caption: str = ""


def make_row(problem: str, paths: PathCollection, protocol: Protocol, seed: int, result, bandwidth: int,
             seconds: float, paths_label: str | None = None, protocol_label: str | None = None,
             adaptive: bool = False) -> Row:
    """Combine a path collection, a protocol and an engine result into a :class:`Row`.

    ``paths_label`` and ``protocol_label`` name them as the user did (with their parameters,
    e.g. ``duplication:copies=4``), so that variants of one protocol stay apart. With
    ``adaptive`` the paths are the ones the packets took (chosen hop by hop): C and D are the
    realised ones and no bound is given (the survey's bounds are for paths fixed in advance).
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


@dataclass
class _Plan:
    """An experiment with every name resolved and every size checked, ready to run."""

    network: Network
    systems: list[PathSystem]
    protocols: list[Protocol]
    system_labels: list[str]
    protocol_labels: list[str]
    problems: list
    names: list[str]
    bandwidths: list[int]
    buffers: list[int | None]
    runs: _Runs | None = None


def _plan(exp: Experiment, keep_link_loads: bool = False, keep_runs: bool = False) -> _Plan:
    bandwidths = _bandwidths(exp.bandwidth)
    buffers = _buffers(exp.buffer)
    if exp.engine not in ENGINES:
        raise UserError(f"unknown engine {exp.engine!r} (known: {', '.join(ENGINES)})")
    if exp.paths is not None and not exp.paths or not exp.protocols or not exp.seeds:
        raise UserError("an experiment needs at least one path system, one protocol and one seed")
    check_seed_count(len(exp.seeds), "the experiment")
    network = build_network(exp.network, exp.base_dir)
    _check_vcs(exp, network)
    from universal.engine.source_queue import check_source_queue

    if check_source_queue(exp.source_queue) != "all" and exp.engine == "reference":
        raise UserError("the batch reference engine has no FIFO source queues; they run on the one engine")
    paths = [default_base(network)] if exp.paths is None else exp.paths
    systems = [_adaptive_or_paths(p, network, exp.base_dir) for p in paths]
    protocols = [build_protocol(p) for p in exp.protocols]
    if any(isinstance(system, AdaptiveRouting) for system in systems):
        _check_adaptive(exp, network, protocols)
    _check_vc_buffer(exp, systems, protocols, bandwidths, buffers)
    problems = list(exp.problem) if isinstance(exp.problem, (list, tuple)) else [exp.problem]
    names = [p if isinstance(p, str) else p.name for p in problems]
    runs = _Runs(tuple(protocols), tuple(bandwidths), tuple(buffers), reads_loads=exp.analyze or keep_link_loads,
                 record_hops=exp.opt is not None or keep_runs,
                 plain=ENGINES[exp.engine] is ENGINES["one"] and exp.vcs == 1 and exp.source_queue == "all"
                 and exp.vc_buffer == "set")
    for spec in problems:
        packets = estimate_packets(spec if not isinstance(spec, str) else _resolve(spec, exp.base_dir), network)
        for system in systems:
            _check_size(network, packets, "valiant" if system.name.startswith("ugal") else system.name,
                        None if isinstance(system, AdaptiveRouting) else runs)
        if exp.opt is not None:
            check_opt(exp.opt, packets, exp.time_limit)
    return _Plan(network, systems, protocols, _labels(paths), _labels(exp.protocols), problems, names,
                 bandwidths, buffers, runs)


def _check_vcs(exp: Experiment, network: Network) -> None:
    """Refuse a VC count out of range, or VCs where there are no classes (before anything runs;
    too few for a collection's paths is refused when its run starts, with the count it needs)."""
    from universal.engine.vcs import MAX_VCS

    if not isinstance(exp.vcs, int) or isinstance(exp.vcs, bool) or not 1 <= exp.vcs <= MAX_VCS:
        raise UserError(f"vcs must be an integer between 1 and {MAX_VCS} (got {exp.vcs!r})")
    if exp.vcs == 1:
        return
    if exp.engine == "reference":
        raise UserError("the batch reference engine has one buffer per link; virtual channels run on the one engine")
    from universal.engine.vcs import require_channel_geometry
    require_channel_geometry(network)


def _check_vc_buffer(exp: Experiment, systems: list, protocols: list[Protocol], bandwidths: list[int],
                     buffers: list[int | None]) -> None:
    """Refuse FIFO VCs where a run could not keep them (the rules of ``openloop --vc-buffer``),
    before anything runs: they need bounded buffers, B = 1, buffered protocols and routings
    with VCs (not CHAOS), and run on the one engine."""
    from universal.engine.fifo_vcs import check_vc_buffer

    if check_vc_buffer(exp.vc_buffer) == "set":
        return
    if exp.engine == "reference":
        raise UserError("the batch reference engine has one set buffer per link; FIFO VCs run on the one engine")
    for protocol in protocols:
        if protocol.bufferless:
            raise UserError(f"{protocol.name} is bufferless: it has no buffers to make FIFOs (leave out "
                            "--vc-buffer fifo)")
    for system, buffer, bandwidth in itertools.product(systems, buffers, bandwidths):
        check_vc_buffer(exp.vc_buffer, buffer, bandwidth, system.name)


def check_seed_count(count: int, where: str) -> None:
    """Refuse more than :data:`MAX_SEEDS` seeds (before any list of them is made).

    Examples
    --------
    >>> check_seed_count(1_000_000_000, "--seeds")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: --seeds: 1,000,000,000 seeds are more than this tool runs (at most 100,000)
    """
    if count > MAX_SEEDS:
        raise UserError(f"{where}: {count:,} seeds are more than this tool runs (at most {MAX_SEEDS:,})")


def _adaptive_or_paths(name, network: Network, base_dir: Path | None):
    """The path system ``name``, or an :class:`AdaptiveRouting` checked on ``network``."""
    if network.kind == "torus":
        # installs the designer behind the 2turn / 2turna routings, which are defined on tori
        # only: the design layer is a tenth of a small route's imports elsewhere
        import universal.design  # noqa: F401
    if isinstance(name, str) and name.strip() == "splitter" and network.kind == "butterfly":
        # the butterfly is the multibutterfly whose output sets hold one edge each: the splitter
        # rule has no choice there, and its route is the unique level path
        return build_path_system("dimension-order", network, base_dir)
    if not isinstance(name, str) or parse_spec(name).name in PATH_SYSTEMS:
        # no adaptive routing shares a path system's name (a test checks): the open-loop package,
        # a tenth of a small route's start-up, is imported only for the names it may know
        return build_path_system(name, network, base_dir)
    from universal.engine.batch import is_adaptive_routing
    if is_adaptive_routing(name):
        from universal.engine.routes import build_router
        build_router(name, network)            # refuses networks it is not defined on, with one line
        return AdaptiveRouting(name.strip())
    return build_path_system(name, network, base_dir)


def _check_adaptive(exp: Experiment, network: Network, protocols: list[Protocol]) -> None:
    """What adaptive routing in the batch model does not do, refused before anything runs."""
    from universal.engine.batch import ADAPTIVE_PROTOCOLS
    for protocol in protocols:
        if protocol.name not in ADAPTIVE_PROTOCOLS:
            raise UserError(f"protocol {protocol.name!r} is not available with adaptive routing (paths "
                            f"min-adaptive, goal, ugal, chaos); use {', '.join(ADAPTIVE_PROTOCOLS)}: the bufferless "
                            "protocols, growing rank and random delays are defined on paths fixed in advance")
    if exp.opt is not None:
        raise UserError("--opt computes the optimum of paths fixed in advance; adaptive routings choose "
                        "their paths during the run")


def _labels(items: Sequence) -> list[str]:
    """How rows name path systems and protocols: as given (parameters included), or by name."""
    return [item.strip() if isinstance(item, str) else item.name for item in items]


def check_experiment(exp: Experiment) -> Network:
    """Resolve every name of ``exp`` and check its sizes without routing anything.

    Raises
    ------
    UserError
        On anything :func:`run_experiment` would refuse before its first run.

    Returns
    -------
    Network
        The network the experiment would run on.
    """
    return _plan(exp).network


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
    bandwidths, buffers = plan.bandwidths, plan.buffers
    simulate = ENGINES[exp.engine]
    with_vcs = {"vcs": exp.vcs} if exp.vcs != 1 else {}
    if exp.source_queue != "all":
        with_vcs["source_queue"] = exp.source_queue
    if exp.vc_buffer != "set":
        with_vcs["vc_buffer"] = exp.vc_buffer
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
                for bandwidth, buffer, (protocol, protocol_label) in itertools.product(
                        bandwidths, buffers, zip(protocols, plan.protocol_labels)):
                    if progress:
                        progress(f"{problem_name} / {system_label} / {protocol_label} / seed {seed}")
                    row, run = _adaptive_row(network, problem, problem_name, system, protocol, seed, protocol_ss,
                                             bandwidth, buffer, system_label, protocol_label, exp.vcs,
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
            for bandwidth, buffer, (protocol, protocol_label) in itertools.product(
                    bandwidths, buffers, zip(protocols, plan.protocol_labels)):
                if protocol.bufferless and buffer != buffers[0]:
                    continue  # a bufferless protocol runs the same whatever the buffer size
                if progress:
                    at = f" / B = {bandwidth}" if len(bandwidths) > 1 else ""
                    at += f" / b = {_buffer_name(buffer)}" if len(buffers) > 1 else ""
                    progress(f"{problem_name} / {system_label} / {protocol_label}{at} / seed {seed}")
                start = time.perf_counter()
                result = simulate(paths, protocol, np.random.default_rng(protocol_ss), bandwidth=bandwidth,
                                  buffer=buffer, record_hops=exp.opt is not None or keep_runs, **with_vcs)
                seconds = time.perf_counter() - start
                rows.append(make_row(problem_name, paths, protocol, seed, result, bandwidth, seconds,
                                     system_label, protocol_label))
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
    path_systems = []
    for label in plan.system_labels if exp.analyze else []:
        if progress:
            progress(f"expected congestion of {label}")
        path_systems.append(_expected_congestion(label, network, exp))
    return ExperimentResult(exp.name, network, ", ".join(plan.names), shown, rows, captions, collections,
                            shown_buffer, deliveries, path_systems, link_loads, runs, exp.vcs, exp.source_queue,
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
                   system_label, protocol_label, adaptive=True)
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


def _buffers(value: int | None | Sequence[int | None]) -> list[int | None]:
    """The buffer sizes of an experiment: one b (None: unbounded), or a list to compare."""
    values = [value] if value is None or isinstance(value, int) else list(value)
    if not values:
        raise UserError("buffer: give at least one size")
    for b in values:
        if b is not None and (not isinstance(b, int) or isinstance(b, bool) or b < 1):
            raise UserError(f"buffer size must be an integer >= 1 (or unbounded), got {b!r}")
        check_link_sizes(buffer=b)
    return values


def _bandwidths(value: int | Sequence[int]) -> list[int]:
    """The bandwidths of an experiment: one B, or a list to sweep (each checked >= 1)."""
    values = [value] if isinstance(value, int) else list(value)
    if not values:
        raise UserError("bandwidth: give at least one value")
    for b in values:
        if not isinstance(b, int) or isinstance(b, bool) or b < 1:
            raise UserError(f"bandwidth must be an integer >= 1, got {b!r}")
        check_link_sizes(bandwidth=b)
    return values


def rows_in(exp: Experiment) -> int:
    """Number of rows (engine runs) an experiment makes."""
    problems = len(exp.problem) if isinstance(exp.problem, (list, tuple)) else 1
    bandwidths = 1 if isinstance(exp.bandwidth, int) else len(exp.bandwidth)
    buffers = 1 if exp.buffer is None or isinstance(exp.buffer, int) else len(exp.buffer)
    per_system = sum(1 if build_protocol(p).bufferless else buffers for p in exp.protocols)
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
    """Group rows by (problem, paths, protocol, bandwidth, buffer) in first-seen order; means and
    spreads over seeds."""
    groups: dict[tuple, list[Row]] = {}
    for r in rows:
        groups.setdefault((r.problem, r.paths, r.protocol, r.bandwidth, r.buffer), []).append(r)
    out = []
    for (problem, paths, protocol, bandwidth, buffer), rs in groups.items():
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
