"""A batch as a run of the open-loop engine: the :class:`~universal.engine.creation.RunSpec` of
packets all created in step 0, routed adaptively (:func:`batch_spec`) or on paths fixed in
advance with the survey's ranks (:func:`fixed_paths_spec`), and the engine's contention rule for a
survey protocol (:func:`rule_of`). :mod:`universal.engine.batch` runs them and exports these names.

The protocols are those of Meyer auf der Heide & Scheideler, "Communication in Parallel
Systems" (1996), §4.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from universal.paths import PathCollection

__all__ = ["batch_spec", "fixed_paths_spec", "rule_of"]

def batch_spec(router, sources: np.ndarray, dests: np.ndarray, priority: str, *, seed=0, ranks: tuple | None = None):
    """The open-loop engine's run of a batch: the packets ``sources[i] -> dests[i]``, all created in
    step 0, routed by ``router`` with the contention rule ``priority``.

    Parameters
    ----------
    router : universal.engine.routes.Router
    sources, dests : array of int
    priority : str
        An open-loop priority (:data:`universal.engine.priorities.PRIORITIES`).
    seed : int or SeedSequence
        The run's generator.
    ranks : tuple, optional
        ``(ranks, K, D)``: the survey's ranks of the packets (see
        :class:`~universal.engine.workload.Injection`).

    Returns
    -------
    universal.engine.creation.RunSpec

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> net = build_network("torus:k=4,n=1")
    >>> batch_spec(build_router("dor", net), np.arange(4), np.arange(4)[::-1], "fifo").injection.name
    'batch'
    """
    from universal.engine.creation import RunSpec
    from universal.engine.workload import Injection, OfferedTraffic

    # a batch offers nothing at a rate: its traffic is the given packets (no N x N matrix)
    traffic = OfferedTraffic("batch", np.zeros(router.network.num_nodes), None, None, np.zeros((0, 0)))
    return RunSpec(traffic, router, Injection("batch", packets=(sources, dests), ranks=ranks), 1.0, seed=seed,
                   priority=priority)


def rule_of(protocol) -> str:
    """The engine's contention rule for a survey protocol: a rule of its own where it has one
    (faster than reading the protocol's keys), else ``protocol`` (the keys themselves).

    Examples
    --------
    >>> from universal.protocols import build_protocol
    >>> [rule_of(build_protocol(p)) for p in ("random-rank", "longest-in-system", "random-delay", "random")]
    ['random-rank', 'age', 'protocol', 'protocol']
    """
    from universal.protocols.buffered import (FarthestToGo, Fifo, GrowingRank, LongestInSystem, NearestToGo,
                                              RandomRank)

    rules = {RandomRank: "random-rank", GrowingRank: "growing-rank", Fifo: "fifo", FarthestToGo: "farthest-to-go",
             NearestToGo: "nearest-to-go", LongestInSystem: "age"}
    return rules.get(type(protocol), "protocol")


def fixed_paths_spec(paths: PathCollection, protocol, priority: str | None, rng: np.random.Generator):
    """:func:`batch_spec` of a collection's packets on exactly its paths, with the survey's ranks
    drawn from ``rng`` as the survey's protocol draws them: the engine then routes the batch as
    :func:`~universal.engine.batch.simulate` does.

    Parameters
    ----------
    paths : PathCollection
    protocol : str or Protocol
        The survey's protocol whose ranks are drawn (``random-rank``, ``growing-rank``, ...).
    priority : str or None
        The engine's rule (``age`` for ``longest-in-system``); None: :func:`rule_of` the protocol.
    rng : numpy.random.Generator
        Draws the ranks (and delays), and stays the run's generator (per-step keys).

    Returns
    -------
    universal.engine.creation.RunSpec

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.paths import route_paths
    >>> from universal.workloads import build_problem
    >>> net = build_network("torus:k=4,n=1")
    >>> paths = route_paths("dimension-order", build_problem("permutation:tornado", net, np.random.default_rng(0)),
    ...                     net, np.random.default_rng(0))
    >>> ranks, K, D = fixed_paths_spec(paths, "random-rank", None, np.random.default_rng(1)).injection.ranks
    >>> K == paths.congestion + paths.dilation + 2, D == paths.dilation     # K = C + D + log n, n = 4
    (True, True)
    """
    from universal.engine.routes import router_for_paths
    from universal.protocols import build_protocol

    protocol = build_protocol(protocol)
    state = protocol.setup(rng, paths.lengths, paths.congestion, paths.dilation)
    spec = batch_spec(router_for_paths(paths), paths.sources, paths.dests, priority or rule_of(protocol), seed=rng,
                      ranks=(state.ranks, state.K, state.D))
    release = protocol.release_steps(state)
    if release is not None and protocol.dynamic != "on-move":
        raise TypeError(f"{protocol.name}: release steps need keys that change on moves")
    spec.injection = replace(spec.injection, protocol=(protocol, state), release=release)
    return spec
