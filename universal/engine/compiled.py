"""A compiled batch kernel for paths fixed in advance and a static priority (SPEC §2, §6; Meyer
auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.1).

A static priority never changes while a packet travels: random rank (the lowest rank drawn
once from [K] first) and longest-in-system (in a batch every packet is as old as every other,
so the lower packet id first), ties to the lower packet id. The packets are therefore sorted
once, highest priority first, and the waiting ones stay in that order for the whole run: a step
is one pass over them in which every packet crosses its link if the link has not yet let B
packets across in this step (and, with bounded buffers, if the crossing delivers the packet or
fewer packets have entered the link's buffer in this step than it had free places at the start
of the step); the pass also squeezes out the delivered packets, so the list stays packed and in
order. Per link the kernel keeps, in one row, the step that last touched it (a tag, so that
nothing is cleared between steps), that step's crossings and entries, and the buffer's
occupancy: a step costs time proportional to the waiting packets, never to the network. The
paths are copied once in priority order, so that the pass reads every packet's next link
moving forward through memory instead of at random (on BF(16) the copy made the step loop three
times faster). A butterfly's level paths run on their own rows instead (:func:`_level_rows`), and
with B = 1 and buffers that never refuse on the node words of
:mod:`universal.engine.compiled_levels`, at every size (:func:`on_node_words`); small batches of
them on one word per packet (:mod:`universal.engine.compiled_in_cache`).

This is the one engine's batch case: :func:`universal.engine.batch.simulate` hands a batch to it
when numba is installed and the batch is large enough for the compiled code to pay
(:func:`universal.engine.batch.compiled_pays`). The results are identical to the numpy engine's
and the reference engine's (:func:`universal.engine.simulate_reference`) on the same seed,
which ``tests/engine/test_compiled.py`` checks, compiled and as plain Python.

Importing this module imports numba (about 0.25 s of CPU time and 65 MB), and the first call of
a kernel in a process costs about 0.4 s more even when its machine code comes from numba's
on-disk cache (``cache=True``; compiled once per machine and combination of array types).
Without numba the module still imports and its kernels run as plain Python. The step loops
and the layout they run on are in :mod:`universal.engine.compiled_static_loops`.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled_in_cache import route_levels_by_keys
import universal.engine.compiled_levels as compiled_levels
from universal.engine.compiled_levels import DEADLOCK, DELIVERED, IN_CACHE_HOPS, STEP_LIMIT, route_levels
# the step loops: imported here too, where route_static looks them up (tests swap them on this module)
from universal.engine.compiled_static_loops import (PREFETCH_AHEAD, _lay_out, _run_flat, _run_packed,  # noqa: F401
                                                    _scatter_back, _settle)
from universal.engine.node_words import node_words_take, row_words_fit
from universal.engine.result import RoutingResult
from universal.memory import ROWS_FROM_HOPS
from universal.paths import PathCollection
from universal.protocols.buffered import RandomRank

__all__ = ["priority_order", "route_static"]

try:
    from numba import njit
    from universal.kernel_cache import clear_stale
    clear_stale()      # before any kernel's cache loads: numba checks only a kernel's own file
    NUMBA = True
except ImportError:        # the kernels run as plain Python: correct, slow, and never dispatched to
    NUMBA = False

    def njit(**options):
        return lambda function: function

#: Whether a kernel has run in this process: numba's first call costs about 0.4 s even when the
#: compiled code comes from the cache, later ones nothing (see :func:`universal.engine.batch.compiled_pays`).
WARM = False

#: Which step loop runs: None chooses by the load (:func:`_run_packed` when C > D, else
#: :func:`_run_flat`); True or False forces one (the tests run both).
PACKED: bool | None = None

_STATUS = {DELIVERED: "delivered", DEADLOCK: "deadlock", STEP_LIMIT: "step-limit"}


@njit(cache=True, nogil=True)
def _counting_order(ids, keys, low, span):
    """``ids`` stably sorted by ``keys`` (all in ``low .. low + span - 1``): a counting sort."""
    start = np.zeros(span + 1, dtype=np.int64)
    for i in range(len(keys)):
        start[keys[i] - low + 1] += 1
    for k in range(span):
        start[k + 1] += start[k]
    out = np.empty_like(ids)
    for i in range(len(keys)):
        k = keys[i] - low
        out[start[k]] = ids[i]
        start[k] += 1
    return out


def priority_order(ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``ids`` (increasing) sorted by (key, id): the highest priority first.

    With numba, keys spanning no more values than there are ids (random rank's K = C + D + log n,
    longest-in-system's ids) are sorted by counting, compiled (BF(10), Valiant 4-relation: 5 us
    against 25-50 us for the argsort); else keys spanning less than 2^15 are sorted as int16 with
    a stable argsort (a radix sort), wider ones with a stable argsort of their own.

    Parameters
    ----------
    ids : ndarray of int64
        Packet ids, increasing.
    keys : ndarray of int64
        Their keys; the lowest key goes first, ties to the lower id.

    Returns
    -------
    ndarray of int64

    Examples
    --------
    >>> priority_order(np.array([0, 1, 2, 5]), np.array([3, 1, 3, 0])).tolist()
    [5, 1, 0, 2]
    """
    if not len(keys):
        return ids
    low = int(keys.min())
    span = int(keys.max()) - low + 1
    if NUMBA and span <= max(len(keys), 1024):
        return _counting_order(ids, keys, low, span)
    if span <= 2**15:
        return ids[np.argsort((keys - low).astype(np.int16), kind="stable")]
    return ids[np.argsort(keys, kind="stable")]


