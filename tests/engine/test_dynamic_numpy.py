"""The numpy batch case for changing keys (:mod:`universal.engine.dynamic_numpy`) routes a batch
exactly as the reference engine and the general numpy engine (:mod:`universal.engine.runs`) do.

Oracles: :func:`universal.engine.simulate_reference` (one packet at a time, the model written
literally) and :func:`universal.engine.batch.simulate` with :data:`~universal.engine.batch.DYNAMIC_NUMPY`
off (the general engine), on the same seed: delivery steps, T, steps run, the largest buffer, the
step of every hop, the status, on a deadlock the blocked packets and full links, and the state
the generator is left in must all be identical. The compiled kernels are switched off throughout
(CI has no numba).
"""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine import batch, dynamic_numpy, simulate_reference
from universal.networks import build_network
from universal.paths import PathCollection, route_paths
from universal.protocols import build_protocol
from universal.workloads import build_problem

from tests.engine.test_static_numpy import assert_same, random_case, ring_case

DYNAMIC = ["growing-rank", "fifo", "farthest-to-go", "nearest-to-go", "random-delay", "random"]


@pytest.fixture(autouse=True)
def no_kernel(monkeypatch):
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", float("inf"))
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_COLD", float("inf"))


@pytest.fixture
def calls(monkeypatch):
    """Counts the runs on the dynamic numpy path (so that no test passes by falling back)."""
    counted = []
    real = dynamic_numpy.route_dynamic_numpy
    monkeypatch.setattr(dynamic_numpy, "route_dynamic_numpy", lambda *a, **k: counted.append(1) or real(*a, **k))
    return counted


def three_runs(paths, protocol: str, seed: int, monkeypatch, **kwargs):
    """The dynamic numpy path, the reference and the general engine on the same seed, each with
    the state its generator is left in."""
    assert batch.DYNAMIC_NUMPY
    runs = []
    for engine in ("dynamic", "reference", "general"):
        rng = np.random.default_rng(seed)
        if engine == "reference":
            result = simulate_reference(paths, protocol, rng, **kwargs)
        else:
            with monkeypatch.context() as m:
                m.setattr(batch, "DYNAMIC_NUMPY", engine == "dynamic")
                result = batch.simulate(paths, protocol, rng, **kwargs)
        runs.append((result, rng.bit_generator.state))
    return runs


def check(paths, protocol: str, seed: int, monkeypatch, **kwargs):
    (got, got_state), *others = three_runs(paths, protocol, seed, monkeypatch, **kwargs)
    for want, want_state in others:
        assert_same(got, want)
        assert got_state == want_state
    return got


@pytest.mark.parametrize("protocol", DYNAMIC)
@pytest.mark.parametrize("bandwidth", [1, 2])
@pytest.mark.parametrize("buffer", [None, 1, 2])
@pytest.mark.parametrize("seed", range(7))
def test_equals_the_reference_and_the_general_engine(protocol, bandwidth, buffer, seed, monkeypatch, calls):
    kwargs = dict(bandwidth=bandwidth, buffer=buffer, record_hops=seed % 2 == 0)
    check(random_case(seed), protocol, seed, monkeypatch, **kwargs)
    assert len(calls) == 1


@pytest.mark.parametrize("protocol", DYNAMIC)
@pytest.mark.parametrize("bandwidth, buffer", [(1, 1), (2, 1), (1, 2), (2, 2), (1, None), (3, None)])
@pytest.mark.parametrize("seed", range(6))
def test_reports_deadlocks_as_the_reference_does(protocol, bandwidth, buffer, seed, monkeypatch, calls):
    check(ring_case(seed), protocol, seed, monkeypatch, bandwidth=bandwidth, buffer=buffer, record_hops=True)
    assert len(calls) == 1


@pytest.mark.parametrize("seed", [8, 16, 25])
def test_a_deadlock_waits_for_the_delayed_packets(seed, monkeypatch, calls):
    """Random delay on rings where the released packets lock while others are still held back:
    the run goes on until every packet has been released (the reference's deadlock comes one to
    seven steps later than the lock on these seeds)."""
    got = check(ring_case(seed), "random-delay", seed, monkeypatch, buffer=1, record_hops=True)
    assert got.status == "deadlock"
    assert len(calls) == 1


@pytest.mark.parametrize("protocol", DYNAMIC)
def test_the_ring_cases_do_deadlock(protocol):
    """The ring cases above are not vacuous: some end in a deadlock with blocked packets."""
    statuses = [batch.simulate(ring_case(seed), protocol, np.random.default_rng(seed), buffer=1).status
                for seed in range(6)]
    assert "deadlock" in statuses


