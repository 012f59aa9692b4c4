"""The cells of an open-loop study: the unit of work that ``--jobs`` hands to worker processes,
that the results file holds one line each and that ``--resume`` skips (SPEC §8, §11).

A load sweep's cell is one run, ``(routing, traffic, priority, offered, seed)``; a saturation
table's cell is one search, ``(routing, traffic, priority, seed)``, with its zero-load run. Cells run in *chunks*: the
runs of a chunk with one priority rule share one array state of the engine (batching independent runs is what makes
:mod:`universal.engine.runs` fast on small networks), and a chunk is one task of a worker.
Every random draw of a run comes from the run's own seeded generator, so a cell's rows are the
same whichever chunk, process or order it ran in: ``--jobs N`` and resumed runs give the rows of
one uninterrupted run, byte for byte.

A results-file line is ``{"cell": {...}, "row": {...}, "pairs": [...]}`` with the ``--json`` row
of the cell and, for a load sweep with pairs, the cell's pair latencies
(:mod:`universal.openloop.lines` checks them before a study resumes).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Callable, Iterator

import numpy as np

import universal.design  # noqa: F401  (installs the designer behind the 2turn / 2turna routings)
from universal.engine.creation import RunSpec
from universal.engine.measure import Measurement, RunResult, latency_summary
from universal.engine.priorities import check_priority
from universal.engine.routes import build_router
from universal.engine.runs import _check_window, simulate_batch
from universal.engine.workload import OfferedTraffic, build_injection
from universal.errors import UserError
from universal.memory import check_link_sizes
from universal.networks import build_network
from universal.openloop.histograms import (check_invariant_routing, check_invariant_traffic, delayed_latency,
                                          latency_histogram, pair_mask, translate_mask, translations_of)
from universal.openloop.saturation import find_saturations, rate_ceiling
from universal.openloop.screen import screened_minimum
from universal.openloop.workload import capacity_rate, offered_traffic
from universal.openloop.worstcase import (WORST_CASE, exact_routings, exact_worst_case, has_exact_worst_case,
                                          perm_traffic_name, worst_case_cells)

__all__ = ["ZERO_LOAD", "CHUNK_RUNS", "analytic_throughput", "prepare", "forget_prepared", "study_cells", "cell_key",
           "chunks", "run_cells", "run_chunk", "random_perm_count", "MAX_RANDOM_PERMS", "MAX_RANDOM_PERM_NODES"]

#: Offered load (fraction of capacity) of the zero-load latency runs of a saturation table.
ZERO_LOAD = 0.02

#: Runs of a load sweep batched in one chunk: the engine's time per run levels off at about 8
#: runs per batch on the 8-ary 2-cube, and a chunk's cells reach the results file together.
CHUNK_RUNS = 16
#: Saturation searches whose rounds share the engine's batches: 8 searches of 8 rates make the
#: batches of about 64 runs at which the engine is fastest (``benchmarks/openloop.py``).
SEARCH_GROUP = 8


def analytic_throughput(network, routing: str, traffic: str) -> Fraction | None:
    """Capacity over the largest channel load of an oblivious torus routing (``universal load``).

    The exact fraction when the analysis forms it (permutations); otherwise the fraction with a
    denominator below 10^6 that equals the analysis's float to 1e-12. None for routings the
    torus analysis does not cover (adaptive routings, path systems).

    Parameters
    ----------
    network : universal.networks.Network
    routing, traffic : str
        Names as ``universal load`` takes them (a ``file=`` already resolved to where it is).

    Returns
    -------
    Fraction or None

    Examples
    --------
    >>> analytic_throughput(build_network("torus:k=8,n=2"), "dor", "transpose")
    Fraction(2, 7)

    References
    ----------
    Towles, Dally & Boyd, "Throughput-centric routing algorithm design", 2003, §2.1.
    """
    from universal.oblivious import ROUTINGS, load_table
    from universal.registry import parse_spec

    if network.terminals is not None:
        return _terminal_throughput(network, routing, traffic)
    if network.kind != "torus" or parse_spec(routing).name not in ROUTINGS or network.params["k"] < 3:
        return None
    k, n = network.params["k"], network.params["n"]
    row = load_table(k, n, [routing], [traffic], np.random.default_rng(0))[0]
    if row.max_load_exact is not None:
        from universal.paths.torus.geometry import Torus

        return Torus(k, n).capacity_load / row.max_load_exact
    guess = Fraction(row.throughput).limit_denominator(10**6)
    return guess if abs(float(guess) - row.throughput) <= 1e-12 else None


def _terminal_throughput(network, routing: str, traffic: str) -> Fraction | None:
    """The exact throughput (packets per terminal per step) of an oblivious routing on a network
    with terminals, from the all-pairs analysis; None for adaptive routings, patterns without an
    exact matrix and networks beyond the analysis's size."""
    from universal.oblivious import graphs
    from universal.paths import PATH_SYSTEMS
    from universal.registry import parse_spec

    if parse_spec(routing).name not in PATH_SYSTEMS or parse_spec(traffic).name == "random-perms":
        return None
    try:
        pl = graphs.graph_pair_loads(network, routing)
    except UserError:
        return None                         # beyond the all-pairs analysis: no analytic column
    if not pl.exact:
        return None
    row = graphs.graph_load_row(pl, graphs.graph_traffic(network, traffic), graphs.graph_capacity(network),
                                graphs.min_mean_length(network), np.random.default_rng(0))
    return None if row.max_load_exact is None else 1 / row.max_load_exact


