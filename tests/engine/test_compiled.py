"""The compiled kernels (static priorities, :mod:`universal.engine.compiled`; keys that change
on moves or every step, :mod:`universal.engine.compiled_dynamic`) route a batch exactly as the
reference engine and the numpy one engine do, and the one engine's batch front end hands it a
batch only when that pays.

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
#: Keys that change when packets move, and fresh keys every step (random).
DYNAMIC = ["growing-rank", "fifo", "farthest-to-go", "nearest-to-go", "random-delay", "random-delay:alpha=3",
           "random"]


def pytest_generate_tests(metafunc):
    """Every test runs on both step loops of the static kernel (:data:`universal.engine.compiled.PACKED`),
    but for the dynamic kernels' tests, which have a step loop each: a test that takes a
    ``protocol`` runs for every protocol, the static ones on both loops."""
    if "protocol" in metafunc.fixturenames:
        metafunc.parametrize("protocol, packed", [pytest.param(p, packed, id=f"{p}-{'packed' if packed else 'flat'}")
                                                  for p in STATIC for packed in (True, False)] +
                             [pytest.param(p, None, id=p) for p in DYNAMIC])
    elif "dynamic" not in metafunc.function.__name__:
        metafunc.parametrize("packed", [True, False], ids=["packed", "flat"])


@pytest.fixture
def packed():
    """The step loop a dynamic kernel's test leaves the static kernel: its own choice."""
    return None


@pytest.fixture(autouse=True)
def step_loop(packed):
    from universal.engine import compiled

    compiled.PACKED = packed
    yield packed
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


