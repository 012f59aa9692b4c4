"""What every cell of an open-loop study uses, built once per process: the network, traffics,
routers and exact analytic values of the study (:class:`Prepared`), checked before any cell runs.

Split from :mod:`universal.openloop.cells`, which imports these back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

import universal.design  # noqa: F401  (installs the designer behind the 2turn / 2turna routings)
from universal.engine.measure import Measurement
from universal.engine.priorities import check_priority
from universal.engine.routes import build_router
from universal.engine.workload import build_injection
from universal.errors import UserError
from universal.networks import build_network
from universal.openloop.cells_checks import (_check_distinct, _check_pairs_send, _check_runs, _check_translates,
                                             _parse_pair, check_distinct_loads)
from universal.openloop.cells_permutations import (_random_perm_traffics, _worst_case_perms, _worst_case_traffics,
                                                   permutation_traffic)
from universal.openloop.workload import capacity_rate, offered_traffic
from universal.openloop.worstcase import WORST_CASE


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
