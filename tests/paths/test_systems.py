"""Path systems on arbitrary graphs, explicit paths, and the flags of a path collection (SPEC §5).

Distances are checked against networkx, which the path systems do not use for routing.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from universal.errors import UserError
from universal.networks import build_network, from_networkx
from universal.paths import PathCollection, route_paths
from universal.workloads import Problem, build_problem


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def irregular_graph() -> nx.Graph:
    """A connected irregular graph with string node names (degrees 1 to 8)."""
    g = nx.connected_watts_strogatz_graph(30, 4, 0.4, seed=11)
    g.add_edges_from([(0, 15), (3, 22), (7, 8)])
    g.add_edge(29, 30)  # a pendant node
    return nx.relabel_nodes(g, {v: f"n{v}" for v in g.nodes})


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def pairs_problem(sources, dests) -> Problem:
    return Problem("pairs", np.asarray(sources, dtype=np.int64), np.asarray(dests, dtype=np.int64))


def assert_paths_follow_graph(coll: PathCollection, graph: nx.Graph, names: list) -> None:
    """Every path starts at its source, ends at its destination and steps along edges of graph."""
    for i in range(coll.size):
        path = coll.node_path(i)
        assert path[0] == coll.sources[i] and path[-1] == coll.dests[i]
        for u, v in zip(path, path[1:]):
            assert graph.has_edge(names[u], names[v])


# --- shortest paths ------------------------------------------------------------------------------


@pytest.mark.parametrize("system", ["shortest", "random-shortest"])
def test_shortest_paths_on_a_networkx_graph_are_shortest(system):
    g = irregular_graph()
    names = list(g.nodes)
    net = from_networkx(g, "irregular")
    prob = build_problem("h-relation:h=3", net, rng(0))
    coll = route_paths(system, prob, net, rng(1))

    assert coll.is_shortest is True
    assert_paths_follow_graph(coll, g, names)
    dist = dict(nx.all_pairs_shortest_path_length(g))
    want = [dist[names[s]][names[t]] for s, t in zip(prob.sources, prob.dests)]
    assert coll.lengths.tolist() == want
    assert coll.dilation == max(want)


def test_shortest_paths_on_an_edge_list_file(tmp_path):
    g = nx.connected_watts_strogatz_graph(40, 4, 0.3, seed=5)
    edges = write(tmp_path / "net.edges", ["# a small world", *(f"{u} {v}" for u, v in g.edges)])
    net = build_network(f"edgelist:{edges}")
    assert net.num_nodes == 40
    prob = build_problem("permutation:random", net, rng(2))
    coll = route_paths("shortest", prob, net, rng(0))
    # Integer names are numbered in numeric order, so node id i is the node named i.
    names = list(range(40))
    assert_paths_follow_graph(coll, g, names)
    dist = dict(nx.all_pairs_shortest_path_length(g))
    assert coll.lengths.tolist() == [dist[s][t] for s, t in zip(prob.sources.tolist(), prob.dests.tolist())]
    assert coll.is_shortest


def test_random_shortest_differs_between_seeds_but_stays_shortest():
    """On a grid most pairs have many shortest paths; two seeds pick different ones."""
    g = nx.grid_2d_graph(6, 6)
    names = list(g.nodes)
    net = from_networkx(g, "grid")
    prob = build_problem("permutation:random", net, rng(0))
    a = route_paths("random-shortest", prob, net, rng(1))
    b = route_paths("random-shortest", prob, net, rng(2))
    assert a.is_shortest and b.is_shortest
    np.testing.assert_array_equal(a.lengths, b.lengths)
    assert not np.array_equal(a.links, b.links)
    assert_paths_follow_graph(a, g, names)
    # Same seed, same paths.
    np.testing.assert_array_equal(a.links, route_paths("random-shortest", prob, net, rng(1)).links)


def test_shortest_tie_break_is_the_lowest_numbered_closer_neighbour():
    """`shortest` is deterministic: the rng is ignored, and at every hop the next node is the
    lowest-numbered neighbour one step closer to the destination (checked with networkx BFS)."""
    g = nx.grid_2d_graph(5, 5)
    net = from_networkx(g, "grid")
    ids = nx.relabel_nodes(g, {v: i for i, v in enumerate(g.nodes)})
    prob = build_problem("h-relation:h=2", net, rng(0))
    a = route_paths("shortest", prob, net, rng(1))
    b = route_paths("shortest", prob, net, rng(99))
    np.testing.assert_array_equal(a.links, b.links)
    dist = dict(nx.all_pairs_shortest_path_length(ids))
    for i in range(a.size):
        target = int(prob.dests[i])
        path = a.node_path(i)
        for u, v in zip(path, path[1:]):
            closer = [w for w in ids.neighbors(u) if dist[w][target] == dist[u][target] - 1]
            assert v == min(closer)


def test_disconnected_pair_is_a_user_error():
    g = nx.Graph([(0, 1), (1, 2), (3, 4)])
    net = from_networkx(g, "two-parts")
    prob = pairs_problem([0, 3], [2, 1])
    for system in ("shortest", "random-shortest"):
        with pytest.raises(UserError, match="no path"):
            route_paths(system, prob, net, rng(0))


def test_dimension_order_needs_a_structured_network():
    net = from_networkx(nx.petersen_graph(), "petersen")
    prob = build_problem("permutation:random", net, rng(0))
    with pytest.raises(UserError, match="dimension-order"):
        route_paths("dimension-order", prob, net, rng(0))


def test_unknown_path_system_is_a_user_error():
    net = build_network("hypercube:d=3")
    prob = build_problem("permutation:random", net, rng(0))
    with pytest.raises(UserError, match="unknown path system"):
        route_paths("no-such-paths", prob, net, rng(0))


# --- Valiant's trick over shortest paths ---------------------------------------------------------


def test_valiant_over_shortest_paths_on_a_graph():
    """valiant:base=shortest goes via a random intermediate: every path splits into a shortest path
    to some node and a shortest path from it, so D <= 2 * diameter, and some paths are longer than
    shortest."""
    g = irregular_graph()
    names = list(g.nodes)
    net = from_networkx(g, "irregular")
    prob = build_problem("permutation:random", net, rng(0))
    coll = route_paths("valiant:base=shortest", prob, net, rng(4))
    dist = dict(nx.all_pairs_shortest_path_length(g))
    diameter = nx.diameter(g)

    assert coll.dilation <= 2 * diameter
    assert coll.is_shortest is False
    assert_paths_follow_graph(coll, g, names)
    for i in range(coll.size):
        path = [names[v] for v in coll.node_path(i)]
        length = len(path) - 1
        assert any(
            dist[path[0]][path[j]] == j and dist[path[j]][path[-1]] == length - j
            for j in range(length + 1)
        ), f"path {i} is not two shortest paths glued at an intermediate"


def test_valiant_on_a_graph_defaults_to_shortest_base():
    net = from_networkx(irregular_graph(), "irregular")
    prob = build_problem("permutation:random", net, rng(0))
    a = route_paths("valiant", prob, net, rng(4))
    b = route_paths("valiant:base=shortest", prob, net, rng(4))
    np.testing.assert_array_equal(a.links, b.links)


def test_valiant_cannot_wrap_itself():
    net = build_network("hypercube:d=3")
    prob = build_problem("permutation:random", net, rng(0))
    with pytest.raises(UserError):
        route_paths("valiant:base=valiant", prob, net, rng(0))


# --- explicit paths ------------------------------------------------------------------------------


def test_explicit_paths_from_a_file(tmp_path):
    """On the 6-cycle, packets 0->2 and 3->5 follow the user's paths, 1->0 goes the long way."""
    net = from_networkx(nx.cycle_graph(6), "C6")
    prob = pairs_problem([0, 3, 1], [2, 5, 0])
    file = write(tmp_path / "paths.txt", ["# one path per line", "0 1 2", "3 4 5  # a comment", "1 2 3 4 5 0"])
    coll = route_paths(f"explicit:file={file}", prob, net, rng(0))
    assert [coll.node_path(i) for i in range(3)] == [[0, 1, 2], [3, 4, 5], [1, 2, 3, 4, 5, 0]]
    assert (coll.size, coll.dilation, coll.congestion) == (3, 5, 2)
    assert coll.is_simple and coll.is_shortest is False


