"""The numpy batch case for static priorities (:mod:`universal.engine.static_numpy`) routes a batch
exactly as the reference engine and the general numpy engine (:mod:`universal.engine.runs`) do.

Oracles: :func:`universal.engine.simulate_reference` (one packet at a time, the model written
literally) and :func:`universal.engine.batch.simulate` with :data:`~universal.engine.batch.STATIC_NUMPY`
off (the general engine), on the same seed: delivery steps, T, steps run, the largest buffer, the
step of every hop, the status and, on a deadlock, the blocked packets and full links must all be
identical. The compiled kernels are switched off throughout (CI has no numba).
"""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine import batch, simulate_reference
from universal.networks import build_network
from universal.paths import PathCollection, route_paths
from universal.workloads import build_problem

STATIC = ["random-rank", "longest-in-system"]


@pytest.fixture(autouse=True)
def no_kernel(monkeypatch):
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", float("inf"))
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_COLD", float("inf"))


def static_run(paths, protocol: str, seed: int, **kwargs):
    """The batch front end on the static numpy path."""
    assert batch.STATIC_NUMPY
    return batch.simulate(paths, protocol, np.random.default_rng(seed), **kwargs)


def general_run(paths, protocol: str, seed: int, monkeypatch, **kwargs):
    """The batch front end on the general numpy engine."""
    with monkeypatch.context() as m:
        m.setattr(batch, "STATIC_NUMPY", False)
        return batch.simulate(paths, protocol, np.random.default_rng(seed), **kwargs)


def assert_same(got, want) -> None:
    np.testing.assert_array_equal(got.delivery, want.delivery)
    assert got.delivery.dtype == np.int64
    if want.hop_steps is None:
        assert got.hop_steps is None
    else:
        np.testing.assert_array_equal(got.hop_steps, want.hop_steps)
    assert (got.status, got.steps, got.T, got.max_buffer, got.hops, got.deadlock_step, got.buffer) == \
        (want.status, want.steps, want.T, want.max_buffer, want.hops, want.deadlock_step, want.buffer)
    for name in ("blocked", "full_links"):
        mine, theirs = getattr(got, name), getattr(want, name)
        assert (mine is None) == (theirs is None), name
        if mine is not None:
            assert mine.dtype == np.int64
            np.testing.assert_array_equal(mine, theirs)


def random_case(seed: int) -> PathCollection:
    """A small butterfly, torus, mesh or hypercube with a random h-relation on Valiant or
    dimension-order paths."""
    g = np.random.default_rng(seed)
    network = ["butterfly:d=3", "butterfly:d=4", "torus:k=4,n=2", "torus:k=5,n=2", "torus:k=6,n=1",
               "mesh:k=4,n=2", "hypercube:d=4"][seed % 7]
    net = build_network(network)
    system = "valiant" if g.integers(2) or network.startswith("butterfly") else "dimension-order"
    problem = build_problem(f"h-relation:h={int(g.integers(1, 4))}", net, np.random.default_rng(seed))
    return route_paths(system, problem, net, np.random.default_rng(seed + 1))


