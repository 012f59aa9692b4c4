"""The central cross-check (SPEC §11): with unbounded buffers, the simulated saturation of an
oblivious routing is capacity over its largest channel load, which ``universal load`` computes
exactly (Towles, Dally & Boyd, Throughput-centric routing algorithm design, 2003, §2.1). A few
cells here (short runs, loose tolerance); the full table is the openloop_vs_analytic scenario."""

from __future__ import annotations

import numpy as np
import pytest

from universal.oblivious import load_table
from universal.openloop import Measurement
from universal.openloop.saturation import find_saturation, find_saturations, rate_ceiling

from .helpers import spec

QUICK = Measurement(warmup_min=300, window=3000, latency_limit=300, drain=False, overload="stop")


@pytest.mark.parametrize("routing, traffic", [("dor", "tornado"), ("val", "bitcomp")])
def test_simulated_saturation_matches_the_exact_channel_load(routing, traffic):
    exact = load_table(8, 1, [routing], [traffic], np.random.default_rng(0))[0].throughput
    # on the 8-ary 1-cube the capacity is one packet per node per step, so rates are fractions of it
    sat = find_saturation(spec("torus:k=8,n=1", routing, traffic, 1.0, injection="poisson", seed=4),
                          tolerance=0.02, measurement=QUICK)
    assert 0.93 * exact <= sat.theta <= 1.02 * exact
    assert sat.upper > sat.theta


def test_the_ceiling_is_the_injection_limit_or_the_links():
    assert rate_ceiling(spec("torus:k=8,n=2", "dor", "uniform", 1.0)) == 1.0
    # neighbour traffic leaves by all 4 links: 4 packets per node per step fill them
    assert rate_ceiling(spec("torus:k=8,n=2", "dor", "neighbor", 1.0, injection="poisson")) == 4.0


def test_an_injection_limited_search_says_so():
    sat = find_saturation(spec("torus:k=8,n=1", "dor", "neighbor", 1.0, seed=1), tolerance=0.05, measurement=QUICK)
    assert sat.limited and sat.theta == 1.0


def test_searches_run_together_end_exactly_as_alone():
    # find_saturations batches the rounds of several searches (oblivious and adaptive, one of them
    # injection-limited, so they end after different rounds); each must match its search alone
    specs = [spec("torus:k=8,n=1", r, t, 1.0, injection=i, seed=s) for r, t, i, s in
             (("dor", "tornado", "poisson", 2), ("min-adaptive", "bitcomp", "poisson", 3),
              ("dor", "neighbor", "bernoulli", 1))]
    short = Measurement(warmup_min=100, window=400, latency_limit=100, drain=False, overload="stop")
    together = find_saturations(specs, points=4, tolerance=0.1, measurement=short, batch_runs=8)
    for s, got in zip(specs, together):
        alone = find_saturation(s, points=4, tolerance=0.1, measurement=short)
        assert (got.theta, got.upper, got.limited, len(got.runs)) == \
            (alone.theta, alone.upper, alone.limited, len(alone.runs))
        assert [r.slope for r in got.runs] == [r.slope for r in alone.runs]
    assert together[2].limited and not together[0].limited