@dataclass
class Prepared:
    """What every cell of a study uses, built once per process (:func:`prepare`)."""

    network: object
    injection: object
    capacity: float | None           # packets per node per step at offered 1.0 (units = capacity)
    scale: float                     # the capacity, or 1 with units = packets
    traffics: dict
    routers: dict
    exact: dict                      # (routing, traffic) -> Fraction or None
    pairs: list = field(default_factory=list)
    #: ``random-perms:M`` traffics: name -> M; their permutations and exact values, drawn when used
    random_perms: dict = field(default_factory=dict)
    perms: dict = field(default_factory=dict)          # (traffic, seed) -> int32 array (M, N)
    perm_exact: dict = field(default_factory=dict)     # (routing, traffic, seed) -> list of Fraction or None
    resolved: dict = field(default_factory=dict)       # routing -> its name with files resolved
    #: The exact analysis's Θ (fraction of capacity) times this is in the study's units; None with
    #: bounded buffers (the analysis is of the ideal network)
    unit_factor: Fraction | None = None
    #: With ``pool_translates``: the network's translations (a pair's row pools all its translates)
    translations: object = None
    #: With ``worst_case``: routing -> (its exact worst-case permutation as traffic, the ideal
    #: network's Θ of it as a fraction of capacity and in the study's units)
    #: (:mod:`universal.openloop.worstcase`)
    worst: dict = field(default_factory=dict)


#: The study last prepared in this process. Worker processes started by fork inherit it, so
#: they build nothing again; elsewhere a worker builds it for its first chunk.
_PREPARED: dict[str, Prepared] = {}


def prepare(study) -> Prepared:
    """Check the study's names and sizes and build its network, traffics and routers (cached).

    Parameters
    ----------
    study : universal.openloop.study.OpenLoopStudy

    Returns
    -------
    Prepared

    Raises
    ------
    UserError
        For anything the study cannot run: before any cell runs and any file is touched.

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> p = prepare(OpenLoopStudy("torus:k=8,n=1", ["dor"], ["tornado"], loads=[0.2]))
    >>> p.network.num_nodes, p.exact[("dor", "tornado")]
    (8, Fraction(1, 3))
    """
    key = json.dumps([study.settings(), _files_read(study)])
    if key not in _PREPARED:
        _PREPARED.clear()
        _PREPARED[key] = _build(study)
    return _PREPARED[key]


def forget_prepared() -> None:
    """Drop the cached :class:`Prepared` (the end of a run: the files it read may change).

    Examples
    --------
    >>> forget_prepared()
    >>> len(_PREPARED)
    0
    """
    _PREPARED.clear()


def _files_read(study) -> list:
    """The files the study's names point to, as they are now (a changed file is another study)."""
    import os

    from universal.registry import named_files

    stamps = []
    for path in named_files([study.network, *study.routings, *study.traffics], study.base_dir):
        try:
            info = os.stat(path)
            stamps.append([os.path.realpath(path), info.st_mtime_ns, info.st_size])
        except OSError:
            stamps.append([str(path), None, None])
    return [str(study.base_dir), os.getcwd(), stamps]


def check_distinct_loads(loads) -> None:
    """Refuse an offered load listed twice: each load is one cell of a results file, and a file
    holding a cell twice is one that ``--resume`` must refuse.

    Examples
    --------
    >>> check_distinct_loads([0.2, 0.4])
    >>> check_distinct_loads([0.2, 0.4, 0.2])
    Traceback (most recent call last):
    ...
    universal.errors.UserError: offered load 0.2 is listed twice (each load is one cell of the results); give it once
    """
    _check_distinct(loads, lambda load: f"offered load {load:g}", "each load is one cell of the results")


def _check_distinct(values, name, why: str = "each one makes its own cells of the results") -> None:
    """Refuse a value listed twice, named by ``name(value)``."""
    seen = set()
    for value in values:
        if value in seen:
            raise UserError(f"{name(value)} is listed twice ({why}); give it once")
        seen.add(value)



