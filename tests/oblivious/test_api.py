"""The CLI-facing API: progress accounting, JSON-ready results, the switch to certified matching."""

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


def test_large_denominators_switch_to_the_certified_matching(monkeypatch):
    """When integer weights would leave float64's exact range the certified path takes over,
    with the same exact answer."""
    from universal.oblivious import worstcase as wc
    exact = worst_case(9, 2, "romm")
    assert exact.method == "integer"
    monkeypatch.setattr(wc, "_FLOAT_EXACT", 2 ** 20)   # makes the common denominator "too large"
    certified = wc.worst_case(9, 2, "romm")
    assert certified.method == "certified" and certified.exact and certified.error_bound == 0
    assert certified.max_load_exact == exact.max_load_exact == Fraction(32, 5)
