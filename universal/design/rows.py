"""Constraint rows of the design LPs of Towles, Dally & Boyd, "Throughput-centric routing
algorithm design" (SPAA 2003): the matching-dual rows of the worst case (eq. 8), the uniform
loads of the capacity (eq. 6) and the sampled permutations' loads of the average case (eq. 9),
each over the route variables of :mod:`universal.design.families`. :mod:`universal.design.lp`
assembles and solves them.
"""

from __future__ import annotations

import numpy as np

from universal.paths.torus.geometry import Torus

from .families import RouteVariables, _orbit_ids, channel_heads, symmetries

__all__ = ["worst_case_rows", "capacity_rows", "average_rows"]


def _class_channels(torus: Torus, tails: np.ndarray, j: int) -> np.ndarray:
    """Channel index of class number ``j`` (``2 * dim + (sign < 0)``) leaving each tail."""
    return tails * 2 * torus.n + j


def worst_case_rows(rv: RouteVariables, classes: int):
    """Rows ``[F_x | -U | -V | 0]`` of ``u_s + v_d >= f[d - s, c0 - s]`` for every class.

    Returns (matrix over x, matrix over the potentials, weight of each potential in the row
    ``sum u + sum v <= w``), with the potentials laid out class by class, ``u`` then ``v``.

    For a symmetric routing (one focus class) the weights ``W[s, d]`` are invariant under the
    symmetries that fix the focus channel, so averaging any feasible ``(u, v)`` over them gives
    a feasible pair of the same sum: one potential per orbit of nodes and one row per orbit of
    pairs lose nothing and cut these rows about ``2**(n-1) (n-1)!`` times (the symmetries that
    permute and reflect the other dimensions). A routing that is also invariant under reading
    its routes backwards (:func:`~universal.design.families.reversal_images`) has
    ``W[s, d] = W[e - d, e - s]``, ``e`` the head of the focus channel; the same averaging then
    gives ``v_d = u_(e - d)``: the ``v`` potentials go and the pairs ``(s, d)`` and
    ``(e - d, e - s)`` share a row, which halves the rows again.
    """
    from scipy import sparse
    t = rv.torus
    N, C = t.N, t.num_channels
    off = t.offset_table
    focus_only = rv.expand is not None and classes == 1
    reversal = focus_only and rv.reversal
    if focus_only:
        node_orbit, pair = _focus_orbits(t, reversal)
    else:
        node_orbit, pair = np.arange(N), np.arange(N * N)
    s, d = pair // N, pair % N
    m = int(node_orbit.max()) + 1
    sizes = np.bincount(node_orbit, minlength=m).astype(float)
    rows = np.arange(len(pair))
    if reversal:
        e = int(channel_heads(t)[_class_channels(t, np.zeros(1, dtype=np.int64), 0)[0]])
        idx = off[s, d] * C + _class_channels(t, off[s, 0], 0)
        u = sparse.csr_matrix((-np.ones(2 * len(pair)), (np.tile(rows, 2),
                               np.concatenate([node_orbit[s], node_orbit[off[d, e]]]))), shape=(len(pair), m))
        return rv.F[idx], u, 2 * sizes
    blocks, pots = [], []
    for j in range(classes):
        idx = off[s, d] * C + _class_channels(t, off[s, 0], j)      # 0 - s: the focus channel seen from s
        blocks.append(rv.F[idx])
        u = sparse.csr_matrix((-np.ones(len(pair)), (rows, j * 2 * m + node_orbit[s])), shape=(len(pair), classes * 2 * m))
        v = sparse.csr_matrix((-np.ones(len(pair)), (rows, j * 2 * m + m + node_orbit[d])),
                              shape=(len(pair), classes * 2 * m))
        pots.append(u + v)
    weights = np.tile(np.concatenate([sizes, sizes]), classes)
    return sparse.vstack(blocks, format="csr"), sparse.vstack(pots, format="csr"), weights


def _focus_orbits(torus: Torus, reversal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Orbits of the symmetries fixing node 0 and the focus channel (class 0 leaving node 0).

    With ``reversal``, the pairs ``(s, d)`` and ``(e - d, e - s)`` (``e`` the head of the focus
    channel) are one orbit as well (see :func:`_worst_case_rows`).

    Returns (orbit number of every node, one pair ``s * N + d`` of every orbit of pairs).
    """
    N = torus.N
    focus = int(_class_channels(torus, np.zeros(1, dtype=np.int64), 0)[0])
    maps = np.stack([node_map for node_map, chan_map in symmetries(torus) if chan_map[focus] == focus])
    pairs = np.arange(N * N)
    pair_images = maps[:, pairs // N] * N + maps[:, pairs % N]
    if reversal:
        mirror = torus.offset_table[:, int(channel_heads(torus)[focus])]     # v -> e - v
        pair_images = np.concatenate([pair_images, mirror[pair_images % N] * N + mirror[pair_images // N]])
    _, first = np.unique(pair_images.min(axis=0), return_index=True)
    return _orbit_ids(maps), np.sort(first)


def capacity_rows(rv: RouteVariables):
    """Rows ``(1/N) sum_t sum_tail f[t, (tail, class j)]`` for each class j: uniform load."""
    from scipy import sparse
    t = rv.torus
    N, C, J = t.N, t.num_channels, 2 * t.n
    cols = np.arange(N * C)
    cls = (cols % C) % J
    S = sparse.csr_matrix((np.full(N * C, 1.0 / N), (cls, cols)), shape=(J, N * C))
    return S @ rv.F


def average_rows(rv: RouteVariables, perms: np.ndarray):
    """Rows: load of every channel under every sampled permutation (M * C rows)."""
    from scipy import sparse
    t = rv.torus
    N, C, J = t.N, t.num_channels, 2 * t.n
    off = t.offset_table
    M = len(perms)
    src = np.arange(N)
    pair_off = off[src[None, :], perms]                 # (M, N): d_s - s
    tails = np.arange(N)
    rel = off[src[:, None], tails[None, :]]             # rel[s, tail] = tail - s
    m_idx, tail_idx, j_idx, s_idx = np.meshgrid(np.arange(M), tails, np.arange(J), src, indexing="ij")
    rows = (m_idx * C + tail_idx * J + j_idx).ravel()
    cols = (pair_off[m_idx, s_idx] * C + rel[s_idx, tail_idx] * J + j_idx).ravel()
    G = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(M * C, N * C))
    return G @ rv.F
