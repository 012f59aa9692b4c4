"""Generators of the standard networks (Meyer auf der Heide & Scheideler, Definitions 1-2).

Each returns a :class:`~universal.networks.base.Network`. Node numbering:

* butterfly BF(d) and stacked butterflies: node ``level * 2**d + row``; the edge from
  ``(i, r)`` of kind ``c`` (0 straight, 1 cross) has index ``2 * (i * 2**d + r) + c``, so its
  forward link is ``4 * (i * 2**d + r) + 2 * c``. The cross edge at level ``i`` flips bit
  ``i mod d`` of the row (bit 0 is the least significant).
* wrapped butterfly W-BF(d): levels ``0..d-1``, same numbering, level ``d`` is level 0.
* mesh M(k,n) and torus T(k,n): node ``sum_i x_i * k**i`` with ``x_0`` the first coordinate;
  labels print ``x_0,x_1,...``. The hypercube is M(2,d) = T(2,d), without duplicate edges.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from universal.datafiles import read_rows
from universal.errors import UserError
from universal.networks.base import ComputedEdges, Network

if TYPE_CHECKING:
    import networkx as nx

#: Instances above this many links are refused before allocating. A butterfly's edges are computed
#: on demand, so a link costs routing about 10 bytes (loads, buffer counts): 2 GB at the limit,
#: which admits Valiant's two butterflies back to back up to BF(20).
MAX_LINKS = 200_000_000


def _check_size(links: int, what: str) -> None:
    if links > MAX_LINKS:
        raise UserError(f"{what} would have {links:,} links, more than this tool handles ({MAX_LINKS:,})")


def _butterfly_edges(d: int, depth: int, wrapped: bool) -> np.ndarray:
    rows = 1 << d
    level_count = depth if wrapped else depth + 1
    level = np.repeat(np.arange(depth, dtype=np.int64), rows)
    row = np.tile(np.arange(rows, dtype=np.int64), depth)
    nxt = (level + 1) % level_count
    tail = level * rows + row
    straight = nxt * rows + row
    cross = nxt * rows + (row ^ (np.int64(1) << (level % d)))
    edges = np.empty((2 * len(tail), 2), dtype=np.int64)
    edges[0::2, 0] = tail
    edges[0::2, 1] = straight
    edges[1::2, 0] = tail
    edges[1::2, 1] = cross
    return edges


def _level_type(levels: int) -> type:
    """The smallest integer type that holds the level numbers ``0..levels - 1``."""
    return np.int8 if levels <= np.iinfo(np.int8).max else np.int16


def _butterfly_recipe(d: int, depth: int, wrapped: bool) -> ComputedEdges:
    """The edges of a butterfly as a recipe: path systems find links arithmetically (see the
    module docstring), so the edge array is built only for what needs it (networkx, labels)."""
    return ComputedEdges(2 * depth * (1 << d), lambda: _butterfly_edges(d, depth, wrapped),
                         lambda e: _butterfly_edge(d, depth, wrapped, e))


def _butterfly_edge(d: int, depth: int, wrapped: bool, e: int) -> tuple[int, int]:
    """Edge ``e`` of :func:`_butterfly_edges` by its formula: ``e = 2 * (level * 2**d + row) + kind``."""
    rows = 1 << d
    level, row = divmod(e >> 1, rows)
    nxt = (level + 1) % (depth if wrapped else depth + 1)
    return level * rows + row, nxt * rows + (row ^ ((1 << (level % d)) if e & 1 else 0))


def butterfly(d: int, passes: int = 1) -> Network:
    """The d-dimensional butterfly BF(d), or ``passes`` butterflies back to back.

    Parameters
    ----------
    d : int
        Dimension; rows are d-bit strings, levels run ``0..d``.
    passes : int
        1 for BF(d). 2 gives the depth-2d network on which Valiant's trick runs on a
        butterfly: levels ``d..2d`` form a second BF(d) whose inputs are the first one's outputs.

    Returns
    -------
    Network

    Examples
    --------
    >>> net = butterfly(3)
    >>> net.num_nodes, net.num_links
    (32, 96)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", Definition 1.
    """
    if not 1 <= d <= 24:
        raise UserError(f"butterfly dimension d={d} is out of range (1..24)")
    depth = passes * d
    rows = 1 << d
    name = f"butterfly:d={d}" + ("" if passes == 1 else f" ({passes} back to back)")
    _check_size(4 * depth * rows, name)
    return Network(
        name=name,
        kind="butterfly",
        num_nodes=(depth + 1) * rows,
        edges=_butterfly_recipe(d, depth, wrapped=False),
        params={"d": d, "passes": passes},
        levels=np.repeat(np.arange(depth + 1, dtype=_level_type(depth + 1)), rows),
        depth=depth,
        inputs=np.arange(rows, dtype=np.int64),
        outputs=depth * rows + np.arange(rows, dtype=np.int64),
        label_of=lambda v, r=rows: f"{v // r},{v % r}",
    )


def wrapped_butterfly(d: int) -> Network:
    """The d-dimensional wrap-around butterfly W-BF(d): BF(d) with level d identified with level 0.

    Inputs and outputs are both the level-0 nodes. ``d >= 3`` so that no edge is doubled.

    Examples
    --------
    >>> wrapped_butterfly(3).num_nodes
    24

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", Definition 1.
    """
    if not 3 <= d <= 24:
        raise UserError(f"wrapped butterfly dimension d={d} is out of range (3..24)")
    _check_size(4 * d * (1 << d), f"wrapped-butterfly:d={d}")
    rows = 1 << d
    level_zero = np.arange(rows, dtype=np.int64)
    return Network(
        name=f"wrapped-butterfly:d={d}",
        kind="wrapped-butterfly",
        num_nodes=d * rows,
        edges=_butterfly_recipe(d, d, wrapped=True),
        params={"d": d},
        levels=np.repeat(np.arange(d, dtype=_level_type(d)), rows),
        depth=d,
        inputs=level_zero,
        outputs=level_zero,
        label_of=lambda v, r=rows: f"{v // r},{v % r}",
    )


def _grid_edges(k: int, n: int, wrap: bool) -> np.ndarray:
    nodes = np.arange(k**n, dtype=np.int64)
    parts = []
    for i in range(n):
        stride = k**i
        x = (nodes // stride) % k
        if wrap and k > 2:
            tail = nodes
            head = nodes + (((x + 1) % k) - x) * stride
        else:
            tail = nodes[x < k - 1]
            head = tail + stride
        parts.append(np.stack([tail, head], axis=1))
    return np.concatenate(parts) if parts else np.empty((0, 2), dtype=np.int64)


def _grid(kind: str, k: int, n: int, name: str) -> Network:
    if k < 2 or n < 1:
        raise UserError(f"{name}: need k >= 2 and n >= 1")
    if k**n > 5_000_000:
        raise UserError(f"{name} would have {k**n:,} nodes, more than this tool handles (5,000,000)")

    def label(v: int) -> str:
        coords = []
        for _ in range(n):
            coords.append(str(v % k))
            v //= k
        return ",".join(coords)

    return Network(
        name=name,
        kind=kind,
        num_nodes=k**n,
        edges=_grid_edges(k, n, wrap=(kind == "torus")),
        params={"k": k, "n": n},
        label_of=label,
    )


def mesh(k: int, n: int) -> Network:
    """The (k, n)-mesh M(k, n): nodes ``[k]^n``, edges between nodes at distance 1.

    Examples
    --------
    >>> mesh(3, 2).num_links
    24

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", Definition 2.
    """
    return _grid("mesh", k, n, f"mesh:k={k},n={n}")


def torus(k: int, n: int) -> Network:
    """The (k, n)-torus T(k, n), the k-ary n-cube: the mesh plus wrap-around edges.

    For k = 2 the wrap-around edges coincide with mesh edges and are not doubled.

    Examples
    --------
    >>> torus(8, 2).num_links
    256

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", Definition 2.
    """
    return _grid("torus", k, n, f"torus:k={k},n={n}")


def hypercube(d: int) -> Network:
    """The d-dimensional hypercube M(2, d) = T(2, d); node ids are the d-bit addresses.

    Examples
    --------
    >>> hypercube(4).num_links
    64
    """
    if not 1 <= d <= 22:
        raise UserError(f"hypercube dimension d={d} is out of range (1..22)")
    net = _grid("hypercube", 2, d, f"hypercube:d={d}")
    net.label_of = str
    return net


def from_networkx(graph: nx.Graph, name: str = "graph") -> Network:
    """Wrap any undirected networkx graph; nodes are numbered in ``graph.nodes`` order.

    Examples
    --------
    >>> import networkx as nx
    >>> net = from_networkx(nx.petersen_graph(), "petersen")
    >>> net.num_nodes, net.num_links
    (10, 30)
    """
    nodes = list(graph.nodes)
    if not nodes:
        raise UserError(f"{name} has no nodes")
    index = {v: i for i, v in enumerate(nodes)}
    pairs = {tuple(sorted((index[u], index[v]))) for u, v in graph.edges() if u != v}
    edges = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    names = [",".join(map(str, v)) if isinstance(v, tuple) else str(v) for v in nodes]
    return Network(
        name=name,
        kind="graph",
        num_nodes=len(nodes),
        edges=edges,
        label_of=lambda i, ns=names: ns[i],
        node_names=names,
    )


def read_edgelist(path: str | Path) -> Network:
    """Read a plain edge list: one ``u v`` pair per line, ``#`` starts a comment.

    Node names may be any tokens; integer names are numbered in numeric order, others in
    order of first appearance. Repeated edges (also ``v u`` after ``u v``) count once.

    Raises
    ------
    UserError
        Missing file, malformed line, self-loop, or no edges.
    """
    import networkx as nx  # lazily: only edge lists need it

    path = Path(path)
    graph = nx.Graph()
    for lineno, fields in read_rows(path, "edge list"):
        if len(fields) != 2:
            raise UserError(f"{path}:{lineno}: expected 'u v', got {' '.join(fields)!r}")
        u, v = fields
        if u == v:
            raise UserError(f"{path}:{lineno}: self-loop at node {u}")
        graph.add_edge(u, v)
    if graph.number_of_edges() == 0:
        raise UserError(f"edge list {str(path)!r} has no edges")
    names = list(graph.nodes)
    if all(n.lstrip("-").isdigit() for n in names):
        names.sort(key=int)
    ordered = nx.Graph()
    ordered.add_nodes_from(names)
    ordered.add_edges_from(graph.edges)
    return from_networkx(ordered, name=f"edgelist:{path.name}")
