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
did not move keep their relative order. Links are renumbered to the ones the collection uses,
which keeps the per-link arrays small and cache-friendly.
"""

from __future__ import annotations

import numpy as np

from universal.engine.result import RoutingResult
from universal.errors import UserError
from universal.paths import PathCollection
from universal.protocols import Protocol, build_protocol


def _last_per_link(want: np.ndarray, positions: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Mask of the entries that are the last (highest position) for their link.

    ``positions`` is increasing; numpy applies repeated fancy assignments in order, so the
    last position of each link remains in ``scratch``. The result is checked, and
    ``np.maximum.at`` takes over should that ever not hold.
    """
    scratch[want] = positions
    got = scratch[want]
    if np.any(got < positions):  # pragma: no cover - defensive, never seen with numpy 1.x/2.x
        scratch[want] = -1
        np.maximum.at(scratch, want, positions)
        got = scratch[want]
    return got == positions


def _winners(want: np.ndarray, bandwidth: int, scratch: np.ndarray, arange: np.ndarray) -> np.ndarray:
    """Mask of the packets (lowest priority first) that cross: the last ``bandwidth`` per link."""
    win = _last_per_link(want, arange[:len(want)], scratch)
    if bandwidth == 1:
        return win
    left = np.flatnonzero(~win)
    for _ in range(bandwidth - 1):
        if not len(left):
            break
        got = _last_per_link(want[left], left, scratch)
        win[left[got]] = True
        left = left[~got]
    return win


class _Waiting:
    """The waiting packets, lowest priority first, with aligned per-packet arrays."""

    def __init__(self, order: np.ndarray, keys: np.ndarray, cursor: np.ndarray, end: np.ndarray,
                 links: np.ndarray) -> None:
        self.order = order
        self.keys = keys
        self.cursor = cursor
        self.end = end
        self.want = links[cursor]
        self.prev = np.full(len(order), -1, dtype=links.dtype)

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


def _local_links(collection: PathCollection) -> tuple[np.ndarray, int]:
    """The flat path array in local link numbers, which count only the links in use.

    Keeping the per-link arrays as small as the links actually used keeps them in cache.
    """
    used = np.flatnonzero(collection.link_loads)
    local = np.empty(collection.network.num_links, dtype=np.int32)
    local[used] = np.arange(len(used), dtype=np.int32)
    return local[collection.links], len(used)


def simulate(collection: PathCollection, protocol: str | Protocol, rng: np.random.Generator, *,
             bandwidth: int = 1, step_limit: int | None = None, record_hops: bool = False) -> RoutingResult:
    """Route every packet of ``collection`` along its path with a buffered protocol.

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
    step_limit : int, optional
        Stop after this many steps (default: the total number of hops, which a run with
        unbounded buffers never needs, since the highest-priority packet always moves).
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
    n = collection.size
    lengths = collection.lengths
    state = protocol.setup(rng, lengths, collection.congestion, collection.dilation)
    limit = int(lengths.sum()) if step_limit is None else int(step_limit)
    if (protocol.max_key(state) + 1) * max(n, 1) >= 2**63:
        raise UserError(f"{protocol.name}: keys for {n:,} packets would overflow 64-bit sort keys; use a smaller K")

    delivery = np.full(n, -1, dtype=np.int64)
    delivery[lengths == 0] = 0
    arrival = np.zeros(n, dtype=np.int64)
    order = np.flatnonzero(lengths > 0)
    keys = np.zeros(len(order), dtype=np.int64)
    if protocol.dynamic != "per-step":
        keys = protocol.keys(state, order, np.zeros(len(order), np.int64), arrival[order]) * n + order
        sort = np.argsort(-keys, kind="stable")
        order, keys = order[sort], keys[sort]
    links, num_used = _local_links(collection)
    start = collection.offsets[:-1]
    # int32 aligned arrays halve the memory traffic; sizes are checked upstream (< 2**31 hops).
    waiting = _Waiting(order.astype(np.int32), keys, start[order].astype(np.int32),
                       (start[order] + lengths[order]).astype(np.int32), links)

    occupancy = np.zeros(num_used, dtype=np.int32)
    scratch = np.empty(num_used, dtype=np.int32)
    arange = np.arange(n, dtype=np.int32)
    one = np.int32(1)  # a matching scalar keeps ufunc.at on its fast path

    hop_steps = np.full(len(links), -1, dtype=np.int64) if record_hops else None
    step = 0
    max_buffer = 0
    hops_done = 0
    status = "delivered"
    while len(waiting):
        if step >= limit:
            status = "step-limit"
            break
        step += 1
        if protocol.dynamic == "per-step":
            by_id = np.argsort(waiting.order, kind="stable")
            waiting.take(by_id)
            waiting.keys = protocol.draw_step_keys(rng, len(waiting)) * n + waiting.order
            waiting.take(np.argsort(-waiting.keys, kind="stable"))
        win = _winners(waiting.want, bandwidth, scratch, arange)
        at = np.flatnonzero(win)
        movers = waiting.order[at]
        crossed = waiting.want[at]
        left_from = waiting.prev[at]
        cursor = waiting.cursor[at] + 1
        if hop_steps is not None:
            hop_steps[cursor - 1] = step
        done = cursor == waiting.end[at]
        going = ~done
        delivery[movers[done]] = step
        hops_done += len(at)

        # Link-buffer occupancy: movers leave the buffer they sat in and, unless delivered,
        # enter the buffer of the link they crossed.
        np.subtract.at(occupancy, left_from[left_from >= 0], one)
        entered = crossed[going]
        np.add.at(occupancy, entered, one)
        if len(entered):
            max_buffer = max(max_buffer, int(occupancy[entered].max()))

        on = at[going]
        next_cursor = cursor[going]
        waiting.cursor[on] = next_cursor
        waiting.prev[on] = entered
        waiting.want[on] = links[next_cursor]
        if protocol.dynamic == "on-move":
            arrival[movers] = step
            stay = movers[going]
            new_keys = protocol.keys(state, stay, next_cursor - start[stay], arrival[stay]) * n + stay
            waiting.merge(np.flatnonzero(~win), on, new_keys)
        elif np.any(done):
            keep = np.ones(len(waiting), dtype=bool)
            keep[at[done]] = False
            waiting.take(keep)
    return RoutingResult(delivery=delivery, status=status, steps=step, max_buffer=max_buffer, hops=hops_done,
                         hop_steps=hop_steps)
