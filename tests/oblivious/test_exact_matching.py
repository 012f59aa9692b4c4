"""Exact max-weight matching with huge denominators (universal.oblivious.matching).

Oracles: brute force over all permutations (exact Fractions), the plain integer matching where
it is exact, and a rounded-weight matching whose optimum brackets the true one.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from universal.oblivious import ROUTINGS, Torus, pair_loads, worst_case
from universal.oblivious.matching import certify, max_weight_matching
from universal.oblivious.worstcase import _focus_fractions, focus_classes, permutation_channel_load


def _brute(num, den):
    n = len(num)
    return max(sum(Fraction(int(num[i, p[i]]), int(den[i, p[i]])) for i in range(n))
               for p in itertools.permutations(range(n)))


def _weight(num, den, perm):
    return sum(Fraction(int(num[i, d]), int(den[i, d])) for i, d in enumerate(perm))


def test_matches_brute_force_when_float_cannot_tell_the_weights_apart():
    """Weights 1 + i/10**17: float64 sees ties everywhere, so the exact repair must decide."""
    rng = np.random.default_rng(2)
    big = 10 ** 17
    for _ in range(40):
        n = int(rng.integers(2, 7))
        num = big + rng.integers(0, 5, (n, n))
        den = big + rng.integers(0, 3, (n, n))
        best = _brute(num, den)
        m = max_weight_matching(num, den)
        assert m.weight == best == _weight(num, den, m.permutation)
        assert max_weight_matching(num, den, start=rng.permutation(n)).weight == best


def test_sparse_rectangular_support_with_large_lcm():
    """Zero rows and columns are dropped and the matching extended to a full permutation."""
    rng = np.random.default_rng(5)
    primes = np.array([1000003, 1000033, 1000037, 1000039, 999983, 999979])
    for _ in range(40):
        num = rng.integers(0, 4, (6, 6)) * (rng.random((6, 6)) < 0.4)
        num[rng.integers(0, 6)] = 0
        den = rng.choice(primes, (6, 6))
        m = max_weight_matching(num, den)
        assert sorted(m.permutation.tolist()) == list(range(6))
        assert m.weight == _brute(num, den) == _weight(num, den, m.permutation)


def test_certificate_rejects_a_suboptimal_permutation():
    """On ROMM's focus channel of the 9-ary 2-cube: the worst permutation is certified, the same
    permutation with two destinations swapped (lighter) is not, and the cycle returned improves it."""
    torus = Torus(9, 2)
    pl = pair_loads("romm", torus, focus_classes("romm", 2))
    num, den = _focus_fractions(pl, (0, 1))
    best = max_weight_matching(num, den)
    assert certify(num, den, best.permutation).optimal
    perm = best.permutation.copy()
    a, b = next((a, b) for a, b in itertools.combinations(range(torus.N), 2)
                if _weight(num, den, _swap(perm, a, b)) < best.weight)
    worse = _swap(perm, a, b)
    cert = certify(num, den, worse)
    assert not cert.optimal and len(cert.cycle) >= 2
    better = worse.copy()
    better[cert.cycle] = np.roll(worse[cert.cycle], -1)
    assert _weight(num, den, better) > _weight(num, den, worse)


def _swap(perm, a, b):
    out = perm.copy()
    out[[a, b]] = out[[b, a]]
    return out


@pytest.mark.parametrize("name", list(ROUTINGS))
@pytest.mark.parametrize("k,n", [(4, 2), (5, 2), (6, 2), (3, 3)])
def test_certified_equals_integer_worst_case_on_small_tori(name, k, n):
    integer = worst_case(k, n, name, method="integer")
    certified = worst_case(k, n, name, method="certified")
    assert certified.method == "certified" and integer.method == "integer"
    assert certified.max_load_exact == integer.max_load_exact


def test_romm_on_the_32_ary_2_cube_is_exact():
    """D has ~50 bits here, too many for integer weights in float64; the certified value must lie
    in the bracket of a rounded-weight matching (its permutation's load <= max <= that + N/scale)."""
    res = worst_case(32, 2, "romm")
    assert res.exact and res.method == "certified" and res.error_bound == 0
    torus = Torus(32, 2)
    pl = pair_loads("romm", torus, focus_classes("romm", 2))
    num, den = _focus_fractions(pl, (0, 1))
    scale = 2 ** 30
    grid = np.rint(num * (scale / den.astype(np.float64)))       # |grid - load * scale| <= 1/2
    _, perm = linear_sum_assignment(grid, maximize=True)
    low = permutation_channel_load(pl, perm, torus.channel(0, 0, 1))
    assert low <= res.max_load_exact <= low + Fraction(torus.N, scale)
    assert res.max_load_exact == permutation_channel_load(pl, res.permutation, res.channel_index)
