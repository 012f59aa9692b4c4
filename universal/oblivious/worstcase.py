"""Exact worst-case permutation of an oblivious routing algorithm by max-weight matching.

By linearity of channel loading, the heaviest load any traffic matrix can put on channel ``c`` is
reached by a permutation, and it is the weight of a maximum-weight perfect matching of the
bipartite source/destination graph whose edge ``(s, d)`` weighs ``gamma_c(s, d)``; the worst case
of the algorithm is the largest such weight over all channels (B. Towles, "Finding worst-case
permutations for oblivious routing algorithms", §3, Theorems 1 and 2). On the torus only one
*focus channel* per symmetry class needs a matching (§4.1) and its weights come from the loads of
routes leaving node 0 (§4.2).

Exactness: when the common denominator ``D`` of the pair loads is small, the matching runs on
integer weights (numerators over ``D``): SciPy's ``linear_sum_assignment`` computes in float64,
which is exact on integers as long as every sum it forms stays below 2**53, and
:func:`worst_case_for_channels` checks a conservative bound before relying on it. ROMM and RLB
on big tori have denominators like ``lcm(box sizes)`` (97 bits for ROMM on the 64-ary 2-cube);
there the matching found in float is *certified* optimal by exact LP-duality potentials
(:mod:`universal.oblivious.matching`, which explains why that is exact). Either way the
reported worst case is the exact maximum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Hashable, Iterable, Sequence

import numpy as np


from universal.paths.torus.algorithms import get_routing
from .loads import PairLoads, advance_progress, pair_loads
from .matching import max_weight_matching
from universal.paths.torus.geometry import Torus

__all__ = ["ChannelMatching", "WorstCaseResult", "worst_case_for_channels", "worst_case",
           "focus_classes", "permutation_channel_load"]

#: Largest integer magnitude for which all of linear_sum_assignment's sums stay exact in float64.
_FLOAT_EXACT = 2 ** 53


@dataclass
class ChannelMatching:
    """Result of the max-weight matchings over a set of channels.

    Attributes
    ----------
    channel : hashable
        The channel whose matching weighs most.
    weight : int
        That matching's weight (integer, in the caller's units).
    permutation : ndarray
        ``permutation[s]`` is the destination of source ``s`` in that matching.
    per_channel : dict
        Weight of the best matching of every channel examined.
    """

    channel: Hashable
    weight: int
    permutation: np.ndarray
    per_channel: dict = field(default_factory=dict, repr=False)


def _check_exact(W: np.ndarray) -> None:
    """Refuse integer weights whose sums could leave float64's exact range."""
    if W.dtype.kind not in "iu":
        raise TypeError("worst_case_for_channels needs integer weights (scale rationals to a common denominator)")
    N = W.shape[0]
    span = int(W.max()) - min(int(W.min()), 0) if W.size else 0
    if span * (2 * N + 2) >= _FLOAT_EXACT:
        raise ValueError(f"integer weights up to {span} on {N} nodes exceed the float64-exact range "
                         "of linear_sum_assignment; use a coarser common denominator")


def worst_case_for_channels(gamma_rows_fn: Callable[[Hashable], np.ndarray],
                            channels: Iterable[Hashable], N: int,
                            progress=None) -> ChannelMatching:
    """Worst permutation over ``channels`` by one max-weight perfect matching per channel.

    Works on any graph: ``gamma_rows_fn(c)`` returns the N x N integer matrix whose entry
    ``[s, d]`` is the pair load ``gamma_c(s, d)`` times a common denominator (the same for every
    channel, so that weights are comparable).

    Parameters
    ----------
    gamma_rows_fn : callable
        Channel -> (N, N) integer ndarray of pair-load numerators.
    channels : iterable
        Channels to examine (e.g. all channels, or one focus channel per symmetry class).
    N : int
        Number of nodes.
    progress : callable or tqdm-like, optional
        Advanced by one per channel.

    Returns
    -------
    ChannelMatching
        The channel with the heaviest matching, its integer weight and permutation.

    Examples
    --------
    A 3-node ring with one channel 0->1 that every pair (s, s+1) crosses once:

    >>> W = np.array([[0, 1, 0], [0, 0, 0], [1, 0, 0]])
    >>> res = worst_case_for_channels(lambda c: W, ["0->1"], 3)
    >>> res.weight, res.permutation.tolist()
    (2, [1, 2, 0])

    References
    ----------
    B. Towles, "Finding worst-case permutations for oblivious routing algorithms", §3.2-3.3.
    """
    best: ChannelMatching | None = None
    per_channel = {}
    from scipy.optimize import linear_sum_assignment  # lazily: a plain route never needs scipy.optimize

    for ch in channels:
        W = np.asarray(gamma_rows_fn(ch))
        if W.shape != (N, N):
            raise ValueError(f"weights of channel {ch!r} have shape {W.shape}, expected {(N, N)}")
        _check_exact(W)
        rows, cols = linear_sum_assignment(W, maximize=True)
        weight = int(W[rows, cols].astype(object).sum())
        per_channel[ch] = weight
        if best is None or weight > best.weight:
            perm = np.empty(N, dtype=np.int64)
            perm[rows] = cols
            best = ChannelMatching(ch, weight, perm)
        advance_progress(progress, 1)
    if best is None:
        raise ValueError("no channels given")
    best.per_channel = per_channel
    return best


