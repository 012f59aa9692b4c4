"""Hop-by-hop decisions of the adaptive routings inside the fast open-loop engine (SPEC §11).

The selection rule (MIN AD, GOAL and UGAL alike): a packet decides when it has just been
created or has just arrived at a node, at the start of the next step. Its candidates are the
allowed links (:mod:`universal.engine.routes`), in a fixed order - increasing link id for
MIN AD and UGAL, increasing dimension for GOAL. The count of a link is the number of packets
of the run committed to it (waiting for it) at the start of the step, after the step's new
packets have joined their source queues; the packets deciding in the same step do not see each
other's choices. The candidate with the smallest count wins; among ``c`` tied candidates the
``floor(u * c)``-th, with ``u`` the packet's tie number for this decision
(:func:`universal.engine.routes.tie_uniform` of its tie seed and its hop count).

With virtual channels and bounded buffers (GOAL's *-channels, :mod:`universal.engine.vcs`) a
packet chooses a link *and* the VC class to enter on it (:func:`decide_star`), preferring an
option whose class buffer has room, then the link with the fewest other packets waiting for it,
then the non-* class; it is not committed: in every step in which the class buffer it chose is
full it chooses again, so it falls back to its escape class whenever the adaptive one is full.

The multibutterfly's splitter rule orders its allowed edges by count, then by the row they
reach, and the packets of one node bound for one output set that decide in the same step take
them in turn, in packet-id order (deterministic: no tie numbers).

UGAL decides once, at creation (its first decision; with a FIFO source, when the packet reaches
the front of its queue): with ``q`` the smallest queue among the first links toward a target and
``H`` the hops, it routes toward the random intermediate when
``q_min * H_min > q_val * H_val + threshold`` and toward the destination otherwise; the
packet then routes minimally adaptively to its current target, and on reaching the
intermediate retargets to the destination. A first link's queue is the packets waiting for it
and, with bounded buffers, its used credits (:func:`used_credits`: the packets that crossed it
and sit in its buffer at the next router, every VC class), the occupancy a credit-based
router's output port shows. Without it a link busy every step with nothing waiting (a FIFO
source at offered 1.0) would read as idle. On the ideal network (unbounded buffers) there are
no credits and ``q`` is the waiting packets alone. On a network with terminals (dragonfly, fat
tree, flattened butterfly, HyperX) the first links compared are those out of the source
terminal's router (its own link is both candidates' first) and their used credits count with
unbounded buffers too, as UGAL-L's do (:func:`universal.engine.routes.ugal_pick`). On a
dragonfly UGAL's minimal legs cross the fewest global links (its own tables,
:attr:`universal.engine.routes.Router.group_minimal`; MIN AD's in the same batch stay hop-minimal).
"""

from __future__ import annotations

import numpy as np

from universal.engine.contention import ONE
from universal.engine.routes import tie_uniform

__all__ = ["decide", "decide_star", "choose_cost", "used_credits", "advance", "final_hop", "adaptive_hops_left",
           "choose", "splitter_turns", "SPLITTER"]

_BIG = np.int64(1) << 40
#: The engine's kind number of the multibutterfly's splitter routing.
SPLITTER = 4


def _tables(batch):
    """The network tables of the batch's adaptive runs (shared: one network)."""
    if not hasattr(batch, "_adaptive_tables"):
        tabs = {"head": batch.net.link_head}
        if ((batch.kinds == 1) | (batch.kinds == 3) | (batch.kinds == 5)).any():   # MIN AD, UGAL, CHAOS: node pairs
            routers = [s.router for s in batch.specs if s.router.kind in ("min-adaptive", "ugal", "chaos")]
            router = next((r for r in routers if r.kind != "ugal"), routers[0])
            tabs["productive"] = router.productive
            tabs["distance"] = router.distance
            # UGAL's own on a dragonfly (its legs cross the fewest global links, not the fewest
            # links); elsewhere the same tables as MIN AD's
            own = next((r for r in routers if r.group_minimal), router)
            tabs["ugal_productive"], tabs["ugal_distance"] = own.productive, own.distance
            if batch.net.terminals is not None:     # UGAL reads the queues at the source's router
                at = np.arange(batch.N, dtype=np.int64)
                at[batch.net.terminals] = batch.net.router_of
                tabs["ugal_at"] = at
        if (batch.kinds == 2).any():
            goal = next(s.router for s in batch.specs if s.router.kind == "goal")
            dl = goal.dir_link
            link_dim = np.zeros(batch.L, dtype=np.int64)
            link_dim[dl] = np.arange(dl.shape[1])[None, :, None]
            tabs.update(dir_link=dl, link_dim=link_dim)
        tabs["threshold"] = np.array([s.router.threshold for s in batch.specs])
        batch._adaptive_tables = tabs
    return batch._adaptive_tables


