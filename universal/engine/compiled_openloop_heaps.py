"""The compiled open-loop step loop with a queue per link, for batches with far more waiting
packets than links (runs beyond saturation; SPEC §11).

:func:`universal.engine.compiled_openloop._steps_list` looks at every waiting packet in every
step. Beyond saturation the packets pile up (a saturation search lets a run's backlog reach
hundreds of steps' worth of offered packets before it stops it), and a step then costs a pass
over millions of packets to move one per link. Here every link keeps the packets waiting for it
in a pairing heap ordered by packet id (Fredman, Sedgewick, Sleator & Tarjan, "The pairing heap:
a new form of self-adjusting heap", 1986): a step takes the B oldest packets of every link with
packets, then moves them on (a packet joins its next link's heap only after every link has
chosen, so it crosses one link per step), and costs time proportional to the busy links and
the moves, not to the waiting packets. The age priority decides the same crossings as the list
(the oldest B packets of every link); the deliveries of a step are recorded youngest first, as
the numpy engine lists them.

The heaps live in per-slot arrays (``child``, ``sib``: a heap node's first child and next
sibling) and per-link roots; the slots stay where they are while a packet waits (freed slots go
on a stack), and the links with packets are kept in a list.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import njit

__all__ = ["record_step", "to_heaps", "steps_heaps"]


@njit(cache=True, nogil=True)
def record_step(t, s, delivered, fixed, nodes, s_run, s_pid, s_src, s_dst, s_created, s_hops, s_label, backlog,
            outstanding, accepted, in_window, history, records, n_rec):
    """The end of step ``t`` (the chunk's step ``s``): the ``delivered`` packets (slots, in the
    order to record them) leave the backlog and are recorded; the backlog joins the history."""
    for i in range(len(delivered)):
        slot = delivered[i]
        r = s_run[slot]
        backlog[r] -= 1
        if fixed:
            records[0, n_rec], records[1, n_rec], records[2, n_rec] = r, s_pid[slot], t
            n_rec += 1
            continue
        if in_window[r]:
            accepted[r * nodes + s_src[slot]] += 1
        if s_label[slot]:
            outstanding[r] -= 1
            records[0, n_rec], records[1, n_rec] = r, t - s_created[slot] + 1
            records[2, n_rec], records[3, n_rec], records[4, n_rec] = s_hops[slot], s_src[slot], s_dst[slot]
            n_rec += 1
    if not fixed:
        for r in range(len(backlog)):
            history[s, r] = backlog[r]
    return n_rec


@njit(cache=True, nogil=True)
def _meld(a, b, s_pid, child, sib):
    """One heap of the heaps rooted at ``a`` and ``b`` (roots: no siblings); its root."""
    if s_pid[b] < s_pid[a]:
        a, b = b, a
    sib[b] = child[a]
    child[a] = b
    return a


@njit(cache=True, nogil=True)
def _push(link, slot, root, child, sib, s_pid, active, n_active, is_active):
    """``slot`` joins the heap of ``link``; returns the number of links with packets."""
    child[slot] = -1
    sib[slot] = -1
    if root[link] < 0:
        root[link] = slot
        if not is_active[link]:
            is_active[link] = True
            active[n_active] = link
            n_active += 1
    else:
        root[link] = _meld(root[link], slot, s_pid, child, sib)
    return n_active


@njit(cache=True, nogil=True)
def _pop(link, root, child, sib, s_pid, scratch):
    """Remove and return the oldest packet of ``link``'s heap (the two-pass pairing)."""
    top = root[link]
    c = child[top]
    n = 0
    while c >= 0:                   # first pass: meld the children in pairs, left to right
        a = c
        b = sib[a]
        if b < 0:
            sib[a] = -1
            scratch[n] = a
            n += 1
            break
        c = sib[b]
        sib[a] = -1
        sib[b] = -1
        scratch[n] = _meld(a, b, s_pid, child, sib)
        n += 1
    if n == 0:
        root[link] = -1
    else:                           # second pass: meld the pairs into one, right to left
        r = scratch[n - 1]
        for k in range(n - 2, -1, -1):
            r = _meld(scratch[k], r, s_pid, child, sib)
        root[link] = r
    return top


