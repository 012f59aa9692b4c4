"""Measured quantities against closed forms: GOAL's §2.2 example (Singh, Dally, Gupta & Towles
2003), zero-load latency = mean hop count, and the accepted rate of a sub-stochastic pattern."""

from __future__ import annotations

import pytest

from universal.openloop import Measurement, simulate, simulate_batch

from .helpers import spec


@pytest.fixture
def three_flows(tmp_path):
    """GOAL's Figure 2: flows 0->3, 1->2 and 5->6 on the 8-ary 1-cube; the other nodes send nothing."""
    f = tmp_path / "flows.txt"
    f.write_text("0 3\n1 2\n5 6\n")
    return f"permutation:file={f}"


def test_goal_example_below_saturation_every_flow_gets_its_rate(three_flows):
    res = simulate(spec("torus:k=8,n=1", "dor", three_flows, 0.4, seed=1), measurement=Measurement(window=20000))
    assert res.stable
    assert res.accepted == pytest.approx(0.4, rel=0.01)
    assert res.accepted_min == pytest.approx(0.4, rel=0.01)


def test_goal_example_beyond_saturation_alpha_prime_is_half_and_alpha_star_two_thirds(three_flows):
    res = simulate(spec("torus:k=8,n=1", "dor", three_flows, 1.0, seed=1), measurement=Measurement(window=4000))
    assert not res.stable and res.status == "unstable"
    assert res.accepted_min == pytest.approx(0.5, rel=0.01)      # link 1->2 split between two flows
    assert res.accepted == pytest.approx(2 / 3, rel=0.01)        # (0.5 + 0.5 + 1) / 3


@pytest.mark.parametrize("routing, hops", [("dor", 4.0), ("romm", 4.0), ("min-adaptive", 4.0),
                                           ("val", 8.0), ("goal", 5.25)])
def test_zero_load_latency_is_the_mean_hop_count(routing, hops):
    # uniform traffic on the 8-ary 2-cube includes s = d (0 hops under minimal routing): minimal
    # routes average 4 hops; Valiant's 8 (every packet, s = d included, goes s -> w -> d: GOAL's
    # H = 8); GOAL 2 * sum_D 2D(k-D)/k / k = 5.25; a packet that never waits has latency = hops
    # (the model's constant is 0)
    res = simulate(spec("torus:k=8,n=2", routing, "uniform", 0.01, seed=2), measurement=Measurement(window=4000))
    assert res.stable
    assert res.hops_mean == pytest.approx(hops, rel=0.03)
    assert res.latency_mean == pytest.approx(res.hops_mean, rel=0.01)


def test_goal_pair_hops_are_rlb_quadrant_lengths():
    # (0,0) -> (1,3) on the 8-ary 2-cube: x short 1 w.p. 7/8 or long 7; y short 3 w.p. 5/8 or 5:
    # mean 1.75 + 3.75 = 5.5 hops (GOAL's H for this pair)
    import numpy as np

    s = spec("torus:k=8,n=2", "goal", "uniform", 0.2)
    n = 40000
    draw = s.router.draw(np.zeros(n, np.int64), np.full(n, 3 * 8 + 1), np.random.default_rng(5))
    hops = draw.remaining.sum(axis=1)
    assert set(np.unique(hops).tolist()) == {4, 6, 10, 12}        # 1+3, 1+5, 7+3, 7+5
    assert hops.mean() == pytest.approx(5.5, rel=0.01)


def test_per_pair_latency_is_reported():
    res = simulate(spec("torus:k=8,n=1", "dor", "tornado", 0.2, seed=3), measurement=Measurement(window=1000))
    latency, hops, count = res.pair_latency(0, 3)
    assert hops == 3.0 and latency >= 3.0 and count > 100


def test_a_zero_row_sends_nothing_and_is_not_counted(tmp_path):
    f = tmp_path / "half.txt"
    f.write_text("0 1\n2 3\n")
    res = simulate(spec("torus:k=4,n=1", "dor", f"permutation:file={f}", 0.5, seed=0),
                   measurement=Measurement(window=4000))
    assert res.stable and res.hops_mean == 1.0
    assert res.accepted == pytest.approx(0.5, rel=0.05)


def test_batched_runs_measure_like_single_runs():
    specs = [spec("torus:k=8,n=1", "dor", "tornado", r, seed=s) for r, s in ((0.1, 1), (0.3, 2))]
    together = simulate_batch(specs, measurement=Measurement(window=1000))
    alone = [simulate(s, measurement=Measurement(window=1000)) for s in specs]
    assert [r.latency_mean for r in together] == [r.latency_mean for r in alone]
    assert [r.accepted for r in together] == [r.accepted for r in alone]


def test_age_priority_keeps_accepted_traffic_flat_beyond_saturation():
    # bit complement on the 8-node ring: DOR and VAL saturate at 1/2 (load); as in GOAL's
    # stability experiment (Singh, Dally, Gupta & Towles 2003, §5.7), at 1.5 times that α' stays put
    routings = ["dor", "val", "min-adaptive", "goal"]
    specs = [spec("torus:k=8,n=1", r, "bitcomp", rate, injection="poisson", seed=3)
             for r in routings for rate in (0.5, 0.75)]
    res = simulate_batch(specs, measurement=Measurement(window=1500, latency_limit=200))
    for i, routing in enumerate(routings):
        at, beyond = res[2 * i], res[2 * i + 1]
        assert not beyond.stable
        assert beyond.accepted_min >= 0.9 * at.accepted_min, routing


@pytest.mark.parametrize("routing, hops", [("val", 8.0), ("dor", 0.0), ("ival", 0.0)])
def test_a_packet_for_its_own_node_travels_only_if_its_routing_gives_it_a_path(tmp_path, routing, hops):
    # Valiant's trick sends every packet through a random intermediate w, one whose destination
    # is its source too (s -> w -> s: 2 x 4 hops on average on the 8-ary 2-cube), and the load
    # analysis counts it so; DOR and IVAL (whose loop erasure empties s -> w -> s) deliver it at once
    f = tmp_path / "identity.txt"
    f.write_text("".join(f"{v} {v}\n" for v in range(64)))
    res = simulate(spec("torus:k=8,n=2", routing, f"permutation:file={f}", 0.05, seed=4),
                   measurement=Measurement(window=2000))
    assert res.stable
    assert res.hops_mean == pytest.approx(hops, rel=0.02, abs=1e-9)
    assert res.latency_mean >= res.hops_mean
