"""The screened worst case over random permutations (:mod:`universal.openloop.screen`): its
minimum is the full searches' minimum, same seed and tolerance, and names the same permutation;
the permutations it does not search were judged stable at a rate at least that minimum. A small
torus with dateline VCs and short windows (seconds)."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine.creation import RunSpec
from universal.engine.measure import Measurement
from universal.engine.routes import build_router
from universal.engine.workload import OfferedTraffic, build_injection
from universal.networks import build_network
from universal.openloop.saturation import find_saturations
from universal.openloop.screen import screened_minimum

M = 12
# a coarse tolerance and short warm-ups keep the 12 full searches of the oracle to seconds
OPTIONS = dict(tolerance=0.1, buffer=2, vcs=2,
               measurement=Measurement(window=300, warmup_max=600, latency_limit=200, drain=False, overload="stop",
                                       latencies=False))


def _specs(m: int = M, seed: int = 3) -> list[RunSpec]:
    """m random permutations of the 4-ary 2-cube under DOR (dateline VCs), drawn as
    ``random-perms:M`` draws them, each search seeded with ``seed``."""
    net = build_network("torus:k=4,n=2")
    router, inj = build_router("dor", net), build_injection("bernoulli")
    rng = np.random.default_rng(seed)
    specs = []
    for i in range(m):
        perm = rng.permutation(net.num_nodes)
        matrix = np.zeros((net.num_nodes, net.num_nodes))
        matrix[np.arange(net.num_nodes), perm] = 1.0
        traffic = OfferedTraffic(f"perm#{i}", np.ones(net.num_nodes), perm, None, matrix)
        specs.append(RunSpec(traffic, router, inj, 1.0, seed=seed))
    return specs


@pytest.fixture(scope="module")
def full():
    """Every permutation's full search (the oracle)."""
    return [s.theta for s in find_saturations(_specs(), **OPTIONS)]


@pytest.fixture(scope="module")
def screened():
    return screened_minimum(_specs(), pilot=2, candidates=2, **OPTIONS)


def test_the_screened_minimum_is_the_full_searches_minimum_and_names_the_same_permutation(full, screened):
    # with seed 3 the lowest Θ is the last permutation's, below the pilot's by 2%: the screen must find it
    assert screened.theta == min(full)
    assert screened.index == int(np.argmin(full))      # the first of equal minima, as the table names it


def test_it_searches_fewer_and_each_search_is_the_full_one(full, screened):
    assert len(screened.searched) < M
    for i, sat in screened.searched.items():    # same seed, same tolerance: the same Θ
        assert sat.theta == full[i]


def test_every_permutation_not_searched_was_cleared_at_or_above_the_minimum(full, screened):
    rest = [i for i in range(M) if i not in screened.searched]
    assert rest and all(screened.cleared[i] >= screened.theta for i in rest)
    assert screened.steps and screened.steps[0].rate == min(full[:2])    # the pilot's minimum first
