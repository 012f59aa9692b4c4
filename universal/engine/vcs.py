"""Virtual channels and the classes that make oblivious torus routing deadlock-free (SPEC §13;
Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003, §4.1 and Table 1).

The router model: every link has V virtual channels (VCs), each a buffer of b one-flit packets
at the link's head. A packet crosses a link only into a VC of the class its route assigns to
that hop and only if that VC had a free slot at the start of the step (credits). A VC here is a
*set*: any packet in it may leave, by priority (no head-of-line blocking). With V VCs and a
routing that needs G classes, class c owns the VCs ``v`` with ``v * G // V == c``; a packet
entering class c takes any of them with a free slot, so the class behaves as one buffer of
(its VCs x b) places, which is how the engine keeps it.

Classes (on a k-ary n-cube, a mesh or a hypercube). A channel's *type* is its dimension and
direction, ``2 * dim + (0 for +, 1 for -)``; on a torus with k > 2 the link from coordinate
k - 1 to 0 (+) or 0 to k - 1 (-) is the ring's wrap-around (its *dateline*). Along a route a
packet keeps a *level* and a *wrapped* bit:

* a hop whose type is lower than the previous hop's starts a new level (the route turned back
  to an earlier channel type, as Valiant's second phase does);
* a hop of the same type as the previous one that crosses a dateline when the packet has
  already crossed one in this run of hops also starts a new level (a ring is never gone round
  twice in one level);
* the wrapped bit is set by crossing a dateline and cleared by a change of type.

A hop's class is ``2 * level + wrapped`` on a torus (k > 2) and ``level`` on a mesh or
hypercube. Every dependency between consecutive hops then goes up in the order (level, type,
wrapped, position along the ring measured from the dateline), so the channel dependency graph
of the classes is acyclic (Dally & Seitz's condition) and no set of packets can deadlock with
bounded buffers. Dimension-order routing needs one level (the paper's 2 VCs on a torus),
Valiant's algorithm two (4, "two subnetworks of two VCs"); routings that correct dimensions in
random orders need more (counted exactly by :func:`classes_needed`; this scheme stands in for
the Linder-Harden scheme the paper uses for RLB).

GOAL's *-channels for the adaptive routings (``min-adaptive``, ``goal``, ``ugal``; the paper's
§4.1, extending the *-channels of Gravano, Pifarré, Berman and Sanz, "Adaptive deadlock- and
livelock-free routing with all minimal paths in torus networks", 1994). On a torus every
link has three classes: two escape classes ``*_0`` and ``*_1`` and one fully adaptive class
``non-*`` (``star_class``; a mesh or hypercube, with no wrap-around, needs one escape class: two
classes). A packet waiting at a node may take:

* the non-* class on any of its allowed links (MIN AD: every minimal direction; GOAL: the
  dimensions of its quadrant still to correct), or
* a * class on an allowed link of the *lowest* dimension still to correct - ``*_1`` if the
  packet has crossed that dimension's wrap-around (or this hop crosses it), else ``*_0``.

The escape hops alone are dimension-order routing in the packet's remaining quadrant with
dateline classes, and every dependency a packet can create from an escape channel to the next
escape channel it may request (directly, or after any non-* hops: Duato's extended dependency
graph) rises in the order (dimension, wrap bit, position from the dateline), since the lowest
dimension to correct never goes down, a packet never turns round within a dimension, and a
dimension is at most k - 1 hops long, so crosses its wrap-around once at most. That graph is
acyclic (the tests build it from every route), and a packet always has an escape option, so
with the choice below no set of packets can deadlock: the highest full escape buffer would hold
a packet whose escape option is a higher, full escape buffer. For this the choice must stay free:
the packet chooses an option when it arrives, one whose class buffer has room (at the start of
the step, the credit rule) whenever one does, and chooses again in every step in which the
class buffer it chose is full (:func:`universal.engine.adaptive.decide_star`), so it is never
left waiting for a full buffer while another of its options has room. UGAL's two phases (to the intermediate,
then to the destination) each route minimally adaptively, so each has its own three classes
(six in all; phase 2's above phase 1's in the order, and the wrap bits start afresh).

>>> from universal.networks import build_network
>>> net = build_network("torus:k=4,n=1")
>>> geo = channel_geometry(net)
>>> path = [net.links_between([v], [(v + 1) % 4])[0] for v in (2, 3, 0)]   # 2 -> 3 -> 0 -> 1
>>> path_classes(path, geo)                  # the hop 3 -> 0 crosses the dateline
[0, 1, 1]
"""

