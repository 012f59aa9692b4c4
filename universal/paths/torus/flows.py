"""Integer channel flows of the designed torus routings: paths from flows, rounding and checks.

The arithmetic behind :class:`universal.paths.torus.designed.FlowRouting` (which also exports
every public name here): the head of every channel, the decomposition of all offsets' acyclic
flows into weighted paths side by side, the search for and cancelling of circulations, the
rounding of an LP's float flows (or of its path weights over a path family) to integers over one
common denominator with conservation kept exactly, and the checks a given flow or set of paths
must pass. Flows are relative to the source (SPEC §10): row ``t`` is one unit of flow from node 0
to offset ``t`` over the channels of the torus.

Reference: B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design",
2003, §4 (paths recovered from the flows).
"""

from __future__ import annotations

import numpy as np

from universal.errors import UserError

from .algorithms import PathFamily
from .geometry import Torus


#: Common denominator of designed routings: 2**40 keeps rounding below 1e-12 per path and every
#: load numerator exact in the float64 sums of the worst-case matching up to 4096 nodes.
DENOMINATOR = 2 ** 40


def channel_heads(torus: Torus) -> np.ndarray:
    """Head node of every channel index of ``torus``.

    Examples
    --------
    >>> channel_heads(Torus(3, 1)).tolist()      # 0->1, 0->2, 1->2, 1->0, 2->0, 2->1
    [1, 2, 2, 0, 0, 1]
    """
    C = torus.num_channels
    tails, dims, signs = torus.channel_parts(np.arange(C))
    step = np.zeros((C, torus.n), dtype=np.int64)
    step[np.arange(C), dims] = signs
    return np.asarray(torus.node(torus.coords[tails] + step), dtype=np.int64)


