"""The step rule of the packet engine, written plainly one packet at a time: the one core of the
reference engines, whatever the workload (SPEC §2, §11).

A batch (:func:`universal.engine.reference.simulate_reference`: packets on paths fixed before
the run, the survey's protocols deciding contention) and an open-loop run
(:func:`universal.engine.reference_runs.simulate_reference`: packets created as the run goes,
oblivious or adaptive routing, the open-loop priorities) differ in where packets come from, how
steps are numbered and what is recorded; the step itself is this module's, for both:

1. every adaptive packet that has no next link yet chooses one from the packets waiting for
   each link at the start of the step (:meth:`ReferenceCore.decide`); with GOAL's *-channels
   it chooses a link and a VC class, and chooses again whenever that class buffer is full
   (:meth:`ReferenceCore._decide_star`); a UGAL-L/G packet takes one of its two candidate
   paths as it joins (:meth:`ReferenceCore.choose_path`);
2. every link sorts the packets that want it by the contention rule's key, the smallest first,
   and lets the first B cross; with link buffers of b packets, a packet that would enter the
   link's buffer crosses only while fewer than the room counted at the start of the step have
   entered, and one crossing its last link needs no room (:meth:`ReferenceCore.contend`);
3. the packets that cross move on, leave the buffer they sat in and enter the next one, or are
   delivered (:meth:`ReferenceCore.cross`).

Step 1's decisions are :mod:`universal.engine.reference_decisions`' (a mixin of the core), the
packet and routing view records :mod:`universal.engine.reference_records`' (both exported here).

Nothing here is vectorised or clever: Python lists and dicts, sorted per link. The fast engines
share nothing with it but the random draws made before the run and the tie hash
(:mod:`universal.engine.ties`), so with one seed they must move every packet in the same step.

References
----------
Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2 and §5;
Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003, §2-§4.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable

# the parts moved out (re-exported: reference.py and reference_runs.py import the records from here)
from universal.engine.reference_decisions import Decisions
from universal.engine.reference_records import RefPacket, RoutingView

__all__ = ["RefPacket", "RoutingView", "ReferenceCore"]


class ReferenceCore(Decisions):
    """The state every step reads: the network's links, the link buffers and the routing.

    Parameters
    ----------
    view : RoutingView
    bandwidth : int
        B, packets a link forwards per step.
    buffer : int or None
        b, packets a link buffer holds (None: unbounded); with virtual channels, a VC.
    plan : VCPlan, optional
        Virtual channel classes (:mod:`universal.engine.vcs`): a packet then enters the buffer of
        its hop's class at the link's head, which holds the class's VCs times b packets.
    vcs : int
        V, virtual channels per link (read with ``fifo_vcs`` only).
    fifo_vcs : bool
        FIFO VCs (:mod:`universal.engine.fifo_vcs`): every VC (link, v) is a queue of b packets
        whose head alone may leave; a packet entering a class takes the VC of the class with
        the fewest packets at the start of the step, ties to the lowest v.

    Examples
    --------
    Two packets want link 0 of a ring; the smaller key crosses:

    >>> from universal.networks import build_network
    >>> core = ReferenceCore(RoutingView("paths", build_network("torus:k=4,n=1")), 1, None)
    >>> a, b = (RefPacket(i, 0, 0, 1, 0, [0], 1, want=0) for i in range(2))
    >>> [p.pid for p in core.contend([a, b], lambda p: (p.pid,))[0]]
    [0]
    """

    def __init__(self, view: RoutingView, bandwidth: int, buffer: int | None, plan=None, vcs: int = 1,
                 fifo_vcs: bool = False) -> None:
        net = view.network
        self.fifo_vcs = fifo_vcs
        #: with FIFO VCs, the packets in every VC (link, v), head first
        self.fifos: dict[tuple, list[RefPacket]] = defaultdict(list)
        self.vcs = vcs if plan is not None else 1
        self.view, self.bandwidth, self.buffer = view, bandwidth, buffer
        self.plan = plan if buffer is not None else None
        self.star = self.plan is not None and self.plan.scheme == "star"
        self.head = [int(x) for x in net.link_head]
        self.out: dict[int, list[int]] = defaultdict(list)
        for e, v in enumerate(net.link_tail.tolist()):
            self.out[v].append(e)
        self.link = {(int(u), int(v)): e for e, (u, v) in enumerate(zip(net.link_tail, net.link_head))}
        self.dist = view.distance
        self.cost = None
        if view.link_weight is not None:        # UGAL on a dragonfly: fewest global links, then hops
            N = net.num_nodes
            self.cost = [self.lightest(s) for s in range(N)]
            self.dist = [[c % N for c in row] for row in self.cost]
        if view.kind == "splitter":
            self.depth, self.level = int(net.depth), [int(x) for x in net.levels]
        #: packets in every link buffer (a packet sits in the buffer of the link it crossed last;
        #: with virtual channels, keyed by (link, class))
        self.occupancy: dict = defaultdict(int)
        #: when a dict (``route --trace``): what every decision compared, by packet id: UGAL's
        #: numbers (:meth:`_ugal_target`, :meth:`choose_path`) and the *-channel options
        #: (:meth:`_decide_star`), so the trace prints the very values the rules read
        self.decision_log: dict | None = None
        self.chaos = None
        if view.kind == "chaos":                # CHAOS: shared queues, deflection, the injection gate
            from universal.engine.reference_chaos import ChaosRules

            self.chaos = ChaosRules(self, view.queue)

    # ------------------------------------------------------------------ routing
    def productive(self, v: int, target: int) -> list[int]:
        """The links from ``v`` one hop closer to ``target``, in link order (with link weights:
        the first links of the lightest paths from ``v`` to ``target``)."""
        if self.cost is not None:
            w, cost = self.view.link_weight, self.cost
            return sorted(e for e in self.out[v] if cost[self.head[e]][target] + w[e] == cost[v][target])
        return sorted(e for e in self.out[v] if self.dist[self.head[e]][target] == self.dist[v][target] - 1)

    def lightest(self, s: int) -> list[int]:
        """The weight of the lightest path from ``s`` to every node (Dijkstra, ``view.link_weight``)."""
        import heapq

        w = self.view.link_weight
        best = {s: 0}
        heap = [(0, s)]
        while heap:
            c, v = heapq.heappop(heap)
            if c > best[v]:
                continue
            for e in self.out[v]:
                u = self.head[e]
                if c + w[e] < best.get(u, c + w[e] + 1):
                    best[u] = c + w[e]
                    heapq.heappush(heap, (c + w[e], u))
        return [best[u] for u in range(self.view.network.num_nodes)]

    def torus_link(self, v: int, dim: int, sign: int) -> int:
        """The link from ``v`` one step in dimension ``dim``, direction ``sign`` (+1 or -1)."""
        k = self.view.k
        x = (v // k ** dim) % k
        return self.link[(v, v + (((x + sign) % k) - x) * k ** dim)]

    def hops_left(self, p: RefPacket) -> int:
        """Links still ahead of ``p`` (an adaptive packet: its minimal distance, via its target)."""
        if p.path is not None:
            return len(p.path) - p.pos
        if self.view.kind == "goal":
            return sum(p.remaining)
        if self.view.kind == "splitter":                 # one level per hop down to the outputs
            return self.depth - self.level[p.node]
        extra = self.dist[p.target][p.dst] if p.target != p.dst else 0
        return self.dist[p.node][p.target] + extra

    def diameter(self) -> int:
        """The network's diameter, by breadth-first search from every node (at least 1)."""
        best = 0
        for s in range(self.view.network.num_nodes):
            dist = {s: 0}
            frontier = [s]
            while frontier:
                nxt = []
                for v in frontier:
                    for e in self.out[v]:
                        w = self.head[e]
                        if w not in dist:
                            dist[w] = dist[v] + 1
                            nxt.append(w)
                frontier = nxt
            best = max(best, max(dist.values()))
        return max(best, 1)

    @staticmethod
    def counts(waiting: list[RefPacket]) -> dict[int, int]:
        """Packets waiting for every link (those that have chosen one)."""
        counts: dict[int, int] = defaultdict(int)
        for p in waiting:
            if p.want is not None:
                counts[p.want] += 1
        return counts

    def join(self, p: RefPacket) -> None:
        """A packet enters the network: with virtual channels, its route's hop classes."""
        if self.plan is not None and p.path is not None:
            from universal.engine.vcs import path_classes

            p.classes = path_classes(p.path, self.plan.geometry)

    def buffer_of(self, p: RefPacket):
        """The buffer ``p`` enters by crossing its wanted link, and how many packets it holds."""
        if self.plan is None:
            return p.want, self.buffer
        c = p.classes[p.pos] if p.path is not None else p.vc
        return (p.want, c), int(self.plan.capacity[c])

    # ------------------------------------------------------------------ the step
    def final(self, p: RefPacket) -> bool:
        """Whether crossing its wanted link delivers ``p``."""
        if p.path is not None:
            return p.pos + 1 == len(p.path)
        return self.head[p.want] == p.dst and p.target == p.dst

    def contend(self, waiting: list[RefPacket], key: Callable[[RefPacket], tuple]) -> tuple[list, list]:
        """Which waiting packets cross in this step.

        Returns
        -------
        moving : list of RefPacket
            The packets that cross, link by link.
        links : list of (link, ranked, crossed, no_room)
            Per wanted link (in the order the waiting packets first want them): its contenders
            in priority order, those that cross, and those refused for want of buffer room.
        """
        contenders: dict[int, list[RefPacket]] = defaultdict(list)
        for p in waiting:
            contenders[p.want].append(p)
        moving, links = [], []
        for e, group in contenders.items():
            ranked = sorted(group, key=key)
            crossed, no_room = [], []
            entered: dict = defaultdict(int)
            for p in ranked:
                if len(crossed) == self.bandwidth:
                    break
                if self.fifo_vcs and p.fifo_vc is not None and self.fifos[p.fifo_vc][0] is not p:
                    continue              # FIFO VCs: behind its VC's head, it cannot leave
                if self.chaos is not None and self.chaos.held(p):
                    continue              # CHAOS's injection gate: not this step
                final = self.final(p)
                if self.buffer is not None and not final:
                    into, size = self.buffer_of(p)
                    if entered[into] >= size - self.occupancy[into]:
                        no_room.append(p)
                        continue          # no room in the buffer: it stays where it is
                    entered[into] += 1
                    if self.fifo_vcs:
                        p.next_vc = self._emptiest_vc(p.want, into)
                crossed.append(p)
            moving += crossed
            links.append((e, ranked, crossed, no_room))
        return moving, links

    def _emptiest_vc(self, link: int, into) -> int:
        """The VC a packet entering the class buffer ``into`` on ``link`` is granted: of its
        class's VCs the one holding the fewest packets now (the start of the step), ties to the
        lowest number (class c owns the VCs v with v * classes // V == c)."""
        if self.plan is None:
            return 0
        c, G = into[1], self.plan.classes
        mine = [v for v in range(self.vcs) if v * G // self.vcs == c]
        return min(mine, key=lambda v: (len(self.fifos[(link, v)]), v))

    def cross(self, p: RefPacket, t: int) -> bool:
        """Move ``p`` across its wanted link in step ``t``; True when that delivers it."""
        link = p.want
        into = self.buffer_of(p)[0]         # the link's buffer, or its class's with VCs
        if p.buffer is not None:
            self.occupancy[p.buffer] -= 1
        if p.fifo_vc is not None:
            if self.fifos[p.fifo_vc].pop(0) is not p:      # the head alone leaves
                raise AssertionError(f"packet {p.pid} left its VC from behind its head")
            p.fifo_vc = None
        if p.injected < 0:              # injection-age's stamp: the first link crossed
            p.injected = t
        p.hops += 1
        p.arrived = t + 1
        if p.path is not None:
            p.pos += 1
            done = p.pos == len(p.path)
            p.want = None if done else p.path[p.pos]
        else:
            head = self.head[link]
            if self.view.kind == "goal":
                for i in range(self.view.n):
                    if p.remaining[i] > 0 and self.torus_link(p.node, i, p.signs[i]) == link:
                        p.remaining[i] -= 1
                        break
            p.node = head
            if self.star and self.plan.geometry.wrap[link]:
                p.wrapped |= 1 << (int(self.plan.geometry.type[link]) // 2)
            if head == p.target and p.target != p.dst:
                p.target = p.dst
                p.wrapped = 0                   # UGAL's second phase: no wrap-around crossed yet
            p.want = None
            done = head == p.dst and p.target == p.dst
        if done:
            p.buffer = None
        else:
            p.buffer = into
            self.occupancy[into] += 1
            if self.fifo_vcs:
                p.fifo_vc = (link, p.next_vc)
                self.fifos[p.fifo_vc].append(p)
        return done
