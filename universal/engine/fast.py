"""The vectorized batch engine for paths fixed in advance (SPEC §2; Meyer auf der Heide &
Scheideler, "Communication in Parallel Systems", §2.1 and §2.4).

It stays the default of :func:`universal.engine.simulate` until the one engine
(:func:`universal.engine.batch.simulate`, every protocol on :mod:`universal.engine.runs`, the same
results) is as fast on the largest butterflies (issue 23; ``benchmarks/one_engine.py``).

Design: the waiting packets are kept in two arrays sorted by priority, lowest priority first:
``order`` (their slots, see below) and ``want`` (the link each waits for). Every packet waits for
exactly one link, so one scatter of positions into a per-link array leaves there the last, i.e.
highest-priority, contender of every link, and one gather tells each packet whether it won.
What else a packet carries (its position in the flat path array, the buffer it sits in, where its
path ends) is kept by *slot* and touched for the movers only, so a step costs time proportional
to the waiting packets, never to the network: the per-link scratch array is never cleared (a step
reads only entries it just wrote), and buffer room is read for the links that entering packets
want. Static rules (random rank) number the slots in priority order, so their waiting slots stay
increasing and per-slot gathers run through memory in order, which matters once a million
packets no longer fit in cache.

Priorities are 64-bit sort keys ``key << bits | slot``, so one ``np.sort`` of plain integers (a
SIMD sort, several times faster than an argsort) orders packets by (key, id) and yields their
slots with a mask. Keys that change when a packet moves (growing rank, FIFO, ...) are re-keyed
for the movers only and sorted back in; the ``random`` rule's fresh keys order the waiting
packets (kept by id) through the same sort. Index arrays stay int64 (numpy's native index type:
scatters, gathers and ``ufunc.at`` convert any other index type anew on every call); per-link
arrays use small types (positions in uint16/int32, buffer counts in the smallest type that holds
C) so that they stay in cache.
"""

from __future__ import annotations

import numpy as np

from universal.engine.bufferless import simulate_bufferless
from universal.engine.contention import last_per_link, winners, winners_at
from universal.engine.result import RoutingResult
from universal.errors import UserError
from universal.paths import PathCollection
from universal.protocols import Protocol, build_protocol


def _bounded_winners(want: np.ndarray, final: np.ndarray, occupancy: np.ndarray, bandwidth: int, buffer: int,
                     scratch: np.ndarray) -> np.ndarray:
    """Mask of the packets that cross when buffers hold ``buffer`` packets.

    A contender may cross if it is delivered by the crossing (``final``) or is among the
    ``buffer - occupancy[link]`` highest-priority contenders that would enter the link's buffer;
    of those, the B of highest priority cross. This is the same as taking contenders in priority
    order and letting one across while fewer than B crossed and (it is delivered or fewer than
    the free places were filled). Boolean masks keep every set in priority order, so no set
    operation (sort, union) is needed, and only the links entering packets want are read.
    """
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


