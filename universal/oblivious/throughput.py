"""Channel loads, throughput and locality of oblivious routing on the torus.

For a traffic matrix ``L`` the load of channel ``c`` is ``sum_{s,d} L[s,d] gamma_c(s,d)`` and the
throughput is ``1 / max_c load`` (Towles, Dally & Boyd 2003, eqs. 2-4). It is reported as a
fraction of capacity, ``capacity_load / max_load``, with ``capacity_load`` the uniform load under
minimal balanced routing (:attr:`Torus.capacity_load`). Locality is the average path length over
all pairs divided by the minimal average (eq. 5 there).

All sums use relative routing: ``gamma_c(s, d) = gamma_{c - s}(0, d - s)``, so a permutation's
loads are a sum of N rows of the tables from node 0, translated by their sources.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import numpy as np


from universal.paths.torus.algorithms import get_routing
from .loads import PairLoads, advance_progress, pair_loads
from universal.paths.torus.geometry import Torus
from .traffic import Traffic, make_traffic

__all__ = ["LoadResult", "channel_loads", "max_load", "exact_max_load", "exact_sum", "exact_column_sums",
           "permutation_max_loads", "load_table", "locality", "evaluate_traffic", "throughput_histogram"]

_GATHER_TENSOR_LIMIT = 1 << 25   # float entries of all (s, t, v) tensors (256 MB) for many perms


@dataclass
class LoadResult:
    """Throughput of one routing algorithm under one traffic pattern.

    Attributes
    ----------
    routing, traffic : str
        Names as given.
    throughput : float
        Fraction of capacity (``capacity_load / max_load``); for ``random-perms`` the worst.
    max_load : float
        Largest channel load (packets per cycle per unit injection); for ``random-perms`` the
        largest over the permutations.
    locality : float
        Average path length / minimal average path length of the routing algorithm.
    mean, best : float or None
        ``random-perms`` only: mean and best throughput over the permutations.
    histogram : tuple(counts, edges) or None
        ``random-perms`` only: histogram of the throughputs (numpy.histogram output, 20 bins; one bin when
        every permutation gave the same throughput).
    max_load_exact : Fraction or None
        The exact largest load, for every pattern with rational entries (a permutation, a
        built-in matrix pattern, a matrix file) and exact pair loads; None for
        ``random-perms`` and for sampled pair loads.
    throughput_exact : Fraction or None
        ``capacity_load / max_load_exact`` when the latter is known; ``throughput`` is then
        this fraction rounded once to a float.
    pair_loads : str
        How the pair loads were obtained: ``"exact"`` or ``"sampled, M paths per pair"``.
    """

    routing: str
    traffic: str
    throughput: float
    max_load: float
    locality: float
    mean: float | None = None
    best: float | None = None
    histogram: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    max_load_exact: Fraction | None = None
    pair_loads: str = "exact"
    throughput_exact: Fraction | None = None

    def as_dict(self) -> dict:
        """JSON-ready dictionary (histogram as lists)."""
        out = {"routing": self.routing, "traffic": self.traffic, "throughput": self.throughput,
               "max_load": self.max_load, "locality": self.locality, "pair_loads": self.pair_loads}
        if self.mean is not None:
            out.update(mean=self.mean, best=self.best,
                       histogram={"counts": self.histogram[0].tolist(),
                                  "edges": self.histogram[1].tolist()})
        if self.max_load_exact is not None:
            out["max_load_exact"] = str(self.max_load_exact)
        if self.throughput_exact is not None:
            out["throughput_exact"] = str(self.throughput_exact)
        return out

    @classmethod
    def from_exact(cls, routing: str, traffic: str, capacity: Fraction, load: Fraction, locality: float,
                   pair_loads: str = "exact") -> "LoadResult":
        """A row whose largest load is known exactly: both floats are the fractions rounded once.

        Examples
        --------
        >>> r = LoadResult.from_exact("ival", "uniform", Fraction(1), Fraction(413, 256), 1.6)
        >>> r.throughput_exact, r.throughput == 256 / 413
        (Fraction(256, 413), True)
        """
        thr = capacity / load if load > 0 else None
        return cls(routing, traffic, float(thr) if thr is not None else float("inf"), float(load), locality,
                   max_load_exact=load, pair_loads=pair_loads, throughput_exact=thr)


def _float_table(pl: PairLoads, cls) -> np.ndarray:
    return pl.tables[cls] / pl.den[:, None].astype(np.float64)


def channel_loads(pl: PairLoads, L: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    """Loads (float) of every channel of every tabulated class under traffic matrix ``L``.

    Parameters
    ----------
    pl : PairLoads
    L : ndarray, shape (N, N)

    Returns
    -------
    dict (dim, sign) -> ndarray of shape (N,), indexed by channel tail.
    """
    t = pl.torus
    off = t.offset_table
    # M[s, t] = L[s, s + t]: the traffic of each source re-expressed by offset
    M = np.empty_like(L, dtype=np.float64)
    np.put_along_axis(M, off, L, axis=1)
    circulant = np.allclose(M, M[0][None, :], rtol=0, atol=1e-15)
    nnz = np.count_nonzero(M)
    out = {}
    for cls in pl.tables:
        F = _float_table(pl, cls)
        if circulant:
            # every source sends the same offsets: by translation all channels of a class are equal
            out[cls] = np.full(t.N, float(M[0] @ F.sum(axis=1)))
        elif nnz <= 16 * t.N:
            s_idx, t_idx = np.nonzero(M)
            out[cls] = (M[s_idx, t_idx][:, None] * F[t_idx[:, None], off[s_idx]]).sum(axis=0)
        else:
            X = M @ F                                       # X[s, u] = sum_t M[s,t] F[t,u]
            out[cls] = np.take_along_axis(X, off, axis=1).sum(axis=0)
    return out


class _SparseRows:
    """Non-zero entries of a per-class load table, row by row (CSR), for fast permutation sums."""

    def __init__(self, F: np.ndarray) -> None:
        rows, cols = np.nonzero(F)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=F.shape[0]))])
        self.cols = cols
        self.vals = F[rows, cols]

    def loads(self, torus: Torus, chunk: np.ndarray) -> np.ndarray:
        """Loads ``(B, N)`` of permutations given as offsets ``chunk[b, s] = d_s - s``."""
        N = torus.N
        B = len(chunk)
        start = self.indptr[chunk].ravel()
        count = self.indptr[chunk + 1].ravel() - start
        total = int(count.sum())
        owner = np.repeat(np.arange(B * N), count)                 # (b, s) of each entry
        pos = np.arange(total) - np.repeat(np.cumsum(count) - count, count) + np.repeat(start, count)
        s = owner % N
        # channel tail u seen from s is u + s in absolute terms: offset_table[-s, u] = u + s
        tail = torus.offset_table[torus.offset_table[s, 0], self.cols[pos]]
        flat = (owner // N) * N + tail
        return np.bincount(flat, weights=self.vals[pos], minlength=B * N).reshape(B, N)


def permutation_max_loads(pl: PairLoads, perms: np.ndarray, progress=None,
                          batch: int = 64) -> np.ndarray:
    """Largest channel load of each permutation in ``perms`` (shape (M, N), ``perms[m, s]`` = dest).

    A permutation's load on the channel with tail ``v`` of a class is ``sum_s F[d_s - s, v - s]``
    (relative routing). For small tori the translated rows are stored once as a tensor
    ``G[s, t, :] = F[t, . - s]`` so that each permutation costs N contiguous row reads per class;
    on larger ones only the non-zero pair loads are scattered (minimal routings touch few
    channels per pair).

    Parameters
    ----------
    pl : PairLoads
    perms : ndarray of int, shape (M, N)
    progress : callable or tqdm-like, optional
        Advanced by one per permutation.
    batch : int
        Permutations evaluated together.

    Returns
    -------
    ndarray of float, shape (M,)
    """
    t = pl.torus
    perms = np.atleast_2d(np.asarray(perms, dtype=np.int64))
    src = np.arange(t.N)
    offs = t.offset_table[src[None, :], perms]                 # (M, N): d_s - s
    off = t.offset_table
    tables = [_float_table(pl, cls) for cls in pl.tables]
    use_tensor = len(tables) * t.N ** 3 <= _GATHER_TENSOR_LIMIT
    if use_tensor:   # G[s, t, v] = F[t, v - s]
        tables = [F[:, off].transpose(1, 0, 2).copy() for F in tables]
    else:
        tables = [_SparseRows(F) for F in tables]
        batch = max(1, min(batch, (1 << 24) // max(1, max(len(T.vals) for T in tables) // t.N * t.N)))
    worst = np.zeros(len(perms))
    for lo in range(0, len(perms), batch):
        chunk = offs[lo:lo + batch]
        for T in tables:
            if use_tensor:
                loads = T[src[None, :], chunk].sum(axis=1)           # (B, N)
            else:
                loads = T.loads(t, chunk)
            worst[lo:lo + batch] = np.maximum(worst[lo:lo + batch], loads.max(axis=1))
        advance_progress(progress, len(chunk))
    return worst


#: Channels whose float load is within this relative distance of the largest are decided exactly.
_NEAR = 1e-9
#: Largest (non-circulant traffic entries) x N summed exactly; a denser matrix on a large torus
#: gets float loads only (its row says so by a null ``max_load_exact``).
MAX_EXACT_WORK = 1 << 31


def exact_sum(values: np.ndarray, weights: np.ndarray, dens: np.ndarray) -> Fraction:
    """``sum_i weights[i] * values[i] / dens[i]`` exactly, grouping the terms by denominator.

    Integer sums stay in int64 while they cannot overflow, else they use Python integers.

    Examples
    --------
    >>> exact_sum(np.array([1, 1, 3]), np.array([1, 2, 1]), np.array([2, 4, 4]))
    Fraction(7, 4)
    """
    num, den = exact_column_sums(values[:, None], weights, dens)
    return Fraction(int(num[0]), den)


def exact_column_sums(values: np.ndarray, weights: np.ndarray, dens: np.ndarray) -> tuple[np.ndarray, int]:
    """Column sums of ``weights[i] * values[i, j] / dens[i]``, exactly.

    Parameters
    ----------
    values : ndarray of int, shape (m, c)
    weights, dens : ndarray of int, shape (m,)

    Returns
    -------
    numerators : ndarray of Python ints, shape (c,)
    denominator : int
        The lcm of the ``dens`` that occur.

    Examples
    --------
    >>> exact_column_sums(np.array([[1, 0], [1, 2]]), np.array([1, 1]), np.array([2, 4]))
    (array([3, 2], dtype=object), 4)
    """
    if not len(dens):
        return np.zeros(values.shape[1], dtype=object), 1
    bound = (int(np.abs(values).max(initial=0)) + 1) * (int(np.abs(weights).max()) + 1) * len(dens)
    dtype = np.int64 if bound < 2 ** 62 else object
    order = np.argsort(dens, kind="stable")
    ds = dens[order]
    starts = np.flatnonzero(np.r_[True, ds[1:] != ds[:-1]])
    prod = values[order].astype(dtype) * weights[order].astype(dtype)[:, None]
    sums = np.add.reduceat(prod, starts, axis=0).astype(object)      # (groups, columns)
    groups = [int(d) for d in ds[starts]]
    common = math.lcm(*groups)
    scale = np.array([common // d for d in groups], dtype=object)
    return scale @ sums, common


def _exact_entries_max(pl: PairLoads, src: np.ndarray, offs: np.ndarray, w: np.ndarray,
                       ring: dict | None = None) -> Fraction:
    """Exact largest channel load of integer traffic entries (source, offset, weight).

    Per class, the integer loads of every channel are summed separately for every route
    denominator (one pass over the entries), floats over them find the candidate channels
    (within a relative 1e-9 of the largest), and Python integers compare the candidates.
    ``ring`` adds a load common to every channel of a class (the circulant part of a matrix).
    """
    t = pl.torus
    order = np.argsort(pl.den[offs], kind="stable")
    src, offs, w = src[order], offs[order], w[order]
    dens = pl.den[offs]
    starts = np.flatnonzero(np.r_[True, dens[1:] != dens[:-1]])
    bounds = np.r_[starts, len(src)]
    groups = [int(d) for d in dens[starts]]
    # a route crosses a channel at most twice, so one entry adds at most 2 * weight * den
    exact_int = max(groups) * 2 * int(np.abs(w).max()) * len(src) < 2 ** 62
    step = max(1, (1 << 20) // t.N)
    best = None
    for cls, table in pl.tables.items():
        sums = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            total = np.zeros(t.N, dtype=np.int64 if exact_int else object)
            for a in range(lo, hi, step):
                b = min(a + step, hi)
                rows = table[offs[a:b, None], t.offset_table[src[a:b]]]
                if exact_int:
                    total += w[a:b] @ rows
                else:
                    total += w[a:b].astype(object) @ rows.astype(object)
            sums.append(total)
        floats = sum(v.astype(np.float64) / d for v, d in zip(sums, groups))
        near = np.flatnonzero(floats >= float(floats.max()) * (1 - _NEAR))
        common = math.lcm(*groups)
        nums = sum(v[near].astype(object) * (common // d) for v, d in zip(sums, groups))
        load = Fraction(int(max(nums)), common) + (ring[cls] if ring else 0)
        best = load if best is None or load > best else best
    return best


def exact_max_load(pl: PairLoads, traffic: Traffic) -> Fraction | None:
    """Exact largest channel load of a permutation or of a matrix pattern given exactly.

    Floats find the candidate channels (within a relative 1e-9 of the largest load), integer
    sums grouped by denominator decide among them. A matrix is split into its *circulant part*
    (per offset, the smallest entry over all sources; it loads every channel of a class
    equally, which a row sum of the pair-load table gives exactly) and the sparse rest (the hot
    nodes of ``hotspot``, nothing at all for ``uniform`` and ``neighbor``).

    Returns None for random permutations, for matrices without ``exact`` entries and for a
    matrix whose non-circulant entries times N exceed :data:`MAX_EXACT_WORK`.

    Examples
    --------
    >>> from .traffic import make_traffic
    >>> t = Torus(5, 2)
    >>> exact_max_load(pair_loads("ival:order=xy", t), make_traffic(t, "uniform"))
    Fraction(28, 25)
    """
    t = pl.torus
    if traffic.perm is not None:
        src = np.arange(t.N)
        return _exact_entries_max(pl, src, t.offset_table[src, traffic.perm], np.ones(t.N, dtype=np.int64))
    if traffic.exact is None:
        return None
    num, den = traffic.exact
    M = np.empty_like(num)
    np.put_along_axis(M, t.offset_table, num, axis=1)          # M[s, d - s] = num[s, d]
    base = M.min(axis=0)                                       # the circulant part, per offset
    ring = {cls: exact_sum(table.sum(axis=1), base, pl.den) for cls, table in pl.tables.items()}
    rest = M - base[None, :]
    src, offs = np.nonzero(rest)
    if not len(src):
        return max(ring.values()) / den
    if len(src) * t.N > MAX_EXACT_WORK:
        return None
    return _exact_entries_max(pl, src, offs, rest[src, offs], ring) / den


def max_load(pl: PairLoads, traffic: Traffic) -> float:
    """Largest channel load (float) of a single traffic pattern."""
    if traffic.perm is not None:
        return float(permutation_max_loads(pl, traffic.perm[None, :])[0])
    return max(float(v.max()) for v in channel_loads(pl, traffic.matrix).values())


def locality(pl: PairLoads) -> float:
    """Average path length of the routing divided by the minimal average path length."""
    return float(pl.mean_length() / pl.torus.average_min_distance)


def throughput_histogram(throughputs: np.ndarray, bins: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of sampled throughputs: ``bins`` equal bins, or one when all are equal.

    On some networks every permutation has the same worst channel load (e.g. Valiant's
    routing on a small mesh); the throughputs then differ only by rounding, and equal-width
    bins over that range cannot be made, so a single bin, 1% of the value wide, holds them all.

    Parameters
    ----------
    throughputs : ndarray of float
    bins : int

    Returns
    -------
    (counts, edges)
        As :func:`numpy.histogram`.

    Examples
    --------
    >>> counts, edges = throughput_histogram(np.array([0.5, 0.5 + 1e-17, 0.5]))
    >>> counts.tolist(), bool(edges[0] <= 0.5 <= edges[-1])
    ([3], True)
    >>> len(throughput_histogram(np.array([0.2, 0.4, 0.6]))[0])
    20
    """
    low, high = float(throughputs.min()), float(throughputs.max())
    if high - low <= 1e-9 * max(abs(high), 1e-300):
        half = max(abs(high), 1e-9) * 0.005
        return np.histogram(throughputs, bins=1, range=(low - half, high + half))
    return np.histogram(throughputs, bins=bins)


