"""2TURN and 2TURNA are routings over paths with at most two turns (Towles, Dally & Boyd,
"Throughput-centric routing algorithm design", 2003, §5.2 and §5.4), checked by a method that
shares no code with the design (:mod:`tests.design.two_turn_oracle`), and the paper's localities.

A design over the two-turn path family used to be rounded through its summed channel flows, whose
circulations were cancelled and whose routes were re-decomposed: on the 8-ary 2-cube that spliced
the paths into shorter ones outside the family (locality 1.48326, below the family's 95/64).
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from tests.design.two_turn_oracle import locality, residuals
from tests.test_cli import run


def _save(capsys, tmp_path, k: int, objective: str, *extra: str):
    saved = tmp_path / f"{objective}-{k}.routing"
    status, out, err = run(capsys, "design", "--network", f"torus:k={k},n=2", "--objective", objective,
                           "--then", "locality", "--paths", "2turn", "--save", str(saved), "--json", *extra)
    assert status == 0, err
    return saved, json.loads(out)


@pytest.mark.parametrize("k", [4, 5, 6, 7, 8])
def test_saved_2turn_decomposes_into_two_turn_paths(capsys, tmp_path, k):
    saved, row = _save(capsys, tmp_path, k, "worst-case")
    worst = max(residuals(saved).values())
    assert worst < 1e-9, f"flow no two-turn paths can carry (residual {worst})"
    assert float(locality(saved)) == pytest.approx(row["locality"], abs=1e-9)
    assert row["throughput_worst"] == pytest.approx(0.5, abs=1e-6)
    if k == 8:                          # TDB §5.2: 0.36% above the optimum; the family's LP: 95/64
        assert abs(float(locality(saved) - Fraction(95, 64))) < 1e-6


@pytest.mark.parametrize("k", [4, 5, 6, 7, 8])
def test_saved_2turna_decomposes_into_two_turn_paths(capsys, tmp_path, k):
    # a two-permutation sample keeps the average-case LP to seconds; the family does not depend
    # on it (benchmarks/two_turn.py checks the default sample of 100)
    saved, _ = _save(capsys, tmp_path, k, "average-case", "--samples", "2")
    assert max(residuals(saved).values()) < 1e-9


@pytest.mark.parametrize("k", [4, 6])
def test_2turn_equals_the_unrestricted_optimum_on_small_tori(capsys, tmp_path, k):
    """TDB §5.2: for k = 4 and 6, 2TURN exactly matches the optimal locality."""
    saved, _ = _save(capsys, tmp_path, k, "worst-case")
    status, out, err = run(capsys, "design", "--network", f"torus:k={k},n=2", "--then", "locality", "--json")
    assert status == 0, err
    assert float(locality(saved)) == pytest.approx(json.loads(out)["locality"], abs=1e-6)


def test_a_cycle_cancelling_decomposition_would_fail_the_oracle(tmp_path):
    """The oracle can fail: the old rounding (cancel the circulations of the summed flow, then
    re-decompose) gives flows no two-turn paths can carry on the 8-ary 2-cube."""
    from universal.design import solve_design
    from universal.paths.torus.designed import FlowRouting, integer_flows
    from universal.paths.torus.geometry import Torus
    from universal.paths.torus.routingfile import write_routing
    t = Torus(8, 2)
    sol = solve_design(t, "worst-case", "2turn", then="locality")
    old = FlowRouting(t, integer_flows(t, sol.flows), 2 ** 40, "old")
    write_routing(tmp_path / "old.routing", old)
    bad = {off for off, r in residuals(tmp_path / "old.routing").items() if r > 1e-6}
    assert (2, 2) in bad and float(locality(tmp_path / "old.routing")) < 95 / 64 - 1e-4


def _turns_and_reversals(route: np.ndarray, k: int) -> tuple[int, bool]:
    xy = np.stack([route % k, route // k], axis=1)
    moves = (xy[1:] - xy[:-1] + 1) % k - 1                  # -1, 0 or +1 per coordinate
    dims = np.argmax(moves != 0, axis=1)
    signs = moves[np.arange(len(moves)), dims]
    turns = int((dims[1:] != dims[:-1]).sum())
    reversal = bool(((dims[1:] == dims[:-1]) & (signs[1:] != signs[:-1])).any())
    return turns, reversal


@pytest.mark.parametrize("objective", ["worst-case", "average-case"])
def test_drawn_routes_are_two_turn_paths(capsys, tmp_path, objective):
    """route and openloop draw the family's own paths (saved 2TURN and 2TURNA designs), never a
    splice of two of them."""
    from universal.paths.torus.algorithms import sample_paths
    k = 5
    saved, _ = _save(capsys, tmp_path, k, objective, "--samples", "5")
    name = f"lp:file={saved}"
    rng = np.random.default_rng(3)
    src = np.repeat(np.arange(k * k), 40)
    dst = rng.integers(0, k * k, size=len(src))
    routes = sample_paths(name, k, 2, src, dst, rng)
    for s, d, r in zip(src, dst, routes):
        assert r[0] == s and r[-1] == d
        if s != d:
            turns, reversal = _turns_and_reversals(np.asarray(r), k)
            assert turns <= 2 and not reversal
            assert len(set(r.tolist())) == len(r)
