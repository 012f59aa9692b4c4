"""The routing decisions of the reference core, one packet at a time (a mixin of
:class:`universal.engine.reference_core.ReferenceCore`): adaptive packets choosing their next link
(:meth:`Decisions.decide`), UGAL's choice of an intermediate or of a UGAL-L/G path, GOAL's
*-channels (a link and a VC class) and the multibutterfly's splitter rule.

References
----------
Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003, §2-§4.
"""

from __future__ import annotations

from collections import defaultdict

from universal.engine.reference_records import RefPacket
from universal.engine.ties import tie_uniform_py


class Decisions:
    """The routing decisions of step 1 (a mixin of :class:`~universal.engine.reference_core.ReferenceCore`,
    whose state they read: the routing view, the distances, the buffers' occupancy)."""

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