@pytest.mark.parametrize("protocol", DYNAMIC)
@pytest.mark.parametrize("limit", [0, 1, 3, 7])
@pytest.mark.parametrize("buffer", [None, 1])
def test_stops_at_the_step_limit_as_the_reference_does(protocol, limit, buffer, monkeypatch):
    got = check(random_case(3), protocol, 11, monkeypatch, buffer=buffer, step_limit=limit, record_hops=True)
    assert got.status == "step-limit" and got.steps == limit


def test_long_delays_leave_steps_where_nothing_waits(monkeypatch, calls):
    """random-delay with alpha = 64: packets are delivered long before others start, so the
    engine skips steps with no packet waiting; step limits fall inside such a gap too (here no
    packet waits in steps 31-53 and 133-154) and at its end."""
    paths = random_case(2)
    for limit in (None, 40, 140, 154):
        got = check(paths, "random-delay:alpha=64", 5, monkeypatch, step_limit=limit, record_hops=True)
        assert got.status == ("delivered" if limit is None else "step-limit")
    assert len(calls) == 4


def test_wide_and_single_rank_ranges_are_ordered_as_the_reference_orders_them(monkeypatch):
    """K = 2^24 (growing keys far wider than the int16 range) and K = 1 (every tie by id)."""
    paths = random_case(1)
    for protocol in ("growing-rank:k=16777216", "growing-rank:k=1"):
        check(paths, protocol, 4, monkeypatch, record_hops=True)


@pytest.mark.parametrize("protocol", DYNAMIC)
def test_a_larger_butterfly_as_the_general_engine(protocol, monkeypatch):
    """BF(7), h = 4: 512 packets, many per link, against the general engine (the reference
    would take seconds)."""
    net = build_network("butterfly:d=7")
    paths = route_paths("valiant", build_problem("h-relation:h=4", net, np.random.default_rng(0)), net,
                        np.random.default_rng(1))
    for bandwidth, buffer in ((1, None), (1, 2), (2, 3)):
        kwargs = dict(bandwidth=bandwidth, buffer=buffer, record_hops=True)
        runs = []
        for on in (True, False):
            rng = np.random.default_rng(2)
            with monkeypatch.context() as m:
                m.setattr(batch, "DYNAMIC_NUMPY", on)
                runs.append((batch.simulate(paths, protocol, rng, **kwargs), rng.bit_generator.state))
        assert_same(runs[0][0], runs[1][0])
        assert runs[0][1] == runs[1][1]


def test_empty_and_trivial_batches(monkeypatch):
    """No hop to make, and only empty paths but one."""
    net = build_network("torus:k=4,n=1")
    for node_paths in ([[0], [1]], [[0], [2, 3], [3]]):
        paths = PathCollection.from_node_paths(net, node_paths)
        for protocol in DYNAMIC:
            for kwargs in (dict(record_hops=True), dict(buffer=1), dict(step_limit=0, record_hops=True)):
                check(paths, protocol, 0, monkeypatch, **kwargs)


def test_keys_too_wide_fall_back_to_the_general_engine(monkeypatch, calls):
    """Packed keys that would not fit send the batch to the general engine, with nothing drawn
    twice. Growing rank's keys reach 2 K D; no batch that fits in memory overflows 62 bits, so
    the test narrows them to 12 bits: with K = 2^10 and D = 6 they need 14, and the 16 ids 4 more.
    FIFO packs no keys and always fits."""
    paths = random_case(0)
    assert dynamic_numpy.fits(build_protocol("growing-rank:k=1024"), paths)
    assert not dynamic_numpy.fits(build_protocol("random-rank"), paths)
    monkeypatch.setattr(dynamic_numpy, "_KEY_BITS", 12)
    assert not dynamic_numpy.fits(build_protocol("growing-rank:k=1024"), paths)
    assert dynamic_numpy.fits(build_protocol("fifo"), paths)
    check(paths, "growing-rank:k=1024", 0, monkeypatch, record_hops=True)
    assert not calls


def test_the_dispatch(calls):
    """The changing-key protocols with one VC take the dynamic path; static priorities,
    bufferless protocols and V >= 2 do not."""
    paths = random_case(2)
    for protocol in ("random-rank", "longest-in-system", "trial-and-failure", *DYNAMIC):
        batch.simulate(paths, protocol, np.random.default_rng(0))
    assert len(calls) == len(DYNAMIC)
    batch.simulate(paths, "fifo", np.random.default_rng(0), buffer=2, vcs=4)
    assert len(calls) == len(DYNAMIC)
