"""The compiled kernel for static priorities (:mod:`universal.engine.compiled`) routes a batch
exactly as the reference engine and the numpy one engine do, and the one engine's batch front
end hands it a batch only when that pays.

Oracles: :func:`universal.engine.simulate_reference` (one packet at a time, the model written
literally) and :func:`universal.engine.batch.simulate` with the kernel switched off, on the same
seed: delivery steps, T, steps run, the largest buffer, the step of every hop, the status and,
on a deadlock, the blocked packets and full links must all be identical.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from universal.engine import batch, simulate_reference
from universal.networks import build_network
from universal.paths import PathCollection, route_paths
from universal.protocols import build_protocol
from universal.workloads import build_problem

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed: the compiled kernel cannot run "
                                       "(universal.engine.batch.simulate falls back to numpy)")

STATIC = ["random-rank", "longest-in-system"]


@pytest.fixture(params=[True, False], ids=["packed", "flat"], autouse=True)
def step_loop(request):
    """Every test runs on both step loops of the kernel (:data:`universal.engine.compiled.PACKED`)."""
    from universal.engine import compiled

    compiled.PACKED = request.param
    yield request.param
    compiled.PACKED = None


def compiled_run(paths, protocol: str, seed: int, **kwargs):
    """The one engine's batch simulate, every static batch on the kernel."""
    saved = batch.COMPILED_MIN_HOPS_WARM, batch.COMPILED_MIN_HOPS_COLD
    batch.COMPILED_MIN_HOPS_WARM = batch.COMPILED_MIN_HOPS_COLD = 0
    try:
        return batch.simulate(paths, protocol, np.random.default_rng(seed), **kwargs)
    finally:
        batch.COMPILED_MIN_HOPS_WARM, batch.COMPILED_MIN_HOPS_COLD = saved


def numpy_run(paths, protocol: str, seed: int, **kwargs):
    """The one engine's batch simulate with the kernel switched off."""
    saved = batch.COMPILED_MIN_HOPS_WARM, batch.COMPILED_MIN_HOPS_COLD
    batch.COMPILED_MIN_HOPS_WARM = batch.COMPILED_MIN_HOPS_COLD = float("inf")
    try:
        return batch.simulate(paths, protocol, np.random.default_rng(seed), **kwargs)
    finally:
        batch.COMPILED_MIN_HOPS_WARM, batch.COMPILED_MIN_HOPS_COLD = saved