def evaluate_traffic(pl: PairLoads, traffic: Traffic, rng: np.random.Generator,
                     progress=None) -> LoadResult:
    """Throughput of the tabulated routing under one traffic pattern (see :func:`load_table`)."""
    cap = float(pl.torus.capacity_load)
    loc = locality(pl)
    if traffic.is_random:
        perms = np.stack([rng.permutation(pl.torus.N) for _ in range(traffic.count)])
        loads = permutation_max_loads(pl, perms, progress)
        thr = cap / loads
        return LoadResult(pl.routing, traffic.name, float(thr.min()), float(loads.max()), loc,
                          mean=float(thr.mean()), best=float(thr.max()),
                          histogram=throughput_histogram(thr))
    exact = exact_max_load(pl, traffic)
    if exact is not None:
        return LoadResult.from_exact(pl.routing, traffic.name, pl.torus.capacity_load, exact, loc)
    m = max_load(pl, traffic)
    return LoadResult(pl.routing, traffic.name, cap / m if m > 0 else float("inf"), m, loc)


def load_table(k: int, n: int, routings: Sequence[str], traffics: Sequence[str],
               rng: np.random.Generator, progress=None) -> list[LoadResult]:
    """Throughput (fraction of capacity) of each routing under each traffic on ``torus:k=K,n=N``.

    Parameters
    ----------
    k, n : int
        Torus radix and dimension (k >= 3).
    routings : sequence of str
        Names from ``ROUTINGS`` (``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``, ``ival``).
    traffics : sequence of str
        Traffic names (see :mod:`universal.oblivious.traffic`), e.g. ``"tornado"``,
        ``"random-perms:1000"``.
    rng : numpy.random.Generator
        Source of the random permutations.
    progress : callable or tqdm-like, optional
        Advanced by N per routing while the pair loads are tabulated and by one per random
        permutation evaluated (total ``len(routings) * (N + sum of random-perms counts)``).

    Returns
    -------
    list of LoadResult, routing-major.

    Examples
    --------
    >>> rows = load_table(8, 2, ["dor"], ["tornado"], np.random.default_rng(0))
    >>> round(rows[0].throughput, 4)
    0.3333

    References
    ----------
    Towles, Dally & Boyd (2003), §2.3 and §3.1; Towles, "Finding worst-case permutations", Table 1.
    """
    torus = Torus(k, n)
    for r in routings:
        get_routing(r)
    patterns = [make_traffic(torus, name) for name in traffics]   # validate names before work
    results = []
    for r in routings:
        pl = pair_loads(r, torus, progress=progress)
        for pattern in patterns:
            results.append(evaluate_traffic(pl, pattern, rng, progress))
    return results