@njit(cache=True, nogil=True)
def to_heaps(want, slot_of, n_live, s_pid, root, child, sib, active, is_active, alive):
    """Put the waiting packets of a list (``want``/``slot_of``, -1 in ``want`` a hole) into the
    heaps of their links; returns the number of links with packets."""
    n_active = 0
    for i in range(n_live):
        if want[i] >= 0:
            alive[slot_of[i]] = True
            n_active = _push(want[i], slot_of[i], root, child, sib, s_pid, active, n_active, is_active)
    return n_active


@njit(cache=True, nogil=True)
def _compact_store(alive, s_cur, s_end, store, extra):
    """Copy the remaining route links of the waiting packets to a fresh store with ``extra``
    free places after them; returns it and the length used."""
    total = 0
    for s in range(len(alive)):
        if alive[s]:
            total += s_end[s] - s_cur[s]
    fresh = np.empty(total + extra, dtype=store.dtype)
    at = 0
    for s in range(len(alive)):
        if alive[s]:
            c, e = s_cur[s], s_end[s]
            s_cur[s] = at
            for j in range(c, e):
                fresh[at] = store[j]
                at += 1
            s_end[s] = at
    return fresh, at


@njit(cache=True, nogil=True)
def steps_heaps(t0, nsteps, bandwidth, links_per_run, nodes, fixed, root, child, sib, active, n_active,
                is_active, free, n_free, alive, s_cur, s_end, s_pid, s_run, s_src, s_dst, s_created, s_hops,
                s_label, store, c_src, c_dst, c_off, c_links, label_run, in_window, order, order_pid, order_run,
                bounds, backlog, outstanding, accepted, history, records, n_rec):
    """:func:`universal.engine.compiled_openloop._steps_list` with a heap per link: the packets
    created in each step join the heaps of their first links, every link lets its B oldest
    across, and the movers join their next links' heaps. ``free[:n_free]`` are the free slots
    (there must be one for every packet of the chunk); the deliveries are recorded by
    :func:`record_step`, youngest first.

    Returns ``(n_active, n_free, store, n_rec, hops)``.
    """
    store, used = _compact_store(alive, s_cur, s_end, store, len(c_links))
    store[used:used + len(c_links)] = c_links
    scratch = np.empty(len(alive), dtype=np.int64)
    movers = np.empty(len(alive), dtype=np.int64)
    hops = 0
    for s in range(nsteps):
        t = t0 + s
        for k in range(bounds[s], bounds[s + 1]):
            j, r = order[k], order_run[k]
            n_free -= 1
            slot = free[n_free]
            alive[slot] = True
            s_pid[slot], s_run[slot], s_src[slot], s_dst[slot] = order_pid[k], r, c_src[j], c_dst[j]
            s_created[slot] = t
            s_hops[slot] = c_off[j + 1] - c_off[j]
            s_label[slot] = label_run[r]
            s_cur[slot] = used + c_off[j]
            s_end[slot] = used + c_off[j + 1]
            n_active = _push(r * links_per_run + c_links[c_off[j]], slot, root, child, sib, s_pid, active,
                             n_active, is_active)
            backlog[r] += 1
            if not fixed and label_run[r]:
                outstanding[r] += 1
        # every link with packets lets its B oldest across; an emptied link leaves the list
        n_mv = 0
        i = 0
        while i < n_active:
            link = active[i]
            for _ in range(bandwidth):
                if root[link] < 0:
                    break
                movers[n_mv] = _pop(link, root, child, sib, s_pid, scratch)
                n_mv += 1
            if root[link] < 0:
                is_active[link] = False
                n_active -= 1
                active[i] = active[n_active]
            else:
                i += 1
        hops += n_mv
        # the movers go on (after every link chose: one link per step); deliveries by id
        n_del = 0
        for k in range(n_mv):
            slot = movers[k]
            c = s_cur[slot] + 1
            if c == s_end[slot]:
                scratch[n_del] = slot
                n_del += 1
                alive[slot] = False
                free[n_free] = slot
                n_free += 1
            else:
                s_cur[slot] = c
                n_active = _push(s_run[slot] * links_per_run + store[c], slot, root, child, sib, s_pid, active,
                                 n_active, is_active)
        delivered = scratch[:n_del]
        delivered = delivered[np.argsort(s_pid[delivered])[::-1]]
        n_rec = record_step(t, s, delivered, fixed, nodes, s_run, s_pid, s_src, s_dst, s_created, s_hops, s_label,
                            backlog, outstanding, accepted, in_window, history, records, n_rec)
    return n_active, n_free, store, n_rec, hops
