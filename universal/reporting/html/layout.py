"""Where the HTML view draws each node: the network's natural picture.

* leveled networks (butterflies, the wrapped butterfly, any network with node levels) in columns,
  one per level, the rows of a level top to bottom;
* meshes, tori and hypercubes as a grid: dimensions 0, 2, 4, ... along x and 1, 3, 5, ... along y,
  each dimension's blocks spaced out from the one below it, so a hypercube appears as nested
  squares and a 3-D torus as 2-D slices side by side; a 1-D torus is a ring;
* any other graph with a force layout (networkx's ``spring_layout``, seeded, so the picture of a
  network is always the same).

A link whose straight line would run through other nodes (a torus wrap-around link, a hypercube
link of dimension 2 or more, a wrapped butterfly's link back to level 0) gets a *bend*: the
view draws it as an arc bulging by that fraction of its length.
"""

from __future__ import annotations

import numpy as np

from universal.networks import Network

#: Gap between the blocks of one grid dimension, in units of the block below it.
GRID_GAP = 1.6
#: Bulge of an arc, as a fraction of the straight distance.
BEND = 0.18
#: Largest bulge of a grid's arc, in grid units (the distance between neighbours).
MAX_BULGE = 0.55


def node_layout(net: Network, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Node positions and per-edge bends of ``net``'s picture (see the module docstring).

    Parameters
    ----------
    net : Network
    seed : int
        Seed of the force layout (graphs without a natural layout only).

    Returns
    -------
    xy : ndarray of float, shape (N, 2)
        Positions; y grows downwards, the view scales the whole to its canvas keeping the aspect.
    bend : ndarray of float, shape (E,)
        Per undirected edge: 0 for a straight line, else the arc's bulge (fraction of its length).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> xy, bend = node_layout(build_network("torus:k=4,n=2"))
    >>> xy[5].tolist(), int((bend > 0).sum())        # node (1,1); the 8 wrap-around edges bend
    ([1.0, 1.0], 8)

    References
    ----------
    Fruchterman & Reingold, "Graph drawing by force-directed placement", 1991 (the force layout).
    """
    edges = np.asarray(net.edges, dtype=np.int64).reshape(-1, 2)
    if net.levels is not None:
        return _leveled(net, edges)
    if net.kind in ("mesh", "torus", "hypercube") and {"k", "n"} <= set(net.params):
        return _grid(net, edges)
    return _force(net, edges, seed), np.zeros(len(edges))


def _leveled(net: Network, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    levels = np.asarray(net.levels, dtype=np.int64)
    depth = int(levels.max()) if len(levels) else 0
    # rank of every node within its level, in node-id order (a butterfly's row)
    order = np.lexsort((np.arange(net.num_nodes), levels))
    rank = np.empty(net.num_nodes, dtype=np.int64)
    counts = np.bincount(levels, minlength=depth + 1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank[order] = np.arange(net.num_nodes) - starts[levels[order]]
    tallest = max(int(counts.max()) - 1, 1)
    y = rank * (tallest / np.maximum(counts[levels] - 1, 1))       # levels of fewer nodes spread out
    x = levels * (1.4 * tallest / max(depth, 1))                     # a picture about 1.4 times wider than tall
    span = np.abs(levels[edges[:, 0]] - levels[edges[:, 1]]) if len(edges) else np.zeros(0)
    return np.stack([x, y], axis=1).astype(float), np.where(span > 1, BEND, 0.0)


def _grid(net: Network, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k, n = int(net.params["k"]), int(net.params["n"])
    nodes = np.arange(net.num_nodes, dtype=np.int64)
    coords = np.stack([(nodes // k**i) % k for i in range(n)], axis=1)
    if n == 1 and net.kind == "torus" and k > 2:       # a ring
        angle = 2 * np.pi * coords[:, 0] / k
        r = k / (2 * np.pi)
        return np.stack([r * np.sin(angle), -r * np.cos(angle)], axis=1), np.zeros(len(edges))
    xy = np.zeros((net.num_nodes, 2))
    width = [1.0, 1.0]
    for i in range(n):
        axis = i % 2
        xy[:, axis] += coords[:, i] * width[axis]
        width[axis] *= (k - 1) + GRID_GAP
    if not len(edges):
        return xy, np.zeros(0)
    diff = coords[edges[:, 0]] != coords[edges[:, 1]]
    dim = np.argmax(diff, axis=1)
    delta = np.abs(coords[edges[:, 0], dim] - coords[edges[:, 1], dim])
    bend = (dim >= 2) | (delta > 1)                   # higher blocks, wrap-around links
    # a long link (the wrap-around of a large torus) bulges by at most MAX_BULGE grid units, so
    # that it stays beside its row instead of sweeping across the grid
    length = np.linalg.norm(xy[edges[:, 0]] - xy[edges[:, 1]], axis=1)
    return xy, np.where(bend, np.minimum(BEND, MAX_BULGE / np.maximum(length, 1e-9)), 0.0)


def _force(net: Network, edges: np.ndarray, seed: int) -> np.ndarray:
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(range(net.num_nodes))
    graph.add_edges_from(edges.tolist())
    pos = nx.spring_layout(graph, seed=seed, iterations=100)
    xy = np.array([pos[v] for v in range(net.num_nodes)], dtype=float).reshape(-1, 2)
    # about one unit between neighbours, as in the other layouts
    if len(edges):
        typical = float(np.median(np.linalg.norm(xy[edges[:, 0]] - xy[edges[:, 1]], axis=1)))
        if typical > 0:
            xy /= typical
    return xy
