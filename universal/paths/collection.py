"""Path collections and their parameters: size n, congestion C, dilation D, link loads, and
whether the collection is simple, shortest and leveled (Meyer auf der Heide & Scheideler,
"Communication in Parallel Systems", §2.3).

Paths are stored flat, as link ids: path ``i`` is ``links[offsets[i]:offsets[i+1]]``. The links
belong to ``network``, the host the packets really cross; for Valiant's trick on a butterfly
that is two butterflies back to back, not the user's BF(d).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from universal.errors import UserError
# Hosts with more links than this keep a collection's congestion C without its link loads
# (:attr:`PathCollection.congestion`): defined with the memory estimate, which counts them.
from universal.memory import KEEP_LOADS_LINKS
from universal.networks import Network


@dataclass(eq=False)
class PathCollection:
    """The paths chosen for one problem instance.

    Attributes
    ----------
    network : Network
        The host network whose links the paths use.
    offsets : ndarray of int64, shape (n + 1,)
    links : ndarray of int32 or int64
        Concatenated link ids of all paths (int32 when the host has fewer than 2^31 links:
        the path arrays are the largest the tool keeps).
    sources, dests : ndarray of int64
        End nodes of every path in the host network.
    system : str
        Name of the path system that chose them.
    note : str
        Caption remark (e.g. how Valiant's two passes are laid out).

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import butterfly
    >>> from universal.paths import route_paths
    >>> from universal.workloads import build_problem
    >>> net = butterfly(3)
    >>> prob = build_problem("permutation:bit-reversal", net, np.random.default_rng(0))
    >>> paths = route_paths("dimension-order", prob, net, np.random.default_rng(0))
    >>> paths.congestion, paths.dilation
    (2, 3)
    """

    network: Network
    offsets: np.ndarray
    links: np.ndarray
    sources: np.ndarray
    dests: np.ndarray
    system: str = ""
    note: str = ""

    #: ``(d, passes)`` where the paths are a butterfly's level paths kept as the rows they pass
    #: (:class:`universal.paths.level_rows.LevelRowsCollection`), else None.
    level_rows = None

    def __post_init__(self) -> None:
        # Link ids in the smallest type that holds them (int32 below 2^31 links): the path array
        # is the largest the tool keeps, a hundred million hops on BF(20) with Valiant's trick.
        self.links = np.asarray(self.links).astype(self.network.link_type, copy=False)

    @classmethod
    def from_node_paths(cls, network: Network, node_paths: list, system: str = "explicit",
                        note: str = "") -> "PathCollection":
        """Build from paths given as node sequences, validating that consecutive nodes are adjacent."""
        lengths = np.array([len(p) - 1 for p in node_paths], dtype=np.int64)
        if np.any(lengths < 0):
            raise UserError("a path must name at least one node")
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        tails = np.concatenate([np.asarray(p[:-1], dtype=np.int64) for p in node_paths]) if node_paths else np.empty(0, np.int64)
        heads = np.concatenate([np.asarray(p[1:], dtype=np.int64) for p in node_paths]) if node_paths else np.empty(0, np.int64)
        links = network.links_between(tails, heads)
        sources = np.array([p[0] for p in node_paths], dtype=np.int64)
        dests = np.array([p[-1] for p in node_paths], dtype=np.int64)
        return cls(network, offsets, links, sources, dests, system, note)

    @property
    def size(self) -> int:
        """n, the number of paths."""
        return len(self.offsets) - 1

    @cached_property
    def lengths(self) -> np.ndarray:
        """The number of hops of every path (read-only).

        Paths of one length (leveled systems: butterflies, Valiant's trick) get one number
        broadcast to all of them instead of an array (34 MB on BF(20) with Valiant's trick)."""
        lengths = np.diff(self.offsets)
        if len(lengths) > 1 and lengths[0] == lengths.min() == lengths.max():
            return np.broadcast_to(lengths[:1], lengths.shape)
        lengths.flags.writeable = False
        return lengths

    @cached_property
    def dilation(self) -> int:
        """D, the length of a longest path."""
        return int(self.lengths.max()) if self.size else 0

    @cached_property
    def link_loads(self) -> np.ndarray:
        """Number of paths through every link of the host network.

        In the smallest signed integer type that holds the largest load (int8 for the usual
        C < 128): a host network may have a hundred million links. The count itself runs in
        uint8 when no load can wrap (see :func:`count_links`), an eighth of the int64 that
        ``np.bincount`` would allocate.

        >>> import numpy as np
        >>> from universal.networks import butterfly
        >>> from universal.workloads import build_problem
        >>> from universal.paths import route_paths
        >>> net = butterfly(3)
        >>> prob = build_problem("permutation:bit-reversal", net, np.random.default_rng(0))
        >>> loads = route_paths("dimension-order", prob, net, np.random.default_rng(0)).link_loads
        >>> loads.dtype, int(loads.sum())
        (dtype('int8'), 24)
        """
        return self._count_loads()

    def _count_loads(self) -> np.ndarray:
        # Paths of one length (leveled systems: butterflies, Valiant's trick) are counted hop
        # position by hop position, which keeps the counter writes within one level's links.
        equal = self.size > 0 and self.dilation == int(self.lengths.min())
        return count_links(self.links, self.network.num_links, width=self.dilation if equal else None)

    @cached_property
    def congestion(self) -> int:
        """C, the largest number of paths that use one link.

        The link loads it is the largest of are kept (:attr:`link_loads`) unless the host has
        more than :data:`KEEP_LOADS_LINKS` links: then C is kept alone and the loads are counted
        again if asked for, which routing does not do (on BF(20) with Valiant's trick the loads
        take 168 MB, a tenth of the run's peak). Large level path collections on a butterfly get
        C from the rows their packets pass instead (:meth:`set_loads`).
        """
        if not len(self.links):
            return 0
        if "link_loads" in self.__dict__ or self.network.num_links <= KEEP_LOADS_LINKS:
            return int(self.link_loads.max())
        return int(self._count_loads().max())

    def set_loads(self, congestion: int, loads: np.ndarray | None = None) -> None:
        """Take C (and the link loads) from a count that did not read the path array (the level
        paths of a butterfly: :func:`universal.paths.level_loads.level_loads`); what is not given
        is counted from the paths when asked for."""
        self.__dict__["congestion"] = int(congestion)
        if loads is not None:
            self.__dict__["link_loads"] = loads

    def load_histogram(self) -> dict[int, int]:
        """``{load: number of links with that load}`` over all links of the host network."""
        counts = np.bincount(self.link_loads)
        return {int(load): int(c) for load, c in enumerate(counts) if c}

    def node_path(self, i: int) -> list[int]:
        """Path ``i`` as a list of node ids."""
        links = self.links[self.offsets[i]:self.offsets[i + 1]]
        if len(links) == 0:
            return [int(self.sources[i])]
        return [int(self.network.link_tail[links[0]]), *map(int, self.network.link_head[links])]

    @cached_property
    def is_simple(self) -> bool:
        """True if no path uses the same (undirected) edge twice."""
        if self.network.kind == "butterfly" and self.is_leveled:
            return True  # levels climb along every path, so no path comes back to an edge
        owner = np.repeat(np.arange(self.size, dtype=np.int64), self.lengths)
        keys = np.sort(owner * (self.network.num_edges + 1) + self.links // 2)
        return bool(np.all(np.diff(keys) != 0))

    @cached_property
    def is_shortest(self) -> bool | None:
        """True if every path is a shortest path; None if distances are too costly to compute."""
        dist = self.network.distances(self.sources, self.dests)
        if dist is None:
            return None
        return bool(np.all(self.lengths == dist))

    @cached_property
    def is_leveled(self) -> bool | None:
        """True if the nodes can be given levels so that every used link goes from level i to i + 1.

        None if the collection is too large for the general check (networks without
        levels and more than a million used links).
        """
        net = self.network
        if net.kind == "butterfly" and net.levels is not None:
            # Butterfly link 2e climbs from level i to i + 1 and link 2e + 1 comes back down
            # (see universal.networks.generators): leveled by the butterfly's own levels exactly
            # when every link id is even, read without sorting or building the edge array.
            return not _any_odd(self.links)
        used = np.unique(self.links)
        tails, heads = net.link_tail[used], net.link_head[used]
        if np.isin(used ^ 1, used).any():
            return False  # a link and its reverse (ids 2e, 2e + 1) cannot both climb one level
        if len(used) > 1_000_000:
            return None
        return _has_level_function(tails.tolist(), heads.tolist())

    @cached_property
    def is_shortcut_free(self) -> bool | None:
        """True if no piece of a path can be shortcut by pieces of the collection's paths.

        Pieces of paths joined end to end are walks in the digraph of the links the collection
        uses, and a subpath of a shortest path is shortest, so the collection is shortcut-free
        exactly when every path is a shortest path of that digraph (survey §1: leveled =>
        shortest => shortcut-free). Leveled or shortest collections are shortcut-free at once;
        otherwise breadth-first search from every source decides, or None when that would
        cost more than about 20 million node visits.

        Examples
        --------
        >>> from universal.networks import build_network
        >>> net = build_network("mesh:k=3,n=1")              # a line 0 - 1 - 2
        >>> PathCollection.from_node_paths(net, [[0, 1, 2], [1, 0]]).is_shortcut_free
        True
        >>> # 0 -> 1 -> 0 -> 1 is longer than the piece 0 -> 1 of the other path
        >>> PathCollection.from_node_paths(net, [[0, 1, 2], [1, 0, 1, 2]]).is_shortcut_free
        False
        """
        if self.is_leveled or self.is_shortest:
            return True
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import shortest_path

        net = self.network
        used = np.unique(self.links)
        graph = csr_matrix((np.ones(len(used)), (net.link_tail[used], net.link_head[used])),
                           shape=(net.num_nodes, net.num_nodes))
        unique = np.unique(self.sources)
        if len(unique) * net.num_nodes > 20_000_000:
            return None
        for lo in range(0, len(unique), 256):
            chunk = unique[lo:lo + 256]
            dist = shortest_path(graph, directed=True, unweighted=True, indices=chunk)
            mine = np.isin(self.sources, chunk)
            row = np.searchsorted(chunk, self.sources[mine])
            if np.any(self.lengths[mine] > dist[row, self.dests[mine]]):
                return False
        return True

    def summary(self) -> dict:
        """n, C, D and the four flags (survey §1: leveled => shortest => shortcut-free => simple)."""
        return {
            "paths": self.system,
            "n": self.size,
            "C": self.congestion,
            "D": self.dilation,
            "simple": self.is_simple,
            "shortest": self.is_shortest,
            "shortcut_free": self.is_shortcut_free,
            "leveled": self.is_leveled,
        }


def _any_odd(links: np.ndarray, chunk: int = 1 << 22) -> bool:
    """Whether some entry of ``links`` is odd, in chunks (no temporary as large as the paths)."""
    return any(bool(np.bitwise_and(links[i:i + chunk], 1).any()) for i in range(0, len(links), chunk))


def count_links(links: np.ndarray, num_links: int, width: int | None = None,
                block_bytes: int = 1 << 22) -> np.ndarray:
    """How often every link id in ``0..num_links - 1`` occurs in ``links``, in a small type.

    The count runs in uint8, a byte per link: a path collection on BF(20) with Valiant's trick has
    168 million links, whose int64 ``np.bincount`` (plus the int64 copy of int32 ids it makes) would
    take 2.7 GB where this takes 0.17 GB. A load of 256 or more wraps a byte, which the total
    reveals (every wrap loses 256 from it); then the count is redone in int32 or int64. Given
    ``width``, ``links`` holds paths of ``width`` hops each, and is counted in blocks of paths, hop
    position by hop position: on a leveled network, whose link ids run level by level, consecutive
    writes then fall within one level's links (in cache) instead of all over the counter, about
    twice as fast on BF(20).

    Parameters
    ----------
    links : ndarray of int
        Link ids, each in ``0..num_links - 1``.
    num_links : int
    width : int, optional
        The common length of the paths stored in ``links`` (``len(links)`` a multiple of it);
        None when the paths differ in length (then counted in the order given).
    block_bytes : int
        About how many bytes of ``links`` one block reorders (with ``width``).

    Returns
    -------
    ndarray
        Of the smallest signed integer type (int8, int16, int32, int64) holding the largest count.

    Examples
    --------
    >>> count_links(np.array([0, 2, 2]), 4).tolist()
    [1, 0, 2, 0]
    >>> count_links(np.array([0, 2, 1, 3, 1, 2]), 4, width=2).tolist()   # paths (0, 2), (1, 3), (1, 2)
    [1, 2, 2, 1]

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", §2.3 (congestion C is
    the largest of these counts).
    """
    links = np.asarray(links)
    counts = np.zeros(num_links, dtype=np.uint8)
    if width and len(links) % width == 0 and len(links) > width:
        rows = links.reshape(-1, width)
        step = max(1, block_bytes // (links.itemsize * width))
        for lo in range(0, len(rows), step):
            # the transposed copy of a block (a few MB) lists its hops by position along the paths
            np.add.at(counts, rows[lo:lo + step].T.ravel(), np.uint8(1))
    else:
        np.add.at(counts, links, np.uint8(1))
    if len(links) > 255 and int(counts.sum(dtype=np.int64)) != len(links):
        # some load reached 256 and wrapped: count again in a type that holds every load
        wide = np.int32 if len(links) < np.iinfo(np.int32).max else np.int64
        counts = np.zeros(num_links, dtype=wide)
        np.add.at(counts, links, wide(1))
    top = int(counts.max()) if num_links else 0
    small = next(t for t in (np.int8, np.int16, np.int32, np.int64) if top <= np.iinfo(t).max)
    if counts.dtype == np.uint8 and small == np.int8:
        return counts.view(np.int8)  # every count is below 128: the same bytes, no copy
    return counts.astype(small) if small != counts.dtype else counts


def _has_level_function(tails: list[int], heads: list[int]) -> bool:
    """Whether levels exist with level(head) = level(tail) + 1 on every given link."""
    adjacent: dict[int, list[tuple[int, int]]] = {}
    for u, v in zip(tails, heads):
        adjacent.setdefault(u, []).append((v, 1))
        adjacent.setdefault(v, []).append((u, -1))
    level: dict[int, int] = {}
    for start in adjacent:
        if start in level:
            continue
        level[start] = 0
        queue = deque([start])
        while queue:
            u = queue.popleft()
            for v, step in adjacent[u]:
                want = level[u] + step
                if v not in level:
                    level[v] = want
                    queue.append(v)
                elif level[v] != want:
                    return False
    return True
