"""A compiled step loop for open-loop runs: oblivious routings, the age priority, unbounded
buffers (SPEC §11; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks", 2003, §2 and §5).

The one open-loop engine (:mod:`universal.engine.runs`) makes about twenty numpy calls per step;
on a network of 64 nodes a step moves a few dozen packets, so Python's overhead, not the work,
sets its pace. This module advances a whole creation chunk (:data:`universal.engine.creation.CHUNK`
steps) per call of one compiled kernel, so that Python is entered once per chunk, where the
engine draws the chunk's packets and moves the runs between measurement phases anyway:

* the packets are drawn exactly as the numpy engine draws them (:func:`draw_chunk` with the
  run's generators, or :func:`draw_chunk_fast`, which gives the same packets from the same calls
  of the same generators with less overhead, or for runs with one traffic, DOR and bernoulli
  sources :class:`universal.engine.compiled_batch_draws.BatchDraws`, every run's chunk in one
  call), so a run's random stream, and with it every result, is the numpy engine's;
* the kernel numbers the chunk's packets (by step, run, source: the numpy engine's creation
  order), delivers at once those whose route is empty, and then, step by step, lets the packets
  created in the step join the waiting ones and every link forward up to B of the packets waiting
  for it, the oldest first, recording deliveries as the numpy engine does (latency, hops, the
  window's accepted packets, the backlog after every step);
* between chunks :meth:`universal.engine.runs._Batch._advance_phases` moves the runs between
  warm-up, window, drain and done, unchanged.

The age priority needs no sort: the waiting packets are kept oldest first (new packets are the
youngest and join at the end, a pass keeps the order), and one pass over them, in which a packet
crosses if its link has let fewer than B packets across in this step, is the contention. A step
costs time proportional to the waiting packets, never to the network; the links' per-step counts
carry the step number as a tag, so nothing is cleared between steps.

What runs here (:func:`universal.engine.runs.kernel_supports`): every oblivious routing (paths
fixed at creation: DOR, VAL, ROMM, RLB, IVAL, path systems), bernoulli, poisson and on-off
sources, the ``age`` and ``longest-in-system`` priorities, any bandwidth B, unbounded buffers,
the measurement phases and fixed-length runs (``Measurement(steps=...)``); a batch with
adaptive runs (MIN AD, GOAL, UGAL) goes to :mod:`universal.engine.compiled_adaptive`. Bounded
buffers, virtual channels, the other priorities, CHAOS, UGAL-L/G, the splitter and the batch
model stay on the numpy engine. :func:`universal.engine.runs.simulate_batch` splits a batch of
measured runs that mixes routings into the runs this kernel takes and the others (a run's
result never depends on its batch).

Measured (``benchmarks/openloop.py``, docs/performance.md): one run of the 8-ary 2-cube at offered 0.3 with a
100,000-step window, 12 times the numpy engine's link-hops per CPU second; batches of 64 and
256 runs 20 to 27 million link-hops per CPU second, of which (``--split``) the kernel is about
18 ns per link-hop at 0.3 and 30 to 33 at 0.9 since measured batches run run after run
(:mod:`universal.engine.compiled_run_lists`; 43 to 62 before at 0.9), the draws 8 to 12 and the
hand-over 4 to 6.

Without numba the module still imports and its kernels are plain Python; the engine then never
dispatches here (:func:`universal.engine.runs._kernel_pays`) and the tests of the kernel skip.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import NUMBA, njit
from universal.engine.compiled_adaptive import _number
from universal.engine.compiled_batch_draws import BatchDraws
from universal.engine.compiled_draws import draw_chunk_fast
from universal.engine.compiled_run_lists import chunk_by_run, compact
from universal.engine.creation import CHUNK, draw_chunk
from universal.engine.measure import DONE, WINDOW
from universal.errors import UserError

__all__ = ["NUMBA", "run_batch", "draw_chunk_fast"]

#: Whether a kernel has run in this process (loading the cached machine code costs ~0.4 s once).
WARM = False

# ---------------------------------------------------------------------------- the kernel
@njit(cache=True, nogil=True)
def _chunk(t0, nsteps, full, bandwidth, links_per_run, nodes, fixed,
           want, slot_of, n_live, s_cur, s_end, s_pid, s_run, s_src, s_dst, s_created, s_hops, s_label, store,
           c_step, c_src, c_dst, c_off, c_links, run_first, label_run, in_window, next_pid,
           backlog, outstanding, labelled, accepted, history, state, records, n_rec):
    """Create the packets of one chunk and run ``nsteps`` steps from ``t0``.

    ``c_*`` hold the chunk's packets run after run (``run_first[r]`` is run r's first), each
    run's in creation order (step, source); ``c_links[c_off[j]:c_off[j + 1]]`` is packet j's
    route, as run-local link ids. The waiting packets, oldest first, are ``want[:n_live]`` (the
    link each waits for, numbered ``run * links_per_run + link``) and ``slot_of[:n_live]``
    (where their fields ``s_*`` are; there must be room for the chunk's packets). ``backlog``,
    ``outstanding``, ``labelled``, ``accepted`` (flat, run * nodes + source) and ``history``
    (CHUNK x runs) are the engine's measurement arrays, updated in place. ``state[link]`` counts
    the link's crossings in the step as ``step * (B + 1) + crossings`` (so an older step's
    value is below the current step's base, and nothing is cleared between steps). ``fixed``:
    a fixed-length run (every packet recorded, no labels).

    The recorded packets are written to the rows ``n_rec ..`` of ``records`` (which must have
    room for every packet of the chunk and every waiting one) in the numpy engine's order - the
    chunk's packets delivered at creation, then step by step the deliveries, youngest first:
    ``(run, latency, hops, source, destination)`` of the labelled packets, or with ``fixed``
    ``(run, pid, step)`` of all.

    Returns ``(n_live, next_pid, store, created, n_rec, hops)``; ``created`` holds ``(run, pid,
    step)`` of every packet of the chunk (``fixed`` only).
    """
    runs = len(run_first) - 1
    # the waiting packets' slots and routes packed at the front, the chunk's routes after them
    store, used, n_live = compact(want, slot_of, n_live, s_cur, s_end, s_pid, s_run, s_src, s_dst, s_created,
                                   s_hops, s_label, store, len(c_links))
    store[used:used + len(c_links)] = c_links
    next_slot = n_live
    # ---- number the chunk's packets: by step, then run, then the run's order (source); those
    # delivered at creation (0 hops, latency 0; labelled: accepted at once) are recorded there
    order, order_pid, order_run, bounds, created, next_pid, n_rec = _number(
        t0, full, runs, c_step, c_src, c_dst, c_off, run_first, label_run, labelled, accepted, nodes,
        fixed, next_pid, records, n_rec)
    n_travel = bounds[full]
    # ---- the steps
    hops = 0
    holes = 0
    delivered = np.empty(n_live + n_travel, dtype=np.int64)
    for s in range(nsteps):
        t = t0 + s
        # the packets created in step t join the waiting ones (the youngest: at the end)
        for k in range(bounds[s], bounds[s + 1]):
            j, r = order[k], order_run[k]
            slot = next_slot
            next_slot += 1
            s_pid[slot], s_run[slot], s_src[slot], s_dst[slot] = order_pid[k], r, c_src[j], c_dst[j]
            s_created[slot] = t
            s_hops[slot] = c_off[j + 1] - c_off[j]
            s_label[slot] = label_run[r]
            s_cur[slot] = used + c_off[j]
            s_end[slot] = used + c_off[j + 1]
            want[n_live] = r * links_per_run + c_links[c_off[j]]
            slot_of[n_live] = slot
            n_live += 1
            backlog[r] += 1
            if not fixed and label_run[r]:
                outstanding[r] += 1
        # contention: the oldest first, up to B per link; a mover is not looked at again. A
        # delivered packet leaves a hole (``want`` -1), squeezed out once holes are half the
        # list: a blocked packet, most of them beyond saturation, then costs two reads
        base = t * (bandwidth + 1)
        top = base + bandwidth
        n_del = 0
        for i in range(n_live):
            link = want[i]
            if link < 0:
                continue
            seen = max(state[link], base)
            if seen < top:
                state[link] = seen + 1
                hops += 1
                slot = slot_of[i]
                c = s_cur[slot] + 1
                if c == s_end[slot]:
                    delivered[n_del] = slot
                    n_del += 1
                    want[i] = -1
                    continue
                s_cur[slot] = c
                want[i] = s_run[slot] * links_per_run + store[c]
        holes += n_del
        if 2 * holes > n_live:
            kept = 0
            for i in range(n_live):
                if want[i] >= 0:
                    want[kept] = want[i]
                    slot_of[kept] = slot_of[i]
                    kept += 1
            n_live = kept
            holes = 0
        # deliveries youngest first, as the numpy engine lists them
        for i in range(n_del - 1, -1, -1):
            slot = delivered[i]
            r = s_run[slot]
            backlog[r] -= 1
            if fixed:
                records[n_rec, 0], records[n_rec, 1], records[n_rec, 2] = r, s_pid[slot], t
                n_rec += 1
                continue
            if in_window[r]:
                accepted[r * nodes + s_src[slot]] += 1
            if s_label[slot]:
                outstanding[r] -= 1
                records[n_rec, 0], records[n_rec, 1] = r, t - s_created[slot] + 1
                records[n_rec, 2], records[n_rec, 3], records[n_rec, 4] = s_hops[slot], s_src[slot], s_dst[slot]
                n_rec += 1
        if not fixed:
            row = t % history.shape[0]
            for r in range(runs):
                history[row, r] = backlog[r]
    return n_live, next_pid, store, created, n_rec, hops


# ---------------------------------------------------------------------------- the driver
class _Slots:
    """The waiting packets of the kernel: their fields by slot, the slots oldest first, the store
    of their route links."""

    FIELDS = ("cur", "end", "pid", "run", "src", "dst", "created", "hops")

    def __init__(self, cap: int = 1024, records: int = 1024, fixed: bool = False) -> None:
        self.n_live = 0
        # what every step reads of every waiting packet, and the route links, as int32 (half
        # the memory to stream through on a large batch; the driver checks that ids fit)
        self.want = np.empty(cap, dtype=np.int32)
        self.ids = np.empty(cap, dtype=np.int32)
        self.f = {name: np.empty(cap, dtype=np.int64) for name in self.FIELDS}
        self.label = np.empty(cap, dtype=np.bool_)
        self.store = np.empty(0, dtype=np.int32)
        self.records = record_block(records, fixed)              # what the kernel records, in order
        self.n_rec = 0

    def record_room(self, more: int) -> None:
        """Room for ``more`` recorded packets after those recorded so far."""
        grow_records(self.records, self.n_rec + more)

    def reserve(self, more: int) -> None:
        """Room for ``more`` packets beside the waiting ones (slots are packed at each chunk)."""
        need = self.n_live + more
        if need <= len(self.ids):
            return
        cap = max(2 * len(self.ids), need)
        n = self.n_live
        live = self.ids[:n]
        # packed oldest first now, so the kernel's packing has nothing to move
        for name, arr in self.f.items():
            grown = np.empty(cap, dtype=np.int64)
            grown[:n] = arr[live]
            self.f[name] = grown
        grown = np.empty(cap, dtype=np.bool_)
        grown[:n] = self.label[live]
        self.label = grown
        self.ids = np.empty(cap, dtype=np.int32)
        self.ids[:n] = np.arange(n)
        grown = np.empty(cap, dtype=np.int32)
        grown[:n] = self.want[:n]
        self.want = grown

    def drop(self, ended: np.ndarray) -> None:
        """Forget the waiting packets of the runs that ended (``ended[r]``)."""
        live = self.ids[:self.n_live]
        keep = np.flatnonzero(~ended[self.f["run"][live]] & (self.want[:self.n_live] >= 0))
        self.want[:len(keep)] = self.want[keep]
        self.ids[:len(keep)] = live[keep]
        self.n_live = len(keep)


def _gather(parts: list, runs: int) -> tuple:
    """The chunk's packets of every run, run after run: step, source, destination, route offsets
    and links (run-local), and where each run's begin."""
    counts = np.zeros(runs + 1, dtype=np.int64)
    for r, c in parts:
        counts[r + 1] = len(c.step)
    run_first = np.cumsum(counts)
    if len(parts) == 1:
        (_, c), = parts
        return (c.step, c.src, c.dst, c.route.offsets.astype(np.int64, copy=False),
                c.route.links.astype(np.int32), run_first)
    step = np.concatenate([c.step for _, c in parts])
    src = np.concatenate([c.src for _, c in parts])
    dst = np.concatenate([c.dst for _, c in parts])
    links = np.concatenate([c.route.links for _, c in parts]).astype(np.int32, copy=False)
    base = np.cumsum([0] + [len(c.route.links) for _, c in parts])
    off = np.concatenate([c.route.offsets[:-1] + b for (_, c), b in zip(parts, base)] + [base[-1:]])
    return step, src, dst, off.astype(np.int64, copy=False), links, run_first


def _expected_records(batch) -> int:
    """Room for the packets the batch records (the labelled ones, or with a fixed length all),
    so that the record block is sized once (growing it copies, and fresh memory is slow to touch
    on some virtual machines); unwritten places cost no memory."""
    m = batch.m
    if not m.latencies and m.steps is None:
        return 1024
    steps = batch.window_len if m.steps is None else np.full(batch.R, m.steps)
    # twice the window and a chunk (the room asked before a chunk counts all its packets): near
    # saturation some runs double their windows, and growing the block writes zeros over the new
    # part (3 ns per link-hop at offered 0.9); pages never written cost no memory
    return int(2.2 * float((batch.offered_per_step * (steps + CHUNK)).sum())) + 1024


def run_batch(batch, max_waiting: int) -> list:
    """Run the open-loop batch ``batch`` (a :class:`universal.engine.runs._Batch` the kernel
    supports, see :func:`universal.engine.runs.kernel_supports`) to its end on the compiled kernel.

    Parameters
    ----------
    batch : universal.engine.runs._Batch
        Fresh (no step run yet); its measurement arrays and generators are used and updated as
        the numpy engine would update them.
    max_waiting : int
        Most packets that may wait at once (the engine's memory guard).

    Returns
    -------
    list of RunResult
        The same as ``batch.run()`` on the numpy engine.
    """
    global WARM
    if batch.adaptive:
        from universal.engine.compiled_adaptive import run_batch as run_adaptive

        results = run_adaptive(batch, max_waiting, record_block(_expected_records(batch), batch.m.steps is not None),
                               hand_over)
        WARM = True
        return results
    R, L, N = batch.R, batch.L, batch.N
    fixed = batch.m.steps
    slots = _Slots(records=_expected_records(batch), fixed=fixed is not None)
    if R * L >= 2**31 - 1:
        raise UserError(f"a batch of {R} runs on {L:,} links is too large for the compiled kernel")
    # a link's crossings in the step, as step * (B + 1) + crossings: int32 while that fits
    state = np.full(R * L, -1, dtype=np.int32)
    accepted = batch.accepted.reshape(-1)           # a view: the kernel counts into the engine's array
    no_labels = np.zeros(R, dtype=np.bool_)
    draw = draw_chunk_fast if FAST_DRAW else draw_chunk
    together = BatchDraws(batch)                    # all runs' chunks in one call, where it can
    t = 0
    while (batch.phase != DONE).any():
        drawn = together.draw(t) if FAST_DRAW else None
        if drawn is None:
            parts = [(r, draw(spec, batch.inj_state[r], t, batch.rngs[r]))
                     for r, spec in enumerate(batch.specs) if batch.phase[r] != DONE]
            drawn = _gather(parts, R)
        step, src, dst, off, links, run_first = drawn
        steps = CHUNK if fixed is None else min(CHUNK, fixed - t)
        if state.dtype == np.int32 and (t + steps + 1) * (batch.B + 1) >= 2**31:
            state = state.astype(np.int64)
        slots.reserve(len(step))
        f = slots.f
        label_run = no_labels if fixed is not None else batch.phase == WINDOW
        if fixed is None:
            # only labelled packets are recorded: those waiting and the labelling runs' new ones (a
            # bound by every waiting packet grew the block near saturation, 3 ns per link-hop)
            slots.record_room(int(batch.outstanding.sum()) + int(np.diff(run_first)[label_run].sum()))
        else:
            slots.record_room(slots.n_live + len(step))
        if fixed is None and BY_RUN:
            (slots.n_live, batch.next_pid, slots.store, slots.n_rec, hops) = chunk_by_run(
                t, steps, batch.B, L, N,
                slots.want, slots.ids, slots.n_live, f["cur"], f["end"], f["pid"], f["run"], f["src"], f["dst"],
                f["created"], f["hops"], slots.label, slots.store,
                step, src, dst, off, links, run_first, label_run, np.ascontiguousarray(batch.in_window),
                batch.next_pid, batch.backlog, batch.outstanding, batch.labelled, accepted, batch.history,
                slots.records, slots.n_rec)
        else:
            (slots.n_live, batch.next_pid, slots.store, created, slots.n_rec, hops) = _chunk(
                t, steps, CHUNK, batch.B, L, N, fixed is not None,
                slots.want, slots.ids, slots.n_live, f["cur"], f["end"], f["pid"], f["run"], f["src"], f["dst"],
                f["created"], f["hops"], slots.label, slots.store,
                step, src, dst, off, links, run_first, label_run, np.ascontiguousarray(batch.in_window),
                batch.next_pid, batch.backlog, batch.outstanding, batch.labelled, accepted, batch.history, state,
                slots.records, slots.n_rec)
        WARM = True
        if not batch.m.latencies and fixed is None:     # nothing reads them: the block holds a chunk's
            slots.n_rec = 0
        batch.link_hops += int(hops)
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
        if slots.n_live > max_waiting:
            raise UserError(f"more than {max_waiting:,} packets wait at once in this batch; offer less load "
                            "or batch fewer runs")
    return hand_over(batch, slots.records, slots.n_rec, t)


def record_block(size: int, fixed: bool) -> np.ndarray:
    """The kernels' record block for about ``size`` packets: ``(run, latency, hops, source,
    destination)`` as int32 (half the memory: near saturation the batch's runs record millions
    of packets, most of them in runs that turn out unstable), or with a fixed length ``(run,
    pid, step)`` as int64 (packet ids may pass 2^31)."""
    return np.empty((size, 5), dtype=np.int64 if fixed else np.int32)


def grow_records(records: np.ndarray, size: int) -> None:
    """Room for ``size`` records in the kernels' record block, in place: a resize reallocates
    the block, which the system can do by moving pages instead of copying them (a copy cost
    about 6 ns per link-hop of a batch near saturation, whose runs record far more than the
    window's expected packets). Nothing else may refer to ``records``."""
    if size > len(records):
        records.resize((max(size, 2 * len(records)), records.shape[1]), refcheck=False)


@njit(cache=True, nogil=True)
def _split_by_run(records, n_rec, stable):
    """The labelled packets of ``records[:n_rec]`` (``run, latency, hops, source,
    destination``) of every stable run (``stable[run]``), in delivery order, as that run's own
    ``(4, n)`` int64 array of ``source, destination, latency, hops``; an empty one for other runs."""
    runs = len(stable)
    count = np.zeros(runs, dtype=np.int64)
    for i in range(n_rec):
        r = records[i, 0]
        if stable[r]:
            count[r] += 1
    out = [np.empty((4, count[r]), dtype=np.int64) for r in range(runs)]
    fill = np.zeros(runs, dtype=np.int64)
    for i in range(n_rec):
        r = records[i, 0]
        if stable[r]:
            block, j = out[r], fill[r]
            block[0, j], block[1, j] = records[i, 3], records[i, 4]
            block[2, j], block[3, j] = records[i, 1], records[i, 2]
            fill[r] = j + 1
    return out


def hand_over(batch, records: np.ndarray, n_rec: int, steps: int) -> list:
    """Give the batch the kernel's ``records[:n_rec]`` as the numpy engine keeps them (int64
    columns; of a measured batch only the stable runs' packets, the only ones its results read)
    and return its results after ``steps`` steps."""
    if batch.m.steps is not None:
        batch.all_records.append(tuple(np.ascontiguousarray(records[:n_rec, k]) for k in range(3)))
    else:
        # one pass that splits the records by run into each stable run's own arrays (selecting,
        # widening, sorting by run and gathering took four passes and a fresh copy in each)
        stable = np.array([status == "stable" for status in batch.status])
        batch.grouped = _split_by_run(records, n_rec, stable)
    batch._flush_accepted()
    return batch._results(steps)


#: Whether :func:`run_batch` draws with :func:`draw_chunk_fast` (False: :func:`draw_chunk`; the tests compare).
FAST_DRAW = True

#: Whether :func:`run_batch` runs measured batches run after run
#: (:func:`universal.engine.compiled_run_lists.chunk_by_run`; False: the list kernel :func:`_chunk`
#: over the whole batch, which fixed-length runs always use; the tests compare).
BY_RUN = True
