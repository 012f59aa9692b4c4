"""The bufferless protocols (trial-and-failure, duplication) in the reference engine, round by
round, as :mod:`universal.protocols.bufferless` says: the oracle of
:mod:`universal.engine.bufferless` (Meyer auf der Heide & Scheideler, "Communication in Parallel
Systems", 1996, §4.3-4.4). The trace records are described in :mod:`universal.engine.reference`.
"""

from __future__ import annotations

import numpy as np

from universal.engine.result import RoutingResult
from universal.paths import PathCollection
from universal.protocols import Duplication, Protocol, TrialAndFailure

__all__ = ["simulate_bufferless_reference"]


def simulate_bufferless_reference(collection: PathCollection, protocol: Protocol, rng: np.random.Generator,
                                  bandwidth: int = 1, step_limit: int | None = None, record_hops: bool = False,
                                  trace: list | None = None) -> RoutingResult:
    """Trial-and-failure or duplication, round by round, as :mod:`universal.protocols.bufferless` says.

    Every attempt (a packet in trial-and-failure, a copy in duplication) is a tuple
    ``(packet, delay, rank)``; in the forward pass of round ``j`` it wants the ``k``-th link of
    its path in step ``t0 + delay + k + 1``. Per step and link, the rule of the protocol decides
    which of the attempts wanting the link cross; the others are discarded for the round.

    Parameters
    ----------
    collection : PathCollection
    protocol : Protocol
        A :class:`~universal.protocols.TrialAndFailure` or :class:`~universal.protocols.Duplication`.
    rng : numpy.random.Generator
        Ranks and delays, drawn as the fast engine draws them.
    bandwidth : int
        B.
    step_limit : int, optional
        Stop before a round would end past this step (default: the protocol's limit).
    record_hops : bool
        Also return every crossing as ``(step, link, packet)`` rows.
    trace : list, optional
        Receives the round and step records of :mod:`universal.engine.reference`.

    Returns
    -------
    RoutingResult

    Examples
    --------
    >>> from universal.networks import butterfly
    >>> from universal.workloads import build_problem
    >>> from universal.paths import route_paths
    >>> from universal.protocols import build_protocol
    >>> net = butterfly(3)
    >>> paths = route_paths("dimension-order", build_problem("permutation:random", net, np.random.default_rng(0)),
    ...                     net, np.random.default_rng(0))
    >>> res = simulate_bufferless_reference(paths, build_protocol("trial-and-failure"), np.random.default_rng(0))
    >>> res.status, res.rounds >= 1
    ('delivered', True)
    """
    if isinstance(protocol, TrialAndFailure):
        duplication = False
    elif isinstance(protocol, Duplication):
        duplication = True
    else:
        raise TypeError(f"{protocol.name}: not a bufferless protocol the reference engine knows")
    paths = [collection.links[collection.offsets[i]:collection.offsets[i + 1]].tolist()
             for i in range(collection.size)]
    n = len(paths)
    D = max(collection.dilation, 1)
    R = 4 * D
    limit = protocol.default_step_limit(D) if step_limit is None else int(step_limit)

    delivery = [0 if len(p) == 0 else -1 for p in paths]
    active = [i for i in range(n) if len(paths[i]) > 0]
    rounds = 0
    total = 0
    discarded = 0
    finish = 0
    capped = False
    crossings: list[tuple[int, int, int]] = []
    ranks = delays = None
    status = "delivered"
    while active:
        j = rounds + 1
        if j * R > limit:
            status = "step-limit"
            break
        t0 = (j - 1) * R
        if duplication:
            cap = protocol.copy_cap(collection.congestion, D, bandwidth)
            c = protocol.copies(j, cap)
            if len(active) * c > protocol.max_round_copies:
                status = "copy-limit"
                break
            if cap is not None and 2 ** (j - 1) > cap:
                capped = True
            table = rng.integers(0, D, size=(len(active), c), dtype=np.int64)
            attempts = [(i, int(table[row][q]), 0) for row, i in enumerate(active) for q in range(c)]
        else:
            c = 1
            if j == 1 or protocol.redraw:
                K = protocol.rank_range(collection.congestion, D, n, bandwidth)
                ranks = rng.integers(0, K, size=n, dtype=np.int64)
                delays = rng.integers(0, D, size=n, dtype=np.int64)
            attempts = [(i, int(delays[i]), int(ranks[i])) for i in active]

        alive = [True] * len(attempts)
        delivered_delays: dict[int, list[int]] = {}
        if trace is not None:
            trace.append({"event": "round", "round": j, "first_step": t0 + 1, "copies": c,
                          "attempts": [[i, a % c, delta, rank] for a, (i, delta, rank) in enumerate(attempts)]})
        # Forward pass: the latest possible crossing is at t0 + (D-1) + (D-1) + 1 < t0 + 2D.
        for t in range(t0 + 1, t0 + 2 * D + 1):
            wanting: dict[int, list[int]] = {}
            for a, (i, delta, _) in enumerate(attempts):
                k = t - t0 - delta - 1
                if alive[a] and 0 <= k < len(paths[i]):
                    wanting.setdefault(paths[i][k], []).append(a)
            record = {"event": "step", "step": t, "round": j, "links": [], "delivered": []}
            for link, group in wanting.items():
                if duplication:
                    # B-collision rule: more than B copies on the link, all of them die.
                    crossing, losers = (group, []) if len(group) <= bandwidth else ([], group)
                else:
                    # B-priority rule: the B of lowest (rank, packet id) go on.
                    group = sorted(group, key=lambda a: (attempts[a][2], attempts[a][0]))
                    crossing, losers = group[:bandwidth], group[bandwidth:]
                for a in losers:
                    alive[a] = False
                    discarded += 1
                for a in crossing:
                    i, delta, _ = attempts[a]
                    total += 1
                    crossings.append((t, link, i))
                    if t - t0 - delta == len(paths[i]):  # crossed its last link
                        if delivery[i] < 0:
                            delivery[i] = t
                        delivered_delays.setdefault(i, []).append(delta)
                        record["delivered"].append(a)
                record["links"].append({"link": link, "wanting": group, "crossed": crossing, "discarded": losers})
            if trace is not None:
                trace.append(record)
        rounds = j
        # Backward pass: the acknowledgement of an attempt with delay delta reaches the source
        # at t0 + 4D - delta; a packet's first ack is that of its latest-leaving delivered copy.
        for i, deltas in delivered_delays.items():
            finish = max(finish, t0 + R - max(deltas))
        if trace is not None:
            trace.append({"event": "acks", "round": j,
                          "acks": sorted([i, t0 + R - max(deltas)] for i, deltas in delivered_delays.items())})
        active = [i for i in active if i not in delivered_delays]

    rows = np.array(sorted(crossings), dtype=np.int64).reshape(-1, 3)
    return RoutingResult(delivery=np.array(delivery, dtype=np.int64), status=status, steps=rounds * R,
                         max_buffer=0, hops=total, buffer=0, rounds=rounds, discarded=discarded,
                         finish=finish, copies_capped=capped if duplication else None,
                         crossings=rows if record_hops else None)
