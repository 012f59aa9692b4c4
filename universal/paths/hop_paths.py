"""Paths built hop by hop: dimension order on meshes, tori and hypercubes, and distances for shortest paths.

The helpers behind :func:`universal.paths.systems.dimension_order_paths` and
:func:`universal.paths.systems.shortest_paths` (which also exports every name here): the hops of
dimension-order paths, all packets moved one hop per numpy step; the hop distance to every
packet's destination that the shortest paths step down; and the per-hop records made into a
:class:`~universal.paths.collection.PathCollection`.

Reference: Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.3.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.paths.collection import PathCollection


def _grid_dimension_order_hops(network: Network, sources: np.ndarray, dests: np.ndarray) -> list[np.ndarray]:
    """The hops (tails, heads, owner) of dimension-order paths on meshes and tori."""
    k, n = network.params["k"], network.params["n"]
    wrap = network.kind in ("torus", "hypercube") and k > 2
    current = sources.astype(np.int64).copy()
    steps: list[tuple[np.ndarray, np.ndarray]] = []  # (moving mask, next node) per hop
    for dim in range(n):
        stride = k**dim
        x = (current // stride) % k
        y = (dests // stride) % k
        forward = (y - x) % k if wrap else np.abs(y - x)
        if wrap:
            backward = (x - y) % k
            go_plus = forward <= backward  # ties (k even, offset k/2) go in the + direction
            hops = np.where(go_plus, forward, backward)
            delta = np.where(go_plus, 1, -1)
        else:
            hops = forward
            delta = np.where(y >= x, 1, -1)
        for h in range(int(hops.max()) if len(hops) else 0):
            moving = hops > h
            xs = (current // stride) % k
            nxt = current + (((xs + delta) % k) - xs) * stride
            current = np.where(moving, nxt, current)
            steps.append((moving, current.copy()))
    return _compact_hops(sources, steps)


def _compact_hops(sources: np.ndarray, steps: list[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """Turn per-hop (moving mask, node) records into a (tails, heads, owner) triple of flat arrays."""
    if not steps:
        empty = np.empty(0, dtype=np.int64)
        return [empty, empty, empty]
    moving = np.stack([m for m, _ in steps], axis=1)
    nodes = np.stack([v for _, v in steps], axis=1)
    previous = np.concatenate([sources[:, None], nodes[:, :-1]], axis=1)
    # A path's moves are not contiguous across dimensions in the matrix; keep them in hop order.
    owner = np.repeat(np.arange(len(sources)), moving.sum(axis=1))
    return [previous[moving], nodes[moving], owner]


def _collection_from_hops(network: Network, sources: np.ndarray, dests: np.ndarray,
                          hops: list[np.ndarray], system: str, note: str = "") -> PathCollection:
    tails, heads, owner = hops
    counts = np.bincount(owner, minlength=len(sources))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    links = network.links_between(tails, heads)
    return PathCollection(network, offsets, links, sources, dests, system, note)


def _distance_to(network: Network, dests: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``f(nodes, packet_index) -> hop distance from nodes to dests[packet_index]``."""
    if network.kind in ("mesh", "torus", "hypercube"):
        return lambda nodes, who: network.distances(nodes, dests[who])
    from scipy.sparse.csgraph import shortest_path

    unique, row_of = np.unique(dests, return_inverse=True)
    if len(unique) * network.num_nodes > 50_000_000:
        raise UserError(f"shortest paths on {network.name} to {len(unique)} destinations need too much memory")
    table = shortest_path(network.adjacency, unweighted=True, indices=unique)
    return lambda nodes, who: table[row_of[who], nodes]