def _productive(tabs: dict, node: np.ndarray, target: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """The allowed links (m, width) of packets at ``node`` bound for ``target``: UGAL's packets
    (kind 3) read UGAL's table, the others MIN AD's (the same but on a dragonfly)."""
    cand = tabs["productive"][node, target]
    ugal = kind == 3
    if tabs["ugal_productive"] is not tabs["productive"] and ugal.any():
        cand[ugal] = tabs["ugal_productive"][node[ugal], target[ugal]]
    return cand


def choose(cand: np.ndarray, q: np.ndarray, tie: np.ndarray, hops: np.ndarray) -> np.ndarray:
    """Index of the chosen candidate per row: fewest waiting, ties by the tie numbers.

    Parameters
    ----------
    cand : ndarray (m, c)
        Candidate slots (-1 = none).
    q : ndarray
        Waiting counts per slot.
    tie, hops : ndarray (m,)
        Tie seeds and the decision index (hops made so far).

    Examples
    --------
    >>> choose(np.array([[3, 4, -1]]), np.array([0, 0, 0, 2, 1]), np.array([7], np.uint64), np.array([0]))
    array([1])
    """
    return choose_cost(np.where(cand >= 0, q[np.maximum(cand, 0)], _BIG), tie, hops)


def choose_cost(cost: np.ndarray, tie: np.ndarray, hops: np.ndarray) -> np.ndarray:
    """Index of the cheapest entry per row of ``cost`` (m, c); among ``c`` tied ones the
    ``floor(u * c)``-th, ``u`` the tie number of the packet's decision ``hops``.

    Examples
    --------
    >>> choose_cost(np.array([[2, 1, 1]]), np.array([7], np.uint64), np.array([0]))
    array([1])
    """
    tied = cost == cost.min(axis=1, keepdims=True)
    count = tied.sum(axis=1)
    pick = np.minimum((tie_uniform(tie, hops) * count).astype(np.int64), count - 1)
    return np.argmax(np.cumsum(tied, axis=1) > pick[:, None], axis=1)


def decide(batch, t: int) -> None:
    """Commit every packet that arrived or was created to its next link (see the module docstring)."""
    idx = batch.pending_decide
    batch.pending_decide = np.empty(0, dtype=np.int64)
    if not len(idx):
        return
    a, tabs = batch.a, _tables(batch)
    q = batch.waiting                       # packets committed to each link (updated below, after all chose)
    run, kind = a["run"][idx], a["kind"][idx]
    base = run * batch.L
    first = (kind == 3) & (a["via"][idx] >= 0)
    if first.any():
        _ugal_choice(batch, idx[first], base[first], q, tabs)
    want = np.empty(len(idx), dtype=np.int64)
    node = a["node"][idx]
    goal = kind == 2
    splitter = kind == SPLITTER
    if splitter.any():
        sel = np.flatnonzero(splitter)
        want[sel] = _splitter_choice(batch, idx[sel], node[sel], base[sel], q)
    if (~goal & ~splitter).any():
        sel = np.flatnonzero(~goal & ~splitter)
        cand = _productive(tabs, node[sel], a["target"][idx[sel]], kind[sel])
        slots = np.where(cand >= 0, cand + base[sel, None], -1)
        pick = choose(slots, q, a["tie"][idx[sel]], a["hops"][idx[sel]])
        want[sel] = slots[np.arange(len(sel)), pick]
    if goal.any():
        sel = np.flatnonzero(goal)
        g = idx[sel]
        rem, sgn = a["remaining"][g], a["signs"][g]
        links = tabs["dir_link"][node[sel][:, None], np.arange(rem.shape[1])[None, :], (sgn < 0).astype(np.int64)]
        slots = np.where(rem > 0, links + base[sel, None], -1)
        pick = choose(slots, q, a["tie"][g], a["hops"][g])
        want[sel] = slots[np.arange(len(sel)), pick]
    a["want"][idx] = want
    np.add.at(q, want, ONE)


#: A *-channel option whose class buffer is full costs this much more than any with room.
_ROOMLESS = np.int64(1) << 34


def decide_star(batch, t: int) -> None:
    """GOAL's *-channels (a batch with virtual channels and bounded buffers): an adaptive packet
    waiting at a node chooses its next hop, a link and the VC class to enter on it
    (:func:`universal.engine.vcs.star_class`), when it arrives (or is created), and chooses
    again in every step in which the class buffer it chose is full at the start of the step, as
    the module docstring of :mod:`universal.engine.vcs` states the rule.

    The options, in this order: the non-* class on every allowed link (increasing link id; GOAL:
    increasing dimension), then the * class on every allowed link of the lowest dimension still
    to correct. An option's cost is, first, whether its class buffer is full at the start of the
    step (a last hop needs no room), then twice the packets waiting for its link at the start of
    the step, the packet itself not counted, plus one for a * class; the cheapest wins, ties by
    the packet's tie number of the decision (its hop count), as :func:`choose`.
    """
    batch.pending_decide = np.empty(0, dtype=np.int64)
    h, a = batch.head, batch.a
    # (not the dead, nor a packet behind the front of a FIFO source queue: it waits for a dummy link)
    idx = np.flatnonzero((a["kind"][h:] > 0) & (a["want"][h:] < batch.trash)) + h
    if not len(idx):
        return
    tabs = _tables(batch)
    q, plan, span = batch.waiting, batch.vc, batch.links_span
    # a packet keeps its choice while the class buffer it chose has room (or it is its last hop)
    old = a["want"][idx]
    chose = np.flatnonzero(old >= 0)
    if len(chose):
        w, r_ = old[chose], a["run"][idx[chose]]
        last = (tabs["head"][w - r_ * batch.L] == a["dst"][idx[chose]]) & (a["target"][idx[chose]] == a["dst"][idx[chose]])
        c = a["vc"][idx[chose]].astype(np.int64)
        keep = np.zeros(len(idx), dtype=bool)
        keep[chose] = last | (batch.occupancy[c * span + w] < batch.vc_cap[r_, c])
        idx = idx[~keep]
        if not len(idx):
            return
    run, kind = a["run"][idx], a["kind"][idx]
    base = run * batch.L
    first = (kind == 3) & (a["via"][idx] >= 0)
    if first.any():
        _ugal_choice(batch, idx[first], base[first], q, tabs)
    node, target, dst = a["node"][idx], a["target"][idx], a["dst"][idx]
    goal = kind == 2
    width = max(batch.dims if goal.any() else 0, tabs["productive"].shape[2] if (~goal).any() else 0)
    cand = np.full((len(idx), width), -1, dtype=np.int64)
    if goal.any():
        sel = np.flatnonzero(goal)
        rem, sgn = a["remaining"][idx[sel]], a["signs"][idx[sel]]
        links = tabs["dir_link"][node[sel][:, None], np.arange(rem.shape[1])[None, :], (sgn < 0).astype(np.int64)]
        cand[sel, :rem.shape[1]] = np.where(rem > 0, links, -1)
    if (~goal).any():
        sel = np.flatnonzero(~goal)
        prod = _productive(tabs, node[sel], target[sel], kind[sel])
        cand[sel, :prod.shape[1]] = prod
    ok = cand >= 0
    local = np.maximum(cand, 0)
    slots = local + base[:, None]
    geo = plan.geometry
    dim = np.where(ok, geo.type[local].astype(np.int64) >> 1, _BIG)
    escape = ok & (dim == dim.min(axis=1, keepdims=True))
    wrapped = ((a["wrapped"][idx][:, None] >> np.minimum(dim, 62)) & 1).astype(bool) | geo.wrap[local]
    phase = ((kind == 3) & (target == dst)).astype(np.int64)[:, None]
    per = plan.per_phase
    cls_star = per * phase + (wrapped if plan.ring else np.zeros(cand.shape, dtype=np.int64))
    cls_ad = np.broadcast_to(per * phase + per - 1, cand.shape)
    final = (tabs["head"][local] == dst[:, None]) & (target == dst)[:, None]
    cap = batch.vc_cap[run]
    rows = np.arange(len(idx))[:, None]
    room_ad = final | (batch.occupancy[cls_ad * span + slots] < cap[rows, cls_ad])
    room_star = final | (batch.occupancy[cls_star * span + slots] < cap[rows, cls_star])
    old = a["want"][idx]
    queue = 2 * (q[slots].astype(np.int64) - (slots == old[:, None]))
    cost = np.concatenate([np.where(ok, np.where(room_ad, 0, _ROOMLESS) + queue, _BIG),
                           np.where(escape, np.where(room_star, 0, _ROOMLESS) + queue + 1, _BIG)], axis=1)
    pick = choose_cost(cost, a["tie"][idx], a["hops"][idx])
    col, star = pick % width, pick >= width
    r = np.arange(len(idx))
    want = slots[r, col]
    np.subtract.at(q, old[old >= 0], ONE)
    a["want"][idx] = want
    a["vc"][idx] = np.where(star, cls_star[r, col], cls_ad[r, col])
    np.add.at(q, want, ONE)


def splitter_turns(key: np.ndarray, pid: np.ndarray) -> np.ndarray:
    """Each packet's turn among the packets with the same ``key`` (node and output set), in
    packet-id order: 0, 1, 2, ...

    Examples
    --------
    >>> splitter_turns(np.array([5, 7, 5, 5]), np.array([9, 1, 3, 4])).tolist()
    [2, 0, 0, 1]
    """
    order = np.lexsort((pid, key))
    sorted_key = key[order]
    first = np.concatenate([[True], sorted_key[1:] != sorted_key[:-1]])
    start = np.maximum.accumulate(np.where(first, np.arange(len(key)), 0))
    turns = np.empty(len(key), dtype=np.int64)
    turns[order] = np.arange(len(key)) - start
    return turns


def _splitter_choice(batch, idx: np.ndarray, node: np.ndarray, base: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The splitter rule (:func:`universal.engine.routes._splitter`): the allowed edges ordered by
    the packets waiting for them (then by the row they reach), taken in turn in packet-id order."""
    from universal.networks.multibutterfly import splitter_table
    a, net = batch.a, batch.net
    table = splitter_table(net)
    rows = len(net.inputs)
    root = int(round(net.params["s"] ** 0.5))
    level = net.levels[node].astype(np.int64)
    row = node - level * rows
    dest_row = a["dst"][idx] - net.depth * rows
    want = np.empty(len(idx), dtype=np.int64)
    for i in np.unique(level).tolist():
        sel = np.flatnonzero(level == i)
        out_set = (dest_row[sel] // table.block[i]) % root
        cand = table.links[i][row[sel], out_set] + base[sel, None]          # (m, k) global link ids
        k = cand.shape[1]
        order = np.argsort(q[cand] * k + np.arange(k)[None, :], axis=1, kind="stable")
        key = (a["run"][idx[sel]] * net.num_nodes + node[sel]) * root + out_set
        turn = splitter_turns(key, a["pid"][idx[sel]]) % k
        want[sel] = cand[np.arange(len(sel)), order[np.arange(len(sel)), turn]]
    return want


def used_credits(batch, slots: np.ndarray, ideal_too: bool = False) -> np.ndarray | int:
    """The used credits of the links ``slots`` (global link ids, >= 0): the packets that crossed
    each link and still sit in its buffer at the next router, every VC class of the physical
    link counted; 0 on the ideal network (unbounded buffers have no credits), where the engine
    may still keep the occupancy for other ends (a FIFO source, a batch's largest buffer),
    unless ``ideal_too`` (UGAL on a network with terminals counts them as UGAL-L does: the
    engine then keeps the occupancy).

    All classes, not the one the deciding packet would enter: the classes share the link's one
    packet per step, so packets of any class at its head are work queued on it (BookSim's
    ``GetUsedCredit`` of an output port likewise sums its VCs), and UGAL's two candidates enter
    different phases' classes, which a per-class count would compare unlike with unlike.

    Parameters
    ----------
    batch : universal.engine.runs._Batch
        Its ``buffer``, ``classes``, ``links_span`` and ``occupancy`` (class ``c`` of link ``e``
        at ``c * links_span + e``) are read.
    slots : ndarray of int64
    ideal_too : bool
        Count them with unbounded buffers too.

    Returns
    -------
    ndarray of int64, or 0 with unbounded buffers (and not ``ideal_too``)

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> b = SimpleNamespace(buffer=1, classes=2, links_span=4, occupancy=np.array([0, 1, 0, 0, 0, 1, 0, 0]))
    >>> used_credits(b, np.array([1, 2])).tolist()         # link 1: one packet in each class
    [2, 0]

    References
    ----------
    Singh, "Load-balanced routing in interconnection networks", PhD thesis, Stanford 2005, §3;
    Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008, §4.2.
    """
    if batch.buffer is None and not ideal_too:
        return 0
    span = batch.links_span
    return sum(batch.occupancy[c * span + slots].astype(np.int64) for c in range(batch.classes))


def _ugal_choice(batch, idx: np.ndarray, base: np.ndarray, q: np.ndarray, tabs: dict) -> None:
    """UGAL at creation: toward the intermediate when q_min*H_min > q_val*H_val + threshold, a
    first link's q its waiting packets plus, with bounded buffers, its used credits.

    On a network with terminals (``tabs["ugal_at"]``: every node's router) a terminal's one link
    is both candidates' first, so the first links compared are those out of the source's router
    toward each target, the first where the candidates differ, and their q always counts the
    used credits, as UGAL-L's (:func:`universal.engine.routes.ugal_pick`); ``H`` stays the hops
    of the whole paths from the terminal."""
    a = batch.a
    src, dst, via = a["node"][idx], a["dst"][idx], a["via"][idx]
    dist, prod = tabs["ugal_distance"], tabs["ugal_productive"]
    at = tabs["ugal_at"][src] if "ugal_at" in tabs else src
    ideal_too = "ugal_at" in tabs

    def smallest(target):
        cand = prod[at, target]
        slots = np.maximum(cand + base[:, None], 0)
        return np.where(cand >= 0, q[slots] + used_credits(batch, slots, ideal_too), _BIG).min(axis=1)

    h_min = dist[src, dst].astype(np.int64)
    h_val = dist[src, via].astype(np.int64) + dist[via, dst]
    valiant = smallest(dst) * h_min > smallest(via) * h_val + tabs["threshold"][a["run"][idx]]
    a["target"][idx] = np.where(valiant, via, dst)
    a["via"][idx] = -1


def advance(batch, gi: np.ndarray, crossed: np.ndarray) -> np.ndarray:
    """Move the packets at ``gi`` across ``crossed``; returns the mask of the delivered ones."""
    a, tabs = batch.a, _tables(batch)
    kind = a["kind"][gi]
    done = np.zeros(len(gi), dtype=bool)
    obl = kind == 0
    if obl.any():
        g = gi[obl]
        cur = a["cur"][g] + 1
        d = cur == a["end"][g]
        done[obl] = d
        on = g[~d]
        a["cur"][on] = cur[~d]
        a["want"][on] = batch.store[cur[~d]]
        np.add.at(batch.waiting, a["want"][on], ONE)
    ad = ~obl
    if ad.any():
        g = gi[ad]
        local = crossed[ad] - a["run"][g] * batch.L
        head = tabs["head"][local]
        a["node"][g] = head
        a["hops"][g] += 1
        star = batch.vc is not None
        if star:                # the *-channels: the dimensions whose wrap-around the packet crossed
            geo = batch.vc.geometry
            a["wrapped"][g] |= geo.wrap[local].astype(np.int64) << (geo.type[local].astype(np.int64) >> 1)
        k = kind[ad]
        if (k == 2).any():
            gg = g[k == 2]
            a["remaining"][gg, tabs["link_dim"][local[k == 2]]] -= 1
        target = a["target"][g]
        reached = (head == target) & (target != a["dst"][g])
        a["target"][g[reached]] = a["dst"][g[reached]]
        if star:                # UGAL's second phase starts with no wrap-around crossed
            a["wrapped"][g[reached]] = 0
        d = head == a["dst"][g]
        d &= a["target"][g] == a["dst"][g]
        done[ad] = d
        on = g[~d]
        a["want"][on] = -1
        batch.pending_decide = np.concatenate([batch.pending_decide, on])
    return done


def final_hop(batch, h: int) -> np.ndarray:
    """Whether each live packet (from ``head``) would be delivered by crossing its wanted link."""
    a, tabs = batch.a, _tables(batch)
    final = a["cur"][h:] + 1 == a["end"][h:]
    ad = a["kind"][h:] > 0
    want = a["want"][h:]
    local = np.clip(want - a["run"][h:] * batch.L, 0, batch.L - 1)
    head = tabs["head"][local]
    fin_ad = (head == a["dst"][h:]) & (a["target"][h:] == a["dst"][h:])
    return np.where(ad, fin_ad, final)


def adaptive_hops_left(batch, h: int) -> np.ndarray:
    """Hops still to go of each live packet under its adaptive routing (farthest-to-go)."""
    a, tabs = batch.a, _tables(batch)
    kind = a["kind"][h:]
    left = np.zeros(len(kind), dtype=np.int64)
    if "distance" in tabs:
        node, target, dst = a["node"][h:], a["target"][h:], a["dst"][h:]
        dist = tabs["distance"]
        left = dist[node, target] + np.where(target != dst, dist[target, dst], 0)
        if tabs["ugal_distance"] is not dist and (kind == 3).any():
            ud = tabs["ugal_distance"]
            left = np.where(kind == 3, ud[node, target] + np.where(target != dst, ud[target, dst], 0), left)
    if batch.dims:
        left = np.where(kind == 2, a["remaining"][h:].sum(axis=1), left)
    if (kind == SPLITTER).any():            # one level per hop down to the outputs
        left = np.where(kind == SPLITTER, batch.net.depth - batch.net.levels[a["node"][h:]], left)
    return left
