"""What a routing draws when a packet is created (SPEC §11), in bulk for a batch of packets:
:class:`RouteDraw`, UGAL's candidate intermediates (:func:`_ugal_via`, on a dragonfly
:func:`_dragonfly_via`: Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly
Topology", ISCA 2008, §4), and the load analysis's torus routings sampled and expanded to link
ids (:func:`_torus_paths`; DOR from a table of every pair's tie variants, :func:`_dor_table_paths`).

:class:`universal.engine.routes.Router` draws with these; ``Router`` in the annotations below is
that class, not imported here because :mod:`universal.engine.routes` imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from universal.networks import Network

@dataclass
class RouteDraw:
    """Routing choices made at creation for a batch of packets (one run, in creation order).

    ``offsets``/``links``: oblivious paths, path ``i`` is ``links[offsets[i]:offsets[i+1]]``.
    ``signs`` (GOAL): the direction per dimension, +1 or -1, shape (P, n); ``remaining`` the
    hops per dimension. ``via`` (UGAL): the candidate intermediate node of every packet.
    ``alt_offsets``/``alt_links`` (UGAL-L/G): every packet's second candidate path, the Valiant
    one, beside its minimal one in ``offsets``/``links``. ``paths``: the path collection that
    ``offsets``/``links`` come from, if any (its link loads are cached with its congestion).
    """

    offsets: np.ndarray | None = None
    links: np.ndarray | None = None
    signs: np.ndarray | None = None
    remaining: np.ndarray | None = None
    via: np.ndarray | None = None
    alt_offsets: np.ndarray | None = None
    alt_links: np.ndarray | None = None
    paths: object = None


def _ugal_via(network: Network, sources: np.ndarray, dests: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """UGAL's candidate intermediate of every packet: a uniformly random node, or on a network
    with terminals a uniformly random router (terminals only send and receive), -1 (no Valiant
    candidate: the packet routes minimally) where that router is the source's or the
    destination's, through which the Valiant path is a minimal one; on a dragonfly the router
    where the packet enters a random intermediate group (:func:`_dragonfly_via`).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("flatfly:k=4,n=2,c=1")            # terminals 0..3, routers 4..7
    >>> via = _ugal_via(net, np.zeros(200, np.int64), np.full(200, 3), np.random.default_rng(0))
    >>> sorted(set(via.tolist()) - {-1}) == [5, 6], bool((via == -1).any())
    (True, True)
    """
    if network.terminals is None:
        return rng.integers(0, network.num_nodes, size=len(sources))
    if network.kind == "dragonfly":
        return _dragonfly_via(network, sources, dests, rng)
    via = rng.integers(len(network.terminals), network.num_nodes, size=len(sources))
    ends = (via == network.router_of[sources]) | (via == network.router_of[dests])
    return np.where(ends, -1, via)


def _dragonfly_via(network: Network, sources: np.ndarray, dests: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """UGAL's intermediate on a dragonfly, Valiant's path of Kim, Dally, Scott & Abts: minimal to
    a random intermediate group, then minimal to the destination. The group is drawn uniformly
    among those other than the source's and the destination's (through either of them the path
    is the minimal one again), then one of the ``m`` global links from the source's group into
    it; the intermediate is the router where that link lands, the end of a minimal path into the
    group. With ``g = 2`` a packet between the two groups has none (-1): it routes minimally.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("dragonfly:p=1,a=2,h=1,g=3")       # terminals 0..5, routers 6..11
    >>> via = _dragonfly_via(net, np.zeros(200, np.int64), np.full(200, 3), np.random.default_rng(0))
    >>> sorted(set(via.tolist()))       # group 2 (routers 10, 11), entered from group 0 at router 10
    [10]

    References
    ----------
    Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008, §4.
    """
    from universal.paths.datacenter import _minimal_columns, dragonfly_params, other_group

    _, a, h, g, m, T = dragonfly_params(network)
    r1, r2 = network.router_of[sources] - T, network.router_of[dests] - T
    G1, G2 = r1 // a, r2 // a
    if g > 2:
        group, ok = other_group(G1, G2, g, rng), np.ones(len(sources), dtype=bool)
    else:
        group, ok = 1 - G1, G1 == G2
    link = rng.integers(0, m, size=len(sources))
    landing = _minimal_columns(a, h, g, r1, group * a, link)[:, 2]
    return np.where(ok, T + landing, -1)


def _torus_paths(router: Router, sources: np.ndarray, dests: np.ndarray,
                 rng: np.random.Generator) -> RouteDraw:
    """Sample a load-analysis routing and expand its legs into link ids, all packets at once."""
    from universal.paths.torus.algorithms import legs
    from universal.paths.torus.geometry import Torus

    k, n = router.k_n
    torus = router.extra.get("torus")
    if torus is None:
        torus = router.extra["torus"] = Torus(k, n)
    routing = router.routing
    if routing.name == "dor" and k ** (2 * n) * 2 ** n * n * k <= _DOR_TABLE_ENTRIES:
        return _dor_table_paths(router, torus, sources, dests, rng)
    ch = routing.sample(torus, torus.sub(dests, sources), rng)
    dims, steps = legs(ch, k, routing.erase_loops)
    return RouteDraw(*_expand_legs(router, torus, sources, dims, steps))


def _expand_legs(router: Router, torus, sources: np.ndarray, dims: np.ndarray,
                 steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Link ids of routes given as legs: per leg its start node, then every hop from it."""
    k, n = router.k_n
    P, G = dims.shape
    powers = torus.powers
    count = np.abs(steps)
    lengths = count.sum(axis=1)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    # start coordinates of every leg: the source plus the moves of the legs before it
    disp = np.zeros((P, G, n), dtype=np.int64)
    np.put_along_axis(disp, dims[:, :, None], steps[:, :, None], axis=2)
    start = (torus.coords[sources][:, None, :] + np.cumsum(disp, axis=1) - disp) % k      # (P, G, n)
    start_id = (start @ powers).ravel()
    along = np.take_along_axis(start, dims[:, :, None], axis=2).ravel()                   # x_dim at the start
    flat_count = count.ravel()
    leg = np.repeat(np.arange(P * G), flat_count)                                        # the leg of every hop
    leg_first = np.concatenate([[0], np.cumsum(flat_count)[:-1]])
    i = np.arange(len(leg)) - leg_first[leg]                                              # hops done in the leg
    sign = np.sign(steps).ravel()[leg]
    dim = dims.ravel()[leg]
    x0 = along[leg]
    tail = start_id[leg] + ((x0 + sign * i) % k - x0) * powers[dim]
    links = router.dir_link.reshape(-1)[(tail * n + dim) * 2 + (sign < 0)]
    return offsets, links


