"""The shape every oblivious routing algorithm of the torus shares: choices, legs and path families.

A route from node 0 to an offset is given by its random *choices* (two signed move vectors and a
dimension order for each phase, :class:`Choices`) and turned into straight *legs* (a dimension
and a signed step count each, :func:`legs`), the same way for the exact enumeration
(:class:`PathFamily`, integer weights) and for sampling (:func:`legs_to_nodes`). :class:`Routing`
is the base class of the algorithms of :mod:`universal.paths.torus.algorithms` (which also
exports every name here) and of the designed routings of :mod:`universal.paths.torus.designed`.

References: B. Towles, "Finding worst-case permutations for oblivious routing algorithms", 2002;
B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design", 2003.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .geometry import Torus


# ---------------------------------------------------------------------------------------------
# data shapes
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Choices:
    """Random choices of a two-phase route for P routes (one row each).

    Attributes
    ----------
    a, b : ndarray, shape (P, n)
        Signed moves of phase 1 and phase 2 per dimension (``a + b`` = offset mod k).
    order1, order2 : ndarray, shape (P, n)
        Dimension order of each phase (a permutation of ``0..n-1``).
    weights : ndarray, shape (P,)
        Integer weights (probability = weight / total); all ones for sampled choices.
    """

    a: np.ndarray
    b: np.ndarray
    order1: np.ndarray
    order2: np.ndarray
    weights: np.ndarray


@dataclass(frozen=True)
class PathFamily:
    """All routes from node 0 to one offset, as legs with exact integer weights.

    Attributes
    ----------
    dims : ndarray, shape (P, L)
        Dimension moved by each leg.
    steps : ndarray, shape (P, L)
        Signed length of each leg (0 for an empty leg).
    weights : ndarray, shape (P,)
        Positive integer weights; the probability of route p is ``weights[p] / den``.
    """

    dims: np.ndarray
    steps: np.ndarray
    weights: np.ndarray

    @property
    def den(self) -> int:
        """Common denominator of the route probabilities (sum of the weights)."""
        return int(self.weights.sum())

    @property
    def lengths(self) -> np.ndarray:
        """Hop count of every route."""
        return np.abs(self.steps).sum(axis=1)


# ---------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------
def _minimal_options(k: int, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both minimal signed moves for coordinate offsets ``c`` (0..k-1).

    Returns ``(lo, hi)``; they differ only on a tie (``2c == k``), where they are ``-k/2`` and
    ``+k/2``. Otherwise both equal the unique minimal move.
    """
    c = np.asarray(c, dtype=np.int64)
    minimal = np.where(2 * c <= k, c, c - k)
    lo = np.where(2 * c == k, -c, minimal)
    return lo, minimal


def _identity_orders(P: int, n: int, reverse: bool = False) -> np.ndarray:
    order = np.arange(n, dtype=np.int64)
    if reverse:
        order = order[::-1].copy()
    return np.broadcast_to(order, (P, n)).copy()


@lru_cache(maxsize=None)
def _all_orders(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)


def _random_orders(rng: np.random.Generator, P: int, n: int) -> np.ndarray:
    return rng.permuted(np.broadcast_to(np.arange(n, dtype=np.int64), (P, n)), axis=1)


