"""Worst case by matching equals the maximum over all permutations (tiny tori, brute force)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from universal.oblivious import ROUTINGS, get_routing, Torus, worst_case

from .reference import pair_load_row

#: Every registered torus routing and the fixed-order IVAL variant.
NAMES = [*ROUTINGS, "ival:order=xy"]


def _reference_tensor(name: str, k: int, n: int) -> tuple[np.ndarray, int]:
    """Integer tensor W[s, d, c] = gamma_c(s, d) * D from the reference walks, and D."""
    N = k ** n
    rows = {(s, d): pair_load_row(name, s, d, k, n) for s in range(N) for d in range(N)}
    D = math.lcm(*(v.denominator for row in rows.values() for v in row.values()))
    W = np.zeros((N, N, 2 * n * N), dtype=np.int64)
    for (s, d), row in rows.items():
        for c, v in row.items():
            W[s, d, c] = v.numerator * (D // v.denominator)
    return W, D


def _brute_force_max(W: np.ndarray) -> int:
    N = W.shape[0]
    best = 0
    src = np.arange(N)
    perms = np.array(list(itertools.permutations(range(N))), dtype=np.int64)
    for lo in range(0, len(perms), 20000):
        loads = W[src[None, :], perms[lo:lo + 20000]].sum(axis=1)   # (B, C)
        best = max(best, int(loads.max()))
    return best


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_ring_worst_case_equals_brute_force(name, k):
    W, D = _reference_tensor(name, k, 1)
    expected = Fraction(_brute_force_max(W), D)
    res = worst_case(k, 1, name)
    assert res.exact
    assert res.max_load_exact == expected
    # the reported permutation really puts that load on the reported channel
    perm = res.permutation
    assert sorted(perm.tolist()) == list(range(k))
    assert Fraction(int(W[np.arange(k), perm, res.channel_index].sum()), D) == expected


@pytest.mark.parametrize("name", ["dor", "romm", "rlbth"])
def test_3ary_2cube_worst_case_equals_brute_force(name):
    W, D = _reference_tensor(name, 3, 2)          # 9! = 362880 permutations
    expected = Fraction(_brute_force_max(W), D)
    res = worst_case(3, 2, name)
    assert res.max_load_exact == expected
    torus = Torus(3, 2)
    assert res.throughput_exact == torus.capacity_load / expected
