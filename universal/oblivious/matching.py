"""Exact maximum-weight perfect matching with rational weights, certified by LP duality.

The worst case of an oblivious routing algorithm is the weight of a maximum-weight perfect
matching whose edge ``(s, d)`` weighs the pair load ``gamma_c(s, d)`` (Towles, "Finding
worst-case permutations for oblivious routing algorithms", §3). The loads are rationals
``num / den``; on big tori their common denominator ``D`` (the lcm of all ``den``) has close to
100 bits (ROMM on the 64-ary 2-cube), so integer weights over ``D`` do not fit SciPy's float64
``linear_sum_assignment``. This module gets the matching in float and then *proves* it optimal
in exact integer arithmetic.

Why the result is exact
-----------------------
For a square weight matrix ``W`` and a permutation ``pi``, if there are numbers ``u`` (rows)
and ``v`` (columns) with

* ``u[s] + v[d] >= W[s, d]`` for every pair (dual feasibility), and
* ``u[s] + v[pi[s]] == W[s, pi[s]]`` for every row (complementary slackness),

then every perfect matching ``sigma`` weighs
``sum W[s, sigma[s]] <= sum u + sum v = sum W[s, pi[s]]``: ``pi`` is a maximum (weak LP
duality of the assignment problem; e.g. Schrijver, "Combinatorial Optimization", Thm. 17.5).
Here ``u`` and ``v`` are Python integers in units of ``1/D``, and

1. the equalities hold by construction: ``v[pi[s]]`` is *defined* as ``W[s, pi[s]] - u[s]``;
   the ``u`` are chained along a shortest-path tree of the exchange graph (found in float,
   only to choose the tree), so every tree edge is exactly tight;
2. the inequalities are checked for all ``n**2`` pairs: in float64 the reduced cost
   ``r = u + v - W`` is computed from correctly rounded inputs with three more roundings, so
   its error is below ``2**-50 * (|u| + |v| + |W|)``; pairs whose float ``r`` exceeds the far
   larger margin ``2**-40 * (max|u| + max|v| + max W)`` are certainly non-negative, and every
   other pair is checked again in exact integer arithmetic.

If some exact reduced cost is negative, the potentials are repaired by exact Bellman-Ford
relaxations (each one strict, in integers); a cycle among the parent pointers is then a
negative cycle of the exchange graph, i.e. a strictly heavier matching, which is taken
(its gain is checked exactly) before certifying again. So the answer is always a certified
maximum; in practice SciPy's float matching is already optimal and no repair is needed.

Rows and columns whose weights are all zero are dropped first (most sources cannot load a
given channel at all): with non-negative weights on a complete bipartite graph any matching of
the rest extends to a perfect matching of the same weight.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["ExactMatching", "Certificate", "certify", "max_weight_matching"]

#: Relative margin of the float screen; the float error of a reduced cost is below 2**-50.
_MARGIN = 2.0 ** -40


@dataclass
class ExactMatching:
    """A maximum-weight perfect matching and its exact weight.

    Attributes
    ----------
    permutation : ndarray of int64
        ``permutation[s]`` is the column matched to row ``s``.
    weight : Fraction
        Exact total weight.
    repairs : int
        Exact improving cycles that had to be taken after the float matching (usually 0).
    exact_checks : int
        Pairs whose reduced cost the float screen could not decide (checked exactly).
    """

    permutation: np.ndarray
    weight: Fraction
    repairs: int = 0
    exact_checks: int = 0


@dataclass
class Certificate:
    """Outcome of :func:`certify` for one permutation of a square matrix.

    Attributes
    ----------
    optimal : bool
        True when exact dual potentials prove the permutation maximum.
    u, v : list of int
        The potentials in units of ``1/D`` (when ``optimal``).
    cycle : list of int
        Otherwise rows ``c_0, c_1, ...`` of an improving cycle: moving row ``c_i`` to the column
        of ``c_{i+1}`` (cyclically) makes the matching strictly heavier.
    exact_checks : int
        Pairs checked in exact arithmetic.
    """

    optimal: bool
    u: list
    v: list
    cycle: list
    exact_checks: int = 0


class _Weights:
    """Square matrix ``num / den`` with exact integer entries over the lcm ``D`` on demand."""

    def __init__(self, num: np.ndarray, den: np.ndarray) -> None:
        self.num = num
        uniq, inv = np.unique(den, return_inverse=True)
        self.D = int(np.lcm.reduce(np.array([int(x) for x in uniq], dtype=object)))
        self.scale = np.array([self.D // int(x) for x in uniq], dtype=object)   # D / den
        self.den_index = inv.reshape(den.shape)
        self.float = num / den.astype(np.float64)

    def exact(self, rows, cols) -> np.ndarray:
        """Entries ``W[rows, cols] * D`` as Python ints (object array)."""
        return self.num[rows, cols].astype(object) * self.scale[self.den_index[rows, cols]]

    def entry(self, s: int, d: int) -> int:
        return int(self.num[s, d]) * self.scale[self.den_index[s, d]]


def _float_tree(S: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Parents of a shortest-path forest of the exchange graph, by Bellman-Ford in float.

    Row ``s`` can take the column of row ``t`` at cost ``W[t, pi[t]] - W[s, pi[t]]``; the
    potentials ``u`` are shortest distances from a virtual root joined to every row at cost 0.
    A parent is only changed on a clear (not rounding-level) improvement, so the forest has no
    cycle unless the float matching is visibly suboptimal; ``-1`` marks a root.
    """
    n = len(pi)
    rows = np.arange(n)
    diag = S[rows, pi]
    tol = _MARGIN * (float(np.abs(S).max()) + 1.0)
    u = np.zeros(n)
    parent = np.full(n, -1, dtype=np.int64)
    for _ in range(n + 1):
        M = S - u[:, None]
        best = M.argmax(axis=0)                      # the row that most wants each column
        v = M[best, rows]
        cand = diag - v[pi]
        better = cand < u - tol
        if not better.any():
            break
        u[better] = cand[better]
        parent[better] = best[pi[better]]
    return parent