@dataclass
class WorstCaseResult:
    """Exact worst case of an oblivious routing algorithm on a torus.

    Attributes
    ----------
    routing : str
    throughput : float
        Worst-case throughput as a fraction of capacity (``capacity_load / max_load``).
    max_load : float
    max_load_exact : Fraction
        Exact load that ``permutation`` puts on ``channel``.
    channel : tuple[str, str]
        (tail label, head label) of the focus channel that reaches the worst case.
    permutation : ndarray
        ``permutation[s]`` = destination of source ``s``.
    exact : bool
        True: ``max_load_exact`` *is* the worst case (integer weights, or a float matching
        certified by exact dual potentials). Kept for the JSON contract.
    error_bound : Fraction
        Always 0 (an upper bound on how far the true worst case could lie above
        ``max_load_exact``).
    method : str
        ``"integer"`` (exact integer weights) or ``"certified"`` (exact LP-duality certificate).
    pair_loads : str
        ``"exact"``, or ``"sampled, M paths per pair"`` on a general graph whose path system has
        no exact enumeration (the matching is then exact for the sampled loads).
    focus_channels : list[str]
        The channels matched (one per symmetry class used).
    """

    routing: str
    torus: str
    throughput: float
    max_load: float
    max_load_exact: Fraction
    channel: tuple[str, str]
    channel_index: int
    permutation: np.ndarray = field(repr=False)
    exact: bool = True
    error_bound: Fraction = Fraction(0)
    throughput_exact: Fraction = Fraction(0)
    focus_channels: list[str] = field(default_factory=list)
    method: str = "integer"
    pair_loads: str = "exact"

    def as_dict(self) -> dict:
        """JSON-ready dictionary."""
        return {"routing": self.routing, "torus": self.torus, "throughput": self.throughput,
                "throughput_exact": str(self.throughput_exact), "max_load": self.max_load,
                "max_load_exact": str(self.max_load_exact), "channel": list(self.channel),
                "exact": self.exact, "error_bound": str(self.error_bound),
                "focus_channels": self.focus_channels, "method": self.method, "pair_loads": self.pair_loads, "permutation": self.permutation.tolist()}


def focus_classes(routing, n: int) -> list[tuple[int, int]]:
    """Channel classes (dim, sign) that need a matching, by the algorithm's symmetries.

    Translation makes every channel of a class equivalent. Every algorithm here is also
    invariant under reflecting a dimension (ties are split evenly), which maps (dim, -) onto
    (dim, +); algorithms whose dimension orders are uniformly random are invariant under
    permuting dimensions too, leaving a single class. Both properties are verified on small tori
    by the test-suite (tests/oblivious/test_symmetry.py).
    """
    alg = get_routing(routing)
    dims = [0] if alg.dimension_symmetric else list(range(n))
    signs = (1,) if alg.reflection_symmetric else (1, -1)
    return [(d, s) for d in dims for s in signs]


def permutation_channel_load(pl: PairLoads, perm: Sequence[int], channel: int) -> Fraction:
    """Exact load that permutation ``perm`` (dest[src]) puts on ``channel``."""
    t = pl.torus
    perm = np.asarray(perm, dtype=np.int64)
    tail, dim, sign = (int(x) for x in t.channel_parts(channel))
    src = np.arange(t.N)
    offs = t.offset_table[src, perm]
    tails = t.offset_table[src, tail]           # tail - s
    nums = pl.tables[(dim, sign)][offs, tails]
    return sum((Fraction(int(a), int(b)) for a, b in zip(nums, pl.den[offs]) if a), Fraction(0))