def _build(study) -> Prepared:
    if study.units not in ("capacity", "packets"):
        raise UserError(f"--units must be capacity or packets (got {study.units!r})")
    if not study.priorities:
        raise UserError("give at least one priority")
    for rule in study.priorities:
        check_priority(rule)
    if (study.loads is None) == (not study.saturation):
        raise UserError("give offered loads (--loads a:b:step) or ask for --saturation, one of the two")
    if study.loads is not None:
        check_distinct_loads(study.loads)
    _check_distinct(study.routings, lambda r: f"routing {r!r}")   # each names cells of the results file
    _check_distinct(study.traffics, lambda t: f"traffic {t!r}")
    _check_distinct(study.priorities, lambda t: f"priority {t!r}")
    from universal.load_analysis import _resolve_traffic
    from universal.registry import with_file_resolved

    net = build_network(study.network, study.base_dir)
    if net.leveled:
        raise UserError(f"open-loop runs need traffic between all nodes; on {net.name} packets go from inputs "
                        "to outputs only (use a mesh, torus, hypercube or any graph)")
    injection = build_injection(study.injection)
    pairs = [_parse_pair(net, p) for p in study.pairs]
    if pairs and study.loads is None:
        raise UserError("pair latencies come from a load sweep (loads), not from a saturation search")
    cap = float(capacity_rate(net, study.bandwidth)) if study.units == "capacity" else None
    random_perms = _random_perm_traffics(study, net)
    random_perms.update(_worst_case_perms(study, net))
    traffics = {t: offered_traffic(net, _resolve_traffic(t, study.base_dir)) for t in study.traffics
                if t not in random_perms}
    resolved = {r: with_file_resolved(r, study.base_dir) for r in study.routings}  # lp:file= in a scenario
    routers = {r: build_router(resolved[r], net) for r in study.routings}
    Measurement(window=study.window).check()
    prepared = Prepared(net, injection, cap, cap if cap is not None else 1.0, traffics, routers, {}, pairs,
                        random_perms=random_perms, resolved=resolved)
    for t in random_perms:   # the checks below see the first permutation of the first seed
        if t in study.traffics:
            traffics[t] = permutation_traffic(prepared, t, study.seeds[0], 0)
    prepared.worst = _worst_case_traffics(study, net, resolved)
    _check_pairs_send(study, net, pairs, traffics)
    if getattr(study, "pool_translates", False):
        prepared.translations = _check_translates(study, net, traffics, routers)
    _check_runs(study, prepared)
    if study.buffer is None:  # the analysis is of the ideal network with unbounded buffers
        prepared.exact = {(r, t): None if t in random_perms else
                          analytic_throughput(net, resolved[r], _resolve_traffic(t, study.base_dir))
                          for r in study.routings for t in study.traffics}
        prepared.exact.update({(r, WORST_CASE): theta for r, (_, theta, _) in prepared.worst.items()})
        prepared.unit_factor = Fraction(1)
        if study.units == "packets" and (any(v is not None for v in prepared.exact.values())
                                         or random_perms and net.kind == "torus"):
            per_node = capacity_rate(net, study.bandwidth)   # the same value, in packets per node per step
            prepared.unit_factor = per_node
            prepared.exact = {k: None if v is None else v * per_node for k, v in prepared.exact.items()}
    return prepared


def _worst_case_perms(study, net) -> dict[str, int]:
    """The ``random-perms:M`` traffic of ``worst_case`` (for the routings without an exact worst
    case; :mod:`universal.openloop.worstcase`), checked as a listed one is."""
    if not getattr(study, "worst_case", False) or not study.random_perms:
        return {}
    if study.random_perms > MAX_RANDOM_PERMS:
        raise UserError(f"at most {MAX_RANDOM_PERMS:,} random permutations for the worst case "
                        f"(each one is a saturation search; got {study.random_perms:,})")
    if len(net.endpoints) > MAX_RANDOM_PERM_NODES:
        raise UserError(f"random permutations for the worst case on {net.name} ({len(net.endpoints):,} nodes): "
                        f"open-loop random permutations run on networks of at most {MAX_RANDOM_PERM_NODES:,} nodes")
    return {perm_traffic_name(study.random_perms): study.random_perms}


def _worst_case_traffics(study, net, resolved: dict) -> dict:
    """Each routing's exact worst-case permutation (as traffic) and the ideal network's Θ of it (a
    fraction of capacity, and in the study's units), for the routings that have one (``worst_case``)."""
    if not getattr(study, "worst_case", False):
        return {}
    unit = Fraction(1) if study.units == "capacity" else capacity_rate(net, study.bandwidth)
    out = {}
    for r in study.routings:
        if has_exact_worst_case(net, resolved[r]):
            perm, theta = exact_worst_case(net, resolved[r])
            matrix = np.zeros((len(perm), len(perm)))
            matrix[np.arange(len(perm)), perm] = 1.0
            out[r] = (OfferedTraffic(WORST_CASE, np.ones(len(perm)), perm, None, matrix), theta, theta * unit)
    return out


#: Most permutations of one ``random-perms:M`` traffic in an open-loop study (GOAL's Figure 9 has 1,000).
MAX_RANDOM_PERMS = 10_000
#: Largest network for ``random-perms:M`` in an open-loop study (each permutation's search holds
#: an N x N traffic matrix while it runs).
MAX_RANDOM_PERM_NODES = 1024


def random_perm_count(traffic: str) -> int:
    """M of a ``random-perms:M`` traffic name (its default 1000 without a count), 0 for any other.

    Parameters
    ----------
    traffic : str
        A traffic name as the study lists it.

    Returns
    -------
    int

    Raises
    ------
    UserError
        A ``random-perms`` name with a bad count, or one above :data:`MAX_RANDOM_PERMS`.

    Examples
    --------
    >>> random_perm_count("random-perms:20"), random_perm_count("random-perms"), random_perm_count("tornado")
    (20, 1000, 0)
    """
    from universal.oblivious.traffic import Grid, make_traffic
    from universal.registry import parse_spec

    try:
        name = parse_spec(traffic).name
    except UserError:
        return 0                 # reported where the traffic is built
    if name != "random-perms":
        return 0
    count = make_traffic(Grid(2, 1, "any"), traffic).count
    if count > MAX_RANDOM_PERMS:
        raise UserError(f"{traffic}: at most {MAX_RANDOM_PERMS:,} permutations in an open-loop study "
                        f"(each one is a saturation search; got {count:,})")
    return count


