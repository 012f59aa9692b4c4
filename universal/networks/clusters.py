"""Cluster marking on a spanning tree: the embedding step of routing via simulation.

§5.2 of Meyer auf der Heide & Scheideler, "Communication in Parallel Systems" (1996), routes
deterministically on any network H by simulating a multibutterfly G on it (Theorems 28 and 29).
The first step embeds G: the nodes of H are split into clusters, cluster i of d_i nodes
standing for the d_i edge endpoints of node i of G. The survey's Algorithm Mark does it on a
spanning tree T of H rooted at r: a depth-first walk marks a node on the way down when its
parent was not marked on the way down, and on the way back up otherwise (the root on the way
up), so that the levels alternate; the marks are numbered 1, 2, ... in the order they are made,
and marks ``d_1 + ... + d_(i-1) + 1`` to ``d_1 + ... + d_i`` form cluster i.

Why the clusters are small and spread (the survey's properties (a) and (b), with the argument
behind them). Depths alternate: odd depths are marked on the way down, even depths (the root's
included) on the way up. Following the walk from one mark to the next: after a node marked on
the way down it reaches, within 2 edges, a grandchild (marked on entry), a childless child
(marked on leaving), a sibling (marked on entry) or the parent (marked on leaving); after a node
marked on the way up it reaches, within 3 edges, a sibling's child, a childless sibling, an
uncle (all marked then) or the grandparent. So the walk passes at most 3 edges between
consecutive marks, and:

(a) a cluster of d_i nodes lies on a stretch of the walk of at most 3(d_i - 1) edges: its
    diameter in T is at most 3 d_i;
(b) the walk crosses every edge of T exactly twice (once down, once up); the tree path between
    two consecutive marks of a cluster lies on the stretch of the walk between them, and these
    paths join the cluster, so at most two clusters use any one edge of T to join their nodes.

:func:`mark_clusters` implements the marking (iteratively: no recursion limit on deep trees) and
:func:`cluster_report` measures both properties; the tests check them on spanning trees of many
networks. What the rest of routing via simulation would need is in docs/simulation.md ("Not built").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence

import networkx as nx
import numpy as np

from universal.errors import UserError

__all__ = ["mark_order", "mark_clusters", "cluster_report", "ClusterReport"]


def mark_order(tree: nx.Graph, root: Hashable) -> list[Hashable]:
    """The nodes of ``tree`` in the order Algorithm Mark marks them, starting with ``Mark(1, true, root)``.

    Parameters
    ----------
    tree : networkx.Graph
        A tree (connected, acyclic).
    root : node of ``tree``

    Returns
    -------
    list
        Every node once: children are visited in sorted order.

    Examples
    --------
    >>> mark_order(nx.path_graph(4), 0)        # 0 waits for its subtree, 1 goes down, 2 up, 3 down
    [1, 3, 2, 0]

    References
    ----------
    F. Meyer auf der Heide and C. Scheideler, "Communication in Parallel Systems" (1996), §5.2,
    Algorithm Mark.
    """
    if not nx.is_tree(tree):
        raise UserError("cluster marking needs a tree (a spanning tree of the network)")
    if root not in tree:
        raise UserError(f"the root {root!r} is not a node of the tree")
    order: list[Hashable] = []
    # frames: (node, parent, marked on the way down?, children still to visit)
    stack = [(root, None, False, iter(sorted(tree[root], key=repr)))]
    while stack:
        node, parent, down, children = stack[-1]
        child = next((c for c in children if c != parent), None)
        if child is not None:
            marks_down = not down          # the child is marked on its way down iff its parent was not
            if marks_down:
                order.append(child)
            stack.append((child, node, marks_down, iter(sorted(tree[child], key=repr))))
            continue
        stack.pop()
        if not down:
            order.append(node)             # marked on the way up
    return order


def mark_clusters(tree: nx.Graph, root: Hashable, degrees: Sequence[int]) -> dict[Hashable, int]:
    """Cluster ``i`` (0-based) of every marked node: the ``degrees[i]`` consecutive marks after
    those of the clusters before it.

    Parameters
    ----------
    tree : networkx.Graph
        A spanning tree T of the host network H.
    root : node of ``tree``
    degrees : sequence of int
        d_1, ..., d_M (the degree sequence of the simulated network G), each at least 1, their sum
        at most the number of nodes of T.

    Returns
    -------
    dict
        Node -> cluster number; the nodes beyond the sum of the degrees are in no cluster.

    Examples
    --------
    >>> mark_clusters(nx.path_graph(5), 0, [2, 3])
    {1: 0, 3: 0, 4: 1, 2: 1, 0: 1}

    References
    ----------
    F. Meyer auf der Heide and C. Scheideler, "Communication in Parallel Systems" (1996), §5.2.
    """
    degrees = [int(d) for d in degrees]
    if any(d < 1 for d in degrees):
        raise UserError("every cluster needs at least one node (degrees >= 1)")
    if sum(degrees) > tree.number_of_nodes():
        raise UserError(f"the degrees sum to {sum(degrees):,}, more than the tree's {tree.number_of_nodes():,} nodes")
    order = mark_order(tree, root)
    owner = np.repeat(np.arange(len(degrees)), degrees)
    return {node: int(c) for node, c in zip(order, owner)}


@dataclass
class ClusterReport:
    """Properties (a) and (b) of a marking, measured.

    Attributes
    ----------
    diameters : list of int
        Diameter of every cluster in the tree (the longest tree path between two of its nodes).
    sizes : list of int
        d_i.
    worst_ratio : float
        max_i diameter_i / d_i (property (a): at most 3).
    edge_sharing : int
        The most clusters whose joining subtrees (the union of the tree paths between their
        nodes) use one tree edge (property (b): at most 2).
    """

    diameters: list[int]
    sizes: list[int]
    worst_ratio: float
    edge_sharing: int


def cluster_report(tree: nx.Graph, clusters: dict[Hashable, int]) -> ClusterReport:
    """Measure a cluster marking: each cluster's diameter in the tree and the edge sharing.

    Parameters
    ----------
    tree : networkx.Graph
    clusters : dict
        From :func:`mark_clusters`.

    Returns
    -------
    ClusterReport

    Examples
    --------
    >>> t = nx.balanced_tree(2, 4)
    >>> rep = cluster_report(t, mark_clusters(t, 0, [3] * 10))
    >>> rep.worst_ratio <= 3, rep.edge_sharing <= 2
    (True, True)

    References
    ----------
    F. Meyer auf der Heide and C. Scheideler, "Communication in Parallel Systems" (1996), §5.2,
    properties (a) and (b).
    """
    members: dict[int, list] = {}
    for node, c in clusters.items():
        members.setdefault(c, []).append(node)
    M = max(members) + 1 if members else 0
    use: dict[frozenset, set] = {}                  # tree edge -> clusters whose joining subtree uses it
    diameters, sizes = [0] * M, [0] * M
    for c, nodes in members.items():
        sizes[c] = len(nodes)
        joining = _joining_subtree(tree, nodes)
        for u, v in joining.edges:
            use.setdefault(frozenset((u, v)), set()).add(c)
        diameters[c] = _diameter(joining, nodes)
    ratio = max((d / s for d, s in zip(diameters, sizes) if s), default=0.0)
    return ClusterReport(diameters, sizes, ratio, max((len(v) for v in use.values()), default=0))


def _joining_subtree(tree: nx.Graph, nodes: list) -> nx.Graph:
    """The smallest subtree holding ``nodes``: in a tree, the union of the paths from one of them to
    all the others."""
    sub = nx.Graph()
    sub.add_nodes_from(nodes)
    paths = nx.single_source_shortest_path(tree, nodes[0])
    for v in nodes[1:]:
        nx.add_path(sub, paths[v])
    return sub


def _diameter(subtree: nx.Graph, nodes: list) -> int:
    """Longest path between two of ``nodes`` within their joining subtree (two sweeps)."""
    if len(nodes) < 2:
        return 0
    far = nx.single_source_shortest_path_length(subtree, nodes[0])
    a = max(nodes, key=lambda v: far[v])
    from_a = nx.single_source_shortest_path_length(subtree, a)
    return max(from_a[v] for v in nodes)
