"""The central cross-check (SPEC §11): with unbounded buffers, the simulated saturation of an
oblivious routing is capacity over its largest channel load, which ``universal load`` computes
exactly (Towles, Dally & Boyd, Throughput-centric routing algorithm design, 2003, §2.1). A few
cells here (short runs, loose tolerance); the full table is the openloop_vs_analytic scenario."""

from __future__ import annotations

import numpy as np
import pytest

from universal.oblivious import load_table
from universal.openloop import Measurement
from universal.openloop.saturation import find_saturation, rate_ceiling

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