def _random_perm_traffics(study, net) -> dict[str, int]:
    """The study's ``random-perms:M`` traffics and their M, checked (saturation only, small networks)."""
    found = {t: m for t in study.traffics if (m := random_perm_count(t))}
    if not found:
        return found
    name = next(iter(found))
    if study.loads is not None:
        raise UserError(f"{name} gives each permutation's saturation throughput: use it with --saturation "
                        "(a load sweep takes one permutation:file=P)")
    nodes = len(net.endpoints)
    if nodes > MAX_RANDOM_PERM_NODES:
        raise UserError(f"{name} on {net.name} ({nodes:,} nodes): open-loop random permutations run on networks "
                        f"of at most {MAX_RANDOM_PERM_NODES:,} nodes")
    return found


def permutations_of(p: Prepared, traffic: str, seed: int) -> np.ndarray:
    """The M permutations of ``random-perms:M`` for ``seed``: permutation i is the i-th
    ``permutation(N)`` of ``numpy.random.default_rng(seed)``, the draws ``universal load
    --traffic random-perms:M --seed S`` makes for one routing (so both analyse the same ones).

    Parameters
    ----------
    p : Prepared
    traffic : str
    seed : int

    Returns
    -------
    ndarray of int32, shape (M, N)

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> p = prepare(OpenLoopStudy("torus:k=4,n=1", ["dor"], ["random-perms:2"], saturation=True))
    >>> permutations_of(p, "random-perms:2", 0).tolist()
    [[2, 0, 1, 3], [3, 2, 1, 0]]
    """
    key = (traffic, seed)
    if key not in p.perms:
        rng = np.random.default_rng(seed)
        N = len(p.network.endpoints)
        p.perms[key] = np.stack([rng.permutation(N) for _ in range(p.random_perms[traffic])]).astype(np.int32)
    return p.perms[key]


def permutation_traffic(p: Prepared, traffic: str, seed: int, index: int) -> OfferedTraffic:
    """Permutation ``index`` of ``random-perms:M`` for ``seed`` as open-loop traffic."""
    perm = permutations_of(p, traffic, seed)[index].astype(np.int64)
    N = len(perm)
    matrix = np.zeros((N, N))
    matrix[np.arange(N), perm] = 1.0
    return OfferedTraffic(f"{traffic}#{index}", np.ones(N), perm, None, matrix)


def permutation_exact(p: Prepared, routing: str, traffic: str, seed: int) -> list | None:
    """Exact Θ (capacity over the largest channel load, :mod:`universal.oblivious`) of each
    permutation of ``random-perms:M`` for ``seed``, in the study's units; None for routings the
    torus analysis does not cover (as :func:`analytic_throughput`)."""
    key = (routing, traffic, seed)
    if key not in p.perm_exact:
        p.perm_exact[key] = _permutation_exact(p, routing, traffic, seed)
    return p.perm_exact[key]


def _permutation_exact(p: Prepared, routing: str, traffic: str, seed: int) -> list | None:
    from universal.oblivious import ROUTINGS
    from universal.oblivious.throughput import exact_max_load
    from universal.oblivious.traffic import Traffic
    from universal.paths.torus.geometry import Torus
    from universal.registry import parse_spec

    net = p.network
    name = p.resolved.get(routing, routing)
    if (p.unit_factor is None or net.terminals is not None or net.kind != "torus" or parse_spec(name).name not in ROUTINGS
            or net.params["k"] < 3):
        return None
    from universal.oblivious.loads import pair_loads

    torus = Torus(net.params["k"], net.params["n"])
    pl = pair_loads(name, torus)
    return [torus.capacity_load / exact_max_load(pl, Traffic(f"{traffic}#{i}", perm=perm.astype(np.int64)))
            * p.unit_factor for i, perm in enumerate(permutations_of(p, traffic, seed))]


def _check_spec(spec: RunSpec, measurement: Measurement) -> None:
    """The checks :func:`universal.engine.runs.simulate_batch` makes of each run at its start."""
    spec.check()
    _check_window(spec, measurement)


#: A study estimated to take longer than this (seconds) is refused, as long load analyses are.
MAX_STUDY_SECONDS = 3600
#: Floor on the engine's time per step of one batch of runs (about 40 µs measured on this project's
#: 2-core machine; the floor sits well below so that only studies clearly too long are refused).
SECONDS_PER_STEP = 1e-5
#: Runs that share the engine's steps in one batch, at most (:func:`chunks`).
RUNS_PER_BATCH = 64