def ring_case(seed: int) -> PathCollection:
    """A loaded ring, mostly clockwise paths of k/2 .. k-1 hops, one empty path: with b = 1 or 2
    deadlocks are common."""
    g = np.random.default_rng(seed)
    k = int(g.integers(4, 8))
    net = build_network(f"torus:k={k},n=1")
    paths = [[int(g.integers(k))]]
    for _ in range(int(g.integers(2 * k, 4 * k))):
        source, length = int(g.integers(k)), int(g.integers(max(1, k // 2), k))
        turn = 1 if g.random() < 0.8 else -1
        paths.append([(source + turn * j) % k for j in range(length + 1)])
    return PathCollection.from_node_paths(net, paths)


@pytest.mark.parametrize("protocol", STATIC)
@pytest.mark.parametrize("bandwidth", [1, 2, 3])
@pytest.mark.parametrize("buffer", [None, 1, 2])
@pytest.mark.parametrize("seed", range(7))
def test_equals_the_reference_and_the_general_engine(protocol, bandwidth, buffer, seed, monkeypatch):
    paths = random_case(seed)
    kwargs = dict(bandwidth=bandwidth, buffer=buffer, record_hops=seed % 2 == 0)
    got = static_run(paths, protocol, seed, **kwargs)
    assert_same(got, simulate_reference(paths, protocol, np.random.default_rng(seed), **kwargs))
    assert_same(got, general_run(paths, protocol, seed, monkeypatch, **kwargs))


@pytest.mark.parametrize("protocol", STATIC)
@pytest.mark.parametrize("bandwidth, buffer", [(1, 1), (2, 1), (1, 2), (2, 2), (3, 2), (1, None), (3, None)])
@pytest.mark.parametrize("seed", range(8))
def test_reports_deadlocks_as_the_reference_does(protocol, bandwidth, buffer, seed, monkeypatch):
    paths = ring_case(seed)
    kwargs = dict(bandwidth=bandwidth, buffer=buffer, record_hops=True)
    got = static_run(paths, protocol, seed, **kwargs)
    assert_same(got, simulate_reference(paths, protocol, np.random.default_rng(seed), **kwargs))
    assert_same(got, general_run(paths, protocol, seed, monkeypatch, **kwargs))


@pytest.mark.parametrize("protocol", STATIC)
def test_the_ring_cases_do_deadlock(protocol):
    """The ring cases above are not vacuous: some end in a deadlock with blocked packets."""
    statuses = [static_run(ring_case(seed), protocol, seed, buffer=1).status for seed in range(8)]
    assert "deadlock" in statuses


@pytest.mark.parametrize("protocol", STATIC)
@pytest.mark.parametrize("limit", [0, 1, 3, 7])
@pytest.mark.parametrize("buffer", [None, 1])
def test_stops_at_the_step_limit_as_the_reference_does(protocol, limit, buffer, monkeypatch):
    paths = random_case(3)
    kwargs = dict(buffer=buffer, step_limit=limit, record_hops=True)
    got = static_run(paths, protocol, 11, **kwargs)
    assert got.status == "step-limit" and got.steps == limit
    assert_same(got, simulate_reference(paths, protocol, np.random.default_rng(11), **kwargs))
    assert_same(got, general_run(paths, protocol, 11, monkeypatch, **kwargs))


def test_wide_and_single_rank_ranges_are_ordered_as_the_reference_orders_them():
    """K = 2^24 (ranks wider than the int16 sort) and K = 1 (every tie broken by id)."""
    paths = random_case(1)
    for protocol in ("random-rank:k=16777216", "random-rank:k=1"):
        assert_same(static_run(paths, protocol, 4, record_hops=True),
                    simulate_reference(paths, protocol, np.random.default_rng(4), record_hops=True))


@pytest.mark.parametrize("protocol", STATIC)
def test_a_larger_butterfly_as_the_general_engine(protocol, monkeypatch):
    """BF(7), h = 4: more packets than one uint16 scratch position? No, but many per link."""
    net = build_network("butterfly:d=7")
    paths = route_paths("valiant", build_problem("h-relation:h=4", net, np.random.default_rng(0)), net,
                        np.random.default_rng(1))
    for bandwidth, buffer in ((1, None), (1, 2), (2, 3)):
        kwargs = dict(bandwidth=bandwidth, buffer=buffer, record_hops=True)
        assert_same(static_run(paths, protocol, 2, **kwargs), general_run(paths, protocol, 2, monkeypatch, **kwargs))


def test_empty_and_trivial_batches(monkeypatch):
    """No hop to make, and only empty paths but one."""
    net = build_network("torus:k=4,n=1")
    for node_paths in ([[0], [1]], [[0], [2, 3], [3]]):
        paths = PathCollection.from_node_paths(net, node_paths)
        for kwargs in (dict(record_hops=True), dict(buffer=1), dict(step_limit=0, record_hops=True)):
            got = static_run(paths, "random-rank", 0, **kwargs)
            assert_same(got, simulate_reference(paths, "random-rank", np.random.default_rng(0), **kwargs))
            assert_same(got, general_run(paths, "random-rank", 0, monkeypatch, **kwargs))


def test_the_dispatch(monkeypatch):
    """Static priorities with one VC take the static path; the others, and V >= 2, do not."""
    from universal.engine import static_numpy

    calls = []
    real = static_numpy.route_static_numpy
    monkeypatch.setattr(static_numpy, "route_static_numpy", lambda *a, **k: calls.append(1) or real(*a, **k))
    paths = random_case(2)
    for protocol in ("random-rank", "longest-in-system", "fifo", "random"):
        batch.simulate(paths, protocol, np.random.default_rng(0))
    assert len(calls) == 2
    batch.simulate(paths, "random-rank", np.random.default_rng(0), buffer=2, vcs=4)
    assert len(calls) == 2
