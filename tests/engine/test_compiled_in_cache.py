"""Small batches of a butterfly's level paths routed from their keys on one word per packet
(:func:`universal.engine.compiled_in_cache.route_levels_by_keys`: the sort by priority, the words
and the steps in one compiled call), compiled and as plain Python: as the reference engine
routes them, past 63 steps (where the node words of :mod:`universal.engine.compiled_levels` start
their tags over; these words keep no tags and are cleared every step), through step limits and
counts of 7 and 15 bits, and leaving the waiting packets where
:func:`universal.engine.compiled_levels.route_levels` leaves them.

Oracle: :func:`universal.engine.simulate_reference` on the same seed (delivery steps, T, steps,
largest buffer, hops, status), and ``route_levels`` on the same order for the waiting packets'
places.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from tests.engine.test_compiled_levels import case, merging_streams, run, same
from universal.engine import compiled, compiled_in_cache, compiled_levels, simulate_reference
from universal.networks import butterfly
from universal.paths import PathCollection

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed: the compiled loops are never dispatched to "
                                       "(test_compiled.py runs them as plain Python where it can)")

IN_CACHE = ("_route_packed", "_order_packed", "_run_packed")


@pytest.fixture(params=["compiled", "plain"])
def in_cache(request, monkeypatch):
    """The small batches' path, compiled and as plain Python; it must be the one taken."""
    if request.param == "plain":
        for name in IN_CACHE:
            monkeypatch.setattr(compiled_in_cache, name, getattr(compiled_in_cache, name).py_func)
    taken = []
    real = compiled_in_cache.route_levels_by_keys
    monkeypatch.setattr(compiled, "route_levels_by_keys", lambda *a: taken.append(real(*a)) or taken[-1])
    yield request.param
    assert taken and all(done is not None for done in taken)


@pytest.mark.parametrize("limit", [10**6, 3, 66])
@pytest.mark.parametrize("seed", range(8))
def test_small_batches_from_their_keys_route_as_the_reference_does(in_cache, seed, limit):
    paths = case(seed)
    for protocol in ("random-rank", "longest-in-system"):
        same(run(paths, protocol, seed, limit),
             simulate_reference(paths, protocol, np.random.default_rng(seed), step_limit=limit))


@pytest.mark.parametrize("limit", [10**6, 30])
def test_small_batches_with_counts_of_12_bits_and_past_63_steps(in_cache, limit):
    """C = 80 (counts of 7 bits in 16-bit words) and T = 81."""
    paths = merging_streams()
    want = simulate_reference(paths, "random-rank", np.random.default_rng(2), step_limit=limit)
    assert want.max_buffer >= 16
    same(run(paths, "random-rank", 2, limit), want)


@pytest.mark.parametrize("limit", [10**6, 400])
def test_small_batches_with_counts_of_15_bits(in_cache, limit):
    """C = 600 (counts of 15 bits in 32-bit words): buffers past 127."""
    paths = PathCollection.from_node_paths(butterfly(2), [[0, 4, 8]] * 300 + [[1, 4, 8]] * 300)
    want = simulate_reference(paths, "random-rank", np.random.default_rng(2), step_limit=limit)
    assert want.max_buffer >= 128
    same(run(paths, "random-rank", 2, limit), want)


@pytest.mark.parametrize("seed", range(6))
def test_small_batches_leave_the_waiting_packets_where_route_levels_does(seed):
    """At a step limit, the places in the path array of the packets still waiting, in priority
    order, and every result are those of :func:`route_levels` on the same order."""
    paths = case(seed)
    width, rows = paths.dilation, 1 << paths.network.params["d"]
    keys = np.random.default_rng(seed).integers(0, 9, size=paths.size)
    order = np.lexsort((np.arange(paths.size), keys))
    got_delivery, want_delivery = (np.full(paths.size, -1, dtype=np.int64) for _ in range(2))
    got, cur = compiled_in_cache.route_levels_by_keys(paths.links, keys, got_delivery, paths.congestion, 3, 4 * rows,
                                                      width)
    want_cur = order * width
    want = compiled_levels.route_levels(paths.links, want_cur, want_delivery, paths.network.num_links,
                                        paths.congestion, 3, 4 * (width - 1) * rows, 4 * rows, width)
    assert got == want and got[2] > 0
    assert cur[:got[2]].tolist() == want_cur[:want[2]].tolist()
    assert got_delivery.tolist() == want_delivery.tolist()


