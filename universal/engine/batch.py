"""The batch model on the open-loop engine: a routing problem whose packets choose their links
hop by hop (adaptive routing), the survey's protocols deciding contention.

A batch is the packets of one problem, all created in step 0 (:class:`~universal.engine.workload.Injection`
``batch``); the engine runs until every packet is delivered (status ``delivered``), a deadlock of
bounded buffers, or the step limit. Adaptive routings (MIN AD, GOAL, UGAL; Singh, Dally, Gupta &
Towles, "GOAL: a load-balanced adaptive routing algorithm for torus networks", 2003) choose every
next link when a packet arrives at a node, so there is no path collection before the run: the
rows report the congestion C and dilation D of the paths the packets actually took, and no
bound (the survey's bounds, Meyer auf der Heide & Scheideler, "Communication in Parallel
Systems", 1996, §4, are for paths fixed in advance).

The survey's buffered protocols map onto the engine's priorities, all with ranks or keys fixed
when the packet is created (step 0 for every packet of a batch), ties to the lower packet id:

* ``random-rank``: the lowest rank drawn uniformly at creation first;
* ``fifo``: the earliest arrival at the current node first;
* ``farthest-to-go`` and ``nearest-to-go``: the most (fewest) hops left first (for an adaptive
  packet, its minimal distance);
* ``longest-in-system``: the oldest first; in a batch every packet is as old as every other,
  so the lower packet id wins (as in the batch engine).

The step numbering follows the batch engine's: packets first move in step 1, a packet that never
waits is delivered in the step numbered by its hop count, and T is the step of the last delivery.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, replace

import numpy as np

from universal.engine.batch_engines import (_fill_hop_steps, _simulate_compiled, _simulate_dynamic_numpy,
                                              _simulate_static_numpy, _unmoved)
from universal.engine.batch_specs import batch_spec, fixed_paths_spec, rule_of
from universal.engine.result import RoutingResult
from universal.errors import UserError
from universal.networks import Network
from universal.paths import PathCollection

__all__ = ["ADAPTIVE_PROTOCOLS", "BatchRun", "COMPILED_MIN_HOPS_COLD", "COMPILED_MIN_HOPS_WARM", "batch_spec",
           "compiled_pays", "fixed_paths_spec", "is_adaptive_routing", "route_batch", "rule_of", "simulate",
           "writes_level_path_array"]

#: Packet-hops from which a batch runs on a compiled kernel (:mod:`universal.engine.compiled`,
#: :mod:`universal.engine.compiled_dynamic`) once one has run in this process (a kernel
#: loaded, the others cost a few milliseconds more; warm, every kernel beat the numpy engine
#: from 320 packet-hops on, so this only spares small batches the loading of one more kernel).
COMPILED_MIN_HOPS_WARM = 20_000
#: The same before a kernel has run in this process: importing numba and loading the cached kernels costs
#: about 0.6 s of CPU time once per process (whichever kernel comes first), which the kernel wins
#: back (about 40 ns a packet-hop) only on large batches.
COMPILED_MIN_HOPS_COLD = 16_000_000

#: The protocol classes whose changing keys the compiled kernel computes or draws
#: (:data:`universal.engine.compiled_dynamic.RULES`, named here so that deciding imports no numba).
DYNAMIC_RULES = ("GrowingRank", "Fifo", "FarthestToGo", "NearestToGo", "RandomDelay", "RandomEachStep")

#: Whether :func:`simulate` routes a static priority (random rank, longest-in-system) below the
#: kernels' threshold on :mod:`universal.engine.static_numpy` (the same results as the general
#: numpy engine, :mod:`universal.engine.runs`, at about twice its rate); False: on the general
#: engine (the tests compare the two).
STATIC_NUMPY = True
#: Whether :func:`simulate` routes the protocols of :data:`DYNAMIC_RULES` below the kernels'
#: threshold on :mod:`universal.engine.dynamic_numpy` (the same results as the general numpy
#: engine); False: on the general engine (the tests compare the two).
DYNAMIC_NUMPY = True

#: Survey protocol -> the open-loop engine's priority that implements it for a batch.
ADAPTIVE_PROTOCOLS = {"random-rank": "random-rank", "fifo": "fifo", "farthest-to-go": "farthest-to-go",
                      "nearest-to-go": "nearest-to-go", "longest-in-system": "age"}


def is_adaptive_routing(name: str) -> bool:
    """Whether ``name`` is a routing that decides as packets travel (``min-adaptive``, ``goal``, ``ugal``,
    and on networks with terminals ``ugal-l`` and ``ugal-g``, which choose at the source).

    Examples
    --------
    >>> is_adaptive_routing("goal"), is_adaptive_routing("ugal:threshold=2"), is_adaptive_routing("dor")
    (True, True, False)
    """
    from universal.engine.routes import ADAPTIVE_ROUTINGS
    from universal.registry import parse_spec
    return parse_spec(name).name in ADAPTIVE_ROUTINGS


@dataclass
class BatchRun:
    """One batch routed adaptively.

    Attributes
    ----------
    paths : PathCollection
        The links every packet crossed, in order (``system`` the routing's name): its
        ``congestion`` and ``dilation`` are the realised C and D. A packet not delivered (deadlock,
        step limit) holds the links it crossed so far.
    result : RoutingResult
        Delivery step of every packet (batch-engine numbering, -1 if never), status, steps run,
        the largest link buffer and the link crossings.
    queued : list of (int, int), optional
        CHAOS run by the reference engine: ``(step, packet)`` whenever a packet moved from an
        input buffer into its node's shared queue (batch-engine numbering); else None.
    """

    paths: PathCollection
    result: RoutingResult
    queued: list | None = None


def compiled_pays(protocol, hops: int) -> bool:
    """Whether :func:`simulate` routes a batch on a compiled kernel: the protocol is one the
    kernels know (a static priority, :mod:`universal.engine.compiled`; keys that change on moves
    or every step, :mod:`universal.engine.compiled_dynamic`), numba is installed, and the batch
    has at least :data:`COMPILED_MIN_HOPS_WARM` packet-hops when a kernel has run in this process
    already, :data:`COMPILED_MIN_HOPS_COLD` when loading it would be paid now.

    Parameters
    ----------
    protocol : Protocol
    hops : int
        The batch's packet-hops (the sum of its path lengths).

    Returns
    -------
    bool

    Examples
    --------
    >>> from universal.protocols import build_protocol
    >>> compiled_pays(build_protocol("random-rank"), 100), compiled_pays(build_protocol("trial-and-failure"), 10**9)
    (False, False)
    """
    if protocol.bufferless or not (protocol.dynamic == "static" or type(protocol).__name__ in DYNAMIC_RULES):
        return False
    loaded = sys.modules.get("universal.engine.compiled")
    if loaded is not None and not loaded.NUMBA:
        return False
    if hops < (COMPILED_MIN_HOPS_WARM if loaded is not None and loaded.WARM else COMPILED_MIN_HOPS_COLD):
        return False
    return loaded is not None or importlib.util.find_spec("numba") is not None


def writes_level_path_array(protocol, *, d: int, passes: int, packets: int, bandwidth: int, buffer: int | None,
                            congestion: int | None = None, record_hops: bool = False, plain: bool = True) -> bool:
    """Whether :func:`simulate` writes the path array of a butterfly's level paths kept as rows
    (:class:`universal.paths.level_rows.LevelRowsCollection`): False only where it routes them on
    the node words from their rows (:func:`universal.engine.compiled_levels.route_levels` with
    ``rows``), the one route that never reads their links. The memory estimate asks it before the
    run (``congestion`` None: C not known yet, taken to fit the words).

    Parameters
    ----------
    protocol : Protocol
    d, passes, packets : int
        BF(d), the butterflies back to back (2 for Valiant's trick), the number of paths.
    bandwidth, buffer : int, int or None
        B and b.
    congestion : int, optional
        C, if known.
    record_hops : bool
        The run records every hop's step (``--opt``, ``--html``): that reads the links.
    plain : bool
        One set buffer per link and every packet routed from step 1 (one VC, ``source_queue``
        ``all``, ``vc_buffer`` ``set``).

    Returns
    -------
    bool

    Examples
    --------
    >>> from universal.protocols import build_protocol
    >>> rank = build_protocol("random-rank")
    >>> writes_level_path_array(rank, d=20, passes=2, packets=4 << 20, bandwidth=1, buffer=None) == (
    ...     importlib.util.find_spec("numba") is None)
    True
    >>> writes_level_path_array(rank, d=20, passes=2, packets=4 << 20, bandwidth=2, buffer=None)
    True
    """
    from universal.engine.node_words import IN_CACHE_HOPS, node_words_take, row_words_fit

    hops = packets * passes * d
    # simulate's dispatch to route_static: a static priority on the compiled kernel
    if not plain or record_hops or protocol.dynamic != "static" or not compiled_pays(protocol, hops):
        return True
    # route_static's node words (C unknown: the words are taken to hold it); a small batch reads
    # its links into one word per packet
    words = node_words_take(bandwidth, buffer, 0 if congestion is None else congestion) and (
        congestion is not None or buffer is None)
    return not (words and hops >= IN_CACHE_HOPS and row_words_fit(passes, d, passes * d, packets))


def simulate(collection: PathCollection, protocol, rng: np.random.Generator, *, bandwidth: int = 1,
             buffer: int | None = None, step_limit: int | None = None, record_hops: bool = False,
             vcs: int = 1, source_queue: str = "all", vc_buffer: str = "set") -> RoutingResult:
    """Route every packet of ``collection`` along its path with one of the survey's protocols.

    The packets are a batch of the one engine (:mod:`universal.engine.runs`), all created in
    step 0 on the paths of the collection; a large batch runs on a compiled kernel instead, with
    the same results, when numba is installed (:func:`compiled_pays`): a static priority (random
    rank, longest-in-system) on :mod:`universal.engine.compiled`, keys that change on moves or
    every step (growing rank, FIFO, farthest/nearest to go, random delay, random) on
    :mod:`universal.engine.compiled_dynamic`; below that size, with one virtual channel, a
    static priority runs on :mod:`universal.engine.static_numpy` and keys that change on
    :mod:`universal.engine.dynamic_numpy`, the general numpy engine's batch cases for keys that
    never change and for keys that do (:data:`STATIC_NUMPY`, :data:`DYNAMIC_NUMPY`). Bufferless
    protocols (trial-and-failure, duplication) run in rounds of their own
    (:func:`universal.engine.bufferless.simulate_bufferless`).

    Parameters
    ----------
    collection : PathCollection
        The paths; packet ``i`` follows path ``i``.
    protocol : str or Protocol
        A protocol of the survey (``random-rank``, ``growing-rank``, ``fifo``, ...,
        ``trial-and-failure``).
    rng : numpy.random.Generator
        Source of the protocol's random ranks, delays and keys.
    bandwidth : int
        B, packets a link forwards per step.
    buffer : int, optional
        b, the size of every link buffer (default unbounded). A packet may enter a buffer only
        if it had room at the start of the step: per link, the contenders are taken in priority
        order and one is let across if fewer than B have crossed and either it crosses its last
        link or fewer than the free places have been filled. A step that moves no packet ends the
        run with status ``"deadlock"``.
    step_limit : int, optional
        Stop after this many steps (default: the total number of hops plus the longest random
        delay, which a run never needs, since every step before the end moves a packet).
    record_hops : bool
        Also return the step in which every hop was made (``RoutingResult.hop_steps``,
        aligned with ``collection.links``), for checking invariants and tracing.
    vcs : int
        V, virtual channels per link (:mod:`universal.engine.vcs`; tori, meshes and hypercubes):
        with V >= 2 and bounded buffers every hop enters the dateline class of its place on its
        path, each class a buffer of its VCs times ``buffer`` packets, so that no deadlock can
        occur; the classes are counted on the paths themselves
        (:func:`universal.engine.vcs.classes_of_paths`) and more than V are refused. Bufferless
        protocols have no buffers and ignore it.
    source_queue : {"all", "fifo", "fifo:w=W"}
        ``fifo``: every node's packets leave it in packet order, its first B alone routed (the
        input-queued router's source queue, :mod:`universal.engine.source_queue`); ``all``: every
        packet waits for its first link from step 1; ``fifo:w=W``: its first W routed, each may
        leave on its own. Bufferless protocols refuse both FIFOs.
    vc_buffer : {"set", "fifo"}
        The VC buffer's model (:mod:`universal.engine.fifo_vcs`): ``set``, any packet of a class
        buffer may leave by priority; ``fifo``, every VC (with ``vcs=1`` the link's one buffer) a
        FIFO of ``buffer`` packets whose head alone may leave (head-of-line blocking). FIFO VCs
        need ``buffer`` and B = 1; bufferless protocols refuse them.

    Returns
    -------
    RoutingResult

    Examples
    --------
    >>> from universal.networks import butterfly
    >>> from universal.workloads import build_problem
    >>> from universal.paths import route_paths
    >>> net = butterfly(4)
    >>> prob = build_problem("permutation:bit-reversal", net, np.random.default_rng(0))
    >>> paths = route_paths("dimension-order", prob, net, np.random.default_rng(0))
    >>> res = simulate(paths, "random-rank", np.random.default_rng(0))
    >>> res.status, res.T >= max(paths.congestion, paths.dilation)
    ('delivered', True)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.
    """
    from universal.protocols import build_protocol

    protocol = build_protocol(protocol)
    if bandwidth < 1:
        raise ValueError("bandwidth must be >= 1")
    if buffer is not None and buffer < 1:
        raise ValueError("buffer must be >= 1 (or None for unbounded buffers)")
    from universal.engine.source_queue import check_source_queue

    fifo = check_source_queue(source_queue) != "all"
    if protocol.bufferless and fifo:
        raise UserError(f"{protocol.name} is bufferless: it has no source queue to make a FIFO (leave out "
                        "--source-queue fifo)")
    from universal.engine.fifo_vcs import check_vc_buffer

    if check_vc_buffer(vc_buffer) == "fifo":
        if protocol.bufferless:
            raise UserError(f"{protocol.name} is bufferless: it has no buffers to make FIFOs (leave out "
                            "--vc-buffer fifo)")
        check_vc_buffer(vc_buffer, buffer, bandwidth)
    # the kernels and the numpy batch engines below keep one set buffer per link and no source queue
    plain = vcs == 1 and not fifo and vc_buffer == "set"
    if protocol.bufferless:
        from universal.engine.bufferless import simulate_bufferless
        return simulate_bufferless(collection, protocol, rng, bandwidth=bandwidth, step_limit=step_limit,
                                   record_hops=record_hops)
    lengths = collection.lengths
    # the hops of all paths: the path array's length, without summing the lengths
    if plain and compiled_pays(protocol, int(collection.offsets[-1] - collection.offsets[0])):
        result = _simulate_compiled(collection, protocol, rng, bandwidth, buffer, step_limit, record_hops)
        if result is not None:
            return result
    if plain and STATIC_NUMPY and protocol.dynamic == "static":
        return _simulate_static_numpy(collection, protocol, rng, bandwidth, buffer, step_limit, record_hops)
    if plain and DYNAMIC_NUMPY and type(protocol).__name__ in DYNAMIC_RULES:
        result = _simulate_dynamic_numpy(collection, protocol, rng, bandwidth, buffer, step_limit, record_hops)
        if result is not None:
            return result
    spec = fixed_paths_spec(collection, protocol, None, rng)
    # the general engine only now: a small batch of a static priority (the usual route) never loads it
    from universal.engine.measure import Measurement
    from universal.engine.runs import simulate as simulate_run
    if vcs != 1:
        from universal.engine.vcs import classes_of_paths
        spec.injection = replace(spec.injection, vc_classes=classes_of_paths(collection))
    release = spec.injection.release
    latest = int(release.max()) if release is not None and len(release) else 0
    limit = int(lengths.sum()) + latest if step_limit is None else int(step_limit)
    hop_steps = np.full(len(collection.links), -1, dtype=np.int64) if record_hops else None
    if not lengths.any() or limit <= 0:            # nothing to move, or no step to move it in
        return _unmoved(collection, record_hops, buffer)
    res = simulate_run(spec, bandwidth=bandwidth, buffer=buffer, vcs=vcs, source_queue=source_queue,
                       vc_buffer=vc_buffer,
                       measurement=Measurement(steps=limit, until_delivered=True, record_crossings=record_hops))
    rec = res.records
    # packets first move in step 1 here (step 0 of the engine); no hop to make: delivered in step 0
    delivery = np.where(lengths == 0, 0, np.where(rec["delivered"] >= 0, rec["delivered"] + 1, -1))
    status = {"drained": "delivered", "deadlock": "deadlock"}.get(res.status, "step-limit")
    if record_hops:
        _fill_hop_steps(hop_steps, collection.offsets, rec["crossings"])
    blocked, full_links = rec["blocked"] if status == "deadlock" else (None, None)
    return RoutingResult(delivery=delivery.astype(np.int64), status=status, steps=res.steps,
                         max_buffer=rec["max_buffer"], hops=rec["hops"], hop_steps=hop_steps, buffer=buffer,
                         deadlock_step=res.steps if status == "deadlock" else None, blocked=blocked,
                         full_links=full_links)


def route_batch(network: Network, sources: np.ndarray, dests: np.ndarray, routing: str, protocol: str, *,
                seed: int | np.random.SeedSequence = 0, bandwidth: int = 1, buffer: int | None = None,
                step_limit: int | None = None, engine: str = "fast", vcs: int = 1,
                source_queue: str = "all", vc_buffer: str = "set", trace: list | None = None) -> BatchRun:
    """Route the packets ``sources[i] -> dests[i]`` with an adaptive routing, all starting at step 0.

    Parameters
    ----------
    network : Network
    sources, dests : array of int
    routing : str
        ``min-adaptive``, ``goal``, ``ugal[:threshold=T]``, ``chaos[:queue=S]`` (with ``buffer``;
        :data:`universal.engine.routes.ADAPTIVE_ROUTINGS`).
    protocol : str
        One of :data:`ADAPTIVE_PROTOCOLS`.
    seed : int or SeedSequence
        The run's generator (ranks, UGAL's intermediates, ties between equally good links).
    bandwidth, buffer : int, int or None
        B and the link-buffer size b (None: unbounded).
    step_limit : int, optional
        Most steps to run (default: 4 (N + n) + 100, far beyond any run that moves).
    engine : str
        ``fast`` or ``reference`` (:func:`universal.engine.reference_runs.simulate_reference`, one
        packet at a time: the oracle the fast engine must equal).
    vcs : int
        V, virtual channels per link (:mod:`universal.engine.vcs`).
    source_queue : {"all", "fifo", "fifo:w=W"}
        The sources' model (:func:`simulate`).
    vc_buffer : {"set", "fifo"}
        The VC buffer's model (:func:`simulate`; CHAOS, which has no VCs, refuses ``fifo``).
    trace : list, optional
        With ``engine="reference"``: receives the reference engine's step records
        (:mod:`universal.engine.reference_trace`; its step numbers, from 0).

    Returns
    -------
    BatchRun

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("torus:k=8,n=1")
    >>> run = route_batch(net, np.arange(8), (np.arange(8) + 3) % 8, "min-adaptive", "fifo")
    >>> run.result.status, run.result.T, run.paths.congestion, run.paths.dilation
    ('delivered', 3, 3, 3)

    References
    ----------
    Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
    networks" (2003); Meyer auf der Heide & Scheideler, "Communication in Parallel Systems"
    (1996), §4 and §5.
    """
    from universal.engine.routes import build_router

    if protocol not in ADAPTIVE_PROTOCOLS:
        raise UserError(f"protocol {protocol!r} does not decide contention for adaptive routing here; "
                        f"use one of {', '.join(ADAPTIVE_PROTOCOLS)} (the bufferless protocols and the "
                        "growing or random-delay ranks are defined on paths fixed in advance)")
    sources = np.asarray(sources, dtype=np.int64)
    dests = np.asarray(dests, dtype=np.int64)
    router = build_router(routing, network)
    if not (router.adaptive or router.kind == "ugal-paths"):
        raise UserError(f"{routing!r} is not an adaptive routing (min-adaptive, goal, ugal, chaos, ugal-l, ugal-g)")
    limit = step_limit if step_limit is not None else 4 * (network.num_nodes + len(sources)) + 100
    spec = batch_spec(router, sources, dests, ADAPTIVE_PROTOCOLS[protocol], seed=seed)
    queued = None
    if trace is not None and engine != "reference":
        raise ValueError("trace records come from the reference engine: give engine='reference'")
    if engine == "reference":
        delivered, crossings, status, most, blocked, queued = _reference(spec, limit, bandwidth, buffer, vcs,
                                                                         source_queue, vc_buffer, trace)
    else:
        delivered, crossings, status, most, blocked = _fast(spec, limit, bandwidth, buffer, vcs, source_queue,
                                                            vc_buffer)
    run = _batch_run(network, sources, dests, routing, delivered, crossings, status, limit, buffer)
    if run.result.status == "deadlock" and blocked is not None:     # the row lists them (a deadlock's step
        res = run.result                                             # moves nothing: the one after the last)
        res.blocked, res.full_links = (np.asarray(x, dtype=np.int64) for x in blocked)
        res.deadlock_step = int(crossings[:, 0].max()) + 2 if len(crossings) else 1
    if router.kind == "chaos":      # a packet may leave its link buffer for the shared queue unseen
        run.result.max_buffer = most
        if queued is not None:      # packets first move in step 1 here
            run.queued = [(int(t) + 1, int(p)) for t, p in queued]
    return run


def _fast(spec, limit: int, bandwidth: int, buffer: int | None, vcs: int = 1, source_queue: str = "all",
          vc_buffer: str = "set"):
    from universal.engine.runs import simulate
    from universal.engine.measure import Measurement
    res = simulate(spec, bandwidth=bandwidth, buffer=buffer, vcs=vcs, source_queue=source_queue, vc_buffer=vc_buffer,
                   measurement=Measurement(steps=limit, until_delivered=True, record_crossings=True))
    return (res.records["delivered"], res.records["crossings"], res.status, res.records["max_buffer"],
            res.records.get("blocked"))


def _reference(spec, limit: int, bandwidth: int, buffer: int | None, vcs: int = 1, source_queue: str = "all",
               vc_buffer: str = "set", trace: list | None = None):
    from universal.engine.reference_runs import simulate_reference
    record: dict = {"steps": trace}
    run = simulate_reference(spec, limit, bandwidth=bandwidth, buffer=buffer, create_until=1, record=record, vcs=vcs,
                             source_queue=source_queue, vc_buffer=vc_buffer)
    crossings = np.array(record["crossings"], dtype=np.int64).reshape(-1, 3)
    return (np.array(run["delivered"], dtype=np.int64), crossings, run["status"], record.get("max_buffer", 0),
            record.get("blocked"), record.get("queued"))


def _batch_run(network: Network, sources, dests, routing: str, delivered: np.ndarray, crossings: np.ndarray,
               status: str, limit: int, buffer: int | None) -> BatchRun:
    """The realised paths and the batch-engine result of one run's deliveries and crossings."""
    n = len(sources)
    step, pid, link = crossings[:, 0], crossings[:, 1], crossings[:, 2]
    order = np.lexsort((step, pid))                     # by packet, its crossings in step order
    step, pid, link = step[order], pid[order], link[order]
    offsets = np.searchsorted(pid, np.arange(n + 1))
    paths = PathCollection(network, offsets, link, sources, dests, routing)
    delivery = np.where(delivered >= 0, delivered + 1, -1)           # packets first move in step 1
    delivery[(sources == dests) & (np.diff(offsets) == 0)] = 0        # no hop to make
    all_in = bool((delivery >= 0).all())
    status = "delivered" if all_in else ("deadlock" if status == "deadlock" else "step-limit")
    steps = int(delivery.max()) if all_in and n else (int(step.max()) + 1 if len(step) else 0)
    if not all_in and status == "step-limit":
        steps = limit
    result = RoutingResult(delivery.astype(np.int64), status, steps, _max_buffer(step + 1, pid, link, delivered + 1, n),
                           len(link), hop_steps=step + 1, buffer=buffer,
                           crossings=np.stack([step + 1, link, pid], axis=1))
    return BatchRun(paths, result)


def _max_buffer(step: np.ndarray, pid: np.ndarray, link: np.ndarray, delivered: np.ndarray, n: int) -> int:
    """The most packets in one link buffer at the end of a step: a packet sits in the buffer of
    the link it crossed from the end of that step until the step it crosses its next link (it
    leaves the buffer in that step); after its last link it is delivered and sits nowhere.

    Inputs are sorted by packet, then step (batch-engine step numbers)."""
    if not len(step):
        return 0
    nxt = np.empty(len(step), dtype=np.int64)
    same = pid[1:] == pid[:-1]
    nxt[:-1] = np.where(same, step[1:], -1)
    nxt[-1] = -1
    last_hop = nxt < 0
    # the last crossing of a delivered packet delivers it; of a packet still travelling (step
    # limit, deadlock) it leaves the packet in that buffer until the end
    still = last_hop & (delivered[pid] <= 0)
    stays = ~last_hop | still
    if not stays.any():             # every packet delivered by its first hop: no buffer entered
        return 0
    start = step[stays]
    end = np.where(last_hop[stays], np.iinfo(np.int64).max // 4, nxt[stays])     # [start, end)
    where = link[stays]
    events = np.concatenate([np.stack([where, start, np.ones_like(start)], axis=1),
                             np.stack([where, end, -np.ones_like(end)], axis=1)])
    events = events[np.lexsort((events[:, 2], events[:, 1], events[:, 0]))]   # a leave before an enter
    level = np.cumsum(events[:, 2])
    first = np.concatenate([[True], events[1:, 0] != events[:-1, 0]])
    base = np.maximum.accumulate(np.where(first, np.arange(len(events)), 0))
    before = np.where(base > 0, level[base - 1], 0)
    return int((level - before).max())
