"""Routing problems (SPEC §4): permutations, h-functions, h-relations, broadcast, gossip, files.

Named permutations are checked against their definitions written out on coordinates or bit
strings; on butterflies problems go from the inputs (level 0) to the outputs (level d) and the
named permutations act on rows.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from universal.errors import UserError
from universal.networks import build_network
from universal.workloads import build_problem, endpoints


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def problem(network: str, name: str, seed: int = 0, **kw):
    net = build_network(network)
    return net, build_problem(name, net, rng(seed), **kw)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def coords(net, v: int) -> tuple[int, ...]:
    return tuple(int(c) for c in net.label_of(int(v)).split(","))


def as_map(net, prob) -> dict[tuple, tuple]:
    """source coordinates -> destination coordinates."""
    return {coords(net, s): coords(net, t) for s, t in zip(prob.sources, prob.dests)}


# --- every permutation is a permutation ---------------------------------------------------------


@pytest.mark.parametrize(
    "network, name",
    [
        ("hypercube:d=4", "random"), ("hypercube:d=4", "bit-reversal"), ("hypercube:d=4", "transpose"),
        ("hypercube:d=5", "bit-complement"), ("hypercube:d=5", "shuffle"), ("hypercube:d=3", "neighbor"),
        ("butterfly:d=4", "random"), ("butterfly:d=4", "bit-reversal"), ("butterfly:d=4", "transpose"),
        ("butterfly:d=3", "bit-complement"), ("butterfly:d=3", "shuffle"),
        ("wrapped-butterfly:d=4", "bit-reversal"),
        ("torus:k=8,n=2", "tornado"), ("torus:k=5,n=2", "neighbor"), ("torus:k=5,n=2", "transpose"),
        ("torus:k=4,n=3", "bit-complement"), ("torus:k=4,n=2", "bit-reversal"), ("mesh:k=4,n=2", "shuffle"),
        ("torus:k=6,n=2", "random"),
    ],
)
def test_named_permutations_are_permutations(network, name):
    net, prob = problem(network, f"permutation:{name}")
    srcs, dsts = endpoints(net)
    assert sorted(prob.sources.tolist()) == sorted(srcs.tolist())
    assert sorted(prob.dests.tolist()) == sorted(dsts.tolist())
    assert prob.size == len(srcs)


def test_random_permutation_depends_on_the_seed_only():
    _, a = problem("torus:k=6,n=2", "permutation:random", seed=1)
    _, b = problem("torus:k=6,n=2", "permutation:random", seed=1)
    _, c = problem("torus:k=6,n=2", "permutation:random", seed=2)
    np.testing.assert_array_equal(a.dests, b.dests)
    assert not np.array_equal(a.dests, c.dests)


def test_permutation_without_argument_is_random():
    _, a = problem("hypercube:d=4", "permutation", seed=3)
    _, b = problem("hypercube:d=4", "permutation:random", seed=3)
    np.testing.assert_array_equal(a.dests, b.dests)


# --- named permutations match their definitions --------------------------------------------------


def rev(a: int, d: int) -> int:
    return int(format(a, f"0{d}b")[::-1], 2)


def test_bit_reversal_on_the_hypercube():
    net, prob = problem("hypercube:d=4", "permutation:bit-reversal")
    assert prob.sources.tolist() == list(range(16))
    assert prob.dests.tolist() == [rev(a, 4) for a in range(16)]
    assert prob.dests.tolist()[:4] == [0b0000, 0b1000, 0b0100, 0b1100]


def test_bit_reversal_on_the_butterfly_acts_on_rows_from_inputs_to_outputs():
    d = 3
    net, prob = problem(f"butterfly:d={d}", "permutation:bit-reversal")
    assert np.all(net.levels[prob.sources] == 0)
    assert np.all(net.levels[prob.dests] == d)
    rows = [coords(net, v)[1] for v in prob.dests]
    assert rows == [rev(a, d) for a in range(2**d)]


def test_bit_reversal_on_a_torus_with_power_of_two_nodes_acts_on_ids():
    net, prob = problem("torus:k=4,n=2", "permutation:bit-reversal")
    assert prob.dests.tolist() == [rev(a, 4) for a in range(16)]


def test_transpose_on_a_torus_swaps_coordinates():
    net, prob = problem("torus:k=5,n=2", "permutation:transpose")
    assert as_map(net, prob) == {(x, y): (y, x) for x in range(5) for y in range(5)}


def test_transpose_on_bit_strings_swaps_halves():
    """Q_4: address b3 b2 b1 b0 -> b1 b0 b3 b2."""
    net, prob = problem("hypercube:d=4", "permutation:transpose")
    want = [int(format(a, "04b")[2:] + format(a, "04b")[:2], 2) for a in range(16)]
    assert prob.dests.tolist() == want
    assert prob.dests[0b0001] == 0b0100


def test_bit_complement_on_a_torus_and_a_hypercube():
    net, prob = problem("torus:k=5,n=2", "permutation:bit-complement")
    assert as_map(net, prob) == {(x, y): (4 - x, 4 - y) for x in range(5) for y in range(5)}
    net, prob = problem("hypercube:d=3", "permutation:bit-complement")
    assert prob.dests.tolist() == [7 - a for a in range(8)]


def test_shuffle_rotates_the_bits_left():
    net, prob = problem("hypercube:d=4", "permutation:shuffle")
    want = [int(format(a, "04b")[1:] + format(a, "04b")[0], 2) for a in range(16)]
    assert prob.dests.tolist() == want


@pytest.mark.parametrize("k", [4, 5, 8])
def test_tornado_goes_ceil_k_half_minus_one_hops_in_plus_x(k):
    hops = -(-k // 2) - 1
    net, prob = problem(f"torus:k={k},n=2", "permutation:tornado")
    assert as_map(net, prob) == {(x, y): ((x + hops) % k, y) for x in range(k) for y in range(k)}


def test_neighbor_on_a_torus_is_one_hop_in_plus_x():
    net, prob = problem("torus:k=4,n=3", "permutation:neighbor")
    assert as_map(net, prob) == {(x, y, z): ((x + 1) % 4, y, z)
                                 for x in range(4) for y in range(4) for z in range(4)}


def test_neighbor_on_a_hypercube_flips_bit_zero():
    net, prob = problem("hypercube:d=3", "permutation:neighbor")
    assert prob.dests.tolist() == [a ^ 1 for a in range(8)]


@pytest.mark.parametrize(
    "network, name, message",
    [
        ("torus:k=3,n=2", "bit-reversal", "power-of-two"),
        ("torus:k=6,n=2", "shuffle", "power-of-two"),
        ("torus:k=4,n=3", "transpose", "2-dimensional"),
        ("hypercube:d=3", "transpose", "even"),
        ("butterfly:d=3", "tornado", "meshes, tori and hypercubes"),
        ("butterfly:d=3", "neighbor", "meshes, tori and hypercubes"),
        ("torus:k=4,n=2", "no-such-pattern", "unknown permutation"),
    ],
)
def test_named_pattern_that_does_not_exist_is_a_user_error(network, name, message):
    with pytest.raises(UserError, match=message):
        problem(network, f"permutation:{name}")


@pytest.mark.parametrize("name, message", [
    ("no-such-problem", "unknown problem"),
    ("h-relation", "needs parameter h"),
    ("h-relation:h=0", "out of range"),
    ("h-function:h=x", "not an integer"),
    ("gossip:h=2", "unknown parameter"),
    ("permutation:random,x=1", "malformed|unknown parameter"),
    ("broadcast", "source"),
])
def test_bad_problem_names(name, message):
    with pytest.raises(UserError, match=message):
        problem("torus:k=4,n=2", name)


# --- h-functions, h-relations, broadcast, gossip -------------------------------------------------


@pytest.mark.parametrize("network", ["torus:k=5,n=2", "butterfly:d=4", "hypercube:d=5"])
def test_random_h_relation_is_exact(network):
    net, prob = problem(network, "h-relation:h=3", seed=7)
    srcs, dsts = endpoints(net)
    assert prob.size == 3 * len(srcs)
    assert Counter(prob.sources.tolist()) == {int(v): 3 for v in srcs}
    assert Counter(prob.dests.tolist()) == {int(v): 3 for v in dsts}


@pytest.mark.parametrize("network", ["torus:k=5,n=2", "butterfly:d=4", "fattree:k=4,n=2", "dragonfly:p=2"])
@pytest.mark.parametrize("seed", [0, 7])
def test_random_h_relation_is_h_permutations_drawn_in_turn(network, seed):
    """The obvious construction, same seed: h calls of ``permutation`` concatenated, the
    destinations read through them (consecutive ids or not: a fat tree's and a dragonfly's
    terminals)."""
    net, prob = problem(network, "h-relation:h=3", seed=seed)
    srcs, dsts = endpoints(net)
    g = np.random.default_rng(seed)
    perms = np.concatenate([g.permutation(len(dsts)) for _ in range(3)])
    np.testing.assert_array_equal(prob.sources, np.tile(srcs, 3))
    np.testing.assert_array_equal(prob.dests, dsts[perms])
    assert prob.dests.dtype == dsts.dtype


@pytest.mark.parametrize("dsts", [np.array([3, 9, 10, 40, 41]), np.arange(4, 9, dtype=np.int32), np.arange(1),
                                  np.array([5, 6, 8, 7, 9])])
def test_permuted_copies_of_any_endpoints_are_read_through_the_permutations(dsts):
    """Endpoints that are not consecutive ids in order (or not int64) are read through the
    permutations; consecutive ones are the permutations plus the first id."""
    from universal.workloads.problems import _permuted_copies
    g = np.random.default_rng(4)
    want = dsts[np.concatenate([g.permutation(len(dsts)) for _ in range(4)])]
    got = _permuted_copies(dsts, 4, np.random.default_rng(4))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("network", ["torus:k=5,n=2", "butterfly:d=4"])
def test_h_function_sends_h_from_every_source(network):
    net, prob = problem(network, "h-function:h=4", seed=1)
    srcs, dsts = endpoints(net)
    assert Counter(prob.sources.tolist()) == {int(v): 4 for v in srcs}
    assert set(prob.dests.tolist()) <= set(dsts.tolist())
    # A random function is not a relation: with 100 packets some destination gets more than 4.
    assert max(Counter(prob.dests.tolist()).values()) > 4


def test_broadcast_on_a_torus_reaches_every_other_node():
    net, prob = problem("torus:k=4,n=2", "broadcast:source=5")
    assert prob.size == net.num_nodes - 1
    assert set(prob.sources.tolist()) == {5}
    assert sorted(prob.dests.tolist()) == [v for v in range(16) if v != 5]
    assert "unicast" in prob.note


def test_broadcast_on_a_butterfly_goes_from_one_input_to_every_output():
    net, prob = problem("butterfly:d=3", "broadcast:source=2")
    assert prob.size == 8
    assert set(prob.sources.tolist()) == {2}
    assert sorted(prob.dests.tolist()) == net.outputs.tolist()


def test_broadcast_source_must_be_an_endpoint():
    with pytest.raises(UserError, match="not an endpoint"):
        problem("butterfly:d=3", "broadcast:source=9")  # node 9 is (1,1), not an input
    with pytest.raises(UserError, match="not in"):
        problem("torus:k=4,n=2", "broadcast:source=16")


def test_gossip_sends_one_packet_per_ordered_pair():
    net, prob = problem("torus:k=3,n=2", "gossip")
    n = net.num_nodes
    assert prob.size == n * (n - 1)
    pairs = set(zip(prob.sources.tolist(), prob.dests.tolist()))
    assert pairs == {(s, t) for s in range(n) for t in range(n) if s != t}
    assert "unicast" in prob.note

    net, prob = problem("butterfly:d=2", "gossip")
    assert prob.size == 4 * 4  # inputs and outputs are different nodes


# --- files: permutations, pairs, h-relations ------------------------------------------------------


def test_permutation_file_round_trip_with_ids_and_labels(tmp_path):
    net = build_network("torus:k=3,n=2")
    perm = rng(5).permutation(9)
    by_id = write(tmp_path / "ids.txt", ["# destination of each source, in order", *map(str, perm)])
    by_label = write(tmp_path / "labels.txt", [f"{net.label_of(int(v))}  # of {i}" for i, v in enumerate(perm)])
    for f in (by_id, by_label):
        prob = build_problem(f"permutation:file={f}", net, rng(0))
        assert prob.sources.tolist() == list(range(9))
        assert prob.dests.tolist() == perm.tolist()


def test_permutation_file_on_a_butterfly_names_outputs(tmp_path):
    net = build_network("butterfly:d=2")
    f = write(tmp_path / "p.txt", ["2,3", "2,0", "2,1", "2,2"])
    prob = build_problem(f"permutation:file={f}", net, rng(0))
    assert prob.sources.tolist() == net.inputs.tolist()
    assert [coords(net, v)[1] for v in prob.dests] == [3, 0, 1, 2]


def test_permutation_file_relative_to_base_dir(tmp_path):
    write(tmp_path / "p.txt", ["1", "0"])
    prob = build_problem("permutation:file=p.txt", build_network("hypercube:d=1"), rng(0), tmp_path)
    assert prob.dests.tolist() == [1, 0]


@pytest.mark.parametrize(
    "lines, message",
    [
        (["0", "1", "1", "3"], "not a permutation"),
        (["0", "1", "2"], "has 3"),
        (["0", "1", "2", "3", "0"], "has 5"),
        (["0", "1", "2", "x"], "not in"),
        (["0", "1", "2", "4"], "not in"),
        (["0", "1", "2 3", "3"], "one destination per line"),
    ],
)
def test_bad_permutation_files(tmp_path, lines, message):
    f = write(tmp_path / "p.txt", lines)
    with pytest.raises(UserError, match=message):
        build_problem(f"permutation:file={f}", build_network("hypercube:d=2"), rng(0))


def test_permutation_file_destination_must_be_an_output(tmp_path):
    f = write(tmp_path / "p.txt", ["0", "1", "2", "3"])  # butterfly inputs, not outputs
    with pytest.raises(UserError, match="not an endpoint"):
        build_problem(f"permutation:file={f}", build_network("butterfly:d=2"), rng(0))


def test_missing_permutation_file(tmp_path):
    with pytest.raises(UserError, match="cannot read"):
        build_problem(f"permutation:file={tmp_path / 'absent'}", build_network("hypercube:d=2"), rng(0))


def test_pairs_file_with_labels(tmp_path):
    net = build_network("torus:k=4,n=2")
    f = write(tmp_path / "pairs.txt", ["0,0 3,3", "1,2 1,2", "5 6"])
    prob = build_problem(f"pairs:file={f}", net, rng(0))
    assert prob.sources.tolist() == [0, 9, 5]
    assert prob.dests.tolist() == [15, 9, 6]


@pytest.mark.parametrize("lines, message", [
    (["0 1", "2 99"], "not in"),
    (["0 1 2"], "expected 'source destination'"),
    (["# empty"], "no pairs"),
])
def test_bad_pairs_files(tmp_path, lines, message):
    f = write(tmp_path / "pairs.txt", lines)
    with pytest.raises(UserError, match=message):
        build_problem(f"pairs:file={f}", build_network("torus:k=4,n=2"), rng(0))


def test_h_relation_file_is_checked(tmp_path):
    net = build_network("hypercube:d=2")
    good = write(tmp_path / "two.txt", ["0 1", "0 2", "1 2", "1 3", "2 3", "2 0", "3 0", "3 1"])
    prob = build_problem(f"h-relation:file={good}", net, rng(0))
    assert prob.size == 8
    assert build_problem(f"h-relation:file={good},h=2", net, rng(0)).size == 8
    with pytest.raises(UserError, match="2-relation"):
        build_problem(f"h-relation:file={good},h=3", net, rng(0))

    bad = write(tmp_path / "bad.txt", ["0 1", "1 1", "2 3", "3 0"])  # node 1 receives 2, node 2 none
    with pytest.raises(UserError, match="not an h-relation"):
        build_problem(f"h-relation:file={bad}", net, rng(0))
    uneven = write(tmp_path / "uneven.txt", ["0 1", "0 2", "1 0", "2 3", "3 0"])
    with pytest.raises(UserError, match="not an h-relation"):
        build_problem(f"h-relation:file={uneven}", net, rng(0))


@pytest.mark.parametrize("short, long", [("bitcomp", "bit-complement"), ("bitrev", "bit-reversal")])
def test_permutations_take_the_short_traffic_names_too(short, long):
    net = build_network("hypercube:d=4")
    a = build_problem(f"permutation:{short}", net, np.random.default_rng(0))
    b = build_problem(f"permutation:{long}", net, np.random.default_rng(0))
    assert a.dests.tolist() == b.dests.tolist() and a.name == f"permutation:{short}"


def test_booksim_permutations_move_every_dimension():
    from universal.networks import build_network
    from universal.workloads import build_problem

    net = build_network("torus:k=5,n=2")
    rng = np.random.default_rng(0)
    tornado = build_problem("permutation:booksim-tornado", net, rng)
    neighbor = build_problem("permutation:booksim-neighbor", net, rng)
    for src, dst in zip(tornado.sources, tornado.dests):
        x, y = net.label_of(int(src)).split(",")
        assert net.label_of(int(dst)) == f"{(int(x) + 2) % 5},{(int(y) + 2) % 5}"      # ceil(5/2) - 1 = 2
    for src, dst in zip(neighbor.sources, neighbor.dests):
        x, y = net.label_of(int(src)).split(",")
        assert net.label_of(int(dst)) == f"{(int(x) + 1) % 5},{(int(y) + 1) % 5}"