@pytest.mark.parametrize("bandwidth", [1, 2])
@pytest.mark.parametrize("buffer", [None, 1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_the_kernel_equals_the_reference_and_the_numpy_engine(protocol, bandwidth, buffer, seed):
    paths = random_case(seed)
    kwargs = dict(bandwidth=bandwidth, buffer=buffer, record_hops=True)
    got = compiled_run(paths, protocol, seed, **kwargs)
    assert_same(got, simulate_reference(paths, protocol, np.random.default_rng(seed), **kwargs))
    assert_same(got, numpy_run(paths, protocol, seed, **kwargs))


@pytest.mark.parametrize("bandwidth, buffer", [(1, 1), (2, 1), (1, 2), (2, 2), (3, 2), (1, None), (3, None)])
@pytest.mark.parametrize("seed", range(8))
def test_the_kernel_reports_deadlocks_as_the_reference_does(protocol, bandwidth, buffer, seed):
    paths = ring_case(seed)
    kwargs = dict(bandwidth=bandwidth, buffer=buffer, record_hops=True)
    got = compiled_run(paths, protocol, seed, **kwargs)
    assert_same(got, simulate_reference(paths, protocol, np.random.default_rng(seed), **kwargs))
    assert_same(got, numpy_run(paths, protocol, seed, **kwargs))


def test_the_deadlock_cases_do_deadlock():
    """The ring cases above are not vacuous: some end in a deadlock with blocked packets, for
    every protocol (random delays included; with alpha = 3 the delays spread the ring's packets
    too far apart to lock)."""
    for protocol in [p for p in STATIC + DYNAMIC if "alpha" not in p]:
        statuses = [compiled_run(ring_case(seed), protocol, seed, buffer=1).status for seed in range(8)]
        assert "deadlock" in statuses, protocol


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


def test_the_kernel_runs_the_default_route_of_a_larger_butterfly_as_numpy_does(protocol):
    net = build_network("butterfly:d=7")
    paths = route_paths("valiant", build_problem("h-relation:h=4", net, np.random.default_rng(0)), net,
                        np.random.default_rng(1))
    for buffer in (None, 2):
        assert_same(compiled_run(paths, protocol, 2, buffer=buffer, record_hops=True),
                    numpy_run(paths, protocol, 2, buffer=buffer, record_hops=True))


def test_the_dispatch_takes_a_kernel_for_every_buffered_protocol_above_the_threshold(monkeypatch):
    from universal.engine import compiled

    random_rank, fifo = build_protocol("random-rank"), build_protocol("fifo")
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", 1000)
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_COLD", 10**6)
    monkeypatch.setattr(compiled, "WARM", True)       # a kernel has run: the warm threshold applies
    assert batch.compiled_pays(random_rank, 1000) and batch.compiled_pays(build_protocol("longest-in-system"), 5000)
    assert not batch.compiled_pays(random_rank, 999) and not batch.compiled_pays(fifo, 999)
    for name in DYNAMIC:
        assert batch.compiled_pays(build_protocol(name), 1000), name
    assert not batch.compiled_pays(build_protocol("trial-and-failure"), 10**9)
    assert not batch.compiled_pays(build_protocol("duplication"), 10**9)
    # loaded but not run yet, or not even loaded: the cold threshold (numba's start is paid only
    # by large batches)
    for unloaded in (False, True):
        monkeypatch.setattr(compiled, "WARM", False)
        if unloaded:
            monkeypatch.delitem(sys.modules, "universal.engine.compiled")
        assert not batch.compiled_pays(random_rank, 10**6 - 1) and not batch.compiled_pays(fifo, 10**6 - 1)
        assert batch.compiled_pays(random_rank, 10**6) and batch.compiled_pays(fifo, 10**6)


def test_simulate_uses_the_kernels_exactly_when_the_dispatch_says_so(monkeypatch):
    paths = random_case(0)
    calls = []
    from universal.engine import compiled, compiled_dynamic

    static, dynamic = compiled.route_static, compiled_dynamic.route_dynamic
    monkeypatch.setattr(compiled, "route_static", lambda *a, **k: calls.append("static") or static(*a, **k))
    monkeypatch.setattr(compiled_dynamic, "route_dynamic", lambda *a, **k: calls.append("dynamic") or dynamic(*a, **k))
    hops = int(paths.lengths.sum())
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", hops + 1)
    batch.simulate(paths, "random-rank", np.random.default_rng(0))
    batch.simulate(paths, "fifo", np.random.default_rng(0))
    assert calls == []
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", hops)
    batch.simulate(paths, "random-rank", np.random.default_rng(0))
    batch.simulate(paths, "fifo", np.random.default_rng(0))
    batch.simulate(paths, "random", np.random.default_rng(0))
    batch.simulate(paths, "trial-and-failure", np.random.default_rng(0))
    assert calls == ["static", "dynamic", "dynamic"]


def test_keys_too_wide_for_the_dynamic_kernels_fall_back_to_numpy_with_nothing_drawn(monkeypatch):
    """:func:`universal.engine.compiled_dynamic.fits` refuses a batch before the protocol draws
    anything, and the numpy engine then routes it from the same generator."""
    from universal.engine import compiled_dynamic

    paths = random_case(2)
    assert compiled_dynamic.fits(build_protocol("fifo"), paths, None)
    monkeypatch.setattr(compiled_dynamic, "_KEY_BITS", 4)
    assert not compiled_dynamic.fits(build_protocol("fifo"), paths, None)
    calls = []
    real = compiled_dynamic.route_dynamic
    monkeypatch.setattr(compiled_dynamic, "route_dynamic", lambda *a, **k: calls.append(1) or real(*a, **k))
    for protocol in ("fifo", "random"):
        assert_same(compiled_run(paths, protocol, 5, record_hops=True), numpy_run(paths, protocol, 5, record_hops=True))
    assert calls == []


def test_without_numba_the_dispatch_falls_back(monkeypatch):
    from universal.engine import compiled

    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_COLD", 0)
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", 0)
    monkeypatch.setattr(compiled, "NUMBA", False)     # the module imported, its kernels plain Python
    assert not batch.compiled_pays(build_protocol("random-rank"), 10**9)
    assert not batch.compiled_pays(build_protocol("fifo"), 10**9)
    monkeypatch.delitem(sys.modules, "universal.engine.compiled")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba" else object())
    assert not batch.compiled_pays(build_protocol("random-rank"), 10**9)
    assert not batch.compiled_pays(build_protocol("random"), 10**9)


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


def test_the_dynamic_kernels_take_the_protocols_parameters_as_the_reference_does():
    """Growing rank's K (the survey's default, K = 1, K = 2^24), random delay's alpha (delays longer
    than the run itself), and empty paths among the others."""
    paths = random_case(1)
    for protocol in ("growing-rank:k=1", "growing-rank:k=16777216", "random-delay:alpha=0.25",
                     "random-delay:alpha=64"):
        for buffer in (None, 1):
            kwargs = dict(buffer=buffer, record_hops=True)
            assert_same(compiled_run(paths, protocol, 4, **kwargs),
                        simulate_reference(paths, protocol, np.random.default_rng(4), **kwargs))
    ring = ring_case(5)            # its first path is empty
    assert ring.lengths[0] == 0
    for protocol in DYNAMIC:
        assert_same(compiled_run(ring, protocol, 6, bandwidth=2, record_hops=True),
                    simulate_reference(ring, protocol, np.random.default_rng(6), bandwidth=2, record_hops=True))


def test_the_dynamic_kernel_leaves_random_s_generator_where_the_numpy_engine_leaves_it():
    """The kernel draws the per-step keys from the run's generator itself, call for call."""
    paths = random_case(4)
    mine, theirs = np.random.default_rng(9), np.random.default_rng(9)
    saved = batch.COMPILED_MIN_HOPS_WARM, batch.COMPILED_MIN_HOPS_COLD
    try:
        batch.COMPILED_MIN_HOPS_WARM = batch.COMPILED_MIN_HOPS_COLD = 0
        batch.simulate(paths, "random", mine, bandwidth=2)
        batch.COMPILED_MIN_HOPS_WARM = batch.COMPILED_MIN_HOPS_COLD = float("inf")
        batch.simulate(paths, "random", theirs, bandwidth=2)
    finally:
        batch.COMPILED_MIN_HOPS_WARM, batch.COMPILED_MIN_HOPS_COLD = saved
    assert mine.integers(0, 2**62) == theirs.integers(0, 2**62)


def test_the_dynamic_kernels_run_as_plain_python_too(monkeypatch):
    """What the module runs without numba gives the same results: every compiled function of it
    replaced by its Python, the prefetches by nothing (a ring with b = 1 and a few steps)."""
    from universal.engine import compiled, compiled_dynamic, compiled_per_step

    for module in (compiled, compiled_dynamic, compiled_per_step):
        for name in dir(module):
            if hasattr(getattr(module, name), "py_func"):
                monkeypatch.setattr(module, name, getattr(module, name).py_func)
    for module in (compiled_dynamic, compiled_per_step):     # (where each kernel looks them up)
        monkeypatch.setattr(module, "_prefetch", lambda array, index: None)
        monkeypatch.setattr(module, "_prefetch_row", lambda array, row: None)
    paths = ring_case(2)
    for protocol in ("fifo", "random-delay", "random"):
        for buffer in (None, 1):
            kwargs = dict(buffer=buffer, step_limit=60, record_hops=True)
            assert_same(compiled_run(paths, protocol, 3, **kwargs),
                        simulate_reference(paths, protocol, np.random.default_rng(3), **kwargs))


def test_the_dynamic_kernels_radix_sort_sorts_wide_keys():
    """Keys spanning one to five digits, and none or one key."""
    from universal.engine.compiled_dynamic import _radix_sort

    g = np.random.default_rng(0)
    for sort in (_radix_sort, _radix_sort.py_func):
        for span in (1, 2**11 - 1, 2**11, 2**12 + 5, 2**33, 2**54):
            for m in (0, 1, 300):
                keys = np.unique(g.integers(0, span + 1, size=m)) + 7
                g.shuffle(keys)
                n = len(keys)
                spare = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
                got, slots, *_ = sort(keys.copy(), np.arange(n, dtype=np.int64), n, *spare,
                                      np.empty(2**11, dtype=np.int64))
                np.testing.assert_array_equal(got[:n], np.sort(keys))
                np.testing.assert_array_equal(keys[slots[:n]], np.sort(keys))


@pytest.mark.parametrize("marks", [1, 2, 3])
def test_the_dynamic_kernel_for_random_starts_its_step_marks_over_as_it_must(monkeypatch, marks):
    """With one winner a link and unbounded buffers, the marks that tell this step's keys from
    stale ones last a few steps here (millions of steps in a real run)."""
    from universal.engine import compiled_dynamic

    monkeypatch.setattr(compiled_dynamic, "_MARKS", marks)
    for seed in range(3):
        paths = random_case(seed)
        assert_same(compiled_run(paths, "random", seed, record_hops=True),
                    simulate_reference(paths, "random", np.random.default_rng(seed), record_hops=True))


def leveled_case(seed: int) -> PathCollection:
    """Valiant or level paths of a random h-relation on a small butterfly: what the kernel routes
    on the collection's own rows (:func:`universal.engine.compiled._level_rows`)."""
    g = np.random.default_rng(seed)
    net = build_network(f"butterfly:d={int(g.integers(2, 6))}")
    problem = build_problem(f"h-relation:h={int(g.integers(1, 5))}", net, np.random.default_rng(seed))
    return route_paths(["valiant", "dimension-order"][seed % 2], problem, net, np.random.default_rng(seed + 1))


@pytest.mark.parametrize("bandwidth, buffer, limit", [(1, None, None), (2, None, None), (1, 1, None), (2, 2, None),
                                                      (1, None, 3), (1, 1, 2), (1, 100, None)])
@pytest.mark.parametrize("seed", range(6))
def test_leveled_paths_are_routed_on_their_own_rows_as_the_reference_routes_them(monkeypatch, packed, bandwidth, buffer,
                                                                        limit, seed):
    """Without hop steps to record, butterfly level paths run on the collection's own rows (B = 1
    and buffers that never refuse on the loop of :mod:`universal.engine.compiled_levels`, without
    prefetching with ``packed``, else with): the same result as the reference, and the paths untouched."""
    from universal.engine import compiled, compiled_levels

    monkeypatch.setattr(compiled_levels, "IN_CACHE_HOPS", 1 << 40 if packed else 0)
    paths = random_case(seed) if seed % 3 == 2 else leveled_case(seed)
    before = paths.links.copy()
    taken = []
    real = compiled._route_rows
    monkeypatch.setattr(compiled, "_route_rows", lambda *a, **k: taken.append(1) or real(*a, **k))
    for protocol in STATIC:
        kwargs = dict(bandwidth=bandwidth, buffer=buffer, step_limit=limit)
        got = compiled_run(paths, protocol, seed, **kwargs)
        assert_same(got, simulate_reference(paths, protocol, np.random.default_rng(seed), **kwargs))
    np.testing.assert_array_equal(paths.links, before)
    assert len(taken) == (2 if paths.network.kind == "butterfly" else 0)


def test_only_paths_climbing_a_butterfly_from_level_0_run_on_their_own_rows():
    from universal.engine.compiled import _level_rows

    net = build_network("butterfly:d=3")
    paths = leveled_case(1)
    assert _level_rows(paths) is not None
    assert _level_rows(random_case(2)) is None                                 # a torus
    # a path from level 1, and one that turns back down: not rows of climbing paths
    assert _level_rows(PathCollection.from_node_paths(net, [[8, 16, 24]])) is None
    assert _level_rows(PathCollection.from_node_paths(net, [[0, 8, 0, 8]])) is None
    assert _level_rows(PathCollection.from_node_paths(net, [[0, 8, 16, 24], [1, 9, 17, 25]])) is not None



def test_leveled_paths_on_their_own_rows_run_as_plain_python_too():
    """The rows loop with its prefetching (a no-op in Python) gives the same results uncompiled."""
    from universal.engine import compiled

    from universal.engine import compiled_levels

    paths = leveled_case(3)
    protocol = build_protocol("random-rank")
    state = protocol.setup(np.random.default_rng(3), paths.lengths, paths.congestion, paths.dilation)
    kernels = (compiled, "_run_flat"), (compiled_levels, "_run_levels"), (compiled_levels, "_count_waiting")
    real = [getattr(module, name) for module, name in kernels]
    saved = compiled_levels.IN_CACHE_HOPS
    try:
        for module, name in kernels:
            setattr(module, name, getattr(module, name).py_func)
        for in_cache, bandwidth, limit in [(1 << 40, 1, 100), (0, 1, 100), (0, 1, 3), (0, 2, 100)]:
            compiled_levels.IN_CACHE_HOPS = in_cache
            plain = compiled.route_static(paths, protocol, state, bandwidth=bandwidth, buffer=None, limit=limit,
                                          record_hops=False)
            assert_same(plain, simulate_reference(paths, "random-rank", np.random.default_rng(3), step_limit=limit,
                                                  bandwidth=bandwidth))
    finally:
        for (module, name), kernel in zip(kernels, real):
            setattr(module, name, kernel)
        compiled_levels.IN_CACHE_HOPS = saved


def merging_streams() -> PathCollection:
    """40 packets from input row 0 and 40 from row 1 of BF(2), all to output row 0: the streams
    meet at node (1, 0), whose two in-buffers each grow to about 20 packets (C = 80, T = 81)."""
    net = build_network("butterfly:d=2")
    return PathCollection.from_node_paths(net, [[0, 4, 8]] * 40 + [[1, 4, 8]] * 40)


@pytest.mark.parametrize("in_cache", [True, False])
@pytest.mark.parametrize("limit", [None, 30])
def test_level_paths_with_buffers_of_16_or_more_run_as_the_reference_does(monkeypatch, in_cache, limit):
    """From C = 16 on the node words' counts take 12 bits (:mod:`universal.engine.compiled_levels`)."""
    from universal.engine import compiled_levels

    monkeypatch.setattr(compiled_levels, "IN_CACHE_HOPS", 1 << 40 if in_cache else 0)
    paths = merging_streams()
    for protocol in STATIC:
        want = simulate_reference(paths, protocol, np.random.default_rng(2), step_limit=limit)
        assert want.max_buffer >= 16 and paths.congestion >= 16
        assert_same(compiled_run(paths, protocol, 2, step_limit=limit), want)


#: The node-word loops of :mod:`universal.engine.compiled_levels` that keep tags, by the one that
#: must run: on the rows the packets pass (the default) without prefetching and with, and on the
#: path array (``FROM_ROWS`` off).
TAGGED_LOOPS = {"rows-in-cache": "_run_rows_in_cache", "rows": "_run_rows", "path-array": "_run_levels"}


def tags_every_3_steps(monkeypatch, loop: str) -> list:
    """Make ``route_static`` route butterfly level paths on ``loop`` of :data:`TAGGED_LOOPS`,
    uncompiled and with a tag period of 3 steps instead of 63; returns a list that gets an entry
    whenever that loop runs. Small batches' one-word path from their keys
    (:mod:`universal.engine.compiled_in_cache`) is bypassed: it clears its words every step and
    keeps no tags."""
    from universal.engine import compiled, compiled_level_words, compiled_levels

    for name in ("_run_rows", "_run_rows_in_cache", "_count_rows", "_run_levels", "_count_waiting"):
        monkeypatch.setattr(compiled_levels, name, getattr(compiled_levels, name).py_func)
    monkeypatch.setattr(compiled_level_words, "_fill_words", compiled_level_words._fill_words.py_func)
    monkeypatch.setattr(compiled_levels, "_PERIOD", 3)
    monkeypatch.setattr(compiled_levels, "FROM_ROWS", loop != "path-array")
    monkeypatch.setattr(compiled_levels, "IN_CACHE_HOPS", 1 << 40 if loop == "rows-in-cache" else 0)
    monkeypatch.setattr(compiled, "route_levels_by_keys", lambda *a: None)
    taken = []
    real = getattr(compiled_levels, TAGGED_LOOPS[loop])
    monkeypatch.setattr(compiled_levels, TAGGED_LOOPS[loop], lambda *a: taken.append(1) or real(*a))
    return taken


def static_run(paths: PathCollection, protocol: str, seed: int, limit: int):
    """:func:`universal.engine.compiled.route_static` with B = 1 and unbounded buffers."""
    from universal.engine import compiled

    p = build_protocol(protocol)
    state = p.setup(np.random.default_rng(seed), paths.lengths, paths.congestion, paths.dilation)
    return compiled.route_static(paths, p, state, bandwidth=1, buffer=None, limit=limit, record_hops=False)


@pytest.mark.parametrize("loop", list(TAGGED_LOOPS))
@pytest.mark.parametrize("seed", range(4))
def test_the_node_words_tags_start_over_as_they_must(monkeypatch, seed, loop):
    """Uncompiled with a tag period of 3 steps instead of 63 (the tags start over every few
    steps, and a word left from three steps before must not count), on each loop that keeps tags,
    as :func:`~universal.engine.compiled.route_static` reaches it: the reference's results."""
    taken = tags_every_3_steps(monkeypatch, loop)
    paths = merging_streams() if seed == 3 else leveled_case(seed)
    for limit in (100, 4):
        got = static_run(paths, "random-rank", seed, limit)
        assert_same(got, simulate_reference(paths, "random-rank", np.random.default_rng(seed), step_limit=limit))
    assert len(taken) == 2


@pytest.mark.parametrize("loop", list(TAGGED_LOOPS))
def test_the_count_at_a_step_limit_starts_the_tags_over_as_it_must(monkeypatch, loop):
    """At a step limit the waiting packets are counted into the node words as a pass of the next
    step would count them, which with a tag period of 3 is tag 1 after step 6: the words of step 4
    must not count. On BF(4), longest-in-system (the lower id first), packets 0 and 3 climb row 0
    and 1 and 2 leave it at level 1, so packet 3 waits three steps at its source, packet 0 is the
    only one at node (3, 0) in step 4 and packet 3 arrives there in step 6: every buffer holds at
    most 1 packet, where a stale word of step 4 would count 2."""
    taken = tags_every_3_steps(monkeypatch, loop)
    straight, leaving = [0, 16, 32, 48, 64], [0, 16, 34, 50, 66]
    paths = PathCollection.from_node_paths(build_network("butterfly:d=4"), [straight, leaving, leaving, straight])
    for limit in (6, 100):
        want = simulate_reference(paths, "longest-in-system", np.random.default_rng(0), step_limit=limit)
        assert want.max_buffer == 1 and want.delivery.tolist() == [4, 5, 6, -1 if limit == 6 else 7]
        assert_same(static_run(paths, "longest-in-system", 0, limit), want)
    assert len(taken) == 2


@pytest.mark.parametrize("in_cache", [True, False])
@pytest.mark.parametrize("limit", [None, 66])
def test_level_paths_past_63_steps_and_with_c_of_16_or_more_run_as_the_reference_does(monkeypatch, in_cache, limit):
    """The node words' tags cycle through 63 steps and their counts take 12 bits from C = 16 on
    (:mod:`universal.engine.compiled_levels`): a 100-relation on BF(3) has C = 64 and T = 69."""
    from universal.engine import compiled_levels

    monkeypatch.setattr(compiled_levels, "IN_CACHE_HOPS", 1 << 40 if in_cache else 0)
    net = build_network("butterfly:d=3")
    paths = route_paths("dimension-order", build_problem("h-relation:h=100", net, np.random.default_rng(0)), net,
                        np.random.default_rng(1))
    assert paths.congestion >= 16
    for protocol in STATIC:
        want = simulate_reference(paths, protocol, np.random.default_rng(2), step_limit=limit)
        assert want.T > 63 or want.steps > 63
        assert_same(compiled_run(paths, protocol, 2, step_limit=limit), want)