def _decompose_all(torus: Torus, heads: np.ndarray, flows: np.ndarray,
                   eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Paths of every offset's acyclic flow, heaviest channel first at every node.

    All offsets are decomposed side by side, one numpy step per hop of the walks under way: the
    pure-Python walk per offset took a third of ``design``'s time, and the offsets do not
    interact. Each offset's paths come out in the order and with the weights the one-offset
    greedy walk gives: from node 0, leave every node by its heaviest channel (the lowest class
    on a tie), then subtract the walk's smallest flow along it. With float flows (``eps > 0``) a
    walk that strands on the solver's round-off is subtracted but dropped, and a walk stranded at
    node 0 ends that offset's decomposition; with integer flows (``eps == 0``) a stranded walk is
    an error (the flow is not conserved).

    Parameters
    ----------
    torus : Torus
    heads : ndarray of int64, shape (C,)
        :func:`channel_heads` of ``torus``.
    flows : ndarray, shape (N, C)
        One offset's flow per row, float or int64; acyclic on the channels above ``eps`` (cycles
        cancelled first, :func:`_cancel_cycles`), so no walk comes back to a node.
    eps : float
        Flows at or below it count as empty.

    Returns
    -------
    owners : ndarray of int64, shape (P,)
        Offset of every path, ascending; each offset's paths in the order the walk found them.
    chans : ndarray of int64, shape (P, H)
        Channels of every path, padded with -1.
    weights : ndarray, shape (P,)
        Flow of every path (the dtype of ``flows``).

    Examples
    --------
    >>> t = Torus(3, 1)              # channels 0->1, 0->2, 1->2, 1->0, 2->0, 2->1
    >>> f = np.zeros((3, 6)); f[2, 0] = 0.5; f[2, 2] = 0.5; f[2, 1] = 0.5   # to 2: 0->1->2 and 0->2
    >>> owners, chans, w = _decompose_all(t, channel_heads(t), f, 1e-10)
    >>> owners.tolist(), chans.tolist(), w.tolist()
    ([2, 2], [[0, 2], [1, -1]], [0.5, 0.5])
    """
    N, J = torus.N, 2 * torus.n
    integer = eps == 0
    F = np.array(flows, dtype=np.int64 if integer else np.float64)
    classes = np.arange(J)
    big = np.iinfo(np.int64).max if integer else np.inf
    live = np.arange(1, N)[F[1:, :J].max(axis=1, initial=0) > eps]    # offsets with flow left at 0
    found_owner, found_chans, found_weight = [], [], []
    while len(live):
        rows = len(live)
        node = np.zeros(rows, dtype=np.int64)
        walking = np.ones(rows, dtype=bool)
        columns = []
        for _ in range(N + 1):             # an acyclic walk makes at most N - 1 hops
            at = np.flatnonzero(walking)
            if not len(at):
                break
            base = node[at] * J
            out = F[live[at][:, None], base[:, None] + classes]
            j = out.argmax(axis=1)         # the first heaviest, like max() over the classes
            empty = out[np.arange(len(at)), j] <= eps
            if integer and empty.any():
                t, v = int(live[at[empty][0]]), int(node[at[empty][0]])
                raise UserError(f"flow to offset {torus.label(t)} is not conserved at node {torus.label(v)}")
            col = np.full(rows, -1, dtype=np.int64)
            go = at[~empty]
            col[go] = base[~empty] + j[~empty]
            node[go] = heads[col[go]]
            walking[at[empty]] = False     # stranded on round-off
            walking[go] = node[go] != live[go]
            columns.append(col)
        else:
            raise UserError("a designed flow contains a cycle (routes must not revisit a channel)")
        if not columns:
            break
        chans = np.stack(columns, axis=1)
        hop = chans >= 0
        r, c = np.nonzero(hop)
        on = np.full(chans.shape, big, dtype=F.dtype)
        on[r, c] = F[live[r], chans[r, c]]
        m = on.min(axis=1)
        moved = hop[:, 0]                  # a walk stranded at node 0 ends its offset
        F[live[r], chans[r, c]] -= m[r]    # a walk's channels are distinct: plain fancy indexing
        done = moved & (node == live)
        found_owner.append(live[done])
        found_chans.append(chans[done])
        found_weight.append(m[done])
        keep = moved & (F[live, :J].max(axis=1) > eps)
        live = live[keep]
    if not found_owner:
        return np.empty(0, np.int64), np.empty((0, 1), np.int64), np.empty(0, F.dtype)
    width = max(x.shape[1] for x in found_chans)
    chans = np.concatenate([np.pad(x, ((0, 0), (0, width - x.shape[1])), constant_values=-1)
                            for x in found_chans])
    owners = np.concatenate(found_owner)
    order = np.argsort(owners, kind="stable")  # rounds were found in order: stable keeps it per offset
    return owners[order], chans[order], np.concatenate(found_weight)[order]


def _find_cycle(torus: Torus, heads: list[int], used: list[bool]) -> list[int] | None:
    """Channels of one directed cycle among the ``used`` channels, or None (iterative DFS).

    ``heads`` and ``used`` come as Python lists: the search reads them one entry at a time,
    several times faster from a list than from an array.
    """
    J = 2 * torus.n
    state = [0] * torus.N                               # 0 new, 1 on the stack, 2 done
    for root in range(torus.N):
        if state[root]:
            continue
        stack, via = [(root, 0)], []                    # (node, next class to try), channels taken
        state[root] = 1
        while stack:
            node, j = stack[-1]
            if j == J:
                state[node] = 2
                stack.pop()
                if via:
                    via.pop()
                continue
            stack[-1] = (node, j + 1)
            c = node * J + j
            if not used[c]:
                continue
            head = heads[c]
            if state[head] == 1:                         # back edge: the cycle closes at head
                start = next(i for i, (v, _) in enumerate(stack) if v == head)
                return via[start:] + [c]
            if state[head] == 0:
                state[head] = 1
                stack.append((head, 0))
                via.append(c)
    return None


def _acyclic_rows(torus: Torus, heads: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Per row of ``used`` (rows, C): whether its channels form no directed cycle.

    Kahn's algorithm on all rows at once: strip the nodes no used channel enters (with their
    channels) until none is left; a row is acyclic exactly when that strips all its channels.
    """
    J = 2 * torus.n
    used = used.copy()
    rows = np.arange(len(used))[:, None]
    tails = np.arange(torus.num_channels) // J
    alive = np.ones((len(used), torus.N), dtype=bool)
    while True:
        indeg = np.zeros((len(used), torus.N), dtype=np.int64)
        r, c = np.nonzero(used)
        np.add.at(indeg, (r, heads[c]), 1)
        source = alive & (indeg == 0)
        if not source.any():
            break
        alive &= ~source
        used &= alive[rows, tails]          # a stripped node's channels go with it
    return ~used.any(axis=1)


