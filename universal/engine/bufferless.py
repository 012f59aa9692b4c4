"""The vectorized engine for the bufferless protocols, trial-and-failure and duplication.

The timing, contention rules and random draws are those fixed in
:mod:`universal.protocols.bufferless` (after Meyer auf der Heide & Scheideler, "Communication in
Parallel Systems", §4.3-4.4); the reference engine follows the same text one packet at a time.

Design: a round's *units* (packets for trial-and-failure, copies for duplication) are arrays
aligned with each other: packet id, delay, path offset and length. A unit with delay ``delta``
crosses hop ``k`` in forward step ``delta + k + 1``, so in every forward step the moving units are
found with one comparison over the living units, and their links with one gather. For
trial-and-failure the units are kept in priority order (lowest priority first), so the winners of
every link come from the same scatter-and-gather as in the buffered engine; for duplication a
per-link count decides. The backward pass needs no simulation: it mirrors the forward pass, so
every delivered unit is acknowledged at a known step.
"""

from __future__ import annotations

import numpy as np

from universal.engine.contention import winners
from universal.engine.result import RoutingResult
from universal.paths import PathCollection
from universal.protocols import BufferlessProtocol, Duplication, TrialAndFailure


#: Most copies one duplication round may hold (each costs a few dozen bytes of arrays).
MAX_UNITS = 30_000_000


class _Units:
    """The units of one round: packet, delay, first flat path position and path length."""

    def __init__(self, packet: np.ndarray, delay: np.ndarray, start: np.ndarray, length: np.ndarray) -> None:
        self.packet = packet
        self.delay = delay
        self.start = start
        self.length = length

    def keep(self, mask: np.ndarray) -> None:
        self.packet = self.packet[mask]
        self.delay = self.delay[mask]
        self.start = self.start[mask]
        self.length = self.length[mask]


def _trial_units(protocol: TrialAndFailure, rng: np.random.Generator, active: np.ndarray, draws: dict,
                 round_number: int, K: int, D: int, n: int) -> np.ndarray:
    """Delays of the active packets, ordered lowest priority first (highest (rank, id) first)."""
    if round_number == 1 or protocol.redraw:
        draws["ranks"] = rng.integers(0, K, size=n, dtype=np.int64)
        draws["delays"] = rng.integers(0, D, size=n, dtype=np.int64)
    ranks = draws["ranks"][active]
    order = np.lexsort((active, ranks))[::-1]  # (rank, id) decreasing: lowest priority first
    return active[order]


