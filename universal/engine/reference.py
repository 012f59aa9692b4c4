"""A small, plainly written reference engine: the test oracle for :mod:`universal.engine.fast`
and :mod:`universal.engine.bufferless`.

It follows SPEC §2 literally, one packet at a time: every step, each waiting packet names the
link it wants; each link sorts its contenders by (key, id) and lets the first B cross (with
bounded buffers, only those for which the link's buffer had room at the start of the step).
The bufferless protocols (trial-and-failure, duplication) run in rounds, exactly as the module
docstring of :mod:`universal.protocols.bufferless` says. It is slow on purpose and shares
nothing with the fast engines but the protocols' random draws (the same generator calls in the
same order), so they must agree step for step.

Tracing. Given a list as ``trace``, the engine appends plain records (dicts of ints, lists and
strings; link and packet ids) saying what it did; recording draws nothing and changes nothing.
:mod:`universal.reporting.trace` turns them into a readable log and JSON.
Buffered protocols:

* ``{"event": "setup", "K": K, "ranks": [...]}``: the rank range and every packet's rank;
* per step ``{"event": "step", "step": t, "links": [...], "delivered": [...], "buffers": {...}}``
  where every link with contenders gives ``{"link": e, "contenders": [[key, packet], ...]}``
  in priority order, ``"crossed": [packet, ...]`` and ``"lost": [[packet, reason], ...]``,
  the reason being ``"priority"`` (the B crossings went to contenders ahead of it) or
  ``"buffer-full"`` (no room left in the link's buffer, counted from the start of the step);
  ``delivered`` lists the packets that crossed their last link and ``buffers`` maps every
  non-empty link buffer to the packets in it at the end of the step. The step that moves
  nothing also has ``"deadlock": True`` (and the buffers as they stayed).

Bufferless protocols, per round ``j``:

* ``{"event": "round", "round": j, "first_step": t0 + 1, "copies": c, "attempts": [...]}``
  with one ``[packet, copy, delay, rank]`` per attempt (rank 0 for duplication; copy 0 for
  trial-and-failure), in the engine's order; the step records refer to attempts by index;
* per forward step ``{"event": "step", "step": t, "round": j, "links": [...], "delivered": [...]}``
  where every wanted link gives ``{"link": e, "wanting": [a, ...]`` (priority order for
  trial-and-failure), ``"crossed": [a, ...], "discarded": [a, ...]}`` and ``delivered`` the
  attempts that crossed their last link;
* ``{"event": "acks", "round": j, "acks": [[packet, step], ...]}``: the step in which every
  packet delivered in the round gets its (first) acknowledgement.
"""

from __future__ import annotations

import numpy as np

from universal.engine.result import RoutingResult
from universal.paths import PathCollection
from universal.protocols import Duplication, Protocol, TrialAndFailure, build_protocol


