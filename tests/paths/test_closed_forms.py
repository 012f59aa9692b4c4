"""Congestion C and dilation D of oblivious path systems on named permutations, in closed form.

Every closed form is derived in the docstring of the test that checks it, then checked twice:
against an independent brute force (plain Python that walks every packet hop by hop and counts
links) and against :func:`universal.paths.route_paths`.

Notation: a source row/address ``a`` has bits ``a_0 .. a_{d-1}`` (``a_0`` least significant),
its destination ``b = pi(a)`` has bits ``b_j``. Bit-fixing corrects bit 0 first, then bit 1,
and so on (Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", §2-3).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from universal.networks import build_network
from universal.paths import route_paths
from universal.workloads import build_problem


def bit(x: int, j: int) -> int:
    return (x >> j) & 1


def bit_reverse(a: int, d: int) -> int:
    return int(format(a, f"0{d}b")[::-1], 2)


def transpose(a: int, d: int) -> int:
    """Swap the low and the high half of a d-bit string (d even)."""
    h = d // 2
    return ((a & ((1 << h) - 1)) << h) | (a >> h)


PERMUTATIONS = {"bit-reversal": bit_reverse, "transpose": transpose}


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def routed(network: str, problem: str, paths: str, seed: int = 0):
    net = build_network(network)
    prob = build_problem(problem, net, rng(0))
    return net, prob, route_paths(paths, prob, net, rng(seed))


# --- brute force references (plain Python, no numpy, no universal) ----------------------------


def butterfly_bitfixing_hops(d: int, perm) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """All hops ((level, row) -> (level + 1, row')) of the level paths from input a to output perm(a)."""
    hops = []
    for a in range(2**d):
        b = perm(a, d)
        row = a
        for i in range(d):
            nxt = (row & ~(1 << i)) | (b & (1 << i))
            hops.append(((i, row), (i + 1, nxt)))
            row = nxt
        assert row == b
    return hops


def hypercube_bitfixing_hops(d: int, perm) -> list[tuple[int, int, int]]:
    """All hops (dimension, tail, head) of bit-fixing paths from a to perm(a) on Q_d."""
    hops = []
    for a in range(2**d):
        b = perm(a, d)
        x = a
        for i in range(d):
            if bit(x, i) != bit(b, i):
                hops.append((i, x, x ^ (1 << i)))
                x ^= 1 << i
        assert x == b
    return hops


def butterfly_node(d: int, level: int, row: int) -> int:
    return level * 2**d + row


# --- bit-fixing on the butterfly -----------------------------------------------------------------


@pytest.mark.parametrize("d", range(2, 11))
def test_butterfly_bitfixing_has_dilation_d_for_every_permutation(d):
    """Every level path of BF(d) runs from level 0 to level d, one level per hop: D = d.

    Checked on a random permutation and on the named ones (transpose only for even d).
    """
    names = ["random", "bit-reversal", "bit-complement", "shuffle"] + (["transpose"] if d % 2 == 0 else [])
    for name in names:
        _, _, coll = routed(f"butterfly:d={d}", f"permutation:{name}", "dimension-order")
        assert coll.dilation == d, name
        assert np.all(coll.lengths == d), name
        assert coll.is_leveled and coll.is_shortest and coll.is_simple


def butterfly_bitreversal_level_load(d: int, i: int) -> int:
    """Load of every used link from level i to level i + 1 under bit-fixing on bit-reversal.

    Before hop i the packet from a sits in row (b_0 .. b_{i-1}, a_i .. a_{d-1}); hop i sets bit i
    to b_i. So the link it takes is determined by b_0..b_i and a_i..a_{d-1}. With
    b_j = a_{d-1-j}, fixing b_0..b_i pins a_{d-1}, ..., a_{d-1-i}. The pinned source bits are
    {i, ..., d-1} together with {d-1-i, ..., d-1}; the free ones are the j with j < i and
    j < d-1-i, that is min(i, d-1-i) of them. Every used link therefore carries exactly
    2^min(i, d-1-i) packets, and C = max_i 2^min(i, d-1-i) = 2^floor((d-1)/2).
    """
    return 2 ** min(i, d - 1 - i)


def butterfly_transpose_level_load(d: int, i: int) -> int:
    """Load of every used link from level i to i + 1 under bit-fixing on transpose (d = 2h).

    Transpose has b_j = a_{j+h} for j < h and b_j = a_{j-h} for j >= h. The link of hop i is
    again determined by b_0..b_i and a_i..a_{d-1}.
    * i < h: b_0..b_i pins a_h..a_{h+i}, already among a_i..a_{d-1}; the free bits are
      a_0..a_{i-1}: load 2^i.
    * i >= h: b_0..b_{h-1} pins a_h..a_{d-1} and b_h..b_i pins a_0..a_{i-h}; the free bits are
      a_{i-h+1}..a_{h-1}: load 2^(2h-1-i).
    The maximum is 2^(h-1), reached at i = h-1 and i = h: C = 2^(d/2 - 1).
    """
    h = d // 2
    return 2**i if i < h else 2 ** (2 * h - 1 - i)


@pytest.mark.parametrize("d", range(2, 11))
def test_butterfly_bitfixing_bitreversal_congestion(d):
    """C of bit-fixing on bit-reversal on BF(d) is 2^floor((d-1)/2) (derivation above)."""
    closed_form = 2 ** ((d - 1) // 2)
    assert closed_form == max(butterfly_bitreversal_level_load(d, i) for i in range(d))

    hops = butterfly_bitfixing_hops(d, bit_reverse)
    loads = Counter(hops)
    assert max(loads.values()) == closed_form
    for ((level, _), _), load in loads.items():
        assert load == butterfly_bitreversal_level_load(d, level)

    net, prob, coll = routed(f"butterfly:d={d}", "permutation:bit-reversal", "dimension-order")
    assert coll.congestion == closed_form
    assert coll.dilation == d
    # The same loads link by link: map every brute-force hop to its link id.
    tails = [butterfly_node(d, *t) for t, _ in hops]
    heads = [butterfly_node(d, *h) for _, h in hops]
    expected = np.bincount(net.links_between(tails, heads), minlength=net.num_links)
    np.testing.assert_array_equal(coll.link_loads, expected)


@pytest.mark.parametrize("d", [2, 4, 6, 8, 10])
def test_butterfly_bitfixing_transpose_congestion(d):
    """C of bit-fixing on transpose on BF(d), d even, is 2^(d/2 - 1) (derivation above)."""
    closed_form = 2 ** (d // 2 - 1)
    assert closed_form == max(butterfly_transpose_level_load(d, i) for i in range(d))

    hops = butterfly_bitfixing_hops(d, transpose)
    loads = Counter(hops)
    assert max(loads.values()) == closed_form
    for ((level, _), _), load in loads.items():
        assert load == butterfly_transpose_level_load(d, level)

    net, prob, coll = routed(f"butterfly:d={d}", "permutation:transpose", "dimension-order")
    assert (coll.congestion, coll.dilation) == (closed_form, d)
    tails = [butterfly_node(d, *t) for t, _ in hops]
    heads = [butterfly_node(d, *h) for _, h in hops]
    expected = np.bincount(net.links_between(tails, heads), minlength=net.num_links)
    np.testing.assert_array_equal(coll.link_loads, expected)


# --- bit-fixing on the hypercube -----------------------------------------------------------------


def hypercube_bitreversal_dimension_load(d: int, i: int) -> int:
    """Load of every used link of dimension i under bit-fixing on bit-reversal on Q_d.

    Before correcting dimension i the packet from a sits at x = (b_0..b_{i-1}, a_i..a_{d-1}),
    and it crosses dimension i only if a_i != b_i = a_{d-1-i}. A directed link x -> x ^ 2^i thus
    pins a_i..a_{d-1} (from x) and b_0..b_{i-1}, that is a_{d-i}..a_{d-1}; the free source bits
    are the j < min(i, d-i). Then:
    * d-1-i > i: the condition a_i != a_{d-1-i} involves two pinned bits; load 2^i.
    * d-1-i = i (d odd, middle bit): a_i != a_i never holds; no packet crosses, load 0.
    * d-1-i < i: a_{d-1-i} is free but must differ from a_i; load 2^(min(i, d-i) - 1) = 2^(d-1-i).
    The maximum is 2^(floor(d/2) - 1): C = 2^(floor(d/2) - 1).
    """
    if d - 1 - i > i:
        return 2**i
    if d - 1 - i == i:
        return 0
    return 2 ** (d - 1 - i)


def hypercube_transpose_dimension_load(d: int, i: int) -> int:
    """Load of every used link of dimension i under bit-fixing on transpose on Q_d (d = 2h).

    As above the link x -> x ^ 2^i pins a_i..a_{d-1} and b_0..b_{i-1}, and needs a_i != b_i.
    * i < h: b_0..b_{i-1} = a_h..a_{h+i-1} are already pinned, a_0..a_{i-1} are free, and
      b_i = a_{i+h} is pinned: load 2^i.
    * i >= h: b_0..b_{i-1} pins a_h..a_{d-1} and a_0..a_{i-h-1}; free are a_{i-h}..a_{h-1}, 2h-i
      bits, of which a_{i-h} = b_i must differ from a_i: load 2^(2h-i-1).
    The maximum is 2^(h-1): C = 2^(d/2 - 1).
    """
    h = d // 2
    return 2**i if i < h else 2 ** (2 * h - i - 1)


def hamming_diameter(d: int, perm) -> int:
    """max over a of the number of bit positions where a and perm(a) differ."""
    return max(bin(a ^ perm(a, d)).count("1") for a in range(2**d))


@pytest.mark.parametrize("d", range(2, 11))
def test_hypercube_bitfixing_bitreversal(d):
    """Bit-fixing on bit-reversal on Q_d: C = 2^(floor(d/2)-1) and D = 2*floor(d/2).

    D: a packet crosses dimension j iff a_j != a_{d-1-j}. The positions pair up as
    (j, d-1-j) for j < d-1-j (floor(d/2) pairs; the middle bit of odd d never differs), and each
    pair contributes 0 or 2 hops; a source with a_j != a_{d-1-j} for every pair has 2*floor(d/2).
    """
    closed_c = 2 ** (d // 2 - 1)
    closed_d = 2 * (d // 2)
    assert closed_c == max(hypercube_bitreversal_dimension_load(d, i) for i in range(d))
    assert closed_d == hamming_diameter(d, bit_reverse)

    hops = hypercube_bitfixing_hops(d, bit_reverse)
    loads = Counter(hops)
    assert max(loads.values()) == closed_c
    for (i, _, _), load in loads.items():
        assert load == hypercube_bitreversal_dimension_load(d, i)
    if d % 2:
        assert not any(i == (d - 1) // 2 for i, _, _ in hops)  # the middle dimension is never crossed

    net, prob, coll = routed(f"hypercube:d={d}", "permutation:bit-reversal", "dimension-order")
    assert (coll.congestion, coll.dilation) == (closed_c, closed_d)
    assert coll.is_shortest and coll.is_simple
    expected = np.bincount(net.links_between([t for _, t, _ in hops], [h for _, _, h in hops]),
                           minlength=net.num_links)
    np.testing.assert_array_equal(coll.link_loads, expected)


@pytest.mark.parametrize("d", [2, 4, 6, 8, 10])
def test_hypercube_bitfixing_transpose(d):
    """Bit-fixing on transpose on Q_d, d = 2h: C = 2^(h-1) and D = d.

    D: a packet crosses dimensions j and j+h iff a_j != a_{j+h}; with all h pairs different
    it makes d hops.
    """
    closed_c = 2 ** (d // 2 - 1)
    closed_d = d
    assert closed_c == max(hypercube_transpose_dimension_load(d, i) for i in range(d))
    assert closed_d == hamming_diameter(d, transpose)

    hops = hypercube_bitfixing_hops(d, transpose)
    loads = Counter(hops)
    assert max(loads.values()) == closed_c
    for (i, _, _), load in loads.items():
        assert load == hypercube_transpose_dimension_load(d, i)

    net, prob, coll = routed(f"hypercube:d={d}", "permutation:transpose", "dimension-order")
    assert (coll.congestion, coll.dilation) == (closed_c, closed_d)
    expected = np.bincount(net.links_between([t for _, t, _ in hops], [h for _, _, h in hops]),
                           minlength=net.num_links)
    np.testing.assert_array_equal(coll.link_loads, expected)


# --- Valiant's trick -----------------------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 3, 5, 8])
def test_valiant_on_butterfly_runs_on_two_butterflies_back_to_back(d):
    """Valiant on BF(d): the first pass goes from input row a to a random row r at level d, the
    second from (d, r) to output row pi(a) at level 2d. Every path has exactly 2d hops, the host
    has depth 2d and (2d+1)*2^d nodes, the collection is leveled, and C is taken over the links of
    both butterflies."""
    net = build_network(f"butterfly:d={d}")
    prob = build_problem("permutation:bit-reversal", net, rng(0))
    coll = route_paths("valiant", prob, net, rng(1))
    host = coll.network
    width = 2**d

    assert host.depth == 2 * d
    assert host.num_nodes == (2 * d + 1) * width
    assert host.num_links == 2 * (4 * d * width)
    assert coll.dilation == 2 * d and np.all(coll.lengths == 2 * d)
    assert coll.is_leveled and coll.is_shortest
    assert coll.size == prob.size == width

    first_pass = host.levels[host.link_tail] < d
    loads = coll.link_loads
    assert coll.congestion == max(loads[first_pass].max(), loads[~first_pass].max())
    # Both passes carry every packet once: n*d hops in each butterfly.
    assert loads[first_pass].sum() == loads[~first_pass].sum() == width * d

    for i in range(coll.size):
        path = coll.node_path(i)
        assert [host.levels[v] for v in path] == list(range(2 * d + 1))
        assert path[0] == prob.sources[i]
        assert path[-1] % width == prob.dests[i] % width


def test_valiant_intermediate_rows_are_random():
    """The row at level d (the intermediate) depends on the seed; over many packets all rows occur."""
    d = 6
    net = build_network(f"butterfly:d={d}")
    prob = build_problem("h-relation:h=8", net, rng(0))
    middles = []
    for seed in (1, 2):
        coll = route_paths("valiant", prob, net, rng(seed))
        middles.append(np.array([coll.node_path(i)[d] % 2**d for i in range(coll.size)]))
    assert np.any(middles[0] != middles[1])
    assert len(set(middles[0].tolist())) == 2**d


@pytest.mark.parametrize("family", ["butterfly", "hypercube"])
@pytest.mark.parametrize("problem", ["bit-reversal", "transpose"])
@pytest.mark.parametrize("d", [8, 10, 12])
def test_valiant_lowers_congestion_of_bad_permutations(family, problem, d):
    """Bit-fixing has C = 2^(d/2-1) on transpose (both networks) and on bit-reversal on Q_d,
    2^floor((d-1)/2) on bit-reversal on BF(d) (closed forms above): at least 8 for d >= 8. Valiant's
    trick spreads the packets: the expected load of a link is at most 1 per pass, so C is of order
    log N / log log N. With seed 0 it is strictly lower, and over five seeds it averages well below."""
    if family == "butterfly" and problem == "bit-reversal":
        bitfix_c = 2 ** ((d - 1) // 2)
    else:
        bitfix_c = 2 ** (d // 2 - 1)
    net, prob, bitfix = routed(f"{family}:d={d}", f"permutation:{problem}", "dimension-order")
    assert bitfix.congestion == bitfix_c

    valiant = [route_paths("valiant", prob, net, rng(seed)) for seed in range(5)]
    assert valiant[0].congestion < bitfix_c
    assert np.mean([v.congestion for v in valiant]) <= 0.75 * bitfix_c
    for v in valiant:
        assert v.dilation <= 2 * d
        if family == "butterfly":
            assert v.dilation == 2 * d and v.is_leveled


@pytest.mark.parametrize("d", [3, 6, 9])
def test_valiant_on_hypercube_has_dilation_at_most_2d(d):
    """Two bit-fixing passes of at most d hops each: every path has at most 2d hops, and each
    path is the concatenation of the bit-fixing path to an intermediate and from it."""
    net, prob, coll = routed(f"hypercube:d={d}", "permutation:random", "valiant", seed=3)
    assert coll.dilation <= 2 * d
    assert coll.network is net
    for i in range(coll.size):
        path = coll.node_path(i)
        assert path[0] == prob.sources[i] and path[-1] == prob.dests[i]
        # Split where the dimensions stop increasing: the first pass corrects dimensions in
        # increasing order, and so does the second.
        dims = [int(np.log2(u ^ v)) for u, v in zip(path, path[1:])]
        breaks = sum(1 for x, y in zip(dims, dims[1:]) if y <= x)
        assert breaks <= 1


# --- dimension order on the torus ----------------------------------------------------------------


@pytest.mark.parametrize("k", [4, 5, 6, 7, 8, 9])
def test_torus_dimension_order_tornado(k):
    """Tornado on T(k,2) sends every node h = ceil(k/2)-1 hops in +x. h < k/2, so dimension order
    goes the + way round: D = h. The +x link from x to x+1 in a ring carries the packets that
    start at x-h+1, ..., x: exactly h of them, and no other link is used: C = h.
    For k = 8, C = D = 3."""
    h = -(-k // 2) - 1
    net, prob, coll = routed(f"torus:k={k},n=2", "permutation:tornado", "dimension-order")
    assert (coll.congestion, coll.dilation) == (h, h)
    plus_x = (net.link_head % k) == ((net.link_tail % k) + 1) % k
    same_row = (net.link_head // k) == (net.link_tail // k)
    used = plus_x & same_row
    assert np.all(coll.link_loads[used] == h)
    assert np.all(coll.link_loads[~used] == 0)
    assert coll.load_histogram() == {0: net.num_links - k * k, h: k * k}


def test_torus_k8_tornado_is_three_and_three():
    net, prob, coll = routed("torus:k=8,n=2", "permutation:tornado", "dimension-order")
    assert (coll.congestion, coll.dilation) == (3, 3)


@pytest.mark.parametrize("d", [3, 4, 5, 6])
def test_wrapped_butterfly_level_paths_and_valiant(d):
    """W-BF(d) has the links of BF(d) with level d renamed level 0, so the level paths of a
    permutation load them exactly as on BF(d): C = 2^floor((d-1)/2) on bit-reversal, D = d.
    Valiant's trick makes two passes of d hops over the same links: D = 2d, host unchanged."""
    net, prob, coll = routed(f"wrapped-butterfly:d={d}", "permutation:bit-reversal", "dimension-order")
    assert (coll.congestion, coll.dilation) == (2 ** ((d - 1) // 2), d)
    assert np.all(coll.lengths == d)
    valiant = route_paths("valiant", prob, net, rng(1))
    assert valiant.network is net
    assert valiant.dilation == 2 * d and np.all(valiant.lengths == 2 * d)
    for i in range(valiant.size):
        path = valiant.node_path(i)
        assert net.levels[path[d]] == 0  # the intermediate is a row of level 0
        assert [int(net.levels[v]) for v in path] == [j % d for j in range(2 * d + 1)]


@pytest.mark.parametrize("network", ["butterfly:d=3", "wrapped-butterfly:d=3", "hypercube:d=3", "torus:k=4,n=2"])
def test_valiant_via_given_intermediates(network):
    """``middle=`` routes through the intermediates given (rows on leveled networks, nodes
    elsewhere) instead of drawing them, and the rng is then not needed for them."""
    from universal.paths.systems import valiant_paths

    net = build_network(network)
    prob = build_problem("permutation:random", net, rng(3))
    count = len(net.inputs) if net.inputs is not None else net.num_nodes
    middle = (np.arange(prob.size) * 5 + 1) % count
    coll = valiant_paths(prob, net, rng(4), middle=middle)
    again = valiant_paths(prob, net, rng(99), middle=middle)
    np.testing.assert_array_equal(coll.links, again.links)
    for i in range(coll.size):
        path = coll.node_path(i)
        if net.kind == "butterfly":     # level d of the first butterfly, in row middle[i]
            d = net.params["d"]
            assert path[d] == d * 2**d + middle[i]
        elif net.inputs is not None:    # the wrapped butterfly: the row's input node
            assert net.inputs[middle[i]] in path
        else:
            assert middle[i] in path
        assert path[0] == prob.sources[i]
