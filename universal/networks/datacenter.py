"""The networks built today, with concentration: dragonfly, k-ary n-tree, flattened butterfly, HyperX.

In all four, *terminals* only send and receive and *routers* (switches) only forward. Terminals
are nodes of their own, each joined to one router by one link (its injection and ejection
channel), and they come first in the numbering: terminal ``t`` is node ``t`` (``0..T-1``) and the
routers follow (``T..T+R-1``), so a permutation of terminals is also a permutation of node ids.
``Network.terminals`` lists them and ``Network.router_of`` gives each one's router.

* ``dragonfly:p=,a=,h=[,g=]`` (Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable
  Dragonfly Topology", ISCA 2008): ``p`` terminals per router, ``a`` routers per group joined
  all-to-all, ``h`` global links per router, ``g`` groups. Default the balanced ``a = 2p = 2h``
  and the largest ``g = a*h + 1`` (one global link between every two groups).
* ``fattree:k=,n=``: the k-ary n-tree (Petrini & Vanneschi, "k-ary n-trees: high performance
  networks for massively parallel architectures", IPPS 1997): ``k**n`` terminals, ``n`` levels of
  ``k**(n-1)`` switches of ``2k`` ports (``k`` at the top level).
* ``flatfly:k=,n=[,c=]``: the k-ary n-flat (Kim, Dally & Abts, "Flattened Butterfly: A
  Cost-Efficient Topology for High-Radix Networks", ISCA 2007): ``k**(n-1)`` routers in ``n-1``
  dimensions of ``k``, all-to-all along every dimension, ``c`` terminals per router (default k).
* ``hyperx:S=...,K=...,T=`` (Ahn, Binkert, Davis, McLaren & Schreiber, "HyperX: Topology,
  Routing, and Packaging of Efficient Large-Scale Networks", SC 2009): dimension sizes ``S``,
  all-to-all along every dimension, ``T`` terminals per router. ``K`` (links between two routers
  of a dimension) is 1: parallel links are not modelled yet, and ``K > 1`` is refused.

Global links of the dragonfly follow the *palmtree* arrangement (as in BookSim2's
``dragonflynew``; named by Camarero, Vallejo & Beivide, "Topological Characterization of
Hamming and Dragonfly Networks and Its Implications on Routing", ACM TACO 2014): group ``G``
numbers its ``a*h`` global channels ``c = j*h + i`` (router ``j``, port ``i``); with ``m =
a*h/(g-1)`` links between every two groups, channel ``c`` leads to group ``G + (c mod (g-1)) +
1 (mod g)`` and arrives there on channel ``(c div (g-1))*(g-1) + g - 2 - (c mod (g-1))``. With
``g = a*h + 1``: channel ``c`` of group ``G`` is channel ``a*h - 1 - c`` of group ``G + c + 1``,
so router 0 of every group holds the link to the next group and router ``a-1`` the link from
the previous one.
"""

from __future__ import annotations

import math

import numpy as np

from universal.errors import UserError
from universal.networks.base import Network
from universal.networks.generators import MAX_LINKS

__all__ = ["dragonfly", "fat_tree", "flattened_butterfly", "hyperx", "dragonfly_global_links"]

#: Networks with more nodes than this are refused before anything is allocated.
MAX_NODES = 5_000_000


def _check_size(nodes: int, edges: int, name: str) -> None:
    if nodes > MAX_NODES:
        raise UserError(f"{name} would have {nodes:,} nodes, more than this tool handles ({MAX_NODES:,})")
    if 2 * edges > MAX_LINKS:
        raise UserError(f"{name} would have {2 * edges:,} links, more than this tool handles ({MAX_LINKS:,})")