def _cancel_cycles(torus: Torus, heads: np.ndarray, flow: np.ndarray, eps: float) -> np.ndarray:
    """Remove every circulation from one offset's flow (loads only drop; conservation holds)."""
    flow = np.where(flow > eps, flow, 0.0)
    head_list = heads.tolist()
    while (cycle := _find_cycle(torus, head_list, (flow > 0).tolist())) is not None:
        m = flow[cycle].min()
        flow[cycle] -= m
        flow[cycle[int(np.argmin(flow[cycle]))]] = 0.0
        flow[flow <= eps] = 0.0
    return flow


def integer_flows(torus: Torus, flows: np.ndarray, den: int = DENOMINATOR,
                  eps: float = 1e-10) -> np.ndarray:
    """Round float flows (N, C) of one unit per offset to integers over ``den``, exactly conserved.

    Each offset's flow loses its circulations (which only lowers loads and path lengths) and is
    decomposed into paths; the
    path weights are scaled to sum to ``den`` and rounded by largest remainder, and the integer
    flows are rebuilt from the paths: conservation holds exactly.

    Examples
    --------
    >>> t = Torus(3, 1)
    >>> f = np.zeros((3, 6)); f[1, 0] = 1.0; f[2, 1] = 1.0     # 0->1 and 0->2 directly
    >>> integer_flows(t, f, den=4).tolist()
    [[0, 0, 0, 0, 0, 0], [4, 0, 0, 0, 0, 0], [0, 4, 0, 0, 0, 0]]
    """
    heads = channel_heads(torus)
    flows = np.where(flows > eps, flows, 0.0)
    # most designs have no circulation: the search for cycles runs only where there is one
    for t in np.flatnonzero(~_acyclic_rows(torus, heads, flows > 0)).tolist():
        flows[t] = _cancel_cycles(torus, heads, flows[t], eps)
    owners, chans, w = _decompose_all(torus, heads, flows, eps)
    counts = np.bincount(owners, minlength=torus.N)
    if (missing := np.flatnonzero(counts[1:] == 0)).size:
        raise UserError(f"no flow reaches offset {torus.label(int(missing[0]) + 1)}")
    num = np.empty(len(w), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])
    for t in range(1, torus.N):             # largest remainder, offset by offset
        part = w[starts[t]:starts[t + 1]]
        exact = part / part.sum() * den
        q = np.floor(exact).astype(np.int64)
        short = den - int(q.sum())
        q[np.argsort(-(exact - q), kind="stable")[:short]] += 1
        num[starts[t]:starts[t + 1]] = q
    out = np.zeros(flows.shape, dtype=np.int64)
    r, c = np.nonzero(chans >= 0)
    np.add.at(out, (owners[r], chans[r, c]), num[r])
    return out


def family_of_legs(legs: list[list[tuple[int, int]]], weights) -> PathFamily:
    """A :class:`PathFamily` from each route's legs ``[(dim, signed steps), ...]`` and its weight,
    the shorter routes padded with empty legs.

    Examples
    --------
    >>> family_of_legs([[(0, 2)], [(1, 1), (0, 1)]], [1, 3]).steps.tolist()
    [[2, 0], [1, 1]]
    """
    width = max(1, max((len(x) for x in legs), default=1))
    dims = np.zeros((len(legs), width), dtype=np.int64)
    steps = np.zeros((len(legs), width), dtype=np.int64)
    for i, route in enumerate(legs):
        for g, (d, st) in enumerate(route):
            dims[i, g], steps[i, g] = d, st
    return PathFamily(dims, steps, np.asarray(weights, dtype=np.int64))


