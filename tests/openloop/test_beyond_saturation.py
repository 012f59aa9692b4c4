"""Stability beyond saturation (Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive
routing algorithm for torus networks", 2003, §2.2 and §5.5): with age-based arbitration the
minimum accepted rate α' stays flat once the offered load passes the saturation throughput Θ.

Shown here on the 6-ary 2-cube (36 nodes, short runs; bit complement sends every packet across
the bisection there too, so Θ <= 1/2 of capacity for every routing). The issue's setting, the
8-ary 2-cube, is ``benchmarks/beyond_saturation.py`` (about a minute of CPU time); under the
``farthest-to-go`` rule that script shows α' collapsing beyond Θ, which is what this test
would catch.
"""

from __future__ import annotations

from universal.openloop import Measurement, simulate_batch
from universal.openloop.saturation import find_saturation
from universal.openloop.study import analytic_throughput
from universal.openloop.workload import capacity_rate

from .helpers import network, spec

NET = "torus:k=6,n=2"
SEARCH = Measurement(warmup_min=300, warmup_max=1000, window=1000, latency_limit=300, drain=False,
                     overload="stop")
# a run far beyond saturation never settles: 1000 steps of overload, then a 1000-step window
OVERLOAD = Measurement(warmup_min=300, warmup_max=1000, window=1000, drain=False)


def test_age_rule_keeps_alpha_prime_flat_at_one_and_a_half_theta():
    net = network(NET)
    theta = {r: float(analytic_throughput(net, r, "bitcomp") * capacity_rate(net)) for r in ("dor", "val")}
    for r in ("min-adaptive", "goal"):       # no analysis for adaptive routings: a short search
        theta[r] = find_saturation(spec(NET, r, "bitcomp", 1.0, seed=3), tolerance=0.05, measurement=SEARCH).theta
    assert theta["dor"] == theta["val"] == 2 / 3        # half of capacity (4/3 packets per node per step)
    assert 0.4 < theta["min-adaptive"] < theta["goal"] < 2 / 3
    specs = [spec(NET, r, "bitcomp", t * f, seed=i) for i, (r, t) in enumerate(theta.items()) for f in (1.0, 1.5)]
    res = simulate_batch(specs, measurement=OVERLOAD)
    for i, r in enumerate(theta):
        at, beyond = res[2 * i], res[2 * i + 1]
        assert beyond.status == "unstable", r
        assert at.accepted_min >= 0.85 * theta[r], r
        assert beyond.accepted_min >= 0.9 * at.accepted_min, r
