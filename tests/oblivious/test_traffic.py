"""Traffic names, parameters and user errors."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from universal.errors import UserError
from universal.oblivious import Torus, load_table, make_traffic, worst_case

from .reference import pair_load_row


def test_named_permutations():
    t = Torus(4, 2)
    assert make_traffic(t, "bitcomp").perm[t.node((1, 2))] == t.node((2, 1))
    assert make_traffic(t, "transpose").perm[t.node((1, 3))] == t.node((3, 1))
    assert make_traffic(t, "tornado").perm[t.node((3, 1))] == t.node((0, 1))   # ceil(4/2)-1 = 1 hop
    assert make_traffic(Torus(9, 2), "tornado").perm[0] == 4
    assert make_traffic(t, "bitrev").perm[1] == 8                             # 0001 -> 1000
    assert make_traffic(t, "shuffle").perm[9] == 3                            # 1001 -> 0011
    for name in ["bitcomp", "transpose", "tornado", "bitrev", "shuffle"]:
        assert sorted(make_traffic(t, name).perm.tolist()) == list(range(t.N))


@pytest.mark.parametrize("name", ["uniform", "neighbor", "hotspot:count=1,factor=1"])
def test_doubly_stochastic_matrices(name):
    L = make_traffic(Torus(5, 2), name).matrix
    assert np.allclose(L.sum(axis=0), 1) and np.allclose(L.sum(axis=1), 1)


def test_hotspot_makes_hot_columns_heavier():
    t = Torus(5, 2)
    L = make_traffic(t, "hotspot:count=3,factor=4").matrix
    assert np.allclose(L.sum(axis=1), 1)
    hot = [t.node((i, 0)) for i in range(3)]
    assert L[7, hot[0]] == pytest.approx(4 * L[7, 20])
    bc = make_traffic(t, "hotspot:background=bitcomp").matrix
    assert np.allclose(bc.sum(axis=1), 1)


@pytest.mark.parametrize("text,fragment", [
    ("transpose", "2-D"),
    ("bitrev", "power of two"),
    ("nosuch", "unknown traffic"),
    ("hotspot:count=0", "out of range"),
    ("hotspot:color=red", "unknown parameter"),
    ("random-perms:abc", "count"),
    ("random-perms:0", "at least one"),
    ("matrix", "file=PATH"),
    ("matrix:file=/nonexistent/x.txt", "cannot read"),
])
def test_user_errors(text, fragment):
    with pytest.raises(UserError, match=fragment):
        make_traffic(Torus(3, 3), text)


def test_matrix_file(tmp_path):
    t = Torus(3, 1)
    good = tmp_path / "good.txt"
    good.write_text("# a 3x3 doubly stochastic matrix\n0.5 0.5 0\n0 0.5 0.5  # comment\n0.5 0 0.5\n")
    assert np.allclose(make_traffic(t, f"matrix:file={good}").matrix.sum(axis=0), 1)
    bad = tmp_path / "bad.txt"
    bad.write_text("1 0 0\n1 0 0\n0 0 1\n")
    with pytest.raises(UserError, match="doubly sub-stochastic"):
        make_traffic(t, f"matrix:file={bad}")
    sub = tmp_path / "sub.txt"                  # GOAL's admissible traffic: node 2 sends nothing
    sub.write_text("0 1 0\n0 0 0.5\n0 0 0\n")
    assert make_traffic(t, f"matrix:file={sub}").matrix.sum(axis=1).tolist() == [1, 0.5, 0]
    short = tmp_path / "short.txt"
    short.write_text("1 0\n0 1\n")
    with pytest.raises(UserError, match="3 x 3"):
        make_traffic(t, f"matrix:file={short}")


def test_bad_torus_and_routing_names():
    with pytest.raises(UserError, match="k >= 3"):
        Torus(2, 3)
    with pytest.raises(UserError, match="unknown oblivious routing"):
        worst_case(5, 2, "nosuch")
    with pytest.raises(UserError, match="unknown traffic"):
        load_table(5, 2, ["dor"], ["nosuch"], np.random.default_rng(0))
    with pytest.raises(UserError, match="not a node"):
        Torus(5, 2).parse_node("5,1")


# --- exact throughputs: every traffic with rational entries, checked against route-by-route walks ---

def _reference_max_load(name: str, torus: Torus, L) -> Fraction:
    """Largest channel load summed pair by pair from the reference walks, in Fractions."""
    loads: dict[int, Fraction] = {}
    for s in range(torus.N):
        for d in range(torus.N):
            if L[s][d]:
                for c, g in pair_load_row(name, s, d, torus.k, torus.n).items():
                    loads[c] = loads.get(c, Fraction(0)) + L[s][d] * g
    return max(loads.values())


def _exact_matrix(traffic) -> list[list[Fraction]]:
    if traffic.perm is not None:
        return [[Fraction(int(d == traffic.perm[s])) for d in range(len(traffic.perm))] for s in range(len(traffic.perm))]
    num, den = traffic.exact
    return [[Fraction(int(x), den) for x in row] for row in num]


@pytest.mark.parametrize("traffic", ["uniform", "neighbor", "hotspot:count=3,factor=4",
                                     "hotspot:count=2,factor=3,background=bitcomp", "tornado", "bitcomp"])
@pytest.mark.parametrize("name", ["dor", "ival", "romm"])
def test_exact_max_load_matches_reference_walks(name, traffic):
    torus = Torus(4, 2)
    [row] = load_table(4, 2, [name], [traffic], np.random.default_rng(0))
    pattern = make_traffic(torus, traffic)
    expected = _reference_max_load(name, torus, _exact_matrix(pattern))
    assert row.max_load_exact == expected
    assert row.throughput_exact == torus.capacity_load / expected
    assert row.throughput == float(row.throughput_exact) and row.max_load == float(expected)   # rounded once
    if pattern.matrix is not None:
        assert np.array_equal(pattern.matrix, pattern.exact[0] / pattern.exact[1])


def test_matrix_file_is_read_exactly(tmp_path):
    """Decimals and fractions in a matrix file are exact rationals; 1/3 stays 1/3."""
    torus = Torus(3, 1)
    path = tmp_path / "m.txt"
    path.write_text("1/3 1/3 1/3\n0.5 0.25 0.25\n1/6 5/12 5/12\n")
    traffic = make_traffic(torus, f"matrix:file={path}")
    num, den = traffic.exact
    assert den == 12 and num.tolist() == [[4, 4, 4], [6, 3, 3], [2, 5, 5]]
    [row] = load_table(3, 1, ["dor"], [f"matrix:file={path}"], np.random.default_rng(0))
    assert row.max_load_exact == _reference_max_load("dor", torus, _exact_matrix(traffic))


def test_random_permutations_claim_no_exact_value():
    [row] = load_table(4, 2, ["dor"], ["random-perms:5"], np.random.default_rng(0))
    assert row.max_load_exact is None and row.throughput_exact is None
    assert "throughput_exact" not in row.as_dict()


@pytest.mark.parametrize("short, long", [("bitcomp", "bit-complement"), ("bitrev", "bit-reversal")])
def test_traffics_take_the_long_permutation_names_too(short, long):
    torus = Torus(4, 2)
    assert make_traffic(torus, long).perm.tolist() == make_traffic(torus, short).perm.tolist()
    assert make_traffic(torus, long).name == long



def test_hotspot_background_takes_either_name_of_bit_complement():
    torus = Torus(4, 2)
    hot = make_traffic(torus, "hotspot:background=bit-complement").matrix
    assert np.array_equal(hot, make_traffic(torus, "hotspot:background=bitcomp").matrix)


def test_a_partial_permutation_file_is_a_sub_stochastic_matrix(tmp_path):
    t = Torus(8, 1)
    f = tmp_path / "flows.txt"
    f.write_text("0 3\n1 2\n5 6\n")        # GOAL's Figure 2 flows
    tr = make_traffic(t, f"permutation:file={f}")
    assert tr.perm is None and tr.matrix.sum() == 3 and tr.matrix[1, 2] == 1


def test_a_permutation_file_reads_one_destination_per_line_or_pairs(tmp_path):
    t = Torus(4, 2)
    tornado = make_traffic(t, "tornado").perm
    ids, labels = tmp_path / "ids.txt", tmp_path / "labels.txt"
    ids.write_text("# SPEC §8: the destination of source 0, 1, ...\n" + "".join(f"{d}\n" for d in tornado))
    labels.write_text("".join(f"{t.label(s)} {t.label(d)}\n" for s, d in enumerate(tornado)))
    for f in (ids, labels):
        assert make_traffic(t, f"permutation:file={f}").perm.tolist() == tornado.tolist()
    short = tmp_path / "short.txt"
    short.write_text("1\n2\n")
    with pytest.raises(UserError, match="a line for each of the 16 nodes of torus:k=4,n=2, the file has 2"):
        make_traffic(t, f"permutation:file={short}")
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("0 1\n2\n")
    with pytest.raises(UserError, match="mixed.txt:2: expected 'source destination'"):
        make_traffic(t, f"permutation:file={mixed}")


def test_the_diagonal_permutation_goes_half_way_in_every_dimension():
    t = Torus(8, 2)
    assert make_traffic(t, "diagonal").perm[t.node((1, 3))] == t.node((5, 7))


def _booksim_dest(source: int, k: int, n: int, hops: int) -> int:
    """BookSim2's digit permutations, digit by digit as its traffic.cpp describes them."""
    return sum(((source // k ** i) % k + hops) % k * k ** i for i in range(n))


@pytest.mark.parametrize("k, n", [(4, 2), (7, 2), (8, 2), (5, 3)])
def test_booksim_patterns_move_every_digit(k, n):
    t = Torus(k, n)
    tornado = make_traffic(t, "booksim-tornado").perm
    neighbor = make_traffic(t, "booksim-neighbor").perm
    for s in range(t.N):
        assert tornado[s] == _booksim_dest(s, k, n, (k + 1) // 2 - 1)
        assert neighbor[s] == _booksim_dest(s, k, n, 1)


def test_booksim_tornado_loads_both_dimensions_under_dor(tmp_path):
    """On the 8-ary 2-cube every packet of BookSim's tornado goes 3 hops in +x, then 3 in +y:
    each +x and each +y channel carries the 3 packets of the sources up to 3 behind it, the other
    channels none. GOAL's tornado (ours) leaves the y channels idle."""
    from universal.cli import main

    loads = {}
    for traffic in ("booksim-tornado", "tornado"):
        path = tmp_path / f"{traffic}.txt"
        assert main(["load", "--network", "torus:k=8,n=2", "--routing", "dor", "--traffic", traffic,
                     "--links", str(path), "--json"]) == 0
        rows = [line.split() for line in path.read_text().splitlines() if not line.startswith("#")]
        loads[traffic] = sorted(Fraction(load) for _, _, load in rows)
    assert loads["booksim-tornado"] == [0] * 128 + [3] * 128
    assert loads["tornado"] == [0] * 192 + [3] * 64


def test_booksim_neighbor_is_a_permutation_ours_is_spread():
    [bs, ours] = load_table(8, 2, ["dor"], ["booksim-neighbor", "neighbor"], np.random.default_rng(0))
    assert bs.max_load_exact == 1 and bs.throughput_exact == 1          # one packet on every + channel
    assert ours.max_load_exact == Fraction(1, 4) and ours.throughput_exact == 4