def path_families(torus: Torus, weights: np.ndarray, paths: list[tuple[int, list[tuple[int, int]]]],
                  den: int = DENOMINATOR, eps: float = 1e-10) -> dict[int, PathFamily]:
    """Round path probabilities to integers over ``den`` per offset, keeping the paths themselves.

    Parameters
    ----------
    torus : Torus
    weights : ndarray
        Probability of every path (an LP's path variables); values below ``eps`` are dropped as
        solver round-off.
    paths : list of (offset, legs)
        The path of every weight, legs as ``[(dim, signed steps), ...]`` from node 0
        (:func:`universal.design.families.two_turn_paths`).
    den : int
        Common denominator: each offset's weights are scaled to sum to ``den`` and rounded by
        largest remainder.

    Returns
    -------
    dict of int to PathFamily
        Every offset's paths, weights summing to ``den`` (offset 0: the empty path).

    Examples
    --------
    >>> t = Torus(3, 1)
    >>> fam = path_families(t, np.array([1.0, 0.5, 0.5]), [(1, [(0, 1)]), (2, [(0, 2)]), (2, [(0, -1)])], den=4)
    >>> fam[2].steps.tolist(), fam[2].weights.tolist()
    ([[2], [-1]], [2, 2])
    """
    weights = np.asarray(weights, dtype=np.float64)
    by_offset: dict[int, list[int]] = {}
    for j, (t, _) in enumerate(paths):
        if weights[j] > eps:
            by_offset.setdefault(int(t), []).append(j)
    out = {0: family_of_legs([[]], [den])}          # offset 0: the empty route
    for t in range(1, torus.N):
        js = by_offset.get(t)
        if not js:
            raise UserError(f"no path carries the traffic to offset {torus.label(t)}")
        w = weights[js]
        exact = w / w.sum() * den
        num = np.floor(exact).astype(np.int64)
        short = den - int(num.sum())
        num[np.argsort(-(exact - num), kind="stable")[:short]] += 1
        keep = [j for j, q in zip(js, num) if q > 0]
        out[t] = family_of_legs([paths[j][1] for j in keep], num[num > 0])
    return out


def _family_flows(torus: Torus, paths: dict[int, PathFamily]) -> np.ndarray:
    """Integer channel flows ``(N, C)`` of per-offset weighted paths; UserError for a path that
    does not end at its offset or visits a node twice."""
    from .algorithms import legs_to_nodes
    J = 2 * torus.n
    num = np.zeros((torus.N, torus.num_channels), dtype=object)
    for t in range(torus.N):
        fam = paths.get(t)
        if fam is None:
            raise UserError(f"no paths are given for offset {torus.label(t)}")
        if (fam.weights <= 0).any():
            raise UserError(f"a path to offset {torus.label(t)} has a weight that is not positive")
        for dims, steps, w in zip(fam.dims, fam.steps, fam.weights):
            if ((dims < 0) | (dims >= torus.n)).any() or (np.abs(steps) >= torus.k).any():
                raise UserError(f"a path to offset {torus.label(t)} has a leg that is not 1..k-1 hops "
                                f"in a dimension of {torus.name}")
            nodes = legs_to_nodes(torus, 0, dims, steps)
            if int(nodes[-1]) != t:
                raise UserError(f"a path to offset {torus.label(t)} ends at {torus.label(int(nodes[-1]))}")
            if len(np.unique(nodes)) != len(nodes):
                raise UserError(f"a path to offset {torus.label(t)} visits a node twice")
            hop_dims = np.repeat(dims, np.abs(steps))
            back = np.repeat(steps < 0, np.abs(steps))
            for c in (nodes[:-1] * J + 2 * hop_dims + back).tolist():
                num[t, c] += int(w)
    return num


def _minimal_mask(torus: Torus, heads: np.ndarray) -> np.ndarray:
    """``(N, C)``: channel on a shortest path from 0 to offset ``t``."""
    tails = np.arange(torus.num_channels) // (2 * torus.n)
    dist = torus.min_distance(np.arange(torus.N))
    to_t = torus.min_distance(torus.offset_table[heads])
    return (dist[tails][:, None] + 1 + to_t == dist[None, :]).T


