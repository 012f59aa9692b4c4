"""Path families of the routing-design LP: which routes from node 0 to each offset may carry flow.

Three families (Towles, Dally & Boyd, "Throughput-centric routing algorithm design", 2003, §5):

``all``
    Any route. The LP's variables are the channel flows ``f[t, c]`` of one unit from node 0 to
    offset ``t`` (§4 there: one flow variable per channel and commodity), conserved at every
    node; a flow decomposes into paths afterwards.
``minimal``
    Shortest routes only: the same flow variables, with the flow of a channel fixed at zero
    unless the channel lies on a shortest path from 0 to ``t``.
``2turn``
    Paths of one to three straight segments in alternating dimensions (at most two turns), each
    segment moving 1..k-1 hops one way, so no u-turn inside a segment (§5.2 there). These are
    weighted per path, so the variables are the path probabilities themselves; the two outer
    segments of an X-Y-X path may go opposite ways (they lie on different rows).

Every family is described to the LP the same way (:class:`RouteVariables`): a sparse matrix ``F``
mapping the route variables ``x`` to the channel flows ``f`` (flattened as ``t * C + c``), the
equality constraints that make ``x`` one unit of route per offset, and bounds.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from universal.errors import UserError
from universal.paths.torus.designed import channel_heads
from universal.paths.torus.geometry import Torus

__all__ = ["FAMILIES", "RouteVariables", "route_variables", "channel_heads", "two_turn_paths",
           "minimal_channels", "symmetries", "symmetrize", "reversal_images"]

#: The path families of the design LP and one line about each.
FAMILIES = {
    "all": "any route (channel-flow variables, conserved at every node)",
    "minimal": "shortest routes only (flow off the shortest-path channels fixed at zero)",
    "2turn": "at most two turns, no reversal inside a segment (path-probability variables)",
}


@dataclass
class RouteVariables:
    """The LP's view of a path family on one torus.

    Attributes
    ----------
    torus : Torus
    family : str
    F : scipy.sparse.csr_matrix, shape (N * C, nx)
        Channel flows ``f[t * C + c] = (F @ x)[t * C + c]``.
    A_eq, b_eq : sparse matrix and ndarray
        Equalities on ``x`` (conservation, or one unit of path probability per offset).
    bounds : ndarray, shape (nx, 2)
        Lower and upper bound of every route variable.
    paths : list or None
        ``2turn`` only: ``paths[j] = (offset, legs)`` of variable ``j``, legs as
        ``[(dim, signed steps), ...]``.
    expand : scipy.sparse matrix or None
        After :func:`symmetrize`: ``P`` with the original variables ``= P @ x``.
    reversal : bool
        After :func:`symmetrize` with ``reversal=True``: the routing is also invariant under
        :func:`reversal_images` (a route read backwards).
    """

    torus: Torus
    family: str
    F: object
    A_eq: object
    b_eq: np.ndarray
    bounds: np.ndarray
    paths: list | None = None
    expand: object = None
    reversal: bool = False

    @property
    def size(self) -> int:
        """Number of route variables."""
        return self.F.shape[1]


def minimal_channels(torus: Torus) -> np.ndarray:
    """Boolean ``(N, C)``: channel ``c`` lies on some shortest path from node 0 to offset ``t``.

    A channel ``u -> v`` does exactly when ``dist(0, u) + 1 + dist(v, t) = dist(0, t)``.

    Examples
    --------
    >>> minimal_channels(Torus(4, 1)).sum(axis=1).tolist()   # offset 2: both ways round
    [0, 1, 4, 1]
    """
    C = torus.num_channels
    tails = np.arange(C) // (2 * torus.n)
    heads = channel_heads(torus)
    dist = torus.min_distance(np.arange(torus.N))
    off = torus.offset_table                            # off[a, b] = b - a
    to_t = torus.min_distance(off[heads][:, :])         # (C, N): dist(head, t)
    return (dist[tails][:, None] + 1 + to_t == dist[None, :]).T


def _incidence(torus: Torus):
    """Node-channel incidence ``B[v, c]`` = +1 if ``v`` is the tail of ``c``, -1 if its head."""
    from scipy import sparse
    C = torus.num_channels
    tails = np.arange(C) // (2 * torus.n)
    heads = channel_heads(torus)
    rows = np.concatenate([tails, heads])
    cols = np.concatenate([np.arange(C), np.arange(C)])
    vals = np.concatenate([np.ones(C), -np.ones(C)])
    return sparse.csr_matrix((vals, (rows, cols)), shape=(torus.N, C))


def _flow_variables(torus: Torus, family: str) -> RouteVariables:
    from scipy import sparse
    N, C = torus.N, torus.num_channels
    B = _incidence(torus)
    A_eq = sparse.kron(sparse.identity(N, format="csr"), B, format="csr")
    b_eq = np.zeros(N * N)
    t = np.arange(1, N)
    b_eq[t * N] += 1.0            # one unit leaves node 0 ...
    b_eq[t * N + t] -= 1.0        # ... and arrives at t
    upper = np.ones((N, C))
    upper[0] = 0.0                # a packet to itself does not move
    if family == "minimal":
        upper *= minimal_channels(torus)
    bounds = np.stack([np.zeros(N * C), upper.ravel()], axis=1)
    return RouteVariables(torus, family, sparse.identity(N * C, format="csr"), A_eq, b_eq, bounds)


def two_turn_paths(torus: Torus) -> list[tuple[int, list[tuple[int, int]]]]:
    """Every path from node 0 with one to three straight segments in alternating dimensions.

    A segment is ``(dim, signed steps)`` with ``1 <= |steps| <= k-1``; consecutive segments
    change dimension. The offset 0 gets the empty path.

    Returns
    -------
    list of (offset, segments)

    Examples
    --------
    >>> paths = two_turn_paths(Torus(3, 2))
    >>> sum(1 for t, _ in paths if t == 4)       # to (1, 1): 4 XY, 4 YX, 8 XYX, 8 YXY
    24
    """
    k, n = torus.k, torus.n
    lengths = [s for s in range(-(k - 1), k) if s != 0]
    out = [(0, [])]
    for count in (1, 2, 3):
        for dims in itertools.product(range(n), repeat=count):
            if any(a == b for a, b in zip(dims, dims[1:])):
                continue
            for steps in itertools.product(lengths, repeat=count):
                disp = np.zeros(n, dtype=np.int64)
                for d, s in zip(dims, steps):
                    disp[d] += s
                out.append((int(torus.node(disp)), list(zip(dims, steps))))
    return out


def _path_channels(torus: Torus, segments: list[tuple[int, int]]) -> list[int]:
    """Channel indices crossed by a path from node 0 given by its segments."""
    pos = np.zeros(torus.n, dtype=np.int64)
    out = []
    for dim, steps in segments:
        sign = 1 if steps > 0 else -1
        for _ in range(abs(steps)):
            out.append(int(torus.channel(torus.node(pos), dim, sign)))
            pos[dim] += sign
    return out


def _path_variables(torus: Torus) -> RouteVariables:
    from scipy import sparse
    N, C = torus.N, torus.num_channels
    paths = two_turn_paths(torus)
    rows, cols = [], []
    for j, (t, segs) in enumerate(paths):
        chans = _path_channels(torus, segs)
        rows.extend(t * C + c for c in chans)
        cols.extend([j] * len(chans))
    P = len(paths)
    F = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(N * C, P))
    offsets = np.array([t for t, _ in paths])
    A_eq = sparse.csr_matrix((np.ones(P), (offsets, np.arange(P))), shape=(N, P))
    bounds = np.stack([np.zeros(P), np.ones(P)], axis=1)
    return RouteVariables(torus, "2turn", F, A_eq, np.ones(N), bounds, paths)


def route_variables(torus: Torus, family: str) -> RouteVariables:
    """The route variables of path family ``family`` (``all``, ``minimal`` or ``2turn``).

    Examples
    --------
    >>> rv = route_variables(Torus(4, 2), "all")
    >>> rv.size, rv.A_eq.shape
    (1024, (256, 1024))
    """
    if family not in FAMILIES:
        raise UserError(f"unknown path family {family!r} (known: {', '.join(FAMILIES)})")
    if family == "2turn":
        return _path_variables(torus)
    return _flow_variables(torus, family)


def symmetries(torus: Torus) -> list[tuple[np.ndarray, np.ndarray]]:
    """The automorphisms of the torus that fix node 0: permute the dimensions, reflect any.

    Returns
    -------
    list of (node_map, channel_map)
        ``node_map[v]`` and ``channel_map[c]`` are the images of node ``v`` and channel ``c``;
        there are ``2**n * n!`` of them.

    Examples
    --------
    >>> len(symmetries(Torus(4, 2)))
    8
    """
    n, k = torus.n, torus.k
    C = torus.num_channels
    tails, dims, signs = torus.channel_parts(np.arange(C))
    out = []
    for perm in itertools.permutations(range(n)):
        p = np.array(perm)
        for refl in itertools.product((1, -1), repeat=n):
            r = np.array(refl)
            image = np.zeros_like(torus.coords)
            image[:, p] = (torus.coords * r) % k
            node_map = image @ torus.powers
            channel_map = torus.channel(node_map[tails], p[dims], r[dims] * signs)
            out.append((node_map.astype(np.int64), np.asarray(channel_map, dtype=np.int64)))
    return out


def _orbit_ids(images: np.ndarray) -> np.ndarray:
    """Orbit number of every index, given its images under every group element (G, size)."""
    rep = images.min(axis=0)
    _, ids = np.unique(rep, return_inverse=True)
    return ids


def reversal_images(rv: RouteVariables) -> np.ndarray:
    """Image of every route variable when each route is read backwards.

    A route from ``0`` to ``t`` walked backwards is a route from ``t`` to ``0``; the point
    reflection ``v -> t - v`` carries it back onto a route from ``0`` to ``t`` of the same
    length. On channel flows this sends the flow of offset ``t`` on ``u -> v`` to
    ``t - v -> t - u`` (same dimension and direction); on a two-turn path it reverses the order
    of the segments. A permutation's loads under the reversed routing are those of the inverse
    permutation under the original one on the reversed channels, so the worst case, the uniform
    load and the locality do not change: like the automorphisms of :func:`symmetries`, this map
    may be averaged out of any optimum of the worst-case and capacity LPs.

    Returns
    -------
    ndarray of int, shape (size,)
        ``images[i]``: the variable that variable ``i`` becomes (an involution).

    Examples
    --------
    >>> rv = route_variables(Torus(4, 1), "all")
    >>> img = reversal_images(rv)
    >>> bool((img[img] == np.arange(rv.size)).all())
    True
    """
    t = rv.torus
    N, C, J = t.N, t.num_channels, 2 * t.n
    if rv.paths is not None:
        key = {(o, tuple(s)): j for j, (o, s) in enumerate(rv.paths)}
        return np.array([key[(o, tuple(reversed(s)))] for o, s in rv.paths], dtype=np.int64)
    idx = np.arange(N * C)
    offset, chan = idx // C, idx % C
    heads = channel_heads(t)
    new_tail = t.offset_table[heads[chan], offset]            # t - head
    return offset * C + new_tail * J + chan % J


def symmetrize(rv: RouteVariables, reversal: bool = True) -> RouteVariables:
    """The same family restricted to routings invariant under every symmetry fixing node 0.

    A variable per orbit of the original ones replaces them (``x = P y``). The costs of the
    capacity and worst-case LPs and the locality are convex and invariant under these
    symmetries, so averaging any optimum over the group gives a symmetric optimum of the same
    value: the restriction loses nothing there (Towles, Dally & Boyd 2003, §4). It is not
    used for the average case, whose sampled permutations are not symmetric.

    Parameters
    ----------
    rv : RouteVariables
    reversal : bool
        Also require invariance under :func:`reversal_images` (reading every route backwards),
        which halves the variables again; the objectives above are invariant under it too.

    Examples
    --------
    >>> rv = symmetrize(route_variables(Torus(4, 2), "all"))
    >>> rv.size < 1024
    True
    """
    from scipy import sparse
    t = rv.torus
    N, C = t.N, t.num_channels
    group = symmetries(t)
    if rv.paths is None:
        idx = np.arange(N * C)
        images = np.stack([node_map[idx // C] * C + chan_map[idx % C] for node_map, chan_map in group])
    else:
        key = {(o, tuple(s)): j for j, (o, s) in enumerate(rv.paths)}
        images = np.empty((len(group), len(rv.paths)), dtype=np.int64)
        for g, (node_map, _) in enumerate(group):
            perm, refl = _group_parts(t, node_map)
            for j, (o, segs) in enumerate(rv.paths):
                images[g, j] = key[(int(node_map[o]), tuple((int(perm[d]), int(refl[d] * s)) for d, s in segs))]
    if reversal:
        # the reversal commutes with the automorphisms: the group is their product
        images = np.concatenate([images, reversal_images(rv)[images]])
    orbit = _orbit_ids(images)
    n_orb = int(orbit.max()) + 1
    P = sparse.csr_matrix((np.ones(len(orbit)), (np.arange(len(orbit)), orbit)), shape=(len(orbit), n_orb))
    A_eq = (rv.A_eq @ P).tocsr()
    keep = _distinct_rows(A_eq, rv.b_eq)
    first = np.zeros(n_orb, dtype=np.int64)
    first[orbit[::-1]] = np.arange(len(orbit))[::-1]          # one member of each orbit
    return RouteVariables(t, rv.family, (rv.F @ P).tocsr(), A_eq[keep], rv.b_eq[keep],
                          rv.bounds[first], rv.paths, expand=P, reversal=reversal)


def _distinct_rows(A, b: np.ndarray) -> np.ndarray:
    """Indices of one row of ``A x = b`` per class of rows equal up to their sign.

    Symmetric copies of a conservation row become identical, and the reversal turns the row of
    a node into the negated row of its mirror image: one of each is enough.
    """
    A.eliminate_zeros()            # an in and an out channel in one orbit cancel
    A.sort_indices()               # a product's column indices come unsorted: copies would differ
    rows_key = {}
    for i, (a, e) in enumerate(zip(A.indptr[:-1], A.indptr[1:])):
        data = A.data[a:e]
        if not len(data) and b[i] == 0:
            continue               # 0 = 0
        sign = -1.0 if len(data) and data[0] < 0 else 1.0
        key = (A.indices[a:e].tobytes(), np.round(sign * data, 12).tobytes(), round(float(sign * b[i]), 12))
        rows_key.setdefault(key, i)
    return np.sort(np.fromiter(rows_key.values(), dtype=np.int64))


def _group_parts(torus: Torus, node_map: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dimension permutation, reflection signs) of a symmetry given by its node map."""
    n = torus.n
    perm = np.zeros(n, dtype=np.int64)
    refl = np.ones(n, dtype=np.int64)
    for d in range(n):
        unit = np.zeros(n, dtype=np.int64)
        unit[d] = 1
        img = torus.coords[node_map[torus.node(unit)]]
        nz = int(np.flatnonzero(img)[0])
        perm[d] = nz
        refl[d] = 1 if img[nz] == 1 else -1
    return perm, refl
