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
from dataclasses import dataclass, field
from typing import Callable

from universal.engine.ties import tie_uniform_py
from universal.networks import Network

__all__ = ["RefPacket", "RoutingView", "ReferenceCore"]


@dataclass
class RefPacket:
    """One packet as the reference engine sees it.

    ``path`` is the list of links of a packet routed obliviously (None for an adaptive one, which
    keeps ``node``, ``target`` and, under GOAL, ``signs``/``remaining`` per dimension).
    ``want`` is the link it waits for (None: an adaptive packet still to choose), ``buffer`` the
    link whose buffer it sits in (None: its source), ``arrived`` the step it reached its current
    node (the fifo rule's key), ``injected`` the step it crossed its first link (-1: not yet; the
    injection-age rule's key), ``alt`` a UGAL-L/G packet's second candidate path and ``classes``
    the virtual channel class of every hop of ``path`` (with virtual channels). With FIFO VCs
    ``fifo_vc`` is the (link, VC) queue it sits in (None: its source) and ``next_vc`` the VC it
    was granted for the hop it is about to make. With GOAL's
    *-channels an adaptive packet keeps ``vc``, the class of the hop it waits to make (chosen
    with ``want``), and ``wrapped``, bit i set once it has crossed dimension i's wrap-around.
    """

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
    injected: int = -1
    want: int | None = None
    buffer: int | None = None
    alt: list | None = None
    classes: list | None = None
    vc: int | None = None
    wrapped: int = 0
    fifo_vc: tuple | None = None
    next_vc: int = 0


@dataclass
class RoutingView:
    """What the reference's routing decisions read, in plain Python.

    ``kind`` is ``paths`` (every packet follows its ``path``), ``ugal-paths`` (UGAL-L/G: a minimal
    path and a Valiant one, one taken at injection; ``mode`` is ``local`` or ``global``),
    ``min-adaptive``, ``goal``, ``ugal``, ``chaos`` or ``splitter``. ``distance`` is the hop distance
    table (min-adaptive, ugal, chaos), ``k``, ``n`` the torus (goal) and ``queue`` CHAOS's
    shared-queue places per node. ``link_weight`` (UGAL on a dragonfly): every link's weight, 1
    and ``1 + N`` for a global link; the reference then finds the lightest paths itself
    (:meth:`ReferenceCore.lightest`) and its minimal legs are those, their hops its distances.
    """

    kind: str
    network: Network
    threshold: float = 0.0
    mode: str | None = None
    distance: list | None = None
    link_weight: list | None = None
    k: int = 0
    n: int = 0
    queue: list | None = None