def _smallest_type(largest: int) -> type:
    """The smallest signed integer type that holds ``largest`` (and its negation)."""
    return next(t for t in (np.int8, np.int16, np.int32, np.int64) if largest < np.iinfo(t).max)


def route_static(collection: PathCollection, protocol, state, *, bandwidth: int, buffer: int | None, limit: int,
                 record_hops: bool) -> RoutingResult:
    """Route a batch on its fixed paths with a static priority, compiled.

    Parameters
    ----------
    collection : PathCollection
        The paths; packet ``i`` follows path ``i``. At least one path is not empty.
    protocol : Protocol
        A protocol whose keys never change (``dynamic == "static"``): random rank,
        longest-in-system.
    state : RankState
        What ``protocol.setup`` drew (the ranks), as the other engines draw it.
    bandwidth : int
        B >= 1.
    buffer : int or None
        The link-buffer size b (None: unbounded).
    limit : int
        The step limit (> 0).
    record_hops : bool
        Also return the step of every hop.

    Returns
    -------
    RoutingResult
        As :func:`universal.engine.batch.simulate` returns it.

    Examples
    --------
    >>> from universal.networks import butterfly
    >>> from universal.paths import route_paths
    >>> from universal.protocols import build_protocol
    >>> from universal.workloads import build_problem
    >>> net = butterfly(4)
    >>> paths = route_paths("valiant", build_problem("h-relation:h=2", net, np.random.default_rng(0)), net,
    ...                     np.random.default_rng(1))
    >>> p = build_protocol("random-rank")
    >>> state = p.setup(np.random.default_rng(2), paths.lengths, paths.congestion, paths.dilation)
    >>> res = route_static(paths, p, state, bandwidth=1, buffer=None, limit=10**6, record_hops=False)
    >>> res.status, res.hops == int(paths.lengths.sum())
    ('delivered', True)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.1.
    """
    lengths = collection.lengths
    n = len(lengths)
    on_rows = rows_pay(int(collection.offsets[-1] - collection.offsets[0])) or on_node_words(collection, bandwidth,
                                                                                            buffer)
    levels = None if record_hops or not on_rows else _level_rows(collection)
    if levels is not None:        # every path has all the levels' hops: the packets are 0 .. n - 1
        return _route_rows(collection, _all_keys(protocol, state, n), levels, bandwidth, buffer, limit)
    ids = np.flatnonzero(lengths > 0)
    ids = priority_order(ids, protocol.keys(state, ids, np.zeros(len(ids), np.int64), np.zeros(len(ids), np.int64)))
    flat, start, state, delivery, steps_at, bounded = _set_up(collection, ids, bandwidth, buffer, record_hops)
    num = len(state) - 1
    packed = PACKED if PACKED is not None else collection.congestion > collection.dilation
    if packed:
        pack = np.empty((len(ids), 4), dtype=np.int32 if max(len(flat), n) < 2**31 else np.int64)
        pack[:, 0] = ids
        pack[:, 1] = start[:-1]
        pack[:, 2] = flat[start[:-1]]
        pack[:, 3] = num
        status, step, count, max_buffer, hops = _run_packed(flat, pack, delivery, steps_at, record_hops, state,
                                                            bandwidth, buffer if bounded else 0, bounded, limit)
        waiting, cur = pack[:count, 0].astype(np.int64), pack[:count, 1].astype(np.int64)
    else:
        waiting, cur = ids.copy(), start[:-1].copy()
        status, step, count, max_buffer, hops = _run_flat(flat, waiting, cur, delivery, steps_at, record_hops, state,
                                                          bandwidth, buffer if bounded else 0, bounded, limit)
        waiting, cur = waiting[:count], cur[:count]
    del flat
    return _result(collection, ids, start, steps_at, delivery, status, step, max_buffer, hops, waiting, cur, buffer)


