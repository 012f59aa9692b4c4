"""Expected congestion over random functions (Meyer auf der Heide & Scheideler, §2.3).

Oracles: closed forms worked out below, and a brute force that averages the link loads over
every function [N] -> [N] (and every choice of Valiant intermediates) on tiny networks.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from universal.errors import UserError
from universal.networks import build_network, from_networkx
from universal.oblivious.expected import expected_congestion
from universal.paths import build_path_system
from universal.paths.systems import valiant_paths
from universal.workloads import Problem, endpoints


def crossings(coll) -> dict[tuple, int]:
    """Crossings of every link, as (tail, head) node pairs, counted from the flat hop list."""
    net = coll.network
    pairs, counts = np.unique(np.stack([net.link_tail[coll.links], net.link_head[coll.links]]), axis=1,
                              return_counts=True)
    return {(int(u), int(v)): int(c) for (u, v), c in zip(pairs.T, counts)}


def every_function(sources, dests) -> tuple[np.ndarray, np.ndarray, int]:
    """All |D|^|S| functions, one after another, as one list of (source, destination) pairs."""
    choices = np.array(list(itertools.product(dests.tolist(), repeat=len(sources))), dtype=np.int64)
    return np.tile(sources, len(choices)), choices.ravel(), len(choices)


def brute_force(system: str, network) -> Fraction:
    """max_e of the average load of e over all |D|^|S| functions (deterministic paths)."""
    sources, dests = endpoints(network)
    src, dst, functions = every_function(sources, dests)
    coll = build_path_system(system, network).route(Problem("f", src, dst), network, np.random.default_rng(0))
    return max(Fraction(c, functions) for c in crossings(coll).values())


def brute_force_valiant(network) -> Fraction:
    """The same for Valiant's trick: every function with every assignment of intermediates."""
    sources, dests = endpoints(network)
    N = len(sources)
    src, dst, functions = every_function(sources, dests)
    middles = np.array(list(itertools.product(range(N), repeat=N)), dtype=np.int64)
    runs = functions * len(middles)
    problem = Problem("f", np.repeat(src.reshape(functions, N), len(middles), axis=0).ravel(),
                      np.repeat(dst.reshape(functions, N), len(middles), axis=0).ravel())
    coll = valiant_paths(problem, network, np.random.default_rng(0), middle=np.tile(middles.ravel(), functions))
    return max(Fraction(c, runs) for c in crossings(coll).values())


TINY = {
    "ring-5": lambda: build_network("torus:k=5,n=1"),
    "mesh-2x2": lambda: build_network("mesh:k=2,n=2"),
    "mesh-3x1": lambda: build_network("mesh:k=3,n=1"),
    "star-5": lambda: from_networkx(nx.star_graph(4), "star"),
    "butterfly-2": lambda: build_network("butterfly:d=2"),
    "path-4": lambda: from_networkx(nx.path_graph(4), "path"),
}


# Dimension order needs a mesh, torus, hypercube or butterfly: not the star or the path graph.
DETERMINISTIC = [(name, "shortest") for name in TINY] + [
    (name, "dimension-order") for name in TINY if name not in ("star-5", "path-4")]


@pytest.mark.parametrize("name, system", DETERMINISTIC)
def test_exact_value_equals_the_average_over_every_function(name, system):
    network = TINY[name]()
    result = expected_congestion(system, network)
    assert result.how.startswith("exact")
    assert result.exact == brute_force(system, network)


@pytest.mark.parametrize("name", ["mesh-2x2", "butterfly-2"])
def test_valiant_exact_value_equals_the_average_over_every_function_and_intermediate(name):
    network = TINY[name]()
    result = expected_congestion("valiant", network)
    assert result.how == "exact, all 16 pairs of both passes"
    assert result.exact == brute_force_valiant(network)


# Closed forms. Bit-fixing from s to t crosses the dimension-i link out of u exactly when s agrees
# with u on bits >= i and t agrees with u on bits < i and differs in bit i: 2^i * 2^(d-i-1) of the
# N^2 pairs, so C̄_e = 2^(d-1) / N = 1/2 on the hypercube and, level by level, on BF(d). Valiant's
# two passes are two random functions: 1 where they share links, 1/2 each on two butterflies.


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7])
def test_bit_fixing_on_the_hypercube_is_one_half(d):
    result = expected_congestion("dimension-order", build_network(f"hypercube:d={d}"))
    assert result.exact == Fraction(1, 2)
    assert np.all(result.loads == 0.5)  # every link