def test_small_batches_leave_keys_of_a_wide_span_and_large_batches_to_route_levels():
    """Keys spanning more values than max(n, 1024), batches of IN_CACHE_HOPS hops or more, and
    packets whose word would need more than 63 bits: None, nothing routed (the general sort and
    :func:`route_levels` then route them)."""
    paths = case(1)
    width, rows = paths.dilation, 1 << paths.network.params["d"]
    delivery = np.full(paths.size, -1, dtype=np.int64)
    args = (delivery, paths.congestion, 100, 4 * rows, width)
    wide = np.arange(paths.size) * 2000
    assert compiled_in_cache.route_levels_by_keys(paths.links, wide, *args) is None
    assert (delivery == -1).all()
    assert compiled_in_cache.route_levels_by_keys(paths.links, wide // 2000, *args) is not None
    saved = compiled_levels.IN_CACHE_HOPS
    compiled_levels.IN_CACHE_HOPS = len(paths.links)
    try:
        assert compiled_in_cache.route_levels_by_keys(paths.links, wide // 2000, *args) is None
    finally:
        compiled_levels.IN_CACHE_HOPS = saved
    # more than MAX_NODES_PER_PACKET nodes per packet: the node words, cleared every step, would cost
    few = climbing_paths(5, 2, 2, 0)        # 2 packets, 320 nodes
    assert compiled_in_cache.route_levels_by_keys(few.links, np.zeros(2, np.int64), np.full(2, -1, dtype=np.int64),
                                                  few.congestion, 100, 4 * 32, 10) is None
    same(run(few, "random-rank", 1, 10**6), simulate_reference(few, "random-rank", np.random.default_rng(1)))


def climbing_paths(d: int, passes: int, n: int, seed: int) -> PathCollection:
    """``n`` random paths climbing ``passes`` butterflies of dimension ``d`` back to back."""
    g = np.random.default_rng(seed)
    rows, depth = 1 << d, passes * d
    paths = []
    for _ in range(n):
        row = int(g.integers(rows))
        nodes = [row]
        for level in range(depth):
            row ^= int(g.integers(2)) << (level % d)
            nodes.append((level + 1) * rows + row)
        paths.append(nodes)
    return PathCollection.from_node_paths(butterfly(d, passes), paths)


def test_paths_too_long_for_one_word_route_on_two():
    """19 passes of BF(3): 9 bits of node and 57 of levels leave no room for the ids; the batch
    goes to route_levels (two words per packet) and routes as the reference does."""
    paths = climbing_paths(3, 19, 40, 0)
    width, rows = paths.dilation, 8
    assert compiled_in_cache.here_bits(width, 3) + width > 63
    delivery = np.full(paths.size, -1, dtype=np.int64)
    assert compiled_in_cache.route_levels_by_keys(paths.links, np.zeros(paths.size, np.int64), delivery,
                                                  paths.congestion, 100, 4 * rows, width) is None
    same(run(paths, "random-rank", 3, 10**6), simulate_reference(paths, "random-rank", np.random.default_rng(3)))
    shorter = climbing_paths(3, 2, 40, 0)        # two passes fit: one word
    assert compiled_in_cache.route_levels_by_keys(shorter.links, np.zeros(40, np.int64),
                                                  np.full(40, -1, dtype=np.int64), shorter.congestion, 100, 32,
                                                  6) is not None
