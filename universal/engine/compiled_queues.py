"""A compiled open-loop step loop with one priority queue per link: oblivious and adaptive
routings (MIN AD, GOAL, UGAL), the age priority, unbounded buffers (SPEC §11; Singh, Dally, Gupta
& Towles, "GOAL: a load-balanced adaptive routing algorithm for torus networks", 2003, §2 and §5).

The first compiled kernel (:mod:`universal.engine.compiled_openloop`) keeps the waiting packets
in one list, oldest first, and passes over all of them in every step. Near and beyond saturation
the backlog, not the moves, then sets the cost: a saturation search's runs above Θ hold up to
``latency_limit`` steps of offered packets before they stop, and every step looked at each of
them. Here every link keeps the packets waiting for it in a binary min-heap keyed by packet id
(the age priority: the oldest first, ids follow creation order), and a step touches only the
links that have packets and, of those, the B oldest packets. A step costs the links in use and
the moves (times the logarithm of a queue's length), not the backlog.

The model and every random draw are the numpy engine's (:mod:`universal.engine.runs`), so with
the same seed a run gives the same result, field for field:

* the packets are drawn by the run's generator as the numpy engine draws them (the adaptive
  routings' tie seeds, GOAL's quadrants and UGAL's intermediates included); a step of the kernel
  draws nothing (a tie is broken by the hash of the packet's tie seed and its hop count,
  :func:`universal.engine.ties.tie_uniform`);
* a step: the packets created in it join (an oblivious one the queue of its first link, an
  adaptive one the packets still to decide); every undecided adaptive packet picks its next link
  among the allowed ones, the one with the fewest packets waiting for it (the queues' lengths at
  this point, before any of this step's choices; ties by the tie number), as
  :func:`universal.engine.adaptive.decide` does, UGAL first choosing its target; then every link
  forwards the B oldest packets of its queue; a mover either is delivered, joins the queue of
  its next link (oblivious) or decides at the start of the next step (adaptive);
* deliveries are recorded in the numpy engine's order (per step the youngest first).

What runs here: :func:`universal.engine.runs.kernel_supports` (oblivious routings, ``min-adaptive``,
``goal`` and ``ugal``, the ``age`` and ``longest-in-system`` priorities, unbounded buffers).

Without numba the module imports and its kernels are plain Python; the engine then never
dispatches here and the tests of the kernel skip.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import njit
from universal.engine.creation import CHUNK
from universal.engine.measure import DONE, WINDOW
from universal.errors import UserError

__all__ = ["run_batch", "tie_uniform_one", "ADAPTIVE_KINDS"]

#: Engine kinds (:data:`universal.engine.runs._KIND`) of the adaptive routings this kernel decides.
ADAPTIVE_KINDS = {"min-adaptive": 1, "goal": 2, "ugal": 3}
_BIG = np.int64(1) << 40


@njit(cache=True, nogil=True)
def tie_uniform_one(tie, h):
    """:func:`universal.engine.ties.tie_uniform` of one packet: the splitmix64 hash of
    ``tie + (h + 1) * golden`` as a uniform number in [0, 1)."""
    g = np.uint64(0x9E3779B97F4A7C15)
    z = tie + np.uint64(h) * g + g
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# ---------------------------------------------------------------------------- the queues
@njit(cache=True, nogil=True, inline="always")
def _push(pool_key, pool_slot, used, h_start, h_size, h_cap, link, key, slot):
    """Put ``slot`` (packet id ``key``) into ``link``'s heap; a full heap moves to a block of
    twice its size at ``used`` (the caller made room: :func:`_room`). Returns the pool's use."""
    n = h_size[link]
    if n == h_cap[link]:
        cap = max(4, 2 * n)
        old = h_start[link]
        for j in range(n):
            pool_key[used + j] = pool_key[old + j]
            pool_slot[used + j] = pool_slot[old + j]
        h_start[link] = used
        h_cap[link] = cap
        used += cap
    base = h_start[link]
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        pk = pool_key[base + parent]
        if pk <= key:
            break
        pool_key[base + i] = pk
        pool_slot[base + i] = pool_slot[base + parent]
        i = parent
    pool_key[base + i] = key
    pool_slot[base + i] = slot
    h_size[link] = n + 1
    return used


