"""The one engine's batch case for a static priority in numpy: paths fixed in advance, random
rank or longest-in-system, below the compiled kernels' threshold (SPEC §2; Meyer auf der Heide
& Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.1).

This is the vectorised twin of :func:`universal.engine.compiled.route_static` (the same rules,
the same results): a static priority never changes while a packet travels, so the packets are
sorted once and the waiting ones stay in that order for the whole run, here lowest priority
first. A waiting packet is four entries of four arrays in that order: its id, the place of its
next hop in the collection's flat link array, that link, and the buffer it sits in; a step
reads and writes them at the movers' places (increasing, so through memory in order) and reads
the path array once per mover, for the next link. Unlike the kernel, the paths are not laid out
again in priority order: in numpy, building that copy cost as much as routing on it saved.

A step is one set of vectorised operations over the waiting packets (as the retired batch
engine, ``universal/engine/fast.py`` until commit 96407e7, did for static keys, one array
indirection less): one scatter of positions into a per-link scratch array leaves there the last,
i.e. highest-priority, contender of every link (:func:`universal.engine.contention.winners`),
and one gather tells each packet whether it won; with bounded buffers the free places are read
for the links that entering packets want only. Nothing per link of the network is cleared or
scanned, so a step costs time proportional to the waiting packets.

:func:`universal.engine.batch.simulate` hands a batch here when the priority is static, the
links have one virtual channel and no compiled kernel runs; ``tests/engine/test_static_numpy.py``
checks it field by field against the reference engine and the general numpy engine
(:mod:`universal.engine.runs`).
"""

from __future__ import annotations

import numpy as np

from universal.engine.contention import _KEEPS_LAST, last_per_link, winners, winners_at
from universal.engine.result import RoutingResult
from universal.paths import PathCollection

__all__ = ["lowest_first", "route_static_numpy"]


