"""Routings of the networks with terminals (dragonfly, fat tree, flattened butterfly, HyperX).

Every routing here is a probability distribution over paths, written once as a function of the
packet's *choices* (which global link, which intermediate group): drawing the choices at random
routes packets (``route``, ``openloop``), and running through every choice with its weight gives
the exact pair loads of the load analysis, so the two can never disagree.

Dragonfly (Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology",
ISCA 2008, §4), with ``m = a*h/(g-1)`` global links between every two groups (``m = 1`` when
``g = a*h + 1``):

* ``minimal``: inside a group one local hop; between groups local - global - local over one of
  the ``m`` global links joining the two groups, chosen uniformly (the local hops are left out
  where the packet already stands at the link's end). The unique such path when ``m = 1``.
* ``valiant``: Valiant's trick over groups: an intermediate group uniformly among all ``g``;
  minimally to it (over one of its ``m`` links from the source group, uniformly), then
  minimally from the router it lands at to the destination. When the intermediate group is the
  source's or the destination's, that is the minimal path.

A packet crosses its terminal's injection link and its destination's ejection link; a packet
addressed to its own terminal crosses no link when its router path is one router (minimal),
and goes round when Valiant's intermediate group sends it away and back.

On the fat tree, ``minimal`` and ``nca`` are the nearest-common-ancestor routing with random up
paths: up through uniformly random parents to a nearest common ancestor of the two terminals,
then down the unique path (the ``random-shortest`` walk of the k-ary n-tree, whose parents are
all equally close to the destination). On the flattened butterfly and HyperX ``minimal`` is the
``random-shortest`` walk: each hop corrects a uniformly random one of the dimensions still wrong.

Examples
--------
>>> import numpy as np
>>> from universal.networks import build_network
>>> net = build_network("dragonfly:p=2")
>>> nodes, length = dragonfly_router_paths(net, np.array([0]), np.array([5]), "minimal", np.array([[0, 0, 0]]))
>>> [net.label_of(72 + int(v)) for v in nodes[0, :length[0]]]   # routers follow the 72 terminals
['g0.r0', 'g1.r3', 'g1.r1']
"""

from __future__ import annotations

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.paths.collection import PathCollection

__all__ = ["DRAGONFLY_ROUTINGS", "dragonfly_router_paths", "dragonfly_paths", "dragonfly_choices",
           "dragonfly_pair_loads", "dragonfly_params", "other_group"]

#: The dragonfly's oblivious routings and what they are.
DRAGONFLY_ROUTINGS = {
    "minimal": "local-global-local over a global link joining the two groups",
    "valiant": "via a uniformly random intermediate group (Valiant's trick over groups)",
}


def dragonfly_params(network: Network) -> tuple[int, int, int, int, int, int]:
    """``(p, a, h, g, m, T)``: the dragonfly's parameters, links per group pair and terminals.

    Parameters
    ----------
    network : Network
        A dragonfly (anything else is a UserError).

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> from universal.networks import build_network
    >>> dragonfly_params(build_network("dragonfly:p=2,g=5"))
    (2, 4, 2, 5, 2, 40)

    References
    ----------
    Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008, §3.
    """
    if network.kind != "dragonfly":
        raise UserError(f"this routing is defined on the dragonfly (dragonfly:p=,a=,h=), not on {network.name}")
    p, a, h, g = (network.params[x] for x in "pahg")
    return p, a, h, g, a * h // (g - 1), len(network.terminals)


