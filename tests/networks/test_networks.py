"""Networks (SPEC §3): sizes, edge sets against the definitions, labels, links, edge-list files.

Definitions: Meyer auf der Heide & Scheideler, "Communication in Parallel Systems",
Definition 1 (butterfly, wrapped butterfly) and Definition 2 (mesh, torus, hypercube).
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from universal.errors import UserError
from universal.networks import build_network, butterfly, from_networkx, read_edgelist


def edge_set(net) -> set[frozenset[int]]:
    edges = {frozenset(map(int, e)) for e in net.edges}
    assert len(edges) == len(net.edges), "duplicate edges"
    assert all(len(e) == 2 for e in edges), "self-loop"
    return edges


# --- sizes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8])
def test_butterfly_size(d):
    """BF(d): (d+1) levels of 2^d rows; every node of levels 0..d-1 has a straight and a cross
    edge down, so 2 * d * 2^d edges and 2^(d+2) * d directed links."""
    net = build_network(f"butterfly:d={d}")
    assert net.num_nodes == (d + 1) * 2**d
    assert net.num_links == 2 ** (d + 2) * d
    assert net.depth == d and net.leveled
    assert net.inputs.tolist() == list(range(2**d))
    assert net.outputs.tolist() == [d * 2**d + r for r in range(2**d)]


@pytest.mark.parametrize("d", [3, 4, 6])
def test_wrapped_butterfly_size(d):
    """W-BF(d): level d is level 0, so d * 2^d nodes and still 2 * d * 2^d edges (d >= 3)."""
    net = build_network(f"wrapped-butterfly:d={d}")
    assert net.num_nodes == d * 2**d
    assert net.num_links == 2 ** (d + 2) * d
    assert np.array_equal(net.inputs, net.outputs)
    assert len(edge_set(net)) == 2 * d * 2**d


@pytest.mark.parametrize("k, n", [(2, 1), (2, 3), (3, 2), (4, 3), (7, 1), (5, 2)])
def test_mesh_size(k, n):
    """M(k,n): k^n nodes; in each of the n dimensions there are k^(n-1) lines of k-1 edges."""
    net = build_network(f"mesh:k={k},n={n}")
    assert net.num_nodes == k**n
    assert net.num_links == 2 * n * k ** (n - 1) * (k - 1)


@pytest.mark.parametrize("k, n", [(3, 1), (3, 2), (4, 3), (8, 2), (5, 3)])
def test_torus_size(k, n):
    """T(k,n), k >= 3: k^n nodes, each the tail of one +edge per dimension: n * k^n edges."""
    net = build_network(f"torus:k={k},n={n}")
    assert net.num_nodes == k**n
    assert net.num_links == 2 * n * k**n


@pytest.mark.parametrize("n", [1, 2, 4])
def test_torus_with_k2_has_no_duplicate_edges(n):
    """For k = 2 the wrap-around edge joins the same two nodes as the mesh edge; it is not doubled,
    so T(2,n) = M(2,n) = Q_n with n * 2^(n-1) edges."""
    net = build_network(f"torus:k=2,n={n}")
    assert len(edge_set(net)) == n * 2 ** (n - 1)
    assert edge_set(net) == edge_set(build_network(f"mesh:k=2,n={n}"))
    assert edge_set(net) == edge_set(build_network(f"hypercube:d={n}"))


@pytest.mark.parametrize("d", [1, 3, 6])
def test_hypercube_size(d):
    net = build_network(f"hypercube:d={d}")
    assert net.num_nodes == 2**d
    assert net.num_links == 2 * d * 2 ** (d - 1)


# --- edge sets against the definitions ----------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_butterfly_edges_match_definition_1(d):
    """{(i,a),(i+1,a)} and {(i,a),(i+1,b)} with a, b differing only in bit i; node = level*2^d + row."""
    want = set()
    for i, a in itertools.product(range(d), range(2**d)):
        want.add(frozenset({i * 2**d + a, (i + 1) * 2**d + a}))
        want.add(frozenset({i * 2**d + a, (i + 1) * 2**d + (a ^ (1 << i))}))
    net = build_network(f"butterfly:d={d}")
    assert edge_set(net) == want
    assert np.all(np.abs(np.diff(net.levels[net.edges], axis=1)) == 1)


@pytest.mark.parametrize("d", [3, 4])
def test_wrapped_butterfly_edges_match_definition(d):
    """BF(d) with level d identified with level 0."""
    rows = 2**d
    want = set()
    for i, a in itertools.product(range(d), range(rows)):
        nxt = (i + 1) % d
        want.add(frozenset({i * rows + a, nxt * rows + a}))
        want.add(frozenset({i * rows + a, nxt * rows + (a ^ (1 << i))}))
    assert edge_set(build_network(f"wrapped-butterfly:d={d}")) == want


def grid_edges(k: int, n: int, wrap: bool) -> set[frozenset[int]]:
    """Nodes are coordinate tuples x with id sum x_i k^i; edges join nodes one step apart."""
    want = set()
    for x in itertools.product(range(k), repeat=n):
        u = sum(c * k**i for i, c in enumerate(x))
        for i in range(n):
            if x[i] + 1 < k or wrap:
                y = list(x)
                y[i] = (x[i] + 1) % k
                v = sum(c * k**j for j, c in enumerate(y))
                if u != v:
                    want.add(frozenset({u, v}))
    return want


@pytest.mark.parametrize("k, n", [(2, 2), (3, 2), (4, 2), (3, 3), (5, 1)])
def test_mesh_and_torus_edges_match_definition_2(k, n):
    assert edge_set(build_network(f"mesh:k={k},n={n}")) == grid_edges(k, n, wrap=False)
    assert edge_set(build_network(f"torus:k={k},n={n}")) == grid_edges(k, n, wrap=True)


def test_hypercube_edges_join_addresses_one_bit_apart():
    d = 5
    want = {frozenset({a, a ^ (1 << i)}) for a in range(2**d) for i in range(d)}
    assert edge_set(build_network(f"hypercube:d={d}")) == want


def test_torus_is_isomorphic_to_networkx_periodic_grid():
    net = build_network("torus:k=5,n=3")
    assert nx.is_isomorphic(net.graph, nx.grid_graph(dim=[5, 5, 5], periodic=True))


# --- labels and links -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["butterfly:d=3", "wrapped-butterfly:d=3", "mesh:k=3,n=2", "torus:k=4,n=3", "hypercube:d=4"]
)
def test_labels_round_trip(name):
    net = build_network(name)
    for v in range(net.num_nodes):
        label = net.label_of(v)
        assert net.node(label) == v
        assert net.node(f"({label.replace(',', ', ')})") == v  # "(1, 2)" as Python prints tuples
        assert net.node(v) == v  # an internal id names the node too


def test_labels_say_what_the_node_is():
    assert build_network("torus:k=8,n=2").label_of(3 + 8 * 4) == "3,4"
    assert build_network("butterfly:d=3").label_of(2 * 8 + 5) == "2,5"
    assert build_network("torus:k=8,n=2").node("3,4") == 35


@pytest.mark.parametrize("bad", ["9,9", "1,2,3", "abc", "-1", "64"])
def test_unknown_node_is_a_user_error(bad):
    with pytest.raises(UserError, match="not in"):
        build_network("torus:k=8,n=2").node(bad)


@pytest.mark.parametrize("network, text", [("torus:k=8,n=2", "3 4"), ("hypercube:d=4", "1 0")])
def test_a_space_between_numbers_does_not_glue_them_into_another_node(network, text):
    with pytest.raises(UserError):
        build_network(network).node(text)


@pytest.mark.parametrize("name", ["butterfly:d=3", "torus:k=3,n=2", "hypercube:d=3", "mesh:k=4,n=1"])
def test_link_numbering_and_links_between(name):
    """Link 2e runs edges[e,0] -> edges[e,1], link 2e+1 the other way."""
    net = build_network(name)
    u, v = net.edges[:, 0], net.edges[:, 1]
    e = np.arange(len(net.edges))
    np.testing.assert_array_equal(net.links_between(u, v), 2 * e)
    np.testing.assert_array_equal(net.links_between(v, u), 2 * e + 1)
    np.testing.assert_array_equal(net.link_tail[2 * e], u)
    np.testing.assert_array_equal(net.link_head[2 * e + 1], u)
    with pytest.raises(UserError, match="no link"):
        net.links_between([0], [0])


def test_links_between_rejects_non_edges():
    net = build_network("butterfly:d=3")
    with pytest.raises(UserError, match="no link from node 0,0 to node 2,0"):
        net.links_between([0, 0], [8, 16])  # 0,0 -> 1,0 is an edge, 0,0 -> 2,0 is not


def test_from_networkx_keeps_node_order_and_labels():
    g = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    net = from_networkx(g, "kite")
    assert net.num_nodes == 4 and net.num_links == 8
    assert [net.label_of(i) for i in range(4)] == ["a", "b", "c", "d"]
    assert net.node("d") == 3
    assert net.kind == "graph" and not net.leveled
    assert build_network(g).num_nodes == 4  # build_network accepts a networkx graph too


def test_from_networkx_drops_self_loops():
    g = nx.Graph([(0, 1), (1, 1)])
    assert from_networkx(g).num_links == 2


# --- edge-list files ------------------------------------------------------------------------------


def test_edgelist_comments_duplicates_and_numeric_order(tmp_path):
    f = tmp_path / "net.edges"
    f.write_text(
        "# a graph with integer names\n"
        "10 2   # trailing comment\n"
        "\n"
        "2 1\n"
        "1 2\n"          # the same edge again, reversed
        "10 2\n"         # and repeated
        "   1   100  \n"
    )
    net = build_network(f"edgelist:{f}")
    assert [net.label_of(i) for i in range(net.num_nodes)] == ["1", "2", "10", "100"]
    assert net.num_links == 2 * 3
    assert net.node("10") == 2  # by label
    assert edge_set(net) == {frozenset({0, 1}), frozenset({1, 2}), frozenset({0, 3})}


def test_edgelist_with_names_keeps_order_of_first_appearance(tmp_path):
    f = tmp_path / "net.edges"
    f.write_text("zurich bern\nbern geneva\nbasel zurich\n")
    net = read_edgelist(f)
    assert [net.label_of(i) for i in range(4)] == ["zurich", "bern", "geneva", "basel"]
    assert net.name == "edgelist:net.edges"


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 2\n3 3\n", "self-loop"),
        ("", "no edges"),
        ("# only a comment\n\n", "no edges"),
        ("1 2 3\n", "expected 'u v'"),
        ("1\n", "expected 'u v'"),
    ],
)
def test_bad_edgelist_files(tmp_path, text, message):
    f = tmp_path / "bad.edges"
    f.write_text(text)
    with pytest.raises(UserError, match=message):
        build_network(f"edgelist:{f}")


def test_missing_edgelist_file(tmp_path):
    with pytest.raises(UserError, match="cannot read edge list"):
        build_network(f"edgelist:{tmp_path / 'absent.edges'}")


def test_edgelist_relative_path_resolves_against_base_dir(tmp_path):
    (tmp_path / "net.edges").write_text("0 1\n1 2\n")
    assert build_network("edgelist:net.edges", base_dir=tmp_path).num_nodes == 3


# --- parameter errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, message",
    [
        ("butterfly:d=0", "out of range"),
        ("butterfly:d=25", "out of range"),
        ("wrapped-butterfly:d=2", "out of range"),
        ("torus:k=1,n=2", "out of range"),
        ("mesh:k=3,n=0", "out of range"),
        ("hypercube:d=0", "out of range"),
        ("butterfly:d=three", "not an integer"),
        ("butterfly", "needs parameter d"),
        ("torus:k=4", "needs parameter n"),
        ("butterfly:d=3,k=2", "unknown parameter 'k'"),
        ("torus:k=4,n=2,d=1", "unknown parameter 'd'"),
        ("no-such-net:d=3", "unknown network"),
        ("torus:k=4,n", "malformed"),
        ("edgelist", "give the file"),
        ("", "empty"),
    ],
)
def test_bad_network_names(name, message):
    with pytest.raises(UserError, match=message):
        build_network(name)


def test_too_large_networks_are_refused_before_allocating():
    """BF(22) would have 4 * 22 * 2^22 (about 369 million) links: refused from the formula."""
    with pytest.raises(UserError, match="more than this tool handles"):
        build_network("butterfly:d=22")
    with pytest.raises(UserError, match="more than this tool handles"):
        build_network("torus:k=3000,n=2")


def test_underscore_names_are_accepted():
    assert build_network("wrapped_butterfly:d=3").kind == "wrapped-butterfly"


def test_stacked_butterfly_for_valiant():
    """Two BF(d) back to back: levels 0..2d, the second pass starts where the first ends."""
    net = butterfly(3, passes=2)
    assert (net.depth, net.num_nodes, net.num_links) == (6, 7 * 8, 2 * 4 * 3 * 8)
    assert net.outputs.tolist() == [6 * 8 + r for r in range(8)]
