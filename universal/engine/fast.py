"""The vectorized synchronous packet engine (SPEC §2; Meyer auf der Heide & Scheideler,
"Communication in Parallel Systems", §2.1 and §2.4).

Design: the waiting packets are kept in arrays sorted by priority, lowest priority first
(``order`` holds packet ids; ``want``, ``cursor`` and ``prev`` hold, aligned with it, the link
each packet waits for, its position in the flat path array and the link whose buffer it sits
in). Every packet waits for exactly one link, so one scatter of positions into a per-link array
leaves there the last, i.e. highest-priority, contender of every link, and one gather tells
each packet whether it won. A step costs time proportional to the waiting packets only: the
per-link scratch array is never cleared (a step reads only entries it just wrote), and the
aligned arrays are updated for the movers alone. Keys that change when a packet moves
(growing rank, FIFO, ...) are re-sorted for the movers and merged back, since the packets that
did not move keep their relative order. Index arrays, link numbers included, stay int64
(numpy's native index type: scatters, gathers and ``ufunc.at`` convert any other index type
anew on every call); per-link arrays use small types (int32 positions, buffer counts in the
smallest type that holds C) so that they stay in cache.
"""

from __future__ import annotations

import numpy as np

from universal.engine.bufferless import simulate_bufferless
from universal.engine.contention import last_per_link, winners, winners_at
from universal.engine.result import RoutingResult
from universal.errors import UserError
from universal.paths import PathCollection
from universal.protocols import Protocol, build_protocol


def _bounded_winners(waiting: "_Waiting", free: np.ndarray, bandwidth: int, buffer: int,
                     scratch: np.ndarray) -> np.ndarray:
    """Mask of the packets that cross when buffers hold ``buffer`` packets (room from ``free``).

    A contender may cross if it is delivered by the crossing or is among the ``free[link]``
    highest-priority contenders that would enter the link's buffer; of those, the B of highest
    priority cross. This is the same as taking contenders in priority order and letting one
    across while fewer than B crossed and (it is delivered or fewer than ``free`` entered).
    """
    final = waiting.cursor + 1 == waiting.end
    entering = np.flatnonzero(~final)
    allowed = _entering_allowed(waiting.want, entering, free, min(bandwidth, buffer), scratch)
    admissible = np.union1d(np.flatnonzero(final), allowed)
    win = np.zeros(len(waiting), dtype=bool)
    if len(admissible):
        got = winners_at(waiting.want, admissible, bandwidth, scratch)
        win[admissible[got]] = True
    return win


class _Waiting:
    """The waiting packets, lowest priority first, with aligned per-packet arrays."""

    def __init__(self, order: np.ndarray, keys: np.ndarray, cursor: np.ndarray, end: np.ndarray,
                 links: np.ndarray, shift: int, injection: int) -> None:
        self.order = order
        self.keys = keys
        self.cursor = cursor
        self.end = end
        self.want = (links[cursor] >> shift).astype(np.int64)  # int64: numpy's native index type
        self.prev = np.full(len(order), injection, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.order)

    def take(self, index: np.ndarray) -> None:
        """Keep (and reorder to) the entries at ``index`` (or where a boolean mask is True)."""
        self.order = self.order[index]
        self.keys = self.keys[index]
        self.cursor = self.cursor[index]
        self.end = self.end[index]
        self.want = self.want[index]
        self.prev = self.prev[index]

    def merge(self, rest: np.ndarray, moved: np.ndarray, moved_keys: np.ndarray) -> None:
        """Merge the entries ``moved`` (with new keys) back among the entries ``rest``.

        ``rest`` is in the array's order (keys decreasing) and keeps its keys.
        """
        sort = np.argsort(-moved_keys, kind="stable")
        moved, moved_keys = moved[sort], moved_keys[sort]
        at = np.searchsorted(-self.keys[rest], -moved_keys) + np.arange(len(moved))
        index = np.empty(len(rest) + len(moved), dtype=np.int64)
        is_rest = np.ones(len(index), dtype=bool)
        is_rest[at] = False
        index[at] = moved
        index[is_rest] = rest
        self.keys[moved] = moved_keys  # written before the gather so the moved entries carry them
        self.take(index)


def _slot_shift(collection: PathCollection) -> int:
    """1 if per-link state can be indexed by edge (link >> 1), else 0.

    When no edge is used in both directions (leveled collections such as the butterfly's),
    a link and its edge are interchangeable, and indexing by edge halves the per-link arrays,
    which then stay in cache better.
    """
    loads = collection.link_loads
    return 0 if np.logical_and(loads[0::2], loads[1::2]).any() else 1


def _priority_order(primary: np.ndarray, order: np.ndarray, n: int) -> np.ndarray:
    """Permutation putting ``order`` (increasing ids < n) in decreasing (primary key, id) order.

    Small keys sort as int16, for which numpy's stable sort is a radix sort.
    """
    if len(primary) and 0 <= primary.min() and primary.max() < np.iinfo(np.int16).max:
        return np.argsort(primary.astype(np.int16), kind="stable")[::-1]
    return np.argsort(-(primary * n + order), kind="stable")


def _entering_allowed(want: np.ndarray, entering: np.ndarray, free: np.ndarray, most: int,
                      scratch: np.ndarray) -> np.ndarray:
    """Positions (increasing) of the entering packets that find room in the buffer they would enter.

    ``entering`` holds positions (increasing, lowest priority first) of packets that would enter
    the buffer of the link they want; per link only the ``free[link]`` highest-priority ones may,
    and never more than ``most`` (= B: more could not cross anyway).
    """
    room = np.take(free, np.take(want, entering))
    left = entering[room > 0]
    allowed = []
    for j in range(most):
        if not len(left):
            break
        wanted = np.take(want, left)
        top = last_per_link(wanted, left, scratch)
        allowed.append(left[top])
        rest = ~top & (np.take(free, wanted) > j + 1)
        left = left[rest]
    return np.sort(np.concatenate(allowed)) if allowed else entering[:0]