@njit(cache=True, nogil=True)
def _room(pool_key, pool_slot, used, h_start, h_size, h_cap, queued, pushes):
    """A pool with room for ``pushes`` more packets beside the ``queued`` ones: heaps that fill
    up move to blocks twice their size, at most four times the queued packets and four places
    per push in all. Repacked (and grown) when short; returns the pool and its use."""
    need = 4 * (queued + pushes) + 4 * pushes
    if used + need <= len(pool_key):
        return pool_key, pool_slot, used
    pool_key, pool_slot, used = _repack(pool_key, pool_slot, h_start, h_size, h_cap)
    if used + need > len(pool_key):
        size = max(2 * len(pool_key), used + need)
        grown_key = np.empty(size, dtype=pool_key.dtype)
        grown_key[:used] = pool_key[:used]
        grown_slot = np.empty(size, dtype=pool_slot.dtype)
        grown_slot[:used] = pool_slot[:used]
        pool_key, pool_slot = grown_key, grown_slot
    return pool_key, pool_slot, used


@njit(cache=True, nogil=True, inline="always")
def _pop(pool_key, pool_slot, h_start, h_size, link):
    """Take the oldest packet (smallest id) out of ``link``'s heap; returns its slot."""
    base = h_start[link]
    n = h_size[link] - 1
    top = pool_slot[base]
    if n > 0:
        key = pool_key[base + n]
        slot = pool_slot[base + n]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and pool_key[base + c + 1] < pool_key[base + c]:
                c += 1
            if pool_key[base + c] >= key:
                break
            pool_key[base + i] = pool_key[base + c]
            pool_slot[base + i] = pool_slot[base + c]
            i = c
        pool_key[base + i] = key
        pool_slot[base + i] = slot
    h_size[link] = n
    return top


@njit(cache=True, nogil=True)
def _repack(pool_key, pool_slot, h_start, h_size, h_cap):
    """A fresh pool holding every heap with room for as many again (blocks left behind by
    moved heaps are dropped)."""
    total = 0
    for link in range(len(h_size)):
        if h_size[link] > 0:
            total += max(4, 2 * h_size[link])
    key = np.empty(max(total, 1024), dtype=pool_key.dtype)
    slot = np.empty(max(total, 1024), dtype=pool_slot.dtype)
    used = 0
    for link in range(len(h_size)):
        n = h_size[link]
        if n == 0:
            h_cap[link] = 0
            continue
        old = h_start[link]
        for j in range(n):
            key[used + j] = pool_key[old + j]
            slot[used + j] = pool_slot[old + j]
        h_start[link] = used
        h_cap[link] = max(4, 2 * n)
        used += h_cap[link]
    return key, slot, used


# ---------------------------------------------------------------------------- adaptive choice
@njit(cache=True, nogil=True)
def _cheapest(cost, n, u):
    """Index of the cheapest of ``cost[:n]``; among ``c`` tied ones the ``floor(u * c)``-th
    (:func:`universal.engine.adaptive.choose_cost`)."""
    best = cost[0]
    for j in range(1, n):
        if cost[j] < best:
            best = cost[j]
    count = 0
    for j in range(n):
        if cost[j] == best:
            count += 1
    pick = min(np.int64(u * count), count - 1)
    for j in range(n):
        if cost[j] == best:
            if pick == 0:
                return j
            pick -= 1
    return n - 1


@njit(cache=True, nogil=True)
def _smallest(productive, node, target, base, h_size):
    """The fewest packets waiting for a link from ``node`` toward ``target`` (BIG if none)."""
    best = np.int64(1) << 40
    for j in range(productive.shape[2]):
        c = productive[node, target, j]
        if c >= 0 and h_size[base + c] < best:
            best = h_size[base + c]
    return best