from __future__ import annotations

from dataclasses import dataclass
import numpy as np

from universal.errors import UserError
from universal.networks import Network

__all__ = ["ChannelGeometry", "VCPlan", "channel_geometry", "classes_needed", "classes_of_paths", "first_class",
           "next_class", "path_classes", "plan_vcs", "require_channel_geometry", "star_class", "star_classes",
           "MAX_VCS"]

#: The most virtual channels per link accepted (the per-class buffers are allocated per link).
MAX_VCS = 64
#: Tori with more nodes than this take the structural bound of :func:`classes_needed`.
_EXACT_OFFSETS = 4096


@dataclass(frozen=True)
class ChannelGeometry:
    """Per link: its channel type (``2 * dim + (0 for +, 1 for -)``) and whether it is a ring's
    wrap-around; ``ring`` is False on networks without wrap-around links (classes are levels)."""

    type: np.ndarray
    wrap: np.ndarray
    ring: bool


def channel_geometry(network: Network) -> ChannelGeometry | None:
    """The channel types and datelines of a torus, mesh or hypercube (None for other networks).

    Parameters
    ----------
    network : Network

    Returns
    -------
    ChannelGeometry or None

    Examples
    --------
    >>> from universal.networks import build_network
    >>> g = channel_geometry(build_network("torus:k=3,n=1"))
    >>> g.type.tolist(), g.wrap.tolist()
    ([0, 1, 0, 1, 0, 1], [False, False, False, False, True, True])
    """
    if network.kind not in ("torus", "mesh", "hypercube"):
        return None
    k, n = int(network.params["k"]), int(network.params["n"])
    tail, head = network.link_tail.astype(np.int64), network.link_head.astype(np.int64)
    ring = network.kind == "torus" and k > 2         # k = 2: the wrap-around is the mesh edge
    dim = np.zeros(len(tail), dtype=np.int64)
    minus = np.zeros(len(tail), dtype=bool)
    wrap = np.zeros(len(tail), dtype=bool)
    for i in range(n):
        stride = k ** i
        xt, xh = (tail // stride) % k, (head // stride) % k
        moves = xt != xh
        dim[moves] = i
        plus = xh == (xt + 1) % k if ring else xh > xt
        minus[moves] = ~plus[moves]
        if ring:
            wrap[moves] = (plus & (xt == k - 1) | ~plus & (xt == 0))[moves]
    return ChannelGeometry((2 * dim + minus).astype(np.int16), wrap, bool(wrap.any()))


def require_channel_geometry(network: Network) -> ChannelGeometry:
    """:func:`channel_geometry`, refusing a network that has none (one line for the user).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> require_channel_geometry(build_network("butterfly:d=2"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    universal.errors.UserError: virtual channel classes are defined on ..., not on butterfly:d=2; use --vcs 1
    """
    geometry = channel_geometry(network)
    if geometry is None:
        raise UserError(f"virtual channel classes are defined on tori, meshes and hypercubes, not on {network.name}; "
                        "use --vcs 1")
    return geometry


def first_class(wrap: np.ndarray, ring: bool) -> np.ndarray:
    """The class of a route's first hop (``wrap``: whether that hop crosses a dateline).

    Examples
    --------
    >>> first_class(np.array([False, True]), True).tolist()
    [0, 1]
    """
    return wrap.astype(np.int8) if ring else np.zeros(len(wrap), dtype=np.int8)


def next_class(cls: np.ndarray, crossed_type: np.ndarray, next_type: np.ndarray, next_wrap: np.ndarray,
               ring: bool) -> np.ndarray:
    """The class of a packet's next hop from the class of the hop it just made (vectorised).

    Parameters
    ----------
    cls : ndarray of int8
        Class of the hop just made.
    crossed_type, next_type : ndarray
        Channel types of that hop and of the next one.
    next_wrap : ndarray of bool
        Whether the next hop crosses a dateline.
    ring : bool

    Returns
    -------
    ndarray of int8

    Examples
    --------
    Valiant's second phase turning back to dimension 0 starts level 1:

    >>> next_class(np.array([1], np.int8), np.array([2]), np.array([0]), np.array([False]), True).tolist()
    [2]
    """
    cls = cls.astype(np.int64)
    level, wrapped = (cls >> 1, (cls & 1).astype(bool)) if ring else (cls, np.zeros(len(cls), bool))
    same = next_type == crossed_type
    bump = (next_type < crossed_type) | (same & next_wrap & wrapped)
    wrapped = np.where(same & ~bump, wrapped | next_wrap, next_wrap)
    level = level + bump
    return ((2 * level + wrapped) if ring else level).astype(np.int8)


def path_classes(path: list[int], geometry: ChannelGeometry) -> list[int]:
    """The class of every hop of one route, walked one hop at a time (the plain definition; the
    engines' reference uses it).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("torus:k=4,n=2")
    >>> geo = channel_geometry(net)
    >>> x = lambda v: net.links_between([v], [v - v % 4 + (v + 1) % 4])[0]   # +x from v
    >>> y = lambda v: net.links_between([v], [(v + 4) % 16])[0]             # +y from v
    >>> path_classes([x(0), y(1), x(5)], geo)    # x, then y, then x again: a new level
    [0, 0, 2]
    """
    out: list[int] = []
    level, wrapped, prev = 0, False, None
    for e in path:
        kind, wraps = int(geometry.type[e]), bool(geometry.wrap[e])
        if prev is not None and (kind < prev or (kind == prev and wraps and wrapped)):
            level, wrapped = level + 1, wraps
        elif prev is not None and kind == prev:
            wrapped = wrapped or wraps
        else:
            wrapped = wraps
        prev = kind
        out.append(2 * level + wrapped if geometry.ring else level)
    return out


def _levels_of_legs(dims: np.ndarray, steps: np.ndarray, k: int, ring: bool) -> np.ndarray:
    """The most levels any route with these legs can need, over every source (rows = routes).

    A run of T hops of one type crosses at most ``1 + (T - 1) // k`` datelines; every one after
    the first starts a level, and so does every turn to a lower type.
    """
    P = len(dims)
    levels = np.ones(P, dtype=np.int64)
    prev = np.full(P, -1, dtype=np.int64)
    run = np.zeros(P, dtype=np.int64)
    for j in range(dims.shape[1]):
        s = steps[:, j]
        live = s != 0
        kind = 2 * dims[:, j] + (s < 0)
        same = live & (kind == prev)
        new = live & ~same
        if ring:
            ended = new & (run > 0)
            levels += np.where(ended, (run - 1) // k, 0)
            run = np.where(new, np.abs(s), np.where(same, run + np.abs(s), run))
        levels += new & (prev >= 0) & (kind < prev)
        prev = np.where(live, kind, prev)
    if ring:
        levels += np.where(run > 0, (run - 1) // k, 0)
    return levels


_LEVELS: dict[tuple[str, int, int], int] = {}


def _torus_levels(routing, k: int, n: int) -> int:
    """The most levels of any route of ``routing`` on the k-ary n-cube (cached by name)."""
    from universal.paths.torus.geometry import Torus

    key = (routing.name, k, n)
    if key in _LEVELS:
        return _LEVELS[key]
    if routing.name == "dor":
        levels = 1              # one leg per dimension, in increasing order, each shorter than k
    elif k ** n > _EXACT_OFFSETS:
        # a bound instead of the count: 2n legs, each shorter than 2k (so at most one extra
        # dateline), each turn back or extra dateline one level
        levels = 4 * n
    else:
        torus = Torus(k, n)
        levels = 1
        for offset in range(k ** n):
            fam = routing.family(torus, offset)
            if len(fam.dims):
                levels = max(levels, int(_levels_of_legs(fam.dims, fam.steps, k, k > 2).max()))
    _LEVELS[key] = levels
    return levels


def classes_needed(router) -> int | None:
    """The VC classes a routing needs to be deadlock-free with this module's scheme (None: no
    scheme known before the run: adaptive routings and path systems).

    For the torus routings of the load analysis (``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``,
    ``ival``) the count is exact: the most levels of any route the routing can take from any
    source to any destination (every route of every offset is enumerated, up to 4,096 nodes;
    larger tori take the bound 4n), times two for the wrapped bit.

    Parameters
    ----------
    router : universal.engine.routes.Router

    Returns
    -------
    int or None

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> net = build_network("torus:k=8,n=2")
    >>> [classes_needed(build_router(r, net)) for r in ("dor", "val")]      # GOAL paper, Table 1
    [2, 4]
    """
    if router.kind != "torus":
        return None
    k, n = router.k_n
    levels = _torus_levels(router.routing, k, n)
    return 2 * levels if k > 2 else levels


@dataclass(frozen=True)
class VCPlan:
    """The VC classes of a run: ``classes`` (G), the VCs per class and the places per class buffer
    (``capacity``: VCs of the class times b), and the links' channel geometry. ``scheme`` is
    ``dateline`` (classes fixed along an oblivious route) or ``star`` (GOAL's *-channels, chosen
    hop by hop by an adaptive packet; ``phases`` is 2 for UGAL, 1 otherwise)."""

    vcs: int
    classes: int
    capacity: np.ndarray
    geometry: ChannelGeometry
    scheme: str = "dateline"
    phases: int = 1

    @property
    def ring(self) -> bool:
        return self.geometry.ring

    @property
    def per_phase(self) -> int:
        """Classes per phase of the star scheme: *_0, *_1 and non-* on a ring; *, non-* without."""
        return 3 if self.ring else 2


def star_classes(ring: bool, phases: int) -> int:
    """The VC classes GOAL's *-channels need (:func:`star_class`): per phase two escape classes
    and one adaptive class on a torus (k > 2), one escape class and one adaptive class on a mesh
    or hypercube (no wrap-around to break).

    Examples
    --------
    >>> star_classes(True, 1), star_classes(True, 2), star_classes(False, 1)
    (3, 6, 2)
    """
    return (3 if ring else 2) * phases


def star_class(escape: np.ndarray, wrapped: np.ndarray, phase: np.ndarray, ring: bool) -> np.ndarray:
    """The class of an adaptive hop under GOAL's *-channels (vectorised).

    Per phase the classes are ``*_0, *_1, non-*`` on a torus (``*, non-*`` without wrap-around),
    numbered ``per_phase * phase + (wrapped if escape else per_phase - 1)``: an escape hop takes
    ``*_1`` when the packet has crossed (or is crossing) the wrap-around of the hop's dimension.

    Examples
    --------
    >>> star_class(np.array([True, True, False]), np.array([False, True, True]), np.array([0, 1, 0]), True).tolist()
    [0, 4, 2]
    """
    per = 3 if ring else 2
    low = wrapped.astype(np.int64) if ring else np.zeros(len(escape), dtype=np.int64)
    return (per * phase + np.where(escape, low, per - 1)).astype(np.int8)


def class_capacity(vcs: int, classes: int, buffer: int | None) -> np.ndarray:
    """Places per class buffer: class c owns the VCs v with ``v * classes // vcs == c``.

    Examples
    --------
    >>> class_capacity(3, 2, 8).tolist()
    [16, 8]
    """
    owners = np.arange(vcs) * classes // vcs
    count = np.bincount(owners, minlength=classes)
    return (count * (buffer if buffer is not None else 1)).astype(np.int32)


def plan_vcs(router, vcs: int, buffer: int | None, needed: int | None = None) -> VCPlan | None:
    """The VC classes of ``router`` with ``vcs`` virtual channels per link (None when ``vcs`` is 1:
    one buffer per link, no classes, as the model of SPEC §2).

    Parameters
    ----------
    router : Router
    vcs : int
        V, virtual channels per link (>= 1).
    buffer : int or None
        b, packets per VC (None: unbounded; the classes then never bind).
    needed : int, optional
        The classes the run's routes need, when known from the routes themselves (a batch).

    Returns
    -------
    VCPlan or None

    Raises
    ------
    UserError
        ``vcs`` out of range, a routing with no VC scheme, or one that needs more VCs than given.
    """
    if not 1 <= vcs <= MAX_VCS:
        raise UserError(f"--vcs must be between 1 and {MAX_VCS} (got {vcs})")
    if vcs == 1 or router.kind == "chaos":     # CHAOS has no VCs: V x b is its buffer budget
        return None
    network = router.network
    if router.kind in ("splitter", "ugal-paths"):
        raise UserError(f"virtual channel classes for {router.name} are not available (the *-channels are defined "
                        "for min-adaptive, goal and ugal on tori, meshes and hypercubes); run it with --vcs 1")
    geometry = require_channel_geometry(network)
    if router.adaptive:
        phases = 2 if router.kind == "ugal" else 1
        needed = star_classes(geometry.ring, phases)
        if needed > vcs:
            what = "two *-channels and one non-* channel" if geometry.ring else "one *-channel and one non-* channel"
            per = f"{what} per phase, 2 phases" if phases == 2 else what
            raise UserError(f"{router.name} needs {needed} virtual channels per link on {network.name} to be "
                            f"deadlock-free (GOAL's *-channels: {per}); --vcs {vcs} is too few")
        return VCPlan(vcs, needed, class_capacity(vcs, needed, buffer), geometry, "star", phases)
    if needed is None:
        needed = classes_needed(router)
    if needed is None:
        raise UserError(f"the virtual channel classes of path system {router.name} are not known before the run; "
                        "use a torus routing (dor, val, romm, rlb, rlbth, ival) or --vcs 1")
    if needed > vcs:
        raise UserError(f"{router.name} needs {needed} virtual channels per link on {network.name} to be "
                        f"deadlock-free (dateline classes); --vcs {vcs} is too few")
    return VCPlan(vcs, needed, class_capacity(vcs, needed, buffer), geometry)


def classes_of_paths(collection) -> int | None:
    """The VC classes a path collection needs (the most classes of any of its paths' hops, plus
    one); None on a network without channel geometry (:func:`channel_geometry`).

    The same classes as :func:`path_classes` walks hop by hop, found for every hop at once: a
    run is a stretch of hops of one channel type; a hop starts a level when its run starts with
    a lower type than the previous run's, and when it is the second (third, ...) dateline
    crossing of its run; the wrapped bit is whether its run has crossed a dateline so far.

    Parameters
    ----------
    collection : universal.paths.PathCollection

    Returns
    -------
    int or None
        0 for a collection without hops.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.paths import route_paths
    >>> from universal.workloads import build_problem
    >>> net = build_network("torus:k=8,n=2")
    >>> problem = build_problem("permutation:tornado", net, np.random.default_rng(0))
    >>> classes_of_paths(route_paths("dimension-order", problem, net, np.random.default_rng(0)))
    2
    """
    geometry = channel_geometry(collection.network)
    if geometry is None:
        return None
    links = collection.links
    if not len(links):
        return 0
    kind = geometry.type[links].astype(np.int64)
    wrap = geometry.wrap[links].astype(np.int64)
    first = np.zeros(len(links), dtype=bool)
    starts = collection.offsets[:-1][collection.lengths > 0]
    first[starts] = True
    previous = np.concatenate([[0], kind[:-1]])
    run_start = first | (kind != previous)
    # dateline crossings of the run so far, this hop included
    crossed = np.cumsum(wrap)
    run_of = np.cumsum(run_start) - 1
    run_first = np.flatnonzero(run_start)
    so_far = crossed - (crossed[run_first] - wrap[run_first])[run_of]
    bump = (run_start & ~first & (kind < previous)) | ((wrap == 1) & (so_far >= 2))
    # levels start afresh with every path
    total = np.cumsum(bump)
    path_of = np.cumsum(first) - 1
    level = total - (total[starts] - bump[starts])[path_of]
    cls = 2 * level + (so_far >= 1) if geometry.ring else level
    return int(cls.max()) + 1