def _minimal_columns(a: int, h: int, g: int, r1: np.ndarray, r2: np.ndarray, i: np.ndarray) -> np.ndarray:
    """Router columns ``[r1, x, y, r2]`` of the minimal path from router ``r1`` to ``r2`` (router
    indices ``G*a + j``) over the ``i``-th global link between their groups; -1 marks a hop left
    out (the packet already stands there). Uses the palmtree arrangement of
    :func:`universal.networks.datacenter.dragonfly_global_links`: the ``i``-th channel of offset
    ``o`` is ``c = o - 1 + i*(g-1)``, arriving on channel ``i*(g-1) + g - 1 - o``."""
    G1, G2 = r1 // a, r2 // a
    o = (G2 - G1) % g
    between = o != 0
    c1 = o - 1 + i * (g - 1)
    c2 = i * (g - 1) + g - 1 - o
    x = np.where(between, G1 * a + c1 // h, -1)
    y = np.where(between, G2 * a + c2 // h, -1)
    x = np.where(x == r1, -1, x)
    last = np.where(r2 == np.where(between, y, r1), -1, r2)
    return np.stack([r1, x, y, last], axis=1)


def dragonfly_router_paths(network: Network, r1: np.ndarray, r2: np.ndarray, routing: str,
                           choices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Router paths (router indices ``0..R-1``, not node ids) of one routing, given the choices.

    Parameters
    ----------
    network : Network
        A dragonfly.
    r1, r2 : ndarray of int64
        Source and destination router indices.
    routing : str
        ``minimal`` or ``valiant``.
    choices : ndarray of int64, shape (n, 3)
        ``(intermediate group, first link, second link)`` per path: a group ``0..g-1`` and two
        indices ``0..m-1`` among the global links joining two groups (minimal reads the first
        link only).

    Returns
    -------
    nodes : ndarray of int64, shape (n, 6)
        Each row's routers, padded with -1.
    length : ndarray of int64
        Routers per row (hops + 1).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("dragonfly:p=2")           # group 2 via group 5 to group 0
    >>> nodes, n = dragonfly_router_paths(net, np.array([8]), np.array([1]), "valiant", np.array([[5, 0, 0]]))
    >>> nodes[0, :n[0]].tolist()
    [8, 9, 22, 21, 2, 1]

    References
    ----------
    Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008, §4.
    """
    _, a, h, g, _, _ = dragonfly_params(network)
    r1, r2 = np.asarray(r1, np.int64), np.asarray(r2, np.int64)
    I, i1, i2 = (np.asarray(choices, np.int64)[:, k] for k in range(3))
    direct = _minimal_columns(a, h, g, r1, r2, i1)
    cols = np.full((len(r1), 6), -1, dtype=np.int64)
    cols[:, :4] = direct
    if routing == "valiant":
        away = (I != r1 // a) & (I != r2 // a)
        # to the intermediate group: the i1-th link from the source group, landing at router y1
        to_group = _minimal_columns(a, h, g, r1, I * a, i1)[:, :3]
        onward = _minimal_columns(a, h, g, to_group[:, 2], r2, i2)[:, 1:]
        cols[away] = np.concatenate([to_group, onward], axis=1)[away]
    elif routing != "minimal":
        raise UserError(f"unknown dragonfly routing {routing!r} (known: {', '.join(DRAGONFLY_ROUTINGS)})")
    valid = cols >= 0
    order = np.argsort(~valid, axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1), valid.sum(axis=1)


def dragonfly_choices(network: Network, routing: str) -> tuple[np.ndarray, int]:
    """Every choice of one routing, equally likely: rows ``(group, link 1, link 2)`` and their count.

    Parameters
    ----------
    network : Network
        A dragonfly.
    routing : str
        ``minimal`` (one of the ``m`` links) or ``valiant`` (every group and two links).

    Returns
    -------
    choices : ndarray of int64, shape (count, 3)
    count : int

    Examples
    --------
    >>> from universal.networks import build_network
    >>> dragonfly_choices(build_network("dragonfly:p=2,g=5"), "valiant")[0].shape   # 5 groups x 2 x 2 links
    (20, 3)
    """
    _, _, _, g, m, _ = dragonfly_params(network)
    if routing == "minimal":
        grid = np.stack([np.zeros(m, np.int64), np.arange(m), np.zeros(m, np.int64)], axis=1)
    else:
        grid = np.stack(np.meshgrid(np.arange(g), np.arange(m), np.arange(m), indexing="ij"), axis=-1).reshape(-1, 3)
    return grid.astype(np.int64), len(grid)


def _draw_choices(network: Network, count: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform choices, as :func:`dragonfly_choices` lists them (one row per packet)."""
    _, _, _, g, m, _ = dragonfly_params(network)
    return np.stack([rng.integers(0, g, count), rng.integers(0, m, count), rng.integers(0, m, count)], axis=1)


def other_group(G1: np.ndarray, G2: np.ndarray, g: int, rng: np.random.Generator) -> np.ndarray:
    """A group drawn uniformly among those that are neither ``G1`` nor ``G2`` (``g - 2`` of
    them, ``g - 1`` where ``G1 == G2``): UGAL's non-minimal candidate, which through the source's
    or the destination's group would be the minimal path again.

    Parameters
    ----------
    G1, G2 : ndarray of int64
        Source and destination groups, one pair per packet.
    g : int
        Groups, at least 3.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64
        One intermediate group per packet.

    Examples
    --------
    >>> other_group(np.array([0, 3, 1]), np.array([1, 3, 2]), 4, np.random.default_rng(0)).tolist()
    [3, 0, 0]

    References
    ----------
    Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008,
    §4.2 (UGAL chooses between the minimal path and a Valiant path).
    """
    lo, hi = np.minimum(G1, G2), np.maximum(G1, G2)
    count = np.where(lo == hi, g - 1, g - 2)
    u = (rng.random(len(G1)) * count).astype(np.int64)
    u += u >= lo
    u += (u >= hi) & (hi != lo)
    return u


def _terminal_links(network: Network, sources: np.ndarray, dests: np.ndarray, routers: np.ndarray,
                    length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flat link ids and offsets of terminal paths: injection link, router hops, ejection link.

    Terminal ``t``'s edge is edge ``t`` (terminals come first), so ``t -> router`` is link ``2t``
    and ``router -> t`` link ``2t + 1``. A packet to its own terminal whose router path is one
    router crosses nothing."""
    T = len(network.terminals)
    moves = ~((sources == dests) & (length == 1))
    hops = np.maximum(length - 1, 0)
    per = np.where(moves, hops + 2, 0)
    offsets = np.concatenate([[0], np.cumsum(per)]).astype(np.int64)
    links = np.empty(int(offsets[-1]), dtype=np.int64)
    start = offsets[:-1][moves]
    links[start] = 2 * sources[moves]
    links[offsets[1:][moves] - 1] = 2 * dests[moves] + 1
    width = routers.shape[1] - 1
    k = np.arange(width)
    inside = (k[None, :] < hops[:, None]) & moves[:, None]
    tails = T + routers[:, :-1][inside]
    heads = T + routers[:, 1:][inside]
    where = (offsets[:-1][:, None] + 1 + k[None, :])[inside]
    links[where] = network.links_between(tails, heads)
    return links, offsets


def dragonfly_paths(routing: str, sources: np.ndarray, dests: np.ndarray, network: Network,
                    rng: np.random.Generator, *, avoid_ends: bool = False) -> PathCollection:
    """Terminal-to-terminal paths of ``minimal`` or ``valiant`` on a dragonfly, choices drawn from ``rng``.

    Parameters
    ----------
    routing : str
        ``minimal`` or ``valiant``.
    sources, dests : ndarray of int64
        Terminals (node ids ``0..T-1``).
    network : Network
    rng : numpy.random.Generator
    avoid_ends : bool
        Valiant only: draw the intermediate group among those other than the source's and the
        destination's (:func:`other_group`; UGAL's non-minimal candidate), not among all ``g``.

    Returns
    -------
    PathCollection

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("dragonfly:p=2")
    >>> coll = dragonfly_paths("minimal", np.array([0, 0, 0]), np.array([1, 9, 0]), net, np.random.default_rng(0))
    >>> coll.lengths.tolist()                  # same router; group 0 to group 1 (l-g-l); itself
    [2, 4, 0]

    References
    ----------
    Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008, §4.
    """
    _, _, _, _, _, T = dragonfly_params(network)
    sources, dests = np.asarray(sources, np.int64), np.asarray(dests, np.int64)
    if len(sources) and max(sources.max(), dests.max()) >= T:
        raise UserError(f"on {network.name} packets go between terminals (nodes 0..{T - 1})")
    r1, r2 = network.router_of[sources] - T, network.router_of[dests] - T
    choices = _draw_choices(network, len(sources), rng)
    if avoid_ends and routing == "valiant" and network.params["g"] > 2:
        a, g = network.params["a"], network.params["g"]
        choices[:, 0] = other_group(r1 // a, r2 // a, g, rng)
    routers, length = dragonfly_router_paths(network, r1, r2, routing, choices)
    links, offsets = _terminal_links(network, sources, dests, routers, length)
    return PathCollection(network, offsets, links, sources, dests, routing)


def dragonfly_pair_loads(network: Network, routing: str) -> tuple[np.ndarray, np.ndarray]:
    """Exact pair loads between terminals: ``num[s, d, c] / den[s, d]`` is the expected number of
    times a packet from terminal ``s`` to ``d`` crosses link ``c``, every choice of
    :func:`dragonfly_choices` weighted equally.

    Computed once per pair of routers (every choice's router path), then spread to the
    terminals with their injection and ejection links.

    Parameters
    ----------
    network : Network
        A dragonfly.
    routing : str
        ``minimal`` or ``valiant``.

    Returns
    -------
    num : ndarray of int64, shape (T, T, links)
    den : ndarray of int64, shape (T, T)

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("dragonfly:p=2")
    >>> num, den = dragonfly_pair_loads(net, "valiant")
    >>> int(num[0, 9].sum()), int(den[0, 9])     # links crossed in all 9 choices together
    (50, 9)

    References
    ----------
    Towles, Dally & Boyd, "Throughput-centric routing algorithm design", SPAA 2003, §2 (pair
    loads and channel load); Kim, Dally, Scott & Abts, ISCA 2008, §4 (the routings).
    """
    _, _, _, _, _, T = dragonfly_params(network)
    R, L = network.num_nodes - T, network.num_links
    choice, count = dragonfly_choices(network, routing)
    pair = np.arange(R * R, dtype=np.int64)
    r1 = np.repeat(pair // R, count)
    r2 = np.repeat(pair % R, count)
    routers, length = dragonfly_router_paths(network, r1, r2, routing, np.tile(choice, (R * R, 1)))
    hops = np.maximum(length - 1, 0)
    owner = np.repeat(np.arange(len(r1)), hops)
    inside = np.arange(routers.shape[1] - 1)[None, :] < hops[:, None]
    links = network.links_between(T + routers[:, :-1][inside], T + routers[:, 1:][inside])
    router_num = np.bincount((owner // count) * L + links, minlength=R * R * L).reshape(R, R, L)
    moving = np.bincount(np.arange(len(r1)) // count, weights=(length > 1), minlength=R * R).reshape(R, R)
    ridx = network.router_of - T
    num = router_num[ridx[:, None], ridx[None, :]].astype(np.int64)
    term = np.arange(T)
    # injection and ejection links: every choice crosses them, except a packet that stays home
    weight = np.full((T, T), count, dtype=np.int64)
    weight[term, term] = moving[ridx, ridx].astype(np.int64)
    num[term[:, None], term[None, :], (2 * term)[:, None]] += weight
    num[term[:, None], term[None, :], (2 * term + 1)[None, :]] += weight
    return num, np.full((T, T), count, dtype=np.int64)