@njit(cache=True, nogil=True)
def _decide(slot, kind, L, productive, distance, dir_link, threshold, h_size, s_run, s_node, s_target,
            s_dst, s_via, s_tie, s_hops, s_rem, s_sign, cost, cand):
    """The next link (global id) of the adaptive packet in ``slot``, from the queues' lengths
    ``h_size`` (:func:`universal.engine.adaptive.decide`); UGAL's first decision sets its target."""
    r = s_run[slot]
    base = r * L
    node = s_node[slot]
    if kind == 3 and s_via[slot] >= 0:          # UGAL at creation: the intermediate or not
        via, dst = s_via[slot], s_dst[slot]
        h_min = np.int64(distance[node, dst])
        h_val = np.int64(distance[node, via]) + np.int64(distance[via, dst])
        q_min = _smallest(productive, node, dst, base, h_size)
        q_val = _smallest(productive, node, via, base, h_size)
        s_target[slot] = via if q_min * h_min > q_val * h_val + threshold[r] else dst
        s_via[slot] = -1
    n = 0
    if kind == 2:                               # GOAL: the productive dimensions, in order
        for d in range(s_rem.shape[1]):
            if s_rem[slot, d] > 0:
                link = dir_link[node, d, 1 if s_sign[slot, d] < 0 else 0]
                cand[n] = link
                cost[n] = h_size[base + link]
                n += 1
    else:                                       # MIN AD, UGAL: the productive links, by id
        target = s_target[slot]
        for j in range(productive.shape[2]):
            link = productive[node, target, j]
            if link >= 0:
                cand[n] = link
                cost[n] = h_size[base + link]
                n += 1
    j = _cheapest(cost, n, tie_uniform_one(s_tie[slot], s_hops[slot]))
    return base + cand[j]


# ---------------------------------------------------------------------------- the kernel
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
                        records[0, n_rec], records[1, n_rec], records[2, n_rec] = r, pid, t
                        n_rec += 1
                    elif label_run[r]:
                        accepted[r * nodes + c_src[j]] += 1
                        records[0, n_rec], records[1, n_rec], records[2, n_rec] = r, 0, 0
                        records[3, n_rec], records[4, n_rec] = c_src[j], c_dst[j]
                        n_rec += 1
                else:
                    order[n_travel], order_pid[n_travel], order_run[n_travel] = j, pid, r
                    n_travel += 1
                j += 1
            ptr[r] = j
        bounds[s + 1] = n_travel
    return order, order_pid, order_run, bounds, created, next_pid, n_rec


@njit(cache=True, nogil=True)
def _compact_store(s_run, s_cur, s_end, store, extra):
    """The remaining route links of the waiting packets copied to a fresh store with ``extra``
    free places after them; returns it and the length used."""
    total = 0
    for s in range(len(s_run)):
        if s_run[s] >= 0:
            total += s_end[s] - s_cur[s]
    fresh = np.empty(total + extra, dtype=store.dtype)
    at = 0
    for s in range(len(s_run)):
        if s_run[s] >= 0:
            c, e = s_cur[s], s_end[s]
            s_cur[s] = at
            for j in range(c, e):
                fresh[at] = store[j]
                at += 1
            s_end[s] = at
    return fresh, at


