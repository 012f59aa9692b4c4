"""Routings given by data rather than a closed form: channel flows, and mixtures of routings.

A *flow routing* describes, relative to the source (SPEC §10), one unit of flow from node 0 to
every offset ``t`` over the channels of the torus, as non-negative integers over one common
denominator ``D`` (so loads, worst cases and locality stay exact rationals). The flow must be
conserved at every node and acyclic (a route never revisits a channel). It is the form in which
:mod:`universal.design` hands over an LP optimum and in which ``lp:file=PATH`` reads a saved one
(:mod:`universal.paths.torus.routingfile`).

* Exact pair loads: the flow of each offset is decomposed into paths with integer weights (any
  decomposition gives the same channel flows, hence the same loads and lengths).
* Routes for the packet engine: each packet walks from its source and, at every node, leaves by a
  channel chosen with probability proportional to that channel's flow for its offset (Towles,
  Dally & Boyd 2003, §4: paths are recovered from the flows). The walk crosses each channel with
  exactly the probability the flow gives it.

A routing designed over a *path family* (2TURN: at most two turns) is kept as its weighted paths
instead (:func:`path_families`, ``FlowRouting(..., paths=...)``): the union of one offset's
two-turn paths may contain a directed cycle, and cancelling it, or walking the summed flow,
splices the paths into others that are not in the family (shorter ones, which is how a 2TURN
routing came out 0.07% more local than 2TURN allows). With paths given, the pair loads and the
locality are those of exactly these paths, each route the engine draws is one of them, and a
route, not the union, must not revisit a node.

A *mixture* ``mix:dor=0.25,ival=0.75`` routes each packet with routing ``i`` with probability
``w_i`` (Towles, Dally & Boyd 2003, eqs. 11-14): loads and locality are the weighted sums.

Registered names (:data:`universal.paths.torus.algorithms.ROUTING_FACTORIES`): ``lp:file=PATH``,
``mix:NAME=W,...``, and ``2turn`` / ``2turna`` (designed once per torus size by
:mod:`universal.design` and cached on disk; the design layer installs the designer in
:data:`DESIGNER` when it is imported, so this layer never imports it).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np

from universal.errors import UserError
from universal.registry import Spec, check_known_params

from .algorithms import ROUTING_FACTORIES, PathFamily, Routing, get_routing
from .geometry import Torus

__all__ = ["FlowRouting", "MixtureRouting", "DENOMINATOR", "integer_flows", "path_families", "family_of_legs",
           "channel_heads"]

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


def _decompose(torus: Torus, heads: np.ndarray, flow: np.ndarray, dest: int,
               eps: float) -> list[tuple[list[int], float]]:
    """Paths ``(channels, weight)`` of one offset's flow, heaviest channel first at every node.

    Cycles met on the way are cancelled (that only lowers loads). With float flows (``eps > 0``)
    a walk that strands on the solver's round-off is dropped; with integer flows it is an error.
    """
    J = 2 * torus.n
    flow = flow.astype(np.float64 if eps > 0 else object).copy()
    paths = []
    while dest != 0 and max(flow[0:J]) > eps:
        node, chans, reached = 0, [], {0: 0}
        while node != dest:
            out = flow[node * J:(node + 1) * J]
            j = max(range(J), key=lambda i: out[i])
            if out[j] <= eps:
                if eps == 0:
                    raise UserError(f"flow to offset {torus.label(dest)} is not conserved at node {torus.label(node)}")
                break
            chans.append(node * J + j)
            node = int(heads[node * J + j])
            if node in reached:                                  # a cycle: cancel it, go on
                i = reached[node]
                m = min(flow[x] for x in chans[i:])
                for x in chans[i:]:
                    flow[x] -= m
                del chans[i:]
                reached = {v: p for v, p in reached.items() if p <= i}
                continue
            reached[node] = len(chans)
        if not chans:
            break
        m = min(flow[x] for x in chans)
        for x in chans:
            flow[x] -= m
        if node == dest:
            paths.append((chans, m))
    return paths


def _find_cycle(torus: Torus, heads: np.ndarray, used: np.ndarray) -> list[int] | None:
    """Channels of one directed cycle among the ``used`` channels, or None (iterative DFS)."""
    J = 2 * torus.n
    state = np.zeros(torus.N, dtype=np.int8)            # 0 new, 1 on the stack, 2 done
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
            head = int(heads[c])
            if state[head] == 1:                         # back edge: the cycle closes at head
                start = next(i for i, (v, _) in enumerate(stack) if v == head)
                return via[start:] + [c]
            if state[head] == 0:
                state[head] = 1
                stack.append((head, 0))
                via.append(c)
    return None


def _cancel_cycles(torus: Torus, heads: np.ndarray, flow: np.ndarray, eps: float) -> np.ndarray:
    """Remove every circulation from one offset's flow (loads only drop; conservation holds)."""
    flow = np.where(flow > eps, flow, 0.0)
    while (cycle := _find_cycle(torus, heads, flow > 0)) is not None:
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
    out = np.zeros(flows.shape, dtype=np.int64)
    for t in range(1, torus.N):
        paths = _decompose(torus, heads, _cancel_cycles(torus, heads, flows[t], eps), t, eps)
        w = np.array([m for _, m in paths], dtype=np.float64)
        if not len(w):
            raise UserError(f"no flow reaches offset {torus.label(t)}")
        exact = w / w.sum() * den
        num = np.floor(exact).astype(np.int64)
        short = den - int(num.sum())
        num[np.argsort(-(exact - num), kind="stable")[:short]] += 1
        for (chans, _), q in zip(paths, num):
            out[t, chans] += q
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


