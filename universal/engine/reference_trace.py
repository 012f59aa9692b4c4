"""Step records of the open-loop reference engine, for ``route --trace`` of an adaptive routing.

:func:`universal.engine.reference_runs.simulate_reference` given ``record["steps"] = []`` calls a
:class:`StepRecorder` at four points of every step and appends one plain record per step (ints,
lists and strings; packet, link and node ids; the engine's own step numbers, from 0). Recording
reads the engine's state and draws nothing, so the run is the same with or without it.

A step record is ``{"step", "sources", "choices", "links", "delivered", "buffers", "queues",
"queue_events", "deadlock"}`` (``deadlock``: the step moved nothing and ended the run):

* ``sources``: UGAL-L/G, one ``{"packet", "minimal", "valiant", "took"}`` per packet created in
  the step (the two candidate paths' lengths in hops; ``took`` is ``"minimal"`` or
  ``"valiant"``);
* ``choices``: one ``{"packet", "node", "allowed", "counts", "took"}`` per packet the routing
  made choose its next link in the step (``allowed`` the links it chose among, ``counts`` the
  other packets waiting for each at the start of the step, as the choice read them: a CHAOS
  packet choosing again does not count itself on the link it had chosen); UGAL adds
  ``via`` and ``phase`` (``"valiant"``: toward the intermediate ``via``, or ``"minimal"``) on
  its one decision at the source; CHAOS adds ``room`` (per allowed link, whether its input
  buffer had room) and ``deflected`` (true when it took a link that is not one hop closer);
* ``links``: per wanted link ``{"link", "contenders": [[key, packet], ...], "crossed",
  "lost": [[packet, reason], ...]}`` with the key the engine sorted by (a list of ints) and the
  reason ``"priority"``, ``"buffer-full"`` or ``"held"`` (CHAOS's injection gate held it at its
  source);
* ``delivered``: packets that crossed their last link; ``buffers``: every non-empty link buffer
  ``{link: [packet, ...]}`` at the end of the step; ``queues`` (CHAOS): every non-empty shared
  queue ``{node: [packet, ...]}``; ``queue_events`` (CHAOS): ``{"entered", "left"}``, the packets
  that moved from an input buffer into their node's shared queue, and those that crossed a link
  out of one.
"""

from __future__ import annotations

__all__ = ["StepRecorder"]


