"""Measurement in the one engine's batch (:class:`universal.engine.runs._Batch`): the runs'
phases (warm-up, window, drain; :mod:`universal.engine.measure`) judged at every chunk's end,
the accepted packets and latencies recorded, an ended run's packets dropped, and the hand-over
to one :class:`~universal.engine.measure.RunResult` per run.
"""

from __future__ import annotations

import numpy as np

from universal.engine.contention import ONE
from universal.engine.creation import CHUNK
from universal.engine.measure import (DONE, DRAIN, WARMUP, WINDOW, RunResult, PERIOD, deliverable_per_step,
                                        latency_summary, regression_slope, slope_standard_error,
                                        stability_verdict)


class Phases:
    """The runs' measurement phases and results (a mixin of :class:`universal.engine.runs._Batch`)."""

    def _init_measurement(self) -> None:
        R, N = self.R, self.N
        self.phase = np.full(R, WARMUP if self.m.steps is None else WINDOW)
        self.phase_start = np.zeros(R, dtype=np.int64)
        self.backlog = np.zeros(R, dtype=np.int64)
        self.block_sum = np.zeros(R)
        self.prev_block = np.full(R, -1.0)
        self.sums = np.zeros((R, 5))
        self.accepted = np.zeros((R, N), dtype=np.int64)
        self.outstanding = np.zeros(R, dtype=np.int64)
        self.labelled = np.zeros(R, dtype=np.int64)
        self.status = [""] * R
        self.warmup_len = np.zeros(R, dtype=np.int64)
        self.slope = np.zeros(R)
        self.records: list[tuple] = []
        self.rates = np.array([s.rate for s in self.specs])
        self.offered_per_step = np.array([s.rate * s.traffic.rowsum.sum() for s in self.specs])
        # the backlog limit counts at most the packets a stable run could deliver (a memory cap)
        self.limit_per_step = np.minimum(self.offered_per_step, [deliverable_per_step(s.traffic, self.net, self.B)
                                                                 for s in self.specs])
        self.window_len = np.array([self.m.window_for(s.rate) for s in self.specs])
        self.base_window = self.window_len.copy()
        self.window_offset = np.zeros(R, dtype=np.int64)
        self.extensions = np.zeros(R, dtype=np.int64)
        self.period_means: list[list[float]] = [[] for _ in range(R)]    # backlog per period of the stretch
        self.drain_len = np.array([self.m.drain_for(s.rate) for s in self.specs])
        self.all_records = [] if self.m.steps is not None else None
        self.created_records: list[tuple] = []
        self.history = np.zeros((CHUNK, R), dtype=np.int64)    # backlog after every step of the chunk
        self.in_window = self.phase == WINDOW
        self.accepted_idx: list[np.ndarray] = []                # run * N + src of window deliveries
        self.crossing_log: list[tuple] = []                     # (step, pid, link) with record_crossings

    def _flush_accepted(self) -> None:
        if self.accepted_idx:
            idx = np.concatenate(self.accepted_idx)
            self.accepted += np.bincount(idx, minlength=self.R * self.N).reshape(self.R, self.N)
            self.accepted_idx = []

    def _advance_phases(self, t: int) -> None:
        """End of a chunk (step ``t``): move runs between phases (see :mod:`universal.engine.measure`)."""
        m, ph = self.m, self.phase
        self._flush_accepted()
        hist = self.history
        b = self.backlog
        limit = self.limit_per_step * m.latency_limit + self.N
        # far beyond saturation the warm-up would never settle: measure now, or stop (the search,
        # which stops a run past the limit in its window too: BookSim's latency threshold)
        over = b > limit
        for r in np.flatnonzero((ph == WARMUP) & over):
            if m.overload == "stop":
                self._finish(int(r), t, "backlog-limit")
            else:
                self._start_window(int(r), t)
        if m.overload == "stop" and m.stop_in_window:
            for r in np.flatnonzero((ph == WINDOW) & over):
                self._finish(int(r), t, "backlog-limit")
        # warm-up: settled once the backlog stopped growing (at most 1% and one packet above the last chunk)
        warm = ph == WARMUP
        mean = hist.mean(axis=0)
        settled = (self.prev_block >= 0) & (mean <= (1 + m.change) * self.prev_block + 1)
        start = warm & (((t + 1) >= m.warmup_min) & settled | ((t + 1) >= m.warmup_max))
        self.prev_block = np.where(warm, mean, self.prev_block)
        # window: regression sums of (x = step in the stretch, y = backlog) over this chunk
        win = np.flatnonzero(ph == WINDOW)
        if len(win):
            steps = np.arange(t + 1 - CHUNK, t + 1)
            x = (steps[:, None] - self.phase_start[win] - self.window_offset[win]).astype(float)
            y = hist[:, win].astype(float)
            self.sums[win] += np.stack([np.ones(len(win)) * CHUNK, x.sum(0), y.sum(0), (x * y).sum(0),
                                        (x * x).sum(0)], axis=1)
            for r, v in zip(win, y.mean(axis=0)):
                self.period_means[r].append(float(v))
            for r in win[t + 1 - self.phase_start[win] >= self.window_len[win]]:
                self._end_window(int(r), t)
        for r in np.flatnonzero(start):
            self._start_window(int(r), t)
        drain = np.flatnonzero(ph == DRAIN)
        for r in drain[self.outstanding[drain] == 0]:
            self._finish(int(r), t, "stable")
        for r in drain[(ph[drain] == DRAIN) & (t + 1 - self.phase_start[drain] >= self.drain_len[drain])]:
            self._finish(int(r), t, "drain-limit")
        self.in_window = ph == WINDOW
        self._drop_ended()

    def _end_window(self, r: int, t: int) -> None:
        """Judge stability at the end of a window (or of one of its extensions)."""
        m = self.m
        self.slope[r] = regression_slope(*self.sums[r])
        noise = slope_standard_error(self.period_means[r], PERIOD)
        verdict = stability_verdict(self.slope[r], self.offered_per_step[r], int(self.extensions[r]), m,
                                    noise=noise, bandwidth=self.B)
        if verdict == "extend":
            # the window so far becomes warm-up for a new stretch as long as all of it
            self.extensions[r] += 1
            self.window_offset[r] = self.window_len[r]
            self.window_len[r] *= 2
            self.sums[r] = 0
            self.period_means[r] = []
        elif verdict == "stable" and m.drain:
            self.phase[r] = DRAIN
            self.phase_start[r] = t + 1
        else:
            self._finish(r, t, verdict)

    def _start_window(self, r: int, t: int) -> None:
        self.phase[r] = WINDOW
        self.phase_start[r] = t + 1
        self.warmup_len[r] = t + 1

    def _finish(self, r: int, t: int, status: str) -> None:
        if self.phase[r] == DONE:
            return
        self.status[r] = status
        if self.phase[r] == DRAIN:
            self.drain_steps[r] = t + 1 - self.phase_start[r]
        self.phase[r] = DONE
        if self.progress is not None:
            self.progress(1)
        self.end_step[r] = t + 1
        self.backlog[r] = 0
        self.ending.append(r)

    def _drop_ended(self) -> None:
        """Remove the packets of the runs that just ended (one pass for all of them)."""
        if not self.ending:
            return
        ended = np.zeros(self.R + 1, dtype=bool)
        ended[self.ending] = True
        self.ending = []
        h, a = self.head, self.a
        mine = np.flatnonzero(ended[a["run"][h:]] & (a["want"][h:] != self.trash)) + h
        if self.track:
            np.subtract.at(self.occupancy, a["prev"][mine], ONE)
        if self.vcfifo is not None:
            self.vcfifo.drop(a["vcbuf"][mine])
        w = a["want"][mine]
        if self.count_waiting:
            np.subtract.at(self.waiting, w[w >= 0], ONE)
        a["want"][mine] = self.trash
        self.ndead += len(mine)
        if self.adaptive and len(getattr(self, "pending_decide", ())):
            # an ended run's undecided packets are dead too: deciding would bring them back
            self.pending_decide = self.pending_decide[a["want"][self.pending_decide] != self.trash]

    def _results(self, steps: int) -> list[RunResult]:
        out = []
        if self.m.steps is not None:
            def cat(recs, i):
                return np.concatenate([x[i] for x in recs]) if recs else np.empty(0, np.int64)
            run, pid, step = cat(self.all_records, 0), cat(self.all_records, 1), cat(self.all_records, 2)
            crun, cpid, cstep = (cat(self.created_records, i) for i in range(3))
            ends = self.end_step
            xstep, xpid, xlink = (cat(self.crossing_log, i) for i in range(3))
            for r, spec in enumerate(self.specs):
                mine = cpid[(crun == r) & (cstep < ends.get(r, steps))]
                delivered = np.full(len(mine), -1, dtype=np.int64)
                d = (run == r) & (step < ends.get(r, steps))
                delivered[_index_in(mine, pid[d])] = step[d]
                records = {"pid": mine, "delivered": delivered}
                if self.batch_stats:
                    records.update(max_buffer=self.max_buffer, hops=self.link_hops, blocked=self.blocked)
                if self.m.record_crossings:       # this run's crossings: its own packet and link numbers
                    x = (xlink // self.L) == r
                    records["crossings"] = np.stack([xstep[x], _index_in(mine, xpid[x]),
                                                     xlink[x] - r * self.L], axis=1)
                out.append(RunResult(spec.rate, status=self.status[r] or "steps", steps=steps,
                                     records=records))
            return out
        # the compiled kernels split their records by run themselves (compiled_openloop.hand_over)
        grouped = self.grouped
        cols = [np.concatenate(c) if len(c) > 1 else c[0] for c in zip(*self.records)] if self.records \
            else [np.empty(0, np.int64)] * 5
        # group by run, keeping delivery order (a radix sort on small run numbers; one run is one group).
        # Only the stable runs' records are gathered, each into arrays of its own: a result then
        # holds its own packets, not views of the whole batch's records (a saturation search keeps
        # its runs' results, and the unstable runs' records were most of its memory)
        run = cols[0].astype(np.int16) if self.R < 2**15 else cols[0]
        by_run = np.argsort(run, kind="stable") if self.R > 1 and grouped is None else None
        cuts = np.concatenate([[0], np.cumsum(np.bincount(run, minlength=self.R))])
        for r, spec in enumerate(self.specs):
            res = RunResult(spec.rate, status=self.status[r], stable=self.status[r] == "stable",
                            warmup=int(self.warmup_len[r]), window=int(self.window_len[r]),
                            slope=float(self.slope[r]), labelled=int(self.labelled[r]),
                            steps=int(self.end_step.get(r, steps)))
            res.drain = int(self.drain_steps.get(r, 0))
            senders = spec.traffic.senders
            if self.status[r] in ("stable", "unstable", "drain-limit"):
                acc = self.accepted[r, senders] / (self.window_len[r] * spec.traffic.rowsum[senders])
                res.accepted, res.accepted_min = float(acc.mean()), float(acc.min())
            if res.stable and self.m.latencies:   # a saturation table's searches keep no latencies
                if grouped is not None:
                    src, dst, lat, hops = grouped[r]
                else:
                    mine = slice(cuts[r], cuts[r + 1]) if by_run is None else by_run[cuts[r]:cuts[r + 1]]
                    src, dst, lat, hops = cols[3][mine], cols[4][mine], cols[1][mine], cols[2][mine]
                for k, v in latency_summary(lat, hops).items():
                    setattr(res, k, v)
                res.labelled_packets = (src, dst, lat, hops)
            out.append(res)
        return out


def _index_in(ids: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Where the packet ids ``which`` are in ``ids``, a run's ids in creation order (increasing;
    one block when the run's packets were all created together, as a batch's are: then no search)."""
    if len(ids) and int(ids[-1]) - int(ids[0]) == len(ids) - 1:
        return which - ids[0]
    return np.searchsorted(ids, which)