def test_explicit_paths_by_label_on_a_torus(tmp_path):
    net = build_network("torus:k=4,n=2")
    prob = pairs_problem([net.node("0,0")], [net.node("1,1")])
    file = write(tmp_path / "paths.txt", ["0,0 1,0 1,1"])
    coll = route_paths(f"explicit:file={file}", prob, net, rng(0))
    assert coll.node_path(0) == [net.node("0,0"), net.node("1,0"), net.node("1,1")]
    assert coll.is_shortest


@pytest.mark.parametrize(
    "lines, message",
    [
        (["0 2", "3 4 5"], "no link"),                  # 0 and 2 are not adjacent on the cycle
        (["0 1 2"], "1 paths but the problem has 2"),  # too few paths
        (["0 1 2", "3 4 5", "0 1"], "3 paths"),         # too many paths
        (["0 1 2", "3 2"], "path 2 runs"),              # wrong destination for packet 2
        (["1 2", "3 4 5"], "path 1 runs"),              # wrong source for packet 1
        (["0 1 2", "3 4 99"], "not in"),                # unknown node
        (["# nothing but a comment"], "no paths"),
    ],
)
def test_explicit_paths_are_validated(tmp_path, lines, message):
    net = from_networkx(nx.cycle_graph(6), "C6")
    prob = pairs_problem([0, 3], [2, 5])
    file = write(tmp_path / "paths.txt", lines)
    with pytest.raises(UserError, match=message):
        route_paths(f"explicit:file={file}", prob, net, rng(0))