class StepRecorder:
    """Builds the step records of one run from the reference core's state.

    Parameters
    ----------
    core : ReferenceCore
        The run's core (its routing view, links, buffers and CHAOS rules).
    records : list
        Receives one record per step.
    """

    def __init__(self, core, records: list) -> None:
        self.core, self.records = core, records
        self.record: dict = {}
        self._sources: dict[int, tuple] = {}
        self._before: dict[int, tuple] = {}

    def created(self, t: int, packets: list) -> None:
        """Before the step's new packets join: UGAL-L/G's two candidate paths of each."""
        self.record = {"step": t, "sources": [], "choices": [], "links": [], "delivered": [], "buffers": {}}
        self._sources = {p.pid: (list(p.path), list(p.alt)) for p in packets if p.alt is not None}

    def deciding(self, waiting: list, counts: dict) -> None:
        """After the new packets joined, before the choices: who must choose, and from where."""
        for p in sorted(self._sources.keys()):
            minimal, valiant = self._sources[p]
            pkt = next(q for q in waiting if q.pid == p)
            self.record["sources"].append({"packet": p, "minimal": len(minimal), "valiant": len(valiant),
                                           "took": "minimal" if pkt.path == minimal else "valiant"})
        self._counts = dict(counts)
        self._before = {p.pid: (p.via, p.want) for p in waiting if p.path is None and self._must_choose(p)}

    def _must_choose(self, p) -> bool:
        """Whether the core's choice runs for ``p`` in this step (read before it runs)."""
        chaos = self.core.chaos
        if chaos is None:
            return p.want is None
        return p.want is None or not (chaos._productive(p, p.want) and chaos._room(p, p.want))

    def decided(self, waiting: list) -> None:
        """After the choices: every packet that chose, its allowed links and the one taken."""
        core, view = self.core, self.core.view
        for p in sorted((q for q in waiting if q.pid in self._before), key=lambda q: q.pid):
            via, before = self._before[p.pid]
            if view.kind == "goal":
                allowed = [core.torus_link(p.node, i, p.signs[i]) for i in range(view.n) if p.remaining[i] > 0]
            elif view.kind == "splitter":   # the edges into the output set toward its row
                allowed = self._splitter_links(p)
            else:
                allowed = core.productive(p.node, p.target if view.kind != "chaos" else p.dst)
            choice = {"packet": p.pid, "node": p.node, "allowed": allowed,
                      "counts": [self._counts.get(e, 0) - (e == before) for e in allowed], "took": p.want}
            if view.kind == "ugal" and via >= 0:
                choice.update(via=via, phase="valiant" if p.target == via and via != p.dst else "minimal")
            if core.chaos is not None:
                choice["room"] = [core.chaos._room(p, e) for e in allowed]
                choice["deflected"] = p.want not in allowed
            self.record["choices"].append(choice)

    def _splitter_links(self, p) -> list[int]:
        """The multibutterfly's edges from ``p``'s node into the output set toward its destination."""
        from universal.networks.multibutterfly import splitter_links

        net = self.core.view.network
        rows = len(net.inputs)
        return [int(e) for e in splitter_links(net, [p.node], [p.dst - net.depth * rows])[0]]

    def contended(self, links: list, key) -> None:
        """After the contention: every wanted link's contenders, winners and losers (before the
        winners move, so that a CHAOS packet leaving its shared queue is seen in it)."""
        chaos = self.core.chaos
        for link, ranked, crossed, no_room in links:
            went = [p.pid for p in crossed]
            refused = {p.pid for p in no_room}
            lost = []
            for p in ranked:
                if p.pid in went:
                    continue
                reason = ("buffer-full" if p.pid in refused else
                          "held" if chaos is not None and chaos.held(p) else "priority")
                lost.append([p.pid, reason])
            self.record["links"].append({"link": link, "contenders": [[list(key(p))[:-1], p.pid] for p in ranked],
                                         "crossed": went, "lost": lost})
        if chaos is not None:
            self.record["queue_events"] = {"entered": [], "left": sorted(p.pid for _, _, crossed, _ in links
                                                                         for p in crossed if chaos.place(p) == 0)}

    def finished(self, packets: list, delivered: list, deadlock: bool = False) -> None:
        """At the end of the step: deliveries, the buffers and the shared queues; the record is
        kept (``deadlock``: the step moved nothing and ends the run)."""
        t, rec = self.record["step"], self.record
        # (a packet created at its destination is delivered without a hop: not in any step)
        rec["delivered"] = sorted(p.pid for p in packets if delivered[p.pid] == t and p.hops > 0)
        buffers: dict[int, list[int]] = {}
        queues: dict[int, list[int]] = {}
        for p in sorted(packets, key=lambda q: q.pid):
            if delivered[p.pid] >= 0 or p.buffer is None:
                continue
            if isinstance(p.buffer, tuple):
                if p.buffer[0] == "queue":
                    queues.setdefault(p.buffer[1], []).append(p.pid)
            else:
                buffers.setdefault(p.buffer, []).append(p.pid)
        rec["buffers"] = dict(sorted(buffers.items()))
        if self.core.chaos is not None:
            rec["queues"] = dict(sorted(queues.items()))
        rec["deadlock"] = deadlock
        self.records.append(rec)

    def queued(self, pids: list[int]) -> None:
        """CHAOS: the packets that moved from an input buffer into their node's shared queue."""
        self.record.setdefault("queue_events", {"entered": [], "left": []})["entered"] = sorted(pids)
