"""Memory: small array types, butterfly edges on demand, and a refusal instead of being killed."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from universal import memory
from universal.cli import main
from universal.errors import UserError
from universal.networks import butterfly
from universal.networks.generators import _butterfly_edges
from universal.paths import route_paths
from universal.paths.collection import count_links
from universal.workloads import build_problem

from tests.test_cli import assert_user_error


def test_link_counts_equal_bincount_in_the_smallest_type():
    rng = np.random.default_rng(0)
    for top, expected in ((10, np.int8), (1000, np.int16)):
        links = np.repeat(rng.integers(0, 50, size=20), rng.integers(1, top, size=20))
        counts = count_links(links, 60)
        assert counts.dtype == expected
        np.testing.assert_array_equal(counts, np.bincount(links, minlength=60))


def test_link_counts_of_equal_length_paths_in_blocks_equal_bincount():
    """Counted hop position by hop position in blocks of a few paths, loads past a byte included."""
    rng = np.random.default_rng(1)
    for top in (3, 40):              # 300 paths of 4 hops on 3 links: loads about 400 wrap a byte
        links = rng.integers(0, top, size=(300, 4)).astype(np.int32).ravel()
        counts = count_links(links, top + 3, width=4, block_bytes=64)
        assert counts.dtype == (np.int16 if top == 3 else np.int8)
        np.testing.assert_array_equal(counts, np.bincount(links, minlength=top + 3))


def test_valiant_paths_on_a_butterfly_use_int32_links_and_never_build_the_host_edges():
    net = butterfly(6)
    paths = route_paths("valiant", build_problem("h-relation:h=2", net, np.random.default_rng(0)), net,
                        np.random.default_rng(1))
    assert paths.links.dtype == np.int32 and paths.network.num_links == 4 * 12 * 64
    assert paths.congestion > 0 and "edges" not in paths.network.__dict__  # routing needs no edge array
    # When something does need the edges, they are the ones the definition gives.
    np.testing.assert_array_equal(paths.network.edges, _butterfly_edges(6, 12, wrapped=False))
    assert paths.network.levels.dtype == np.int8


def test_a_run_larger_than_the_available_memory_is_refused_before_allocating(monkeypatch, capsys):
    """BF(16) with a 4-relation over Valiant paths needs about 0.2 GB; with 0.1 GB available the
    estimate refuses it with one error line, before the packets or paths exist."""
    main(["route", "--network", "butterfly:d=3", "--problem", "permutation:random"])  # warm up imports
    capsys.readouterr()
    monkeypatch.setattr(memory, "available_bytes", lambda: 100_000_000)
    tracemalloc.start()
    try:
        status = main(["route", "--network", "butterfly:d=16", "--problem", "h-relation:h=4", "--paths", "valiant",
                       "--protocols", "random-rank"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_user_error(status, *capsys.readouterr(), "GB of memory, more than the 0.1 GB available")
    assert peak < 32 * 2**20, f"allocated {peak / 2**20:.0f} MiB before refusing"


def test_check_memory_passes_what_fits():
    memory.check_memory(10**6, "a small run", available=10**9)
    with pytest.raises(UserError, match="would need about 2.0 GB"):
        memory.check_memory(2 * 10**9, "a run", available=10**9)


@pytest.mark.parametrize("name", ["butterfly:d=4", "wrapped-butterfly:d=4"])
def test_link_ends_from_the_formula_equal_the_edge_array(name):
    from universal.networks import build_network

    by_formula = build_network(name)
    labels = [by_formula.link_label(link) for link in range(by_formula.num_links)]
    assert "edges" not in by_formula.__dict__  # labels did not build the edge array
    by_array = build_network(name)
    assert [f"{by_array.label_of(int(t))}->{by_array.label_of(int(h))}"
            for t, h in zip(by_array.link_tail, by_array.link_head)] == labels