#: Largest DOR path table (entries) kept per network: N^2 pairs x 2^n tie variants x hops.
_DOR_TABLE_ENTRIES = 8_000_000
#: The DOR tables, per network object (runs of a batch share the network, hence the table).
_TABLES: dict = {}


def _dor_table_paths(router: Router, torus, sources: np.ndarray, dests: np.ndarray,
                     rng: np.random.Generator) -> RouteDraw:
    """DOR from a table of every pair's 2^n tie variants (each tied dimension's direction is one
    fair bit of a uniform variant number: the distribution of :class:`DOR`'s sampler)."""
    k, n = router.k_n
    N = torus.N
    V = 2 ** n
    key = ("dor-table", id(router.network))
    table = _TABLES.get(key)
    if table is None or table[0] is not router.network:
        from universal.paths.torus.algorithms import _minimal_options

        s = np.repeat(np.arange(N), N * V)
        d = np.tile(np.repeat(np.arange(N), V), N)
        v = np.tile(np.arange(V), N * N)
        lo, hi = _minimal_options(k, torus.coords[torus.sub(d, s)])
        bits = (v[:, None] >> np.arange(n)[None, :]) & 1
        a = np.where(bits == 1, lo, hi)
        dims = np.broadcast_to(np.arange(n), a.shape)
        offsets, links = _expand_legs(router, torus, s, dims, a)
        width = int(np.diff(offsets).max()) if len(links) else 0
        rows = np.full((len(s), max(width, 1)), -1, dtype=np.int64)
        lengths = np.diff(offsets)
        mask = np.arange(rows.shape[1])[None, :] < lengths[:, None]
        rows[mask] = links
        table = _TABLES[key] = (router.network, rows, lengths, mask)
    _, rows, lengths, mask = table
    pick = (sources * N + dests) * V + rng.integers(0, V, size=len(sources))
    lens = lengths[pick]
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    return RouteDraw(offsets=offsets, links=rows[pick][mask[pick]])
