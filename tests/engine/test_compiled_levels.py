"""The node-word loops of :mod:`universal.engine.compiled_levels`: the loop on the rows the packets
pass (:func:`~universal.engine.compiled_levels._run_rows`) routes a butterfly's level paths exactly
as the loop on the path array (``_run_levels``) and the reference engine do, compiled and as
plain Python, through the tags starting over, step limits and counts of 12 bits, without
prefetching (the in-cache loop ``_run_rows_in_cache``) and with.

Oracle: :func:`universal.engine.simulate_reference` on the same seed (delivery steps, T, steps,
largest buffer, hops, status), and the path-array loop for the waiting packets' places.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from universal.engine import compiled, compiled_level_words, compiled_levels, simulate_reference
from universal.networks import build_network
from universal.paths import PathCollection, route_paths
from universal.protocols import build_protocol
from universal.workloads import build_problem

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed: the compiled loops are never dispatched to "
                                       "(test_compiled.py runs them as plain Python where it can)")

PLAIN = ("_run_rows", "_run_rows_in_cache", "_count_rows", "_run_levels", "_count_waiting")


def case(seed: int) -> PathCollection:
    """Valiant or level paths of a random h-relation on BF(1)-BF(5)."""
    g = np.random.default_rng(seed)
    net = build_network(f"butterfly:d={int(g.integers(1, 6))}")
    problem = build_problem(f"h-relation:h={int(g.integers(1, 6))}", net, np.random.default_rng(seed))
    return route_paths(["valiant", "dimension-order"][seed % 2], problem, net, np.random.default_rng(seed + 1))


def merging_streams() -> PathCollection:
    """40 packets from each of rows 0 and 1 of BF(2) to row 0: in-buffers of about 20 (C = 80)."""
    return PathCollection.from_node_paths(build_network("butterfly:d=2"), [[0, 4, 8]] * 40 + [[1, 4, 8]] * 40)


def run(paths: PathCollection, protocol: str, seed: int, limit: int):
    p = build_protocol(protocol)
    state = p.setup(np.random.default_rng(seed), paths.lengths, paths.congestion, paths.dilation)
    return compiled.route_static(paths, p, state, bandwidth=1, buffer=None, limit=limit, record_hops=False)


def same(got, want) -> None:
    np.testing.assert_array_equal(got.delivery, want.delivery)
    assert (got.status, got.steps, got.max_buffer, got.hops) == (want.status, want.steps, want.max_buffer, want.hops)


@pytest.fixture(params=["rows", "rows-plain", "path-array"])
def loop(request, monkeypatch):
    """The loop on the rows, compiled and as plain Python (with a tag period of 3 steps, so that the
    tags start over), and the loop on the path array."""
    monkeypatch.setattr(compiled_levels, "FROM_ROWS", request.param != "path-array")
    if request.param == "rows-plain":
        for name in PLAIN:
            monkeypatch.setattr(compiled_levels, name, getattr(compiled_levels, name).py_func)
        monkeypatch.setattr(compiled_level_words, "_fill_words", compiled_level_words._fill_words.py_func)
        monkeypatch.setattr(compiled_levels, "_PERIOD", 3)
    taken = []
    real = compiled_levels._run_rows
    monkeypatch.setattr(compiled_levels, "_run_rows", lambda *a: taken.append(1) or real(*a))
    # small batches too (test_compiled_in_cache.py tests their own path from the keys)
    monkeypatch.setattr(compiled, "route_levels_by_keys", lambda *a: None)
    yield request.param
    assert bool(taken) == (request.param != "path-array")


@pytest.mark.parametrize("ahead", [0, 24])
@pytest.mark.parametrize("limit", [10**6, 3, 66])
@pytest.mark.parametrize("seed", range(8))
def test_the_loops_route_level_paths_as_the_reference_does(loop, monkeypatch, seed, limit, ahead):
    monkeypatch.setattr(compiled_levels, "IN_CACHE_HOPS", 0 if ahead else 1 << 40)
    paths = case(seed)
    for protocol in ("random-rank", "longest-in-system"):
        same(run(paths, protocol, seed, limit),
             simulate_reference(paths, protocol, np.random.default_rng(seed), step_limit=limit))


@pytest.mark.parametrize("limit", [10**6, 30])
def test_counts_of_12_bits_from_c_16_on(loop, limit):
    paths = merging_streams()
    want = simulate_reference(paths, "random-rank", np.random.default_rng(2), step_limit=limit)
    assert want.max_buffer >= 16
    same(run(paths, "random-rank", 2, limit), want)


def test_a_path_longer_than_63_steps_of_tags():
    """A 100-relation on BF(3), Valiant: C = 64 and T past 63 steps, on the rows as on the path array."""
    net = build_network("butterfly:d=3")
    problem = build_problem("h-relation:h=100", net, np.random.default_rng(0))
    paths = route_paths("valiant", problem, net, np.random.default_rng(1))
    want = simulate_reference(paths, "random-rank", np.random.default_rng(4))
    assert want.steps > 63
    same(run(paths, "random-rank", 4, 10**6), want)


@pytest.mark.parametrize("seed", range(6))
def test_the_waiting_packets_places_are_those_of_the_path_array_loop(seed):
    """At a step limit ``route_levels`` leaves the waiting packets' places in the path array in
    ``cur``, in priority order, as the loop on the path array does."""
    paths = case(seed)
    width, rows = paths.dilation, 1 << paths.network.params["d"]
    levels = 4 * (width - 1) * rows, 4 * rows
    order = np.random.default_rng(seed).permutation(paths.size)
    out = {}
    for from_rows in (True, False):
        compiled_levels.FROM_ROWS = from_rows
        try:
            cur, delivery = order * width, np.full(paths.size, -1, dtype=np.int64)
            result = compiled_levels.route_levels(paths.links, cur, delivery, paths.network.num_links,
                                                  paths.congestion, 3, *levels, width)
        finally:
            compiled_levels.FROM_ROWS = True
        out[from_rows] = result, cur[:result[2]].tolist(), delivery.tolist()
    assert out[True] == out[False]
    assert out[True][0][2] > 0                    # some packets wait after 3 steps


def test_the_words_are_refused_where_they_do_not_fit():
    """Paths whose length is not a whole number of passes, or ids that leave no room: None."""
    links = np.zeros(12, dtype=np.int32)
    assert compiled_levels._packet_words(links, np.arange(0, 12, 3), 2, 3) is None
    assert compiled_levels._packet_words(links, np.arange(0, 12, 4), 2, 4) is not None
    wide = np.zeros(4 * 21, dtype=np.int64)      # 4 paths of 21 hops, 3 passes of 7: 21 + 2 bits fit
    assert compiled_levels._packet_words(wide, np.arange(0, 84, 21), 7, 21) is not None
    assert compiled_levels._packet_words(wide[:42], np.arange(0, 42, 21), 21, 21 * 3) is None  # 63 + 1 bits


def kept_as_rows(seed: int, monkeypatch) -> tuple[PathCollection, PathCollection]:
    """:func:`case`'s paths kept as rows (the path systems' threshold lowered) and with a path array."""
    from universal.paths import systems
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1)
    kept = case(seed)
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1 << 60)
    return kept, case(seed)


@pytest.mark.parametrize("plain", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_the_words_from_the_rows_are_those_from_the_path_array(monkeypatch, seed, plain):
    kept, paths = kept_as_rows(seed, monkeypatch)
    if plain:
        monkeypatch.setattr(compiled_level_words, "_fill_row_words", compiled_level_words._fill_row_words.py_func)
    d, rows = kept.level_rows
    width = paths.dilation
    cur = (np.random.default_rng(seed).permutation(paths.size) * width).astype(np.int32)
    assert compiled_levels.row_words_fit(len(rows), d, width, paths.size)
    got = compiled_levels._row_words(rows, cur, d, width)
    want = compiled_levels._packet_words(paths.links, cur, d, width)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("limit", [10**6, 3])
@pytest.mark.parametrize("seed", range(8))
def test_paths_kept_as_rows_route_from_them_as_the_reference_does(monkeypatch, seed, limit):
    """The loop starts from the rows, never writes the path array, and leaves the waiting packets'
    places where the loop on the path array leaves them."""
    # small batches too (a batch kept as rows and small enough for the in-cache loop writes its paths)
    monkeypatch.setattr(compiled, "IN_CACHE_HOPS", 0)
    kept, paths = kept_as_rows(seed, monkeypatch)
    calls = []
    real = compiled_levels._row_words
    monkeypatch.setattr(compiled_levels, "_row_words", lambda *a: calls.append(1) or real(*a))
    for protocol in ("random-rank", "longest-in-system"):
        got = run(kept, protocol, seed, limit)
        assert not kept.links_written
        same(got, simulate_reference(paths, protocol, np.random.default_rng(seed), step_limit=limit))
    assert calls
    # at a step limit the waiting packets' places in the path array, in priority order
    width, rows = paths.dilation, 1 << paths.network.params["d"]
    levels = 4 * (width - 1) * rows, 4 * rows
    order = np.random.default_rng(seed).permutation(paths.size).astype(np.int32) * width
    out = []
    for links, rows_kept in ((None, kept.level_rows[1]), (paths.links, None)):
        cur, delivery = order.copy(), np.full(paths.size, -1, dtype=np.int64)
        result = compiled_levels.route_levels(links, cur, delivery, paths.network.num_links, paths.congestion, 3,
                                              *levels, width, rows=rows_kept)
        out.append((result, cur[:result[2]].tolist(), delivery.tolist()))
    assert out[0] == out[1]


def test_paths_kept_as_rows_go_to_the_path_array_loop_without_the_words(monkeypatch):
    """With the loop on the rows switched off the path array is written and routed on."""
    kept, paths = kept_as_rows(3, monkeypatch)
    monkeypatch.setattr(compiled_levels, "FROM_ROWS", False)
    monkeypatch.setattr(compiled, "route_levels_by_keys", lambda *a: None)
    same(run(kept, "random-rank", 3, 10**6), simulate_reference(paths, "random-rank", np.random.default_rng(3)))
    assert kept.links_written