def estimate_seconds(study, scale: float = 1.0) -> tuple[float, int]:
    """A lower bound on a load sweep's engine time, and the steps of its longest run.

    Every run lasts at least its shortest warm-up and its measurement window (longer when the
    window doubles or the network drains); a batch runs as long as its longest run, and even a
    full batch costs :data:`SECONDS_PER_STEP` per step. A saturation search counts as the one
    run it makes at least (its zero-load run).

    Parameters
    ----------
    study : OpenLoopStudy
    scale : float
        Packets per node per step of one unit of the study's loads.

    Returns
    -------
    (seconds, steps)

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> estimate_seconds(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.1], window=10**9))
    (10000.003, 1000000300)
    """
    if study.loads is None:
        m = Measurement(window=study.window or 3000)
        steps = [m.warmup_min + m.window_for(ZERO_LOAD * scale)]
    else:
        m = Measurement(window=study.window)
        steps = [m.warmup_min + m.window_for(load * scale) for load in study.loads]
    # a search of one of M random permutations makes at least the 8 runs of its first round
    per_traffic = sum(8 * m if (m := random_perm_count(t)) else 1 for t in study.traffics)
    runs = len(study.routings) * per_traffic * len(study.priorities) * len(study.seeds)
    longest = max(steps)
    seconds = max(longest, runs * sum(steps) / RUNS_PER_BATCH) * SECONDS_PER_STEP
    return seconds, longest


def _big(x: float) -> str:
    """A count for a message: grouped digits, or three significant ones when astronomical."""
    return f"{x:,.1f}".removesuffix(".0") if x < 1e9 else f"{float(x):.2g}"


def _check_runs(study, p: Prepared) -> None:
    """What the engine and the search would refuse at their start, refused now, before any run."""
    if study.bandwidth < 1:
        raise UserError("bandwidth B must be at least 1")
    if study.buffer is not None and study.buffer < 1:
        raise UserError("buffer size b must be at least 1 (or unbounded)")
    check_link_sizes(study.bandwidth, study.buffer)
    from universal.engine.vcs import plan_vcs

    for router in p.routers.values():       # a routing without the classes it needs is refused now
        plan_vcs(router, study.vcs, study.buffer)
    from universal.engine.source_queue import check_source_queue

    check_source_queue(study.source_queue)
    from universal.engine.fifo_vcs import check_vc_buffer

    for routing in study.routings:
        check_vc_buffer(study.vc_buffer, study.buffer, study.bandwidth, routing)
    seconds, longest = estimate_seconds(study, p.scale)
    if seconds > MAX_STUDY_SECONDS:
        hours = seconds / 3600
        raise UserError(f"this study would take at least {_big(hours)} hours (its longest run has {_big(longest)} "
                        f"steps of warm-up and measurement window), more than this tool runs (one hour): "
                        f"give a shorter --window, higher loads or fewer of them")
    for r in study.routings:
        for t in study.traffics:
            template = RunSpec(p.traffics[t], p.routers[r], p.injection, 1.0, priority=study.priorities[0])
            if study.loads is not None:
                for load in study.loads:
                    _check_injection_limit(study, p, t, load)
                    _check_spec(replace(template, rate=load * p.scale), Measurement(window=study.window))
            else:
                _check_spec(replace(template, rate=ZERO_LOAD * p.scale),
                            Measurement(window=study.window or 3000, drain=True))
                rate_ceiling(template, study.bandwidth)
    if study.saturation and not 0 < study.tolerance < 1:
        raise UserError(f"the saturation search needs 0 < tolerance < 1 (got {study.tolerance:g})")


def _check_injection_limit(study, p: Prepared, traffic: str, load: float) -> None:
    """Refuse an offered load that bernoulli or on-off sources cannot create, in the user's units.

    Both create at most one packet per node per step (on-off strictly fewer); a load given as a
    fraction of capacity can ask for more (0.6 of capacity on torus:k=4,n=2 is 1.2 packets).
    """
    name = p.injection.name
    if name == "poisson":
        return
    busiest = float(p.traffics[traffic].rowsum.max())   # the row of the node that sends most
    packets = load * p.scale * busiest
    if packets <= 1 + 1e-12 and not (name == "on-off" and packets >= 1 - 1e-12):
        return
    if study.units == "capacity":
        asked = (f"offered load {load:g} (of capacity) is {packets:.4g} packet{'' if packets == 1 else 's'} "
                 f"per node per step on {p.network.name}")
    else:
        asked = f"offered load {load:g} packets per node per step"
    fix = f"a load {'below' if name == 'on-off' else 'of at most'} {1 / (p.scale * busiest):.4g}"
    if busiest != 1:
        asked += f" at the busiest source of {traffic} (its row sums to {busiest:.4g})"
    creates = ("creates fewer than one packet per node per step" if name == "on-off"
               else "creates at most one packet per node per step")
    raise UserError(f"{asked}; {name} injection {creates} (use --injection poisson, or {fix})")


def _check_pairs_send(study, net, pairs: list[tuple[int, int]], traffics: dict) -> None:
    """Refuse a pair whose source never sends to its destination under one of the traffics: it
    would have no packets, so no latency or histogram to measure."""
    for text, (s, d) in zip(study.pairs, pairs):
        for name, tr in traffics.items():
            size = len(tr.rowsum)
            if s >= size or d >= size:
                raise UserError(f"pair {text}: traffic on {net.name} goes between its {size:,} terminals, and "
                                f"node {net.label_of(s if s >= size else d)} is a router")
            if not tr.matrix[s, d] > 0:
                raise UserError(f"pair {text} sends nothing under {name} (node {net.label_of(s)} never sends to "
                                f"{net.label_of(d)}): there is no latency to measure; name a pair the traffic uses")