def check_flows(torus: Torus, num: np.ndarray, den: int, heads: np.ndarray | None = None,
                acyclic: bool = True) -> None:
    """Raise UserError unless ``num / den`` is one unit of conserved flow per offset, acyclic
    unless ``acyclic`` is false (a routing given by its paths checks each path instead)."""
    N, C, J = torus.N, torus.num_channels, 2 * torus.n
    heads = channel_heads(torus) if heads is None else heads
    if num.shape != (N, C):
        raise UserError(f"flows have shape {num.shape}, expected {(N, C)} for {torus.name}")
    if den < 1:
        raise UserError(f"the denominator must be a positive integer (got {den})")
    if (num < 0).any():
        t, c = (int(x) for x in np.argwhere(num < 0)[0])
        raise UserError(f"negative flow on channel {torus.channel_label(c)} for offset {torus.label(t)}")
    if (num > den).any():
        t, c = (int(x) for x in np.argwhere(num > den)[0])
        raise UserError(f"flow above one unit on channel {torus.channel_label(c)} for offset {torus.label(t)}")
    tails = np.arange(C) // J
    net = np.zeros((N, N), dtype=np.int64)
    for t in range(N):
        net[t] = np.bincount(tails, weights=num[t], minlength=N) - np.bincount(heads, weights=num[t], minlength=N)
    want = np.zeros((N, N), dtype=np.int64)
    want[np.arange(1, N), 0] = den
    want[np.arange(1, N), np.arange(1, N)] = -den
    bad = np.argwhere(net != want)
    if len(bad):
        t, v = (int(x) for x in bad[0])
        raise UserError(f"flow to offset {torus.label(t)} is not conserved at node {torus.label(v)} "
                        f"(out - in = {net[t, v]}, expected {want[t, v]} over denominator {den})")
    cyclic = np.flatnonzero(~_acyclic_rows(torus, heads, num > 0)) if acyclic else []
    if len(cyclic):
        t = int(cyclic[0])
        raise UserError(f"flow to offset {torus.label(t)} contains a cycle (routes must not revisit a channel)")


def _flows_as_families(torus: Torus, heads: np.ndarray, num: np.ndarray, den: int) -> dict[int, PathFamily]:
    """Decompose every offset's integer flow into integer-weighted paths, as legs.

    Each path's legs are its maximal straight runs (one dimension, one direction); the weights
    of an offset are divided by their greatest common divisor; offset 0 is the empty route.

    Examples
    --------
    >>> t = Torus(3, 1)
    >>> fams = _flows_as_families(t, channel_heads(t), np.array([[0] * 6, [2, 0, 0, 0, 0, 0], [2, 2, 2, 0, 0, 0]]), 4)
    >>> fams[2].steps.tolist(), fams[2].weights.tolist()
    ([[2], [-1]], [1, 1])
    """
    owners, chans, w = _decompose_all(torus, heads, num, 0)
    out = {0: family_of_legs([[]], [1])}
    if not len(owners):
        return out
    hop = chans >= 0
    dims = (chans % (2 * torus.n)) // 2
    signs = 1 - 2 * (chans % 2)
    # a leg starts at the first hop and wherever the dimension or the direction changes
    key = np.where(hop, 2 * dims + (signs < 0), -1)
    start = hop.copy()
    start[:, 1:] &= key[:, 1:] != key[:, :-1]
    leg = np.cumsum(start, axis=1) - 1
    width = max(1, int(leg.max()) + 1)
    leg_dims = np.zeros((len(owners), width), dtype=np.int64)
    leg_steps = np.zeros((len(owners), width), dtype=np.int64)
    r, c = np.nonzero(hop)
    leg_dims[r, leg[r, c]] = dims[r, c]
    np.add.at(leg_steps, (r, leg[r, c]), signs[r, c])
    legs_of = (leg.max(axis=1) + 1)
    bounds = np.concatenate([[0], np.cumsum(np.bincount(owners, minlength=torus.N))])
    for t in range(1, torus.N):
        lo, hi = bounds[t], bounds[t + 1]
        if lo == hi:
            continue
        wide = max(1, int(legs_of[lo:hi].max()))   # as family_of_legs pads: to the most legs
        weights = w[lo:hi].astype(np.int64)
        out[t] = PathFamily(leg_dims[lo:hi, :wide].copy(), leg_steps[lo:hi, :wide].copy(),
                            weights // int(np.gcd.reduce(weights)))
    return out
