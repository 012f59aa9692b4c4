"""The compiled open-loop step loop for batches with adaptive routings: MIN AD, GOAL and UGAL
decided hop by hop, the age priority, unbounded buffers (SPEC §11; Singh, Dally, Gupta & Towles,
"GOAL: a load-balanced adaptive routing algorithm for torus networks", 2003, §2 and §5).

It is the list kernel of :mod:`universal.engine.compiled_openloop` (the waiting packets in one
list, oldest first; one pass per step in which a packet crosses if its link has let fewer than
B across), with what adaptive routing adds: the packets waiting for every link are counted as
they come and go, and an adaptive packet that was just created or has just crossed a link waits
undecided until the start of the next step, where it picks its next link.

The model and every random draw are the numpy engine's (:mod:`universal.engine.runs`), so with
the same seed a run gives the same result, field for field:

* the packets are drawn by the run's generator exactly as the numpy engine draws them
  (:func:`universal.engine.creation.draw_chunk`: the tie seeds, GOAL's quadrants, UGAL's
  intermediates); a step draws nothing (a tie is broken by the hash of the packet's tie seed and
  its hop count, :func:`universal.engine.ties.tie_uniform`);
* a step: the packets created in it join the list (an oblivious one waits for its first link, an
  adaptive one is undecided); every undecided packet picks, among its allowed links, the one with
  the fewest packets waiting for it, counted before any of this step's choices (ties by the tie
  number), as :func:`universal.engine.adaptive.decide` does, UGAL first choosing its target
  (:func:`universal.engine.adaptive._ugal_choice`; on a network without terminals only: there
  UGAL reads used credits, which this kernel does not keep, and
  :func:`universal.engine.runs.kernel_supports` leaves those runs to numpy); then the pass; a mover is delivered, waits
  for its next link (oblivious) or is undecided until the next step (adaptive);
* deliveries are recorded in the numpy engine's order (per step the youngest first).

A pass ends once every link has moved what it could (the sum over the links of B or the packets
waiting for it, kept as the counts change): beyond saturation the rest of the list then waits
for links that are done.

Tried and dropped: one binary heap per link keyed by packet id, so that a step touches only the
links with packets and their oldest ones instead of the whole backlog. Its moves cost 3 to 4
times the list's (heaps scattered over a pool: cache misses at every push and pop) at offered
0.3 and 0.9 and in a batch of saturation-search runs of RLB, where the backlog was expected to
make it pay.

Without numba the module imports and its kernels are plain Python; the engine then never
dispatches here and the tests of the kernel skip. The adaptive choice is in
:mod:`universal.engine.compiled_adaptive_choice`, the numbering of a chunk's packets and the list's
compaction in :mod:`universal.engine.compiled_list_upkeep`.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import njit
# the choice and the chunk's upkeep: imported here too, where _chunk calls them and other modules
# import them from
from universal.engine.compiled_adaptive_choice import _decide, tie_uniform_one  # noqa: F401
from universal.engine.compiled_list_upkeep import _compact, _number, compact_routes  # noqa: F401
from universal.engine.creation import CHUNK, draw_chunk
from universal.engine.measure import DONE, WINDOW
from universal.errors import UserError

__all__ = ["compact_routes", "run_batch", "tie_uniform_one"]


# ---------------------------------------------------------------------------- the kernel
#: Columns of the slots' ``fields`` (int64; a tie seed is below 2^63): then ``dims`` columns of
#: the hops left per dimension (GOAL) and ``dims`` of the directions.
PID, SRC, DST, CREATED, HOPS, LABEL, NODE, TARGET, TIE, VIA, REM = range(11)


@njit(cache=True, nogil=True)
def _chunk(t0, nsteps, full, bandwidth, L, nodes, fixed, kinds, productive, distance, dir_link, link_head,
           link_dim, threshold, dims,
           want, slot_of, n_live, pend, s_run, s_cur, s_end, fields, store, count, state,
           c_step, c_src, c_dst, c_off, c_links, c_tie, c_via, c_rem, c_sign, run_first, label_run, in_window,
           next_pid, backlog, outstanding, labelled, accepted, history, records, n_rec):
    """Create the packets of one chunk and run ``nsteps`` steps from ``t0`` (see the module
    docstring): :func:`universal.engine.compiled_openloop._chunk` with adaptive packets. A
    waiting packet's ``want`` is the link it waits for (``run * L + link``), -2 while it is an
    adaptive packet still to decide, -1 once delivered; ``count[link]`` the packets waiting for
    the link (what the decisions read). ``fields[slot]`` (columns :data:`PID` ...) hold what the
    step reads only at a decision or a delivery. Returns ``(store, n_live, n_pend, created,
    next_pid, n_rec, hops)``.
    """
    runs = len(run_first) - 1
    store, used, n_live, n_pend = _compact(want, slot_of, n_live, pend, s_run, s_cur, s_end, fields, store,
                                           len(c_links))
    store[used:used + len(c_links)] = c_links
    next_slot = n_live
    order, order_pid, order_run, bounds, created, next_pid, n_rec = _number(
        t0, full, runs, c_step, c_src, c_dst, c_off, run_first, label_run, labelled, accepted, nodes, fixed,
        next_pid, records, n_rec)
    n_travel = bounds[full]
    width = max(productive.shape[2], dims)
    cost = np.empty(width, dtype=np.int64)
    cand = np.empty(width, dtype=np.int64)
    choice = np.empty(n_live + n_travel, dtype=np.int64)
    delivered = np.empty(n_live + n_travel, dtype=np.int64)
    # (slot, dimension) and per-field views; a slot's fields are one row, a cache line or two
    rem = fields[:, REM:REM + dims]
    sign = fields[:, REM + dims:REM + 2 * dims]
    node_row, target_row, dst_row = fields[:, NODE], fields[:, TARGET], fields[:, DST]
    via_row, tie_row, hops_row = fields[:, VIA], fields[:, TIE], fields[:, HOPS]
    hops = 0
    holes = 0
    ready = 0                   # sum over the links of min(B, packets waiting for the link)
    for link in range(len(count)):
        ready += min(bandwidth, count[link])
    for s in range(nsteps):
        t = t0 + s
        for k in range(bounds[s], bounds[s + 1]):
            j, r = order[k], order_run[k]
            slot = next_slot
            next_slot += 1
            s_run[slot] = r
            fields[slot, PID], fields[slot, SRC], fields[slot, DST] = order_pid[k], c_src[j], c_dst[j]
            fields[slot, CREATED] = t
            fields[slot, LABEL] = label_run[r]
            s_cur[slot] = used + c_off[j]
            s_end[slot] = used + c_off[j + 1]
            slot_of[n_live] = slot
            if kinds[r] == 0:
                fields[slot, HOPS] = c_off[j + 1] - c_off[j]
                link = r * L + c_links[c_off[j]]
                want[n_live] = link
                if count[link] < bandwidth:
                    ready += 1
                count[link] += 1
            else:
                fields[slot, HOPS] = 0
                fields[slot, NODE], fields[slot, TARGET], fields[slot, TIE] = c_src[j], c_dst[j], c_tie[j]
                via = c_via[j]
                fields[slot, VIA] = -1 if via == c_src[j] or via == c_dst[j] else via
                for d in range(dims):
                    rem[slot, d], sign[slot, d] = c_rem[j, d], c_sign[j, d]
                want[n_live] = -2
                pend[n_pend] = n_live
                n_pend += 1
            n_live += 1
            backlog[r] += 1
            if not fixed and label_run[r]:
                outstanding[r] += 1
        # the adaptive decisions, all from the counts as they are now, then committed
        for i in range(n_pend):
            slot = slot_of[pend[i]]
            choice[i] = _decide(slot, kinds[s_run[slot]], L, productive, distance, dir_link, threshold, count,
                                s_run, node_row, target_row, dst_row, via_row, tie_row, hops_row, rem, sign,
                                cost, cand)
        for i in range(n_pend):
            want[pend[i]] = choice[i]
            if count[choice[i]] < bandwidth:
                ready += 1
            count[choice[i]] += 1
        n_pend = 0
        # contention: the oldest first, up to B per link; a mover is not looked at again
        base = t * (bandwidth + 1)
        top = base + bandwidth
        n_del = 0
        # the packets that can move in this step: min(B, waiting) per link; once all have, the
        # rest of the list (beyond saturation, most of it) waits for links that are done
        movable = ready
        for i in range(n_live):
            if movable == 0:
                break
            link = want[i]
            if link < 0:
                continue
            seen = max(state[link], base)
            if seen >= top:
                continue
            state[link] = seen + 1
            hops += 1
            movable -= 1
            if count[link] <= bandwidth:
                ready -= 1
            count[link] -= 1
            slot = slot_of[i]
            r = s_run[slot]
            if kinds[r] == 0:
                c = s_cur[slot] + 1
                if c == s_end[slot]:
                    delivered[n_del] = slot
                    n_del += 1
                    want[i] = -1
                    continue
                s_cur[slot] = c
                nxt = r * L + store[c]
                want[i] = nxt
                if count[nxt] < bandwidth:
                    ready += 1
                count[nxt] += 1
                continue
            local = link - r * L
            node = link_head[local]
            node_row[slot] = node
            hops_row[slot] += 1
            if kinds[r] == 2:
                rem[slot, link_dim[local]] -= 1
            dst = dst_row[slot]
            if node == target_row[slot] and target_row[slot] != dst:
                target_row[slot] = dst
            if node == dst and target_row[slot] == dst:
                delivered[n_del] = slot
                n_del += 1
                want[i] = -1
                continue
            want[i] = -2
            pend[n_pend] = i
            n_pend += 1
        holes += n_del
        if 2 * holes > n_live:          # squeeze the holes out (the undecided keep their order)
            kept = 0
            n_pend = 0
            for i in range(n_live):
                if want[i] != -1:
                    want[kept] = want[i]
                    slot_of[kept] = slot_of[i]
                    if want[kept] == -2:
                        pend[n_pend] = kept
                        n_pend += 1
                    kept += 1
            n_live = kept
            holes = 0
        # deliveries youngest first, as the numpy engine lists them
        for i in range(n_del - 1, -1, -1):
            slot = delivered[i]
            r = s_run[slot]
            backlog[r] -= 1
            if fixed:
                records[n_rec, 0], records[n_rec, 1], records[n_rec, 2] = r, fields[slot, PID], t
                n_rec += 1
                continue
            if in_window[r]:
                accepted[r * nodes + fields[slot, SRC]] += 1
            if fields[slot, LABEL]:
                outstanding[r] -= 1
                records[n_rec, 0], records[n_rec, 1] = r, t - fields[slot, CREATED] + 1
                records[n_rec, 2], records[n_rec, 3] = fields[slot, HOPS], fields[slot, SRC]
                records[n_rec, 4] = fields[slot, DST]
                n_rec += 1
        if not fixed:
            row = t % history.shape[0]
            for r in range(runs):
                history[row, r] = backlog[r]
    return store, n_live, n_pend, created, next_pid, n_rec, hops


# ---------------------------------------------------------------------------- the driver
class _Slots:
    """The waiting packets oldest first (``want``, ``slot_of``), their fields by slot, the
    undecided ones."""

    def __init__(self, dims: int, cap: int = 4096) -> None:
        self.dims, self.n_live = dims, 0
        self.want = np.empty(cap, dtype=np.int64)
        self.ids = np.empty(cap, dtype=np.int64)
        self.pend = np.empty(cap, dtype=np.int64)
        self.run = np.empty(cap, dtype=np.int64)
        self.cur = np.empty(cap, dtype=np.int64)
        self.end = np.empty(cap, dtype=np.int64)
        self.fields = np.zeros((cap, REM + 2 * dims), dtype=np.int64)

    def reserve(self, more: int) -> None:
        """Room for ``more`` packets beside the waiting ones (packed at each chunk)."""
        need = self.n_live + more
        if need <= len(self.ids):
            return
        cap = max(2 * len(self.ids), need)
        n = self.n_live
        live = self.ids[:n]
        for name in ("run", "cur", "end"):
            grown = np.empty(cap, dtype=np.int64)
            grown[:n] = getattr(self, name)[live]
            setattr(self, name, grown)
        fields = np.zeros((cap, self.fields.shape[1]), dtype=np.int64)
        fields[:n] = self.fields[live]
        self.fields = fields
        self.ids = np.empty(cap, dtype=np.int64)
        self.ids[:n] = np.arange(n)
        for name in ("want", "pend"):
            grown = np.empty(cap, dtype=np.int64)
            grown[:n] = getattr(self, name)[:n]
            setattr(self, name, grown)

    def drop(self, ended: np.ndarray) -> None:
        """Forget the waiting packets of the runs that ended (``ended[r]``); the undecided ones
        are listed again when the next chunk packs the slots."""
        live = self.ids[:self.n_live]
        keep = np.flatnonzero(~ended[self.run[live]] & (self.want[:self.n_live] != -1))
        self.want[:len(keep)] = self.want[keep]
        self.ids[:len(keep)] = live[keep]
        self.n_live = len(keep)


def _tables(batch) -> tuple:
    """The adaptive routings' tables (dummies where the batch has none of the kind)."""
    from universal.engine.adaptive import _tables as adaptive_tables

    tabs = adaptive_tables(batch)
    one = np.zeros((1, 1, 1), dtype=np.int64)
    return (np.ascontiguousarray(tabs.get("productive", one - 1), dtype=np.int64),
            np.ascontiguousarray(tabs.get("distance", np.zeros((1, 1), np.int32))),
            np.ascontiguousarray(tabs.get("dir_link", one), dtype=np.int64),
            np.ascontiguousarray(tabs["head"], dtype=np.int64),
            np.ascontiguousarray(tabs.get("link_dim", np.zeros(1, np.int64)), dtype=np.int64),
            np.asarray(tabs["threshold"], dtype=np.float64))