class FlowRouting(Routing):
    """A relative routing on one torus given by integer channel flows over a common denominator.

    Parameters
    ----------
    torus : Torus
    num : ndarray of int64, shape (N, C)
        ``num[t, c] / den``: probability that a packet from 0 to offset ``t`` crosses channel ``c``.
    den : int
    name, summary : str
    meta : dict, optional
        What produced it (objective, path family, the LP's figures), kept in saved files.
    paths : dict of int to PathFamily, optional
        The routing's paths themselves, per offset, weights summing to ``den`` (a design over a
        path family, :func:`path_families`). Then ``num`` must be their flows; the loads, the
        locality and the engine's routes use exactly these paths, and each path (rather than the
        union of an offset's paths) must not revisit a node.

    Examples
    --------
    >>> t = Torus(3, 1)
    >>> r = FlowRouting(t, np.array([[0] * 6, [2, 0, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0]]), 2, "tiny")
    >>> r.family(t, 2).steps.tolist(), r.minimal
    ([[-1]], True)
    """

    reflection_symmetric = False

    def __init__(self, torus: Torus, num: np.ndarray, den: int, name: str, summary: str = "",
                 meta: dict | None = None, paths: dict[int, PathFamily] | None = None) -> None:
        self.torus = torus
        self.num = np.asarray(num, dtype=np.int64)
        self.den = int(den)
        self.name = name
        self.summary = summary or ("designed routing given by its weighted paths" if paths is not None
                                   else "designed routing given by its channel flows")
        self.meta = dict(meta or {})
        self._heads = channel_heads(torus)
        self._families: dict[int, PathFamily] = {}
        self.paths = paths
        self._picks: dict[int, np.ndarray] = {}
        check_flows(torus, self.num, self.den, self._heads, acyclic=paths is None)
        if paths is not None and not getattr(self, "_flows_are_the_paths", False):
            self._check_paths(paths)
        self.minimal = bool(np.all((self.num == 0) | _minimal_mask(torus, self._heads)))

    @classmethod
    def from_paths(cls, torus: Torus, paths: dict[int, PathFamily], den: int, name: str,
                   summary: str = "", meta: dict | None = None) -> "FlowRouting":
        """The routing of per-offset weighted paths (weights summing to ``den``), flows derived.

        Examples
        --------
        >>> t = Torus(3, 1)
        >>> r = FlowRouting.from_paths(t, path_families(t, np.ones(2), [(1, [(0, 1)]), (2, [(0, -1)])], 2), 2, "p")
        >>> r.num.tolist()
        [[0, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0]]
        """
        num = _family_flows(torus, paths)
        if max((int(v) for v in num.ravel()), default=0) > 2 ** 62:
            raise UserError("path weights too large")
        routing = cls.__new__(cls)
        routing._flows_are_the_paths = True                # just derived from them: no second walk
        routing.__init__(torus, num.astype(np.int64), den, name, summary, meta, paths=paths)
        return routing

    def _check_paths(self, paths: dict[int, PathFamily]) -> None:
        t = self.torus
        for off in range(t.N):
            fam = paths.get(off)
            if fam is not None and fam.den != self.den:
                raise UserError(f"the path weights of offset {t.label(off)} sum to {fam.den}, "
                                f"not to the denominator {self.den}")
        if not np.array_equal(_family_flows(t, paths).astype(object), self.num.astype(object)):
            raise UserError("the channel flows are not the flows of the given paths")

    def _check_torus(self, torus: Torus) -> None:
        if (torus.k, torus.n) != (self.torus.k, self.torus.n):
            raise UserError(f"routing {self.name} was designed for {self.torus.name}, not {torus.name}")

    def family(self, torus: Torus, offset: int) -> PathFamily:
        """Integer-weighted paths of offset ``offset`` (a decomposition of its flow)."""
        self._check_torus(torus)
        offset = int(offset)
        if offset not in self._families:
            if self.paths is not None:
                fam = self.paths[offset]
                g = int(np.gcd.reduce(fam.weights))
                self._families[offset] = PathFamily(fam.dims, fam.steps, fam.weights // g)
            else:
                self._families[offset] = _paths_as_family(torus, self._heads, self.num[offset], offset, self.den)
        return self._families[offset]

    def sample_routes(self, torus, sources, dests, rng) -> list[np.ndarray]:
        """Routes drawn from the given paths by weight or, for a routing given by its flows, by
        walking the flow, each channel with probability proportional to its flow."""
        self._check_torus(torus)
        if self.paths is not None:
            return self._sample_paths(torus, sources, dests, rng)
        J = 2 * torus.n
        sources = np.asarray(sources, dtype=np.int64)
        offs = np.asarray(torus.sub(dests, sources), dtype=np.int64).reshape(-1)
        pos = np.zeros(len(offs), dtype=np.int64)              # position relative to the source
        walks = [pos.copy()]
        for _ in range(torus.num_channels + 1):
            active = pos != offs
            if not active.any():
                break
            out = self.num[offs[active][:, None], pos[active][:, None] * J + np.arange(J)[None, :]]
            cum = np.cumsum(out, axis=1)
            r = rng.integers(0, cum[:, -1])
            j = (r[:, None] >= cum).sum(axis=1)
            pos = pos.copy()
            pos[active] = self._heads[pos[active] * J + j]
            walks.append(pos)
        rel = np.stack(walks, axis=1)                          # (P, steps + 1)
        routes = []
        for i, s in enumerate(sources):
            steps = rel[i]
            end = int(np.argmax(steps == offs[i])) if offs[i] != 0 else 0
            routes.append(np.asarray(torus.add(steps[:end + 1], np.full(end + 1, s)), dtype=np.int64))
        return routes


    def _sample_paths(self, torus, sources, dests, rng) -> list[np.ndarray]:
        """One of the offset's paths per packet, with probability weight / den."""
        from .algorithms import legs_to_nodes
        sources = np.asarray(sources, dtype=np.int64).ravel()
        offs = np.asarray(torus.sub(dests, sources), dtype=np.int64).reshape(-1)
        draws = rng.integers(0, self.den, size=len(offs))
        routes: list = [None] * len(offs)
        for off in np.unique(offs).tolist():
            idx = np.flatnonzero(offs == off)
            fam = self.paths[off]
            pick = np.searchsorted(np.cumsum(fam.weights), draws[idx], side="right")
            for i, p in zip(idx.tolist(), pick.tolist()):
                routes[i] = legs_to_nodes(torus, int(sources[i]), fam.dims[p], fam.steps[p])
        return routes


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
    for t in range(N if acyclic else 0):
        if _has_cycle(N, tails, heads, num[t] > 0):
            raise UserError(f"flow to offset {torus.label(t)} contains a cycle (routes must not revisit a channel)")


def _has_cycle(N: int, tails: np.ndarray, heads: np.ndarray, used: np.ndarray) -> bool:
    """Kahn's algorithm on the channels carrying flow."""
    t, h = tails[used], heads[used]
    indeg = np.bincount(h, minlength=N)
    out = [[] for _ in range(N)]
    for a, b in zip(t.tolist(), h.tolist()):
        out[a].append(b)
    stack = [v for v in range(N) if indeg[v] == 0]
    seen = 0
    while stack:
        v = stack.pop()
        seen += 1
        for w in out[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                stack.append(w)
    return seen < N


def _paths_as_family(torus: Torus, heads: np.ndarray, num: np.ndarray, dest: int, den: int) -> PathFamily:
    """Decompose one offset's integer flow into integer-weighted paths, as legs."""
    paths = _decompose(torus, heads, num.astype(object), dest, 0)
    if dest == 0:
        paths = [([], den)]
    w = np.array([int(m) for _, m in paths], dtype=np.int64)
    return family_of_legs([_channels_to_legs(torus, chans) for chans, _ in paths], w // int(np.gcd.reduce(w)))


def _channels_to_legs(torus: Torus, chans: list[int]) -> list[tuple[int, int]]:
    """Maximal straight runs ``(dim, signed steps)`` of a channel sequence."""
    legs: list[tuple[int, int]] = []
    for c in chans:
        _, dim, sign = (int(x) for x in torus.channel_parts(c))
        if legs and legs[-1][0] == dim and np.sign(legs[-1][1]) == sign:
            legs[-1] = (dim, legs[-1][1] + sign)
        else:
            legs.append((dim, sign))
    return legs


class MixtureRouting(Routing):
    """Route each packet with routing ``i`` with probability ``w_i`` (TDB eq. 11).

    Examples
    --------
    >>> m = get_routing("mix:dor=0.25,ival=0.75")
    >>> [(r.name, str(w)) for r, w in m.parts]
    [('dor', '1/4'), ('ival', '3/4')]
    """

    def __init__(self, parts: list[tuple[Routing, Fraction]], name: str) -> None:
        self.parts = parts
        self.name = name
        self.summary = "mixture: " + ", ".join(f"{r.name} with probability {w}" for r, w in parts)
        self.minimal = all(r.minimal for r, _ in parts)
        self.dimension_symmetric = all(r.dimension_symmetric for r, _ in parts)
        self.reflection_symmetric = all(r.reflection_symmetric for r, _ in parts)

    def family(self, torus: Torus, offset: int) -> PathFamily:
        fams = [(r.family(torus, offset), w) for r, w in self.parts]
        scale = [w / f.den for f, w in fams]
        common = np.lcm.reduce([s.denominator for s in scale])
        L = max(f.dims.shape[1] for f, _ in fams)
        pad = lambda a: np.pad(a, ((0, 0), (0, L - a.shape[1])))  # noqa: E731
        weights = np.concatenate([f.weights * int(s * common) for (f, _), s in zip(fams, scale)])
        keep = weights > 0
        dims = np.concatenate([pad(f.dims) for f, _ in fams])[keep]
        steps = np.concatenate([pad(f.steps) for f, _ in fams])[keep]
        w = weights[keep]
        return PathFamily(dims, steps, w // int(np.gcd.reduce(w)))

    def sample_routes(self, torus, sources, dests, rng) -> list[np.ndarray]:
        """Draw the routing of each packet, then its route from that routing."""
        sources = np.asarray(sources, dtype=np.int64)
        dests = np.asarray(dests, dtype=np.int64)
        probs = np.array([float(w) for _, w in self.parts])
        pick = rng.choice(len(self.parts), size=len(sources), p=probs / probs.sum())
        routes: list = [None] * len(sources)
        for i, (r, _) in enumerate(self.parts):
            idx = np.flatnonzero(pick == i)
            if len(idx):
                for j, route in zip(idx, r.sample_routes(torus, sources[idx], dests[idx], rng)):
                    routes[j] = route
        return routes


def _mixture(spec: Spec) -> Routing:
    if spec.arg is not None or not spec.params:
        raise UserError(f"{spec.text!r}: give the mixture as mix:ROUTING=WEIGHT,... (e.g. mix:dor=0.25,ival=0.75)")
    parts = []
    for name, text in spec.params.items():
        if len(text) > 40 or "e" in text.lower():
            # Fraction("1e999999") builds a million-digit integer: weights are plain decimals or a/b
            raise UserError(f"{spec.text[:60]!r}: weight {text[:20]!r} of {name} must be a plain decimal or "
                            f"a fraction such as 1/3 (at most 40 characters)")
        try:
            w = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise UserError(f"{spec.text!r}: weight {text!r} of {name} is not a number") from None
        if w < 0:
            raise UserError(f"{spec.text!r}: weight of {name} is negative")
        if name in ("mix", "lp"):
            raise UserError(f"{spec.text!r}: a mixture takes routings by plain name ({name} is not one)")
        parts.append((get_routing(name), w))
    total = sum(w for _, w in parts)
    if total != 1:
        raise UserError(f"{spec.text!r}: the weights of a mixture must sum to 1 (they sum to {total})")
    return MixtureRouting(parts, spec.text)


def _designed(name: str, objective: str):
    def factory(spec: Spec) -> Routing:
        check_known_params(spec, set())
        if spec.arg is not None:
            raise UserError(f"routing {name!r} takes no argument (got {spec.arg!r})")
        return DesignedByName(name, objective)
    return factory


#: The function that designs (or reads from its cache) a routing by name:
#: ``DESIGNER(torus, objective, paths, name) -> FlowRouting``. The design layer
#: (:mod:`universal.design.cache`) installs it when imported; this layer never imports that one.
DESIGNER: Callable[[Torus, str, str, str], FlowRouting] | None = None


class DesignedByName(Routing):
    """``2turn`` / ``2turna``: the LP-designed 2TURN routing of whatever torus it is used on.

    The torus is only known when the routing is used, so the flows are designed (or read from the
    cache) on first use per torus, by :data:`DESIGNER` (:func:`universal.design.cache.cached_design`).
    """

    reflection_symmetric = False

    def __init__(self, name: str, objective: str) -> None:
        self.name = name
        self.objective = objective
        self.summary = (f"2TURN optimised for the {objective} throughput, then locality "
                        "(Towles, Dally & Boyd 2003), designed by LP and cached")
        self._by_torus: dict[tuple[int, int], FlowRouting] = {}

    def on(self, torus: Torus) -> FlowRouting:
        """The designed routing of ``torus`` (solved once, then read from the disk cache)."""
        key = (torus.k, torus.n)
        if key not in self._by_torus:
            if DESIGNER is None:
                raise UserError(f"routing {self.name!r} needs the LP designer: import universal.design first")
            self._by_torus[key] = DESIGNER(torus, self.objective, "2turn", self.name)
        return self._by_torus[key]

    def family(self, torus, offset):
        return self.on(torus).family(torus, offset)

    def sample_routes(self, torus, sources, dests, rng):
        return self.on(torus).sample_routes(torus, sources, dests, rng)


ROUTING_FACTORIES["mix"] = ("interpolated routing: mix:dor=0.25,ival=0.75 (weights sum to 1)", _mixture)
ROUTING_FACTORIES["2turn"] = ("2TURN: at most two turns, worst-case optimal then shortest (LP, cached)",
                              _designed("2turn", "worst-case"))
ROUTING_FACTORIES["2turna"] = ("2TURNA: at most two turns, average-case optimal then shortest (LP, cached)",
                               _designed("2turna", "average-case"))
