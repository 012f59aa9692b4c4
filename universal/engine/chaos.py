"""CHAOS in the one engine: minimal adaptive routing with no virtual channels, a shared queue per
node, and deflection from that queue when it is full (SPEC §13).

CHAOS is Konstantinidou & Snyder's router ("The Chaos router", IEEE Transactions on Computers,
1994), the adaptive rival of Singh, Dally, Gupta & Towles ("GOAL: a load-balanced adaptive
routing algorithm for torus networks", ISCA 2003, §4-§5), who give it the same buffer budget as
the routings with virtual channels by enlarging its shared queue. The original is an
asynchronous virtual-cut-through router; this module defines it in the engine's synchronous
steps. The rules, and which of them are ours:

Buffers. Every link has one input buffer of ``b`` packets at its head (``--buffer b``, one
VC); every node has one *shared queue* of ``S`` places (``chaos:queue=S``; by default the
paper's budget: with ``--vcs V`` each input link would hold ``V`` VCs of ``b``, CHAOS keeps one
as its input buffer and the queue gets the other ``(V - 1) b`` of every input link, so
``S = (V - 1) b`` times the node's in-degree: 160 on the 8-ary 2-cube with ``--buffer 8 --vcs
6``); and the source queue, unbounded, as for every routing. A packet sits in exactly one of
them.

A step ``t``, everything read from the state at its start (after the step's new packets have
joined their source queues):

1. *Choice.* A packet keeps the link it chose while that link is productive (one hop closer
   to the destination) and its input buffer has room (or the hop delivers it). Otherwise it
   chooses among its productive links, in increasing link id: one whose buffer has room before
   one without, then the fewest other packets waiting for it (MIN AD's shortest queue), ties
   by its tie number of the decision (the hash of its tie seed and its hop count,
   :func:`universal.engine.routes.tie_uniform`). *Deflection:* a packet in a full shared
   queue whose productive links all lack room takes a non-productive link whose buffer has
   room, uniformly among them by the same tie number (none: it waits for its productive
   choice). A deflection is chosen afresh in every step; the hop count grows with every hop,
   so every decision after a move draws a fresh number: misrouting is random, and a packet is
   livelock-free with probability one, as the original is (not deterministically).
2. *Injection gate (ours, the paper's "resources left after serving the input channels and
   the shared queue").* A node's source packets may leave only if its shared queue has room
   for every packet in its input buffers and one more: ``queue + inputs < S``.
3. *Contention.* Every link forwards up to B of the packets that chose it, by class first -
   the shared queue, then the input buffers, then the source queue (which is what starves
   injection beyond saturation: GOAL §5.5, Figure 13) - then by the run's priority (age by
   default); a packet entering an input buffer needs room counted at the start of the step,
   one crossing its last link none.
4. *Into the queue.* A packet that sat in an input buffer at the start of the step and did not
   cross moves into its node's shared queue, while the queue had room at the start of the
   step, highest priority first (the original moves a blocked packet out of its input frame
   into the multiqueue).

Deadlock freedom, by construction. Suppose a step moves nothing. A packet that may leave
(not held by the gate; a held one's node has queue or input packets, take those) wants a link
without room, so the node at its head holds input packets that neither cross nor enter their
queue: that queue is full. A packet in a full queue, moving nowhere, found no productive link
with room and no other link with room to be deflected on, so every out-link of that node leads
into a full input buffer, whose node again has a full queue. On a strongly connected network
every buffer and every queue is then full. That never happens: the packets in the buffers and
queues grow only by injection, and a node injects only while its queue can take all its input
packets and one more, so a step with an injection leaves a place free in the injecting node's
queue. (The original avoids deadlock by exchanging packets between neighbours, which this
model does not need.) With the engine's synchronous steps and credits counted at the start of
a step, the numbers differ in detail from the asynchronous router's.

Tornado, and why CHAOS stays minimal on it. Every node has one loaded input (from -x) and one
loaded output (+x). Source packets take a link only when no through packet wants it, so the
through packets reaching a node never outnumber what its +x link carries (one a step, with
b >= 2): no input packet is left behind, no shared queue ever holds a packet, and nothing is
deflected (only a full queue deflects, in the original too). The accepted rate is the minimal
bound, 1/3 of capacity at k = 8, where Singh et al. measure CHAOS at 0.35 (the test
``test_tornado_beyond_saturation_stays_at_the_minimal_bound``). ``benchmarks/chaos_tornado.py``
also runs the variants we tried: source packets joining the queue change nothing while the gate
keeps its free place, and make CHAOS deroute, and deadlock at high load, once they may take the
last place.

The fast engine keeps a node's shared queue as one more buffer slot, ``links_span + run * N +
node``, beside the link buffers; :mod:`universal.engine.reference_chaos` is the plain version.
"""

