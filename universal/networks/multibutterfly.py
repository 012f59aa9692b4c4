"""The s-ary d-dimensional multibutterfly (s,d)-MBF, built from random splitters.

Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §5.1 (after Upfal,
"An O(log N) deterministic packet routing scheme", 1989):

* An s-ary m-splitter is a bipartite graph with m inputs and m outputs; the outputs form √s
  output sets of m/√s nodes, and every input has √s/2 edges into each output set, the edges into
  one output set forming an expander.
* The (s,d)-MBF has levels 0..d of M = √s^d rows each. Level i (i < d) is cut into √s^i blocks
  of m_i = √s^(d-i) consecutive rows; each block is the input side of an s-ary m_i-splitter whose
  √s output sets are the blocks of m_(i+1) consecutive rows of level i + 1 below it. So a node has
  s/2 edges down (√s/2 into each of the √s output sets) and, except on the last level, s/2 up.

What stands in for the expanders: between a splitter's m inputs and each of its output sets
(m/√s nodes) a uniformly random simple bipartite graph in which every input has √s/2 and every
output s/2 edges (a configuration model: the inputs' √s/2 edge ends are matched with a random
permutation of the outputs' s/2 ends; a pair matched twice is repaired by swapping ends with a
random other edge of the same graph until the graph is simple). :func:`splitter_expansion`
measures how well a drawn splitter expands.

Choices the definition leaves open or that this tool makes:

* √s must be an even integer (√s/2 edges per output set): s = 4, 16, 36, 64, 100, ... Other s are
  refused. s = 4 gives one edge into each of two output sets: a butterfly-like network whose
  splitters are random matchings (no expansion beyond 1).
* The last level's output sets are single nodes, so the definition's √s/2 edges from an input to
  one output would all be parallel. Networks here are simple graphs (the edge array, the link
  lookup by end nodes and the networkx view assume it), so those √s/2 edges are one edge: each
  last splitter is the complete bipartite graph K(√s, √s), and a node of level d - 1 has √s links
  down instead of s/2 (a multi-edge would only have added bandwidth on that link).
* Node ``i * M + row`` is row ``row`` of level ``i``; labels print ``level,row``. Problems go
  from the inputs (level 0) to the outputs (level d), as on the butterfly.

A packet at node (i, r) bound for output row t must move into the output set of r's splitter
that contains t: the rows r' of level i + 1 with r' // m_(i+1) = t // m_(i+1). Those edges are
:func:`splitter_links`, the allowed set of the survey's splitter routing rule; a path system
picking one of them per level (``dimension-order``: the lowest-numbered; ``random-splitter``: a
random one) routes obliviously on the network today.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from universal.errors import UserError
from universal.networks.base import Network

#: Largest network built (links): drawing the random splitters of 8 million links takes about 8 s.
MAX_LINKS = 20_000_000


def allowed_s(s: int) -> bool:
    """Whether s is a valid arity: √s an even integer (4, 16, 36, 64, ...).

    >>> [s for s in range(1, 70) if allowed_s(s)]
    [4, 16, 36, 64]
    """
    root = math.isqrt(s)
    return s >= 4 and root * root == s and root % 2 == 0


def multibutterfly(s: int, d: int, seed: int = 0) -> Network:
    """The s-ary d-dimensional multibutterfly with random splitters (see the module docstring).

    Parameters
    ----------
    s : int
        Arity, with √s an even integer (4, 16, 36, 64, ...).
    d : int
        Dimension: levels 0..d of √s^d rows.
    seed : int
        Seed of the random splitters (the same seed gives the same network).

    Returns
    -------
    Network
        ``kind = "multibutterfly"``, leveled with depth d, inputs = level 0, outputs = level d.

    Examples
    --------
    >>> net = multibutterfly(16, 2)
    >>> net.num_nodes, net.num_edges    # 3 levels of 16 rows; 16 x 8 edges, then 16 x 4
    (48, 192)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §5.1;
    E. Upfal, "An O(log N) deterministic packet routing scheme", STOC 1989.
    """
    if not allowed_s(s):
        raise UserError(f"multibutterfly arity s={s} must be a square with an even root (4, 16, 36, 64, ...): "
                        f"every input has sqrt(s)/2 edges into each of sqrt(s) output sets")
    if d < 1:
        raise UserError(f"multibutterfly dimension d={d} must be at least 1")
    root = math.isqrt(s)
    rows = root ** d
    links = 2 * rows * (root * (root // 2) * (d - 1) + root)
    name = f"multibutterfly:s={s},d={d},seed={seed}"
    if links > MAX_LINKS:
        raise UserError(f"{name} would have {links:,} links, more than this tool handles ({MAX_LINKS:,})")
    rng = np.random.default_rng(seed)
    parts = [_splitter_level(root, d, level, rows, rng) for level in range(d)]
    edges = np.concatenate(parts)
    return Network(
        name=name,
        kind="multibutterfly",
        num_nodes=(d + 1) * rows,
        edges=edges,
        params={"s": s, "d": d, "seed": seed},
        levels=np.repeat(np.arange(d + 1, dtype=np.int16), rows),
        depth=d,
        inputs=np.arange(rows, dtype=np.int64),
        outputs=d * rows + np.arange(rows, dtype=np.int64),
        label_of=lambda v, r=rows: f"{v // r},{v % r}",
    )


def _splitter_level(root: int, d: int, level: int, rows: int, rng: np.random.Generator) -> np.ndarray:
    """The edges from ``level`` to ``level + 1``: one random bipartite graph per (splitter, output set)."""
    m = root ** (d - level)          # inputs of a splitter
    q = m // root                    # nodes of an output set
    if q == 1:
        # Output sets of one node: every input of the splitter to every output (see the docstring).
        tail = np.repeat(np.arange(rows, dtype=np.int64), root)
        head = (tail // root) * root + np.tile(np.arange(root, dtype=np.int64), rows)
    else:
        tail, head = _random_biregular(rows // m, root, m, q, root // 2, rng)
    return np.stack([level * rows + tail, (level + 1) * rows + head], axis=1)


def _random_biregular(splitters: int, root: int, m: int, q: int, a: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Rows (tail, head) of ``splitters * root`` random simple bipartite graphs: graph g joins the
    m inputs of splitter g // root (rows ``(g // root) m ..``) to output set g % root (rows
    ``(g // root) m + (g % root) q ..``); inputs have degree a, outputs a * root."""
    graphs = splitters * root
    per = m * a                                         # edges of one graph
    g = np.repeat(np.arange(graphs, dtype=np.int64), per)
    left = np.tile(np.repeat(np.arange(m, dtype=np.int64), a), graphs)
    right_ends = np.tile(np.repeat(np.arange(q, dtype=np.int64), a * root), graphs)
    # A random permutation of each graph's output ends: sort by (graph, random key).
    order = np.lexsort((rng.random(len(g)), g))
    right = right_ends[order]
    _make_simple(g, left, right, per, m, q, rng)
    base = (g // root) * m
    return base + left, base + (g % root) * q + right


def _make_simple(g: np.ndarray, left: np.ndarray, right: np.ndarray, per: int, m: int, q: int,
                 rng: np.random.Generator) -> None:
    """Swap output ends (in place) until no (graph, input, output) repeats; degrees are unchanged.

    In rounds: every repeated edge proposes to swap its output with a random edge of its graph;
    a swap is made when it creates no pair that exists already and no other swap of the round
    touches either edge. Repeats are few (about a²/(2q) per input), so a few rounds suffice.
    Edges are stored graph by graph, ``per`` each, so edge ``G * per + x`` is edge x of graph G.
    """
    base = g * m + left
    for _ in range(10_000):
        keys = base * q + right
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        repeated = order[np.flatnonzero(ordered[1:] == ordered[:-1]) + 1]
        if not len(repeated):
            return
        partner = g[repeated] * per + rng.integers(0, per, len(repeated))
        new_mine = base[repeated] * q + right[partner]
        new_theirs = base[partner] * q + right[repeated]
        ok = (right[repeated] != right[partner]) & ~_present(ordered, new_mine) & ~_present(ordered, new_theirs)
        ok &= ~np.isin(partner, repeated)
        chosen = np.flatnonzero(ok)
        _, first = np.unique(partner[chosen], return_index=True)       # one swap per partner edge
        a, b = repeated[chosen[first]], partner[chosen[first]]
        right[a], right[b] = right[b].copy(), right[a].copy()
    raise UserError("could not draw a simple random splitter; try another seed")  # pragma: no cover


def _present(ordered: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which ``keys`` occur in the sorted array ``ordered``."""
    at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
    return ordered[at] == keys


# --- the splitter structure: allowed next links -------------------------------------------------


def _root(network: Network) -> int:
    if network.kind != "multibutterfly":
        raise UserError(f"splitter routing needs a multibutterfly, not {network.name}")
    return math.isqrt(network.params["s"])


@dataclass(frozen=True)
class SplitterTable:
    """Every node's downward links grouped by output set.

    Attributes
    ----------
    links : list of ndarray
        ``links[i]`` has shape (M, √s, k_i): the links from row r of level i into output set j of
        r's splitter, in increasing order of the row they reach (k_i = √s/2, and 1 on the last level).
    block : list of int
        ``block[i]`` = m_(i+1), the size of the output sets below level i.
    """

    links: list
    block: list


def splitter_table(network: Network) -> SplitterTable:
    """The :class:`SplitterTable` of a multibutterfly (cached per network).

    >>> net = multibutterfly(16, 2)
    >>> table = splitter_table(net)
    >>> table.links[0].shape, table.links[1].shape, table.block
    ((16, 4, 2), (16, 4, 1), [4, 1])
    """
    cached = network.__dict__.get("_splitter_table")
    if cached is None:
        cached = network.__dict__["_splitter_table"] = _table(network)
    return cached


def _table(network: Network) -> SplitterTable:
    root = _root(network)
    d, rows = network.depth, len(network.inputs)
    tail, head = network.link_tail, network.link_head
    down = np.flatnonzero(network.levels[head] == network.levels[tail] + 1)
    down = down[np.lexsort((head[down], tail[down]))]       # by tail, then by the row reached
    links, block = [], []
    start = 0
    for level in range(d):
        per = (root // 2 if level < d - 1 else 1) * root
        count = rows * per
        mine = down[start:start + count]
        start += count
        links.append(mine.reshape(rows, root, per // root))
        block.append(root ** (d - level - 1))
    return SplitterTable(links, block)


def splitter_links(network: Network, nodes: np.ndarray, dest_rows: np.ndarray) -> np.ndarray:
    """The allowed next links of the splitter rule: for a packet at ``nodes[p]`` (level i < d)
    bound for output row ``dest_rows[p]``, the links into the output set of its splitter that
    leads there.

    Parameters
    ----------
    network : Network
        A multibutterfly.
    nodes : array_like of int
        Current nodes, all on one level i < d, each in a splitter from which ``dest_rows`` can
        be reached (row // m_i = destination row // m_i).
    dest_rows : array_like of int
        Destination rows (output index 0..M-1).

    Returns
    -------
    ndarray of shape (len(nodes), k)
        Link ids, k = √s/2 (1 on the last level), in increasing order of the row they reach.

    Examples
    --------
    >>> net = multibutterfly(16, 2)
    >>> links = splitter_links(net, [0], [13])        # from (0, 0) towards output row 13
    >>> [net.link_label(int(l)) for l in links[0]]    # both into rows 12..15 of level 1
    ['0,0->1,13', '0,0->1,14']

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §5.1.
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    dest_rows = np.asarray(dest_rows, dtype=np.int64)
    table = splitter_table(network)
    rows = len(network.inputs)
    level = np.unique(network.levels[nodes]) if len(nodes) else np.array([0])
    if len(level) != 1 or not 0 <= int(level[0]) < network.depth:
        raise UserError("splitter_links takes nodes of one level below the outputs")
    i = int(level[0])
    root = _root(network)
    row = nodes - i * rows
    m = table.block[i] * root
    if np.any(row // m != dest_rows // m):
        raise UserError("a destination row is not reachable from its node's splitter")
    out_set = (dest_rows // table.block[i]) % root
    return table.links[i][row, out_set]


def splitter_paths(network: Network, sources: np.ndarray, dest_rows: np.ndarray,
                   rng: np.random.Generator | None = None) -> np.ndarray:
    """Level-by-level paths from inputs to output rows: at each level one allowed link, the
    lowest-numbered row (``rng`` None) or a uniformly random one.

    Returns
    -------
    ndarray of shape (len(sources), d)
        Link ids, hop by hop.

    Examples
    --------
    >>> net = multibutterfly(16, 2)
    >>> links = splitter_paths(net, np.array([0]), np.array([13]))
    >>> [net.link_label(int(l)) for l in links[0]]
    ['0,0->1,13', '1,13->2,13']
    """
    d = network.depth
    nodes = np.asarray(sources, dtype=np.int64).copy()
    out = np.empty((len(nodes), d), dtype=np.int64)
    for level in range(d):
        choices = splitter_links(network, nodes, dest_rows)
        pick = np.zeros(len(nodes), dtype=np.int64) if rng is None else rng.integers(0, choices.shape[1], len(nodes))
        out[:, level] = choices[np.arange(len(nodes)), pick]
        nodes = network.link_head[out[:, level]]
    return out


__all__ = ["SplitterTable", "allowed_s", "multibutterfly", "splitter_links", "splitter_paths", "splitter_table"]