def _chain_potentials(W: _Weights, pi: np.ndarray, parent: np.ndarray) -> list[int] | None:
    """Exact ``u`` (units 1/D) along the forest: ``u[s] = u[p] + W[s, pi s] - W[p, pi s]``.

    Returns None if the parent pointers contain a cycle.
    """
    n = len(pi)
    u: list[int | None] = [None] * n
    for start in range(n):
        path = []
        s = start
        while u[s] is None:
            if parent[s] < 0:
                u[s] = 0
                break
            path.append(s)
            s = int(parent[s])
            if len(path) > n:
                return None
        for s in reversed(path):
            p = int(parent[s])
            col = int(pi[s])
            u[s] = u[p] + W.entry(s, col) - W.entry(p, col)
    return u  # type: ignore[return-value]


def _violations(W: _Weights, u: list[int], v: list[int]) -> tuple[list[tuple[int, int, int]], int]:
    """Pairs with a negative exact reduced cost ``u[s] + v[d] - W[s, d]``, and the number of
    pairs the float screen left to exact arithmetic."""
    D = W.D
    uf = np.array([x / D for x in u])              # int / int rounds correctly
    vf = np.array([x / D for x in v])
    R = uf[:, None] + vf[None, :] - W.float
    margin = _MARGIN * (float(np.abs(uf).max()) + float(np.abs(vf).max()) + float(np.abs(W.float).max()) + 1.0)
    rows, cols = np.nonzero(R <= margin)
    if not len(rows):
        return [], 0
    ua = np.array(u, dtype=object)
    va = np.array(v, dtype=object)
    r = ua[rows] + va[cols] - W.exact(rows, cols)
    bad = np.flatnonzero(r < 0)
    return [(int(rows[i]), int(cols[i]), int(r[i])) for i in bad], len(rows)