class ReferenceCore:
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

    def choose_path(self, p: RefPacket, counts: dict) -> None:
        """UGAL-L/G: ``p`` keeps its minimal path or takes its Valiant one (``p.alt``), as
        :func:`universal.engine.routes.ugal_pick` describes, from ``counts`` and the buffers."""
        view = self.view
        first = 1 if view.network.terminals is not None else 0

        def local(path: list) -> int:            # the first router link's queue and used credits
            return counts[path[first]] + self.occupancy[path[first]] if len(path) > first else 0

        def queued(path: list) -> int:           # every link's queue
            return sum(counts[e] for e in path)

        if view.mode == "local":
            q_min, q_val = local(p.path), local(p.alt)
            longer = q_min * len(p.path) > q_val * len(p.alt) + view.threshold
        else:
            q_min, q_val = queued(p.path), queued(p.alt)     # per path: its queues / B plus its hops
            longer = q_min / self.bandwidth + len(p.path) > q_val / self.bandwidth + len(p.alt) + view.threshold
        if self.decision_log is not None:
            self.decision_log.setdefault(p.pid, {}).update(
                q_min=q_min, H_min=len(p.path), q_val=q_val, H_val=len(p.alt), T=view.threshold, chose_valiant=longer,
                B=self.bandwidth)
        if longer:
            p.path = p.alt
            p.want = p.path[0]
        p.alt = None

    def decide(self, waiting: list[RefPacket], counts: dict) -> None:
        """Every adaptive packet without a next link chooses one (see the module docstring);
        with GOAL's *-channels also every one whose chosen class buffer is full (:meth:`_decide_star`)."""
        if self.chaos is not None:
            self.chaos.decide(waiting, counts)
            return
        if self.star:
            # a packet keeps its choice while that class buffer has room (or it is its last hop)
            again = [p for p in waiting if p.path is None and (p.want is None or not self._room(p, p.want, p.vc))]
            for p in again:
                self._decide_star(p, counts)
            return
        undecided = [p for p in waiting if p.want is None]
        if self.view.kind == "splitter":
            self._splitter(undecided, counts)
            return
        for p in undecided:
            self._decide_one(p, counts)

    def _choose(self, cands: list[int], counts: dict, p: RefPacket) -> int:
        best = min(counts.get(e, 0) for e in cands)
        tied = [e for e in cands if counts.get(e, 0) == best]
        u = tie_uniform_py(p.tie, p.hops)
        return tied[min(int(u * len(tied)), len(tied) - 1)]

    def _decide_one(self, p: RefPacket, counts: dict) -> None:
        view = self.view
        if view.kind == "goal":
            cands = [self.torus_link(p.node, i, p.signs[i]) for i in range(view.n) if p.remaining[i] > 0]
            p.want = self._choose(cands, counts, p)
            return
        if view.kind == "ugal" and p.via >= 0:
            self._ugal_target(p, counts)
        p.want = self._choose(self.productive(p.node, p.target), counts, p)

    def used_credits(self, e: int) -> int:
        """Packets that crossed link ``e`` and sit in its buffer at the next router, every VC
        class of the link counted; 0 with unbounded buffers (no credits)."""
        if self.buffer is None:
            return 0
        if self.plan is None:
            return self.occupancy.get(e, 0)
        return sum(self.occupancy.get((e, c), 0) for c in range(self.plan.classes))

    def _ugal_target(self, p: RefPacket, counts: dict) -> None:
        """UGAL's one choice: toward the intermediate when q_min * H_min > q_val * H_val +
        threshold, a first link's q the packets waiting for it plus its used credits. On a
        network with terminals the first links are those out of the source terminal's router
        (the terminal's own link is both candidates' first) and q counts the packets in the
        link's buffer at the next router with unbounded buffers too, as UGAL-L's does."""
        net = self.view.network
        at = p.src if net.terminals is None else int(net.router_of[p.src])

        def credits(e: int) -> int:
            return self.used_credits(e) if net.terminals is None else self.occupancy.get(e, 0)

        def q(target: int) -> int:
            return min(counts.get(e, 0) + credits(e) for e in self.productive(at, target))
        q_min, q_val = q(p.dst), q(p.via)
        h_min = self.dist[p.src][p.dst]
        h_val = self.dist[p.src][p.via] + self.dist[p.via][p.dst]
        valiant = q_min * h_min > q_val * h_val + self.view.threshold
        if self.decision_log is not None:
            self.decision_log.setdefault(p.pid, {}).update(
                q_min=q_min, H_min=h_min, q_val=q_val, H_val=h_val, T=self.view.threshold, chose_valiant=valiant, at=at)
        if valiant:
            p.target = p.via
        p.via = -1

    def _room(self, p: RefPacket, e: int, c: int) -> bool:
        """Whether ``p`` may cross ``e`` into class ``c``: the class buffer had room at the start
        of the step, or the hop delivers ``p`` (no buffer to enter)."""
        last = self.head[e] == p.dst and p.target == p.dst
        return last or self.occupancy[(e, c)] < int(self.plan.capacity[c])

    def _decide_star(self, p: RefPacket, counts: dict) -> None:
        """GOAL's *-channels, one packet: its options are (link, class) pairs, the non-* class on
        every allowed link, then the * class (``*_0`` or ``*_1`` by whether it has crossed, or
        is crossing, the wrap-around of that dimension) on every allowed link of the lowest
        dimension still to correct; the cheapest wins: one whose class buffer has room (or that
        is the last hop) before one without, then the fewest packets waiting for the link other
        than ``p`` itself, then the non-* class; ties by the tie number of the decision."""
        view, geo, plan = self.view, self.plan.geometry, self.plan
        if view.kind == "ugal" and p.via >= 0:
            self._ugal_target(p, counts)
        if view.kind == "goal":
            links = [self.torus_link(p.node, i, p.signs[i]) for i in range(view.n) if p.remaining[i] > 0]
        else:
            links = self.productive(p.node, p.target)
        dims = [int(geo.type[e]) // 2 for e in links]
        phase = 1 if view.kind == "ugal" and p.target == p.dst else 0
        per = plan.per_phase
        options = [(e, per * phase + per - 1, False) for e in links]
        for e, d in zip(links, dims):
            if d == min(dims):
                crossed = bool((p.wrapped >> d) & 1) or bool(geo.wrap[e])
                options.append((e, per * phase + (int(crossed) if plan.ring else 0), True))

        def cost(option) -> tuple:
            e, c, star = option
            return (not self._room(p, e, c), counts.get(e, 0) - (p.want == e), star)

        best = min(cost(o) for o in options)
        tied = [o for o in options if cost(o) == best]
        if self.decision_log is not None:       # every (link, class) option with its cost, as compared
            self.decision_log.setdefault(p.pid, {})["options"] = [[e, c, *cost((e, c, star))] for e, c, star in options]
        u = tie_uniform_py(p.tie, p.hops)
        p.want, p.vc, _ = tied[min(int(u * len(tied)), len(tied) - 1)]

    def _splitter(self, packets: list[RefPacket], counts: dict) -> None:
        """The splitter rule, literally: the packets of one node bound for one output set, in
        packet-id order, take the allowed edges in turn, ordered by the packets waiting for them
        (counted at the start of the step) and then by the row they reach."""
        from universal.networks.multibutterfly import splitter_links

        network = self.view.network
        rows = len(network.inputs)
        groups: dict[tuple, list] = defaultdict(list)
        for p in sorted(packets, key=lambda p: p.pid):
            edges = [int(e) for e in splitter_links(network, [p.node], [p.dst - network.depth * rows])[0]]
            groups[(p.node, tuple(edges))].append(p)
        for (_, edges), group in groups.items():
            ordered = sorted(edges, key=lambda e: (counts.get(e, 0), edges.index(e)))
            for turn, p in enumerate(group):
                p.want = ordered[turn % len(ordered)]

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
