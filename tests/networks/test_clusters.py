"""Algorithm Mark (Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996,
§5.2): the fast marking equals the survey's recursive algorithm written out literally, and its
clusters have properties (a) diameter <= 3 d_i and (b) at most two clusters per tree edge."""

from __future__ import annotations

import sys

import networkx as nx
import numpy as np
import pytest

from universal.errors import UserError
from universal.networks import build_network
from universal.networks.clusters import cluster_report, mark_clusters, mark_order


def survey_mark(tree: nx.Graph, root) -> list:
    """Algorithm Mark(i, m, v) as the survey writes it: recursive, marks numbered by i."""
    order: list = []

    def mark(i: int, m: bool, v, parent) -> int:
        sons = [w for w in sorted(tree[v], key=repr) if w != parent]
        if not m:
            order.append(v)
            i += 1
            for w in sons:
                i = mark(i, True, w, v)
        else:
            for w in sons:
                i = mark(i, False, w, v)
            order.append(v)
            i += 1
        return i

    mark(1, True, root, None)
    return order


def random_trees(count: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, 120))
        yield nx.random_labeled_tree(n, seed=int(rng.integers(2**31))), rng


def random_degrees(n: int, rng) -> list[int]:
    degrees, left = [], n
    while left > 0:
        d = int(rng.integers(1, min(left, 10) + 1))
        degrees.append(d)
        left -= d
    return degrees


def test_a_path_by_hand():
    # Mark(1, true, 0): 0 waits for its subtree; 1 (father marked later) is marked going down;
    # 2 waits for 3, which is marked going down; then 2 and 0 going up
    assert mark_order(nx.path_graph(4), 0) == [1, 3, 2, 0]
    assert mark_clusters(nx.path_graph(4), 0, [1, 3]) == {1: 0, 3: 1, 2: 1, 0: 1}


def test_the_marking_is_the_surveys_recursive_algorithm():
    for tree, rng in random_trees(200, 1):
        root = int(rng.integers(tree.number_of_nodes()))
        assert mark_order(tree, root) == survey_mark(tree, root)


@pytest.mark.parametrize("network", ["butterfly:d=5", "torus:k=8,n=2", "hypercube:d=7", "mesh:k=9,n=2",
                                     "multibutterfly:s=4,d=4"])
def test_properties_a_and_b_on_spanning_trees_of_networks(network):
    net = build_network(network)
    graph = nx.Graph(net.graph)
    rng = np.random.default_rng(7)
    for root in rng.choice(list(graph.nodes), size=3, replace=False).tolist():
        tree = nx.bfs_tree(graph, root).to_undirected()
        report = cluster_report(tree, mark_clusters(tree, root, random_degrees(tree.number_of_nodes(), rng)))
        assert all(d <= 3 * (s - 1) for d, s in zip(report.diameters, report.sizes))    # (a), 3 d_i - 3
        assert report.edge_sharing <= 2                                                 # (b)


def test_properties_a_and_b_on_random_trees_and_the_bound_is_reached():
    tight = False
    for tree, rng in random_trees(300, 2):
        n = tree.number_of_nodes()
        report = cluster_report(tree, mark_clusters(tree, int(rng.integers(n)), random_degrees(n, rng)))
        assert all(d <= 3 * (s - 1) for d, s in zip(report.diameters, report.sizes))
        assert report.edge_sharing <= 2
        tight |= any(d == 3 * (s - 1) and s > 1 for d, s in zip(report.diameters, report.sizes))
    assert tight         # the argument's 3 edges between consecutive marks do occur


def test_the_report_catches_a_marking_without_the_alternation():
    """Plain depth-first preorder has no such bound: after a long branch it jumps back to the
    root's other child, and a cluster holding both ends is far wider than 3 d_i."""
    tree = nx.path_graph(11)                       # the root 0 and a branch 1..10 ...
    tree.add_edge(0, 99)                           # ... and a second child
    preorder = list(nx.dfs_preorder_nodes(tree, 0))
    assert preorder[-2:] == [10, 99]
    clusters = {v: i // 2 for i, v in enumerate(preorder)}          # pairs of consecutive nodes
    report = cluster_report(tree, clusters)
    assert report.diameters[-1] == 11 and report.worst_ratio > 3
    marked = cluster_report(tree, mark_clusters(tree, 0, [2] * 6))
    assert max(marked.diameters) <= 3


@pytest.mark.parametrize("tree, root, degrees, says", [
    (nx.cycle_graph(4), 0, [2, 2], "tree"),
    (nx.path_graph(4), 9, [1], "root"),
    (nx.path_graph(4), 0, [3, 2], "more than"),
    (nx.path_graph(4), 0, [0, 2], "at least one"),
])
def test_bad_input(tree, root, degrees, says):
    with pytest.raises(UserError, match=says):
        mark_clusters(tree, root, degrees)


def test_a_deep_tree_needs_no_recursion():
    tree = nx.path_graph(3 * sys.getrecursionlimit())
    assert len(mark_order(tree, 0)) == tree.number_of_nodes()