def _bounded_single_winners(want: np.ndarray, final_at, occupancy: np.ndarray, buffer: int, scratch: np.ndarray,
                            arange: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """:func:`_bounded_winners` for B = 1, reading what it needs for the contended links only.

    Taking contenders in priority order, the first that is delivered by the crossing or finds
    room crosses. So a link's top contender (the unbounded winner) crosses unless it would enter
    a full buffer; then no contender may enter, and the top one among those delivered by the
    crossing crosses, if any. ``final_at(positions)`` says which entries cross their last link;
    ``marks`` is a per-link boolean scratch array, all False, left all False.
    """
    win = last_per_link(want, arange[:len(want)], scratch)
    top = np.flatnonzero(win)
    link = np.take(want, top)
    blocked = ~final_at(top) & (np.take(occupancy, link) >= buffer)
    if not blocked.any():
        return win
    win[top[blocked]] = False
    full = link[blocked]
    marks[full] = True
    waiting = np.flatnonzero(np.take(marks, want))  # every contender of a full link (increasing)
    marks[full] = False
    delivered = waiting[final_at(waiting)]
    if len(delivered):
        win[delivered[last_per_link(np.take(want, delivered), delivered, scratch)]] = True
    return win


def _slot_shift(collection: PathCollection) -> int:
    """1 if per-link state can be indexed by edge (link >> 1), else 0.

    When no edge is used in both directions (leveled collections such as the butterfly's),
    a link and its edge are interchangeable, and indexing by edge halves the per-link arrays,
    which then stay in cache better.
    """
    loads = collection.link_loads
    return 0 if np.logical_and(loads[0::2], loads[1::2]).any() else 1


def _id_bits(n: int) -> int:
    """Bits that hold a packet id below ``n``: sort keys are ``key << bits | id``."""
    return max(1, (n - 1).bit_length())


def _sorted_ids(keys: np.ndarray, bits: int) -> np.ndarray:
    """Ids of sort keys ``key << bits | id``, lowest priority (largest key, then id) first."""
    return np.sort(keys)[::-1] & ((1 << bits) - 1)


def _step_priority(rng: np.random.Generator, protocol: Protocol, count: int, bits: int) -> np.ndarray:
    """Positions of ``count`` waiting packets (kept by id) lowest priority first, from fresh keys.

    The keys are drawn in increasing packet id order, which is the waiting packets' order.
    """
    fresh = protocol.draw_step_keys(rng, count)
    return _sorted_ids((fresh << bits) | np.arange(count, dtype=np.int64), bits)


def _admit(new: np.ndarray, keys: np.ndarray, ids: np.ndarray, protocol: Protocol, state, arrival: np.ndarray,
           links: np.ndarray, cursor: np.ndarray, shift: int, bits: int, want_by_slot: np.ndarray):
    """Sort the slots ``new``, whose delay just ended, in among the waiting ones (an on-move
    rule's keys); return the new (keys, order, want)."""
    primary = protocol.keys(state, ids[new], np.zeros(len(new), np.int64), arrival[new])
    want_by_slot[new] = np.take(links, np.take(cursor, new)) >> shift
    keys = np.sort(np.concatenate([keys, (primary << bits) | new]))[::-1]
    order = keys & ((1 << bits) - 1)
    return keys, order, np.take(want_by_slot, order)


def simulate(collection: PathCollection, protocol: str | Protocol, rng: np.random.Generator, *,
             bandwidth: int = 1, buffer: int | None = None, step_limit: int | None = None,
             record_hops: bool = False) -> RoutingResult:
    """Route every packet of ``collection`` along its path with a buffered protocol.

    Bufferless protocols (trial-and-failure, duplication) are handed to
    :func:`universal.engine.bufferless.simulate_bufferless`.

    Parameters
    ----------
    collection : PathCollection
        The paths; packet ``i`` follows path ``i``.
    protocol : str or Protocol
        A buffered protocol (``random-rank``, ``growing-rank``, ``fifo``, ...).
    rng : numpy.random.Generator
        Source of the protocol's random ranks / keys.
    bandwidth : int
        B, packets a link forwards per step.
    buffer : int, optional
        b, the size of every link buffer (default unbounded). A packet may enter a buffer only
        if it had room at the start of the step: per link, the contenders are taken in priority
        order and one is let across if fewer than B have crossed and either it crosses its last
        link or fewer than the free places have been filled. A step that moves no packet ends the
        run with status ``"deadlock"``.
    step_limit : int, optional
        Stop after this many steps (default: the total number of hops, which a run never needs,
        since every step before the end moves at least one packet).
    record_hops : bool
        Also return the step in which every hop was made (``RoutingResult.hop_steps``,
        aligned with ``collection.links``), for checking invariants and tracing.

    Returns
    -------
    RoutingResult

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import butterfly
    >>> from universal.workloads import build_problem
    >>> from universal.paths import route_paths
    >>> net = butterfly(4)
    >>> prob = build_problem("permutation:bit-reversal", net, np.random.default_rng(0))
    >>> paths = route_paths("dimension-order", prob, net, np.random.default_rng(0))
    >>> res = simulate(paths, "random-rank", np.random.default_rng(0))
    >>> res.status, res.T >= max(paths.congestion, paths.dilation)
    ('delivered', True)
    """
    protocol = build_protocol(protocol)
    if bandwidth < 1:
        raise ValueError("bandwidth must be >= 1")
    if buffer is not None and buffer < 1:
        raise ValueError("buffer must be >= 1 (or None for unbounded buffers)")
    if protocol.bufferless:
        return simulate_bufferless(collection, protocol, rng, bandwidth=bandwidth, step_limit=step_limit,
                                   record_hops=record_hops)
    n = collection.size
    lengths = collection.lengths
    state = protocol.setup(rng, lengths, collection.congestion, collection.dilation)
    # Packets with a release step r (random-delay, an on-move rule) join the waiting ones at step r + 1.
    release = protocol.release_steps(state)
    if release is not None and protocol.dynamic != "on-move":
        raise TypeError(f"{protocol.name}: release steps need keys that change on moves")
    latest = int(release.max()) if release is not None and n else 0
    limit = int(lengths.sum()) + latest if step_limit is None else int(step_limit)
    bits = _id_bits(max(n, 1))
    if (protocol.max_key(state) + 1) << bits >= 2**63:
        raise UserError(f"{protocol.name}: keys for {n:,} packets would overflow 64-bit sort keys; use a smaller K")

    delivery = np.full(n, -1, dtype=np.int64)
    delivery[lengths == 0] = 0
    mask = (1 << bits) - 1
    # Packets get *slots*: slot s holds packet ids[s], and per-packet state is kept by slot.
    # Static rules number the slots in priority order, so the waiting slots stay increasing and
    # every gather by slot runs through memory in order; the others number them by packet id,
    # so that a tie between keys, broken by id, is broken by slot.
    ids = np.flatnonzero(lengths > 0)
    if protocol.dynamic == "static":
        primary = protocol.keys(state, ids, np.zeros(len(ids), np.int64), np.zeros(len(ids), np.int64))
        ids = np.sort((primary << bits) | ids)[::-1] & mask
    order = np.arange(len(ids), dtype=np.int64)  # the waiting slots, lowest priority first
    shift = _slot_shift(collection)
    links, num_links = collection.links, collection.network.num_links >> shift
    # By slot: first and current position in the flat path array, path end, and the buffer the
    # packet sits in (``num_links`` stands for the injection buffers, so leaving them needs no
    # special case).
    first = collection.offsets[ids]
    cursor = first.copy()
    end = first + lengths[ids]
    prev = np.full(len(ids), num_links, dtype=np.int64)
    arrival = keys = want_by_slot = None
    if protocol.dynamic == "on-move":
        arrival = np.zeros(len(ids), dtype=np.int64)
        primary = protocol.keys(state, ids, np.zeros(len(ids), np.int64), arrival)
        keys = np.sort((primary << bits) | order)[::-1]
        order = keys & mask
    pending = order[:0]  # slots still held back by their delay, by release step
    if release is not None:
        held = release[ids] > 0
        pending = np.flatnonzero(held)
        pending = pending[np.argsort(release[ids[pending]], kind="stable")]
        pending_release = release[ids[pending]]
        keys = keys[~held[order]]
        order = keys & mask
    want = (np.take(links, np.take(cursor, order)) >> shift).astype(np.int64)
    if protocol.dynamic == "on-move":
        want_by_slot = np.zeros(len(ids), dtype=np.int64)
        want_by_slot[order] = want

    # A buffer never holds more packets than cross its link (<= C): the smallest integer type
    # that holds C keeps the occupancy array, updated at random places every step, in cache.
    count_type = next(t for t in (np.int8, np.int16, np.int32) if collection.congestion < np.iinfo(t).max)
    occupancy = np.zeros(num_links + 1, dtype=count_type)
    # The scratch array holds positions among the waiting packets and is written at random
    # places every step: the smallest type that holds them keeps it in cache.
    position_type = np.uint16 if n <= 2**16 else np.int32
    scratch = np.empty(num_links, dtype=position_type)
    arange = np.arange(n, dtype=position_type)
    one = count_type(1)  # a matching scalar keeps ufunc.at on its fast path

    hop_steps = np.full(len(links), -1, dtype=np.int64) if record_hops else None
    blocked = full_links = None
    shortest = int(lengths[lengths > 0].min()) if n and lengths.any() else 0
    # A buffer never holds more than the C packets that cross its link, so b >= C never binds.
    bounded = buffer is not None and buffer < collection.congestion
    marks = np.zeros(num_links, dtype=bool) if bounded else None
    step = 0
    max_buffer = 0
    hops_done = 0
    status = "delivered"
    while len(order) or len(pending):
        if step >= limit:
            status = "step-limit"
            break
        step += 1
        if len(pending) and pending_release[0] < step:
            count = int(np.searchsorted(pending_release, step))
            keys, order, want = _admit(pending[:count], keys, ids, protocol, state, arrival, links, cursor, shift,
                                       bits, want_by_slot)
            pending, pending_release = pending[count:], pending_release[count:]
        # ``rank`` lists the waiting positions lowest priority first (None: they already are).
        rank = _step_priority(rng, protocol, len(order), bits) if protocol.dynamic == "per-step" else None
        ranked = want if rank is None else np.take(want, rank)
        if not bounded:
            win = winners(ranked, bandwidth, scratch, arange)
        else:
            slots = order if rank is None else np.take(order, rank)  # the slot at every ranked position

            def final_at(positions: np.ndarray) -> np.ndarray:
                at_slots = np.take(slots, positions)
                return np.take(end, at_slots) - np.take(cursor, at_slots) == 1

            if bandwidth == 1:
                win = _bounded_single_winners(ranked, final_at, occupancy, buffer, scratch, arange, marks)
            else:
                win = _bounded_winners(ranked, final_at(arange[:len(ranked)]), occupancy, bandwidth, buffer,
                                       scratch)
        at = np.flatnonzero(win)
        if rank is not None:
            at = np.sort(rank[at])
            win = np.zeros(len(order), dtype=bool)
            win[at] = True
        if not len(at) and len(pending):
            continue  # nothing released can move yet; a later release may still
        if not len(at):
            status = "deadlock"
            blocked = np.sort(ids[order])
            full_links = np.unique(np.take(links, np.take(cursor, order))).astype(np.int64)
            break
        movers = np.take(order, at)
        crossed = np.take(want, at)
        left_from = np.take(prev, movers)
        position = np.take(cursor, movers) + 1
        if hop_steps is not None:
            hop_steps[position - 1] = step
        hops_done += len(at)
        # No packet can arrive before it has crossed its whole path: skip the test until then.
        any_done = step >= shortest and bool((done := position == np.take(end, movers)).any())
        if any_done:
            going = np.flatnonzero(~done)
            delivery[ids[movers[done]]] = step
            on, stay, next_position, entered = (np.take(at, going), np.take(movers, going), np.take(position, going),
                                                np.take(crossed, going))
        else:  # before the first arrivals (most steps), skip the compressions
            on, stay, next_position, entered = at, movers, position, crossed

        # Link-buffer occupancy: movers leave the buffer they sat in and, unless delivered,
        # enter the buffer of the link they crossed.
        np.subtract.at(occupancy, left_from, one)
        np.add.at(occupancy, entered, one)
        if len(entered):
            # Every buffer reached its current size when last entered, so the maximum over all
            # link buffers equals the running maximum over entered ones. A SIMD max over small
            # integers is ~10x cheaper per entry than a gather, unless the network dwarfs the
            # movers. The injection slot (last) is left out: its count runs negative and may wrap.
            if num_links < 32 * len(entered):
                max_buffer = max(max_buffer, int(occupancy[:num_links].max()))
            else:
                max_buffer = max(max_buffer, int(np.take(occupancy, entered).max()))

        cursor[stay] = next_position
        prev[stay] = entered
        # Shifting the movers' links here costs less than shifting every hop's link up front.
        next_want = np.take(links, next_position) >> shift
        if protocol.dynamic == "on-move":
            arrival[movers] = step
            new_keys = protocol.keys(state, ids[stay], next_position - first[stay], arrival[stay])
            want_by_slot[stay] = next_want
            # The movers take their new keys in place; delivered ones get -1, which sorts last
            # (lowest priority first is descending order) and is cut off. One sort of the whole
            # array costs less than compressing the others out and merging.
            if any_done:
                keys[at[done]] = -1
            keys[on] = (new_keys << bits) | stay
            keys = np.sort(keys)[::-1][:len(keys) - (len(at) - len(on))]
            order = keys & mask
            want = np.take(want_by_slot, order)
        else:
            want[on] = next_want
            if any_done:
                keep = np.ones(len(order), dtype=bool)
                keep[at[done]] = False
                keep = np.flatnonzero(keep)  # an index array: gathers beat boolean compression
                order, want = order[keep], want[keep]
    return RoutingResult(delivery=delivery, status=status, steps=step, max_buffer=max_buffer, hops=hops_done,
                         hop_steps=hop_steps, buffer=buffer, deadlock_step=step if status == "deadlock" else None,
                         blocked=blocked, full_links=full_links)
