"""Compiled batch kernels for paths fixed in advance and priorities that change as packets travel
(SPEC §2, §6; Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996,
§2.1 and §4).

:mod:`universal.engine.compiled` sorts the packets once, which only a static priority allows.
Here a key changes when its packet moves (growing rank, FIFO, farthest-to-go, nearest-to-go,
random delay: ``dynamic == "on-move"``) or in every step (``random``: ``"per-step"``), so every
link keeps its contenders in a binary min-heap of ``key << bits | id`` (bits enough for the
largest packet id: the lowest key first, ties to the lower id). A step

1. lets every link with contenders pop its winners: at most B, and with bounded buffers at most
   as many packets that stay in the link's buffer as it had free places at the start of the
   step (a packet that the crossing delivers needs no room, so such packets sit in a heap of
   their own and the two heaps are merged as they pop), exactly the reference's walk down the
   link's sorted contenders (:meth:`universal.engine.reference_core.ReferenceCore.contend`);
2. moves the winners: each leaves its buffer, enters the link's buffer or is delivered, and
   (on-move keys) is pushed with its new key into the heap of its next link.

An on-move step so costs time in proportion to the packets that move and the links that have
contenders, never to the packets that wait. ``random`` draws a fresh key for every waiting
packet in every step, in increasing packet id order, one ``Generator.integers`` call a step
(:meth:`universal.protocols.buffered.RandomEachStep.draw_step_keys`), from the run's generator
itself (numba's ``Generator.integers`` draws numpy's stream), and pushes every waiting packet
afresh. Random delay's packets join their first link's heap in the step after their delay ends.

The results are identical to the numpy one engine's and the reference engine's
(:func:`universal.engine.simulate_reference`) on the same seed (``tests/engine/test_compiled.py``).
Without numba the kernels run as plain Python (correct, slow, never dispatched to).
"""

from __future__ import annotations

import numpy as np

from universal.engine import compiled
from universal.engine.compiled import _STATUS, DEADLOCK, DELIVERED, STEP_LIMIT, njit
from universal.engine.result import RoutingResult
from universal.paths import PathCollection

__all__ = ["RULES", "route_dynamic"]

#: The kernel's code of each protocol class whose keys it computes (on-move), or draws (random).
GROWING, FIFO, FARTHEST, NEAREST, DELAY, RANDOM = range(6)
RULES = {"GrowingRank": GROWING, "Fifo": FIFO, "FarthestToGo": FARTHEST, "NearestToGo": NEAREST,
         "RandomDelay": DELAY, "RandomEachStep": RANDOM}

#: Keys are packed as ``key << bits | id`` in an int64: the largest key and id must fit.
_KEY_BITS = 62


@njit(cache=True, nogil=True)
def _push(heap, base, size, h, value):
    """Push ``value`` onto heap ``h`` (the entries ``heap[base[h]:base[h] + size[h]]``)."""
    b = base[h]
    i = size[h]
    size[h] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        above = heap[b + parent]
        if above <= value:
            break
        heap[b + i] = above
        i = parent
    heap[b + i] = value


