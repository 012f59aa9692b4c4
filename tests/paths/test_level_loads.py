"""C and the link loads of a butterfly's level paths counted from the rows the packets pass
(:mod:`universal.paths.level_loads`) equal the obvious count over the path array
(:func:`universal.paths.collection.count_links`), compiled and as plain Python, and the path
systems hand the count to large collections only."""

from __future__ import annotations

import numpy as np
import pytest

from universal.networks import build_network
from universal.paths import level_loads as closed
from universal.paths import route_paths, systems
from universal.paths.collection import count_links
from universal.workloads import build_problem

KERNELS = ("_order_by", "_pass_loads")


@pytest.fixture(params=["compiled", "python"])
def kernels(request, monkeypatch):
    """The module's kernels compiled (where numba is installed) or as the plain Python they are."""
    if request.param == "compiled":
        if not closed.NUMBA:
            pytest.skip("numba is not installed: the kernels run only as plain Python")
    else:
        for name in KERNELS:
            kernel = getattr(closed, name)
            monkeypatch.setattr(closed, name, getattr(kernel, "py_func", kernel))
    return request.param


def _valiant(d: int, problem: str, seed: int):
    net = build_network(f"butterfly:d={d}")
    prob = build_problem(problem, net, np.random.default_rng(seed))
    middle = np.random.default_rng(seed + 1).integers(0, 1 << d, size=prob.size)
    paths = systems.valiant_butterfly_paths(prob, net, None, middle=middle)
    return paths, prob.sources % (1 << d), middle, prob.dests % (1 << d)


@pytest.mark.parametrize("d,problem,seed", [(1, "h-relation:h=1", 0), (3, "h-relation:h=2", 1),
                                            (5, "h-relation:h=4", 2), (6, "permutation:bit-reversal", 3),
                                            (7, "h-relation:h=3", 4)])
def test_closed_loads_equal_the_count_over_the_paths(kernels, d, problem, seed):
    paths, src, middle, dst = _valiant(d, problem, seed)
    loads = count_links(paths.links, paths.network.num_links)
    C, counted = closed.level_loads(d, [(src, middle), (middle, dst)], paths.network.num_links)
    assert C == int(loads.max())
    assert counted.dtype == loads.dtype
    assert np.array_equal(counted, loads)
    assert closed.level_loads(d, [(src, middle), (middle, dst)]) == (C, None)


def test_one_pass_is_the_level_paths(kernels):
    net = build_network("butterfly:d=6")
    prob = build_problem("h-relation:h=5", net, np.random.default_rng(7))
    paths = route_paths("dimension-order", prob, net, np.random.default_rng(0))
    rows = 1 << 6
    C, loads = closed.level_loads(6, [(prob.sources % rows, prob.dests % rows)], net.num_links)
    assert np.array_equal(loads, paths.link_loads) and C == paths.congestion


def test_unsorted_and_sorted_entry_rows_count_alike(kernels):
    """The first pass's rows are sorted (no reordering), the second's are not (a counting sort)."""
    paths, src, middle, dst = _valiant(5, "h-relation:h=4", 9)
    shuffle = np.random.default_rng(0).permutation(len(src))
    forward = closed.level_loads(5, [(src, middle)], paths.network.num_links)
    mixed = closed.level_loads(5, [(src[shuffle], middle[shuffle])], paths.network.num_links)
    assert forward[0] == mixed[0] and np.array_equal(forward[1], mixed[1])


def test_a_load_that_would_wrap_the_counters_is_refused(kernels, monkeypatch):
    """With 8-bit counters, 256 packets from row 0 to row 0 over one link do not fit: None."""
    real = np.zeros

    def small_counters(shape, dtype=float):
        return real(shape, dtype=np.uint8 if dtype is np.uint16 else dtype)

    monkeypatch.setattr(closed.np, "zeros", small_counters)
    rows = np.zeros(256, dtype=np.int64)
    assert closed.level_loads(2, [(rows, rows)]) is None
    assert closed.level_loads(2, [(rows[:255], rows[:255])]) == (255, None)


@pytest.mark.skipif(not closed.NUMBA, reason="numba is not installed: large collections count the path array")
def test_large_collections_take_the_closed_count(monkeypatch):
    """Above the threshold the path systems give C (and the loads they keep) from the rows; the
    collection then equals one whose C is counted from the path array."""
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1)
    paths, *_ = _valiant(6, "h-relation:h=4", 5)
    assert "congestion" in paths.__dict__ and "link_loads" in paths.__dict__
    again = route_paths("valiant", build_problem("h-relation:h=4", build_network("butterfly:d=6"),
                                                 np.random.default_rng(5)), build_network("butterfly:d=6"),
                        np.random.default_rng(1))
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1 << 60)
    plain = route_paths("valiant", build_problem("h-relation:h=4", build_network("butterfly:d=6"),
                                                 np.random.default_rng(5)), build_network("butterfly:d=6"),
                        np.random.default_rng(1))
    assert "congestion" not in plain.__dict__
    assert again.congestion == plain.congestion
    assert np.array_equal(again.link_loads, count_links(plain.links, plain.network.num_links))
    monkeypatch.setattr(systems, "KEEP_LOADS_LINKS", 0)      # hosts too large to keep the loads: C alone
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1)
    alone, *_ = _valiant(6, "h-relation:h=4", 5)
    assert "link_loads" not in alone.__dict__ and alone.congestion == int(alone.link_loads.max())


@pytest.mark.parametrize("network,system", [("butterfly:d=5", "valiant"), ("butterfly:d=6", "dimension-order"),
                                            ("wrapped-butterfly:d=4", "dimension-order"),
                                            ("wrapped-butterfly:d=4", "valiant")])
def test_the_compiled_fill_writes_the_numpy_fills_paths(kernels, monkeypatch, network, system):
    """Above the threshold the level path matrix is filled row by row by a compiled loop
    (plain Python here where numba is missing): the same links as the numpy fill, column by column."""
    if kernels == "python":
        monkeypatch.setattr(closed, "_fill_pass", getattr(closed._fill_pass, "py_func", closed._fill_pass))
    net = build_network(network)
    prob = build_problem("h-relation:h=3", net, np.random.default_rng(4))
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1 << 60)
    plain = route_paths(system, prob, net, np.random.default_rng(8))
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1)
    if not closed.NUMBA:
        pytest.skip("numba is not installed: the path systems fill in numpy at every size")
    filled = route_paths(system, prob, net, np.random.default_rng(8))
    assert filled.links.dtype == plain.links.dtype
    np.testing.assert_array_equal(filled.links, plain.links)
    np.testing.assert_array_equal(filled.offsets, plain.offsets)
    assert filled.congestion == plain.congestion
