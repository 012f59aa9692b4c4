"""The exact pair-load providers of the all-pairs load analysis (:mod:`universal.oblivious.graphs`):
for each path system with one, the loads ``gamma_c(s, d)`` of every ordered pair tabulated as integer
numerators over a denominator per pair, and the sampled loads of any other path system; and the
all-pairs BFS distances the providers and the analysis's checks share.

:mod:`universal.oblivious.graphs` imports :data:`PAIR_LOADS` back under the same name; its module
docstring says which provider each path system has.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.oblivious import ROUTINGS, Torus, get_routing, pair_loads
from universal.paths import default_base, route_paths
from universal.paths.datacenter import dragonfly_pair_loads
from universal.registry import Spec, check_known_params, parse_spec
from universal.workloads import Problem

_INT_LIMIT = 2 ** 62


# --- providers ------------------------------------------------------------------------------------

Provider = Callable[[Spec, Network, "Path | None"], "tuple[np.ndarray, np.ndarray] | None"]

#: Path-system name -> exact provider ``(spec, network, base_dir) -> (num, den)`` or None when
#: the loads cannot be enumerated exactly (then they are sampled).
PAIR_LOADS: dict[str, Provider] = {}


def _all_pairs(N: int) -> Problem:
    """Every ordered pair of the endpoints ``0..N-1`` (terminals come first where there are any)."""
    src = np.repeat(np.arange(N, dtype=np.int64), N)
    return Problem("all pairs", src, np.tile(np.arange(N, dtype=np.int64), N))


def _count_paths(network: Network, problem: Problem, coll, copies: int) -> np.ndarray:
    """Link crossings of every (s, d) pair of endpoints, shape (N, N, links), from a routed collection."""
    N, L = len(network.endpoints), network.num_links
    owner = np.repeat(np.arange(coll.size), coll.lengths)
    pair = problem.sources[owner] * N + problem.dests[owner]
    counts = np.bincount(pair * L + coll.links, minlength=N * N * L)
    return counts.reshape(N, N, L).astype(np.int64)


def _deterministic(spec: Spec, network: Network, base_dir: Path | None):
    N = len(network.endpoints)
    problem = _all_pairs(N)
    coll = route_paths(spec.text, problem, network, np.random.default_rng(0), base_dir)
    return _count_paths(network, problem, coll, 1), np.ones((N, N), dtype=np.int64)


def _random_shortest(spec: Spec, network: Network, base_dir: Path | None):
    """Exact loads of the random-shortest walk: from every node the packet moves to each
    neighbour one step closer to ``d`` with equal probability (as :func:`shortest_paths` with an
    rng samples it). With ``C`` the lcm of those neighbour counts, the probability of being at
    ``x`` on the way from ``s`` times ``C**(dist(s,d) - dist(x,d))`` is an integer; all loads of a
    pair are kept over ``C**dist(s,d)``."""
    check_known_params(spec, set())
    N, L = network.num_nodes, network.num_links
    dist = _distances(network).astype(np.int64)
    tail, head = network.link_tail, network.link_head
    num = np.zeros((N, N, L), dtype=np.int64)
    den = np.ones((N, N), dtype=np.int64)
    for d in range(N):
        closer = dist[head, d] == dist[tail, d] - 1           # links one step closer to d
        count = np.bincount(tail[closer], minlength=N)
        C = math.lcm(*map(int, np.unique(count[count > 0]))) if closer.any() else 1
        depth = int(dist[:, d].max())
        if C ** depth >= _INT_LIMIT:
            return None
        den[:, d] = C ** dist[:, d]
        P = np.zeros((N, N), dtype=np.int64)                  # P[s, x], scale C**(dist s - dist x)
        P[np.arange(N), np.arange(N)] = 1
        for r in range(depth, 0, -1):
            links = np.flatnonzero(closer & (dist[tail, d] == r))
            x, y = tail[links], head[links]
            flow = P[:, x] * (C // count[x])                  # scale C**(dist s - r + 1)
            num[:, d, links] = flow * C ** (r - 1)
            np.add.at(P.T, y, flow.T)
    return num, den


def _valiant(spec: Spec, network: Network, base_dir: Path | None):
    """Valiant's trick over a base: ``gamma(s, d) = (1/W) sum_w gamma_b(s, w) + gamma_b(w, d)``
    (a uniformly random intermediate among all N nodes, or the W routers of a network with
    terminals, as :func:`valiant_paths` draws it). On the dragonfly without ``base=``: a random
    intermediate group, enumerated by :func:`dragonfly_pair_loads`."""
    check_known_params(spec, {"base"})
    if network.kind == "dragonfly" and "base" not in spec.params:
        return dragonfly_pair_loads(network, "valiant")
    base = parse_spec(spec.params.get("base", default_base(network)))
    inner = _exact_all_nodes(base, network, base_dir)
    if inner is None:
        return None
    bnum, bden = inner
    D = math.lcm(*map(int, np.unique(bden)))
    ends, via = network.endpoints, network.routers
    W = len(via)
    if D * W * int(bnum.max(initial=0) + 1) * 2 >= _INT_LIMIT:
        return None
    scaled = bnum * (D // bden)[:, :, None]
    first = scaled[np.ix_(ends, via)].sum(axis=1)             # (s, links): to every w
    second = scaled[np.ix_(via, ends)].sum(axis=0)            # (d, links): from every w
    num = first[:, None, :] + second[None, :, :]
    return num, np.full((len(ends), len(ends)), W * D, dtype=np.int64)


def _dragonfly_minimal(spec: Spec, network: Network, base_dir: Path | None):
    """``minimal``: enumerated on the dragonfly, the random-shortest walk on the other networks with terminals."""
    check_known_params(spec, set())
    if network.kind == "dragonfly":
        return dragonfly_pair_loads(network, "minimal")
    return _random_shortest(spec, network, base_dir)


def _oblivious(spec: Spec, network: Network, base_dir: Path | None):
    """A torus routing of :mod:`universal.oblivious`: its exact tables from node 0, translated."""
    routing = get_routing(spec.text)                 # checks the parameters (ival:order=xy)
    if network.kind != "torus" or network.params["k"] < 3:
        raise UserError(f"routing {spec.name!r} is defined on tori with k >= 3 (torus:k=,n=), not on {network.name}")
    torus = Torus(network.params["k"], network.params["n"])
    pl = pair_loads(routing, torus)
    N, off = torus.N, torus.offset_table
    num = np.zeros((N, N, network.num_links), dtype=np.int64)
    for (dim, sign), table in pl.tables.items():
        tails = np.arange(N)
        heads = torus.node(torus.coords + sign * np.eye(torus.n, dtype=np.int64)[dim])
        links = network.links_between(tails, heads)
        # gamma_(u -> .)(s, d) = table[d - s, u - s]
        num[:, :, links] = table[off[:, :, None], off[:, None, :]]
    return num, pl.den[off]


for _name in ("shortest", "dimension-order"):
    PAIR_LOADS[_name] = _deterministic
PAIR_LOADS["random-shortest"] = _random_shortest
PAIR_LOADS["valiant"] = _valiant
PAIR_LOADS["minimal"] = _dragonfly_minimal
PAIR_LOADS["nca"] = _random_shortest
for _name in ROUTINGS:
    PAIR_LOADS[_name] = _oblivious


def _exact_all_nodes(spec: Spec, network: Network, base_dir: Path | None):
    """A provider's ``(num, den)``: over all N nodes, except where the provider works on the
    endpoints directly (the dragonfly's own routings), over the endpoints."""
    provider = PAIR_LOADS.get(spec.name)
    return None if provider is None else provider(spec, network, base_dir)


def _exact(spec: Spec, network: Network, base_dir: Path | None):
    """Exact ``(num, den)`` over the endpoints (the terminals, or all nodes), or None."""
    result = _exact_all_nodes(spec, network, base_dir)
    ends = network.endpoints
    if result is not None and result[0].shape[0] != len(ends):
        num, den = result                     # a provider over every node: keep the terminals' pairs
        result = num[np.ix_(ends, ends)], den[np.ix_(ends, ends)]
    return result


def _sampled(spec: Spec, network: Network, samples: int, rng: np.random.Generator,
             base_dir: Path | None) -> tuple[np.ndarray, np.ndarray]:
    N = len(network.endpoints)
    pairs = _all_pairs(N)
    problem = Problem("all pairs", np.repeat(pairs.sources, samples), np.repeat(pairs.dests, samples))
    coll = route_paths(spec.text, problem, network, rng, base_dir)
    return _count_paths(network, problem, coll, samples), np.full((N, N), samples, dtype=np.int64)


def _distances(network: Network) -> np.ndarray:
    """All-pairs BFS distances (float; inf between components)."""
    from scipy.sparse.csgraph import shortest_path  # lazily: a plain route never needs scipy

    return shortest_path(network.adjacency, unweighted=True)
