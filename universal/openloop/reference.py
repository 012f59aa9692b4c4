"""A plainly written open-loop engine, one packet at a time: the test oracle of
:mod:`universal.openloop.engine` (SPEC §11).

It follows the model of the fast engine's docstring literally with Python lists and dicts:
every step, the packets created in the step join the network, every adaptive packet that must
choose its next link does so from the counts of the packets waiting for each link at the start
of the step (a UGAL-L/G packet takes one of its two candidate paths as it is created, from the
counts and the used credits before the step's new packets), then every link sorts its
contenders by priority and lets the first B cross (with
bounded buffers, only those that find room counted from the start of the step, or cross their
last link). It shares nothing with the fast engine but the random draws of
:func:`universal.openloop.creation.draw_chunk` and the tie hash, so with one seed the two must
deliver every packet in the same step.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from universal.openloop.creation import CHUNK, InjectionState, RunSpec, draw_chunk
from universal.openloop.routes import tie_uniform_py

__all__ = ["simulate_reference"]


@dataclass
class _Packet:
    pid: int
    created: int
    src: int
    dst: int
    node: int
    path: list | None
    target: int
    via: int = -1
    signs: list = field(default_factory=list)
    remaining: list = field(default_factory=list)
    tie: int = 0
    rank: int = 0
    pos: int = 0
    hops: int = 0
    arrived: int = 0
    want: int | None = None
    buffer: int | None = None      # the link whose buffer it sits in (None: source queue)
    alt: list | None = None        # UGAL-L/G: the non-minimal candidate, until the choice


class _Topology:
    """Plain-Python views of the network: out-links, heads, distances, torus directions."""

    def __init__(self, spec: RunSpec) -> None:
        net = spec.router.network
        self.head = [int(x) for x in net.link_head]
        self.out = defaultdict(list)
        for e, v in enumerate(net.link_tail.tolist()):
            self.out[v].append(e)
        self.link = {(int(u), int(v)): e for e, (u, v) in enumerate(zip(net.link_tail, net.link_head))}
        self.dist = spec.router.distance.tolist() if spec.router.kind in ("min-adaptive", "ugal") else None
        if spec.router.kind == "goal":
            self.k, self.n = spec.router.k_n
        if spec.router.kind == "splitter":
            self.depth, self.level = int(net.depth), [int(x) for x in net.levels]

    def productive(self, v: int, target: int) -> list[int]:
        return sorted(e for e in self.out[v] if self.dist[self.head[e]][target] == self.dist[v][target] - 1)

    def step_link(self, v: int, dim: int, sign: int) -> int:
        k = self.k
        x = (v // k ** dim) % k
        return self.link[(v, v + (((x + sign) % k) - x) * k ** dim)]


def _diameter(topo: _Topology, nodes: int) -> int:
    """The network's diameter, by breadth-first search from every node (growing rank's D)."""
    best = 0
    for s in range(nodes):
        dist = {s: 0}
        frontier = [s]
        while frontier:
            nxt = []
            for v in frontier:
                for e in topo.out[v]:
                    w = topo.head[e]
                    if w not in dist:
                        dist[w] = dist[v] + 1
                        nxt.append(w)
            frontier = nxt
        best = max(best, max(dist.values()))
    return max(best, 1)


#: K of the ranked rules: ranks are drawn from [0, 2**31) (:func:`universal.openloop.creation.draw_chunk`).
_K = 2**31


def _priority(rule: str, topo: _Topology, kind: str, nodes: int):
    """The sort key of ``rule``: the smallest key crosses first."""
    def left(p: _Packet) -> int:
        if p.path is not None:
            return len(p.path) - p.pos
        if kind == "goal":
            return sum(p.remaining)
        if kind == "splitter":               # one level per hop down to the outputs
            return topo.depth - topo.level[p.node]
        extra = topo.dist[p.target][p.dst] if p.target != p.dst else 0
        return topo.dist[p.node][p.target] + extra

    if rule == "growing-rank":
        D = _diameter(topo, nodes)
        # rank + hops * K / D, compared exactly after multiplying by D; p.hops = links crossed
        return lambda p: (p.rank * D + p.hops * _K, p.pid)
    return {"age": lambda p: (p.pid,), "longest-in-system": lambda p: (p.created, p.pid),
            "fifo": lambda p: (p.arrived, p.pid), "random": lambda p: (p.rank, p.pid),
            "random-rank": lambda p: (p.rank, p.pid), "farthest-to-go": lambda p: (-left(p), p.pid),
            "nearest-to-go": lambda p: (left(p), p.pid)}[rule]


def _choose(cands: list[int], counts: dict, p: _Packet) -> int:
    best = min(counts.get(e, 0) for e in cands)
    tied = [e for e in cands if counts.get(e, 0) == best]
    u = tie_uniform_py(p.tie, p.hops)
    return tied[min(int(u * len(tied)), len(tied) - 1)]


def _decide(p: _Packet, topo: _Topology, counts: dict, kind: str, threshold: float) -> None:
    if kind == "goal":
        cands = [topo.step_link(p.node, i, p.signs[i]) for i in range(topo.n) if p.remaining[i] > 0]
        p.want = _choose(cands, counts, p)
        return
    if kind == "ugal" and p.via >= 0:
        def q(target):
            return min(counts.get(e, 0) for e in topo.productive(p.src, target))
        h_min = topo.dist[p.src][p.dst]
        h_val = topo.dist[p.src][p.via] + topo.dist[p.via][p.dst]
        if q(p.dst) * h_min > q(p.via) * h_val + threshold:
            p.target = p.via
        p.via = -1
    p.want = _choose(topo.productive(p.node, p.target), counts, p)


def _ugal_choose(p: _Packet, counts: dict, occupancy: dict, spec: RunSpec, bandwidth: int) -> None:
    """UGAL-L/G as :func:`universal.openloop.routes.ugal_pick` describes it, one packet at a time."""
    first = 1 if spec.router.network.terminals is not None else 0

    def local(path: list) -> int:            # the first router link's queue and used credits
        return counts[path[first]] + occupancy[path[first]] if len(path) > first else 0

    def along(path: list) -> float:          # every link's queue, plus the hops
        return sum(counts[e] for e in path) / bandwidth + len(path)

    if spec.router.extra["mode"] == "local":
        longer = local(p.path) * len(p.path) > local(p.alt) * len(p.alt) + spec.router.threshold
    else:
        longer = along(p.path) > along(p.alt) + spec.router.threshold
    if longer:
        p.path = p.alt
        p.want = p.path[0]
    p.alt = None


def _splitter_decide(packets: list[_Packet], network, counts: dict) -> None:
    """The splitter rule, literally: the packets of one node bound for one output set, in
    packet-id order, take the allowed edges in turn, ordered by the packets waiting for them
    (counted at the start of the step) and then by the row they reach."""
    from universal.networks.multibutterfly import splitter_links
    rows = len(network.inputs)
    groups: dict[tuple, list] = defaultdict(list)
    for p in sorted(packets, key=lambda p: p.pid):
        edges = [int(e) for e in splitter_links(network, [p.node], [p.dst - network.depth * rows])[0]]
        groups[(p.node, tuple(edges))].append(p)
    for (_, edges), group in groups.items():
        ordered = sorted(edges, key=lambda e: (counts.get(e, 0), edges.index(e)))
        for turn, p in enumerate(group):
            p.want = ordered[turn % len(ordered)]


def _final(p: _Packet, topo: _Topology) -> bool:
    if p.path is not None:
        return p.pos + 1 == len(p.path)
    return topo.head[p.want] == p.dst and p.target == p.dst


def _cross(p: _Packet, topo: _Topology, kind: str, t: int) -> bool:
    """Move ``p`` across its wanted link; True when it is delivered."""
    p.hops += 1
    p.arrived = t + 1
    if p.path is not None:
        p.pos += 1
        if p.pos == len(p.path):
            return True
        p.want = p.path[p.pos]
        return False
    head = topo.head[p.want]
    if kind == "goal":
        for i in range(topo.n):
            if p.remaining[i] > 0 and topo.step_link(p.node, i, p.signs[i]) == p.want:
                p.remaining[i] -= 1
                break
    p.node = head
    if head == p.target and p.target != p.dst:
        p.target = p.dst
    p.want = None
    return head == p.dst and p.target == p.dst


def simulate_reference(spec: RunSpec, steps: int, *, bandwidth: int = 1, buffer: int | None = None,
                       create_until: int | None = None, record: dict | None = None) -> dict:
    """Run ``spec`` alone for ``steps`` steps, one packet at a time.

    Parameters
    ----------
    spec : RunSpec
    steps : int
        Steps to run (with ``create_until``: the most steps to run).
    bandwidth, buffer : int, int or None
        B and the link-buffer size b (None: unbounded).
    create_until : int, optional
        Packets are created in steps ``0 .. create_until - 1`` only (the same packets as the
        full run; the later ones of the last creation chunk are dropped), and the run ends as
        soon as all of them are delivered: the network drains (status ``drained``; ``steps``
        if they are not all delivered within ``steps`` steps).
    record : dict, optional
        Filled with what a step-by-step view needs: ``src``, ``dst``, ``created`` (per packet,
        lists) and ``crossings``, one ``(step, packet, link)`` per link crossing in step order.
        With ``record["limit"] = M`` the run stops (status ``record-limit``) before recording
        more than M crossings. Runs without ``record`` do not pay for it.

    Returns
    -------
    dict
        ``pid`` (creation order, 0, 1, ...) and ``delivered`` (the step each packet was
        delivered in, -1 if not yet) as lists, ``status`` (``steps``, ``deadlock``, or with
        ``create_until`` ``drained``; ``record-limit``) and ``last`` (the last step run).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.openloop.routes import build_router
    >>> from universal.openloop.workload import build_injection, offered_traffic
    >>> net = build_network("torus:k=4,n=1")
    >>> spec = RunSpec(offered_traffic(net, "tornado"), build_router("dor", net), build_injection("bernoulli"), 1.0)
    >>> simulate_reference(spec, 3)["delivered"]     # 1 hop each, one per node per step
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    """
    rng = np.random.default_rng(spec.seed)
    state = InjectionState()
    topo = _Topology(spec)
    kind = spec.router.kind
    key = _priority(spec.priority, topo, kind, spec.router.network.num_nodes)
    waiting: list[_Packet] = []
    delivered: list[int] = []
    occupancy: dict[int, int] = defaultdict(int)
    new: dict[int, list[_Packet]] = {}
    status = "steps"
    created: list[int] = []
    last = steps - 1
    creating = steps if create_until is None else min(steps, create_until)
    crossings = None if record is None else record.setdefault("crossings", [])
    limit = None if record is None else record.get("limit")
    packets: list[_Packet] = []
    for t in range(steps):
        if t % CHUNK == 0 and t < creating:
            new = _unpack(draw_chunk(spec, state, t, rng), len(delivered), spec)
            for step in sorted(new):
                created.extend([step] * len(new[step]))
                if record is not None:
                    packets.extend(new[step])
            delivered.extend([-1] * sum(len(v) for v in new.values()))
        counts: dict[int, int] = defaultdict(int)
        for p in waiting:
            if p.want is not None:
                counts[p.want] += 1
        for p in (new.get(t, []) if t < creating else []):
            if p.src == p.dst and not p.path:          # no path to travel (VAL's s = d packets have one)
                delivered[p.pid] = t
                continue
            if p.alt is not None:                      # UGAL-L/G, from the counts before the step's new packets
                _ugal_choose(p, counts, occupancy, spec, bandwidth)
            waiting.append(p)
        for p in (new.get(t, []) if t < creating else []):
            if p.want is not None and delivered[p.pid] < 0:
                counts[p.want] += 1
        if kind == "splitter":
            _splitter_decide([p for p in waiting if p.want is None], spec.router.network, counts)
        for p in waiting:
            if p.want is None:
                _decide(p, topo, counts, kind, spec.router.threshold)
        contenders: dict[int, list[_Packet]] = defaultdict(list)
        for p in waiting:
            contenders[p.want].append(p)
        moving = []
        for e, group in contenders.items():
            group.sort(key=key)
            crossed = entered = 0
            room = None if buffer is None else buffer - occupancy[e]
            for p in group:
                if crossed == bandwidth:
                    break
                final = _final(p, topo)
                if room is not None and not final and entered >= room:
                    continue
                crossed += 1
                entered += not final
                moving.append(p)
        if buffer is not None and waiting and not moving:
            status, last = "deadlock", t
            break
        if crossings is not None:
            if limit is not None and len(crossings) + len(moving) > limit:
                status, last = "record-limit", t - 1
                break
            crossings.extend((t, p.pid, p.want) for p in moving)
        gone = set()
        for p in moving:
            link = p.want
            if p.buffer is not None:
                occupancy[p.buffer] -= 1
            if _cross(p, topo, kind, t):
                delivered[p.pid] = t
                gone.add(p.pid)
            else:
                p.buffer = link
                occupancy[link] += 1
        waiting = [p for p in waiting if p.pid not in gone]
        if create_until is not None and t + 1 >= creating and not waiting:
            status, last = "drained", t
            break
    # the packets created before the end (and before create_until)
    count = sum(1 for c in created if c <= last and c < creating)
    if record is not None:
        packets = sorted(packets, key=lambda p: p.pid)[:count]
        record.update(src=[p.src for p in packets], dst=[p.dst for p in packets], created=created[:count])
    return {"pid": list(range(count)), "delivered": delivered[:count], "status": status, "last": last}


def _unpack(c, first_pid: int, spec: RunSpec) -> dict[int, list[_Packet]]:
    """The chunk's packets as :class:`_Packet` objects, grouped by creation step."""
    out: dict[int, list[_Packet]] = defaultdict(list)
    r = c.route
    for i in range(len(c.step)):
        src, dst = int(c.src[i]), int(c.dst[i])
        path = [int(e) for e in r.links[r.offsets[i]:r.offsets[i + 1]]] if r.offsets is not None else None
        p = _Packet(first_pid + i, int(c.step[i]), src, dst, src, path, dst, arrived=int(c.step[i]))
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