def test_explicit_paths_missing_file_is_a_user_error(tmp_path):
    net = from_networkx(nx.cycle_graph(6), "C6")
    with pytest.raises(UserError, match="cannot read"):
        route_paths(f"explicit:file={tmp_path / 'absent.txt'}", pairs_problem([0], [1]), net, rng(0))


# --- the flags and the histogram of a collection -------------------------------------------------


@pytest.mark.parametrize(
    "network, problem, system",
    [
        ("butterfly:d=5", "h-relation:h=2", "valiant"),
        ("torus:k=5,n=2", "permutation:random", "dimension-order"),
        ("hypercube:d=5", "permutation:bit-reversal", "valiant"),
        ("mesh:k=4,n=2", "h-function:h=3", "random-shortest"),
    ],
)
def test_load_histogram_accounts_for_every_link_and_hop(network, problem, system):
    net = build_network(network)
    prob = build_problem(problem, net, rng(0))
    coll = route_paths(system, prob, net, rng(1))
    hist = coll.load_histogram()
    assert sum(hist.values()) == coll.network.num_links
    assert sum(load * count for load, count in hist.items()) == int(coll.lengths.sum()) == len(coll.links)
    assert max(hist) == coll.congestion
    assert coll.size == prob.size


def test_a_path_that_reuses_an_edge_is_not_simple():
    net = from_networkx(nx.cycle_graph(5), "C5")
    there_and_back = PathCollection.from_node_paths(net, [[0, 1, 2, 1]])
    assert there_and_back.is_simple is False
    twice_round = PathCollection.from_node_paths(net, [[0, 1, 2, 3, 4, 0, 1]])
    assert twice_round.is_simple is False
    # Two different paths may share an edge and still be simple.
    shared = PathCollection.from_node_paths(net, [[0, 1, 2], [1, 2, 3]])
    assert shared.is_simple is True
    assert shared.congestion == 2


def test_from_node_paths_rejects_non_edges():
    net = from_networkx(nx.cycle_graph(5), "C5")
    with pytest.raises(UserError, match="no link"):
        PathCollection.from_node_paths(net, [[0, 2]])