def lowest_first(ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``ids`` (increasing) sorted lowest priority first: by (key, id), largest first.

    Keys spanning less than 2^15 are sorted as int16 with a stable argsort (a radix sort).

    Parameters
    ----------
    ids : ndarray of int64
        Packet ids, increasing.
    keys : ndarray of int64
        Their keys; the lowest key has the highest priority, ties to the lower id.

    Returns
    -------
    ndarray of int64

    Examples
    --------
    >>> lowest_first(np.array([0, 1, 2, 5]), np.array([3, 1, 3, 0])).tolist()
    [2, 0, 1, 5]
    """
    if not len(keys):
        return ids
    low, high = int(keys.min()), int(keys.max())
    if high == low:               # longest-in-system in a batch: every key is 0, the ids decide
        return ids[::-1].copy()
    if high - low < 2**15:
        order = np.argsort((keys - low).astype(np.int16), kind="stable")
    else:
        order = np.argsort(keys, kind="stable")
    return ids[order[::-1]]


def _bounded_single(want: np.ndarray, final_at, occupancy: np.ndarray, buffer: int, scratch: np.ndarray,
                    arange: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """Mask of the waiting packets (lowest priority first) that cross when B = 1 and buffers
    hold ``buffer`` packets.

    Taking contenders in priority order, the first that is delivered by the crossing or finds
    room crosses. So a link's top contender crosses unless it would enter a full buffer; then no
    contender may enter, and the top one among those delivered by the crossing crosses, if any.
    ``final_at(positions)`` says which of the waiting packets cross their last link; ``marks``
    is a per-link boolean scratch array, all False, left all False.
    """
    ranked = arange[:len(want)]
    if _KEEPS_LAST:                         # last_per_link(), written out
        scratch[want] = ranked
        win = scratch.take(want) == ranked
    else:  # pragma: no cover - not seen with numpy 1.x or 2.x
        win = last_per_link(want, ranked, scratch)
    top = win.nonzero()[0]
    link = want.take(top)
    # A top contender is blocked if its link's buffer is full and the crossing does not deliver
    # it. Most links have one contender, so the top ones are most of the waiting packets: test
    # the buffers first, then only the few at full ones for delivery (a fifth less time for
    # bounded random rank on BF(14), h = 4).
    blocked = (occupancy.take(link) >= buffer).nonzero()[0]
    if len(blocked):
        blocked = blocked[~final_at(top.take(blocked))]
    if not len(blocked):
        return win
    win[top.take(blocked)] = False
    full = link.take(blocked)
    marks[full] = True
    waiting = marks.take(want).nonzero()[0]   # every contender of a full link (increasing)
    marks[full] = False
    delivered = waiting[final_at(waiting)]
    if len(delivered):
        win[delivered[last_per_link(want.take(delivered), delivered, scratch)]] = True
    return win


def _bounded(want: np.ndarray, final: np.ndarray, occupancy: np.ndarray, bandwidth: int, buffer: int,
             scratch: np.ndarray) -> np.ndarray:
    """:func:`_bounded_single` for any B: a contender may cross if it is delivered by the
    crossing (``final``) or is among the ``buffer - occupancy[link]`` highest-priority
    contenders that would enter the link's buffer; of those, the B of highest priority cross."""
    admissible = final.copy()
    entering = np.flatnonzero(~final)
    room = buffer - np.take(occupancy, np.take(want, entering)).astype(np.int64)
    has_room = room > 0
    left, room = entering[has_room], room[has_room]
    for j in range(min(bandwidth, buffer)):  # more than B could not cross anyway
        if not len(left):
            break
        top = last_per_link(np.take(want, left), left, scratch)
        admissible[left[top]] = True
        rest = ~top & (room > j + 1)
        left, room = left[rest], room[rest]
    positions = np.flatnonzero(admissible)
    win = np.zeros(len(want), dtype=bool)
    if len(positions):
        win[positions[winners_at(want, positions, bandwidth, scratch)]] = True
    return win


def route_static_numpy(collection: PathCollection, protocol, state, *, bandwidth: int, buffer: int | None,
                       limit: int, record_hops: bool) -> RoutingResult:
    """Route a batch on its fixed paths with a static priority, vectorised in numpy.

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
        The link-buffer size b >= 1 (None: unbounded).
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
    >>> res = route_static_numpy(paths, p, state, bandwidth=1, buffer=None, limit=10**6, record_hops=False)
    >>> res.status, res.hops == int(paths.lengths.sum())
    ('delivered', True)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.1.
    """
    lengths = collection.lengths
    ids = np.flatnonzero(lengths > 0)
    zeros = np.zeros(len(ids), np.int64)
    ids = lowest_first(ids, protocol.keys(state, ids, zeros, zeros))
    # per-link state by edge (half the memory) when no edge is used both ways
    loads = collection.link_loads
    shift = 0 if np.logical_and(loads[0::2], loads[1::2]).any() else 1
    num = collection.network.num_links >> shift
    links, offsets = collection.links, collection.offsets
    is_last = np.zeros(len(links) + 1, dtype=bool)     # whether a place is its path's last hop
    is_last[offsets[ids + 1] - 1] = True
    # A buffer never holds more than the C packets that cross its link: the smallest type that
    # holds C keeps the occupancy, updated at random places every step, in cache. The injection
    # buffers' entry (the last) runs negative and may wrap; it is zeroed after every update.
    congestion = collection.congestion
    count_type = next(t for t in (np.int8, np.int16, np.int32, np.int64) if congestion < np.iinfo(t).max)
    occupancy = np.zeros(num + 1, dtype=count_type)
    one = count_type(1)           # a matching scalar keeps ufunc.at on its fast path
    position_type = np.uint16 if len(ids) <= 2**16 else np.int32
    scratch = np.empty(num, dtype=position_type)
    arange = np.arange(len(ids), dtype=position_type)
    bounded = buffer is not None and buffer < congestion      # b >= C never binds
    marks = np.zeros(num, dtype=bool) if bounded and bandwidth == 1 else None
    delivery = np.where(lengths == 0, 0, -1).astype(np.int64)
    hop_steps = np.full(len(links), -1, dtype=np.int64) if record_hops else None
    shortest = int(lengths[ids].min())

    # The waiting packets, lowest priority first: their ids, the place of the next hop in the
    # collection's flat link array, that link (shifted), and the buffer the packet sits in (num:
    # the injection buffers).
    waiting = ids
    cur = offsets[ids]
    want = (np.take(links, cur) >> shift).astype(np.int64)
    sits = np.full(len(ids), num, dtype=np.int64)
    step = hops = max_buffer = 0
    status = "delivered"
    subtract_at, add_at = np.subtract.at, np.add.at
    single = not bounded and bandwidth == 1 and _KEEPS_LAST
    while len(cur):
        if step >= limit:
            status = "step-limit"
            break
        step += 1
        # (array methods rather than numpy's functions: on small batches the calls are the cost)
        if single:          # winners(), written out
            ranked = arange[:len(want)]
            scratch[want] = ranked
            win = scratch.take(want) == ranked
        elif not bounded:
            win = winners(want, bandwidth, scratch, arange)
        else:
            def final_at(positions: np.ndarray) -> np.ndarray:
                return is_last.take(cur.take(positions))

            if bandwidth == 1:
                win = _bounded_single(want, final_at, occupancy, buffer, scratch, arange, marks)
            else:
                win = _bounded(want, final_at(arange[:len(want)]), occupancy, bandwidth, buffer, scratch)
        at = win.nonzero()[0]
        if not len(at):
            status = "deadlock"
            break
        position = cur.take(at)
        crossed = want.take(at)
        if record_hops:
            hop_steps[position] = step
        hops += len(at)
        subtract_at(occupancy, sits.take(at), one)
        # no packet is delivered before it has crossed its whole path: skip the test until then
        any_done = step >= shortest and bool((done := is_last.take(position)).any())
        entered = crossed[~done] if any_done else crossed
        add_at(occupancy, entered, one)
        occupancy[num] = 0
        if len(entered):
            # Every buffer reached its current size when last entered. A SIMD max over small
            # integers costs far less per entry than a gather, unless the network dwarfs the movers.
            top = occupancy.max() if num < 32 * len(entered) else occupancy.take(entered).max()
            if top > max_buffer:
                max_buffer = int(top)
        cur += win
        # the last link's successor is another path's link (or past the end): cut off below
        upcoming = links.take(position + 1, mode="clip")
        want[at] = upcoming >> shift if shift else upcoming
        sits[at] = crossed
        if any_done:
            finished = at[done]
            delivery[waiting.take(finished)] = step
            keep = np.ones(len(cur), dtype=bool)
            keep[finished] = False
            keep = keep.nonzero()[0]      # an index array: gathers beat boolean compression
            cur, want, sits, waiting = cur.take(keep), want.take(keep), sits.take(keep), waiting.take(keep)

    blocked = full_links = None
    if status == "deadlock":
        blocked = np.sort(waiting)
        full_links = np.unique(np.take(links, cur)).astype(np.int64)
    return RoutingResult(delivery=delivery, status=status, steps=int(step), max_buffer=int(max_buffer),
                         hops=int(hops), hop_steps=hop_steps, buffer=buffer,
                         deadlock_step=int(step) if status == "deadlock" else None, blocked=blocked,
                         full_links=full_links)