#: Butterfly level paths of fewer hops than the first or at least the second run on their own
#: rows (:func:`_route_rows`), the others on :func:`_lay_out`'s copy, unless they run on the node
#: words (:func:`on_node_words`: on their rows at every size). Valiant 4-relations, the kernel and
#: its set-up, rows against the copy with the general loop: 0.85 of the time on BF(10), 0.95 on
#: BF(12), 1.13, 1.20, 1.07 on BF(14), BF(16), BF(17) (streaming the copy pays), 0.87 on BF(18);
#: from BF(18) on the copy would also be 0.15 GB or more (0.7 GB on BF(20)). On the node words:
#: 0.62, 0.75, 0.89, 0.90, 0.88 on BF(10), BF(12), BF(14), BF(16), BF(17).
ROWS_HOPS = (1 << 19, ROWS_FROM_HOPS)


def on_node_words(collection: PathCollection, bandwidth: int, buffer: int | None) -> bool:
    """Whether a butterfly's level paths run on the node words of :mod:`universal.engine.compiled_levels`:
    B = 1, buffers that never refuse (unbounded, or b >= C) and C small enough for the words."""
    return node_words_take(bandwidth, buffer, collection.congestion)


def rows_pay(hops: int) -> bool:
    """Whether butterfly level paths of ``hops`` hops in all run on their own rows (:data:`ROWS_HOPS`).

    Examples
    --------
    >>> rows_pay(81_920), rows_pay(1_835_008), rows_pay(167_772_160)    # BF(10), BF(14), BF(20), h = 4
    (True, False, True)
    """
    return not ROWS_HOPS[0] <= hops < ROWS_HOPS[1]