def _check_translates(study, net, traffics: dict, routers: dict):
    """The network's translations, once the network, every traffic and every routing of the study
    are checked to treat the translates of a pair alike (:mod:`universal.openloop.histograms`)."""
    if study.loads is None:
        raise UserError("pooling translates pools the latencies of pairs in a load sweep (loads), not a saturation "
                        "search")
    if not study.pairs:
        raise UserError("pooling translates pools the translates of named pairs: name one (--pair SOURCE DEST, "
                        "or pairs in a scenario)")
    group = translations_of(net)
    for name, tr in traffics.items():
        check_invariant_traffic(group, tr.matrix, name, net.label_of)
    for router in routers.values():
        check_invariant_routing(group, router, net.label_of)
    return group


def _parse_pair(net, text: str) -> tuple[int, int]:
    """``"0,0->1,3"``: a source and a destination by their labels."""
    if "->" not in text:
        raise UserError(f"pair {text!r}: expected SOURCE->DESTINATION, e.g. 0,0->1,3")
    a, b = text.split("->", 1)
    return net.node(a), net.node(b)


def study_cells(study) -> list[dict]:
    """Every cell of the study, in the order of its rows (routing, traffic, priority, offered load, seed).

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study_cells(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform", "tornado"], saturation=True))[0]
    {'routing': 'dor', 'traffic': 'uniform', 'priority': 'age', 'seed': 0}
    >>> [c["priority"] for c in study_cells(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], saturation=True,
    ...                                                   priority=["age", "growing-rank"]))]
    ['age', 'growing-rank']
    """
    if study.loads is not None:
        return [{"routing": r, "traffic": t, "priority": q, "offered": load, "seed": s} for r in study.routings
                for t in study.traffics for q in study.priorities for load in study.loads for s in study.seeds]
    cells = [{"routing": r, "traffic": t, "priority": q, "seed": s, **({"permutation": i} if m else {})}
             for r in study.routings for t in study.traffics for q in study.priorities for s in study.seeds
             for m in [random_perm_count(t)] for i in range(max(m, 1))]
    extra = worst_case_cells(study, exact_routings(study))
    if not extra:
        return cells
    order = {r: i for i, r in enumerate(study.routings)}   # each routing's worst-case cells after its others
    return sorted(cells + extra, key=lambda c: order[c["routing"]])


def cell_key(cell: dict) -> str:
    """A cell as a dictionary key (its fields sorted, so that the order they came in does not matter).

    Examples
    --------
    >>> cell_key({"seed": 0, "routing": "dor"})
    '{"routing": "dor", "seed": 0}'
    """
    return json.dumps(cell, sort_keys=True)


def chunks(study, pending: list[dict], jobs: int) -> list[list[dict]]:
    """The pending cells grouped into tasks.

    A load sweep batches up to :data:`CHUNK_RUNS` runs per chunk, and with ``jobs > 1`` makes at
    least two chunks per worker; with the cells ordered by offered load, chunk i takes every n-th
    from the i-th, so that low and high loads (quick and slow runs) mix and the workers finish
    together. A saturation table runs in this process as one chunk (the zero-load runs batched,
    then the searches in groups of :data:`SEARCH_GROUP` whose rounds run together, each group
    handed back as it finishes) and in workers one group per task, groups made smaller so that
    every worker gets at least two. The runs of a batch share one priority rule, so the cells of
    each priority are chunked apart.

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study = OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.1, 0.2, 0.3, 0.4, 0.5])
    >>> [[c["offered"] for c in chunk] for chunk in chunks(study, study_cells(study), jobs=2)]
    [[0.1, 0.5], [0.2], [0.3], [0.4]]
    >>> [[c["offered"] for c in chunk] for chunk in chunks(study, study_cells(study)[::-1], jobs=1)]
    [[0.1, 0.2, 0.3, 0.4, 0.5]]
    """
    if not pending:
        return []
    rules = list(dict.fromkeys(c["priority"] for c in pending))
    if len(rules) > 1:      # each rule's cells apart, the workers shared out among the rules
        share = max(1, math.ceil(jobs / len(rules)))
        return [chunk for rule in rules
                for chunk in chunks(study, [c for c in pending if c["priority"] == rule], share if jobs > 1 else 1)]
    if study.loads is None:
        if jobs == 1:
            return [pending]
        # at least two groups per worker where the searches allow: every worker busy, and the
        # progress bar moves as each group comes back
        size = max(1, min(SEARCH_GROUP, math.ceil(len(pending) / (2 * jobs))))
        return [pending[i:i + size] for i in range(0, len(pending), size)]
    count = math.ceil(len(pending) / CHUNK_RUNS)
    if jobs > 1:
        count = max(count, min(len(pending), 2 * jobs))
    by_load = sorted(pending, key=lambda c: c["offered"])  # stable: the study's order within a load
    return [by_load[i::count] for i in range(count)]


