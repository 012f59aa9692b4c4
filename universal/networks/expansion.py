"""Expansion of a multibutterfly's splitters, measured.

§5.1 of Meyer auf der Heide & Scheideler, "Communication in Parallel Systems" (1996), asks of an
s-ary m-splitter that the edges from its m inputs into each output set form an expander: for
some α and β, every set S of at most α·m inputs has at least β·|S| neighbours in each output set
(Upfal, "An O(log N) deterministic packet routing scheme", 1989). The multibutterfly here draws
random splitters (:mod:`universal.networks.multibutterfly`); this module measures, for a splitter
and an output set, the smallest ratio |N(S)| / |S| over the sets S of each size k <= α·m:

* exactly, by enumerating every such set, when there are at most ``exact_limit`` of them;
* otherwise over ``samples`` uniformly random sets of each size. A sampled minimum can only be
  higher than the true one (a bad set may be missed); by the rule of three, with 95% confidence
  fewer than 3/samples of the sets of that size have a smaller ratio.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from universal.errors import UserError
from universal.networks.base import Network
from universal.networks.multibutterfly import splitter_table

#: Largest number of sets enumerated exactly by default.
EXACT_LIMIT = 200_000


@dataclass
class ExpansionResult:
    """The measured expansion of one splitter into one of its output sets.

    Attributes
    ----------
    level, splitter, output_set : int
        Which graph: splitter ``splitter`` (0-based, in row order) of level ``level`` and its
        output set ``output_set`` (0..√s-1).
    inputs, outputs : int
        m, and the size m/√s of the output set.
    alpha : float
        Sets of at most ``floor(alpha * m)`` inputs were examined.
    ratios : ndarray of float
        ``ratios[k - 1]``: the smallest |N(S)| / |S| found over sets of size k.
    exact : bool
        True if every set was examined; False if ``samples`` random sets of each size were.
    samples : int
        Random sets per size (0 when exact).
    """

    level: int
    splitter: int
    output_set: int
    inputs: int
    outputs: int
    alpha: float
    ratios: np.ndarray
    exact: bool
    samples: int

    @property
    def beta(self) -> float:
        """The β found for this α: the smallest ratio over all sizes examined."""
        return float(self.ratios.min())

    @property
    def error(self) -> float | None:
        """For a sampled result, the fraction of sets of a size that may lie below the minimum found
        (3 / samples, 95% confidence); None when exact."""
        return None if self.exact else 3.0 / self.samples


def splitter_adjacency(network: Network, level: int, splitter: int, output_set: int) -> np.ndarray:
    """Boolean matrix (m inputs x m/√s outputs) of one splitter's edges into one output set.

    Examples
    --------
    >>> from universal.networks.multibutterfly import multibutterfly
    >>> a = splitter_adjacency(multibutterfly(16, 2), 0, 0, 3)
    >>> a.shape, a.sum(axis=1).tolist() == [2] * 16, a.sum(axis=0).tolist()
    ((16, 4), True, [8, 8, 8, 8])
    """
    table = splitter_table(network)
    if not 0 <= level < network.depth:
        raise UserError(f"level {level} has no splitter (levels 0..{network.depth - 1})")
    root = math.isqrt(network.params["s"])
    q = table.block[level]
    m = q * root
    rows = len(network.inputs)
    if not 0 <= splitter < rows // m or not 0 <= output_set < root:
        raise UserError(f"level {level} has splitters 0..{rows // m - 1} with output sets 0..{root - 1}")
    inputs = splitter * m + np.arange(m)
    heads = network.link_head[table.links[level][inputs, output_set]] - (level + 1) * rows
    adjacency = np.zeros((m, q), dtype=bool)
    adjacency[np.repeat(np.arange(m), heads.shape[1]), (heads - splitter * m - output_set * q).ravel()] = True
    return adjacency


def splitter_expansion(network: Network, level: int, splitter: int, output_set: int, alpha: float, *,
                       samples: int = 2000, rng: np.random.Generator | None = None,
                       exact_limit: int = EXACT_LIMIT) -> ExpansionResult:
    """The smallest |N(S)| / |S| over input sets S of each size up to α·m, for one splitter and
    one output set: exact by enumeration, or sampled (see the module docstring).

    Parameters
    ----------
    network : Network
        A multibutterfly.
    level, splitter, output_set : int
        Which splitter (by level and index in row order) and which of its output sets.
    alpha : float
        0 < alpha <= 1; sets of 1..floor(alpha * m) inputs are examined.
    samples : int
        Random sets per size when there are more than ``exact_limit`` sets in all.
    rng : numpy.random.Generator, optional
        Source of the sampled sets (default seed 0).
    exact_limit : int
        Enumerate when the sets number at most this many.

    Returns
    -------
    ExpansionResult

    Examples
    --------
    >>> from universal.networks.multibutterfly import multibutterfly
    >>> res = splitter_expansion(multibutterfly(16, 2), 0, 0, 0, alpha=0.25)
    >>> res.exact, float(res.ratios[0]), len(res.ratios)   # one input: its sqrt(s)/2 = 2 neighbours
    (True, 2.0, 4)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §5.1;
    E. Upfal, "An O(log N) deterministic packet routing scheme", STOC 1989.
    """
    if not 0 < alpha <= 1:
        raise UserError(f"alpha={alpha} must lie in (0, 1]")
    if samples < 1:
        raise UserError(f"samples={samples} must be at least 1")
    adjacency = splitter_adjacency(network, level, splitter, output_set)
    m, q = adjacency.shape
    largest = max(1, math.floor(alpha * m))
    total = sum(math.comb(m, k) for k in range(1, largest + 1))
    exact = total <= exact_limit
    rng = rng if rng is not None else np.random.default_rng(0)
    ratios = np.empty(largest)
    for k in range(1, largest + 1):
        if exact:
            sets = np.array(list(itertools.combinations(range(m), k)), dtype=np.int64)
            ratios[k - 1] = _smallest_ratio(adjacency, sets)
        else:
            ratios[k - 1] = _sampled_ratio(adjacency, k, samples, rng)
    return ExpansionResult(level, splitter, output_set, m, q, alpha, ratios, exact, 0 if exact else samples)


def _smallest_ratio(adjacency: np.ndarray, sets: np.ndarray) -> float:
    """min over the rows of ``sets`` (input indices) of |neighbours| / |set|, in chunks."""
    k = sets.shape[1]
    best = math.inf
    chunk = max(1, 4_000_000 // (k * adjacency.shape[1]))
    for start in range(0, len(sets), chunk):
        reached = adjacency[sets[start:start + chunk]].any(axis=1).sum(axis=1)
        best = min(best, int(reached.min()) / k)
    return best


def _sampled_ratio(adjacency: np.ndarray, k: int, samples: int, rng: np.random.Generator) -> float:
    m = adjacency.shape[0]
    best = math.inf
    chunk = max(1, 4_000_000 // m)
    for start in range(0, samples, chunk):
        count = min(chunk, samples - start)
        sets = np.argpartition(rng.random((count, m)), k - 1, axis=1)[:, :k]   # k distinct inputs each
        best = min(best, _smallest_ratio(adjacency, sets))
    return best


def network_expansion(network: Network, alpha: float, *, samples: int = 2000, rng: np.random.Generator | None = None,
                      exact_limit: int = EXACT_LIMIT) -> list[ExpansionResult]:
    """:func:`splitter_expansion` of every splitter and output set of a (small) multibutterfly.

    Returns
    -------
    list of ExpansionResult
        Level by level, splitter by splitter, output set by output set.

    Examples
    --------
    >>> from universal.networks.multibutterfly import multibutterfly
    >>> results = network_expansion(multibutterfly(16, 2), alpha=0.25)
    >>> len(results), {r.level: float(r.ratios[0]) for r in results}   # one input's neighbours
    (20, {0: 2.0, 1: 1.0})
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    root = math.isqrt(network.params["s"])
    rows = len(network.inputs)
    table = splitter_table(network)
    results = []
    for level in range(network.depth):
        for splitter in range(rows // (table.block[level] * root)):
            for output_set in range(root):
                results.append(splitter_expansion(network, level, splitter, output_set, alpha, samples=samples,
                                                  rng=rng, exact_limit=exact_limit))
    return results


__all__ = ["EXACT_LIMIT", "ExpansionResult", "network_expansion", "splitter_adjacency", "splitter_expansion"]
