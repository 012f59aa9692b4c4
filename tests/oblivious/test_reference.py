"""Pair loads by relative routing equal loads walked route by route from every source."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from universal.oblivious import ROUTINGS, get_routing, Torus, pair_loads

from .reference import pair_load_row

#: Every registered torus routing and the fixed-order IVAL variant.
NAMES = [*ROUTINGS, "ival:order=xy"]


class _Relative:
    """gamma_c(s, d) for all channels c at once, read from the tables of routes leaving node 0."""

    def __init__(self, name: str, torus: Torus) -> None:
        self.torus = torus
        self.pl = pair_loads(name, torus)
        self.full = self.pl.full_numerators()
        tails, dims, signs = torus.channel_parts(np.arange(torus.num_channels))
        self.parts = tails, dims, signs

    def row(self, s: int, d: int) -> dict[int, Fraction]:
        t = self.torus
        tails, dims, signs = self.parts
        off = int(t.sub(d, s))
        translated = t.channel(t.sub(tails, s), dims, signs)      # channel c seen from s
        nums = self.full[off, translated]
        den = int(self.pl.den[off])
        return {int(c): Fraction(int(nums[c]), den) for c in np.nonzero(nums)[0]}

SMALL = [(3, 1), (4, 1), (5, 1), (6, 1), (3, 2), (4, 2)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k,n", SMALL)
def test_relative_tables_match_reference_walks(name, k, n):
    torus = Torus(k, n)
    rel = _Relative(name, torus)
    for s in range(torus.N):
        for d in range(torus.N):
            assert rel.row(s, d) == pair_load_row(name, s, d, k, n), (name, k, n, s, d)
    # the single-entry accessor agrees too
    assert rel.pl.load(torus.channel(1, 0, 1), 0, torus.N - 1) == rel.row(0, torus.N - 1).get(
        torus.channel(1, 0, 1), 0)


@pytest.mark.parametrize("name,k,pairs", [
    ("dor", 4, "all"), ("ival", 3, "from 0"), ("val", 4, "some"), ("ival", 4, "some"),
    ("romm", 4, "some"), ("rlb", 3, "some"), ("rlbth", 4, "some"),
])
def test_three_dimensional_tori(name, k, pairs):
    n = 3
    torus = Torus(k, n)
    rel = _Relative(name, torus)
    if pairs == "all":
        todo = [(s, d) for s in range(torus.N) for d in range(torus.N)]
    else:  # "some": a sample; "from 0": every destination of node 0 (the relative tables' own row) and a sample
        rng = np.random.default_rng(k)
        todo = [tuple(x) for x in rng.integers(0, torus.N, size=(8, 2)).tolist()] + [(0, 0)]
        if pairs == "from 0":
            todo += [(0, d) for d in range(1, torus.N)]
    for s, d in todo:
        assert rel.row(s, d) == pair_load_row(name, s, d, k, n), (name, k, s, d)


def test_expected_lengths_match_reference():
    k, n = 4, 2
    for name in NAMES:
        pl = pair_loads(name, Torus(k, n))
        for d in range(k ** n):
            row = pair_load_row(name, 0, d, k, n)
            assert Fraction(int(pl.length_num[d]), int(pl.den[d])) == sum(row.values(), Fraction(0))