def _tie_product(k: int, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All minimal signed move vectors for one offset ``c`` (shape (n,)) and their weights.

    Each tie dimension doubles the count; weights are ``2**(n - ties)``, summing to ``2**n``.
    """
    lo, hi = _minimal_options(k, c)
    per_dim = [sorted({int(x), int(y)}) for x, y in zip(lo, hi)]
    moves = np.array(list(itertools.product(*per_dim)), dtype=np.int64).reshape(-1, len(c))
    n = len(c)
    return moves, np.full(len(moves), 2 ** n // len(moves), dtype=np.int64)


def legs(choices: Choices, k: int, erase_loops: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Legs ``(dims, steps)`` of routes given by their choices, shape (P, 2n) each.

    Phase 1's legs come first (in ``order1``), then phase 2's (in ``order2``). With
    ``erase_loops`` (IVAL) the second order must be the reverse of the first; the walk is then
    *palindromic* (x1 y1 | y2 x2) and chronological loop erasure has a closed form: the legs of
    the innermost dimensions in which the offset is zero cancel (each pair is a walk out and
    back, or a full turn of the ring), the two legs of the next dimension out merge into one leg
    of their summed signed length, and the outer legs stay (they lie on disjoint lines, because
    the walk has already moved off zero in that inner dimension). The test-suite checks this
    against literal loop erasure of the node walks.

    Parameters
    ----------
    choices : Choices
    k : int
        Radix (offsets are compared modulo k).
    erase_loops : bool

    Returns
    -------
    dims, steps : ndarray of int64, shape (P, 2n)
    """
    a, b, o1, o2 = choices.a, choices.b, choices.order1, choices.order2
    s1 = np.take_along_axis(a, o1, axis=1)
    s2 = np.take_along_axis(b, o2, axis=1)
    if not erase_loops:
        return np.concatenate([o1, o2], axis=1), np.concatenate([s1, s2], axis=1)
    if not np.array_equal(o2, o1[:, ::-1]):
        raise ValueError("loop erasure here needs the second order to reverse the first")
    s2r = s2[:, ::-1]                               # phase-2 legs listed in order1
    offset = np.take_along_axis((a + b) % k, o1, axis=1)
    zero_tail = np.flip(np.logical_and.accumulate(np.flip(offset == 0, axis=1), axis=1), axis=1)
    inner_empty = np.concatenate([zero_tail[:, 1:], np.ones((len(a), 1), bool)], axis=1)
    merge = ~zero_tail & inner_empty                # innermost dimension with a non-zero offset
    # the merged dimension has a non-zero offset, so the two legs never add up to a full turn
    merged = s1 + s2r
    new1 = np.where(zero_tail, 0, np.where(merge, merged, s1))
    new2 = np.where(zero_tail | merge, 0, s2r)
    return np.concatenate([o1, o1[:, ::-1]], axis=1), np.concatenate([new1, new2[:, ::-1]], axis=1)


def legs_to_nodes(torus: Torus, source: int, dims: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Node ids visited by one route given by its legs, from ``source`` (included) on.

    Examples
    --------
    >>> legs_to_nodes(Torus(5, 2), 0, np.array([0, 1]), np.array([2, -1])).tolist()
    [0, 1, 2, 22]
    """
    dims = np.asarray(dims, dtype=np.int64)
    steps = np.asarray(steps, dtype=np.int64)
    counts = np.abs(steps)
    unit_dims = np.repeat(dims, counts)
    unit_sign = np.repeat(np.sign(steps), counts)
    moves = np.zeros((len(unit_dims) + 1, torus.n), dtype=np.int64)
    moves[np.arange(1, len(unit_dims) + 1), unit_dims] = unit_sign
    coords = (torus.coords[source][None, :] + np.cumsum(moves, axis=0)) % torus.k
    return coords @ torus.powers


class Routing:
    """Base class of an oblivious routing algorithm on the torus.

    Subclasses implement :meth:`choices` (exact enumeration for one offset) and :meth:`sample`
    (random choices for many offsets). Class attributes:

    ``name``, ``summary``
        Registry name and one line of description.
    ``erase_loops``
        Whether the joined two-phase walk has its loops removed (IVAL).
    ``dimension_symmetric``
        Whether permuting the dimensions maps the algorithm to itself (true when dimension
        orders are drawn uniformly at random). Every algorithm here is also invariant under
        reflecting any dimension (ties are split evenly), which the worst-case search uses; both
        properties are checked by the test-suite on small tori.
    ``minimal``
        Whether every route is a shortest path.
    """

    name: str = ""
    summary: str = ""
    erase_loops: bool = False
    dimension_symmetric: bool = False
    reflection_symmetric: bool = True
    minimal: bool = False

    def choices(self, torus: Torus, offset: int) -> Choices:  # pragma: no cover - abstract
        raise NotImplementedError

    def sample(self, torus: Torus, offsets: np.ndarray,
               rng: np.random.Generator) -> Choices:  # pragma: no cover - abstract
        raise NotImplementedError

    def family(self, torus: Torus, offset: int) -> PathFamily:
        """All routes from node 0 to ``offset`` with exact integer weights (reduced by their gcd)."""
        ch = self.choices(torus, int(offset))
        dims, steps = legs(ch, torus.k, self.erase_loops)
        w = ch.weights.astype(np.int64)
        g = int(np.gcd.reduce(w)) if len(w) else 1
        return PathFamily(dims, steps, w // max(g, 1))

    def sample_routes(self, torus: Torus, sources: np.ndarray, dests: np.ndarray,
                      rng: np.random.Generator) -> list[np.ndarray]:
        """One route (node ids, source first) per pair, drawn with ``rng`` (see :func:`sample_paths`)."""
        offsets = torus.sub(dests, sources)
        ch = self.sample(torus, offsets, rng)
        dims, steps = legs(ch, torus.k, self.erase_loops)
        return [legs_to_nodes(torus, int(s), dims[i], steps[i]) for i, s in enumerate(sources)]

    def __repr__(self) -> str:
        return f"<routing {self.name}>"