def _admit(waiting: _Waiting, new: np.ndarray, protocol: Protocol, state, arrival: np.ndarray, links: np.ndarray,
           shift: int, injection: int, start: np.ndarray, lengths: np.ndarray, n: int) -> None:
    """Add the packets ``new`` (ids), whose delay just ended, to the waiting packets in priority order."""
    old = len(waiting)
    keys = protocol.keys(state, new, np.zeros(len(new), np.int64), arrival[new]) * n + new
    joined = _Waiting(new, keys, start[new], start[new] + lengths[new], links, shift, injection)
    for name in ("order", "keys", "cursor", "end", "want", "prev"):
        setattr(waiting, name, np.concatenate([getattr(waiting, name), getattr(joined, name)]))
    waiting.merge(np.arange(old), np.arange(old, old + len(new)), keys)


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
    # Packets with a release step r (random-delay) join the waiting packets at step r + 1.
    release = protocol.release_steps(state)
    latest = int(release.max()) if release is not None and n else 0
    limit = int(lengths.sum()) + latest if step_limit is None else int(step_limit)
    if (protocol.max_key(state) + 1) * max(n, 1) >= 2**63:
        raise UserError(f"{protocol.name}: keys for {n:,} packets would overflow 64-bit sort keys; use a smaller K")

    delivery = np.full(n, -1, dtype=np.int64)
    delivery[lengths == 0] = 0
    arrival = np.zeros(n, dtype=np.int64)
    order = np.flatnonzero(lengths > 0)
    pending = order[:0]
    if release is not None:
        pending = order[release[order] > 0]
        pending = pending[np.argsort(release[pending], kind="stable")]
        order = order[release[order] == 0]
    keys = np.zeros(len(order), dtype=np.int64)
    if protocol.dynamic != "per-step":
        primary = protocol.keys(state, order, np.zeros(len(order), np.int64), arrival[order])
        sort = _priority_order(primary, order, n)
        order = order[sort]
        keys = primary[sort] * n + order
    shift = _slot_shift(collection)
    links, num_links = collection.links, collection.network.num_links >> shift
    start = collection.offsets[:-1]
    # Buffer slot ``num_links`` stands for the injection buffers, so leaving them needs no special case.
    waiting = _Waiting(order, keys, start[order], start[order] + lengths[order], links, shift,
                       injection=num_links)

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
    step = 0
    max_buffer = 0
    hops_done = 0
    status = "delivered"
    while len(waiting) or len(pending):
        if step >= limit:
            status = "step-limit"
            break
        step += 1
        if len(pending) and release[pending[0]] < step:
            count = int(np.searchsorted(release[pending], step))
            _admit(waiting, pending[:count], protocol, state, arrival, links, shift, num_links, start, lengths, n)
            pending = pending[count:]
        if protocol.dynamic == "per-step":
            by_id = np.argsort(waiting.order, kind="stable")
            waiting.take(by_id)
            waiting.keys = protocol.draw_step_keys(rng, len(waiting)) * n + waiting.order
            waiting.take(np.argsort(-waiting.keys, kind="stable"))
        if not bounded:
            win = winners(waiting.want, bandwidth, scratch, arange)
        else:
            win = _bounded_winners(waiting, buffer - occupancy, bandwidth, buffer, scratch)
        at = np.flatnonzero(win)
        if not len(at) and len(pending):
            continue  # nothing released can move yet; a later release may still
        if not len(at):
            status = "deadlock"
            blocked = np.sort(waiting.order)
            full_links = np.unique(np.take(links, waiting.cursor)).astype(np.int64)
            break
        crossed = np.take(waiting.want, at)
        left_from = np.take(waiting.prev, at)
        cursor = np.take(waiting.cursor, at) + 1
        if hop_steps is not None:
            hop_steps[cursor - 1] = step
        hops_done += len(at)
        # No packet can arrive before it has crossed its whole path: skip the test until then.
        any_done = step >= shortest and bool((done := cursor == np.take(waiting.end, at)).any())
        if any_done:
            going = np.flatnonzero(~done)
            delivery[np.take(waiting.order, at[done])] = step
            on, next_cursor, entered = np.take(at, going), np.take(cursor, going), np.take(crossed, going)
        else:  # before the first arrivals (most steps), skip the compressions
            on, next_cursor, entered = at, cursor, crossed

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

        waiting.cursor[on] = next_cursor
        waiting.prev[on] = entered
        # Shifting the movers' links here costs less than shifting every hop's link up front.
        waiting.want[on] = np.take(links, next_cursor) >> shift
        if protocol.dynamic == "on-move":
            arrival[np.take(waiting.order, at)] = step
            stay = np.take(waiting.order, on)
            new_keys = protocol.keys(state, stay, next_cursor - start[stay], arrival[stay]) * n + stay
            waiting.merge(np.flatnonzero(~win), on, new_keys)
        elif any_done:
            keep = np.ones(len(waiting), dtype=bool)
            keep[at[done]] = False
            waiting.take(np.flatnonzero(keep))  # an index array: gathers beat boolean compression
    return RoutingResult(delivery=delivery, status=status, steps=step, max_buffer=max_buffer, hops=hops_done,
                         hop_steps=hop_steps, buffer=buffer, deadlock_step=step if status == "deadlock" else None,
                         blocked=blocked, full_links=full_links)