def run_cells(study, cells: list[dict], progress: Callable[[int], None] | None = None) -> Iterator[list[dict]]:
    """Run ``cells`` (one chunk) and yield their results-file lines as they finish, in groups.

    Parameters
    ----------
    study : universal.openloop.study.OpenLoopStudy
    cells : list of dict
        Cells of the study (:func:`study_cells`).
    progress : callable, optional
        Called with 1 whenever a run of a load sweep finishes (before its chunk does).

    Yields
    ------
    list of dict
        The lines finished together.

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study = OpenLoopStudy("torus:k=8,n=1", ["dor"], ["tornado"], loads=[0.2, 0.25], window=300)
    >>> [[line["row"]["hops_mean"] for line in group] for group in run_cells(study, study_cells(study))]
    [[3.0, 3.0]]
    """
    p = prepare(study)

    def spec(c: dict, rate: float) -> RunSpec:
        traffic = (permutation_traffic(p, c["traffic"], c["seed"], c["permutation"]) if "permutation" in c
                   else p.worst[c["routing"]][0] if c["traffic"] == WORST_CASE else p.traffics[c["traffic"]])
        return RunSpec(traffic, p.routers[c["routing"]], p.injection, rate * p.scale,
                       seed=c["seed"], priority=c["priority"])

    rules = list(dict.fromkeys(c["priority"] for c in cells))
    if len(rules) > 1:      # the runs of a batch share one priority rule
        for rule in rules:
            yield from run_cells(study, [c for c in cells if c["priority"] == rule], progress)
        return
    if study.loads is not None:
        results = simulate_batch([spec(c, c["offered"]) for c in cells], bandwidth=study.bandwidth,
                                 buffer=study.buffer, measurement=Measurement(window=study.window), progress=progress,
                                 vcs=study.vcs, source_queue=study.source_queue,
                                 vc_buffer=study.vc_buffer)
        yield [_load_line(study, p, c, res) for c, res in zip(cells, results)]
        return
    for c in cells:     # a screened worst case: one cell for M permutations (screen.py)
        if "screen" in c:
            yield [_screened_line(study, p, c, spec)]
    cells = [c for c in cells if "screen" not in c]
    # the zero-load latency of each (routing, traffic); the permutations of random-perms:M have
    # only their saturation throughput (GOAL's Figure 9)
    named = [c for c in cells if "permutation" not in c]
    zero = simulate_batch([spec(c, ZERO_LOAD) for c in named], bandwidth=study.bandwidth, buffer=study.buffer,
                          measurement=Measurement(window=study.window or 3000, drain=True),
                          vcs=study.vcs, source_queue=study.source_queue,
                                 vc_buffer=study.vc_buffer) if named else []
    zero_of = {cell_key(c): z for c, z in zip(named, zero)}
    # Searches run in groups whose rounds share the engine's batches (find_saturations); each
    # group's lines are handed back when it ends. Oblivious and adaptive searches are grouped
    # apart (an adaptive run makes its whole batch carry the adaptive state).
    in_order = sorted(cells, key=lambda c: p.routers[c["routing"]].adaptive)
    for at in range(0, len(in_order), SEARCH_GROUP):
        group = in_order[at:at + SEARCH_GROUP]
        sats = find_saturations([spec(c, 1.0) for c in group], tolerance=study.tolerance,
                                bandwidth=study.bandwidth, buffer=study.buffer, vcs=study.vcs,
                                source_queue=study.source_queue, measurement=search_measurement(study),
                                vc_buffer=study.vc_buffer, starts=[_search_start(study, p, c) for c in group])
        yield [_saturation_line(study, p, c, sat, zero_of.get(cell_key(c))) for c, sat in zip(group, sats)]