@njit(cache=True, nogil=True)
def _chunk(t0, nsteps, full, bandwidth, L, nodes, fixed, kinds, productive, distance, dir_link, link_head,
           link_dim, threshold,
           free, n_free, s_pid, s_run, s_src, s_dst, s_created, s_hops, s_label, s_cur, s_end,
           s_node, s_target, s_tie, s_via, s_rem, s_sign, store,
           pool_key, pool_slot, pool_used, h_start, h_size, h_cap, act, n_act, in_act, pend, n_pend,
           c_step, c_src, c_dst, c_off, c_links, c_tie, c_via, c_rem, c_sign, run_first, label_run, in_window,
           next_pid, backlog, outstanding, labelled, accepted, history, records, n_rec):
    """Create the packets of one chunk and run ``nsteps`` steps from ``t0`` (see the module
    docstring). The slots ``s_*`` hold the waiting packets (``s_run`` -1: free; ``free[:n_free]``
    lists the free ones, at least as many as the chunk's packets); ``c_*`` the chunk's packets
    run after run, ``c_links[c_off[j]:c_off[j + 1]]`` packet j's route (run-local links, empty
    for an adaptive one). Link ``run * L + link`` has the heap ``h_*`` in the pool, and is in
    ``act[:n_act]`` (``in_act``) while it may have packets; ``pend[:n_pend]`` are the adaptive
    packets that decide at the start of the next step. Records as
    :func:`universal.engine.compiled_openloop._chunk`.

    Returns the state that may have been reallocated or advanced, and the link-hops.
    """
    runs = len(run_first) - 1
    store, used = _compact_store(s_run, s_cur, s_end, store, len(c_links))
    store[used:used + len(c_links)] = c_links
    order, order_pid, order_run, bounds, created, next_pid, n_rec = _number(
        t0, full, runs, c_step, c_src, c_dst, c_off, run_first, label_run, labelled, accepted, nodes, fixed,
        next_pid, records, n_rec)
    dims = s_rem.shape[1]
    width = max(productive.shape[2], dims)
    queued = 0                  # packets in the heaps
    for link in range(len(h_size)):
        queued += h_size[link]
    cost = np.empty(width, dtype=np.int64)
    cand = np.empty(width, dtype=np.int64)
    choice = np.empty(len(s_run), dtype=np.int64)
    mv_slot = np.empty(len(s_run), dtype=np.int64)
    mv_link = np.empty(len(s_run), dtype=np.int64)
    delivered = np.empty(len(s_run), dtype=np.int64)
    hops = 0
    for s in range(nsteps):
        t = t0 + s
        # the packets created in step t join: an oblivious one its first link's queue, an
        # adaptive one the packets that decide now
        pool_key, pool_slot, pool_used = _room(pool_key, pool_slot, pool_used, h_start, h_size, h_cap, queued,
                                               bounds[s + 1] - bounds[s])
        for k in range(bounds[s], bounds[s + 1]):
            j, r = order[k], order_run[k]
            n_free -= 1
            slot = free[n_free]
            s_pid[slot], s_run[slot], s_src[slot], s_dst[slot] = order_pid[k], r, c_src[j], c_dst[j]
            s_created[slot] = t
            s_label[slot] = label_run[r]
            backlog[r] += 1
            if not fixed and label_run[r]:
                outstanding[r] += 1
            if kinds[r] == 0:
                s_hops[slot] = c_off[j + 1] - c_off[j]
                s_cur[slot] = used + c_off[j]
                s_end[slot] = used + c_off[j + 1]
                link = r * L + c_links[c_off[j]]
                pool_used = _push(pool_key, pool_slot, pool_used, h_start, h_size, h_cap, link, order_pid[k], slot)
                queued += 1
                if not in_act[link]:
                    in_act[link] = True
                    act[n_act] = link
                    n_act += 1
            else:
                s_hops[slot] = 0
                s_cur[slot] = s_end[slot] = 0
                s_node[slot], s_target[slot], s_tie[slot] = c_src[j], c_dst[j], c_tie[j]
                via = c_via[j]
                s_via[slot] = -1 if via == c_src[j] or via == c_dst[j] else via
                for d in range(dims):
                    s_rem[slot, d], s_sign[slot, d] = c_rem[j, d], c_sign[j, d]
                pend[n_pend] = slot
                n_pend += 1
        # the adaptive decisions, all from the queues as they are now, then joined
        for i in range(n_pend):
            slot = pend[i]
            choice[i] = _decide(slot, kinds[s_run[slot]], L, productive, distance, dir_link, threshold, h_size,
                                s_run, s_node, s_target, s_dst, s_via, s_tie, s_hops, s_rem, s_sign, cost, cand)
        pool_key, pool_slot, pool_used = _room(pool_key, pool_slot, pool_used, h_start, h_size, h_cap, queued, n_pend)
        queued += n_pend
        for i in range(n_pend):
            slot, link = pend[i], choice[i]
            pool_used = _push(pool_key, pool_slot, pool_used, h_start, h_size, h_cap, link, s_pid[slot], slot)
            if not in_act[link]:
                in_act[link] = True
                act[n_act] = link
                n_act += 1
        n_pend = 0
        # contention: every link with packets forwards its B oldest; movers join their next
        # queues only after every link has chosen
        n_mv = 0
        kept = 0
        for i in range(n_act):
            link = act[i]
            n = h_size[link]
            for _ in range(min(n, bandwidth)):
                mv_slot[n_mv] = _pop(pool_key, pool_slot, h_start, h_size, link)
                mv_link[n_mv] = link
                n_mv += 1
            if h_size[link] > 0:
                act[kept] = link
                kept += 1
            else:
                in_act[link] = False
        n_act = kept
        hops += n_mv
        queued -= n_mv
        pool_key, pool_slot, pool_used = _room(pool_key, pool_slot, pool_used, h_start, h_size, h_cap, queued, n_mv)
        n_del = 0
        for i in range(n_mv):
            slot = mv_slot[i]
            r = s_run[slot]
            if kinds[r] == 0:
                c = s_cur[slot] + 1
                if c == s_end[slot]:
                    delivered[n_del] = s_pid[slot] << 24 | i
                    n_del += 1
                    continue
                s_cur[slot] = c
                link = r * L + store[c]
                queued += 1
                pool_used = _push(pool_key, pool_slot, pool_used, h_start, h_size, h_cap, link, s_pid[slot], slot)
                if not in_act[link]:
                    in_act[link] = True
                    act[n_act] = link
                    n_act += 1
            else:
                local = mv_link[i] - r * L
                node = link_head[local]
                s_node[slot] = node
                s_hops[slot] += 1
                if kinds[r] == 2:
                    s_rem[slot, link_dim[local]] -= 1
                dst = s_dst[slot]
                if node == s_target[slot] and s_target[slot] != dst:
                    s_target[slot] = dst
                if node == dst and s_target[slot] == dst:
                    delivered[n_del] = s_pid[slot] << 24 | i
                    n_del += 1
                    continue
                pend[n_pend] = slot
                n_pend += 1
        # deliveries youngest first, as the numpy engine lists them
        if n_del > 1:
            delivered[:n_del] = np.sort(delivered[:n_del])
        for i in range(n_del - 1, -1, -1):
            slot = mv_slot[delivered[i] & 0xFFFFFF]
            r = s_run[slot]
            backlog[r] -= 1
            s_run[slot] = -1
            free[n_free] = slot
            n_free += 1
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
            row = t % history.shape[0]
            for r in range(runs):
                history[row, r] = backlog[r]
    return (n_free, store, pool_key, pool_slot, pool_used, n_act, n_pend, created, next_pid, n_rec, hops)


