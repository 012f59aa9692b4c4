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
from universal.networks import Network


@dataclass(eq=False)
class PathCollection:
    """The paths chosen for one problem instance.

    Attributes
    ----------
    network : Network
        The host network whose links the paths use.
    offsets : ndarray of int64, shape (n + 1,)
    links : ndarray of int64
        Concatenated link ids of all paths.
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
        return np.diff(self.offsets)

    @cached_property
    def dilation(self) -> int:
        """D, the length of a longest path."""
        return int(self.lengths.max()) if self.size else 0

    @cached_property
    def link_loads(self) -> np.ndarray:
        """Number of paths through every link of the host network."""
        return np.bincount(self.links, minlength=self.network.num_links)

    @cached_property
    def congestion(self) -> int:
        """C, the largest number of paths that use one link."""
        return int(self.link_loads.max()) if len(self.links) else 0

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
        owner = np.repeat(np.arange(self.size, dtype=np.int64), self.lengths)
        keys = np.sort(owner * (len(self.network.edges) + 1) + self.links // 2)
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
        used = np.unique(self.links)
        tails, heads = net.link_tail[used], net.link_head[used]
        if net.kind == "butterfly" and net.levels is not None:
            return bool(np.all(net.levels[heads] - net.levels[tails] == 1))
        if len(used) > 1_000_000:
            return None
        return _has_level_function(tails.tolist(), heads.tolist())

    def summary(self) -> dict:
        """n, C, D and the three flags as plain values."""
        return {
            "paths": self.system,
            "n": self.size,
            "C": self.congestion,
            "D": self.dilation,
            "simple": self.is_simple,
            "shortest": self.is_shortest,
            "leveled": self.is_leveled,
        }


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
