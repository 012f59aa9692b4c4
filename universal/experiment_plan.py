"""What an experiment is (:class:`Experiment`) and its plan: every name resolved and every size
checked before :func:`universal.experiment.run_experiment` routes anything.

The checks come first so that a run too large for this tool or for the memory available, an
unknown name or a combination a run could not keep is refused with one line before the first
run starts (:func:`check_experiment` makes them alone).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from universal.engine import ENGINES
from universal.errors import UserError
from universal import memory
from universal.memory import check_link_sizes
from universal.memory import ROWS_FROM_HOPS, check_memory, kept_rows_bytes, route_bytes
from universal.networks import Network, build_network, resolve_path
from universal.offline import check_opt
from universal.paths import PATH_SYSTEMS, PathSystem, build_path_system, default_base, longest_path_bound
from universal.paths.systems import keeps_rows
from universal.protocols import Protocol, build_protocol
from universal.registry import parse_spec
from universal.workloads import Problem, estimate_packets

#: Runs whose paths would hold more link crossings than this are refused before allocating.
MAX_HOPS = 300_000_000

#: Experiments with more seeds than this are refused before the seed list is made.
MAX_SEEDS = 100_000


@dataclass
class Experiment:
    """What to run. Strings are the registered names of SPEC §8.

    ``paths=None`` picks the network's usual path system (:func:`universal.paths.default_base`):
    dimension order where the network has dimensions (meshes, tori, hypercubes, butterflies),
    shortest paths elsewhere (edge lists, networkx graphs).

    Examples
    --------
    >>> from universal.experiment import run_experiment
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
    #: V, virtual channels per link (:mod:`universal.engine.vcs`), or a list to compare.
    vcs: int | Sequence[int] = 1
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
class AdaptiveRouting:
    """An adaptive routing named under ``paths`` (``min-adaptive``, ``goal``, ``ugal``): it has no
    path collection before the run; :func:`universal.engine.batch.route_batch` routes it."""

    name: str
    caption: str = ""


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


def _labels(items: Sequence) -> list[str]:
    """How rows name path systems and protocols: as given (parameters included), or by name."""
    return [item.strip() if isinstance(item, str) else item.name for item in items]


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
    vcs: list[int] = field(default_factory=lambda: [1])


def _plan(exp: Experiment, keep_link_loads: bool = False, keep_runs: bool = False) -> _Plan:
    bandwidths = _bandwidths(exp.bandwidth)
    buffers = _buffers(exp.buffer)
    if exp.engine not in ENGINES:
        raise UserError(f"unknown engine {exp.engine!r} (known: {', '.join(ENGINES)})")
    if exp.paths is not None and not exp.paths or not exp.protocols or not exp.seeds:
        raise UserError("an experiment needs at least one path system, one protocol and one seed")
    check_seed_count(len(exp.seeds), "the experiment")
    network = build_network(exp.network, exp.base_dir)
    vcs = _vcs_values(exp.vcs)
    for v in vcs:
        _check_vcs(v, exp.engine, network)
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
                 plain=ENGINES[exp.engine] is ENGINES["one"] and vcs == [1] and exp.source_queue == "all"
                 and exp.vc_buffer == "set")
    for spec in problems:
        packets = estimate_packets(spec if not isinstance(spec, str) else _resolve(spec, exp.base_dir), network)
        for system in systems:
            _check_size(network, packets, "valiant" if system.name.startswith("ugal") else system.name,
                        None if isinstance(system, AdaptiveRouting) else runs)
        if exp.opt is not None:
            check_opt(exp.opt, packets, exp.time_limit)
    return _Plan(network, systems, protocols, _labels(paths), _labels(exp.protocols), problems, names,
                 bandwidths, buffers, runs, vcs)


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


def _vcs_values(value: int | Sequence[int]) -> list[int]:
    """The VC counts of an experiment: one V, or a list to compare (each checked by
    :func:`_check_vcs`)."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise UserError("vcs: give at least one value")
    return values


def _check_vcs(vcs: int, engine: str, network: Network) -> None:
    """Refuse a VC count out of range, or VCs where there are no classes (before anything runs;
    too few for a collection's paths is refused when its run starts, with the count it needs)."""
    if type(vcs) is int and vcs == 1:   # the default: no VC module to load (start-up)
        return
    from universal.engine.vcs import MAX_VCS

    if not isinstance(vcs, int) or isinstance(vcs, bool) or not 1 <= vcs <= MAX_VCS:
        raise UserError(f"vcs must be an integer between 1 and {MAX_VCS} (got {vcs!r})")
    if vcs == 1:
        return
    if engine == "reference":
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