from __future__ import annotations

import numpy as np

from universal.engine.adaptive import choose_cost, _tables
from universal.engine.contention import ONE
from universal.errors import UserError

__all__ = ["KIND", "queue_sizes", "setup", "decide", "gate", "class_rank", "into_queue"]

#: The engine's kind number of CHAOS.
KIND = 5
_BIG = np.int64(1) << 40
_ROOMLESS = np.int64(1) << 34


def queue_sizes(router, buffer: int | None, vcs: int) -> np.ndarray:
    """Shared-queue places of every node for a CHAOS run (see the module docstring).

    Parameters
    ----------
    router : universal.engine.routes.Router
        A ``chaos`` router (``extra["queue"]``: S, or None for the budget).
    buffer : int or None
        b, the input buffer of every link (required).
    vcs : int
        V, the VC budget per input link that the queue takes the rest of when S is not given.

    Returns
    -------
    ndarray of int64, one per node

    Raises
    ------
    UserError
        Unbounded buffers, or no shared queue (V = 1 and no ``queue=S``).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> net = build_network("torus:k=8,n=2")
    >>> int(queue_sizes(build_router("chaos", net), 8, 6)[0])      # 4 input links x 5 x 8
    160
    >>> int(queue_sizes(build_router("chaos:queue=2", net), 1, 1)[0])
    2
    """
    net = router.network
    if buffer is None:
        raise UserError("chaos needs bounded input buffers: give --buffer b (the GOAL paper's VCs are 8 deep)")
    given = router.extra.get("queue")
    if given is not None:
        return np.full(net.num_nodes, given, dtype=np.int64)
    if vcs < 2:
        raise UserError("chaos needs a shared queue: give chaos:queue=S (places per node), or --vcs V >= 2 to "
                        "give it the buffer budget of V VCs of b per input link (it keeps one as its input "
                        "buffer, the queue gets the rest)")
    indegree = np.bincount(net.link_head, minlength=net.num_nodes).astype(np.int64)
    return (vcs - 1) * buffer * indegree