def _find_cycle(parent: list[int], start: int) -> list[int] | None:
    """The cycle reached by following parents from ``start``, oldest ancestor first, or None."""
    seen: dict[int, int] = {}
    path = []
    s = start
    while s >= 0 and s not in seen:
        seen[s] = len(path)
        path.append(s)
        s = parent[s]
    if s < 0:
        return None
    cycle = path[seen[s]:]              # child -> parent order
    return cycle[::-1]                  # parent -> child: c_i takes the column of c_{i+1}


def certify(num: np.ndarray, den: np.ndarray | int, perm: np.ndarray) -> Certificate:
    """Prove ``perm`` a maximum-weight perfect matching of the square matrix ``num / den``, or
    return an improving cycle.

    Parameters
    ----------
    num : ndarray of int64, shape (n, n)
        Non-negative numerators.
    den : ndarray of int64 (broadcastable to ``num``) or int
        Positive denominators.
    perm : ndarray of int
        ``perm[s]`` = column of row ``s``.

    Returns
    -------
    Certificate

    Examples
    --------
    >>> num = np.array([[3, 1], [1, 3]])
    >>> certify(num, 1, np.array([0, 1])).optimal
    True
    >>> c = certify(num, 1, np.array([1, 0]))
    >>> c.optimal, sorted(c.cycle)
    (False, [0, 1])
    """
    num = np.asarray(num, dtype=np.int64)
    den = np.broadcast_to(np.asarray(den, dtype=np.int64), num.shape)
    return _certify(_Weights(num, den), np.asarray(perm, dtype=np.int64))


def _float_cycle(W: _Weights, pi: np.ndarray, tree: np.ndarray) -> list[int] | None:
    """A cycle of the float forest that is exactly improving, if the forest has one."""
    parent = tree.tolist()
    for start in np.flatnonzero(tree >= 0).tolist():
        cycle = _find_cycle(parent, start)
        if cycle is not None:
            if _exact_weight(W, _rotate(pi, cycle)) > _exact_weight(W, pi):
                return cycle
            return None
    return None


def _certify(W: _Weights, pi: np.ndarray) -> Certificate:
    n = len(pi)
    tree = _float_tree(W.float, pi)
    u = _chain_potentials(W, pi, tree)
    if u is None:
        cycle = _float_cycle(W, pi, tree)
        if cycle is not None:
            return Certificate(False, [], [], cycle)
        tree = np.full(n, -1, dtype=np.int64)      # float noise: let the exact repair work alone
        u = [0] * n
    parent = tree.tolist()
    owner = np.empty(n, dtype=np.int64)
    owner[pi] = np.arange(n)
    checks = 0
    # Each round relaxes every violated column once; without a negative cycle Bellman-Ford
    # settles within n rounds, and a negative cycle shows up as a parent cycle (it is checked
    # after every relaxation), so the bound is never reached.
    for _ in range(2 * n + 2):
        v = [0] * n
        for s in range(n):
            v[int(pi[s])] = W.entry(s, int(pi[s])) - u[s]
        bad, count = _violations(W, u, v)
        checks += count
        if not bad:
            return Certificate(True, u, v, [], checks)
        # exact relaxation: raise v[d] by the largest violation, i.e. lower u of d's owner
        worst: dict[int, tuple[int, int]] = {}
        for s, d, r in bad:
            if d not in worst or r < worst[d][1]:
                worst[d] = (s, r)
        for d, (s, r) in worst.items():
            t = int(owner[d])
            u[t] += r
            parent[t] = s
            cycle = _find_cycle(parent, t)
            if cycle is not None:
                return Certificate(False, [], [], cycle, checks)
    raise RuntimeError("exact potential repair did not converge")   # pragma: no cover - BF bound


def _rotate(pi: np.ndarray, cycle: list[int]) -> np.ndarray:
    """Row ``cycle[i]`` takes the column of ``cycle[i+1]`` (cyclically)."""
    out = pi.copy()
    cols = pi[cycle]
    out[cycle] = np.roll(cols, -1)
    return out