def _gather(parts: list, runs: int, dims: int) -> tuple:
    """The chunk's packets of every run, run after run (see :func:`_chunk`)."""
    counts = np.zeros(runs + 1, dtype=np.int64)
    for r, c in parts:
        counts[r + 1] = len(c.step)
    run_first = np.cumsum(counts)
    step = np.concatenate([c.step for _, c in parts])
    src = np.concatenate([c.src for _, c in parts])
    dst = np.concatenate([c.dst for _, c in parts])
    links, offs, ties, vias, rems, signs = [], [], [], [], [], []
    base = 0
    for _, c in parts:
        n, route = len(c.step), c.route
        if route.offsets is not None:
            links.append(route.links.astype(np.int32, copy=False))
            offs.append(route.offsets[:-1] + base)
            base += len(route.links)
        else:
            offs.append(np.full(n, base, dtype=np.int64))
        ties.append(c.tie.astype(np.int64) if c.tie is not None else np.zeros(n, np.int64))
        vias.append(route.via if route.via is not None else np.full(n, -1, np.int64))
        rems.append(route.remaining if route.remaining is not None else np.zeros((n, dims), np.int64))
        signs.append(route.signs if route.signs is not None else np.zeros((n, dims), np.int64))
    off = np.concatenate(offs + [np.array([base])]).astype(np.int64, copy=False)
    links = np.concatenate(links) if links else np.zeros(0, np.int32)
    return (step, src, dst, off, links, np.concatenate(ties), np.concatenate(vias).astype(np.int64, copy=False),
            np.ascontiguousarray(np.concatenate(rems), dtype=np.int64).reshape(-1, dims),
            np.ascontiguousarray(np.concatenate(signs), dtype=np.int64).reshape(-1, dims), run_first)


