"""A butterfly's large level path collections kept as the rows their packets pass
(:class:`universal.paths.level_rows.LevelRowsCollection`) are the collections the path systems
build with a path array: the same link ids once read, the same C, D, loads and flags, without
writing the path array for any of those but the links themselves.

Oracle: the same path system with the kept-rows threshold out of reach (the path array written
in numpy, column by column), same problem and seed.
"""

from __future__ import annotations

import numpy as np
import pytest

from universal.networks import build_network
from universal.paths import level_loads, route_paths, systems
from universal.paths.level_rows import LevelRowsCollection
from universal.workloads import build_problem

pytestmark = pytest.mark.skipif(not level_loads.NUMBA, reason="numba is not installed: the path systems keep "
                                                               "no rows and write every path array")


def both(monkeypatch, network: str, system: str, problem: str, seed: int):
    """(kept as rows, with a path array) for the same problem and seed."""
    net = build_network(network)
    prob = build_problem(problem, net, np.random.default_rng(seed))
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1)
    kept = route_paths(system, prob, net, np.random.default_rng(seed + 1))
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1 << 60)
    plain = route_paths(system, prob, net, np.random.default_rng(seed + 1))
    return kept, plain


@pytest.mark.parametrize("network,system,problem,seed", [
    ("butterfly:d=1", "valiant", "h-relation:h=1", 0), ("butterfly:d=4", "valiant", "h-relation:h=3", 1),
    ("butterfly:d=6", "valiant", "h-relation:h=4", 2), ("butterfly:d=5", "dimension-order", "h-relation:h=5", 3),
    ("butterfly:d=7", "dimension-order", "permutation:bit-reversal", 4)])
def test_kept_rows_are_the_path_array_collection(monkeypatch, network, system, problem, seed):
    kept, plain = both(monkeypatch, network, system, problem, seed)
    assert isinstance(kept, LevelRowsCollection) and not isinstance(plain, LevelRowsCollection)
    # what routing and the table read, none of which writes the path array
    assert (kept.size, kept.congestion, kept.dilation, kept.is_leveled, kept.system, kept.note) == \
           (plain.size, plain.congestion, plain.dilation, plain.is_leveled, plain.system, plain.note)
    np.testing.assert_array_equal(kept.offsets, plain.offsets)
    np.testing.assert_array_equal(kept.lengths, plain.lengths)
    np.testing.assert_array_equal(kept.sources, plain.sources)
    np.testing.assert_array_equal(kept.dests, plain.dests)
    assert kept.network.name == plain.network.name
    assert not kept.links_written
    # and the links, written when read, with everything computed from them
    assert kept.links.dtype == plain.links.dtype
    np.testing.assert_array_equal(kept.links, plain.links)
    assert kept.links_written
    np.testing.assert_array_equal(kept.link_loads, plain.link_loads)
    assert kept.summary() == plain.summary()
    assert kept.node_path(kept.size - 1) == plain.node_path(plain.size - 1)


def test_wrapped_butterflies_and_small_collections_keep_their_path_array(monkeypatch):
    """W-BF(d)'s C is not counted from rows (its last level wraps), and below the threshold the
    path array is written as before."""
    kept, plain = both(monkeypatch, "wrapped-butterfly:d=4", "valiant", "h-relation:h=2", 5)
    assert not isinstance(kept, LevelRowsCollection)
    net = build_network("butterfly:d=5")
    small = route_paths("valiant", build_problem("h-relation:h=2", net, np.random.default_rng(0)), net,
                        np.random.default_rng(1))
    assert small.level_rows is None and not isinstance(small, LevelRowsCollection)


def test_the_rows_are_kept_once_in_a_small_type(monkeypatch):
    """Valiant's three row arrays (entry, middle, exit) shared by the two passes, int32 on BF(d < 30)."""
    kept, _ = both(monkeypatch, "butterfly:d=5", "valiant", "h-relation:h=2", 6)
    d, passes = kept.level_rows
    assert d == 5 and len(passes) == 2 and passes[0][1] is passes[1][0]
    assert all(rows.dtype == np.int32 for pair in passes for rows in pair)


PROTOCOLS = ["random-rank", "growing-rank", "fifo", "farthest-to-go", "nearest-to-go", "longest-in-system", "random",
             "random-delay", "trial-and-failure", "duplication"]


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
@pytest.mark.parametrize("bandwidth,buffer", [(1, None), (2, None), (1, 1)])
def test_every_protocol_routes_kept_rows_as_the_path_array(monkeypatch, bandwidth, buffer, engine):
    """Whatever reads the paths (keys that change, B > 1, buffers that refuse, rounds) gets them
    written on first use: the same results as on the collection with a path array, same seeds, in
    numpy and on the compiled kernels (forced at every size)."""
    from universal.engine import batch, simulate
    from universal.protocols import build_protocol

    if engine == "compiled":
        monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", 0)
        monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_COLD", 0)
        from universal.engine import compiled       # and large batches' loop, from the rows
        monkeypatch.setattr(compiled, "IN_CACHE_HOPS", 0)
    kept, plain = both(monkeypatch, "butterfly:d=4", "valiant", "h-relation:h=3", 7)
    for name in PROTOCOLS:
        protocol = build_protocol(name)
        got = simulate(kept, protocol, np.random.default_rng(3), bandwidth=bandwidth, buffer=buffer)
        want = simulate(plain, protocol, np.random.default_rng(3), bandwidth=bandwidth, buffer=buffer)
        np.testing.assert_array_equal(got.delivery, want.delivery, err_msg=name)
        assert (got.status, got.steps, got.max_buffer, got.hops) == (want.status, want.steps, want.max_buffer,
                                                                     want.hops), name