@pytest.mark.parametrize("d", [1, 3, 6, 8])
def test_level_paths_on_the_butterfly_are_one_half(d):
    assert expected_congestion("dimension-order", build_network(f"butterfly:d={d}")).exact == Fraction(1, 2)


@pytest.mark.parametrize("d", [2, 4, 8])
def test_valiant_on_two_butterflies_is_one_half_per_link(d):
    result = expected_congestion("valiant", build_network(f"butterfly:d={d}"))
    assert result.exact == Fraction(1, 2)
    assert result.host.endswith("(2 back to back)")
    used = result.loads[result.loads > 0]
    assert len(used) == 2 * d * 2 * 2**d and np.all(used == 0.5)  # every forward link of both


@pytest.mark.parametrize("d", [3, 4])
def test_valiant_on_the_wrapped_butterfly_shares_links_so_is_one(d):
    assert expected_congestion("valiant", build_network(f"wrapped-butterfly:d={d}")).exact == 1


@pytest.mark.parametrize("d", [3, 5])
def test_valiant_on_the_hypercube_is_twice_bit_fixing(d):
    assert expected_congestion("valiant", build_network(f"hypercube:d={d}")).exact == 1


@pytest.mark.parametrize("d", [3, 4])
def test_random_shortest_on_the_hypercube_is_one_half(d):
    # Symmetry: N·d/2 expected hops per random function spread evenly over N·d links.
    result = expected_congestion("random-shortest", build_network(f"hypercube:d={d}"))
    assert result.how == "exact, pair loads"
    assert result.exact == Fraction(1, 2)


@pytest.mark.parametrize("k", [4, 5, 6, 7, 8])
def test_balanced_minimal_routing_on_the_torus_is_the_capacity_load(k):
    # SPEC §7: uniform load per channel k/8 (even k) and (k^2 - 1)/(8k) (odd k) under minimal,
    # balanced routing; VAL is two such phases.
    expected = Fraction(k, 8) if k % 2 == 0 else Fraction(k * k - 1, 8 * k)
    network = build_network(f"torus:k={k},n=2")
    assert expected_congestion("dor", network).exact == expected
    assert expected_congestion("val", network).exact == 2 * expected


def test_sampled_estimates_cover_the_exact_value():
    # valiant over random-shortest on the 6-cube has no exact provider here (its integers would
    # overflow), so it is sampled over all pairs; the exact value is 1 (two random-shortest passes).
    result = expected_congestion("valiant:base=random-shortest", build_network("hypercube:d=6"),
                                 rng=np.random.default_rng(1))
    assert result.exact is None and result.how.startswith("sampled, 64 passes over all 4,096 pairs")
    assert 0 < result.error < 0.1
    assert abs(result.value - 1) <= 4 * result.error


def test_random_functions_on_a_large_butterfly_are_not_inflated_by_the_choice_of_link():
    # All pairs of BF(12) are too many: 64 random functions. Every link has C̄_e = 1/2; the
    # largest of the per-link sample means is far above that, the held-out estimate is not.
    result = expected_congestion("dimension-order", build_network("butterfly:d=12"),
                                 rng=np.random.default_rng(2))
    assert result.how == "sampled, 64 random functions"
    assert abs(result.value - 0.5) <= 4 * result.error
    assert result.loads.max() > 0.5 + 4 * result.error


def test_same_seed_same_estimate():
    network = build_network("butterfly:d=12")
    a = expected_congestion("valiant", network, rng=np.random.default_rng(5))
    b = expected_congestion("valiant", network, rng=np.random.default_rng(5))
    assert (a.value, a.error, a.link) == (b.value, b.error, b.link)


def test_json_form():
    out = expected_congestion("dimension-order", build_network("torus:k=8,n=2")).to_dict()
    assert out == {"paths": "dimension-order", "expected_congestion": 1.25, "exact": "5/4", "error": 0.0,
                   "link": "0,0->1,0", "host": "torus:k=8,n=2", "how": "exact, all 4,096 pairs"}


@pytest.mark.parametrize("paths, samples, message", [
    ("explicit:file=x.txt", 64, "explicit paths belong to one problem"),
    ("zigzag", 64, "unknown path system 'zigzag'"),
    ("random-shortest", 1, "samples must be >= 2"),
])
def test_bad_input(paths, samples, message):
    with pytest.raises(UserError, match=message):
        expected_congestion(paths, build_network("hypercube:d=3"), samples=samples)
