"""Step records of the open-loop reference engine, for ``route --trace`` of an adaptive routing.

:func:`universal.engine.reference_runs.simulate_reference` given ``record["steps"] = []`` calls a
:class:`StepRecorder` at four points of every step and appends one plain record per step (ints,
lists and strings; packet, link and node ids; the engine's own step numbers, from 0). Recording
reads the engine's state and draws nothing, so the run is the same with or without it.

A step record is ``{"step", "sources", "choices", "links", "delivered", "buffers", "queues",
"queue_events", "deadlock"}`` (``deadlock``: the step moved nothing and ended the run):

* ``sources``: UGAL-L/G, one ``{"packet", "minimal", "valiant", "took"}`` per packet created in
  the step (the two candidate paths' lengths in hops; ``took`` is ``"minimal"`` or
  ``"valiant"``) with the numbers the choice compared (:meth:`ReferenceCore.choose_path`):
  ``q_min``, ``H_min``, ``q_val``, ``H_val``, ``T``, ``B`` and ``chose_valiant``;
* ``choices``: one ``{"packet", "node", "allowed", "counts", "took"}`` per packet the routing
  made choose its next link in the step (``allowed`` the links it chose among, ``counts`` the
  other packets waiting for each at the start of the step, as the choice read them: a CHAOS
  packet choosing again does not count itself on the link it had chosen); UGAL adds
  ``via`` and ``phase`` (``"valiant"``: toward the intermediate ``via``, or ``"minimal"``) on
  its one decision at the source, with the numbers it compared (``q_min``, ``H_min``, ``q_val``,
  ``H_val``, ``T``, ``chose_valiant`` and ``at``, the router whose links' queues q counts;
  :meth:`ReferenceCore._ugal_target`); with GOAL's *-channels ``vc`` (the class taken) and
  ``options``, one ``[link, class, full, waiting, star]`` per option compared; CHAOS adds
  ``room`` (per allowed link, whether its input buffer had room) and ``deflected`` (true when
  it took a link that is not one hop closer);
* ``links``: per wanted link ``{"link", "contenders": [[key, packet], ...], "crossed",
  "lost": [[packet, reason], ...]}`` with the key the engine sorted by (a list of ints) and the
  reason ``"priority"``, ``"buffer-full"``, ``"held"`` (CHAOS's injection gate held it at its
  source) or ``"behind-head"`` (FIFO VCs: it is not the head of its VC); with virtual channels
  ``classes``, the class buffer each contender would enter (None: the hop delivers it), and with
  FIFO VCs ``from_vc``, the ``[link, v]`` each sits in (None: its source);
* ``queue_held``: with a FIFO source queue that routes several packets (``fifo:w=W``), the
  packets taken out of the contention because a packet ahead of them in their queue stays;
* ``delivered``: packets that crossed their last link; ``buffers``: every non-empty link buffer
  ``{link: [packet, ...]}`` at the end of the step; ``queues`` (CHAOS): every non-empty shared
  queue ``{node: [packet, ...]}``; ``queue_events`` (CHAOS): ``{"entered", "left"}``, the packets
  that moved from an input buffer into their node's shared queue, and those that crossed a link
  out of one; with virtual channels ``classes`` (``{packet: class}`` of every buffered packet)
  and with FIFO VCs ``fifos`` (``{"link v": [packet, ...]}``, every non-empty VC, head first).
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
        self._sources = {p.pid: (p, list(p.path), list(p.alt)) for p in packets if p.alt is not None}
        self.core.decision_log = {}      # what the step's decisions compare, as the core compares it

    def deciding(self, waiting: list, counts: dict) -> None:
        """After the new packets joined, before the choices: who must choose, and from where."""
        log = self.core.decision_log
        for p in sorted(self._sources.keys()):      # (a packet still behind its source queue chose too)
            pkt, minimal, valiant = self._sources[p]
            self.record["sources"].append({"packet": p, "minimal": len(minimal), "valiant": len(valiant),
                                           "took": "minimal" if pkt.path == minimal else "valiant",
                                           **log.get(p, {})})
        self._counts = dict(counts)
        self._waiting = [p.pid for p in waiting]
        self._before = {p.pid: (p.via, p.want) for p in waiting if p.path is None and self._must_choose(p)}

    def _must_choose(self, p) -> bool:
        """Whether the core's choice runs for ``p`` in this step (read before it runs)."""
        core, chaos = self.core, self.core.chaos
        if core.star:                   # GOAL's *-channels: also when the chosen class buffer is full
            return p.want is None or not core._room(p, p.want, p.vc)
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
                choice.update(via=via, phase="valiant" if p.target == via and via != p.dst else "minimal",
                              **{k: v for k, v in core.decision_log[p.pid].items() if k != "options"})
            if core.star:               # the class taken and the (link, class) options with their costs
                choice.update(vc=p.vc, options=core.decision_log[p.pid]["options"])
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
        core = self.core
        chaos = core.chaos
        seen = {p.pid for _, ranked, _, _ in links for p in ranked}
        # FIFO source queues: the packets taken out of the contention because one ahead of them stays
        self.record["queue_held"] = sorted(i for i in self._waiting if i not in seen)
        for link, ranked, crossed, no_room in links:
            went = [p.pid for p in crossed]
            refused = {p.pid for p in no_room}
            lost = []
            for p in ranked:
                if p.pid in went:
                    continue
                reason = ("buffer-full" if p.pid in refused else
                          "held" if chaos is not None and chaos.held(p) else
                          "behind-head" if core.fifo_vcs and p.fifo_vc is not None and core.fifos[p.fifo_vc][0] is not p
                          else "priority")
                lost.append([p.pid, reason])
            entry = {"link": link, "contenders": [[list(key(p))[:-1], p.pid] for p in ranked], "crossed": went,
                     "lost": lost}
            if core.plan is not None:   # the class buffer each contender would enter (None: delivered)
                entry["classes"] = [None if core.final(p) else core.buffer_of(p)[0][1] for p in ranked]
            if core.fifo_vcs:           # the VC each sits in (None: its source)
                entry["from_vc"] = [None if p.fifo_vc is None else list(p.fifo_vc) for p in ranked]
            self.record["links"].append(entry)
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
        classes: dict[int, int] = {}
        for p in sorted(packets, key=lambda q: q.pid):
            if delivered[p.pid] >= 0 or p.buffer is None:
                continue
            if isinstance(p.buffer, tuple) and p.buffer[0] == "queue":
                queues.setdefault(p.buffer[1], []).append(p.pid)
            elif isinstance(p.buffer, tuple):          # virtual channels: (link, class)
                buffers.setdefault(p.buffer[0], []).append(p.pid)
                classes[p.pid] = p.buffer[1]
            else:
                buffers.setdefault(p.buffer, []).append(p.pid)
        rec["buffers"] = dict(sorted(buffers.items()))
        if self.core.plan is not None:
            rec["classes"] = classes
        if self.core.fifo_vcs:          # every non-empty VC, head first
            rec["fifos"] = {f"{e} {v}": [p.pid for p in ps] for (e, v), ps in sorted(self.core.fifos.items()) if ps}
        if self.core.chaos is not None:
            rec["queues"] = dict(sorted(queues.items()))
        rec["deadlock"] = deadlock
        self.records.append(rec)

    def queued(self, pids: list[int]) -> None:
        """CHAOS: the packets that moved from an input buffer into their node's shared queue."""
        self.record.setdefault("queue_events", {"entered": [], "left": []})["entered"] = sorted(pids)