@njit(cache=True, nogil=True)
def _drop(ended, L, h_start, h_size, pool_slot, s_run, free, n_free, pend, n_pend):
    """Forget the waiting packets of the runs that ended (``ended[r]``); returns the free slots'
    and the undecided packets' counts."""
    for r in range(len(ended)):
        if not ended[r]:
            continue
        for link in range(r * L, (r + 1) * L):
            base = h_start[link]
            for j in range(h_size[link]):
                slot = pool_slot[base + j]
                s_run[slot] = -1
                free[n_free] = slot
                n_free += 1
            h_size[link] = 0
    kept = 0
    for i in range(n_pend):
        slot = pend[i]
        if ended[s_run[slot]]:
            s_run[slot] = -1
            free[n_free] = slot
            n_free += 1
        else:
            pend[kept] = slot
            kept += 1
    return n_free, kept


# ---------------------------------------------------------------------------- the driver
class _Slots:
    """The waiting packets' fields by slot, the free slots, the undecided adaptive packets."""

    INT = ("pid", "run", "src", "dst", "created", "hops", "cur", "end", "node", "target", "via")

    def __init__(self, dims: int, cap: int = 4096) -> None:
        self.dims = dims
        self.f = {name: np.zeros(cap, dtype=np.int64) for name in self.INT}
        self.f["run"][:] = -1
        self.f["label"] = np.zeros(cap, dtype=np.bool_)
        self.f["tie"] = np.zeros(cap, dtype=np.uint64)
        self.f["rem"] = np.zeros((cap, dims), dtype=np.int64)
        self.f["sign"] = np.zeros((cap, dims), dtype=np.int64)
        self.free = np.arange(cap - 1, -1, -1, dtype=np.int64)      # slot 0 handed out first
        self.n_free = cap
        self.pend = np.empty(cap, dtype=np.int64)
        self.n_pend = 0

    @property
    def cap(self) -> int:
        return len(self.f["run"])

    def reserve(self, more: int) -> None:
        """At least ``more`` free slots."""
        if self.n_free >= more:
            return
        old = self.cap
        cap = max(2 * old, old - self.n_free + more)
        for name, arr in self.f.items():
            grown = np.zeros((cap, *arr.shape[1:]), dtype=arr.dtype)
            grown[:old] = arr
            if name == "run":
                grown[old:] = -1
            self.f[name] = grown
        free = np.empty(cap, dtype=np.int64)
        free[:self.n_free] = self.free[:self.n_free]
        free[self.n_free:self.n_free + cap - old] = np.arange(cap - 1, old - 1, -1)
        self.free, self.n_free = free, self.n_free + cap - old
        pend = np.empty(cap, dtype=np.int64)
        pend[:self.n_pend] = self.pend[:self.n_pend]
        self.pend = pend