def _exact_weight(W: _Weights, pi: np.ndarray) -> int:
    rows = np.arange(len(pi))
    return int(W.exact(rows, pi).sum()) if len(pi) else 0


def _square(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Drop all-zero rows and columns and pad with zero rows/columns to a square."""
    rows = np.flatnonzero((num != 0).any(axis=1))
    cols = np.flatnonzero((num != 0).any(axis=0))
    n = max(len(rows), len(cols))
    sn = np.zeros((n, n), dtype=np.int64)
    sd = np.ones((n, n), dtype=np.int64)
    sn[:len(rows), :len(cols)] = num[np.ix_(rows, cols)]
    sd[:len(rows), :len(cols)] = den[np.ix_(rows, cols)]
    return sn, sd, rows, cols


def _extend(N: int, M: int, rows: np.ndarray, cols: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """A full assignment of the N x M matrix containing the real pairs of the reduced ``pi``."""
    perm = np.full(N, -1, dtype=np.int64)
    real = (np.arange(len(pi)) < len(rows)) & (pi < len(cols))
    perm[rows[np.flatnonzero(real)]] = cols[pi[real]]
    free_cols = np.setdiff1d(np.arange(M), perm[perm >= 0])
    free_rows = np.flatnonzero(perm < 0)
    perm[free_rows] = free_cols[:len(free_rows)]
    return perm


def max_weight_matching(num: np.ndarray, den: np.ndarray | int = 1,
                        start: np.ndarray | None = None) -> ExactMatching:
    """Maximum-weight perfect matching of the square matrix ``num / den``, exactly.

    Parameters
    ----------
    num : ndarray of int, shape (N, N)
        Non-negative numerators.
    den : ndarray of int (broadcastable to ``num``) or int
        Positive denominators; their lcm may exceed any machine integer.
    start : ndarray of int, optional
        A permutation of the *reduced* problem to start from instead of SciPy's float matching
        (for tests of the repair step).

    Returns
    -------
    ExactMatching

    Examples
    --------
    Denominators whose lcm has 120 bits (no float64 or int64 weight scale would hold it):

    >>> primes = np.array([1000003, 1000033, 1000037, 1000039])
    >>> num = np.array([[1, 2, 3, 4], [4, 3, 2, 1], [2, 2, 2, 2], [0, 1, 0, 5]])
    >>> m = max_weight_matching(num, np.broadcast_to(primes, (4, 4)))
    >>> m.permutation.tolist(), m.weight.denominator.bit_length()
    ([2, 0, 1, 3], 80)
    """
    num = np.asarray(num, dtype=np.int64)
    N, M = num.shape
    den = np.broadcast_to(np.asarray(den, dtype=np.int64), num.shape)
    if (num < 0).any() or (den <= 0).any():
        raise ValueError("max_weight_matching needs non-negative numerators and positive denominators")
    sn, sd, rows, cols = _square(num, den)
    if not len(sn):
        return ExactMatching(np.arange(N, dtype=np.int64), Fraction(0))
    W = _Weights(sn, sd)
    if start is None:
        from scipy.optimize import linear_sum_assignment  # lazily: a plain route never needs it

        _, pi = linear_sum_assignment(W.float, maximize=True)
        pi = pi.astype(np.int64)
    else:
        pi = np.asarray(start, dtype=np.int64).copy()
    repairs = checks = 0
    while True:
        cert = _certify(W, pi)
        checks += cert.exact_checks
        if cert.optimal:
            break
        better = _rotate(pi, cert.cycle)
        if _exact_weight(W, better) <= _exact_weight(W, pi):
            raise RuntimeError("an improving cycle did not improve the matching")   # pragma: no cover
        pi, repairs = better, repairs + 1
    weight = Fraction(_exact_weight(W, pi), W.D)
    return ExactMatching(_extend(N, M, rows, cols, pi), weight, repairs, checks)
