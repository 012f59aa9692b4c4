"""The fast engine must agree exactly with the pure-Python reference (SPEC §9).

Both engines draw the protocol's randomness from the generator in the same order, so with
generators seeded alike they must produce the same delivery steps, the same hop-by-hop
schedule, the same largest buffer and the same status, on every network, path system,
problem, protocol and bandwidth. Every case below is small enough for the reference engine.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from universal.engine import simulate, simulate_reference
from universal.errors import UserError
from universal.networks import build_network, from_networkx
from universal.paths import PathCollection, route_paths
from universal.workloads import Problem, build_problem

BUFFERED_PROTOCOLS = [
    "random-rank",
    "growing-rank",
    "fifo",
    "farthest-to-go",
    "nearest-to-go",
    "longest-in-system",
    "random",
]

# Leighton, Maggs & Rao's random delays, then FIFO: packets join the waiting ones mid-run.
DELAYED_PROTOCOLS = ["random-delay:alpha=1", "random-delay:alpha=2.5", "random-delay:alpha=0.1"]

# An irregular graph for the edge-list file: a 10-cycle with chords and a pendant path.
EDGELIST_TEXT = """\
# an irregular test graph: ring 1..10, three chords, a tail 11-12
1 2
2 3
3 4
4 5
5 6
6 7
7 8
8 9
9 10
10 1
1 5
2 8
3 9
10 11
11 12
"""

# (case id, network, problem, path system). Special network names:
#   "petersen", "regular" (a random 3-regular graph on 12 nodes), "edgelist" (EDGELIST_TEXT
#   written to a temporary file). Special path systems: "explicit<-NAME" routes with NAME,
#   writes the node paths to a file and routes again with explicit:file=PATH.
#   Special problem "pairs-file" writes a few label pairs to a file and loads pairs:file=PATH;
#   "fixed-points" is a torus permutation that leaves every other node in place.
SCENARIOS = [
    ("bf3-perm-dor", "butterfly:d=3", "permutation:random", "dimension-order"),
    ("bf3-bitrev-shortest", "butterfly:d=3", "permutation:bit-reversal", "shortest"),
    ("bf4-hrel3-dor", "butterfly:d=4", "h-relation:h=3", "dimension-order"),
    ("bf3-hrel2-valiant", "butterfly:d=3", "h-relation:h=2", "valiant"),
    ("bf3-hfun3-valiant", "butterfly:d=3", "h-function:h=3", "valiant"),
    ("wbf3-hfun2-valiant", "wrapped-butterfly:d=3", "h-function:h=2", "valiant"),
    ("wbf3-hrel2-dor", "wrapped-butterfly:d=3", "h-relation:h=2", "dimension-order"),
    ("wbf3-perm-rshortest", "wrapped-butterfly:d=3", "permutation:random", "random-shortest"),
    ("mesh3-perm-dor", "mesh:k=3,n=2", "permutation:random", "dimension-order"),
    ("mesh4-hrel2-valiant-shortest", "mesh:k=4,n=2", "h-relation:h=2", "valiant:base=shortest"),
    ("mesh4-broadcast-shortest", "mesh:k=4,n=2", "broadcast:source=5", "shortest"),
    ("torus4-perm-rshortest", "torus:k=4,n=2", "permutation:random", "random-shortest"),
    ("torus5-broadcast-dor", "torus:k=5,n=2", "broadcast:source=0", "dimension-order"),
    ("torus4-hrel2-valiant", "torus:k=4,n=2", "h-relation:h=2", "valiant"),
    ("torus4-fixedpoints-dor", "torus:k=4,n=2", "fixed-points", "dimension-order"),
    ("hcube4-bitrev-dor", "hypercube:d=4", "permutation:bit-reversal", "dimension-order"),
    ("hcube4-hfun3-valiant", "hypercube:d=4", "h-function:h=3", "valiant"),
    ("hcube3-gossip-dor", "hypercube:d=3", "gossip", "dimension-order"),
    ("petersen-hrel2-shortest", "petersen", "h-relation:h=2", "shortest"),
    ("petersen-gossip-rshortest", "petersen", "gossip", "random-shortest"),
    ("regular-perm-valiant", "regular", "permutation:random", "valiant"),
    ("regular-hfun2-rshortest", "regular", "h-function:h=2", "random-shortest"),
    ("edgelist-hrel2-shortest", "edgelist", "h-relation:h=2", "shortest"),
    ("edgelist-pairs-valiant", "edgelist", "pairs-file", "valiant:base=random-shortest"),
    ("torus4-explicit-rshortest", "torus:k=4,n=2", "h-relation:h=2", "explicit<-random-shortest"),
    ("mesh3-explicit-valiant", "mesh:k=3,n=2", "h-relation:h=2", "explicit<-valiant"),
]


def _network(name: str, tmp_path: Path):
    if name == "petersen":
        return from_networkx(nx.petersen_graph(), "petersen")
    if name == "regular":
        return from_networkx(nx.random_regular_graph(3, 12, seed=7), "regular-3-12")
    if name == "edgelist":
        file = tmp_path / "net.edges"
        file.write_text(EDGELIST_TEXT)
        return build_network(f"edgelist:{file}")
    return build_network(name)


def _problem(name: str, net, rng: np.random.Generator, tmp_path: Path) -> Problem:
    if name == "pairs-file":
        file = tmp_path / "pairs.txt"
        # Node names of the edge-list graph (its labels); several packets share links.
        file.write_text("1 6\n6 1\n12 4\n3 12 # comment\n9 2\n2 9\n7 7\n11 5\n5 11\n8 3\n")
        return build_problem(f"pairs:file={file}", net, rng)
    if name == "fixed-points":
        # Even nodes stay put (zero-length paths, delivered at step 0); odd nodes rotate
        # among themselves.
        sources = np.arange(net.num_nodes, dtype=np.int64)
        odd = sources[1::2]
        dests = sources.copy()
        dests[1::2] = odd[rng.permutation(len(odd))]
        return Problem("fixed-points", sources, dests)
    return build_problem(name, net, rng)


def build_case(scenario_id: str, tmp_path: Path, seed: int) -> PathCollection:
    """The path collection of one scenario, everything drawn from generators seeded by ``seed``."""
    _, network, problem, system = next(s for s in SCENARIOS if s[0] == scenario_id)
    net = _network(network, tmp_path)
    prob = _problem(problem, net, np.random.default_rng(seed), tmp_path)
    if system.startswith("explicit<-"):
        first = route_paths(system.split("<-", 1)[1], prob, net, np.random.default_rng(seed + 1))
        file = tmp_path / "paths.txt"
        file.write_text("".join(" ".join(map(str, first.node_path(i))) + "\n" for i in range(first.size)))
        coll = route_paths(f"explicit:file={file}", prob, net, np.random.default_rng(seed + 1))
        # The file round trip must give back exactly the same paths.
        np.testing.assert_array_equal(coll.links, first.links)
        np.testing.assert_array_equal(coll.offsets, first.offsets)
        return coll
    return route_paths(system, prob, net, np.random.default_rng(seed + 1))


def assert_same(fast, ref) -> None:
    """Every field of the two results must be identical."""
    assert fast.status == ref.status
    assert fast.steps == ref.steps
    np.testing.assert_array_equal(fast.delivery, ref.delivery)
    assert fast.max_buffer == ref.max_buffer
    assert fast.hops == ref.hops
    assert fast.hop_steps is not None and ref.hop_steps is not None
    np.testing.assert_array_equal(fast.hop_steps, ref.hop_steps)
    assert fast.T == ref.T


def _run_both(coll: PathCollection, protocol: str, seed: int, **kwargs):
    fast = simulate(coll, protocol, np.random.default_rng(seed), record_hops=True, **kwargs)
    ref = simulate_reference(coll, protocol, np.random.default_rng(seed), record_hops=True, **kwargs)
    return fast, ref


CASES = [
    pytest.param(sid, proto, bw, id=f"{sid}-{proto}-B{bw}")
    for sid, *_ in SCENARIOS
    for proto in BUFFERED_PROTOCOLS + DELAYED_PROTOCOLS
    for bw in (1, 2)
]


@pytest.mark.parametrize("scenario_id, protocol, bandwidth", CASES)
def test_fast_matches_reference(scenario_id, protocol, bandwidth, tmp_path):
    """Same collection, protocol, B and seed: identical results from both engines."""
    seed = 1000 + 17 * [s[0] for s in SCENARIOS].index(scenario_id) + bandwidth
    coll = build_case(scenario_id, tmp_path, seed)
    fast, ref = _run_both(coll, protocol, seed + 5, bandwidth=bandwidth)
    assert_same(fast, ref)
    assert fast.status == "delivered"
    assert fast.delivered == coll.size


# Bandwidth 3 on the most congested collections (C well above 3), all protocols.
B3_CASES = [
    pytest.param(sid, proto, id=f"{sid}-{proto}-B3")
    for sid in ("bf4-hrel3-dor", "hcube3-gossip-dor", "petersen-gossip-rshortest", "torus5-broadcast-dor")
    for proto in BUFFERED_PROTOCOLS + DELAYED_PROTOCOLS
]


@pytest.mark.parametrize("scenario_id, protocol", B3_CASES)
def test_fast_matches_reference_bandwidth_3(scenario_id, protocol, tmp_path):
    """B = 3: up to three packets cross a link per step, still identical."""
    coll = build_case(scenario_id, tmp_path, 77)
    assert coll.congestion > 3  # otherwise B = 3 would not be exercised
    fast, ref = _run_both(coll, protocol, 78, bandwidth=3)
    assert_same(fast, ref)


LIMIT_CASES = [
    pytest.param(sid, proto, bw, id=f"{sid}-{proto}-B{bw}")
    for sid, proto, bw in [
        ("bf4-hrel3-dor", "random-rank", 1),
        ("bf4-hrel3-dor", "growing-rank", 2),
        ("hcube3-gossip-dor", "fifo", 1),
        ("hcube3-gossip-dor", "random", 2),
        ("petersen-gossip-rshortest", "farthest-to-go", 1),
        ("torus5-broadcast-dor", "nearest-to-go", 1),
        ("mesh4-hrel2-valiant-shortest", "longest-in-system", 1),
        ("mesh4-hrel2-valiant-shortest", "random", 1),
    ]
]


@pytest.mark.parametrize("scenario_id, protocol, bandwidth", LIMIT_CASES)
def test_step_limit_stops_both_engines_alike(scenario_id, protocol, bandwidth, tmp_path):
    """A step limit below T stops both engines at the same state with status "step-limit"."""
    coll = build_case(scenario_id, tmp_path, 31)
    full = simulate(coll, protocol, np.random.default_rng(32), bandwidth=bandwidth)
    assert full.T >= 3
    for limit in (0, 1, full.T // 2, full.T - 1):
        fast, ref = _run_both(coll, protocol, 32, bandwidth=bandwidth, step_limit=limit)
        assert_same(fast, ref)
        assert fast.status == "step-limit"
        assert fast.steps == limit
        assert fast.T == limit
        # Some packets are still on their way, and none was delivered after the limit.
        assert np.any(fast.delivery == -1)
        assert fast.delivery.max() <= limit
        # The run up to the limit is a prefix of the full run.
        np.testing.assert_array_equal(fast.delivery[fast.delivery >= 0], full.delivery[fast.delivery >= 0])


@pytest.mark.parametrize("protocol", BUFFERED_PROTOCOLS)
def test_step_limit_equal_to_T_delivers(protocol, tmp_path):
    """A limit of exactly T is enough: status "delivered" in both engines."""
    coll = build_case("bf4-hrel3-dor", tmp_path, 41)
    full = simulate(coll, protocol, np.random.default_rng(42))
    fast, ref = _run_both(coll, protocol, 42, step_limit=full.T)
    assert_same(fast, ref)
    assert fast.status == "delivered"
    assert fast.T == full.T


@pytest.mark.parametrize("protocol", ["random-rank", "growing-rank"])
@pytest.mark.parametrize("K", [1, 3, 1000])
def test_explicit_rank_range_matches(protocol, K, tmp_path):
    """An explicit K (K=1: all ranks tie, so ties to the lowest id decide) still agrees."""
    coll = build_case("hcube4-hfun3-valiant", tmp_path, 51)
    fast, ref = _run_both(coll, f"{protocol}:K={K}", 52 + K)
    assert_same(fast, ref)


@pytest.mark.parametrize("protocol", ["random-rank", "growing-rank"])
def test_huge_rank_range_agrees_or_is_rejected(protocol):
    """K = 2**62 would overflow the fast engine's int64 sort keys: it must be refused, or both engines agree."""
    # Four packets on one link: ranks near 2**62, times n = 4, no longer fit in int64.
    coll = PathCollection.from_node_paths(build_network("mesh:k=2,n=1"), [[0, 1]] * 4)
    for seed in range(5):
        try:
            fast, ref = _run_both(coll, f"{protocol}:K={2**62}", seed)
        except UserError:
            continue
        assert_same(fast, ref)


@pytest.mark.parametrize("protocol", ["random-rank", "fifo"])
def test_many_packets_with_small_buffers_agree(protocol):
    """Hundreds of packets leave their injection buffers while link buffers stay small.

    Buffer counts are then kept in int8 and the engine reads the largest over all link buffers
    at once; this pins that the injection buffers, whose shared count falls by one per packet
    that leaves (512 here, far outside int8), never pass for a link buffer.
    """
    net = build_network("hypercube:d=8")
    problem = build_problem("h-relation:h=2", net, np.random.default_rng(3))
    coll = route_paths("dimension-order", problem, net, np.random.default_rng(4))
    assert coll.size == 512 and coll.congestion < 127
    fast, ref = _run_both(coll, protocol, 5)
    assert_same(fast, ref)
    assert fast.max_buffer == ref.max_buffer < 127