@njit(cache=True, nogil=True)
def _pop(heap, base, size, h):
    """Remove and return the smallest entry of heap ``h`` (not empty)."""
    b = base[h]
    top = heap[b]
    n = size[h] - 1
    size[h] = n
    if n == 0:
        return top
    last = heap[b + n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and heap[b + child + 1] < heap[b + child]:
            child += 1
        if heap[b + child] >= last:
            break
        heap[b + i] = heap[b + child]
        i = child
    heap[b + i] = last
    return top


@njit(cache=True, nogil=True)
def _key(rule, packet, hops, arrival, length, rank, K, D):
    """The protocol's key (:meth:`universal.protocols.buffered.Protocol.reference_key`) of a
    packet that has made ``hops`` of its ``length`` hops, the last in step ``arrival`` (0: none)."""
    if rule == GROWING:
        return rank[packet] * D + hops * K
    if rule == FIFO:
        return arrival
    if rule == FARTHEST:
        return D - (length - hops)
    if rule == NEAREST:
        return length - hops
    return rank[packet] if hops == 0 else arrival       # DELAY


@njit(cache=True, nogil=True)
def _enter(heap, base, size, active, isactive, nactive, links, offsets, packet, position, final_heap, value):
    """Push ``packet`` (at ``position`` of the flat paths) onto its link's heap; returns the
    number of active links (the link joins the list if it had no contender)."""
    link = links[position]
    h = 2 * link
    if final_heap and position + 1 == offsets[packet + 1]:
        h += 1
    _push(heap, base, size, h, value)
    if not isactive[link]:
        isactive[link] = True
        active[nactive] = link
        nactive += 1
    return nactive


@njit(cache=True, nogil=True)
def _select(active, nactive, heap, base, size, occupancy, bandwidth, room, bounded, mask, movers, went):
    """Step part 1: every link with contenders pops its winners into ``movers`` (packet ids) and
    ``went`` (their link); returns how many. With bounded buffers a link lets across at most
    ``room`` minus its occupancy at the start of the step of the packets that stay in its buffer
    (heap ``2 link``); those it delivers (heap ``2 link + 1``) need no room."""
    m = 0
    for a in range(nactive):
        link = active[a]
        stay, leave = 2 * link, 2 * link + 1
        free = room - occupancy[link] if bounded else bandwidth
        crossed = 0
        entered = 0
        while crossed < bandwidth:
            take_stay = size[stay] > 0 and entered < free
            take_leave = bounded and size[leave] > 0
            if take_stay and take_leave:
                if heap[base[stay]] < heap[base[leave]]:
                    take_leave = False
                else:
                    take_stay = False
            if take_stay:
                value = _pop(heap, base, size, stay)
                entered += 1
            elif take_leave:
                value = _pop(heap, base, size, leave)
            else:
                break
            movers[m] = value & mask
            went[m] = link
            m += 1
            crossed += 1
    return m


@njit(cache=True, nogil=True)
def _shrink(active, nactive, isactive, size):
    """Drop the links without contenders from the active list; returns its new length."""
    kept = 0
    for a in range(nactive):
        link = active[a]
        if size[2 * link] > 0 or size[2 * link + 1] > 0:
            active[kept] = link
            kept += 1
        else:
            isactive[link] = False
    return kept


@njit(cache=True, nogil=True)
def _cross(step, m, movers, went, links, offsets, position, occupancy, delivery, hop_steps, record):
    """Step part 2: the ``m`` winners cross: each leaves the buffer it sat in and enters its
    link's or is delivered (``went`` then holds -1). Returns ``(delivered, max_buffer)``, the
    latter the fullest buffer a mover entered, at the end of the step."""
    delivered = 0
    for i in range(m):
        packet = movers[i]
        p = position[packet]
        if record:
            hop_steps[p] = step
        if p > offsets[packet]:
            occupancy[links[p - 1]] -= 1
        position[packet] = p + 1
        if p + 1 == offsets[packet + 1]:
            delivery[packet] = step
            delivered += 1
            went[i] = -1
        else:
            occupancy[went[i]] += 1
    fullest = 0
    for i in range(m):
        if went[i] >= 0 and occupancy[went[i]] > fullest:
            fullest = occupancy[went[i]]
    return delivered, fullest


@njit(cache=True, nogil=True)
def _run_on_move(links, offsets, position, joining, release, rule, rank, K, D, delivery, hop_steps, record,
                 heap, base, size, occupancy, bandwidth, room, bounded, limit, bits):
    """The step loop for keys that change only when their packet moves.

    ``joining`` lists the packets with a path, by increasing ``release`` (the step after which
    each may first move); ``position`` is every packet's place in the flat path array ``links``
    (its next link), ``heap``/``base``/``size`` the links' heaps (two a link, see
    :func:`_select`), ``occupancy`` the link buffers. Returns
    ``(status, step, max_buffer, hops, active links)``.
    """
    num = len(occupancy)
    mask = (np.int64(1) << bits) - 1
    active = np.empty(num, dtype=np.int64)
    isactive = np.zeros(num, dtype=np.bool_)
    movers = np.empty(min(num * bandwidth, len(position)), dtype=np.int64)
    went = np.empty(len(movers), dtype=np.int64)
    nactive = 0
    waiting = len(joining)
    joined = 0
    step = 0
    hops = 0
    max_buffer = 0
    status = DELIVERED
    while waiting > 0:
        if step >= limit:
            status = STEP_LIMIT
            break
        step += 1
        while joined < len(joining) and release[joining[joined]] < step:
            packet = joining[joined]
            start = offsets[packet]
            value = _key(rule, packet, 0, 0, offsets[packet + 1] - start, rank, K, D) << bits | packet
            nactive = _enter(heap, base, size, active, isactive, nactive, links, offsets, packet, start, bounded,
                             value)
            joined += 1
        m = _select(active, nactive, heap, base, size, occupancy, bandwidth, room, bounded, mask, movers, went)
        if m == 0 and joined == len(joining):
            status = DEADLOCK
            break
        hops += m
        nactive = _shrink(active, nactive, isactive, size)
        for i in range(m):                 # the next link's heap, with the key after the move
            packet = movers[i]
            p = position[packet]
            length = offsets[packet + 1] - offsets[packet]
            made = p + 1 - offsets[packet]
            if made < length:
                value = _key(rule, packet, made, step, length, rank, K, D) << bits | packet
                nactive = _enter(heap, base, size, active, isactive, nactive, links, offsets, packet, p + 1,
                                 bounded, value)
        delivered, fullest = _cross(step, m, movers, went, links, offsets, position, occupancy, delivery,
                                    hop_steps, record)
        waiting -= delivered
        max_buffer = max(max_buffer, fullest)
    return status, step, max_buffer, hops, nactive


@njit(cache=True, nogil=True)
def _run_per_step(links, offsets, position, waiting, delivery, hop_steps, record, heap, base, size, occupancy,
                  bandwidth, room, bounded, limit, bits, rng):
    """The step loop for ``random``: in every step the packets of ``waiting`` (increasing ids,
    packed in place as they are delivered) draw fresh keys from ``rng`` in that order, one call,
    and join their link's heap afresh. Returns ``(status, step, max_buffer, hops, count)``."""
    num = len(occupancy)
    mask = (np.int64(1) << bits) - 1
    active = np.empty(num, dtype=np.int64)
    isactive = np.zeros(num, dtype=np.bool_)
    movers = np.empty(min(num * bandwidth, len(position)), dtype=np.int64)
    went = np.empty(len(movers), dtype=np.int64)
    count = len(waiting)
    left = count
    step = 0
    hops = 0
    max_buffer = 0
    status = DELIVERED
    while left > 0:
        if step >= limit:
            status = STEP_LIMIT
            break
        step += 1
        fresh = rng.integers(0, 1 << 30, size=left, dtype=np.int64)
        nactive = 0
        kept = 0
        for w in range(count):
            packet = waiting[w]
            if delivery[packet] >= 0:
                continue
            waiting[kept] = packet
            nactive = _enter(heap, base, size, active, isactive, nactive, links, offsets, packet, position[packet],
                             bounded, fresh[kept] << bits | packet)
            kept += 1
        count = kept
        m = _select(active, nactive, heap, base, size, occupancy, bandwidth, room, bounded, mask, movers, went)
        for a in range(nactive):           # the heaps start afresh in the next step
            link = active[a]
            size[2 * link] = 0
            size[2 * link + 1] = 0
            isactive[link] = False
        if m == 0:
            status = DEADLOCK
            break
        hops += m
        delivered, fullest = _cross(step, m, movers, went, links, offsets, position, occupancy, delivery,
                                    hop_steps, record)
        left -= delivered
        max_buffer = max(max_buffer, fullest)
    return status, step, max_buffer, hops, count


def key_bound(protocol, collection: PathCollection, step_limit: int | None) -> int:
    """An upper bound on the keys the kernel computes for ``protocol`` on ``collection`` within
    ``step_limit`` steps (None: no limit), known before anything is drawn (K is the protocol's
    rank range): a run ends when a step moves nothing after the last delay."""
    C, D, n = collection.congestion, max(collection.dilation, 1), collection.size
    K = protocol.rank_range(C, D, n)
    steps = int(collection.lengths.sum()) + K
    if step_limit is not None:
        steps = min(steps, step_limit)
    return {GROWING: 2 * K * D, FIFO: steps, FARTHEST: D, NEAREST: D, DELAY: max(K, steps),
            RANDOM: 1 << 30}[RULES[type(protocol).__name__]]


def fits(protocol, collection: PathCollection, step_limit: int | None) -> bool:
    """Whether the kernel takes ``protocol`` (a rule of :data:`RULES`) on ``collection``: its keys
    and packet ids packed in an int64."""
    if type(protocol).__name__ not in RULES:
        return False
    bits = max(1, (collection.size - 1).bit_length())
    return key_bound(protocol, collection, step_limit).bit_length() + bits <= _KEY_BITS


def route_dynamic(collection: PathCollection, protocol, state, rng: np.random.Generator, *, bandwidth: int,
                  buffer: int | None, limit: int, record_hops: bool) -> RoutingResult:
    """Route a batch on its fixed paths with keys that change as packets travel, compiled.

    Parameters
    ----------
    collection : PathCollection
        The paths; packet ``i`` follows path ``i``. At least one path is not empty.
    protocol : Protocol
        Growing rank, FIFO, farthest-to-go, nearest-to-go, random delay (keys that change when
        their packet moves) or random (fresh keys every step); :func:`fits` holds.
    state : RankState
        What ``protocol.setup`` drew (ranks, delays), as the other engines draw it.
    rng : numpy.random.Generator
        The generator ``state`` came from: ``random`` draws its keys from it.
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
    >>> rng = np.random.default_rng(2)
    >>> p = build_protocol("fifo")
    >>> state = p.setup(rng, paths.lengths, paths.congestion, paths.dilation)
    >>> res = route_dynamic(paths, p, state, rng, bandwidth=1, buffer=None, limit=10**6, record_hops=False)
    >>> res.status, res.hops == int(paths.lengths.sum())
    ('delivered', True)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.
    """
    rule = RULES[type(protocol).__name__]
    links, offsets = collection.links, collection.offsets.astype(np.int64, copy=False)
    lengths = collection.lengths
    n, num = len(lengths), collection.network.num_links
    bounded = buffer is not None and buffer < collection.congestion       # b >= C never binds
    # two heaps a link: the packets that stay in its buffer, and (bounded buffers) those it delivers
    capacity = np.zeros(2 * num, dtype=np.int64)
    capacity[0::2] = collection.link_loads
    nonempty = np.flatnonzero(lengths > 0)
    if bounded:
        capacity[1::2] = np.bincount(links[offsets[nonempty + 1] - 1], minlength=num)
    base = np.zeros(2 * num, dtype=np.int64)
    np.cumsum(capacity[:-1], out=base[1:])
    heap = np.empty(int(capacity.sum()), dtype=np.int64)
    size = np.zeros(2 * num, dtype=np.int64)
    occupancy = np.zeros(num, dtype=np.int64)
    position = offsets[:-1].copy()
    delivery = np.where(lengths == 0, 0, -1).astype(np.int64)
    hop_steps = np.full(len(links) if record_hops else 0, -1, dtype=np.int64)
    bits = max(1, (n - 1).bit_length())
    room = buffer if bounded else 0
    compiled.WARM = True
    if rule == RANDOM:
        waiting = nonempty.astype(np.int64)
        status, step, max_buffer, hops, count = _run_per_step(
            links, offsets, position, waiting, delivery, hop_steps, record_hops, heap, base, size, occupancy,
            bandwidth, room, bounded, limit, bits, rng)
    else:
        release = protocol.release_steps(state)
        release = np.zeros(n, dtype=np.int64) if release is None else release.astype(np.int64)
        joining = nonempty[np.argsort(release[nonempty], kind="stable")].astype(np.int64)
        status, step, max_buffer, hops, _ = _run_on_move(
            links, offsets, position, joining, release, rule, state.ranks.astype(np.int64), int(state.K),
            int(state.D), delivery, hop_steps, record_hops, heap, base, size, occupancy, bandwidth, room, bounded,
            limit, bits)
    status = _STATUS[status]
    blocked = full_links = None
    if status == "deadlock":
        blocked = np.flatnonzero(delivery < 0).astype(np.int64)
        full_links = np.unique(links[position[blocked]]).astype(np.int64)
    return RoutingResult(delivery=delivery, status=status, steps=int(step), max_buffer=int(max_buffer),
                         hops=int(hops), hop_steps=hop_steps if record_hops else None, buffer=buffer,
                         deadlock_step=int(step) if status == "deadlock" else None, blocked=blocked,
                         full_links=full_links)