def _focus_fractions(pl: PairLoads, cls) -> tuple[np.ndarray, np.ndarray]:
    """Numerators and denominators ``(num[s, d], den[s, d])`` of the focus channel of ``cls``
    whose tail is node 0.

    ``gamma_(0 -> .)(s, d) = gamma_(-s -> .)(0, d - s)``: row s reads the table at offset
    ``d - s`` and tail ``-s``.
    """
    t = pl.torus
    neg = t.offset_table[:, 0]                  # 0 - s
    return pl.tables[cls][t.offset_table, neg[:, None]], pl.den[t.offset_table]


def _focus_weights(pl: PairLoads, cls) -> np.ndarray:
    """Exact integer weights ``gamma * D`` of the focus channel of ``cls`` (D small enough)."""
    num, den = _focus_fractions(pl, cls)
    return num * (pl.common_denominator() // den)


def _largest_weight(pl: PairLoads, D: int) -> int:
    """Largest exact integer weight ``num * D / den`` over the tabulated classes (Python ints)."""
    best = 0
    for table in pl.tables.values():
        for row_max, den in zip(table.max(axis=1).tolist(), pl.den.tolist()):
            best = max(best, row_max * (D // den))
    return best


def _integer_fits(pl: PairLoads) -> bool:
    """Whether integer weights over the common denominator keep SciPy's float sums exact."""
    D = pl.common_denominator()
    return D < 2 ** 62 and _largest_weight(pl, D) * (2 * pl.torus.N + 2) < _FLOAT_EXACT


def _match_integer(pl: PairLoads, channels: dict, progress) -> tuple[int, np.ndarray, Fraction]:
    D = pl.common_denominator()
    match = worst_case_for_channels(lambda c: _focus_weights(pl, channels[c]), list(channels),
                                    pl.torus.N, progress)
    return int(match.channel), match.permutation, Fraction(match.weight, D)


def _match_certified(pl: PairLoads, channels: dict, progress) -> tuple[int, np.ndarray, Fraction]:
    best = None
    for ch, cls in channels.items():
        m = max_weight_matching(*_focus_fractions(pl, cls))
        if best is None or m.weight > best[2]:
            best = (int(ch), m.permutation, m.weight)
        advance_progress(progress, 1)
    return best


def worst_case(k: int, n: int, routing: str, progress=None, method: str = "auto") -> WorstCaseResult:
    """Exact worst-case permutation and throughput of ``routing`` on ``torus:k=K,n=N``.

    Parameters
    ----------
    k, n : int
        Torus radix (>= 3) and dimension.
    routing : str
        ``dor``, ``val``, ``romm``, ``rlb``, ``rlbth`` or ``ival``.
    progress : callable or tqdm-like, optional
        Advanced by one per offset tabulated (N) and one per focus channel matched.
    method : str
        ``"integer"`` (integer weights over the common denominator; refused when they would not
        stay exact in float64), ``"certified"`` (float matching proved optimal by exact dual
        potentials) or ``"auto"`` (integer when it fits, else certified).

    Returns
    -------
    WorstCaseResult

    Examples
    --------
    >>> r = worst_case(9, 2, "dor")
    >>> round(r.throughput, 3), r.max_load_exact, r.channel
    (0.278, Fraction(4, 1), ('0,0', '1,0'))

    References
    ----------
    B. Towles, "Finding worst-case permutations for oblivious routing algorithms", Table 1:
    on the 9-ary 2-cube DOR's worst case is 0.278 of capacity and ROMM's 0.173.
    """
    if method not in ("auto", "integer", "certified"):
        raise ValueError(f"unknown matching method {method!r}")
    torus = Torus(k, n)
    alg = get_routing(routing)
    classes = focus_classes(alg, n)
    pl = pair_loads(alg, torus, classes, progress=progress)
    if method == "auto":
        method = "integer" if _integer_fits(pl) else "certified"
    channels = {torus.channel(0, d, s): (d, s) for d, s in classes}
    match = _match_integer if method == "integer" else _match_certified
    ch, perm, weight = match(pl, channels, progress)
    load = permutation_channel_load(pl, perm, ch)
    if load != weight:                           # the two exact computations must agree
        raise AssertionError(f"matching weight {weight} != permutation load {load}")
    tail, head = torus.channel_ends(ch)
    cap = torus.capacity_load
    return WorstCaseResult(
        routing=alg.name, torus=torus.name, throughput=float(cap / load), max_load=float(load),
        max_load_exact=load, channel=(torus.label(tail), torus.label(head)), channel_index=ch,
        permutation=perm, exact=True, error_bound=Fraction(0),
        throughput_exact=cap / load, focus_channels=[torus.channel_label(c) for c in channels],
        method=method)