def _screened_line(study, p: Prepared, c: dict, spec: Callable) -> dict:
    """The results-file line of a screened worst case (:mod:`universal.openloop.screen`): the
    lowest Θ over the cell's M permutations, the permutation that gave it, every permutation
    searched in full with its Θ, and the screening passes (rate, permutations run, unstable)."""
    count = p.random_perms[c["traffic"]]
    specs = [spec({**c, "permutation": i}, 1.0) for i in range(count)]
    # a pilot of at most 8 (the scenario's first 8 of 1,000), fewer for small M so that some are screened
    got = screened_minimum(specs, pilot=min(8, max(1, count // 8)), tolerance=study.tolerance,
                           bandwidth=study.bandwidth, buffer=study.buffer, vcs=study.vcs,
                           source_queue=study.source_queue, measurement=search_measurement(study),
                           vc_buffer=study.vc_buffer)
    low = got.searched[got.index]
    row = {**_base(c), "saturation": got.theta / p.scale, "upper": low.upper / p.scale, "limited": low.limited,
           "analytic": None, "analytic_value": None, "ratio": None, "zero_load_latency": None, "hops_mean": None,
           "runs": got.runs, "screened": count, "screen_permutation": got.index,
           "searched": {str(i): s.theta / p.scale for i, s in sorted(got.searched.items())},
           "screens": [[s.rate / p.scale, s.tested, s.unstable] for s in got.steps]}
    return {"cell": c, "row": row, "pairs": []}


def search_measurement(study) -> Measurement:
    """How a saturation table's searches measure their runs: BookSim's latency threshold of 500
    steps, no drain and no latencies kept (the verdicts are all a search needs)."""
    return Measurement(window=study.window, latency_limit=500, drain=False, overload="stop", latencies=False)


def _search_start(study, p: Prepared, c: dict) -> float | None:
    """Where the search of cell ``c`` starts (packets per node per step): the exact Θ of an
    oblivious routing where the analysis has one for the model simulated (unbounded buffers,
    SPEC §11's source queue), else None (:func:`universal.openloop.saturation.find_saturations`)."""
    if study.buffer is not None or study.source_queue != "all":
        return None
    if "permutation" in c:
        values = permutation_exact(p, c["routing"], c["traffic"], c["seed"])
        exact = None if values is None else values[c["permutation"]]
    else:
        exact = p.exact.get((c["routing"], c["traffic"]))
    return None if exact is None else float(exact) * p.scale


def run_chunk(study, cells: list[dict]) -> list[dict]:
    """:func:`run_cells` as one call (a top-level function: what a worker process runs).

    Parameters
    ----------
    study : universal.openloop.study.OpenLoopStudy
    cells : list of dict

    Returns
    -------
    list of dict
        The results-file lines of ``cells``, in their order.

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study = OpenLoopStudy("torus:k=8,n=1", ["dor"], ["tornado"], loads=[0.2], window=300)
    >>> [sorted(line) for line in run_chunk(study, study_cells(study))]
    [['cell', 'pairs', 'row']]
    """
    return [line for group in run_cells(study, cells) for line in group]


def _base(c: dict) -> dict:
    return {"routing": c["routing"], "traffic": c["traffic"], "priority": c["priority"], "seed": c["seed"],
            **({"permutation": c["permutation"]} if "permutation" in c else {}),
            **({"screen": True} if "screen" in c else {})}


def _load_line(study, p: Prepared, c: dict, res: RunResult) -> dict:
    def sc(x):
        return None if x is None else x / p.scale

    delay = getattr(study, "router_delay", 0)
    histogram = getattr(study, "histogram", False)
    packets = res.labelled_packets
    latency = None if packets is None else delayed_latency(packets[2], packets[3], delay)
    summary = {k: getattr(res, k) for k in ("latency_mean", "latency_p50", "latency_p99", "latency_max",
                                            "hops_mean")}
    if delay and latency is not None:        # every latency statistic of the delayed latencies
        summary = latency_summary(latency, packets[3])
    value = p.exact.get((c["routing"], c["traffic"]))
    row = {**_base(c), "offered": c["offered"], "accepted": sc(res.accepted), "accepted_min": sc(res.accepted_min),
           **summary, "stable": res.stable, "status": res.status,
           "analytic_value": None if value is None else float(value)}
    if histogram:
        row["histogram"] = None if latency is None else latency_histogram(latency)
    group = p.translations
    pairs = []
    for text, (s, d) in zip(study.pairs, p.pairs):
        mask = None if latency is None else (pair_mask(packets, s, d) if group is None
                                             else translate_mask(packets, group, s, d))
        got = res.pair_latency(s, d) if group is None else _pooled_latency(latency, packets, mask)
        if got is not None and delay and group is None:
            got = (got[0] + delay * got[1], got[1], got[2])
        pair = {**_base(c), "offered": c["offered"], "pair": text,
                **({} if group is None else {"translates": group.size}),
                "latency_mean": got[0] if got else None, "hops_mean": got[1] if got else None,
                "packets": got[2] if got else 0}
        if histogram:
            pair["histogram"] = None if latency is None else latency_histogram(latency[mask])
        pairs.append(pair)
    return {"cell": c, "row": row, "pairs": pairs}


def _pooled_latency(latency, packets, mask) -> tuple[float, float, int] | None:
    """Mean latency (router delay included), mean hops and count of the packets of ``mask``, as
    :meth:`RunResult.pair_latency` gives them for one pair (None without packets)."""
    if latency is None or not mask.any():
        return None
    return float(latency[mask].mean()), float(np.asarray(packets[3])[mask].mean()), int(mask.sum())


def _saturation_line(study, p: Prepared, c: dict, sat, z: RunResult | None) -> dict:
    theta = sat.theta / p.scale
    if "permutation" in c:
        values = permutation_exact(p, c["routing"], c["traffic"], c["seed"])
        exact = None if values is None else values[c["permutation"]]
    else:
        exact = p.exact.get((c["routing"], c["traffic"]))
    delay = getattr(study, "router_delay", 0)
    zero = None if z is None or z.latency_mean is None else z.latency_mean + delay * z.hops_mean
    row = {**_base(c), "saturation": theta, "upper": sat.upper / p.scale, "limited": sat.limited,
           "analytic": None if exact is None else str(exact),
           "analytic_value": None if exact is None else float(exact),
           "ratio": None if exact is None or exact == 0 else theta / float(exact),
           "zero_load_latency": zero, "hops_mean": None if z is None else z.hops_mean, "runs": len(sat.runs)}
    if c["traffic"] == WORST_CASE:    # the ideal network's Θ of it, with bounded buffers too
        row["worst_case_exact"] = float(p.worst[c["routing"]][2])
    return {"cell": c, "row": row, "pairs": []}
