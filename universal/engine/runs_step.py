"""The step of the one engine's batch (:class:`universal.engine.runs._Batch`): every link's
winners (unbounded buffers, or bounded ones with their room at the start of the step, by
virtual channel class where there are classes), the winners crossing their links, moving on or
being delivered, and a run in which nothing moves while packets wait found deadlocked.
"""

from __future__ import annotations

import numpy as np

from universal.engine.contention import winners as _winners, winners_at as _winners_at
from universal.engine.contention import ONE, entering_allowed, _KEEPS_LAST
from universal.engine.measure import DONE


class Step:
    """Contention and moves of one step (a mixin of :class:`universal.engine.runs._Batch`)."""

    def _scratch_for(self) -> None:
        """Size the per-link scratch and the positions ``0 .. cap - 1`` for the current pool.

        The scratch is written at random places every step, so it takes the smallest type that
        holds a position (uint16 for a pool of at most 2^16 slots, else int32): a quarter or
        half of int64 stays in cache far better on a network of millions of links.
        """
        dtype = np.uint16 if self.cap <= 2**16 else np.int32 if self.cap <= 2**31 else np.int64
        if self.arange is None or self.arange.dtype != dtype or len(self.arange) < self.cap:
            self.arange = np.arange(self.cap, dtype=dtype)
        size = ((self.trash + 2) >> self.shift) + 1    # the dummy links: dead, injection, held
        if self.scratch is None or self.scratch.dtype != dtype or len(self.scratch) != size:
            self.scratch = np.empty(size, dtype=dtype)

    def _move(self, t: int) -> None:
        h, a = self.head, self.a
        n = self.cap - h
        if n == 0:
            return
        self._scratch_for()
        order = self._order()
        want = a["want"][h:] if order is None else a["want"][h:][order]
        at = self._winners_now(want, order, n)
        if self.fifo is not None and self.fifo.ordered and self.B > 1:    # a queue's front leaves in order
            at = self.fifo.in_order(at, lambda out: self._winners_now(_held_out(want, order, out, self.held_link),
                                                                      order, n))
        crossed = a["want"][h:][at]
        if self.ndead or self.holding or self.fifo is not None:     # the dead and the held wait for dummy links
            ok = crossed < self.trash
            at, crossed = at[ok], crossed[ok]
        if self.adaptive:
            ok = crossed >= 0
            at, crossed = at[ok], crossed[ok]
        gi = at + h
        left = self.fifo.leavers(gi) if self.fifo is not None else None
        self._move_on(t, gi, crossed, order)
        if left is not None:
            self.fifo.release(left)

    def _winners_now(self, want: np.ndarray, order: np.ndarray | None, n: int) -> np.ndarray:
        """Positions (from head, in layout order where the adaptive decisions need it) of the
        packets that win their link in this step, ``want`` laid out as ``order`` says."""
        if self.count_waiting and self.buffer is None and self.B == 1 and _KEEPS_LAST and 2 * n > self.trash:
            # many packets per link: the last (highest priority) packet of every link that has
            # packets, found with one scatter (and a pass over the links, not over the packets)
            self.scratch[want] = self.arange[:n]
            at = self.scratch[np.flatnonzero(self.waiting[:self.trash])].astype(np.int64)
            if order is None and self.adaptive:     # adaptive decisions see movers in layout order
                at = np.sort(at)
        elif self.buffer is None:
            # by edge where that names the same contenders (see _edge_space); the shift is one
            # cheap pass, the scatter into half the slots saves more (it misses the cache less)
            keyed = want >> self.shift if self.shift else want
            at = np.flatnonzero(_winners(keyed, self.B, self.scratch, self.arange))
        else:
            at = np.flatnonzero(self._bounded(want, order))
        if order is not None:
            # back to layout positions; in layout order (creation order), as the adaptive
            # decisions see them
            at = np.sort(order[at]) if self.adaptive else order[at]
        return at

    def _move_on(self, t: int, gi: np.ndarray, crossed: np.ndarray, order: np.ndarray | None) -> None:
        """The packets at ``gi`` cross the links ``crossed``: they move on or are delivered."""
        a = self.a
        self.link_hops += len(gi)
        if self.m.record_crossings:
            self.crossing_log.append((np.full(len(gi), t, dtype=np.int64), a["pid"][gi], crossed.copy()))
        if self.count_waiting:
            np.subtract.at(self.waiting, crossed, ONE)
        if self.buffer is not None and not self.chaos:
            self._check_deadlock(t, crossed)
        if self.track:
            np.subtract.at(self.occupancy, a["prev"][gi], ONE)
        old_vc = a["vcbuf"][gi] if self.vcfifo is not None else None
        if not len(gi):
            if self.chaos:
                self._chaos_queue(t, gi, crossed, order)
            return
        if self.adaptive:
            from universal.engine.adaptive import advance

            done = advance(self, gi, crossed)
        else:
            cur = a["cur"][gi] + 1
            done = cur == a["end"][gi]
            on = gi
            if done.any():          # most steps deliver nothing: no compressions then
                on, cur = gi[~done], cur[~done]
            a["cur"][on] = cur
            a["want"][on] = want = self.store[cur]
            if self.count_waiting:
                np.add.at(self.waiting, want, ONE)
        moved_on = gi[~done] if self.adaptive else on
        if self.track:
            entered = crossed if moved_on is gi else crossed[~done]
            if self.vc is not None:
                entered = self._enter_classes(moved_on, entered)
            if self.vcfifo is not None:
                self.vcfifo.move(a, gi, old_vc, moved_on, entered, a["run"][moved_on])
            a["prev"][moved_on] = entered
            np.add.at(self.occupancy, entered, ONE)
            if self.batch_stats and len(entered) and not self.chaos:
                self.max_buffer = max(self.max_buffer, int(self.occupancy[entered].max()))
        if self.priority in ("fifo", "protocol"):
            a["arrived"][moved_on] = t + 1
        if self.priority == "injection-age":       # stamped once, as the first link is crossed
            a["injected"][gi] = np.where(a["injected"][gi] < 0, t, a["injected"][gi])
        if self.chaos:
            self._chaos_queue(t, gi, crossed, order)
        if done.any():
            self._deliver(t, gi[done])

    def _chaos_queue(self, t: int, gi: np.ndarray, crossed: np.ndarray, order: np.ndarray | None) -> None:
        """CHAOS: blocked input packets into the shared queues; a step that neither crossed a link
        nor filled a queue is a deadlock (which the model rules out: :mod:`universal.engine.chaos`)."""
        from universal.engine.chaos import into_queue

        moved = into_queue(self, gi, order)
        if self.batch_stats:        # the fullest link buffer at the end of the step
            self.max_buffer = max(self.max_buffer, int(self.occupancy[:self.R * self.L].max()))
        self._check_deadlock(t, np.concatenate([crossed, moved * self.L]))

    def _enter_classes(self, movers: np.ndarray, crossed: np.ndarray) -> np.ndarray:
        """The class buffers the movers (not delivered) entered, and the class of their next hop."""
        from universal.engine.vcs import next_class

        a = self.a
        cls = a["vc"][movers]
        if self.adaptive:           # adaptive packets choose their next class with their next link
            obl = a["kind"][movers] == 0
            m, c, x = movers[obl], cls[obl], crossed[obl]
        else:
            m, c, x = movers, cls, crossed
        nxt = a["want"][m]
        a["vc"][m] = next_class(c, self.vc_type[x], self.vc_type[nxt], self.vc_wrap[nxt], self.vc.ring)
        return cls.astype(np.int64) * self.links_span + crossed

    def _bounded(self, want: np.ndarray, order: np.ndarray | None) -> np.ndarray:
        """Winners with bounded buffers (the batch engine's rule), lowest priority first."""
        h, a = self.head, self.a
        if self.adaptive:
            from universal.engine.adaptive import final_hop

            final = final_hop(self, h)
        else:
            final = a["cur"][h:] + 1 == a["end"][h:]
        if order is not None:
            final = final[order]
        w = np.where(want < 0, self.trash, want)
        real = w < self.trash                     # not dead, held or undecided
        if self.vcfifo is not None:               # FIFO VCs: a VC's head alone may leave
            head = self.vcfifo.at_head(a["vcbuf"][h:], a["seq"][h:])
            real &= head if order is None else head[order]
        if self.chaos:                            # source packets the injection gate holds back
            from universal.engine.chaos import gate

            real &= ~gate(self, order)
        entering = np.flatnonzero(~final & real)
        admit = final & real                      # delivered by the crossing: no buffer to enter
        if self.vc is None:
            room = self.buffer - np.take(self.occupancy, np.take(w, entering))
            admit[entering_allowed(w, entering, room, min(self.B, self.buffer), self.scratch)] = True
        else:
            # the buffer to enter is the wanted link's at the class of the hop
            cls = a["vc"][h:] if order is None else a["vc"][h:][order]
            cls = np.take(cls, entering).astype(np.int64)
            run = np.take(a["run"][h:] if order is None else a["run"][h:][order], entering)
            buf = np.zeros(len(w), dtype=np.int64)
            buf[entering] = cls * self.links_span + np.take(w, entering)
            room = self.vc_cap[run, cls] - np.take(self.occupancy, buf[entering])
            if self.buf_scratch is None or self.buf_scratch.dtype != self.scratch.dtype:
                self.buf_scratch = np.empty(self.classes * self.links_span, dtype=self.scratch.dtype)
            most = min(self.B, int(self.vc_cap.max()))
            admit[entering_allowed(buf, entering, room, most, self.buf_scratch)] = True
        admissible = np.flatnonzero(admit)
        win = np.zeros(len(w), dtype=bool)
        if len(admissible):
            got = _winners_at(w, admissible, self.B, self.scratch)
            win[admissible[got]] = True
        return win

    def _check_deadlock(self, t: int, crossed: np.ndarray) -> None:
        """A run with waiting packets and no move in this step is deadlocked (bounded buffers)."""
        if self.holding:                # a later release may still move (a batch: one run)
            return
        moved = np.bincount(crossed // self.L, minlength=self.R)
        stuck = (moved == 0) & (self.backlog > 0) & (self.phase != DONE)
        for r in np.flatnonzero(stuck):
            if self.batch_stats:
                self._record_blocked(int(r))
            self._finish(int(r), t, "deadlock")
        self._drop_ended()

    def _record_blocked(self, r: int) -> None:
        """A deadlocked batch's waiting packets (ids) and the links they wait for."""
        h, a = self.head, self.a
        live = np.flatnonzero((a["run"][h:] == r) & (a["want"][h:] < self.trash)) + h
        self.blocked = (np.sort(a["pid"][live]), np.unique(a["want"][live] - r * self.L))

    def _deliver(self, t: int, gi: np.ndarray) -> None:
        a = self.a
        run = a["run"][gi]
        a["want"][gi] = self.trash
        self.ndead += len(gi)
        if self.R == 1:
            self.backlog[0] -= len(gi)
        else:
            self.backlog -= np.bincount(run, minlength=self.R)
        if self.m.steps is not None:
            self.all_records.append((run, a["pid"][gi], np.full(len(gi), t, np.int64)))
        else:
            inwin = self.in_window[run]
            if inwin.any():
                self.accepted_idx.append(run[inwin] * self.N + a["src"][gi[inwin]])
            lab = a["label"][gi]
            if lab.any():
                g = gi[lab]
                self.outstanding -= np.bincount(run[lab], minlength=self.R)
                if self.m.latencies:
                    self.records.append((run[lab], t - a["created"][g] + 1, a["hops"][g], a["src"][g], a["dst"][g]))
        if self.ndead > (self.cap - self.head - self.ndead) + 256:       # more dead than live
            self._compact(0)


def _held_out(want: np.ndarray, order: np.ndarray | None, out: np.ndarray, held: int) -> np.ndarray:
    """``want`` (laid out as ``order`` says) with the packets at layout positions ``out`` waiting
    for the dummy ``held`` link instead: out of the step's contention."""
    want = want.copy()
    if order is None:
        want[out] = held
    else:
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        want[rank[out]] = held
    return want