def _with_terminals(name: str, kind: str, per_router: int, routers: int, router_edges: np.ndarray,
                    params: dict, router_label, first_with_terminals: int = 0) -> Network:
    """A network of ``routers`` routers, terminals numbered first: ``per_router`` terminals on
    each router from ``first_with_terminals`` on (the leaf switches of a fat tree; all routers
    elsewhere)."""
    T = per_router * (routers - first_with_terminals)
    term = np.arange(T, dtype=np.int64)
    router_of = T + first_with_terminals + term // per_router
    edges = np.concatenate([np.stack([term, router_of], axis=1), T + router_edges.reshape(-1, 2)])

    def label(v: int) -> str:
        if v < T:
            return f"{router_label(first_with_terminals + v // per_router)}.t{v % per_router}"
        return router_label(v - T)

    return Network(name=name, kind=kind, num_nodes=T + routers, edges=edges.astype(np.int64),
                   params=params, label_of=label, terminals=term, router_of=router_of)


def _all_to_all(members: np.ndarray) -> np.ndarray:
    """Edges joining every two of the routers in each row of ``members`` (rows of equal length)."""
    i, j = np.triu_indices(members.shape[1], k=1)
    return np.stack([members[:, i].reshape(-1), members[:, j].reshape(-1)], axis=1)