def simulate_reference(collection: PathCollection, protocol: str | Protocol, rng: np.random.Generator, *,
                       bandwidth: int = 1, buffer: int | None = None, step_limit: int | None = None,
                       record_hops: bool = False, trace: list | None = None) -> RoutingResult:
    """Same contract as :func:`universal.engine.fast.simulate`, in pure Python.

    ``buffer`` is the link-buffer size b (None: unbounded). A packet may enter the buffer of
    link e in a step only if, counting the packets that sat in it at the start of the step,
    there is still room after the packets accepted before it on e in this step; a packet
    crossing its last link is delivered and needs no room. A step that moves no packet while
    packets wait ends the run with status ``"deadlock"``. Bufferless protocols ignore
    ``buffer`` (they have none) and run :func:`_simulate_bufferless`. ``trace``, if a list,
    receives the records described in the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import butterfly
    >>> from universal.workloads import build_problem
    >>> from universal.paths import route_paths
    >>> net = butterfly(3)
    >>> prob = build_problem("permutation:random", net, np.random.default_rng(0))
    >>> paths = route_paths("dimension-order", prob, net, np.random.default_rng(0))
    >>> simulate_reference(paths, "fifo", np.random.default_rng(0)).status
    'delivered'
    >>> simulate_reference(paths, "fifo", np.random.default_rng(0), buffer=1).max_buffer
    1
    >>> simulate_reference(paths, "trial-and-failure", np.random.default_rng(0)).status
    'delivered'
    """
    protocol = build_protocol(protocol)
    if bandwidth < 1:
        raise ValueError("bandwidth must be >= 1")
    if buffer is not None and buffer < 1:
        raise ValueError("buffer must be >= 1 (or None for unbounded buffers)")
    if protocol.bufferless:
        return _simulate_bufferless(collection, protocol, rng, bandwidth, step_limit, record_hops, trace)
    paths = [collection.links[collection.offsets[i]:collection.offsets[i + 1]].tolist()
             for i in range(collection.size)]
    n = len(paths)
    lengths = np.array([len(p) for p in paths], dtype=np.int64)
    state = protocol.setup(rng, lengths, collection.congestion, collection.dilation)
    # Packets with a release step r (random-delay) may first move in step r + 1.
    release = protocol.release_steps(state)
    latest = int(release.max()) if release is not None and n else 0
    limit = int(lengths.sum()) + latest if step_limit is None else int(step_limit)
    if trace is not None:
        trace.append({"event": "setup", "K": int(state.K), "ranks": state.ranks.tolist()})

    hops = [0] * n
    hop_steps = [[-1] * len(p) for p in paths]
    arrival = [0] * n
    delivery = [0 if len(p) == 0 else -1 for p in paths]
    step = 0
    max_buffer = 0
    total = 0
    status = "delivered"
    deadlock_step = blocked = full_links = None
    while True:
        waiting = [i for i in range(n) if delivery[i] < 0]
        if not waiting:
            break
        if step >= limit:
            status = "step-limit"
            break
        step += 1
        held = release is not None and any(release[i] >= step for i in waiting)
        if held:
            waiting = [i for i in waiting if release[i] < step]
        if protocol.dynamic == "per-step":
            fresh = protocol.draw_step_keys(rng, len(waiting))
            key = {i: int(k) for i, k in zip(waiting, fresh)}
        else:
            key = {i: protocol.reference_key(state, i, hops[i], arrival[i]) for i in waiting}

        # Buffer occupancy at the start of the step: a waiting packet that has made h > 0 hops
        # sits in the buffer of the link it crossed last.
        occupied = _occupancy(paths, hops, waiting) if buffer is not None else {}
        contenders: dict[int, list[tuple[int, int]]] = {}
        for i in waiting:
            contenders.setdefault(paths[i][hops[i]], []).append((key[i], i))
        moved = 0
        links = []  # for the trace: (link, contenders in priority order, crossed, no room)
        for link in contenders:
            free = None if buffer is None else buffer - occupied.get(link, 0)
            accepted = 0
            entering = 0
            ranked = sorted(contenders[link])
            crossed, no_room = [], []
            for _, i in ranked:
                if accepted == bandwidth:
                    break
                last = hops[i] + 1 == len(paths[i])
                if not last and free is not None and entering >= free:
                    no_room.append(i)
                    continue  # no room in the link's buffer: it stays where it is
                accepted += 1
                if not last:
                    entering += 1
                hop_steps[i][hops[i]] = step
                hops[i] += 1
                arrival[i] = step
                total += 1
                moved += 1
                crossed.append(i)
                if last:
                    delivery[i] = step
            if trace is not None:
                links.append((link, ranked, crossed, no_room))
        if trace is not None:
            trace.append(_step_record(step, links, paths, hops, delivery, deadlock=moved == 0 and not held))
        if moved == 0 and not held:
            status = "deadlock"
            deadlock_step = step
            blocked = np.array(waiting, dtype=np.int64)
            full_links = np.array(sorted(contenders), dtype=np.int64)
            break

        still = [i for i in range(n) if delivery[i] < 0]
        max_buffer = max([max_buffer, *_occupancy(paths, hops, still).values()])
    flat_steps = np.array([s for per_path in hop_steps for s in per_path], dtype=np.int64)
    return RoutingResult(delivery=np.array(delivery, dtype=np.int64), status=status, steps=step,
                         max_buffer=max_buffer, hops=total, hop_steps=flat_steps if record_hops else None,
                         buffer=buffer, deadlock_step=deadlock_step, blocked=blocked, full_links=full_links)


def _occupancy(paths: list[list[int]], hops: list[int], packets: list[int]) -> dict[int, int]:
    """Packets per link buffer, among ``packets`` (all undelivered)."""
    buffers: dict[int, int] = {}
    for i in packets:
        if hops[i] > 0:
            last = paths[i][hops[i] - 1]
            buffers[last] = buffers.get(last, 0) + 1
    return buffers


def _step_record(step: int, links: list, paths: list[list[int]], hops: list[int], delivery: list[int],
                 deadlock: bool) -> dict:
    """The trace record of a buffered step (see the module docstring)."""
    record = {"event": "step", "step": step, "links": [], "delivered": []}
    for link, ranked, crossed, no_room in links:
        lost = [[i, "buffer-full" if i in no_room else "priority"] for _, i in ranked if i not in crossed]
        record["links"].append({"link": link, "contenders": [[key, i] for key, i in ranked],
                                "crossed": crossed, "lost": lost})
        record["delivered"] += [i for i in crossed if delivery[i] == step]
    buffers: dict[int, list[int]] = {}
    for i in range(len(paths)):
        if delivery[i] < 0 and hops[i] > 0:
            buffers.setdefault(paths[i][hops[i] - 1], []).append(i)
    record["buffers"] = dict(sorted(buffers.items()))
    if deadlock:
        record["deadlock"] = True
    return record


def _simulate_bufferless(collection: PathCollection, protocol: Protocol, rng: np.random.Generator,
                         bandwidth: int, step_limit: int | None, record_hops: bool,
                         trace: list | None = None) -> RoutingResult:
    """Trial-and-failure or duplication, round by round, as :mod:`universal.protocols.bufferless` says.

    Every attempt (a packet in trial-and-failure, a copy in duplication) is a tuple
    ``(packet, delay, rank)``; in the forward pass of round ``j`` it wants the ``k``-th link of
    its path in step ``t0 + delay + k + 1``. Per step and link, the rule of the protocol decides
    which of the attempts wanting the link cross; the others are discarded for the round.
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