def test_butterfly_paths_are_leveled_and_a_torus_cycle_is_not():
    net = build_network("butterfly:d=4")
    prob = build_problem("permutation:random", net, rng(0))
    assert route_paths("dimension-order", prob, net, rng(0)).is_leveled is True

    ring = build_network("torus:k=4,n=1")
    around = PathCollection.from_node_paths(ring, [[0, 1, 2, 3, 0]])
    assert around.is_leveled is False
    # Two paths that go opposite ways over the same edge cannot be leveled either.
    opposite = PathCollection.from_node_paths(ring, [[0, 1], [1, 0]])
    assert opposite.is_leveled is False
    # A single straight path is leveled.
    assert PathCollection.from_node_paths(ring, [[0, 1, 2]]).is_leveled is True


def test_is_shortest_on_a_butterfly_for_pairs_that_are_not_input_to_output(tmp_path):
    """(0,0) -> (1,1) -> (0,1) on BF(2): rows 0 and 1 differ in bit 0, so the path must go up to
    level 1 and back; its 2 hops are the distance (networkx agrees)."""
    net = build_network("butterfly:d=2")
    path = [net.node("0,0"), net.node("1,1"), net.node("0,1")]
    assert nx.shortest_path_length(net.graph, path[0], path[-1]) == 2
    file = write(tmp_path / "paths.txt", ["0,0 1,1 0,1"])
    coll = route_paths(f"explicit:file={file}", pairs_problem([path[0]], [path[-1]]), net, rng(0))
    assert coll.node_path(0) == path
    assert coll.is_shortest is True


def test_dimension_order_breaks_ties_in_the_plus_direction():
    """On a ring of even length k a packet k/2 away may go either way; dimension order goes +."""
    ring = build_network("torus:k=4,n=1")
    prob = pairs_problem([0, 1, 3, 2], [2, 3, 1, 1])
    coll = route_paths("dimension-order", prob, ring, rng(0))
    assert [coll.node_path(i) for i in range(4)] == [[0, 1, 2], [1, 2, 3], [3, 0, 1], [2, 1]]


def test_dimension_order_on_a_torus_is_shortest():
    net = build_network("torus:k=5,n=2")
    prob = build_problem("permutation:random", net, rng(0))
    coll = route_paths("dimension-order", prob, net, rng(0))
    assert coll.is_shortest is True
    assert coll.is_simple is True
    dist = dict(nx.all_pairs_shortest_path_length(nx.grid_graph(dim=[5, 5], periodic=True)))
    # Node id x + 5y is the torus node (x, y); the 5 x 5 periodic grid is symmetric in x and y.
    coords = [(v % 5, v // 5) for v in range(25)]
    for i in range(coll.size):
        assert coll.lengths[i] == dist[coords[prob.sources[i]]][coords[prob.dests[i]]]


def test_equal_lengths_are_one_number_broadcast_and_lengths_are_read_only():
    net = build_network("butterfly:d=4")
    problem = build_problem("h-relation:h=2", net, np.random.default_rng(0))
    paths = route_paths("valiant", problem, net, np.random.default_rng(1))
    np.testing.assert_array_equal(paths.lengths, np.diff(paths.offsets))
    assert paths.lengths.strides == (0,) and not paths.lengths.flags.writeable
    mixed = PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2], [1, 0]])
    assert mixed.lengths.tolist() == [2, 1] and not mixed.lengths.flags.writeable


def test_congestion_on_a_large_host_is_counted_without_keeping_the_link_loads(monkeypatch):
    from universal.paths import collection

    net = build_network("torus:k=6,n=2")
    problem = build_problem("h-relation:h=3", net, np.random.default_rng(0))
    kept = route_paths("valiant", problem, net, np.random.default_rng(1))
    monkeypatch.setattr(collection, "KEEP_LOADS_LINKS", net.num_links - 1)
    alone = route_paths("valiant", problem, net, np.random.default_rng(1))
    assert alone.congestion == kept.congestion == int(kept.link_loads.max()) > 1
    assert "link_loads" not in alone.__dict__
    np.testing.assert_array_equal(alone.link_loads, kept.link_loads)       # counted again when asked for
