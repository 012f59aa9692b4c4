"""The :class:`Network` container: an undirected graph stored as numpy arrays.

Every undirected edge ``e = {u, v}`` (``u = edges[e, 0]``) gives two directed links:
link ``2e`` runs ``u -> v`` and link ``2e + 1`` runs ``v -> u`` (the multi-port model of
Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", §2.1). Arrays rather
than a networkx graph keep a butterfly with millions of links cheap; the networkx view is
built only when an algorithm needs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Callable

import numpy as np

from universal.errors import UserError

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class ComputedEdges:
    """The edge array of a network as a recipe: ``count`` edges, built by ``build()`` on first use.

    Examples
    --------
    >>> import numpy as np
    >>> net = Network("two", "graph", 3, ComputedEdges(2, lambda: np.array([[0, 1], [1, 2]])))
    >>> net.num_links, "edges" in net.__dict__
    (4, False)
    >>> net.edges.tolist(), "edges" in net.__dict__
    ([[0, 1], [1, 2]], True)
    """

    count: int
    build: Callable[[], np.ndarray]
    #: ``edge(e) -> (u, v)``: one edge without building the array (optional).
    edge: Callable[[int], tuple[int, int]] | None = None


def _normalize_label(text: str) -> str:
    """``" (3, 4) "`` -> ``"3,4"``: outer parentheses and spaces around commas do not matter."""
    return re.sub(r"\s*,\s*", ",", text.strip().removeprefix("(").removesuffix(")").strip())


@dataclass(eq=False)
class Network:
    """An undirected network with numbered nodes ``0..N-1`` and numbered directed links.

    Attributes
    ----------
    name : str
        The registered name with parameters, e.g. ``"butterfly:d=8"``.
    kind : str
        ``butterfly``, ``wrapped-butterfly``, ``multibutterfly``, ``mesh``, ``torus``, ``hypercube`` or
        ``graph``.
    num_nodes : int
        N.
    edges : ndarray of shape (E, 2)
        Undirected edges; link ``2e`` is ``edges[e,0] -> edges[e,1]``.
    params : dict
        Size parameters (``d``, ``k``, ``n``) for the structured families.
    levels : ndarray or None
        Level of every node for leveled networks (butterflies), else None.
    depth : int or None
        Number of link levels of a leveled network (d for BF(d) and W-BF(d)).
    inputs, outputs : ndarray or None
        Input and output nodes of a leveled network (level 0 and level ``depth``; the same
        nodes on a wrapped butterfly). Problems on leveled networks go from inputs to outputs.
    label_of : callable
        ``label_of(node) -> str``, the printed name of a node.
    terminals : ndarray or None
        The nodes that send and receive, on networks with concentration (dragonfly, fat tree,
        flattened butterfly, HyperX): there terminals are nodes ``0..T-1``, each joined to one
        router, and routers only forward. None means every node is an endpoint.
    router_of : ndarray or None
        ``router_of[t]``, the router (node id) terminal ``t`` hangs off; None without terminals.
    """

    name: str
    kind: str
    num_nodes: int
    edges: np.ndarray
    params: dict = field(default_factory=dict)
    levels: np.ndarray | None = None
    depth: int | None = None
    inputs: np.ndarray | None = None
    outputs: np.ndarray | None = None
    label_of: Callable[[int], str] = str
    node_names: list[str] | None = None
    terminals: np.ndarray | None = None
    router_of: np.ndarray | None = None

    def __post_init__(self) -> None:
        # A host network that only a path system's arithmetic needs (the two butterflies of
        # Valiant's trick) gives its edges as a recipe: routing never reads the edge array, which
        # on BF(20) twice over would take more than a gigabyte.
        if isinstance(self.edges, ComputedEdges):
            self.__dict__["_computed_edges"] = self.__dict__.pop("edges")

    def __getattr__(self, name: str):
        # Only reached when normal lookup fails: ``edges`` of a network built from a recipe.
        computed = self.__dict__.get("_computed_edges")
        if name == "edges" and computed is not None:
            edges = computed.build()
            self.__dict__["edges"] = edges
            return edges
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def num_edges(self) -> int:
        """E, the number of undirected edges (without building a computed edge array)."""
        computed = self.__dict__.get("_computed_edges")
        return computed.count if computed is not None and "edges" not in self.__dict__ else len(self.edges)

    @property
    def num_links(self) -> int:
        return 2 * self.num_edges

    @property
    def link_type(self) -> type:
        """The smallest integer type that holds every link id (int32 up to 2^31 links)."""
        return np.int32 if self.num_links <= np.iinfo(np.int32).max else np.int64

    @property
    def leveled(self) -> bool:
        return self.levels is not None

    @property
    def endpoints(self) -> np.ndarray:
        """The nodes traffic runs between: the terminals, or every node of a network without them.

        >>> from universal.networks import build_network
        >>> len(build_network("dragonfly:p=2").endpoints), len(build_network("torus:k=4,n=2").endpoints)
        (72, 16)
        """
        if self.terminals is not None:
            return self.terminals
        return np.arange(self.num_nodes, dtype=np.int64)

    @property
    def routers(self) -> np.ndarray:
        """The nodes that forward: every node that is not a terminal (all nodes without terminals)."""
        if self.terminals is None:
            return np.arange(self.num_nodes, dtype=np.int64)
        return np.arange(len(self.terminals), self.num_nodes, dtype=np.int64)

    @cached_property
    def link_tail(self) -> np.ndarray:
        """Tail node of every link."""
        tail = np.empty(self.num_links, dtype=np.int64)
        tail[0::2] = self.edges[:, 0]
        tail[1::2] = self.edges[:, 1]
        return tail

    @cached_property
    def link_head(self) -> np.ndarray:
        """Head node of every link."""
        head = np.empty(self.num_links, dtype=np.int64)
        head[0::2] = self.edges[:, 1]
        head[1::2] = self.edges[:, 0]
        return head

    @cached_property
    def _link_keys(self) -> tuple[np.ndarray, np.ndarray]:
        keys = self.link_tail * self.num_nodes + self.link_head
        order = np.argsort(keys, kind="stable")
        return keys[order], order

    def link_label(self, link: int) -> str:
        """The printed name ``tail->head`` of a link.

        >>> from universal.networks import build_network
        >>> build_network("torus:k=4,n=2").link_label(0)
        '0,0->1,0'
        """
        tail, head = self.link_ends(link)
        return f"{self.label_of(tail)}->{self.label_of(head)}"

    def link_ends(self, link: int) -> tuple[int, int]:
        """``(tail, head)`` of one link; from the recipe, if any, without building the edge array.

        >>> from universal.networks import build_network
        >>> build_network("butterfly:d=3").link_ends(3)  # link 3 runs back along edge 1, (0, 9)
        (9, 0)
        """
        link = int(link)
        computed = self.__dict__.get("_computed_edges")
        if computed is not None and computed.edge is not None and "edges" not in self.__dict__:
            u, v = computed.edge(link >> 1)
        else:
            u, v = (int(x) for x in self.edges[link >> 1])
        return (u, v) if link % 2 == 0 else (v, u)

    def links_between(self, tails: np.ndarray, heads: np.ndarray) -> np.ndarray:
        """Link ids of the links ``tails[i] -> heads[i]``.

        Parameters
        ----------
        tails, heads : array_like of int
            Node ids.

        Returns
        -------
        ndarray of int64

        Raises
        ------
        UserError
            If some pair is not joined by an edge.
        """
        tails = np.asarray(tails, dtype=np.int64)
        heads = np.asarray(heads, dtype=np.int64)
        sorted_keys, order = self._link_keys
        want = tails * self.num_nodes + heads
        at = np.searchsorted(sorted_keys, want)
        at = np.minimum(at, len(sorted_keys) - 1)
        missing = sorted_keys[at] != want if len(sorted_keys) else np.ones(len(want), bool)
        if np.any(missing):
            i = int(np.flatnonzero(missing)[0])
            raise UserError(
                f"no link from node {self.label_of(int(tails[i]))} to node "
                f"{self.label_of(int(heads[i]))} in {self.name}"
            )
        return order[at]

    @cached_property
    def graph(self) -> nx.Graph:
        """The network as a networkx graph on nodes ``0..N-1`` (built on first use)."""
        import networkx as nx  # lazily: most commands never need a networkx view

        g = nx.Graph()
        g.add_nodes_from(range(self.num_nodes))
        g.add_edges_from(map(tuple, self.edges.tolist()))
        return g

    @cached_property
    def _label_index(self) -> dict[str, int]:
        return {_normalize_label(self.label_of(v)): v for v in range(self.num_nodes)}

    def node(self, text: str | int) -> int:
        """Node id for a label as printed (e.g. ``"3,4"``) or an internal id.

        Labels win over ids when both could match (edge-list graphs with integer names).
        """
        key = _normalize_label(str(text))
        if key in self._label_index:
            return self._label_index[key]
        try:
            v = int(key)
        except ValueError:
            raise UserError(f"node {text!r} is not in {self.name}") from None
        if not 0 <= v < self.num_nodes:
            raise UserError(f"node {text!r} is not in {self.name} (ids run 0..{self.num_nodes - 1})")
        return v

    def distances(self, sources: np.ndarray, dests: np.ndarray) -> np.ndarray | None:
        """Hop distance of each (source, destination) pair.

        Closed forms on the structured families; breadth-first search otherwise (only for
        graphs small enough; returns None when it would be too expensive).
        """
        sources = np.asarray(sources, dtype=np.int64)
        dests = np.asarray(dests, dtype=np.int64)
        if self.kind in ("mesh", "torus", "hypercube"):
            k, n = self.params["k"], self.params["n"]
            total = np.zeros(len(sources), dtype=np.int64)
            s, t = sources.copy(), dests.copy()
            for _ in range(n):
                delta = np.abs(s % k - t % k)
                total += np.minimum(delta, k - delta) if self.kind != "mesh" else delta
                s //= k
                t //= k
            return total
        if self.kind in ("butterfly", "multibutterfly") and self.levels is not None:
            # From an input to an output the level path is a shortest path (d hops; on a
            # multibutterfly every input reaches every output, each splitter input having edges
            # into all its output sets); other pairs may need detours: breadth-first search.
            if np.all(self.levels[sources] == 0) and np.all(self.levels[dests] == self.depth):
                return np.full(len(sources), self.depth, dtype=np.int64)
        unique = np.unique(sources)
        if len(unique) * self.num_nodes > 20_000_000:
            return None
        from scipy.sparse.csgraph import shortest_path

        dist = shortest_path(self.adjacency, unweighted=True, indices=unique)
        row = np.searchsorted(unique, sources)
        result = dist[row, dests]
        if np.any(np.isinf(result)):
            return None
        return result.astype(np.int64)

    @cached_property
    def adjacency(self):
        """Symmetric scipy sparse adjacency matrix (CSR)."""
        from scipy.sparse import csr_matrix

        n = self.num_nodes
        data = np.ones(self.num_links, dtype=np.int8)
        return csr_matrix((data, (self.link_tail, self.link_head)), shape=(n, n))

    def summary(self) -> dict:
        """``{"name", "nodes", "links"}`` as in the CLI's JSON output, and ``terminals`` on
        networks with concentration."""
        out = {"name": self.name, "nodes": int(self.num_nodes), "links": int(self.num_links)}
        if self.terminals is not None:
            out["terminals"] = int(len(self.terminals))
        return out
