"""A small, plainly written reference engine: the test oracle for :func:`universal.engine.simulate`
and :mod:`universal.engine.bufferless`.

It follows SPEC §2 literally, one packet at a time: every step, each waiting packet names the
link it wants; each link sorts its contenders by (key, id) and lets the first B cross (with
bounded buffers, only those for which the link's buffer had room at the start of the step).
The step is the one reference core's (:mod:`universal.engine.reference_core`, which the
open-loop reference shares); this module is its batch front end: the packets of a path
collection, the survey's protocols' keys, steps numbered from 1, and the trace.
The bufferless protocols (trial-and-failure, duplication) run in rounds, exactly as the module
docstring of :mod:`universal.protocols.bufferless` says (:mod:`universal.engine.reference_bufferless`). It is slow on purpose and shares
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

from universal.engine.reference_bufferless import simulate_bufferless_reference
from universal.engine.reference_core import RefPacket, ReferenceCore, RoutingView
from universal.engine.result import RoutingResult
from universal.paths import PathCollection
from universal.protocols import Protocol, build_protocol


def simulate_reference(collection: PathCollection, protocol: str | Protocol, rng: np.random.Generator, *,
                       bandwidth: int = 1, buffer: int | None = None, step_limit: int | None = None,
                       record_hops: bool = False, trace: list | None = None) -> RoutingResult:
    """Same contract as :func:`universal.engine.simulate`, in pure Python.

    ``buffer`` is the link-buffer size b (None: unbounded). A packet may enter the buffer of
    link e in a step only if, counting the packets that sat in it at the start of the step,
    there is still room after the packets accepted before it on e in this step; a packet
    crossing its last link is delivered and needs no room. A step that moves no packet while
    packets wait ends the run with status ``"deadlock"``. Bufferless protocols ignore
    ``buffer`` (they have none) and run
    :func:`~universal.engine.reference_bufferless.simulate_bufferless_reference`. ``trace``, if a
    list, receives the records described in the module docstring.

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
        return simulate_bufferless_reference(collection, protocol, rng, bandwidth, step_limit, record_hops, trace)
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

    # The one reference core, its steps numbered from 0: batch step s is the core's step s - 1.
    core = ReferenceCore(RoutingView("paths", collection.network), bandwidth, buffer)
    packets = [RefPacket(i, 0, 0, 0, 0, path, 0, want=path[0] if path else None) for i, path in enumerate(paths)]
    hop_steps = [[-1] * len(p) for p in paths]
    delivery = [0 if len(p) == 0 else -1 for p in paths]
    step = 0
    max_buffer = 0
    total = 0
    status = "delivered"
    deadlock_step = blocked = full_links = None
    while True:
        waiting = [packets[i] for i in range(n) if delivery[i] < 0]
        if not waiting:
            break
        if step >= limit:
            status = "step-limit"
            break
        step += 1
        held = release is not None and any(release[p.pid] >= step for p in waiting)
        if held:
            waiting = [p for p in waiting if release[p.pid] < step]
        if protocol.dynamic == "per-step":
            fresh = protocol.draw_step_keys(rng, len(waiting))
            key = {p.pid: int(k) for p, k in zip(waiting, fresh)}
        else:
            # ``arrived`` is the step of the last crossing (0 before the first), as the keys expect
            key = {p.pid: protocol.reference_key(state, p.pid, p.hops, p.arrived) for p in waiting}
        moving, links = core.contend(waiting, lambda p: (key[p.pid], p.pid))
        for p in moving:
            hop_steps[p.pid][p.hops] = step
            total += 1
            if core.cross(p, step - 1):
                delivery[p.pid] = step
        if trace is not None:
            trace.append(_step_record(step, links, key, packets, delivery, deadlock=not moving and not held))
        if not moving and not held:
            status = "deadlock"
            deadlock_step = step
            blocked = np.array([p.pid for p in waiting], dtype=np.int64)
            full_links = np.array(sorted(e for e, *_ in links), dtype=np.int64)
            break
        max_buffer = max([max_buffer, *core.occupancy.values()])
    flat_steps = np.array([s for per_path in hop_steps for s in per_path], dtype=np.int64)
    return RoutingResult(delivery=np.array(delivery, dtype=np.int64), status=status, steps=step,
                         max_buffer=max_buffer, hops=total, hop_steps=flat_steps if record_hops else None,
                         buffer=buffer, deadlock_step=deadlock_step, blocked=blocked, full_links=full_links)


def _step_record(step: int, links: list, key: dict, packets: list[RefPacket], delivery: list[int],
                 deadlock: bool) -> dict:
    """The trace record of a buffered step (see the module docstring)."""
    record = {"event": "step", "step": step, "links": [], "delivered": []}
    for link, ranked, crossed, no_room in links:
        went = [p.pid for p in crossed]
        refused = {p.pid for p in no_room}
        lost = [[p.pid, "buffer-full" if p.pid in refused else "priority"] for p in ranked if p.pid not in went]
        record["links"].append({"link": link, "contenders": [[key[p.pid], p.pid] for p in ranked],
                                "crossed": went, "lost": lost})
        record["delivered"] += [i for i in went if delivery[i] == step]
    buffers: dict[int, list[int]] = {}
    for p in packets:
        if delivery[p.pid] < 0 and p.buffer is not None:
            buffers.setdefault(p.buffer, []).append(p.pid)
    record["buffers"] = dict(sorted(buffers.items()))
    if deadlock:
        record["deadlock"] = True
    return record