def _forward_pass(units: _Units, links: np.ndarray, bandwidth: int, priority: bool, num_links: int,
                  t0: int, crossings: list | None) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Run one forward pass; return (delivered unit indices, their arrival steps, hops, discarded).

    ``priority``: the B-priority rule with units lowest priority first; else the B-collision rule.
    """
    alive = np.ones(len(units.packet), dtype=bool)
    finish = units.delay + units.length  # forward step of the last crossing
    last = int(finish.max()) if len(finish) else 0
    scratch = np.empty(num_links, dtype=np.int32)
    arange = np.arange(len(units.packet), dtype=np.int32)
    # Copies per link and step for the collision rule: only the links wanted in a step are
    # reset and counted, never the whole network.
    counts = np.zeros(num_links if not priority else 0, dtype=np.int32)
    one = np.int32(1)
    hop_base = units.start - units.delay - 1  # flat position of a unit's hop in step s: hop_base + s
    arrived_at: list[np.ndarray] = []
    arrived_step: list[np.ndarray] = []
    hops = discarded = 0
    for s in range(1, last + 1):
        moving = np.flatnonzero(alive & (units.delay < s) & (finish >= s))
        if not len(moving):
            continue
        want = np.take(links, np.take(hop_base, moving) + s).astype(np.int64)  # int64: native index type
        if priority:
            win = winners(want, bandwidth, scratch, arange)
        else:
            counts[want] = 0
            np.add.at(counts, want, one)
            win = np.take(counts, want) <= bandwidth
        lost = moving[~win]
        alive[lost] = False
        discarded += len(lost)
        crossed = moving[win]
        hops += len(crossed)
        if crossings is not None and len(crossed):
            crossings.append(np.column_stack([np.full(len(crossed), t0 + s), want[win], units.packet[crossed]]))
        done = crossed[finish[crossed] == s]
        if len(done):
            alive[done] = False
            arrived_at.append(done)
            arrived_step.append(np.full(len(done), t0 + s, dtype=np.int64))
    if arrived_at:
        return np.concatenate(arrived_at), np.concatenate(arrived_step), hops, discarded
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty, hops, discarded


def simulate_bufferless(collection: PathCollection, protocol: BufferlessProtocol, rng: np.random.Generator, *,
                        bandwidth: int = 1, step_limit: int | None = None,
                        record_hops: bool = False) -> RoutingResult:
    """Route ``collection`` with trial-and-failure or duplication, in rounds of 4D steps.

    Parameters
    ----------
    collection : PathCollection
    protocol : TrialAndFailure or Duplication
    rng : numpy.random.Generator
        Source of the ranks and delays (drawn as :mod:`universal.protocols.bufferless` says).
    bandwidth : int
        B: the priority rule lets B packets across a link per step; the collision rule
        discards all copies when more than B want one link.
    step_limit : int, optional
        A round starts only if it ends within the limit (default ``4D * protocol.max_rounds``).
    record_hops : bool
        Also return every crossing as a row ``(step, link, packet)`` in ``crossings``.

    Returns
    -------
    RoutingResult
        With ``rounds``, ``discarded``, ``finish`` (the last acknowledgement, which is T) and,
        for duplication, ``copies_capped``.

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import butterfly
    >>> from universal.workloads import build_problem
    >>> from universal.paths import route_paths
    >>> from universal.protocols import build_protocol
    >>> net = butterfly(4)
    >>> prob = build_problem("permutation:random", net, np.random.default_rng(0))
    >>> paths = route_paths("dimension-order", prob, net, np.random.default_rng(0))
    >>> res = simulate_bufferless(paths, build_protocol("trial-and-failure"), np.random.default_rng(0))
    >>> res.status, res.T == res.finish, res.steps == 4 * paths.dilation * res.rounds
    ('delivered', True, True)
    """
    if bandwidth < 1:
        raise ValueError("bandwidth must be >= 1")
    n = collection.size
    D = max(collection.dilation, 1)
    lengths = collection.lengths
    starts = collection.offsets[:-1]
    links = collection.links
    num_links = collection.network.num_links
    round_length = protocol.round_length(D)
    limit = protocol.default_step_limit(D) if step_limit is None else int(step_limit)
    trial = isinstance(protocol, TrialAndFailure)
    K = protocol.rank_range(collection.congestion, D, n, bandwidth) if trial else 0

    delivery = np.full(n, -1, dtype=np.int64)
    delivery[lengths == 0] = 0
    ack = np.zeros(n, dtype=np.int64)
    active = np.flatnonzero(lengths > 0)
    crossings: list | None = [] if record_hops else None
    draws: dict = {}
    rounds = hops = discarded = 0
    capped = False
    status = "delivered"
    while len(active):
        if (rounds + 1) * round_length > limit:
            status = "step-limit"
            break
        rounds += 1
        t0 = (rounds - 1) * round_length
        if trial:
            packets = _trial_units(protocol, rng, active, draws, rounds, K, D, n)
            delays = draws["delays"][packets]
        else:
            assert isinstance(protocol, Duplication)
            cap = protocol.copy_cap(collection.congestion, D, bandwidth)
            copies = protocol.copies(rounds, cap)
            if len(active) * copies > min(protocol.max_round_copies, MAX_UNITS):
                rounds -= 1
                status = "copy-limit"
                break
            capped |= cap is not None and 2 ** min(rounds - 1, 62) > cap
            delays = rng.integers(0, D, size=(len(active), copies), dtype=np.int64).ravel()
            packets = np.repeat(active, copies)
        units = _Units(packets, delays, starts[packets], lengths[packets])
        got, steps, round_hops, round_discarded = _forward_pass(units, links, bandwidth, trial, num_links, t0,
                                                                crossings)
        hops += round_hops
        discarded += round_discarded
        done = units.packet[got]
        # Several copies of one packet may arrive: the first delivery counts, and the earliest
        # acknowledgement (from the copy that left last) makes the packet inactive.
        first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, done, steps)
        latest_start = np.full(n, -1, dtype=np.int64)
        np.maximum.at(latest_start, done, units.delay[got])
        finished = np.unique(done)
        delivery[finished] = first[finished]
        ack[finished] = t0 + round_length - latest_start[finished]
        active = active[delivery[active] < 0]
    table = None
    if crossings is not None:
        table = np.concatenate(crossings) if crossings else np.zeros((0, 3), dtype=np.int64)
        table = table[np.lexsort((table[:, 2], table[:, 1], table[:, 0]))].astype(np.int64)
    return RoutingResult(delivery=delivery, status=status, steps=rounds * round_length, max_buffer=0, hops=hops,
                         buffer=0, rounds=rounds, discarded=discarded, finish=int(ack.max()) if n else 0,
                         copies_capped=None if trial else capped, crossings=table)