def _level_rows(collection: PathCollection) -> tuple[int, int] | None:
    """``(last_from, first_below)`` for :func:`_run_flat`'s ``rows`` when the collection's paths
    can be routed where they are: every path climbs a butterfly from level 0 to its last level
    (the level paths and Valiant's trick on BF(d)), so all have the same length and hop ``h`` is
    a link of level ``h``; else None.

    The butterfly numbers the link from node ``(i, r)`` climbing to level ``i + 1`` as
    ``4 * (i * 2**d + r)`` or that plus 2 (:func:`universal.networks.butterfly`), so the first
    and last levels' links are ranges of ids.
    """
    net = collection.network
    if net.kind != "butterfly" or net.depth is None or not collection.size:
        return None
    depth, rows = net.depth, 1 << net.params["d"]
    if collection.level_rows is None:     # (kept as rows, the paths are written in this form if read)
        links = collection.links
        if links.ndim != 1 or not (links.flags.c_contiguous and links.flags.writeable
                                   and len(links) == collection.size * depth):
            return None
    # a path of `depth` hops from level 0 to the last level climbs at every hop; none is
    # longer (D = depth) and together they have n * depth hops, so none is shorter
    if collection.dilation != depth or int(collection.offsets[-1] - collection.offsets[0]) != collection.size * depth:
        return None
    if int(collection.sources.max()) >= rows or int(collection.dests.min()) < depth * rows:
        return None
    return 4 * (depth - 1) * rows, 4 * rows


def _all_keys(protocol, state, n: int) -> np.ndarray:
    """Every packet's key under a static priority (packets ``0 .. n - 1``): random rank's are its
    ranks themselves (no gather)."""
    if type(protocol) is RandomRank:
        return state.ranks
    ids = np.arange(n)
    return protocol.keys(state, ids, np.zeros(n, np.int64), np.zeros(n, np.int64))


