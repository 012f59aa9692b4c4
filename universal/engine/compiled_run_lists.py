"""The compiled open-loop kernel's steps run after run: each run's whole chunk, then the next's
(SPEC §11).

With the ``age`` priority (or ``longest-in-system``, the same order here) and unbounded buffers a
link lets across, in a step, the B oldest of the packets waiting for it at the step's start (the
numpy engine's contention; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks", 2003, §2, for the model). The list kernel
(:func:`universal.engine.compiled_openloop._chunk`) finds them in one pass per step over the
waiting packets of the whole batch, oldest first, each read where the batch keeps it: on a batch
of 256 runs of the 8-ary 2-cube the links' state is 256 KB and the waiting packets' fields
megabytes, so near saturation, where a packet is passed over about four times per hop, most
reads leave the first-level cache. The runs of a batch never meet (each has its own links and
packets), so here the kernel runs one run's whole chunk, then the next run's: the run's waiting
packets are copied into a short list of their own (link, slot; oldest first), its links' state
is 2 KB, and the passes over them stay in the first-level cache.

A run's packets, their ids (by creation step, run, source), its deliveries of a step (youngest
first, as the numpy engine lists them), its backlog history and counts are the list kernel's;
only the interleaving of different runs' records in the record block differs, which nothing
reads (the hand-over splits them by run), so every result is the numpy engine's
(``tests/engine/test_compiled_openloop.py``). Fixed-length runs, whose records are kept in the
batch's order, stay on the list kernel.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import njit
from universal.engine.compiled_adaptive import _number, compact_routes

__all__ = ["compact", "chunk_by_run"]


@njit(cache=True, nogil=True)
def compact(want, slot_of, n_live, s_cur, s_end, s_pid, s_run, s_src, s_dst, s_created, s_hops, s_label,
            store, extra):
    """Drop the delivered packets (``want`` -1) from the waiting list, move the waiting packets
    to slots ``0, 1, ...`` (oldest first) and copy their remaining route links to a fresh store
    with ``extra`` free places after them (:func:`universal.engine.compiled_adaptive.compact_routes`);
    returns the store, the length used and the number of waiting packets."""
    fresh, at, n_live = compact_routes(want, slot_of, n_live, s_cur, s_end, store, extra)
    for i in range(n_live):
        s = slot_of[i]      # never below i (see compact_routes): slot i was read already
        if s != i:
            s_pid[i], s_run[i], s_src[i], s_dst[i] = s_pid[s], s_run[s], s_src[s], s_dst[s]
            s_created[i], s_hops[i], s_label[i] = s_created[s], s_hops[s], s_label[s]
        slot_of[i] = i
    return fresh, at, n_live


# ---------------------------------------------------------------------------- shared step parts
@njit(cache=True, nogil=True)
def _join(k, slot, r, t, order, order_pid, c_src, c_dst, c_off, s_pid, s_run, s_src, s_dst, s_created, s_hops,
          s_label, s_cur, s_end, used, label_run, backlog, outstanding):
    """Give the chunk's packet ``order[k]`` of run ``r``, created in step ``t``, its ``slot``;
    returns its first link (run-local)."""
    j = order[k]
    s_pid[slot], s_run[slot], s_src[slot], s_dst[slot] = order_pid[k], r, c_src[j], c_dst[j]
    s_created[slot] = t
    s_hops[slot] = c_off[j + 1] - c_off[j]
    s_label[slot] = label_run[r]
    s_cur[slot] = used + c_off[j]
    s_end[slot] = used + c_off[j + 1]
    backlog[r] += 1
    if label_run[r]:
        outstanding[r] += 1
    return j


@njit(cache=True, nogil=True)
def _record(delivered, nd, r, t, nodes, s_src, s_dst, s_created, s_hops, s_label, in_window, backlog, outstanding,
            accepted, records, n_rec):
    """Record the step's deliveries ``delivered[:nd]`` (ascending ids) youngest first, as the
    numpy engine lists them; returns the records written."""
    for i in range(nd - 1, -1, -1):
        slot = delivered[i]
        backlog[r] -= 1
        if in_window[r]:
            accepted[r * nodes + s_src[slot]] += 1
        if s_label[slot]:
            outstanding[r] -= 1
            records[n_rec, 0], records[n_rec, 1] = r, t - s_created[slot] + 1
            records[n_rec, 2], records[n_rec, 3], records[n_rec, 4] = s_hops[slot], s_src[slot], s_dst[slot]
            n_rec += 1
    return n_rec




# ---------------------------------------------------------------------------- one run's chunk
@njit(cache=True, nogil=True)
def _run_steps(r, nsteps, t0, bandwidth, L, nodes, lw, ls, n, first, order, order_pid, first_slot,
               c_src, c_dst, c_off, c_links, s_pid, s_run, s_src, s_dst, s_created, s_hops, s_label, s_cur, s_end,
               used, store, label_run, in_window, backlog, outstanding, accepted, history, records, n_rec, state,
               delivered, alive):
    """Run ``r``'s steps of the chunk with one pass per step over its waiting packets
    (``lw[:n]`` their run-local links, ``ls[:n]`` their slots, oldest first; room for the
    chunk's new ones). ``state``: the run's links' crossings in the step as ``step * (B + 1) +
    crossings``. Marks the packets left waiting in ``alive`` (with their batch-wide link);
    returns the hops and the records written."""
    hops = 0
    for s in range(nsteps):
        t = t0 + s
        for k in range(first[s, r], first[s, r + 1]):     # the step's new packets: the youngest
            slot = first_slot + k
            j = _join(k, slot, r, t, order, order_pid, c_src, c_dst, c_off, s_pid, s_run, s_src, s_dst,
                      s_created, s_hops, s_label, s_cur, s_end, used, label_run, backlog, outstanding)
            lw[n], ls[n] = c_links[c_off[j]], slot
            n += 1
        # the oldest first, up to B per link; a mover is not looked at again in the step
        base = t * (bandwidth + 1)
        top = base + bandwidth
        nd = 0
        kept = 0
        for i in range(n):
            link, slot = lw[i], ls[i]
            seen = max(state[link], base)
            if seen < top:
                state[link] = seen + 1
                hops += 1
                c = s_cur[slot] + 1
                if c == s_end[slot]:
                    delivered[nd] = slot
                    nd += 1
                    continue
                s_cur[slot] = c
                link = store[c]
            lw[kept], ls[kept] = link, slot
            kept += 1
        n = kept
        n_rec = _record(delivered, nd, r, t, nodes, s_src, s_dst, s_created, s_hops, s_label, in_window, backlog,
                        outstanding, accepted, records, n_rec)
        history[t % history.shape[0], r] = backlog[r]
    for i in range(n):
        alive[ls[i]] = r * L + lw[i]
    return hops, n_rec


# ---------------------------------------------------------------------------- the chunk
@njit(cache=True, nogil=True)
def chunk_by_run(t0, nsteps, bandwidth, links_per_run, nodes,
                 want, slot_of, n_live, s_cur, s_end, s_pid, s_run, s_src, s_dst, s_created, s_hops, s_label, store,
                 c_step, c_src, c_dst, c_off, c_links, run_first, label_run, in_window, next_pid,
                 backlog, outstanding, labelled, accepted, history, records, n_rec):
    """Create the packets of one chunk of a measured batch and run its ``nsteps`` steps from
    ``t0``, one run after the other (arguments as :func:`universal.engine.compiled_openloop._chunk`
    takes them, without its links' state and ``fixed``).

    Returns ``(n_live, next_pid, store, n_rec, hops)``; the waiting packets are left in
    ``want[:n_live]``, ``slot_of[:n_live]``, oldest first, as the list kernel leaves them.
    """
    runs = len(run_first) - 1
    L = links_per_run
    store, used, n_live = compact(want, slot_of, n_live, s_cur, s_end, s_pid, s_run, s_src, s_dst, s_created,
                                  s_hops, s_label, store, len(c_links))
    store[used:used + len(c_links)] = c_links
    first_slot = n_live
    order, order_pid, order_run, bounds, _, next_pid, n_rec = _number(
        t0, nsteps, runs, c_step, c_src, c_dst, c_off, run_first, label_run, labelled, accepted, nodes,
        False, next_pid, records, n_rec)
    n_travel = bounds[nsteps]
    # first[s, r]: where run r's packets created in step s begin in ``order`` (by step, then run)
    first = np.zeros((nsteps + 1, runs + 1), dtype=np.int64)
    for s in range(nsteps):
        for k in range(bounds[s], bounds[s + 1]):
            first[s, order_run[k] + 1] += 1
        first[s, 0] = bounds[s]
        for r in range(runs):
            first[s, r + 1] += first[s, r]
    # the waiting packets by run, each run's oldest first
    per = np.zeros(runs + 1, dtype=np.int64)
    for i in range(n_live):
        per[want[i] // L + 1] += 1
    for r in range(runs):
        per[r + 1] += per[r]
    room = 1
    for r in range(runs):
        room = max(room, per[r + 1] - per[r] + run_first[r + 1] - run_first[r])
    lw_all = np.empty(n_live, dtype=np.int64)
    ls_all = np.empty(n_live, dtype=np.int64)
    fill = per[:-1].copy()
    for i in range(n_live):
        r = want[i] // L
        lw_all[fill[r]], ls_all[fill[r]] = want[i] - r * L, slot_of[i]
        fill[r] += 1
    alive = np.full(first_slot + n_travel, -1, dtype=np.int32)
    lw = np.empty(room, dtype=np.int64)       # one run's list at a time, the same memory for all
    ls = np.empty(room, dtype=np.int64)
    state = np.empty(L, dtype=np.int64)
    delivered = np.empty(L * bandwidth, dtype=np.int64)
    hops = 0
    for r in range(runs):
        n = per[r + 1] - per[r]
        lw[:n] = lw_all[per[r]:per[r + 1]]
        ls[:n] = ls_all[per[r]:per[r + 1]]
        state[:] = -1
        more, n_rec = _run_steps(r, nsteps, t0, bandwidth, L, nodes, lw, ls, n, first, order, order_pid, first_slot,
                                 c_src, c_dst, c_off, c_links, s_pid, s_run, s_src, s_dst, s_created, s_hops, s_label,
                                 s_cur, s_end, used, store, label_run, in_window, backlog, outstanding, accepted,
                                 history, records, n_rec, state, delivered, alive)
        hops += more
    # every run's waiting packets back in one list, oldest first (slots are in creation order)
    n = 0
    for slot in range(first_slot + n_travel):
        if alive[slot] >= 0:
            want[n], slot_of[n] = alive[slot], slot
            n += 1
    return n, next_pid, store, n_rec, hops