def run_batch(batch, max_waiting: int, records: np.ndarray, hand_over) -> list:
    """Run the open-loop batch ``batch`` (a fresh :class:`universal.engine.runs._Batch` with
    adaptive runs that :func:`universal.engine.runs.kernel_supports`) to its end on this kernel.

    Parameters
    ----------
    batch : universal.engine.runs._Batch
        Fresh (no step run yet); its measurement arrays and generators are used and updated as
        the numpy engine would update them.
    max_waiting : int
        Most packets that may wait at once (the engine's memory guard).
    records : ndarray (n, 5)
        The record block (:func:`universal.engine.compiled_openloop.record_block`).
    hand_over : callable
        Gives the batch the records and returns its results
        (:func:`universal.engine.compiled_openloop.hand_over`).

    Returns
    -------
    list of RunResult
        The same as ``batch.run()`` on the numpy engine.
    """
    R, L, N = batch.R, batch.L, batch.N
    if R * L >= 2**31 - 1:
        raise UserError(f"a batch of {R} runs on {L:,} links is too large for the compiled kernel")
    fixed = batch.m.steps
    dims = max(batch.dims, 1)
    slots = _Slots(dims)
    kinds = np.asarray(batch.kinds, dtype=np.int64)
    productive, distance, dir_link, head, link_dim, threshold = _tables(batch)
    n_rec, n_pend = 0, 0
    store = np.empty(0, dtype=np.int32)
    count = np.zeros(R * L, dtype=np.int64)
    state = np.full(R * L, -1, dtype=np.int64)
    accepted = batch.accepted.reshape(-1)
    no_labels = np.zeros(R, dtype=np.bool_)
    t = 0
    while (batch.phase != DONE).any():
        parts = [(r, draw_chunk(spec, batch.inj_state[r], t, batch.rngs[r]))
                 for r, spec in enumerate(batch.specs) if batch.phase[r] != DONE]
        step, src, dst, off, links, tie, via, rem, sign, run_first = _gather(parts, R, dims)
        steps = CHUNK if fixed is None else min(CHUNK, fixed - t)
        slots.reserve(len(step))
        if n_rec + slots.n_live + len(step) > len(records):   # in place: see compiled_openloop.grow_records
            records.resize((max(2 * len(records), n_rec + slots.n_live + len(step)), 5), refcheck=False)
        label_run = no_labels if fixed is not None else batch.phase == WINDOW
        (store, slots.n_live, n_pend, created, batch.next_pid, n_rec, hops) = _chunk(
            t, steps, CHUNK, batch.B, L, N, fixed is not None, kinds, productive, distance, dir_link, head,
            link_dim, threshold, dims,
            slots.want, slots.ids, slots.n_live, slots.pend, slots.run, slots.cur, slots.end, slots.fields, store,
            count, state, step, src, dst, off, links, tie, via, rem, sign, run_first, label_run,
            np.ascontiguousarray(batch.in_window), batch.next_pid, batch.backlog, batch.outstanding, batch.labelled,
            accepted, batch.history, records, n_rec)
        batch.link_hops += int(hops)
        if not batch.m.latencies and fixed is None:     # nothing reads them: the block holds a chunk's
            n_rec = 0
        if fixed is not None:
            batch.created_records.append(tuple(created))
        t += steps
        if fixed is not None:
            if t >= fixed:
                batch.phase[:] = DONE
        else:
            running = batch.phase != DONE
            batch._advance_phases(t - 1)
            ended = running & (batch.phase == DONE)
            if ended.any():
                slots.drop(ended)
                count.reshape(R, L)[ended] = 0     # their links wait for nothing now
        if slots.n_live > max_waiting:
            raise UserError(f"more than {max_waiting:,} packets wait at once in this batch; offer less load "
                            "or batch fewer runs")
    return hand_over(batch, records, n_rec, t)
