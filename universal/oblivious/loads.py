"""Exact pair loads gamma_c(0, t) of a relative routing algorithm on the torus.

The pair load gamma_c(s, d) is the probability that a packet from ``s`` to ``d`` crosses
channel ``c`` (Towles, "Finding worst-case permutations", §2.2). For a relative algorithm
(§4.2 there) ``gamma_c(s, d) = gamma_{c - s}(0, d - s)``: only the routes from node 0 are needed.

Channels are grouped in *classes* ``(dim, sign)``: all channels leaving a node in one dimension
and direction; translation maps a class onto itself. For one class the loads from node 0 form an
``N x N`` table ``num[t, v]``: the numerator of the load of the channel whose tail is ``v``, for a
packet from 0 to offset ``t``; the denominator is ``den[t]``, the sum of the integer route weights
of that offset. Everything is integer, so loads are exact rationals.

The table is filled leg by leg with difference arrays along the leg's dimension (a leg of ``L``
hops in dimension ``i`` covers ``L`` consecutive channels of one ring), so the cost is the number
of legs, not the number of hops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Iterable

import numpy as np

from universal.errors import UserError

from universal.paths.torus.algorithms import PathFamily, Routing, get_routing
from universal.paths.torus.geometry import Torus

__all__ = ["PairLoads", "pair_loads", "all_classes", "advance_progress"]

_EXACT_FLOAT = 2 ** 52   # bincount sums in float64; integers below this are exact


def all_classes(n: int) -> list[tuple[int, int]]:
    """Every channel class ``(dim, sign)`` of an n-cube, + before - in each dimension."""
    return [(d, s) for d in range(n) for s in (1, -1)]


def advance_progress(progress: Callable[[int], object] | None, amount: int = 1) -> None:
    """Report ``amount`` finished work units to a callable or to a tqdm-like object (``update``)."""
    if progress is None:
        return
    if hasattr(progress, "update"):
        progress.update(amount)
    else:
        progress(amount)


@dataclass
class PairLoads:
    """Pair loads from node 0 for some channel classes of one routing algorithm.

    Attributes
    ----------
    torus : Torus
    routing : str
    den : ndarray of int64, shape (N,)
        ``den[t]``: denominator of every load of offset ``t``.
    tables : dict[(dim, sign), ndarray of int64, shape (N, N)]
        ``tables[cls][t, v]``: numerator of the load on channel (tail ``v``, class ``cls``).
    length_num : ndarray of int64, shape (N,)
        ``length_num[t] / den[t]`` is the expected hop count from 0 to ``t``.
    """

    torus: Torus
    routing: str
    den: np.ndarray
    tables: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    length_num: np.ndarray | None = None

    def load(self, channel: int, source: int, dest: int) -> Fraction:
        """Exact gamma_c(s, d) by relative routing (its class must be in ``tables``)."""
        t = self.torus
        tail, dim, sign = (int(x) for x in t.channel_parts(channel))
        off = int(t.sub(dest, source))
        v = int(t.sub(tail, source))
        return Fraction(int(self.tables[(dim, sign)][off, v]), int(self.den[off]))

    def full_numerators(self) -> np.ndarray:
        """All channels at once: ``(N, num_channels)`` numerators, column = channel index."""
        t = self.torus
        out = np.zeros((t.N, t.num_channels), dtype=np.int64)
        for (dim, sign), table in self.tables.items():
            cols = t.channel(np.arange(t.N), dim, sign)
            out[:, cols] = table
        return out

    def common_denominator(self) -> int:
        """lcm of all ``den[t]`` (a Python int; may be very large)."""
        return int(np.lcm.reduce([int(x) for x in np.unique(self.den)], dtype=object))

    def mean_length(self) -> Fraction:
        """Average hop count over all N^2 ordered pairs (H_avg of Towles, Dally & Boyd, eq. 5)."""
        total = sum(Fraction(int(a), int(b)) for a, b in zip(self.length_num, self.den))
        return total / self.torus.N


def _leg_starts(torus: Torus, dims: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Start coordinates (relative to the source) of every leg, shape (P, L, n)."""
    P, L = dims.shape
    disp = np.zeros((P, L, torus.n), dtype=np.int64)
    np.put_along_axis(disp, dims[:, :, None], steps[:, :, None], axis=2)
    return (np.cumsum(disp, axis=1) - disp) % torus.k


