"""Compiled batch kernels for paths fixed in advance and priorities that change as packets travel
(SPEC §2, §6; Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996,
§2.1 and §4).

:mod:`universal.engine.compiled` sorts the packets once, which only a static priority allows.
Here a key changes when its packet moves (growing rank, FIFO, farthest-to-go, nearest-to-go,
random delay: ``dynamic == "on-move"``) or in every step (``random``: ``"per-step"``).

Keys that change on moves (:func:`_run_sorted`). The waiting packets are kept in priority order
(the packed key ``key << bits | id``: the lowest key first, ties to the lower id), so that a step
is the static kernel's one pass over them: every packet crosses its link if the link has let
fewer than B across in this step (and, with bounded buffers, if the crossing delivers it or the
link's buffer had room at the start of the step for one more). Only the packets that cross get
new keys: the pass squeezes them out and a merge from the back puts them among the packets
that waited. Growing rank, farthest-to-go and nearest-to-go add a constant (K, 1, -1), which
keeps the movers in the order the pass met them; FIFO and random delay give them the step
(larger than every waiting packet's key: nothing to merge) and ties go to the lower id, so a
radix sort orders them first. Random delay's packets join that sort in the step after their
delay ends, with their delay as the key. The pass prefetches the paths and link state of the
packets ahead of it.

Fresh keys in every step (``random``, :func:`_run_random`). The waiting packets, in increasing
id order, draw their keys in one ``Generator.integers`` call a step from the run's generator
(numba's ``Generator`` draws numpy's stream, so the numpy engine's and the reference's draws are
the kernel's), and one pass keeps every link's best B contenders (with bounded buffers the best
B that stay in its buffer and the best B it delivers, which need no room); the winners of every
link with contenders then cross. With B = 1 and unbounded buffers a link's best key carries a
mark of the step, so that the pass keeps it with a minimum, without a branch.

The results are identical to the numpy one engine's and the reference engine's
(:func:`universal.engine.simulate_reference`) on the same seed (``tests/engine/test_compiled.py``).
Without numba the kernels run as plain Python (correct, slow, never dispatched to). The per-step
kernel and the prefetch intrinsics are in :mod:`universal.engine.compiled_per_step`.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import (DEADLOCK, DELIVERED, STEP_LIMIT, _result, _set_up, _settle, njit,
                                       priority_order)
# the per-step kernel and the prefetches, where route_dynamic and _run_sorted look them up
from universal.engine.compiled_per_step import _CACHED, _PREFETCH, _prefetch, _prefetch_row, _run_random
from universal.engine.result import RoutingResult
from universal.paths import PathCollection

__all__ = ["RULES", "fits", "key_bound", "route_dynamic"]

#: The kernel's code of each protocol class whose keys it computes (on-move), or draws (random).
GROWING, FIFO, FARTHEST, NEAREST, DELAY, RANDOM = range(6)
RULES = {"GrowingRank": GROWING, "Fifo": FIFO, "FarthestToGo": FARTHEST, "NearestToGo": NEAREST,
         "RandomDelay": DELAY, "RandomEachStep": RANDOM}

#: Keys are packed as ``key << bits | id`` in an int64: the largest key and id must fit.
_KEY_BITS = 62
#: Bits of a radix sort digit.
_DIGIT = 11
#: Steps the step marks of :func:`universal.engine.compiled_per_step._best_one` last before they
#: start over (0: as many as the packed keys leave bits for; the tests make it small).
_MARKS = 0
#: A waiting packet's row (:func:`_run_sorted`): its position, buffer, next link and the link after.
_ROW = 4


@njit(cache=True, nogil=True)
def _radix_sort(keys, slots, m, spare_keys, spare_slots, counts):
    """Sort ``keys[:m]`` (distinct) and ``slots[:m]`` with them, least significant digit first;
    returns ``(keys, slots, spare_keys, spare_slots)``, the first two holding the result (each
    pass writes into the spares and swaps)."""
    if m < 2:
        return keys, slots, spare_keys, spare_slots
    low = keys[0]
    high = keys[0]
    for i in range(1, m):
        low = min(low, keys[i])
        high = max(high, keys[i])
    span = high - low
    shift = 0
    digit = (1 << _DIGIT) - 1
    while (span >> shift) > 0:
        counts[:] = 0
        for i in range(m):
            counts[((keys[i] - low) >> shift) & digit] += 1
        total = 0
        for d in range(digit + 1):
            here = counts[d]
            counts[d] = total
            total += here
        for i in range(m):
            d = ((keys[i] - low) >> shift) & digit
            spare_keys[counts[d]] = keys[i]
            spare_slots[counts[d]] = slots[i]
            counts[d] += 1
        keys, spare_keys = spare_keys, keys
        slots, spare_slots = spare_slots, slots
        shift += _DIGIT
    return keys, slots, spare_keys, spare_slots


@njit(cache=True, nogil=True, inline="always")
def _admits(state, link, tag, bandwidth, room, bounded, final):
    """Whether ``link`` lets one more packet across in the step tagged ``tag`` (the first look
    at the link in a step clears its counts): fewer than B crossed, and with bounded buffers the
    crossing delivers the packet or fewer entered the buffer than it had free places."""
    if state[link, 0] != tag:
        state[link, 0] = tag
        state[link, 1] = 0
        if bounded:
            state[link, 3] = 0
    if state[link, 1] >= bandwidth:
        return False
    return not bounded or final or state[link, 3] < room - state[link, 2]


@njit(cache=True, nogil=True)
def _run_sorted(links, start, keys, rows, count, joining, release, fresh, delta, bits, delivery, hop_steps, record,
                state, bandwidth, room, bounded, limit):
    """The step loop for keys that change only when their packet moves.

    ``keys`` and ``rows`` have an entry per packet: its packed key (``key << bits | id``), and
    its position in the flat path array ``links`` (:func:`universal.engine.compiled._lay_out`,
    whose mark is the last row of ``state``), the buffer it sits in, its next link and the one
    after (the mark: crossing the next delivers the packet). The pass prefetches the path of the
    packet :data:`_PREFETCH` rows ahead, which its move would read: packets that move in one step
    are far apart in the paths, and each read would otherwise wait for memory (the prefetch made
    the kernel 1.5 times faster on torus:k=64,n=2). The first ``count`` are the packets that may
    move in step 1, in priority order. ``joining`` lists the other packets by increasing
    ``release`` (random delay: the step after which each may first move). A packet that crosses
    gets the key ``step << bits | id`` (``fresh``: the movers are then radix-sorted) or its key
    plus ``delta`` (they are in order already). ``state`` is the static kernel's per-link state
    (:func:`universal.engine.compiled._run_packed`).

    Returns ``(status, step, count, max_buffer, hops)``, the first ``count`` entries the packets
    still waiting.
    """
    n = len(keys)
    inject = len(state) - 1
    period = np.iinfo(state.dtype).max
    mask = (np.int64(1) << bits) - 1
    went = np.empty(n, dtype=np.int64)
    left = np.empty(n if bounded else 0, dtype=np.int64)
    moving = np.empty((n, _ROW), dtype=rows.dtype)        # the movers' rows and new keys
    moved_keys = np.empty(n, dtype=np.int64)
    slots = np.empty(n, dtype=np.int64)
    spare_keys = np.empty(n, dtype=np.int64)
    spare_slots = np.empty(n, dtype=np.int64)
    counts = np.empty(1 << _DIGIT, dtype=np.int64)
    large = state.nbytes > _CACHED
    joined = 0
    step = 0
    hops = 0
    max_buffer = 0
    status = DELIVERED
    while count > 0 or joined < len(joining):
        if step >= limit:
            status = STEP_LIMIT
            break
        step += 1
        tag = (step - 1) % period + 1
        if tag == 1 and step > 1:       # the tags start over: forget the old ones
            state[:, 0] = 0
        kept = 0
        moved = 0
        candidates = 0
        m = 0
        for w in range(count):
            # the link state of a packet far ahead (where the table does not fit a cache), and the
            # path of a packet ahead, which it reads if it moves: packets that move in one step are
            # far apart in the paths and the table, and each read would otherwise wait for memory
            far = w + 2 * _PREFETCH
            if large and far < count:
                _prefetch_row(state, rows[far, 2])
                _prefetch_row(state, rows[far, 1])
            ahead = w + _PREFETCH
            if ahead < count:
                _prefetch(links, rows[ahead, 0] + 2)
            position = rows[w, 0]
            link = rows[w, 2]
            final = rows[w, 3] == inject
            if not _admits(state, link, tag, bandwidth, room, bounded, final):
                if kept != w:
                    keys[kept] = keys[w]
                    rows[kept, 0] = position
                    rows[kept, 1] = rows[w, 1]
                    rows[kept, 2] = link
                    rows[kept, 3] = rows[w, 3]
                kept += 1
                continue
            if record:
                hop_steps[position] = step
            state[link, 1] += 1         # as in the static kernel's loops, written out for speed
            moved += 1
            if bounded:
                left[moved - 1] = rows[w, 1]
                went[moved - 1] = ~link if final else link
                if not final:
                    state[link, 3] += 1
            else:
                state[rows[w, 1], 2] -= 1
                if not final:
                    state[link, 2] += 1
                    if state[link, 2] > max_buffer:
                        went[candidates] = link
                        candidates += 1
            if final:
                delivery[keys[w] & mask] = step
                continue
            key = (step << bits | (keys[w] & mask)) if fresh else keys[w] + delta
            moving[m, 0] = position + 1
            moving[m, 1] = link
            moving[m, 2] = rows[w, 3]
            moving[m, 3] = links[position + 2]
            moved_keys[m] = key
            slots[m] = m
            m += 1
        hops += moved
        if moved == 0 and joined == len(joining):
            status = DEADLOCK
            break
        max_buffer = _settle(state, moved, left, went, candidates, bounded, max_buffer)
        # the packets whose delay ends now may move in the next step, their delay as the key
        while joined < len(joining) and release[joining[joined]] <= step:
            packet = joining[joined]
            moving[m, 0] = start[packet]
            moving[m, 1] = inject
            moving[m, 2] = links[start[packet]]
            moving[m, 3] = links[start[packet] + 1]
            moved_keys[m] = release[packet] << bits | packet
            slots[m] = m
            m += 1
            joined += 1
        if fresh:       # a constant added to the keys keeps the pass's order: no sort then
            moved_keys, slots, spare_keys, spare_slots = _radix_sort(moved_keys, slots, m, spare_keys, spare_slots,
                                                                     counts)
        # merge from the back: the movers among the packets that waited, all in key order
        out = kept + m - 1
        i = kept - 1
        for j in range(m - 1, -1, -1):
            while i >= 0 and keys[i] > moved_keys[j]:
                keys[out] = keys[i]
                rows[out, 0] = rows[i, 0]
                rows[out, 1] = rows[i, 1]
                rows[out, 2] = rows[i, 2]
                rows[out, 3] = rows[i, 3]
                out -= 1
                i -= 1
            slot = slots[j]
            keys[out] = moved_keys[j]
            rows[out, 0] = moving[slot, 0]
            rows[out, 1] = moving[slot, 1]
            rows[out, 2] = moving[slot, 2]
            rows[out, 3] = moving[slot, 3]
            out -= 1
        count = kept + m
    return status, step, count, max_buffer, hops


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


def route_dynamic(collection: PathCollection, protocol, drawn, rng: np.random.Generator, *, bandwidth: int,
                  buffer: int | None, limit: int, record_hops: bool) -> RoutingResult:
    """Route a batch on its fixed paths with keys that change as packets travel, compiled.

    Parameters
    ----------
    collection, bandwidth, buffer, limit, record_hops
        As :func:`universal.engine.compiled.route_static`.
    protocol : Protocol
        Growing rank, FIFO, farthest-to-go, nearest-to-go, random delay (keys that change when
        their packet moves) or random (fresh keys every step); :func:`fits` holds.
    drawn : RankState
        What ``protocol.setup`` drew (ranks, delays), as the other engines draw it.
    rng : numpy.random.Generator
        The generator ``drawn`` came from: ``random`` draws its keys from it.

    Returns
    -------
    RoutingResult
        As :func:`universal.engine.batch.simulate` returns it.

    Examples
    --------
    FIFO and random on a ring of four nodes whose links buffer one packet each: every packet
    goes three hops clockwise, and the four of them lock.

    >>> from universal.networks import build_network
    >>> from universal.protocols import build_protocol
    >>> paths = PathCollection.from_node_paths(build_network("torus:k=4,n=1"),
    ...                                        [[i, (i + 1) % 4, (i + 2) % 4, (i + 3) % 4] for i in range(4)])
    >>> for name in ("fifo", "random"):
    ...     rng = np.random.default_rng(0)
    ...     p = build_protocol(name)
    ...     drawn = p.setup(rng, paths.lengths, paths.congestion, paths.dilation)
    ...     res = route_dynamic(paths, p, drawn, rng, bandwidth=1, buffer=1, limit=100, record_hops=False)
    ...     print(name, res.status, res.steps, res.blocked.tolist())
    fifo deadlock 2 [0, 1, 2, 3]
    random deadlock 2 [0, 1, 2, 3]

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.
    """
    rule = RULES[type(protocol).__name__]
    lengths = collection.lengths
    n = len(lengths)
    ids = np.flatnonzero(lengths > 0)
    # the paths in id order
    flat, start, state, delivery, steps_at, bounded = _set_up(collection, ids, bandwidth, buffer, record_hops)
    num = len(state) - 1
    bits = max(1, (n - 1).bit_length())
    room = buffer if bounded else 0
    if rule == RANDOM:
        width = min(bandwidth, collection.congestion)
        # one winner a link and no buffer to mind (:func:`universal.engine.compiled_per_step._best_one`):
        # the best key, with a mark of the step above it so that stale keys lose without a test, and
        # the buffer's occupancy
        single = width == 1 and not bounded
        best = np.full((num + 1, 2 if single else (2 * width if bounded else width)), np.iinfo(np.int64).max,
                       dtype=np.int64)
        if single:
            best[:, 1] = 0
        waiting, cur = ids.copy(), start[:-1].copy()
        status, step, count, max_buffer, hops = _run_random(flat, waiting, cur, delivery, steps_at, record_hops,
                                                            state, best, single, bandwidth, room, bounded, limit, bits,
                                                            rng, _MARKS)
        waiting, cur = waiting[:count], cur[:count]
    else:
        start_of = np.zeros(n, dtype=np.int64)
        start_of[ids] = start[:-1]
        release = protocol.release_steps(drawn)
        release = np.zeros(n, dtype=np.int64) if release is None else release.astype(np.int64)
        K, D, ranks, length = int(drawn.K), int(drawn.D), drawn.ranks.astype(np.int64), lengths[ids]
        first = {GROWING: ranks[ids] * D, FIFO: 0 * length, FARTHEST: D - length, NEAREST: length,
                 DELAY: release[ids]}[rule]
        now = release[ids] == 0
        order = priority_order(ids[now], first[now])
        count = len(order)
        keys = np.empty(len(ids), dtype=np.int64)
        keys[:count] = first[now][np.searchsorted(ids[now], order)] << bits | order
        rows = np.empty((len(ids), _ROW), dtype=np.int32 if len(flat) < 2**31 else np.int64)
        rows[:count, 0] = start_of[order]
        rows[:count, 1] = num
        rows[:count, 2] = flat[start_of[order]]
        rows[:count, 3] = flat[start_of[order] + 1]
        later = ids[~now]
        joining = later[np.argsort(release[later], kind="stable")]
        delta = {GROWING: K, FARTHEST: 1, NEAREST: -1}.get(rule, 0) << bits
        status, step, count, max_buffer, hops = _run_sorted(
            flat, start_of, keys, rows, count, joining, release, rule in (FIFO, DELAY), delta, bits, delivery,
            steps_at, record_hops, state, bandwidth, room, bounded, limit)
        waiting, cur = keys[:count] & ((1 << bits) - 1), rows[:count, 0]
    return _result(collection, ids, start, steps_at, delivery, status, step, max_buffer, hops, waiting, cur, buffer)