class _Queues:
    """The links' heaps in one pool, and the links that may have packets."""

    def __init__(self, links: int) -> None:
        self.key = np.empty(1 << 16, dtype=np.int64)
        self.slot = np.empty(1 << 16, dtype=np.int64)
        self.used = 0
        self.start = np.zeros(links, dtype=np.int64)
        self.size = np.zeros(links, dtype=np.int64)
        self.cap = np.zeros(links, dtype=np.int64)
        self.act = np.empty(links, dtype=np.int64)
        self.n_act = 0
        self.in_act = np.zeros(links, dtype=np.bool_)

    def tidy(self) -> None:
        """Repack the pool when moved heaps left more than half of it behind."""
        if self.used > 4 * int(self.size.sum()) + (1 << 16):
            self.key, self.slot, self.used = _repack(self.key, self.slot, self.start, self.size, self.cap)


def _tables(batch) -> tuple:
    """The adaptive routings' tables (dummies where the batch has none of the kind)."""
    from universal.engine.adaptive import _tables as adaptive_tables

    one = np.zeros((1, 1, 1), dtype=np.int64)
    if not batch.adaptive:
        return one - 1, np.zeros((1, 1), np.int32), one, np.zeros(1, np.int64), np.zeros(1, np.int64), \
            np.zeros(batch.R)
    tabs = adaptive_tables(batch)
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
        ties.append(c.tie if c.tie is not None else np.zeros(n, np.uint64))
        vias.append(route.via if route.via is not None else np.full(n, -1, np.int64))
        rems.append(route.remaining if route.remaining is not None else np.zeros((n, dims), np.int64))
        signs.append(route.signs if route.signs is not None else np.zeros((n, dims), np.int64))
    off = np.concatenate(offs + [np.array([base])]).astype(np.int64, copy=False)
    links = np.concatenate(links) if links else np.zeros(0, np.int32)
    return (step, src, dst, off, links, np.concatenate(ties), np.concatenate(vias).astype(np.int64, copy=False),
            np.ascontiguousarray(np.concatenate(rems), dtype=np.int64).reshape(-1, dims),
            np.ascontiguousarray(np.concatenate(signs), dtype=np.int64).reshape(-1, dims), run_first)