def _accumulate(torus: Torus, rows: np.ndarray, dims: np.ndarray, steps: np.ndarray,
                weights: np.ndarray, n_rows: int, cls: tuple[int, int]) -> np.ndarray:
    """Numerators ``(n_rows, N)`` of one class from legs of routes in local rows ``rows``."""
    k, N = torus.k, torus.N
    dim, sign = cls
    starts = _leg_starts(torus, dims, steps)
    sel = (dims == dim) & (np.sign(steps) == sign)
    p_idx, l_idx = np.nonzero(sel)
    step = steps[p_idx, l_idx]
    length = np.abs(step)
    if length.size and length.max() >= k:
        raise ValueError("a leg wraps the whole ring; the difference arrays assume it does not")
    start = starts[p_idx, l_idx]                             # (S, n)
    along = start[:, dim]
    lo = along if sign > 0 else (along + step + 1) % k       # first channel tail along the ring
    low = k ** dim
    start_id = start @ torus.powers
    line = (start_id // (low * k)) * low + start_id % low    # ring id: node id without x_dim
    base = (rows[p_idx] * (N // k) + line) * (k + 1)
    w = weights[p_idx].astype(np.float64)
    end = lo + length
    wrap = end > k
    idx = np.concatenate([base + lo, base + np.minimum(end, k), base[wrap], base[wrap] + end[wrap] - k])
    val = np.concatenate([w, -w, w[wrap], -w[wrap]])
    diff = np.bincount(idx, weights=val, minlength=n_rows * (N // k) * (k + 1))
    diff = np.rint(diff).astype(np.int64).reshape(n_rows, N // (low * k), low, k + 1)
    ring = np.cumsum(diff, axis=3)[:, :, :, :k]              # (rows, high, low, pos)
    return ring.transpose(0, 1, 3, 2).reshape(n_rows, N)


def pair_loads(routing: str | Routing, torus: Torus,
               classes: Iterable[tuple[int, int]] | None = None,
               progress=None, chunk_paths: int = 1_500_000) -> PairLoads:
    """Exact pair loads from node 0 to every offset, for the given channel classes.

    Parameters
    ----------
    routing : str or Routing
        A name from :data:`universal.paths.torus.algorithms.ROUTINGS`.
    torus : Torus
    classes : iterable of (dim, sign), optional
        Channel classes to tabulate; all ``2n`` by default.
    progress : callable or tqdm-like, optional
        Receives the number of offsets finished (N in total).
    chunk_paths : int
        Routes accumulated per batch (bounds memory).

    Returns
    -------
    PairLoads

    Examples
    --------
    >>> pl = pair_loads("dor", Torus(4, 1))
    >>> pl.den.tolist()                      # offset 2 is a tie: two routes
    [1, 1, 2, 1]
    >>> pl.tables[(0, 1)][2].tolist()        # 0 -> 2 crosses 0->1 and 1->2 half the time
    [1, 1, 0, 0]

    References
    ----------
    B. Towles, "Finding worst-case permutations for oblivious routing algorithms", §3.2 (pair
    loads by exhaustive enumeration) and §4.2 (relative routing).
    """
    alg = get_routing(routing)
    classes = list(all_classes(torus.n) if classes is None else classes)
    N = torus.N
    den = np.zeros(N, dtype=np.int64)
    length_num = np.zeros(N, dtype=np.int64)
    tables = {cls: np.zeros((N, N), dtype=np.int64) for cls in classes}
    batch: list[tuple[int, PathFamily]] = []
    batch_size = 0

    def flush() -> None:
        nonlocal batch, batch_size
        if not batch:
            return
        offsets = np.array([t for t, _ in batch])
        rows = np.concatenate([np.full(len(f.weights), i, dtype=np.int64) for i, (_, f) in enumerate(batch)])
        # designed routings have routes of different leg counts: pad with empty legs
        width = max(f.dims.shape[1] for _, f in batch)
        pad = lambda a: np.pad(a, ((0, 0), (0, width - a.shape[1])))  # noqa: E731
        dims = np.concatenate([pad(f.dims) for _, f in batch])
        steps = np.concatenate([pad(f.steps) for _, f in batch])
        weights = np.concatenate([f.weights for _, f in batch])
        for cls in classes:
            tables[cls][offsets] = _accumulate(torus, rows, dims, steps, weights, len(batch), cls)
        advance_progress(progress, len(batch))
        batch, batch_size = [], 0

    for t in range(N):
        fam = alg.family(torus, t)
        d = fam.den
        if d * 2 * torus.n * torus.k >= _EXACT_FLOAT:
            raise UserError(f"{alg.name} on {torus.name}: route weights too large for exact integer loads")
        den[t] = d
        length_num[t] = int((fam.lengths * fam.weights).sum())
        batch.append((t, fam))
        batch_size += len(fam.weights)
        if batch_size >= chunk_paths:
            flush()
    flush()
    return PairLoads(torus, alg.name, den, tables, length_num)
