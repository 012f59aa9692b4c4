"""The open-loop list kernels' upkeep of a chunk (:mod:`universal.engine.compiled_adaptive`,
:mod:`universal.engine.compiled_run_lists`, :mod:`universal.engine.compiled_openloop`): numbering the
chunk's new packets and recording those delivered at creation (:func:`_number`), and compacting the
waiting list and its route store (:func:`compact_routes`; :func:`_compact` for the adaptive kernel's
slots). Without numba the kernels are plain Python.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import njit


@njit(cache=True, nogil=True)
def _number(t0, full, runs, c_step, c_src, c_dst, c_off, run_first, label_run, labelled, accepted, nodes,
            fixed, next_pid, records, n_rec):
    """Number the chunk's packets by step, then run, then the run's order (source), and record
    those delivered at creation (source = destination, no path). Returns the travelling ones in
    id order (their chunk index, id, run), where each step's begin, the created records
    (``fixed``), the next id and the records written."""
    P = len(c_step)
    first_pid = next_pid
    ptr = run_first[:-1].copy()
    order = np.empty(P, dtype=np.int64)
    order_pid = np.empty(P, dtype=np.int64)
    order_run = np.empty(P, dtype=np.int64)
    bounds = np.zeros(full + 1, dtype=np.int64)
    created = np.empty((3, P if fixed else 0), dtype=np.int64)
    n_travel = 0
    for s in range(full):
        t = t0 + s
        for r in range(runs):
            j = ptr[r]
            end = run_first[r + 1]
            while j < end and c_step[j] == t:
                pid = next_pid
                next_pid += 1
                if fixed:
                    k = pid - first_pid
                    created[0, k], created[1, k], created[2, k] = r, pid, t
                elif label_run[r]:
                    labelled[r] += 1
                if c_off[j + 1] == c_off[j] and c_src[j] == c_dst[j]:
                    if fixed:
                        records[n_rec, 0], records[n_rec, 1], records[n_rec, 2] = r, pid, t
                        n_rec += 1
                    elif label_run[r]:
                        accepted[r * nodes + c_src[j]] += 1
                        records[n_rec, 0], records[n_rec, 1], records[n_rec, 2] = r, 0, 0
                        records[n_rec, 3], records[n_rec, 4] = c_src[j], c_dst[j]
                        n_rec += 1
                else:
                    order[n_travel], order_pid[n_travel], order_run[n_travel] = j, pid, r
                    n_travel += 1
                j += 1
            ptr[r] = j
        bounds[s + 1] = n_travel
    return order, order_pid, order_run, bounds, created, next_pid, n_rec


@njit(cache=True, nogil=True)
def compact_routes(want, slot_of, n_live, s_cur, s_end, store, extra):
    """Drop the delivered packets (``want`` -1) from the waiting list (``want[:n_live]``, their
    slots ``slot_of[:n_live]``, oldest first) and copy the waiting ones' remaining route links,
    in the list's order, to a fresh store with ``extra`` free places after them: the list's
    ``i``-th packet gets its route at ``s_cur[i]:s_end[i]``, and ``slot_of[i]`` still names the
    slot its other fields are in (never below ``i``), for the caller to move them to slot ``i``.
    Returns the store, its length used and the waiting packets' count.

    The compaction of both list kernels: the oblivious one's
    (:func:`universal.engine.compiled_run_lists.compact`) and this module's (:func:`_compact`),
    which keep the slots' other fields in different layouts.
    """
    n = 0
    for i in range(n_live):
        if want[i] != -1:
            want[n] = want[i]
            slot_of[n] = slot_of[i]
            n += 1
    n_live = n
    total = 0
    for i in range(n_live):
        s = slot_of[i]
        total += s_end[s] - s_cur[s]
    fresh = np.empty(total + extra, dtype=store.dtype)
    at = 0
    for i in range(n_live):
        s = slot_of[i]      # slots are handed out in creation order and kept in it, so s >= i
        c, e = s_cur[s], s_end[s]
        s_cur[i] = at
        for j in range(c, e):
            fresh[at] = store[j]
            at += 1
        s_end[i] = at
    return fresh, at, n_live


@njit(cache=True, nogil=True)
def _compact(want, slot_of, n_live, pend, s_run, s_cur, s_end, fields, store, extra):
    """:func:`compact_routes`, the slots' other fields (``s_run``, ``fields[slot]``) moved with
    their routes, and the undecided packets (``want`` -2) listed in ``pend``. Returns the store,
    its length used, the waiting and the undecided packets' counts."""
    fresh, at, n_live = compact_routes(want, slot_of, n_live, s_cur, s_end, store, extra)
    n_pend = 0
    for i in range(n_live):
        s = slot_of[i]
        if s != i:
            s_run[i] = s_run[s]
            fields[i, :] = fields[s, :]
        slot_of[i] = i
        if want[i] == -2:
            pend[n_pend] = i
            n_pend += 1
    return fresh, at, n_live, n_pend