def dragonfly_global_links(a: int, h: int, g: int) -> tuple[np.ndarray, np.ndarray]:
    """The palmtree arrangement: where every global channel of a group leads.

    Parameters
    ----------
    a, h, g : int
        Routers per group, global links per router, groups; ``g - 1`` divides ``a*h``.

    Returns
    -------
    offset : ndarray of int64, shape (a*h,)
        Channel ``c`` of group ``G`` leads to group ``(G + offset[c]) mod g``.
    partner : ndarray of int64, shape (a*h,)
        ...arriving there on channel ``partner[c]`` (an involution: ``partner[partner[c]] == c``).

    Examples
    --------
    >>> off, par = dragonfly_global_links(4, 2, 9)
    >>> off.tolist(), par.tolist()
    ([1, 2, 3, 4, 5, 6, 7, 8], [7, 6, 5, 4, 3, 2, 1, 0])

    References
    ----------
    Camarero, Vallejo & Beivide, "Topological Characterization of Hamming and Dragonfly Networks
    and Its Implications on Routing", ACM TACO 2014 (the palmtree arrangement).
    """
    c = np.arange(a * h, dtype=np.int64)
    step = g - 1
    offset = c % step + 1
    partner = (c // step) * step + (g - 2 - c % step)
    return offset, partner


def dragonfly(p: int, a: int | None = None, h: int | None = None, g: int | None = None) -> Network:
    """The dragonfly of Kim, Dally, Scott & Abts: groups of ``a`` routers, all-to-all inside a
    group, ``h`` global links per router in the palmtree arrangement, ``p`` terminals per router.

    Parameters
    ----------
    p : int
        Terminals per router.
    a, h : int, optional
        Routers per group and global links per router (default the balanced ``2p`` and ``p``).
    g : int, optional
        Groups, ``2 <= g <= a*h + 1`` with ``g - 1`` dividing ``a*h`` (every two groups are
        joined by the same number of global links); default ``a*h + 1``.

    Returns
    -------
    Network
        Kind ``dragonfly``; ``params`` holds p, a, h, g. Router ``j`` of group ``G`` is node
        ``T + G*a + j``, labelled ``gG.rj``; its terminals are labelled ``gG.rj.tI``.

    Examples
    --------
    >>> net = dragonfly(2)
    >>> net.params["g"], net.num_nodes - len(net.terminals), len(net.terminals)
    (9, 36, 72)

    References
    ----------
    J. Kim, W. J. Dally, S. Scott & D. Abts, "Technology-Driven, Highly-Scalable Dragonfly
    Topology", ISCA 2008, §3.
    """
    a = 2 * p if a is None else a
    h = p if h is None else h
    for key, value in (("p", p), ("a", a), ("h", h)):
        if value < 1:
            raise UserError(f"dragonfly needs {key} >= 1 (got {key}={value})")
    g = a * h + 1 if g is None else g
    name = f"dragonfly:p={p},a={a},h={h},g={g}"
    if not 2 <= g <= a * h + 1:
        raise UserError(f"dragonfly with a={a}, h={h} has {a * h} global links per group: g must be "
                        f"between 2 and a*h + 1 = {a * h + 1} (got g={g})")
    if (a * h) % (g - 1):
        raise UserError(f"dragonfly: g - 1 = {g - 1} must divide a*h = {a * h}, so that every two "
                        f"groups are joined by the same number of global links")
    R = g * a
    _check_size(R * (p + 1), R * p + g * a * (a - 1) // 2 + R * h // 2, name)
    routers = np.arange(R, dtype=np.int64).reshape(g, a)
    local = _all_to_all(routers) if a > 1 else np.empty((0, 2), np.int64)
    offset, partner = dragonfly_global_links(a, h, g)
    G = np.repeat(np.arange(g, dtype=np.int64), a * h)
    c = np.tile(np.arange(a * h, dtype=np.int64), g)
    G2 = (G + offset[c]) % g
    c2 = partner[c]
    keep = (G < G2) | ((G == G2) & (c < c2))          # each global link once
    glob = np.stack([G * a + c // h, G2 * a + c2 // h], axis=1)[keep]
    return _with_terminals(name, "dragonfly", p, R, np.concatenate([local, glob]),
                           {"p": p, "a": a, "h": h, "g": g},
                           lambda r: f"g{r // a}.r{r % a}")


def fat_tree(k: int, n: int) -> Network:
    """The k-ary n-tree: ``k**n`` terminals and ``n`` levels of ``k**(n-1)`` switches.

    Switch ``<w, l>`` (level ``l = 0..n-1``, 0 the top; ``w`` an (n-1)-digit word in base k)
    is joined to ``<w', l+1>`` when ``w`` and ``w'`` differ at most in digit ``l``; terminal
    ``p_0 ... p_{n-1}`` hangs off leaf switch ``<p_0 ... p_{n-2}, n-1>``. Digit 0 is the most
    significant (switch ``w`` is index ``sum w_i k**(n-2-i)``).

    Parameters
    ----------
    k : int
        Arity, at least 2.
    n : int
        Levels, at least 1.

    Returns
    -------
    Network
        Kind ``fattree``; switch ``<w, l>`` is node ``T + l*k**(n-1) + w``, labelled ``sL.W``.

    Examples
    --------
    >>> net = fat_tree(4, 2)
    >>> len(net.terminals), net.num_nodes - 16, net.num_links
    (16, 8, 64)

    References
    ----------
    F. Petrini & M. Vanneschi, "k-ary n-trees: High Performance Networks for Massively Parallel
    Architectures", IPPS 1997.
    """
    if k < 2:
        raise UserError(f"fattree needs k >= 2 (got k={k}): a 1-ary tree has one terminal")
    if n < 1:
        raise UserError(f"fattree needs n >= 1 (got n={n})")
    name = f"fattree:k={k},n={n}"
    if n * math.log10(k) > 7:
        raise UserError(f"{name} would have more than {MAX_NODES:,} nodes, more than this tool handles")
    W = k ** (n - 1)
    _check_size(k ** n + n * W, n * k ** n, name)
    words = np.arange(W, dtype=np.int64)
    parts = []
    for level in range(n - 1):
        place = k ** (n - 2 - level)                  # weight of digit `level`
        digit = (words // place) % k
        for other in range(k):
            parts.append(np.stack([level * W + words, (level + 1) * W + words + (other - digit) * place], axis=1))
    edges = np.concatenate(parts) if parts else np.empty((0, 2), np.int64)
    return _with_terminals(name, "fattree", k, n * W, edges, {"k": k, "n": n},
                           lambda s: f"s{s // W}.{s % W}", first_with_terminals=(n - 1) * W)


def hyperx(S: list[int], K: list[int] | None = None, T: int = 1, name: str | None = None,
           kind: str = "hyperx") -> Network:
    """HyperX: routers at the points of an ``S_1 x ... x S_L`` grid, all-to-all along every
    dimension, ``T`` terminals per router.

    Parameters
    ----------
    S : list of int
        Dimension sizes, each at least 2.
    K : list of int, optional
        Links between two routers of each dimension; only 1 (the default) is modelled.
    T : int
        Terminals per router, at least 1.

    Returns
    -------
    Network
        Router ``sum x_i * prod(S_0..S_{i-1})`` (``x_0`` first) is node ``T_total + id``,
        labelled ``rX0.X1...``.

    Examples
    --------
    >>> net = hyperx([4, 4], T=2)
    >>> len(net.terminals), net.num_links // 2 - 32     # 16 routers, each with 3 + 3 neighbours
    (32, 48)

    References
    ----------
    J. H. Ahn, N. Binkert, A. Davis, M. McLaren & R. S. Schreiber, "HyperX: Topology, Routing,
    and Packaging of Efficient Large-Scale Networks", SC 2009.
    """
    S = [int(s) for s in S]
    K = [1] * len(S) if K is None else [int(x) for x in K]
    name = name or f"hyperx:S={','.join(map(str, S))},K={','.join(map(str, K))},T={T}"
    if not S:
        raise UserError(f"{name}: give at least one dimension size S")
    if len(K) != len(S):
        raise UserError(f"{name}: S has {len(S)} dimensions but K has {len(K)} multiplicities "
                        f"(give one K per dimension, or a single K for all)")
    if min(S) < 2:
        raise UserError(f"{name}: every dimension size must be at least 2 (got S={min(S)})")
    if any(x != 1 for x in K):
        raise UserError(f"{name}: K > 1 (parallel links between two routers) is not modelled yet; use K=1")
    if T < 1:
        raise UserError(f"{name}: needs T >= 1 terminals per router (got T={T})")
    if sum(math.log10(s) for s in S) > 7:
        raise UserError(f"{name} would have more than {MAX_NODES:,} routers, more than this tool handles")
    R = math.prod(S)
    _check_size(R * (T + 1), R * T + R * sum(s - 1 for s in S) // 2, name)
    ids = np.arange(R, dtype=np.int64)
    parts, stride = [], 1
    for s in S:
        x = (ids // stride) % s
        for delta in range(1, s):
            keep = x + delta < s
            parts.append(np.stack([ids[keep], ids[keep] + delta * stride], axis=1))
        stride *= s
    edges = np.concatenate(parts)

    def label(r: int) -> str:
        coords = []
        for s in S:
            coords.append(str(r % s))
            r //= s
        return "r" + ".".join(coords)

    return _with_terminals(name, kind, T, R, edges, {"S": S, "K": K, "T": T}, label)


def flattened_butterfly(k: int, n: int, c: int | None = None) -> Network:
    """The k-ary n-flat: the k-ary n-fly with each row's routers merged into one, that is
    HyperX with ``n - 1`` dimensions of size ``k`` and ``c`` terminals per router.

    Parameters
    ----------
    k : int
        Arity, at least 2.
    n : int
        Stages of the butterfly it flattens, at least 2 (``n - 1`` dimensions).
    c : int, optional
        Terminals per router (concentration), default ``k``.

    Returns
    -------
    Network
        Kind ``flatfly``, numbered as :func:`hyperx`.

    Examples
    --------
    >>> net = flattened_butterfly(4, 3)
    >>> len(net.terminals), net.num_nodes - 64
    (64, 16)

    References
    ----------
    J. Kim, W. J. Dally & D. Abts, "Flattened Butterfly: A Cost-Efficient Topology for
    High-Radix Networks", ISCA 2007, §2.
    """
    c = k if c is None else c
    name = f"flatfly:k={k},n={n},c={c}"
    if k < 2 or n < 2:
        raise UserError(f"{name}: needs k >= 2 and n >= 2 (the k-ary n-flat has n - 1 dimensions)")
    if c < 1:
        raise UserError(f"{name}: needs c >= 1 terminals per router")
    if (n - 1) * math.log10(k) > 7:
        raise UserError(f"{name} would have more than {MAX_NODES:,} routers, more than this tool handles")
    net = hyperx([k] * (n - 1), T=c, name=name, kind="flatfly")
    net.params = {"k": k, "n": n, "c": c, "S": [k] * (n - 1), "K": [1] * (n - 1), "T": c}
    return net