def setup(batch, vcs: int) -> None:
    """Give a batch of CHAOS runs its shared queues: places per (run, node), one occupancy slot
    each after the link buffers, and the tables the steps read."""
    N, L, R = batch.N, batch.L, batch.R
    batch.queue_cap = np.concatenate([queue_sizes(s.router, batch.buffer, vcs) for s in batch.specs])
    batch.queue_base = batch.links_span
    batch.occupancy = np.zeros(batch.links_span + R * N, dtype=np.int32)
    head = batch.net.link_head.astype(np.int64)
    batch.link_node = (np.arange(R * L) // L) * N + head[np.arange(R * L) % L]     # run * N + head
    tail = batch.net.link_tail.astype(np.int64)
    deg = np.bincount(tail, minlength=N)
    out = np.full((N, int(deg.max())), -1, dtype=np.int64)
    order = np.lexsort((np.arange(L), tail))
    first = np.searchsorted(tail[order], tail[order])
    out[tail[order], np.arange(L) - first] = order                                  # increasing link id
    batch.out_links = out
    batch.queue_start = np.zeros(R * N, dtype=np.int64)
    batch.chaos_gate = np.zeros(0, dtype=bool)


def _where(batch, prev: np.ndarray) -> np.ndarray:
    """0 source queue, 1 input buffer, 2 shared queue: a packet's class (higher goes first)."""
    return np.where(prev == batch.inject_slot, 0, np.where(prev >= batch.queue_base, 2, 1))


def class_rank(batch, h: int) -> np.ndarray:
    """The contention class of every packet from ``head`` on (2 shared queue, 1 input buffer, 0
    source queue; the higher wins, before the run's priority)."""
    return _where(batch, batch.a["prev"][h:])


def decide(batch, t: int) -> None:
    """Step 1 and 2 of the module docstring: every packet's link, and which source packets may leave."""
    batch.pending_decide = np.empty(0, dtype=np.int64)
    h, a, N, L = batch.head, batch.a, batch.N, batch.L
    occ, b = batch.occupancy, batch.buffer
    q = batch.waiting
    tabs = _tables(batch)
    head, dist, prod = tabs["head"], tabs["distance"], tabs["productive"]
    # the shared queues and the input packets of every node at the start of the step
    batch.queue_start = occ[batch.queue_base:batch.queue_base + batch.R * N].astype(np.int64)
    inputs = np.bincount(batch.link_node, weights=occ[:batch.R * L], minlength=batch.R * N).astype(np.int64)
    open_ = batch.queue_start + inputs < batch.queue_cap
    live = np.flatnonzero(a["want"][h:] < batch.trash) + h     # not behind a FIFO source queue's front
    batch.chaos_gate = np.zeros(batch.cap - h, dtype=bool)
    if not len(live):
        return
    run, node, dst, prev = a["run"][live], a["node"][live], a["dst"][live], a["prev"][live]
    at = run * N + node
    where = _where(batch, prev)
    batch.chaos_gate[live - h] = (where == 0) & ~open_[at]
    old = a["want"][live]
    here = dist[node, dst]
    local_old = np.clip(old - run * L, 0, L - 1)
    final_old = head[local_old] == dst
    keep = (old >= 0) & (dist[head[local_old], dst] == here - 1) & (final_old | (occ[np.maximum(old, 0)] < b))
    sel = np.flatnonzero(~keep)
    if not len(sel):
        return
    g, run, node, dst, old = live[sel], run[sel], node[sel], dst[sel], old[sel]
    base = run * L
    cand = prod[node, dst]
    ok = cand >= 0
    local = np.maximum(cand, 0)
    slots = local + base[:, None]
    room = (head[local] == dst[:, None]) | (occ[slots] < b)
    cost = np.where(ok, np.where(room, 0, _ROOMLESS) + q[slots] - (slots == old[:, None]), _BIG)
    tie, hops = a["tie"][g], a["hops"][g]
    pick = choose_cost(cost, tie, hops)
    r = np.arange(len(sel))
    want = slots[r, pick]
    # deflection: a packet in a full shared queue whose productive links all lack room
    full = batch.queue_start[at[sel]] >= batch.queue_cap[at[sel]]
    stuck = np.flatnonzero(~room[r, pick] & (where[sel] == 2) & full)
    if len(stuck):
        out = batch.out_links[node[stuck]]
        o = np.maximum(out, 0)
        oslots = o + base[stuck, None]
        free = (out >= 0) & (dist[head[o], dst[stuck, None]] != here[sel][stuck, None] - 1) & (occ[oslots] < b)
        can = free.any(axis=1)
        pick2 = choose_cost(np.where(free, 0, _BIG), tie[stuck], hops[stuck])
        want[stuck] = np.where(can, oslots[np.arange(len(stuck)), pick2], want[stuck])
    np.subtract.at(q, old[old >= 0], ONE)
    a["want"][g] = want
    np.add.at(q, want, ONE)


def gate(batch, order: np.ndarray | None) -> np.ndarray:
    """Source packets held back by the injection gate, in the order of ``_move``'s positions."""
    return batch.chaos_gate if order is None else batch.chaos_gate[order]


def into_queue(batch, movers: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """Step 4: the packets that sat in an input buffer and did not cross move into their node's
    shared queue while it had room at the start of the step, highest priority first.

    Parameters
    ----------
    movers : ndarray
        Positions (absolute) of the packets that crossed a link in this step.
    order : ndarray or None
        The step's positions (relative to head), lowest priority first.

    Returns
    -------
    ndarray
        The runs of the packets moved (one entry per packet), for the deadlock check.
    """
    h, a, N = batch.head, batch.a, batch.N
    n = batch.cap - h
    prev = a["prev"][h:]
    inside = (prev < batch.trash) & (a["want"][h:] != batch.trash)
    inside[movers - h] = False
    cand = np.flatnonzero(inside)
    if not len(cand):
        return np.empty(0, dtype=np.int64)
    rank = np.arange(n) if order is None else np.empty(n, dtype=np.int64)
    if order is not None:
        rank[order] = np.arange(n)
    at = a["run"][cand + h] * N + a["node"][cand + h]
    cand_order = np.lexsort((-rank[cand], at))
    cand, at = cand[cand_order], at[cand_order]
    first = np.concatenate([[True], at[1:] != at[:-1]])
    start = np.maximum.accumulate(np.where(first, np.arange(len(at)), 0))
    take = (np.arange(len(at)) - start) < (batch.queue_cap[at] - batch.queue_start[at])
    g, at = cand[take] + h, at[take]
    occ = batch.occupancy
    np.subtract.at(occ, a["prev"][g], ONE)
    slot = batch.queue_base + at
    a["prev"][g] = slot
    np.add.at(occ, slot, ONE)
    return a["run"][g]
