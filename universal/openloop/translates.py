"""The translations of a torus or hypercube, for pooling the latencies of a pair with those of its
translates (SPEC §11; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks", 2003, §5.4, Figure 11).

Pooling translates. A k-ary n-cube (a torus; a hypercube is the 2-ary n-cube) is the Cayley
graph of the group Z_k^n: adding a vector ``t`` to every node's coordinates maps the network
onto itself. When the traffic matrix is invariant under these translations too
(``M[s+t, d+t] = M[s, d]``: uniform, tornado, nearest neighbour, ..., checked on the matrix) and
the routing treats every translate alike, the pair ``s -> d`` and each of its ``N`` translates
``(s+t) -> (d+t)`` see one latency distribution, so pooling the labelled packets of all ``N``
gives ``N`` times the packets of one run (:class:`Translations`).

Split from :mod:`universal.openloop.histograms`, which imports these back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from universal.errors import UserError


@dataclass(frozen=True)
class Translations:
    """The translations of a k-ary n-cube: node ``v`` has coordinates ``x_i = (v // k^i) % k`` and
    the translation by node ``t`` maps ``v`` to the node of coordinates ``x(v) + x(t) mod k``.

    The group acts regularly (exactly one translation takes ``s`` to any given node), so the pair
    ``s -> d`` has exactly ``N`` translates, and ``a -> b`` is one of them exactly when ``b - a``
    (:meth:`offset`) equals ``d - s``.

    Examples
    --------
    >>> g = Translations(4, 2)
    >>> g.size, g.shift(np.array([1]), 6).tolist()     # (1,0) + (2,1) = (3,1)
    (16, [7])
    >>> g.offset(np.array([7]), np.array([1])).tolist()  # (1,0) - (3,1) = (2,3)
    [14]
    """

    k: int
    n: int

    @property
    def size(self) -> int:
        """N, the number of nodes (and of translations)."""
        return self.k ** self.n

    def coords(self, v: np.ndarray) -> np.ndarray:
        """Coordinates of node ids, shape ``(len(v), n)``."""
        return (np.asarray(v, dtype=np.int64)[:, None] // self.k ** np.arange(self.n)) % self.k

    def node(self, x: np.ndarray) -> np.ndarray:
        """Node ids of coordinates (reduced mod k), shape ``(len(x),)``."""
        return (np.asarray(x, dtype=np.int64) % self.k) @ (self.k ** np.arange(self.n))

    def shift(self, v: np.ndarray, t: int) -> np.ndarray:
        """The nodes ``v`` translated by the coordinates of node ``t``."""
        return self.node(self.coords(v) + self.coords(np.array([t])))

    def offset(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The node whose coordinates are ``x(b) - x(a) mod k``: pairs with one offset are translates."""
        return self.node(self.coords(b) - self.coords(a))

    def generators(self) -> list[np.ndarray]:
        """The unit translations, one per dimension, as permutations of the node ids (they
        generate the group: invariance under them is invariance under every translation)."""
        v = np.arange(self.size)
        return [self.shift(v, self.k ** i) for i in range(self.n)]


def translations_of(network) -> Translations:
    """The translation group of a torus or hypercube, checked to map its links onto its links.

    Parameters
    ----------
    network : universal.networks.Network

    Returns
    -------
    Translations

    Raises
    ------
    UserError
        For any other network: its nodes are not all alike (a mesh's border, a dragonfly's
        groups, terminals and routers), so a pair's translates need not share its latency.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> translations_of(build_network("hypercube:d=3"))
    Translations(k=2, n=3)
    >>> translations_of(build_network("mesh:k=4,n=2"))
    Traceback (most recent call last):
    ...
    universal.errors.UserError: pooling translates needs a network that every translation maps onto itself (a torus or a hypercube); mesh:k=4,n=2 is not one
    """
    if network.kind not in ("torus", "hypercube") or network.terminals is not None:
        raise UserError(f"pooling translates needs a network that every translation maps onto itself (a torus "
                        f"or a hypercube); {network.name} is not one")
    group = Translations(int(network.params["k"]), int(network.params["n"]))
    tail, head = np.asarray(network.link_tail, np.int64), np.asarray(network.link_head, np.int64)
    links = np.sort(tail * group.size + head)
    for g in group.generators():       # a second look: the group is one of the network's symmetries
        if group.size != network.num_nodes or not np.array_equal(np.sort(g[tail] * group.size + g[head]), links):
            raise UserError(f"pooling translates: the translations of {network.name} do not map its links onto "
                            "its links")
    return group


def check_invariant_traffic(group: Translations, matrix: np.ndarray, name: str, label=str) -> None:
    """Refuse a traffic matrix that a translation changes: ``M[s+t, d+t] != M[s, d]`` for some pair.

    Parameters
    ----------
    group : Translations
    matrix : ndarray, shape (N, N)
        The traffic matrix (rates of the pairs, any scale).
    name : str
        The traffic's name, for the message.
    label : callable
        Node id -> its label, for the message.

    Raises
    ------
    UserError
        Naming a pair and its translate whose rates differ.

    Examples
    --------
    >>> g = Translations(4, 1)
    >>> check_invariant_traffic(g, np.roll(np.eye(4), 2, axis=1), "tornado")
    >>> check_invariant_traffic(g, np.eye(4)[::-1], "bitcomp")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: traffic bitcomp is not translation invariant: 0->3 has rate 1 and its translate 1->0 rate 0, so translates of a pair need not share its latency distribution; pool translates under traffic whose matrix every translation leaves alone (uniform, tornado, neighbor, ...)
    """
    matrix = np.asarray(matrix, dtype=float)
    scale = max(float(np.abs(matrix).max()), 1e-300)
    for g in group.generators():
        moved = matrix[np.ix_(g, g)]               # moved[s, d] = M[g(s), g(d)]
        bad = np.abs(moved - matrix) > 1e-9 * scale
        if bad.any():
            where = np.argwhere(bad & (matrix > 0))     # a pair that sends, where there is one
            s, d = (int(x) for x in (where if len(where) else np.argwhere(bad))[0])
            raise UserError(f"traffic {name} is not translation invariant: {label(s)}->{label(d)} has rate "
                            f"{matrix[s, d]:.4g} and its translate {label(int(g[s]))}->{label(int(g[d]))} rate "
                            f"{moved[s, d]:.4g}, so translates of a pair need not share its latency distribution; "
                            "pool translates under traffic whose matrix every translation leaves alone (uniform, "
                            "tornado, neighbor, ...)")


#: Most pairs whose paths a deterministic path system is checked on before pooling translates
#: (every pair of a 1,024-node network; the check takes seconds there).
MAX_CHECKED_PAIRS = 1 << 20

#: Routers that treat every translate of a pair alike by construction: the torus routings of the
#: load analysis draw a path from the offset ``d - s`` alone, GOAL its quadrant from the offset,
#: MIN AD, UGAL and CHAOS choose by graph distances, room, queue lengths and uniform draws (the
#: order in which a node's links are numbered differs between nodes, but a uniform draw among tied
#: candidates, or among the links a packet is deflected on, does not depend on that order).
_ALIKE_BY_CONSTRUCTION = ("torus", "goal", "min-adaptive", "ugal", "chaos")


def check_invariant_routing(group: Translations, router, label=str) -> None:
    """Refuse a routing that may route the translates of a pair differently.

    The routings of :data:`_ALIKE_BY_CONSTRUCTION` pass, as does a path system drawn from a
    torus routing of the load analysis (``lp:file=``, ``mix:``, ``2turn``; sampled from the
    offset). A deterministic path system is checked: the path of every pair must be the
    translate of the path from node 0 with the same offset (``shortest`` fails this on tori
    of even k: its lowest-numbered next hop goes + from one node and - from another). Any
    other random path system is refused: its distribution of paths cannot be checked here.

    Parameters
    ----------
    group : Translations
    router : universal.engine.routes.Router
    label : callable
        Node id -> its label, for the message.

    Raises
    ------
    UserError

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> net = build_network("torus:k=4,n=1")
    >>> check_invariant_routing(Translations(4, 1), build_router("dimension-order", net))
    >>> check_invariant_routing(Translations(4, 1), build_router("shortest", net))
    Traceback (most recent call last):
    ...
    universal.errors.UserError: routing shortest is not translation invariant: its path 1->3 is not the translate of its path 0->2, so translates of a pair need not share its latency distribution; pool translates with dor, val, romm, rlb, goal, min-adaptive, ugal, chaos or a deterministic path system whose paths are translates (dimension-order)
    """
    from universal.paths.torus.algorithms import ROUTING_FACTORIES, ROUTINGS
    from universal.registry import parse_spec

    if router.kind in _ALIKE_BY_CONSTRUCTION:
        return
    if router.kind == "paths" and parse_spec(router.name).name in {*ROUTINGS, *ROUTING_FACTORIES}:
        return
    advice = ("pool translates with dor, val, romm, rlb, goal, min-adaptive, ugal, chaos or a deterministic path system "
              "whose paths are translates (dimension-order)")
    if router.kind != "paths" or not getattr(router.routing, "deterministic", False):
        raise UserError(f"routing {router.name} draws random paths whose distribution cannot be checked for "
                        f"translation invariance here; {advice}")
    bad = _untranslated_path(group, router)
    if bad is not None:
        (s, d), (s0, d0) = bad
        raise UserError(f"routing {router.name} is not translation invariant: its path {label(s)}->{label(d)} "
                        f"is not the translate of its path {label(s0)}->{label(d0)}, so translates of a pair need "
                        f"not share its latency distribution; {advice}")


def _untranslated_path(group: Translations, router) -> tuple | None:
    """A pair whose deterministic path is not the translate of the path from node 0 with its
    offset, with that pair from node 0; None if every path is."""
    from universal.paths import route_paths
    from universal.workloads import Problem

    N, net = group.size, router.network
    if N * N > MAX_CHECKED_PAIRS:
        raise UserError(f"pooling translates with routing {router.name} checks its path of every pair, and "
                        f"{net.name} has {N * N:,} pairs (at most {MAX_CHECKED_PAIRS:,})")
    src, dst = np.repeat(np.arange(N), N), np.tile(np.arange(N), N)
    paths = route_paths(router.routing, Problem("translates", src, dst), net, np.random.default_rng(0))
    lengths, heads = np.diff(paths.offsets), np.asarray(net.link_head)[paths.links]
    offset = group.offset(src, dst)
    base = offset                             # the pair 0 -> offset is pair number offset (src 0)
    same = lengths == lengths[base]
    hop = np.arange(len(heads)) - np.repeat(paths.offsets[:-1], lengths)   # position in its path
    pair = np.repeat(np.arange(N * N), lengths)
    ok = same[pair]
    want = np.zeros(len(heads), dtype=np.int64)
    want[ok] = group.node(group.coords(heads[paths.offsets[base[pair[ok]]] + hop[ok]])
                          + group.coords(src[pair[ok]]))
    wrong = ~same.copy()
    np.logical_or.at(wrong, pair[ok], want[ok] != heads[ok])
    if not wrong.any():
        return None
    i = int(np.flatnonzero(wrong)[0])
    return (int(src[i]), int(dst[i])), (0, int(offset[i]))


def translate_mask(labelled: tuple, group: Translations, source: int, dest: int) -> np.ndarray:
    """Which labelled packets go from a translate of ``source`` to the same translate of ``dest``.

    Parameters
    ----------
    labelled : tuple
        ``RunResult.labelled_packets``: ``(src, dst, latency, hops)`` arrays.
    group : Translations
    source, dest : int

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> g = Translations(4, 1)
    >>> translate_mask((np.array([0, 1, 3, 1]), np.array([1, 2, 0, 3]), None, None), g, 0, 1).tolist()
    [True, True, True, False]
    """
    want = int(group.offset(np.array([source]), np.array([dest]))[0])
    return group.offset(np.asarray(labelled[0]), np.asarray(labelled[1])) == want
