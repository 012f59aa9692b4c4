"""A plainly written open-loop engine, one packet at a time: the test oracle of
:mod:`universal.engine.runs` (SPEC §11).

It is the open-loop front end of the one reference core (:mod:`universal.engine.reference_core`,
which the batch reference shares): this module creates the packets, numbers the steps from 0 and
records what a run reports; the step is the core's. Every step, the packets created in the step join the network, every adaptive packet that must
choose its next link does so from the counts of the packets waiting for each link at the start
of the step (a UGAL-L/G packet takes one of its two candidate paths as it is created, from the
counts and the used credits before the step's new packets), then every link sorts its
contenders by priority and lets the first B cross (with
bounded buffers, only those that find room counted from the start of the step, or cross their
last link). It shares nothing with the fast engine but the random draws of
:func:`universal.engine.creation.draw_chunk` and the tie hash, so with one seed the two must
deliver every packet in the same step.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from universal.engine.reference_core import RefPacket, ReferenceCore, RoutingView
from universal.engine.creation import CHUNK, InjectionState, RunSpec, draw_chunk

__all__ = ["simulate_reference"]


def _view(spec: RunSpec) -> RoutingView:
    """The routing of ``spec`` as the reference core reads it."""
    router = spec.router
    view = RoutingView(router.kind if router.kind in ("min-adaptive", "goal", "ugal", "splitter", "ugal-paths", "chaos")
                       else "paths", router.network, threshold=router.threshold,
                       mode=router.extra.get("mode"))
    net = router.network
    if router.kind == "ugal" and net.kind == "dragonfly":
        # the dragonfly's minimal legs: a global link (router to router across groups) weighs 1 + N
        T, a, N = len(net.terminals), net.params["a"], net.num_nodes
        view.link_weight = [1 + N * int(u >= T and v >= T and (u - T) // a != (v - T) // a)
                            for u, v in zip(net.link_tail.tolist(), net.link_head.tolist())]
    elif router.kind in ("min-adaptive", "ugal", "chaos"):
        view.distance = router.distance.tolist()
    if router.kind == "goal":
        view.k, view.n = router.k_n
    return view


#: K of the ranked rules: ranks are drawn from [0, 2**31) (:func:`universal.engine.creation.draw_chunk`).
_K = 2**31


def _priority(rule: str, core: ReferenceCore, ranks: tuple | None = None):
    """The sort key of ``rule``: the smallest key crosses first (``ranks``: a batch's survey ranks,
    K and D; see :class:`~universal.engine.workload.Injection`)."""
    if rule == "growing-rank":
        K, D = ranks[1:] if ranks is not None else (_K, core.diameter())
        # rank + hops * K / D, compared exactly after multiplying by D; p.hops = links crossed
        return lambda p: (p.rank * D + p.hops * K, p.pid)
    left = core.hops_left
    return {"age": lambda p: (p.pid,), "longest-in-system": lambda p: (p.created, p.pid),
            "fifo": lambda p: (p.arrived, p.pid), "random": lambda p: (p.rank, p.pid),
            "random-rank": lambda p: (p.rank, p.pid), "farthest-to-go": lambda p: (-left(p), p.pid),
            "nearest-to-go": lambda p: (left(p), p.pid),
            # stamped packets by stamp, then every packet still in its source queue; then as age
            "injection-age": lambda p: (p.injected < 0, p.injected, p.pid)}[rule]


def simulate_reference(spec: RunSpec, steps: int, *, bandwidth: int = 1, buffer: int | None = None,
                       create_until: int | None = None, record: dict | None = None, vcs: int = 1,
                       source_queue: str = "all", vc_buffer: str = "set") -> dict:
    """Run ``spec`` alone for ``steps`` steps, one packet at a time.

    Parameters
    ----------
    spec : RunSpec
    steps : int
        Steps to run (with ``create_until``: the most steps to run).
    bandwidth, buffer : int, int or None
        B and the link-buffer size b (None: unbounded).
    vcs : int
        V, virtual channels per link (:mod:`universal.engine.vcs`).
    source_queue : {"all", "fifo", "fifo:w=W"}
        ``fifo``: a node's source queue is a FIFO whose first B packets alone are routed (join
        ``waiting``) and leave in queue order (:mod:`universal.engine.source_queue`); ``all``:
        every queued packet waits for its first link; ``fifo:w=W``: the first W packets are
        routed and each may leave on its own.
    vc_buffer : {"set", "fifo"}
        ``fifo``: every VC a FIFO of b packets whose head alone may leave
        (:mod:`universal.engine.fifo_vcs`); ``set``: any packet of a class buffer may leave.
    create_until : int, optional
        Packets are created in steps ``0 .. create_until - 1`` only (the same packets as the
        full run; the later ones of the last creation chunk are dropped), and the run ends as
        soon as all of them are delivered: the network drains (status ``drained``; ``steps``
        if they are not all delivered within ``steps`` steps).
    record : dict, optional
        Filled with what a step-by-step view needs: ``src``, ``dst``, ``created`` (per packet,
        lists) and ``crossings``, one ``(step, packet, link)`` per link crossing in step order;
        for CHAOS also ``queued``, one ``(step, packet)`` whenever a packet moves from an input
        buffer into its node's shared queue; after a deadlock ``blocked``, the waiting packets
        and the links they wait for (two sorted lists).
        With ``record["limit"] = M`` the run stops (status ``record-limit``) before recording
        more than M crossings. With ``record["steps"] = []`` every step appends a record of
        who chose which link, who crossed and who lost and why, the buffers and CHAOS's queues
        (:mod:`universal.engine.reference_trace`). Runs without ``record`` do not pay for it.

    Returns
    -------
    dict
        ``pid`` (creation order, 0, 1, ...) and ``delivered`` (the step each packet was
        delivered in, -1 if not yet) as lists, ``status`` (``steps``, ``deadlock``, or with
        ``create_until`` ``drained``; ``record-limit``) and ``last`` (the last step run).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=4,n=1")
    >>> spec = RunSpec(offered_traffic(net, "tornado"), build_router("dor", net), build_injection("bernoulli"), 1.0)
    >>> simulate_reference(spec, 3)["delivered"]     # 1 hop each, one per node per step
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    """
    rng = np.random.default_rng(spec.seed)
    state = InjectionState()
    from universal.engine.vcs import plan_vcs

    plan = plan_vcs(spec.router, vcs, buffer, spec.injection.vc_classes)
    view = _view(spec)
    if view.kind == "chaos":
        from universal.engine.chaos import queue_sizes

        view.queue = queue_sizes(spec.router, buffer, vcs).tolist()
    from universal.engine.fifo_vcs import check_vc_buffer

    check_vc_buffer(vc_buffer, buffer, bandwidth, spec.router.kind)
    core = ReferenceCore(view, bandwidth, buffer, plan, vcs, vc_buffer == "fifo")
    key = _priority(spec.priority, core, spec.injection.ranks)
    if core.chaos is not None:          # CHAOS: shared queue first, then input buffers, then sources
        rule = key
        key = lambda p: (core.chaos.place(p),) + rule(p)      # noqa: E731
    waiting: list[RefPacket] = []
    delivered: list[int] = []
    new: dict[int, list[RefPacket]] = {}
    status = "steps"
    created: list[int] = []
    last = steps - 1
    creating = steps if create_until is None else min(steps, create_until)
    crossings = None if record is None else record.setdefault("crossings", [])
    limit = None if record is None else record.get("limit")
    packets: list[RefPacket] = []
    from universal.engine.source_queue import source_window

    window = source_window(source_queue, bandwidth)
    tracer = None
    if record is not None and record.get("steps") is not None:
        from universal.engine.reference_trace import StepRecorder

        tracer = StepRecorder(core, record["steps"])
    fifo = window is not None
    cap, ordered = window or (bandwidth, True)
    front: dict[int, list[RefPacket]] = defaultdict(list)      # the routed packets of every source queue
    behind: dict[int, list[RefPacket]] = defaultdict(list)     # the packets behind them, in queue order
    for t in range(steps):
        if t % CHUNK == 0 and t < creating:
            new = _unpack(draw_chunk(spec, state, t, rng), len(delivered))
            for step in sorted(new):
                created.extend([step] * len(new[step]))
                if record is not None:
                    packets.extend(new[step])
            delivered.extend([-1] * sum(len(v) for v in new.values()))
        counts = core.counts(waiting)
        if tracer is not None:
            tracer.created(t, new.get(t, []) if t < creating else [])
        unrouted: set[int] = set()
        for p in (new.get(t, []) if t < creating else []):
            if p.src == p.dst and not p.path:          # no path to travel (VAL's s = d packets have one)
                delivered[p.pid] = t
                continue
            if p.alt is not None:                      # UGAL-L/G, from the counts before the step's new packets
                core.choose_path(p, counts)
            core.join(p)
            if fifo and (behind[p.src] or len(front[p.src]) >= cap):
                behind[p.src].append(p)                # not routed yet: waits for nothing
                unrouted.add(p.pid)
                continue
            front[p.src].append(p)
            waiting.append(p)
        for p in (new.get(t, []) if t < creating else []):
            if p.want is not None and delivered[p.pid] < 0 and p.pid not in unrouted:
                counts[p.want] += 1
        if tracer is not None:
            tracer.deciding(waiting, counts)
        core.decide(waiting, counts)
        if tracer is not None:
            tracer.decided(waiting)
        moving, links = _contend(core, waiting, key, front if fifo and ordered else None)
        if tracer is not None:
            tracer.contended(links, key)
        if buffer is not None and waiting and not moving and core.chaos is None:
            status, last = "deadlock", t
            if record is not None:      # the waiting packets and the links they wait for
                record["blocked"] = (sorted(p.pid for p in waiting), sorted({p.want for p in waiting}))
            if tracer is not None:
                tracer.finished(packets, delivered, deadlock=True)
            break
        if crossings is not None:
            if limit is not None and len(crossings) + len(moving) > limit:
                status, last = "record-limit", t - 1
                break
            crossings.extend((t, p.pid, p.want) for p in moving)
        gone = set()
        for p in moving:
            if core.cross(p, t):
                delivered[p.pid] = t
                gone.add(p.pid)
        waiting = [p for p in waiting if p.pid not in gone]
        if fifo:                                       # the next packets of a queue reach its front
            moved = {p.pid for p in moving}
            for v in list(front):
                front[v] = [p for p in front[v] if p.pid not in moved]
                while behind[v] and len(front[v]) < cap:
                    p = behind[v].pop(0)
                    front[v].append(p)
                    waiting.append(p)
        if core.chaos is not None:      # CHAOS: blocked input packets into the shared queues
            inputs = [p for p in waiting if core.chaos.place(p) == 1] if record is not None else []
            queued = core.chaos.into_queue(waiting, {p.pid for p in moving}, key)
            if record is not None:      # the fullest link buffer (the shared queues are not link buffers)
                most = max([n for e, n in core.occupancy.items() if not isinstance(e, tuple)], default=0)
                record["max_buffer"] = max(record.get("max_buffer", 0), most)
                record.setdefault("queued", []).extend((t, p.pid) for p in inputs if core.chaos.place(p) == 0)
                if tracer is not None:
                    tracer.queued([p.pid for p in inputs if core.chaos.place(p) == 0])
            if waiting and not moving and not queued:
                status, last = "deadlock", t
                if record is not None:
                    record["blocked"] = (sorted(p.pid for p in waiting), sorted({p.want for p in waiting}))
                if tracer is not None:
                    tracer.finished(packets, delivered, deadlock=True)
                break
        if tracer is not None:
            tracer.finished(packets, delivered)
        if create_until is not None and t + 1 >= creating and not waiting:
            status, last = "drained", t
            break
    # the packets created before the end (and before create_until)
    count = sum(1 for c in created if c <= last and c < creating)
    if record is not None:
        packets = sorted(packets, key=lambda p: p.pid)[:count]
        record.update(src=[p.src for p in packets], dst=[p.dst for p in packets], created=created[:count])
    return {"pid": list(range(count)), "delivered": delivered[:count], "status": status, "last": last}


def _contend(core: ReferenceCore, waiting: list[RefPacket], key, front: dict | None) -> tuple[list, list]:
    """The packets that cross in this step and the per-link contention
    (:meth:`ReferenceCore.contend`); with FIFO source queues (``front``: every queue's routed
    packets, in queue order) a packet that would leave its queue while one before it stays is
    taken out of the contention, and the contention run again."""
    out: set[int] = set()
    while True:
        moving, links = core.contend([p for p in waiting if p.pid not in out], key)
        if front is None:
            return moving, links
        moved = {p.pid for p in moving}
        broke = {q.pid for queue in front.values() for i, q in enumerate(queue)
                 if q.pid in moved and any(r.pid not in moved for r in queue[:i])}
        if not broke:
            return moving, links
        out |= broke


def _unpack(c, first_pid: int) -> dict[int, list[RefPacket]]:
    """The chunk's packets as :class:`~universal.engine.reference_core.RefPacket` objects, grouped by creation step."""
    out: dict[int, list[RefPacket]] = defaultdict(list)
    r = c.route
    for i in range(len(c.step)):
        src, dst = int(c.src[i]), int(c.dst[i])
        path = [int(e) for e in r.links[r.offsets[i]:r.offsets[i + 1]]] if r.offsets is not None else None
        p = RefPacket(first_pid + i, int(c.step[i]), src, dst, src, path, dst, arrived=int(c.step[i]))
        if r.via is not None and int(r.via[i]) not in (src, dst):
            p.via = int(r.via[i])
        if r.signs is not None:
            p.signs, p.remaining = [int(x) for x in r.signs[i]], [int(x) for x in r.remaining[i]]
        if c.tie is not None:
            p.tie = int(c.tie[i])
        if c.rank is not None:
            p.rank = int(c.rank[i])
        if path:
            p.want = path[0]
            if r.alt_offsets is not None:
                p.alt = [int(e) for e in r.alt_links[r.alt_offsets[i]:r.alt_offsets[i + 1]]]
        out[p.created].append(p)
    return out