def run_batch(batch, max_waiting: int) -> list:
    """Run the open-loop batch ``batch`` (a fresh :class:`universal.engine.runs._Batch` that
    :func:`universal.engine.runs.kernel_supports`) to its end on this kernel.

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
    from universal.engine import compiled_openloop as olk

    R, L, N = batch.R, batch.L, batch.N
    if R * L >= 2**31 - 1:
        raise UserError(f"a batch of {R} runs on {L:,} links is too large for the compiled kernel")
    fixed = batch.m.steps
    dims = max(batch.dims, 1)
    slots, queues = _Slots(dims), _Queues(R * L)
    kinds = np.asarray(batch.kinds, dtype=np.int64)
    productive, distance, dir_link, head, link_dim, threshold = _tables(batch)
    records = np.empty((5, olk._expected_records(batch)), dtype=np.int64)
    n_rec = 0
    store = np.empty(0, dtype=np.int32)
    accepted = batch.accepted.reshape(-1)
    no_labels = np.zeros(R, dtype=np.bool_)
    t = 0
    while (batch.phase != DONE).any():
        parts = [(r, (olk.draw_chunk_fast if olk.FAST_DRAW else olk.draw_chunk)(spec, batch.inj_state[r], t,
                                                                               batch.rngs[r]))
                 for r, spec in enumerate(batch.specs) if batch.phase[r] != DONE]
        step, src, dst, off, links, tie, via, rem, sign, run_first = _gather(parts, R, dims)
        steps = CHUNK if fixed is None else min(CHUNK, fixed - t)
        slots.reserve(len(step))
        live = slots.cap - slots.n_free
        if n_rec + live + len(step) > records.shape[1]:
            grown = np.empty((5, max(2 * records.shape[1], n_rec + live + len(step))), dtype=np.int64)
            grown[:, :n_rec] = records[:, :n_rec]
            records = grown
        label_run = no_labels if fixed is not None else batch.phase == WINDOW
        f, q = slots.f, queues
        (slots.n_free, store, q.key, q.slot, q.used, q.n_act, slots.n_pend, created, batch.next_pid, n_rec,
         hops) = _chunk(
            t, steps, CHUNK, batch.B, L, N, fixed is not None, kinds, productive, distance, dir_link, head,
            link_dim, threshold,
            slots.free, slots.n_free, f["pid"], f["run"], f["src"], f["dst"], f["created"], f["hops"], f["label"],
            f["cur"], f["end"], f["node"], f["target"], f["tie"], f["via"], f["rem"], f["sign"], store,
            q.key, q.slot, q.used, q.start, q.size, q.cap, q.act, q.n_act, q.in_act, slots.pend, slots.n_pend,
            step, src, dst, off, links, tie, via, rem, sign, run_first, label_run, np.ascontiguousarray(batch.in_window),
            batch.next_pid, batch.backlog, batch.outstanding, batch.labelled, accepted, batch.history, records, n_rec)
        olk.WARM = True
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
                slots.n_free, slots.n_pend = _drop(ended, L, q.start, q.size, q.slot, f["run"], slots.free,
                                                   slots.n_free, slots.pend, slots.n_pend)
        queues.tidy()
        if slots.cap - slots.n_free > max_waiting:
            raise UserError(f"more than {max_waiting:,} packets wait at once in this batch; offer less load "
                            "or batch fewer runs")
    recorded = tuple(np.ascontiguousarray(c) for c in records[:3 if fixed is not None else 5, :n_rec])
    if fixed is not None:
        batch.all_records.append(recorded)
    elif n_rec:
        batch.records.append(recorded)
    batch._flush_accepted()
    return batch._results(t)