def assert_same(got, want) -> None:
    np.testing.assert_array_equal(got.delivery, want.delivery)
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
    """A small butterfly or torus with a random h-relation on Valiant or dimension-order paths."""
    g = np.random.default_rng(seed)
    network = ["butterfly:d=3", "butterfly:d=4", "torus:k=4,n=2", "torus:k=5,n=2", "torus:k=6,n=1"][seed % 5]
    net = build_network(network)
    system = "valiant" if g.integers(2) else ("dimension-order" if network.startswith("torus") else "valiant")
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
@pytest.mark.parametrize("bandwidth", [1, 2])
@pytest.mark.parametrize("buffer", [None, 1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_the_kernel_equals_the_reference_and_the_numpy_engine(protocol, bandwidth, buffer, seed):
    paths = random_case(seed)
    kwargs = dict(bandwidth=bandwidth, buffer=buffer, record_hops=True)
    got = compiled_run(paths, protocol, seed, **kwargs)
    assert_same(got, simulate_reference(paths, protocol, np.random.default_rng(seed), **kwargs))
    assert_same(got, numpy_run(paths, protocol, seed, **kwargs))


@pytest.mark.parametrize("protocol", STATIC)
@pytest.mark.parametrize("bandwidth, buffer", [(1, 1), (2, 1), (1, 2), (2, 2), (3, 2)])
@pytest.mark.parametrize("seed", range(8))
def test_the_kernel_reports_deadlocks_as_the_reference_does(protocol, bandwidth, buffer, seed):
    paths = ring_case(seed)
    kwargs = dict(bandwidth=bandwidth, buffer=buffer, record_hops=True)
    got = compiled_run(paths, protocol, seed, **kwargs)
    assert_same(got, simulate_reference(paths, protocol, np.random.default_rng(seed), **kwargs))
    assert_same(got, numpy_run(paths, protocol, seed, **kwargs))


def test_the_deadlock_cases_do_deadlock():
    """The ring cases above are not vacuous: some end in a deadlock with blocked packets."""
    statuses = [compiled_run(ring_case(seed), "random-rank", seed, buffer=1).status for seed in range(8)]
    assert "deadlock" in statuses


@pytest.mark.parametrize("protocol", STATIC)
@pytest.mark.parametrize("limit", [0, 1, 3, 7])
@pytest.mark.parametrize("buffer", [None, 1])
def test_the_kernel_stops_at_the_step_limit_as_the_reference_does(protocol, limit, buffer):
    paths = random_case(3)
    kwargs = dict(buffer=buffer, step_limit=limit, record_hops=True)
    got = compiled_run(paths, protocol, 11, **kwargs)
    assert got.status == "step-limit" and got.steps == limit
    assert_same(got, simulate_reference(paths, protocol, np.random.default_rng(11), **kwargs))
    assert_same(got, numpy_run(paths, protocol, 11, **kwargs))


def test_a_given_rank_range_and_wide_keys_are_ordered_as_the_reference_orders_them():
    """K = 2^24 (ranks wider than the int16 sort) and K = 1 (every tie broken by id)."""
    paths = random_case(1)
    for protocol in ("random-rank:k=16777216", "random-rank:k=1"):
        assert_same(compiled_run(paths, protocol, 4, record_hops=True),
                    simulate_reference(paths, protocol, np.random.default_rng(4), record_hops=True))


def test_the_kernel_runs_the_default_route_of_a_larger_butterfly_as_numpy_does():
    net = build_network("butterfly:d=7")
    paths = route_paths("valiant", build_problem("h-relation:h=4", net, np.random.default_rng(0)), net,
                        np.random.default_rng(1))
    for protocol in STATIC:
        for buffer in (None, 2):
            assert_same(compiled_run(paths, protocol, 2, buffer=buffer, record_hops=True),
                        numpy_run(paths, protocol, 2, buffer=buffer, record_hops=True))


def test_the_dispatch_takes_the_kernel_only_for_static_priorities_above_the_threshold(monkeypatch):
    from universal.engine import compiled

    random_rank, fifo = build_protocol("random-rank"), build_protocol("fifo")
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", 1000)
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_COLD", 10**6)
    monkeypatch.setattr(compiled, "WARM", True)       # a kernel has run: the warm threshold applies
    assert batch.compiled_pays(random_rank, 1000) and batch.compiled_pays(build_protocol("longest-in-system"), 5000)
    assert not batch.compiled_pays(random_rank, 999)
    assert not batch.compiled_pays(fifo, 10**9) and not batch.compiled_pays(build_protocol("random"), 10**9)
    assert not batch.compiled_pays(build_protocol("trial-and-failure"), 10**9)
    # loaded but not run yet, or not even loaded: the cold threshold (numba's start is paid only
    # by large batches)
    for unloaded in (False, True):
        monkeypatch.setattr(compiled, "WARM", False)
        if unloaded:
            monkeypatch.delitem(sys.modules, "universal.engine.compiled")
        assert not batch.compiled_pays(random_rank, 10**6 - 1)
        assert batch.compiled_pays(random_rank, 10**6)


def test_simulate_uses_the_kernel_exactly_when_the_dispatch_says_so(monkeypatch):
    paths = random_case(0)
    calls = []
    from universal.engine import compiled

    real = compiled.route_static
    monkeypatch.setattr(compiled, "route_static", lambda *a, **k: calls.append(1) or real(*a, **k))
    hops = int(paths.lengths.sum())
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", hops + 1)
    batch.simulate(paths, "random-rank", np.random.default_rng(0))
    assert calls == []
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", hops)
    batch.simulate(paths, "random-rank", np.random.default_rng(0))
    batch.simulate(paths, "fifo", np.random.default_rng(0))
    assert calls == [1]


def test_without_numba_the_dispatch_falls_back(monkeypatch):
    from universal.engine import compiled

    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_COLD", 0)
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", 0)
    monkeypatch.setattr(compiled, "NUMBA", False)     # the module imported, its kernels plain Python
    assert not batch.compiled_pays(build_protocol("random-rank"), 10**9)
    monkeypatch.delitem(sys.modules, "universal.engine.compiled")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba" else object())
    assert not batch.compiled_pays(build_protocol("random-rank"), 10**9)


def test_the_kernel_runs_as_plain_python_too():
    """What the module runs without numba (its doctests, say) gives the same results."""
    from universal.engine import compiled

    paths = ring_case(2)
    protocol = build_protocol("random-rank")
    state = protocol.setup(np.random.default_rng(3), paths.lengths, paths.congestion, paths.dilation)
    names = "_lay_out", "_run_packed", "_run_flat", "_scatter_back"
    kernels = [getattr(compiled, name) for name in names]
    try:
        for name, kernel in zip(names, kernels):
            setattr(compiled, name, kernel.py_func)
        plain = compiled.route_static(paths, protocol, state, bandwidth=1, buffer=1, limit=100, record_hops=True)
    finally:
        for name, kernel in zip(names, kernels):
            setattr(compiled, name, kernel)
    assert_same(plain, simulate_reference(paths, "random-rank", np.random.default_rng(3), buffer=1, record_hops=True,
                                          step_limit=100))
