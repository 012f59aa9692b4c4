"""Theorem 25's adversary (survey §5): the problem it builds has congestion exactly C and
dilation D, every greedy deterministic protocol it plays against takes the closed-form
(D - 1)(floor(C/2) + 1) + C steps on it, and random rank with fresh ranks is much faster."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine import simulate, simulate_reference
from universal.errors import UserError
from universal.networks import build_network, butterfly
from universal.protocols.adversary import (NON_PREDICTIVE, forced_steps, fresh_rank_times, protocol_rng,
                                           theorem25_adversary)
from universal.protocols.adversary_study import AdversaryStudy, fit_growth, run_adversary_study


@pytest.mark.parametrize("protocol", NON_PREDICTIVE)
@pytest.mark.parametrize("d, c", [(1, 3), (2, 2), (3, 5), (5, 6)])
def test_every_protocol_takes_the_closed_form_time(protocol, d, c):
    hard = theorem25_adversary(butterfly(d), protocol, c, seed=7)
    assert hard.T == forced_steps(c, d) >= c * (d + 1) / 2


def test_every_link_carries_exactly_c_packets_from_inputs_to_outputs():
    net = butterfly(4)
    hard = theorem25_adversary(net, "fifo", 3)
    paths = hard.collection()
    assert paths.congestion == 3 and paths.dilation == 4 and hard.size == 2 * 3 * 16
    down = net.levels[net.link_head] > net.levels[net.link_tail]
    assert np.all(paths.link_loads[down] == 3) and np.all(paths.link_loads[~down] == 0)
    assert np.array_equal(np.bincount(hard.sources - net.inputs[0]), np.full(16, 6))
    assert set(hard.dests.tolist()) <= set(net.outputs.tolist())


@pytest.mark.parametrize("protocol", ["fifo", "farthest-to-go", "random-rank"])
def test_the_reference_engine_replays_the_same_time(protocol):
    """A second, plain-Python engine on the finished problem gives Q's T (with Q's fixed ranks)."""
    hard = theorem25_adversary(butterfly(3), protocol, 4, seed=2)
    assert simulate_reference(hard.collection(), protocol, protocol_rng(2)).T == hard.T
    assert simulate(hard.collection(), protocol, protocol_rng(2)).T == hard.T


@pytest.mark.parametrize("protocol", ["fifo", "farthest-to-go"])
def test_acceptance_on_bf5_with_c8(protocol):
    """The issue's acceptance on a smaller case: T >= C·D/2 and >= 1.5 x fresh random rank's mean T."""
    hard = theorem25_adversary(butterfly(5), protocol, 8)
    fresh = fresh_rank_times(hard, [1, 2, 3, 4, 5])
    assert hard.T >= 8 * 5 / 2
    assert hard.T >= 1.5 * np.mean(fresh)


def test_the_same_seed_builds_the_same_problem_and_ranks_change_it():
    a = theorem25_adversary(butterfly(3), "random-rank", 4, seed=1)
    b = theorem25_adversary(butterfly(3), "random-rank", 4, seed=1)
    c = theorem25_adversary(butterfly(3), "random-rank", 4, seed=2)
    assert np.array_equal(a.dests, b.dests)
    assert not np.array_equal(a.dests, c.dests)


@pytest.mark.parametrize("network, protocol, c, message", [
    ("torus:k=4,n=2", "fifo", 2, "runs on the butterfly"),
    ("butterfly:d=3", "random", 2, "deterministic non-predictive"),
    ("butterfly:d=3", "trial-and-failure", 2, "deterministic non-predictive"),
    ("butterfly:d=3", "fifo", 0, "at least 1"),
    ("butterfly:d=20", "fifo", 4, "over the limit"),
])
def test_bad_requests_are_refused(network, protocol, c, message):
    with pytest.raises(UserError, match=message):
        theorem25_adversary(build_network(network), protocol, c)


def test_the_study_fit_separates_c_times_d_from_c_plus_d():
    rows, _ = run_adversary_study(AdversaryStudy([3, 5], [2, 6], ["fifo"], seeds=[1, 2, 3]))
    fit, fresh = fit_growth(rows, "fifo"), fit_growth(rows, "fifo", fresh=True)
    assert fit["C·D"] == pytest.approx(0.5) and fit["D"] == pytest.approx(1.0)
    assert abs(fresh["C·D"]) < 0.25
