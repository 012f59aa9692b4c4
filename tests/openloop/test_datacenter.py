"""Open-loop runs on the networks with terminals (issue 26): terminals inject, routers forward,
and the simulated saturation of an oblivious routing is the exact analysis's 1 / max channel
load (packets per terminal per step). A few short cells; the full table is the dragonfly_ugal
scenario."""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest

from universal.openloop import Measurement
from universal.openloop.cells import analytic_throughput
from universal.engine.creation import InjectionState, draw_chunk
from universal.openloop.saturation import find_saturations
from universal.openloop.workload import capacity_rate

from .helpers import network, spec

QUICK = Measurement(warmup_min=300, window=2000, latency_limit=300, drain=False, overload="stop", extensions=1)
# UGAL's searches on 1,000-step windows: half the cost, and UGAL-L without its used credits still
# stops at 0.76 of Valiant on wc-group (0.85 passes; the found Θ are 0.92-1.0 of the oblivious)
UGAL_QUICK = Measurement(warmup_min=300, window=1000, latency_limit=300, drain=False, overload="stop", extensions=1)


def test_only_terminals_inject():
    """Every packet starts and ends at a terminal (nodes 0..T-1), never at a router."""
    s = spec("dragonfly:p=1", "minimal", "uniform", 1.0)
    c = draw_chunk(s, InjectionState(), 0, np.random.default_rng(0))
    T = len(s.router.network.terminals)
    assert len(c.src) == 100 * T                       # bernoulli at rate 1: one per terminal per step
    assert c.src.max() < T and c.dst.max() < T
    assert capacity_rate(s.router.network) == 1


def test_analytic_column():
    """The saturation table's analytic value is the load analysis's exact throughput."""
    net = network("dragonfly:p=2")
    assert analytic_throughput(net, "minimal", "wc-group") == Fraction(1, 8)
    assert analytic_throughput(net, "valiant", "uniform") == Fraction(9, 16)
    assert analytic_throughput(net, "ugal-l", "uniform") is None


@pytest.mark.parametrize("net, routing, traffic", [
    ("dragonfly:p=2", "minimal", "wc-group"),
    ("dragonfly:p=1,a=2,h=2,g=5", "valiant", "wc-group"),
    ("dragonfly:p=1,a=2,h=2,g=5", "minimal", "uniform"),
    ("dragonfly:p=1,a=2,h=2,g=5", "valiant", "uniform"),
    ("fattree:k=2,n=3", "nca", "uniform"),
])
def test_saturation_matches_the_exact_analysis(net, routing, traffic):
    """Two methods for one model: the simulated saturation against 1 / max channel load. These
    runs are short (a 2000-step window, a 2% bracket), so the floor is 5% below; the default
    measurement of ``openloop --saturation`` lands within 1% on the p = 2 dragonfly (docs/networks.md)."""
    exact = float(analytic_throughput(network(net), routing, traffic))
    sat, = find_saturations([spec(net, routing, traffic, 1.0, injection="poisson", seed=5)],
                            tolerance=0.02, measurement=QUICK)
    assert 0.95 * exact <= sat.theta <= 1.03 * exact


def test_ugal_picks_one_of_its_two_candidates():
    """At zero load every queue is empty: UGAL-L and UGAL-G take the minimal path (ties go to
    minimal), so their hops are minimal's."""
    from universal.openloop import simulate

    quiet = Measurement(steps=400)
    hops = {r: simulate(spec("dragonfly:p=1,a=2,h=2,g=5", r, "uniform", 0.01, seed=1), measurement=quiet).hops_mean
            for r in ("minimal", "ugal-l", "ugal-g")}
    assert hops["ugal-l"] == hops["ugal-g"] == hops["minimal"]


@pytest.mark.parametrize("net, routing, traffic, floor", [
    ("dragonfly:p=1,a=4,h=1", "ugal-g", "wc-group", ("valiant", 0.85)),
    ("dragonfly:p=1,a=4,h=1", "ugal-l", "wc-group", ("valiant", 0.85)),
    ("dragonfly:p=1,a=2,h=2,g=5", "ugal-g", "uniform", ("minimal", 0.85)),
    ("dragonfly:p=1,a=2,h=2,g=5", "ugal-l", "uniform", ("minimal", 0.85)),
])
def test_ugal_near_the_better_oblivious_routing(net, routing, traffic, floor):
    """Kim et al. 2008, §4.2: UGAL follows Valiant where minimal saturates (wc-group) and minimal
    where it does not (uniform). The oracle is the exact analysis of the oblivious routing.
    UGAL-L gets there only because its queue counts the used credits of the minimal path's
    first link (the packets it put into the next router's buffer, where they wait for the
    congested global link) and its non-minimal candidate avoids the source and destination
    groups. With a = 4 routers per group three of them reach the next group over a local link
    whose own queue stays short: there UGAL-L without the credits stops near 0.78 of Valiant."""
    other, share = floor
    exact = float(analytic_throughput(network(net), other, traffic))
    assert _ugal_saturations(net, traffic)[routing] >= share * exact


@functools.cache
def _ugal_saturations(net: str, traffic: str) -> dict[str, float]:
    """UGAL-L's and UGAL-G's Θ, searched together: their rounds share the engine's batches, and a
    search ends as it would alone (test_saturation.py checks that)."""
    routings = ("ugal-g", "ugal-l")
    sats = find_saturations([spec(net, r, traffic, 1.0, injection="poisson", seed=6) for r in routings],
                            tolerance=0.03, measurement=UGAL_QUICK)
    return {r: s.theta for r, s in zip(routings, sats)}


def test_ugal_on_terminals_leaves_the_saturated_global_link():
    """Generic ``ugal`` on the dragonfly decides at the source terminal's router (the terminal's
    own link is both candidates' first, where q_min = q_val and H_val >= H_min kept every packet
    minimal): under wc-group it follows Valiant (exact 5/8 here) where minimal stops at 1/(a p) =
    1/4 and MIN AD, over its hop-minimal paths, near 0.28. Measured 0.569; MIN AD's name for it
    before, 0.28, fails."""
    net = "dragonfly:p=1,a=4,h=1"
    valiant = float(analytic_throughput(network(net), "valiant", "wc-group"))
    sat, = find_saturations([spec(net, "ugal", "wc-group", 1.0, injection="poisson", seed=6)],
                            tolerance=0.03, measurement=UGAL_QUICK)
    assert sat.theta >= 0.85 * valiant
