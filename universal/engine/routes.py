"""Routing for the open-loop engine: oblivious paths drawn at creation, or adaptive hop by hop
(SPEC §11; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for
torus networks", 2003, §4).

Oblivious routing draws a packet's whole path when it is created:

* the torus routings of the load analysis (``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``,
  ``ival``) with the sampler of :mod:`universal.paths.torus.algorithms` - the very distribution
  whose exact channel loads ``universal load`` reports - expanded to link ids in bulk
  (:mod:`universal.engine.routes_draws`, with UGAL's candidate intermediates);
* any path system of :data:`universal.paths.PATH_SYSTEMS` on any network (``shortest``,
  ``random-shortest``, ``dimension-order``, ``valiant``, ...).

Adaptive routing (:data:`ADAPTIVE_ROUTINGS`) lets a packet choose its next link when it
arrives at a node (or is created), among the *allowed* links, the one with the fewest packets
waiting for it at the start of the step, ties broken at random:

``min-adaptive``
    MIN AD: allowed = the links to a neighbour one hop closer to the destination (any graph).
``goal``
    GOAL: at creation a direction per dimension as RLB picks it (the short way with probability
    ``(k - Delta)/k``, a tie ``Delta = k/2`` half and half); allowed = the links of that quadrant
    in the dimensions still to be corrected (k-ary n-cubes only).
``ugal:threshold=T``
    UGAL: at creation compare ``q_min * H_min`` with ``q_val * H_val + T`` (``q`` = the fewest
    packets waiting for a first link of the candidate, plus, with bounded buffers, that link's
    used credits, every VC class: :func:`universal.engine.adaptive.used_credits`; ``H`` = its
    hops; the Valiant candidate goes through a uniformly random intermediate node); on ``<=``
    route minimally adaptively to the destination, else minimally adaptively to the
    intermediate and then to the destination (Singh, "Load-balanced routing in interconnection
    networks", 2005, §3; threshold 0 by default). On a network with terminals a terminal's one
    link is both candidates' first, so ``q`` is read where they part, at the source terminal's
    router, as UGAL-L reads it (Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable
    Dragonfly Topology", ISCA 2008, §4.2): the fewest packets waiting for a link out of that
    router one hop closer to the target plus the link's used credits (the packets in its buffer
    at the next router, with unbounded buffers too); ``H`` stays the whole path's hops from the
    terminal, and the intermediate is a uniformly random router (none where it is the source's
    or the destination's router: the Valiant path is then a minimal one). On a dragonfly both
    are as Kim et al. define them: the minimal legs are the dragonfly's minimal paths, the
    fewest global links first (one between groups, none inside one), then the fewest hops,
    not MIN AD's hop-minimal ones, which may cross two; the intermediate is the router where
    the packet enters a random group other than the ends' (:func:`_dragonfly_via`).
``chaos[:queue=S]``
    CHAOS (Konstantinidou & Snyder, "The Chaos router", 1994): MIN AD's choice among the links
    with room, a shared queue of S places per node for the packets that find none, deflection
    from a full queue, no VCs; needs bounded buffers (:mod:`universal.engine.chaos`).
``ugal-l[:threshold=T]``, ``ugal-g[:threshold=T]``
    UGAL on the networks with terminals (dragonfly, fat tree, flattened butterfly, HyperX), as
    Kim, Dally, Scott & Abts ("Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA
    2008, §4.2) use it: every packet draws two candidate paths at creation, its ``minimal`` path
    and a non-minimal path (on the dragonfly through an intermediate group drawn among the
    ``g - 2`` groups other than the source's and the destination's, since through either of
    them Valiant's path is the minimal one; elsewhere ``valiant``'s random router), and picks
    one when it enters the network; it then follows that path. UGAL-L compares ``q_min * H_min``
    with ``q_val * H_val + T``, ``H`` the path's hops and ``q`` what the source router knows of
    the output port of the path's first router link: the packets waiting for it plus its used
    credits, the packets it has put into the link's buffer at the next router that are still
    there (with unbounded buffers too; a credit-based router sees exactly this). Without the
    credits the local queue of a dragonfly router whose minimal path leaves its group from
    another router never grows, and UGAL-L stays on minimal paths into a saturated global link.
    UGAL-G compares the packets waiting on all the links of each path, divided by the
    bandwidth, plus its hops (the delay a router with every queue in view would estimate),
    ``+ T`` on the non-minimal side. The approximation: the choice is made in the step the
    packet is created at its terminal, from the queues at the start of that step, one hop
    before a real router would make it. Minimal wins ties.

Random tie breaks are reproducible and independent of batching: every packet draws a 64-bit
``tie`` seed at creation from its run's generator, and its h-th decision uses the splitmix64
hash of ``tie + h`` (:func:`tie_uniform`).
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

# the creation-time draws; _TABLES and _DOR_TABLE_ENTRIES are still imported from here (compiled_draws, tests)
from universal.engine.routes_draws import (  # noqa: F401
    _DOR_TABLE_ENTRIES, _TABLES, RouteDraw, _dor_table_paths, _dragonfly_via, _expand_legs, _torus_paths, _ugal_via)
from universal.engine.ties import tie_uniform, tie_uniform_py
from universal.errors import UserError
from universal.networks import Network
from universal.registry import Registry, Spec, check_known_params, parse_spec

__all__ = ["ADAPTIVE_ROUTINGS", "Router", "RouteDraw", "build_router", "tie_uniform", "tie_uniform_py",
           "MAX_ADAPTIVE_NODES", "ugal_pick", "dragonfly_global_mask"]

#: Adaptive routing keeps an N x N x degree table of productive links.
MAX_ADAPTIVE_NODES = 1024


@dataclass(eq=False)
class Router:
    """One routing of an open-loop run: its name, kind and the tables it needs.

    ``kind`` is ``"torus"`` (a load-analysis routing), ``"paths"`` (a path system),
    ``"min-adaptive"``, ``"goal"``, ``"ugal"``, ``"chaos"`` (``extra["queue"]``: its shared-queue
    places per node, None for the VC budget) or ``"ugal-paths"`` (UGAL-L/G: two candidate paths
    drawn at creation, one chosen at injection; ``extra["mode"]`` is ``local`` or ``global``).
    """

    name: str
    kind: str
    network: Network
    routing: object = None          # the oblivious Routing or PathSystem
    threshold: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def adaptive(self) -> bool:
        return self.kind in ("min-adaptive", "goal", "ugal", "splitter", "chaos")

    @cached_property
    def k_n(self) -> tuple[int, int]:
        return int(self.network.params["k"]), int(self.network.params["n"])

    @cached_property
    def dir_link(self) -> np.ndarray:
        """``dir_link[v, dim, 0 or 1]``: the link leaving ``v`` in ``dim`` in the + or - direction."""
        k, n = self.k_n
        N = self.network.num_nodes
        v = np.arange(N, dtype=np.int64)
        out = np.empty((N, n, 2), dtype=np.int64)
        for dim in range(n):
            x = (v // k ** dim) % k
            for j, sign in enumerate((1, -1)):
                head = v + (((x + sign) % k) - x) * k ** dim
                out[:, dim, j] = self.network.links_between(v, head)
        return out

    @cached_property
    def group_minimal(self) -> bool:
        """Whether this routing's minimal legs are the dragonfly's minimal paths (UGAL on a
        dragonfly), which cross the fewest global links, rather than the fewest links."""
        return self.kind == "ugal" and self.network.kind == "dragonfly"

    @cached_property
    def global_first(self) -> tuple[np.ndarray, np.ndarray]:
        """``(cost, weight)`` of the dragonfly's minimal paths: every link weighs 1, a global
        link ``1 + N`` (N nodes, more than any path's hops), so ``cost[u, v] // N`` is the
        fewest global links from ``u`` to ``v`` and ``cost[u, v] % N`` the fewest hops among
        the paths that cross that few (:func:`dragonfly_global_mask`)."""
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import shortest_path

        net = self.network
        N = net.num_nodes
        weight = 1 + N * dragonfly_global_mask(net).astype(np.int64)
        graph = csr_matrix((weight.astype(np.float64), (net.link_tail, net.link_head)), shape=(N, N))
        cost = shortest_path(graph, method="D")
        if not np.isfinite(cost).all():
            raise UserError(f"{net.name} is not connected; adaptive routing needs paths between all nodes")
        return cost.astype(np.int64), weight

    @cached_property
    def distance(self) -> np.ndarray:
        """Hop distance between every two nodes, int32, shape (N, N); for UGAL on a dragonfly
        (:attr:`group_minimal`) the hops of the dragonfly's minimal paths (:attr:`global_first`)."""
        N = self.network.num_nodes
        if self.group_minimal:
            return (self.global_first[0] % N).astype(np.int32)
        v = np.arange(N, dtype=np.int64)
        d = self.network.distances(np.repeat(v, N), np.tile(v, N))
        if d is None:
            raise UserError(f"{self.network.name} is not connected; adaptive routing needs paths between all nodes")
        return d.reshape(N, N).astype(np.int32)

    @cached_property
    def productive(self) -> np.ndarray:
        """``productive[v, d, :]``: the links from ``v`` one hop closer to ``d`` (-1 padded); for
        UGAL on a dragonfly the links out of ``v`` on one of its minimal paths to ``d``, those
        crossing the fewest global links (:attr:`global_first`)."""
        net, dist = self.network, self.distance
        tail, head = net.link_tail, net.link_head
        if self.group_minimal:
            cost, weight = self.global_first
            closer = cost[head] + weight[:, None] == cost[tail]     # (links, N)
        else:
            closer = dist[head] == dist[tail] - 1                  # (links, N)
        N = net.num_nodes
        deg = np.bincount(tail, minlength=N)
        out = np.full((N, N, int(deg.max())), -1, dtype=np.int64)
        link, dest = np.nonzero(closer)
        v = tail[link]
        order = np.lexsort((link, dest, v))
        link, dest, v = link[order], dest[order], v[order]
        key = v * N + dest
        first = np.searchsorted(key, key)
        out[v, dest, np.arange(len(key)) - first] = link
        return out

    def draw(self, sources: np.ndarray, dests: np.ndarray, rng: np.random.Generator) -> RouteDraw:
        """The creation-time choices for packets ``sources[i] -> dests[i]`` (one generator)."""
        if self.kind == "torus":
            return _torus_paths(self, sources, dests, rng)
        if self.kind == "paths":
            from universal.paths import route_paths
            from universal.workloads import Problem

            coll = route_paths(self.routing, Problem("open-loop", sources, dests), self.network, rng)
            return RouteDraw(offsets=coll.offsets, links=coll.links, paths=coll)
        if self.kind == "ugal-paths":
            from universal.paths import route_paths
            from universal.workloads import Problem

            problem = Problem("open-loop", sources, dests)
            minimal, valiant = self.routing
            first = route_paths(minimal, problem, self.network, rng)
            second = route_paths(valiant, problem, self.network, rng)
            return RouteDraw(offsets=first.offsets, links=first.links, alt_offsets=second.offsets,
                             alt_links=second.links)
        if self.kind == "goal":
            k, n = self.k_n
            from universal.paths.torus.algorithms import ROUTINGS

            coords = lambda v: (v[:, None] // (k ** np.arange(n))[None, :]) % k   # noqa: E731
            c = (coords(dests) - coords(sources)) % k
            sign, dist, weight = ROUTINGS["rlb"]._options(k, c)       # RLB's quadrant rule
            total = weight.sum(axis=2)
            pick = (rng.random(c.shape) * total >= weight[:, :, 0]).astype(np.int64)
            s = np.take_along_axis(sign, pick[:, :, None], axis=2)[:, :, 0]
            D = np.take_along_axis(dist, pick[:, :, None], axis=2)[:, :, 0]
            return RouteDraw(signs=s.astype(np.int64), remaining=D.astype(np.int64))
        if self.kind == "ugal":
            return RouteDraw(via=_ugal_via(self.network, sources, dests, rng))
        return RouteDraw()

    def hops_bound(self) -> int:
        """An upper bound on the hops of one packet (sizes the per-packet tie streams)."""
        N = self.network.num_nodes
        if self.kind == "goal":
            k, n = self.k_n
            return n * (k - 1)
        if self.kind in ("min-adaptive", "ugal"):
            return 2 * int(self.distance.max())
        if self.kind == "chaos":                # deflections: no bound, the hash takes any count
            return N
        if self.kind == "splitter":
            return int(self.network.depth)
        return N


def dragonfly_global_mask(network: Network) -> np.ndarray:
    """Which links of a dragonfly are global: both ends routers, in different groups.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> int(dragonfly_global_mask(build_network("dragonfly:p=2,a=4,h=2")).sum())     # 36 routers x h = 2
    72
    """
    T, a = len(network.terminals), network.params["a"]
    tail, head = network.link_tail, network.link_head
    return (tail >= T) & (head >= T) & ((tail - T) // a != (head - T) // a)


ADAPTIVE_ROUTINGS: Registry[str] = Registry("adaptive routing")


@ADAPTIVE_ROUTINGS.register("min-adaptive", "MIN AD: next link among those one hop closer, fewest waiting (any graph)")
def _min_adaptive(spec: Spec, network: Network) -> Router:
    check_known_params(spec, set())
    return Router(spec.text, "min-adaptive", network)


@ADAPTIVE_ROUTINGS.register("chaos", "CHAOS: minimal adaptive, blocked packets into a shared node queue, "
                            "deflected from it when full; queue=S places per node (default the VC budget)")
def _chaos(spec: Spec, network: Network) -> Router:
    """CHAOS (Konstantinidou & Snyder, "The Chaos router", IEEE Trans. Computers, 1994), as
    :mod:`universal.engine.chaos` defines it in the synchronous-step model."""
    check_known_params(spec, {"queue"})
    queue = None
    if "queue" in spec.params:
        raw = spec.params["queue"]
        try:
            queue = int(raw)
        except ValueError:
            raise UserError(f"chaos queue must be a whole number of packets (got {raw!r})") from None
        if queue < 1:
            raise UserError(f"chaos needs a shared queue of at least 1 packet per node (got queue={queue})")
    return Router(spec.text, "chaos", network, extra={"queue": queue})


@ADAPTIVE_ROUTINGS.register("goal", "GOAL: RLB's quadrant at creation, then adaptive among its productive dimensions (tori)")
def _goal(spec: Spec, network: Network) -> Router:
    check_known_params(spec, set())
    if network.kind != "torus" or network.params.get("k", 0) < 3:
        raise UserError(f"goal routing needs a k-ary n-cube with k >= 3 (torus:k=,n=), not {network.name}")
    return Router(spec.text, "goal", network)


@ADAPTIVE_ROUTINGS.register("ugal", "UGAL: minimal or Valiant by queue x hops at the source "
                            "(with terminals: its router), threshold=T (default 0)")
def _ugal(spec: Spec, network: Network) -> Router:
    check_known_params(spec, {"threshold"})
    try:
        threshold = float(spec.params.get("threshold", 0))
    except ValueError:
        raise UserError(f"ugal threshold must be a number (got {spec.params['threshold']!r})") from None
    if not math.isfinite(threshold):
        raise UserError(f"ugal threshold must be a finite number (got {spec.params['threshold']!r})")
    return Router(spec.text, "ugal", network, threshold=threshold)


def _ugal_paths(spec: Spec, network: Network, mode: str) -> Router:
    from universal.paths import build_path_system

    check_known_params(spec, {"threshold"})
    if network.terminals is None:
        raise UserError(f"{spec.name} chooses between the minimal and Valiant paths of a network with terminals "
                        f"(dragonfly, fattree, flatfly, hyperx), not {network.name}; on tori use ugal")
    try:
        threshold = float(spec.params.get("threshold", 0))
    except ValueError:
        raise UserError(f"{spec.name} threshold must be a number (got {spec.params['threshold']!r})") from None
    pair = (build_path_system("minimal", network), build_path_system("valiant", network))
    if network.kind == "dragonfly":
        from universal.paths.datacenter import dragonfly_paths
        from universal.paths.systems import PathSystem

        # the non-minimal candidate goes through a group other than the source's and the
        # destination's: through either of them Valiant's path is the minimal one again
        pair = (pair[0], PathSystem("valiant", lambda prob, net, rng: dragonfly_paths(
            "valiant", prob.sources, prob.dests, net, rng, avoid_ends=True)))
    return Router(spec.text, "ugal-paths", network, routing=pair, threshold=threshold, extra={"mode": mode})


@ADAPTIVE_ROUTINGS.register("splitter", "the multibutterfly's splitter rule: any edge into the output set "
                            "toward the destination, deterministic (multibutterfly:s=,d= only)")
def _splitter(spec: Spec, network: Network) -> Router:
    """The deterministic splitter routing of the multibutterfly (Meyer auf der Heide & Scheideler,
    "Communication in Parallel Systems", 1996, §5.1, after Upfal 1989): a packet at level i may take
    any of its node's edges into the output set that leads to its destination row
    (:func:`universal.networks.multibutterfly.splitter_links`). The packets of one node bound for
    one output set that decide in the same step take those edges in turn, in packet-id order,
    starting with the one with the fewest packets waiting (ties to the lower row)."""
    check_known_params(spec, set())
    if network.kind != "multibutterfly":
        raise UserError(f"splitter routing needs a multibutterfly (multibutterfly:s=,d=), not {network.name}")
    return Router(spec.text, "splitter", network)


@ADAPTIVE_ROUTINGS.register("ugal-l", "UGAL-L: minimal or Valiant path by the source router's queue x hops "
                            "(networks with terminals), threshold=T")
def _ugal_l(spec: Spec, network: Network) -> Router:
    return _ugal_paths(spec, network, "local")


@ADAPTIVE_ROUTINGS.register("ugal-g", "UGAL-G: minimal or Valiant path by the queues along each path "
                            "(networks with terminals), threshold=T")
def _ugal_g(spec: Spec, network: Network) -> Router:
    return _ugal_paths(spec, network, "global")


def ugal_pick(store: np.ndarray, waiting: np.ndarray, credits: np.ndarray, cur: np.ndarray, end: np.ndarray,
              alt: np.ndarray, alt_end: np.ndarray, mode: np.ndarray, threshold: np.ndarray, first_hop: int,
              bandwidth: int) -> np.ndarray:
    """UGAL-L/G's choice: True where a packet takes its Valiant path ``store[alt:alt_end]`` rather
    than its minimal one ``store[cur:end]`` (see the module docstring).

    UGAL-L's queue of a candidate's first router link is what its source router sees of that
    output port: the packets waiting for the link, plus its used credits, the packets that
    crossed it and still sit in the link's buffer at the next router. UGAL-G adds the packets
    waiting for every link of the path.

    Parameters
    ----------
    store : ndarray
        The engine's route store (slot ids, one per hop).
    waiting : ndarray
        Packets waiting for every slot.
    credits : ndarray
        Packets in every slot's link buffer at its head (the engine's occupancy).
    cur, end, alt, alt_end : ndarray of int64
        The two candidates of every packet.
    mode : ndarray of int
        1 for UGAL-L, 2 for UGAL-G, per packet.
    threshold : ndarray of float
    first_hop : int
        Index of the first router link on a path (1 behind a terminal's own link).
    bandwidth : int

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> store = np.array([0, 1, 2, 0, 3, 4, 5, 2])
    >>> waiting = np.array([0, 6, 0, 1, 0, 0])
    >>> credits = np.zeros(6, dtype=np.int64)
    >>> one = lambda x: np.array([x])
    >>> ugal_pick(store, waiting, credits, one(0), one(3), one(3), one(8), one(1), one(0.0), 1, 1)  # 6*3 > 1*5
    array([ True])
    >>> ugal_pick(store, waiting, credits, one(0), one(3), one(3), one(8), one(2), one(0.0), 1, 1)  # 6+3 > 1+5
    array([ True])

    References
    ----------
    Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008, §4.2;
    Singh, "Load-balanced routing in interconnection networks", PhD thesis, Stanford 2005, §3.
    """
    h_min, h_val = end - cur, alt_end - alt

    def first(start: np.ndarray, hops: np.ndarray) -> np.ndarray:
        slot = store[np.minimum(start + first_hop, len(store) - 1)]
        return np.where(hops > first_hop, waiting[slot] + credits[slot], 0)

    local = first(cur, h_min) * h_min > first(alt, h_val) * h_val + threshold

    def along(start: np.ndarray, hops: np.ndarray) -> np.ndarray:
        owner = np.repeat(np.arange(len(start)), hops)
        at = np.repeat(start - np.concatenate([[0], np.cumsum(hops)[:-1]]), hops) + np.arange(int(hops.sum()))
        return np.bincount(owner, weights=waiting[store[at]], minlength=len(start))

    glob = along(cur, h_min) / bandwidth + h_min > along(alt, h_val) / bandwidth + h_val + threshold
    return np.where(mode == 1, local, glob)


def build_router(text: str, network: Network) -> Router:
    """The routing named ``text`` on ``network``: adaptive, a torus routing, or a path system.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("torus:k=4,n=2")
    >>> [build_router(r, net).kind for r in ("dor", "goal", "shortest")]
    ['torus', 'goal', 'paths']
    >>> d = build_router("dor", net).draw(np.array([0]), np.array([5]), np.random.default_rng(0))
    >>> d.offsets.tolist(), [net.link_label(e) for e in d.links]
    ([0, 2], ['0,0->1,0', '1,0->1,1'])
    """
    from universal.paths.torus.algorithms import ROUTINGS, get_routing
    from universal.paths import PATH_SYSTEMS, build_path_system

    spec = parse_spec(text)
    if spec.name in ("ugal-l", "ugal-g", "splitter"):  # no per-node-pair tables (and splitter is leveled)
        return ADAPTIVE_ROUTINGS.entry(spec.name).factory(spec, network)
    if spec.name in ADAPTIVE_ROUTINGS:
        if network.num_nodes > MAX_ADAPTIVE_NODES:
            raise UserError(f"adaptive routing handles at most {MAX_ADAPTIVE_NODES} nodes; "
                            f"{network.name} has {network.num_nodes:,}")
        if network.leveled:
            raise UserError(f"adaptive routing is not defined on the leveled network {network.name}")
        return ADAPTIVE_ROUTINGS.entry(spec.name).factory(spec, network)
    if spec.name in ROUTINGS and network.kind == "torus" and network.params.get("k", 0) >= 3 \
            and network.num_nodes <= 4096:
        return Router(spec.text, "torus", network, routing=get_routing(text))
    if spec.name in PATH_SYSTEMS:
        return Router(spec.text, "paths", network, routing=build_path_system(text, network))
    known = sorted(set(ADAPTIVE_ROUTINGS.names()) | set(PATH_SYSTEMS.names()))
    raise UserError(f"unknown routing {spec.name!r} (known: {', '.join(known)})")


def router_for_paths(paths) -> Router:
    """A router that hands the engine exactly the paths of a collection: packet ``i`` of a batch
    (:class:`~universal.engine.workload.Injection` ``batch`` with ``paths.sources`` and
    ``paths.dests``) follows path ``i``.

    It lets the open-loop engine route a batch problem on paths fixed before the run, as the
    batch engine does, so the two can be set side by side on the same paths.

    Parameters
    ----------
    paths : universal.paths.PathCollection

    Returns
    -------
    Router

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import build_network
    >>> from universal.paths import route_paths
    >>> from universal.workloads import build_problem
    >>> net = build_network("torus:k=4,n=1")
    >>> paths = route_paths("dimension-order", build_problem("permutation:tornado", net, np.random.default_rng(0)),
    ...                     net, np.random.default_rng(0))
    >>> router_for_paths(paths).draw(paths.sources, paths.dests, np.random.default_rng(0)).links.tolist() \\
    ...     == paths.links.tolist()
    True
    """
    from universal.paths import PathCollection
    from universal.paths.systems import PathSystem

    def the_paths(problem, network, rng):
        if not len(problem.sources):            # the engine's later creation chunks of a batch
            empty = np.zeros(0, dtype=np.int64)
            return PathCollection(paths.network, np.zeros(1, dtype=np.int64), empty, empty, empty, paths.system)
        if not (np.array_equal(problem.sources, paths.sources) and np.array_equal(problem.dests, paths.dests)):
            raise ValueError("router_for_paths: the packets are not those of the collection")
        return paths

    return Router(f"{paths.system or 'fixed'} (fixed)", "paths", paths.network, routing=PathSystem("fixed", the_paths))
