"""The CLI-facing API: progress accounting, JSON-ready results, scaled (non-exact) matching."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np

from universal.oblivious import focus_classes, load_table, worst_case


class Counter:
    def __init__(self) -> None:
        self.n = 0

    def update(self, amount: int) -> None:   # tqdm-like
        self.n += amount


def test_progress_totals_and_json():
    done = []
    rows = load_table(5, 2, ["dor", "ival"], ["tornado", "random-perms:30", "uniform"],
                      np.random.default_rng(0), progress=done.append)
    assert sum(done) == 2 * (25 + 30)
    assert [r.traffic for r in rows] == ["tornado", "random-perms:30", "uniform"] * 2
    json.dumps([r.as_dict() for r in rows])
    bar = Counter()
    res = worst_case(5, 2, "dor", progress=bar)
    assert bar.n == 25 + len(focus_classes("dor", 2))
    d = res.as_dict()
    json.dumps(d)
    assert d["channel"] == ["0,0", "1,0"] and d["exact"] is True
    assert sorted(d["permutation"]) == list(range(25))


def test_scaled_matching_brackets_the_exact_worst_case(monkeypatch):
    """Force the rounded-weight path on a case with a known exact answer."""
    from universal.oblivious import worstcase as wc
    exact = worst_case(9, 2, "romm")
    monkeypatch.setattr(wc, "_FLOAT_EXACT", 2 ** 20)   # makes the common denominator "too large"
    rounded = wc.worst_case(9, 2, "romm")
    assert not rounded.exact and rounded.error_bound > 0
    assert rounded.max_load_exact <= exact.max_load_exact <= rounded.max_load_exact + rounded.error_bound
    assert exact.max_load_exact == Fraction(32, 5)
