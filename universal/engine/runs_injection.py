"""Creation and injection in the one engine's batch (:class:`universal.engine.runs._Batch`):
every run's packets drawn a chunk of steps at a time (:mod:`universal.engine.creation`), the
packets delivered at creation accounted at once, and each step's new packets written into the
pool below ``head`` (UGAL's pick of its path, a batch's release delays held back on a dummy
link, the first virtual channel class).
"""

from __future__ import annotations

import numpy as np

from universal.engine.contention import ONE
from universal.engine.creation import CHUNK, draw_chunk
from universal.engine.measure import DONE, WINDOW
from universal.engine.priorities import RANKED


class Injection:
    """Drawing and injecting the batch's packets (a mixin of :class:`universal.engine.runs._Batch`)."""

    def _draw(self, t0: int) -> None:
        """Draw the next chunk of every active run and prepare its injection, step by step.

        Phases change only at chunk boundaries (every CHUNK steps), so whether a packet is
        labelled, and the whole accounting of the packets delivered at creation (source =
        destination), is settled here for the chunk at once.
        """
        parts = [(r, draw_chunk(spec, self.inj_state[r], t0, self.rngs[r]))
                 for r, spec in enumerate(self.specs) if self.phase[r] != DONE]
        self.chunk_start = t0
        if not parts:
            self.pending = None
            return
        def cat(get, fill=0, dtype=np.int64):
            arrays = [get(r, c) for r, c in parts]
            arrays = [x if x is not None else np.full(len(c.step), fill, dtype=dtype) for x, (_, c) in zip(arrays, parts)]
            return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)     # one run: no copy
        step = cat(lambda r, c: c.step)
        run = cat(lambda r, c: np.full(len(c.step), r, dtype=np.int64))
        order = np.lexsort((run, step))
        P = len(order)
        # oblivious routes: one append of every run's links (global link ids) to the store
        lengths = cat(lambda r, c: np.diff(c.route.offsets) if c.route.offsets is not None else None)
        # (run 0's links as they are: a batch's one draw of a large network stores its paths uncopied)
        links = [c.route.links + r * self.L if r else c.route.links for r, c in parts if c.route.offsets is not None]
        # UGAL-L/G: the Valiant candidates follow the minimal paths in the same append
        alt_lengths = cat(lambda r, c: np.diff(c.route.alt_offsets) if c.route.alt_offsets is not None else None)
        links += [c.route.alt_links + r * self.L for r, c in parts if c.route.alt_offsets is not None]
        at = self._store_append(links[0] if len(links) == 1 else np.concatenate(links)) if links else 0
        cur = at + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        p = {"step": step, "run": run, "src": cat(lambda r, c: c.src), "dst": cat(lambda r, c: c.dst),
             "cur": cur, "end": cur + lengths, "hops": lengths}
        if self.ugal_mode.any():
            alt = at + int(lengths.sum()) + np.concatenate([[0], np.cumsum(alt_lengths)[:-1]]).astype(np.int64)
            # a packet to itself with an empty minimal path is delivered at creation, not rerouted
            p["alt"] = np.where((self.ugal_mode[run] > 0) & (lengths > 0), alt, -1)
            p["alt_end"] = alt + alt_lengths
        if self.adaptive:
            p["kind"] = self.kinds[run].astype(np.int8)
            p["tie"] = cat(lambda r, c: c.tie, dtype=np.uint64)
            via = cat(lambda r, c: c.route.via, fill=-1)
            p["via"] = np.where((via == p["src"]) | (via == p["dst"]), -1, via)
        if self.dims:
            zeros = lambda c: np.zeros((len(c.step), self.dims), np.int64)  # noqa: E731
            p["signs"] = np.concatenate([c.route.signs if c.route.signs is not None else zeros(c) for _, c in parts])
            p["remaining"] = np.concatenate([c.route.remaining if c.route.remaining is not None else zeros(c)
                                             for _, c in parts])
        if self.priority in RANKED:
            p["rank"] = cat(lambda r, c: c.rank)
        # ids in creation order: by step, then run, then node
        q = {k: p[k][order] for k in ("step", "run", "src", "dst")}
        q["pid"] = self.next_pid + np.arange(P, dtype=np.int64)
        self.next_pid += P
        q["label"] = (self.phase[q["run"]] == WINDOW) if self.m.steps is None else np.zeros(P, dtype=bool)
        # delivered at creation: s = d with an empty path (VAL's s = d packets travel s -> w -> s)
        zero = (q["src"] == q["dst"]) & (p["hops"][order] == 0)
        self._account_zero_hop(q, zero)
        # the others, per step youngest first (they are prepended: lowest priority first); one
        # gather of every field
        keep = np.flatnonzero(~zero)
        keep = keep[np.lexsort((-q["pid"][keep], q["step"][keep]))]
        final = order[keep]
        p = {k: v[final] for k, v in p.items()}
        p["pid"], p["label"] = q["pid"][keep], q["label"][keep]
        local = p["step"] - t0
        self.bounds = np.searchsorted(local, np.arange(CHUNK + 1))
        if t0 == 0:
            self._edge_space(parts)
        self.inj_counts = np.bincount(local * self.R + p["run"], minlength=CHUNK * self.R).reshape(CHUNK, self.R)
        lab = p["label"]
        self.lab_counts = np.bincount(local[lab] * self.R + p["run"][lab],
                                      minlength=CHUNK * self.R).reshape(CHUNK, self.R)
        self.pending = p

    def _account_zero_hop(self, p: dict, zero: np.ndarray) -> None:
        """Packets whose destination is their source and whose routing gives them no path are
        delivered when created (0 hops, latency 0)."""
        run, src = p["run"], p["src"]
        if self.m.steps is not None:
            self.created_records.append((run, p["pid"], p["step"]))
            self.all_records.append((run[zero], p["pid"][zero], p["step"][zero]))
            return
        lab = p["label"]
        self.labelled += np.bincount(run[lab], minlength=self.R)
        z = lab & zero                       # in a window phase: labelled and accepted at once
        if z.any():
            self.accepted_idx.append(run[z] * self.N + src[z])
            k = int(z.sum())
            if self.m.latencies:
                self.records.append((run[z], np.zeros(k, np.int64), np.zeros(k, np.int64), src[z], p["dst"][z]))

    def _inject(self, t: int) -> None:
        """The packets created in step ``t`` join the network, youngest first below ``head``."""
        p = self.pending
        if p is None:
            return
        i = t - self.chunk_start
        lo, hi = int(self.bounds[i]), int(self.bounds[i + 1])
        if hi == lo:
            return
        sel = slice(lo, hi)
        if self.buffer is not None and (self.phase[p["run"][sel]] == DONE).any():
            sel = np.arange(lo, hi)[self.phase[p["run"][sel]] != DONE]     # a run deadlocked in this chunk
        m = len(p["run"][sel])
        if not m:
            return
        if self.head < m:
            self._compact(m)
        lo_, hi_ = self.head - m, self.head
        a = self.a
        for name in ("pid", "src", "dst", "run", "hops", "cur", "end", "label"):
            a[name][lo_:hi_] = p[name][sel]
        a["created"][lo_:hi_] = t
        if "alt" in p:
            self._ugal_pick(lo_, p["alt"][sel], p["alt_end"][sel])
        if self.adaptive:
            kind = p["kind"][sel]
            for name in ("kind", "tie", "via"):
                a[name][lo_:hi_] = p[name][sel]
            a["node"][lo_:hi_] = p["src"][sel]
            a["target"][lo_:hi_] = p["dst"][sel]
            a["hops"][lo_:hi_] = np.where(kind > 0, 0, a["hops"][lo_:hi_])
            if self.dims:
                a["signs"][lo_:hi_] = p["signs"][sel]
                a["remaining"][lo_:hi_] = p["remaining"][sel]
            obl = kind == 0
            want = np.full(m, -1, dtype=np.int64)
            want[obl] = self.store[a["cur"][lo_:hi_][obl]]
            a["want"][lo_:hi_] = want
            np.add.at(self.waiting, want[obl], ONE)     # adaptive: always counted
            self.pending_decide = np.concatenate([self.pending_decide, np.flatnonzero(~obl) + lo_])
        else:
            want = self.store[a["cur"][lo_:hi_]]
            a["want"][lo_:hi_] = want
            if self.count_waiting:
                np.add.at(self.waiting, want, ONE)
        if self.track:
            a["prev"][lo_:hi_] = self.inject_slot
        if self.vcfifo is not None:
            a["vcbuf"][lo_:hi_] = -1
        if self.vc is not None:
            from universal.engine.vcs import first_class

            a["vc"][lo_:hi_] = first_class(self.vc_wrap[a["want"][lo_:hi_]], self.vc.ring)
            if self.adaptive:           # an adaptive packet's class is chosen with its link, every step
                a["wrapped"][lo_:hi_] = 0
        if self.priority in ("fifo", "protocol"):
            a["arrived"][lo_:hi_] = t
        if self.priority == "injection-age":
            a["injected"][lo_:hi_] = -1
        if self.release is not None:
            self._hold(lo_, hi_, t)
        if self.priority in RANKED:
            a["rank"][lo_:hi_] = p["rank"][sel]
        # static ranks: a batch's packets (all created together, into an empty network) are laid
        # out in priority order, lowest first, so no step sorts them or gathers through an order.
        # Only a batch: later packets would be sorted in with ties broken by position, which
        # stands for the packet id only while the layout is in creation order.
        self.layout_sorted = self.priority in ("random", "random-rank") and not self.adaptive \
            and self.m.until_delivered and hi_ == self.cap
        if self.layout_sorted:
            perm = _rank_order(a["rank"][lo_:hi_], a["pid"][lo_:hi_])
            for arr in a.values():
                arr[lo_:hi_] = arr[lo_:hi_][perm]
        self.head = lo_
        self.layout += 1
        if self.fifo is not None:
            self.fifo.join(lo_, hi_)
        if isinstance(sel, slice):
            self.backlog += self.inj_counts[i]
            self.outstanding += self.lab_counts[i]
        else:
            self.backlog += np.bincount(p["run"][sel], minlength=self.R)
            self.outstanding += np.bincount(p["run"][sel][p["label"][sel]], minlength=self.R)

    def _hold(self, lo: int, hi: int, t: int) -> None:
        """Batch packets whose delay has not ended wait for the dummy held link, which never lets
        them across (a batch's packet ids are its packet numbers: all are created in step 0)."""
        want = self.a["want"][lo:hi]
        held = self.release[self.a["pid"][lo:hi]] > t
        want[held] = self.held_link
        self.holding += int(held.sum())
        self.release_at = np.union1d(self.release_at, self.release[self.a["pid"][lo:hi][held]])

    def _release(self, t: int) -> None:
        """The held packets whose delay ends join the contention in step ``t`` (batch step t + 1)."""
        if not len(self.release_at) or self.release_at[0] > t:
            return                  # no delay ends now: no pass over the packets
        self.release_at = self.release_at[self.release_at > t]
        h, a = self.head, self.a
        held = np.flatnonzero(a["want"][h:] == self.held_link) + h
        due = held[self.release[a["pid"][held]] <= t]
        a["want"][due] = self.store[a["cur"][due]]
        self.holding -= len(due)

    def _ugal_pick(self, lo: int, alt: np.ndarray, alt_end: np.ndarray) -> None:
        """UGAL-L/G: the packets injected at ``lo..`` take their Valiant path where the queues say
        so (:func:`universal.engine.routes.ugal_pick`), from the counts at the start of the step."""
        from universal.engine.routes import ugal_pick

        which = np.flatnonzero(alt >= 0)
        if not len(which):
            return
        rows, a = lo + which, self.a
        run = a["run"][rows]
        cur, end = a["cur"][rows], a["end"][rows]
        go = ugal_pick(self.store, self.waiting, self.occupancy, cur, end, alt[which], alt_end[which],
                       self.ugal_mode[run], self.ugal_threshold[run], self.first_hop, self.B)
        a["cur"][rows] = np.where(go, alt[which], cur)
        a["end"][rows] = np.where(go, alt_end[which], end)
        a["hops"][rows] = a["end"][rows] - a["cur"][rows]


def _rank_order(rank: np.ndarray, pid: np.ndarray) -> np.ndarray:
    """Indices of packets laid out youngest first (``pid`` decreasing), lowest priority first
    by static rank: the highest rank first, ties to the younger packet.

    Ranks in a range of less than 2^15 (the survey's K = C + D + log n) are sorted as int16
    with a stable argsort, a radix sort several times faster than a lexsort; ties keep the layout
    order, which is the younger packet first.
    """
    if len(rank) and int(rank.max()) - int(rank.min()) < 2**15:
        return np.argsort((rank.max() - rank).astype(np.int16), kind="stable")
    return np.lexsort((pid, rank))[::-1]