def _route_rows(collection: PathCollection, keys: np.ndarray, levels: tuple[int, int], bandwidth: int,
                buffer: int | None, limit: int) -> RoutingResult:
    """:func:`route_static` on the collection's own path array (:func:`_run_flat`'s ``rows``),
    without :func:`_lay_out`'s copy in priority order (0.7 GB on BF(20) with Valiant's trick), or
    on the node words from the rows of level paths kept as rows (their path array never written:
    :class:`universal.paths.level_rows.LevelRowsCollection`); ``keys`` are every packet's (all
    have paths)."""
    global WARM
    width = collection.dilation
    words = on_node_words(collection, bandwidth, buffer)
    if words:
        # small batches: sorting by priority and the words in one compiled call
        delivery = np.full(collection.size, -1, dtype=np.int64)
        # (only small batches are routed so: a large one kept as rows does not write its paths for it)
        small = collection.level_rows is None or int(collection.offsets[-1]) < IN_CACHE_HOPS
        done = route_levels_by_keys(collection.links, keys, delivery, collection.congestion, limit, levels[1],
                                    width) if small else None
        if done is not None:
            WARM = True
            (status, step, count, max_buffer, hops), cur = done
            return _result(collection, None, None, np.empty(0, np.int64), delivery, status, step, max_buffer, hops,
                           cur[:count] // width, cur[:count], buffer)
    # ids of 4 bytes from the start (fewer rows than 2^31 link ids): no 8-byte order to narrow
    ids = priority_order(np.arange(len(keys), dtype=np.int32), keys)
    place = np.int32 if int(collection.offsets[-1]) < 2**31 else np.int64      # (the hops: no path array read)
    cur = ids.astype(place, copy=False) * place(width)
    if words:
        # one packet per link and step, buffers that never refuse: the loops of their own
        WARM = True
        delivery = np.full(collection.size, -1, dtype=np.int64)       # every path has its hops
        # level paths kept as rows start the loop from their rows: their path array is never written
        rows = collection.level_rows
        if rows is not None and not (compiled_levels.FROM_ROWS
                                     and row_words_fit(len(rows[1]), rows[0], width, collection.size)):
            rows = None
        status, step, count, max_buffer, hops = route_levels(
            collection.links if rows is None else None, cur, delivery, collection.network.num_links,
            collection.congestion, limit, *levels, width, rows=None if rows is None else rows[1])
    else:
        # every link climbs (an even id), so no edge is used both ways: the state is kept by edge
        state, delivery, bounded, shift = _link_state(collection, bandwidth, buffer, shift=1, narrow=True)
        status, step, count, max_buffer, hops = _run_flat(
            collection.links, ids[:0], cur, delivery, np.empty(0, np.int64), False, state, bandwidth,
            buffer if bounded else 0, bounded, limit, True, shift, *levels, width)
        del state
    waiting = cur[:count] // width
    # where the packets' paths start in the array (read on a deadlock): r -> ids[r] * width
    start = np.append(ids.astype(np.int64) * width, 0) if status == DEADLOCK else None
    return _result(collection, ids, start, np.empty(0, np.int64), delivery, status, step, max_buffer, hops,
                   waiting, cur[:count], buffer)


def _link_state(collection: PathCollection, bandwidth: int, buffer: int | None, shift: int | None = None,
                narrow: bool = False):
    """The per-link state of :func:`_set_up`, the delivery steps, whether the buffers bind and
    the shift from link ids to the state's rows (given, or read from the link loads). With
    ``narrow``, two columns for B = 1 and unbounded buffers (:func:`_run_flat` only)."""
    if shift is None:
        loads = collection.link_loads
        shift = 0 if np.logical_and(loads[0::2], loads[1::2]).any() else 1
    num = collection.network.num_links >> shift
    congestion = collection.congestion
    bounded = buffer is not None and buffer < congestion      # b >= C never binds
    columns = 4 if bounded else 2 if narrow and bandwidth == 1 else 3
    state = np.zeros((num + 1, columns), dtype=_smallest_type(max(congestion, bandwidth)))
    delivery = np.where(collection.lengths == 0, 0, -1).astype(np.int64)
    global WARM
    WARM = True
    return state, delivery, bounded, shift


def _set_up(collection: PathCollection, ids: np.ndarray, bandwidth: int, buffer: int | None, record_hops: bool):
    """What a kernel routes on: the paths of ``ids`` laid out in that order (:func:`_lay_out`,
    the mark the number of links), the per-link state, the delivery steps (0 for empty paths,
    else -1), the hop steps' array and whether the buffers bind.

    The per-link state is indexed by edge (half the memory) when no edge is used both ways. A
    buffer never holds more than the C packets that cross its link, and no more than B packets
    cross a link in a step, so the state's type is the smallest that holds max(C, B); the
    injection row's occupancy runs negative and may wrap, which nothing reads.
    """
    state, delivery, bounded, shift = _link_state(collection, bandwidth, buffer)
    flat, start = _lay_out(collection.links, collection.offsets, ids, shift, len(state) - 1)
    steps_at = np.full(len(flat) if record_hops else 0, -1, dtype=np.int64)
    return flat, start, state, delivery, steps_at, bounded


def _result(collection: PathCollection, ids, start, steps_at, delivery, status, step, max_buffer, hops, waiting, cur,
            buffer) -> RoutingResult:
    """The :class:`RoutingResult` of a kernel's run on :func:`_set_up`'s layout; ``waiting`` are
    the packets still waiting and ``cur`` their positions in the layout."""
    offsets = collection.offsets
    status = _STATUS[status]
    hop_steps = blocked = full_links = None
    if len(steps_at):
        hop_steps = np.full(int(offsets[-1]), -1, dtype=np.int64)
        _scatter_back(steps_at, start, offsets, ids, hop_steps)
    if status == "deadlock":
        waiting, cur = np.asarray(waiting, dtype=np.int64), np.asarray(cur, dtype=np.int64)
        blocked = np.sort(waiting)
        start_of = np.empty(len(offsets) - 1, dtype=np.int64)
        start_of[ids] = start[:-1]
        full_links = np.unique(collection.links[offsets[waiting] + cur - start_of[waiting]]).astype(np.int64)
    return RoutingResult(delivery=delivery, status=status, steps=int(step), max_buffer=int(max_buffer),
                         hops=int(hops), hop_steps=hop_steps, buffer=buffer,
                         deadlock_step=int(step) if status == "deadlock" else None, blocked=blocked,
                         full_links=full_links)
