"""Channel loads, throughput, locality and the exact worst case of any path system on any small
network (SPEC §7 "any graph where possible"; issue 4, scope points 1, 3 and 4).

The pair load ``gamma_c(s, d)`` is the expected number of times a packet from ``s`` to ``d``
crosses the directed link ``c`` (the probability of crossing it when paths are simple). For
every ordered pair the loads of all links are tabulated, as integer numerators over a
denominator per pair, by a provider registered for the path system in :data:`PAIR_LOADS`:

* ``shortest``, ``dimension-order``: deterministic, one path per pair, routed once (exact);
* ``random-shortest``: the walk the path system samples (at every hop a uniformly random
  neighbour one step closer), pushed forward exactly, layer by layer of distance (exact);
* ``valiant[:base=B]``: the average over the N intermediates of the base loads (exact when the
  base is);
* ``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``, ``ival`` on a torus: the torus tables of
  :func:`universal.oblivious.pair_loads`, translated to every source (exact);
* any other path system: ``M`` sampled paths per pair, and the output says
  ``sampled, M paths per pair``.

* ``minimal``, ``valiant`` on a dragonfly: enumerated over every choice of global link and
  intermediate group (:func:`universal.paths.datacenter.dragonfly_pair_loads`, exact);
  ``minimal`` and ``nca`` elsewhere are the ``random-shortest`` walk (exact).

The providers are in :mod:`universal.oblivious.pair_load_providers`; :data:`PAIR_LOADS` is
imported here under the same name.

Capacity on a general graph: the largest channel load of uniform traffic under minimal routing,
the smaller of ``random-shortest`` (balanced over next hops) and ``dimension-order`` (meshes,
tori and hypercubes); on a torus with k >= 3 it is k/8 or (k^2-1)/(8k), as SPEC §7 defines.
Throughput is ``capacity_load / max_load``.

On a network with terminals (dragonfly, fat tree, flattened butterfly, HyperX) traffic runs
between terminals only: the pair loads are a T x T x links array, and the capacity load is 1,
the load of a terminal's own injection link when it sends one packet per step. Throughput is
then in packets per terminal per step: 1.0 means every terminal injects at its link's full rate
(one packet per step) and the network carries it; a throughput of 1/8 means a terminal can
inject one packet every 8 steps before some channel is loaded beyond one packet per step. Locality is the average path length over all pairs
divided by the average BFS distance.

The worst case is a max-weight perfect matching for every link (no symmetry is assumed), exact
by :func:`universal.oblivious.matching.max_weight_matching` (B. Towles, "Finding worst-case
permutations for oblivious routing algorithms", §3).

Examples
--------
>>> from universal.networks import build_network
>>> net = build_network("mesh:k=3,n=2")
>>> pl = graph_pair_loads(net, "dimension-order")
>>> pl.how, pl.load(net.links_between([0], [1])[0], 0, 2)
('exact', Fraction(1, 1))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.oblivious import LoadResult, Torus, WorstCaseResult
from universal.oblivious.loads import advance_progress
from universal.oblivious.matching import max_weight_matching
# imported here too: universal.oblivious.expected and tests name universal.oblivious.graphs.PAIR_LOADS
from universal.oblivious.pair_load_providers import PAIR_LOADS  # noqa: F401
from universal.oblivious.pair_load_providers import _INT_LIMIT, _distances, _exact, _sampled
from universal.oblivious.throughput import exact_column_sums, throughput_histogram
from universal.oblivious.terminals import terminal_traffic, wc_group_traffic
from universal.oblivious.traffic import Grid, Traffic, make_traffic, rational_traffic
from universal.paths import PATH_SYSTEMS
from universal.registry import Spec, check_known_params, parse_spec

__all__ = ["GraphPairLoads", "PAIR_LOADS", "MAX_GRAPH_NODES", "check_graph", "graph_pair_loads", "graph_link_loads",
           "graph_capacity", "graph_traffic", "wc_group_traffic", "graph_load_row", "graph_worst_case", "routing_names"]

#: Largest network analysed on all pairs (the pair loads are an N x N x links array).
MAX_GRAPH_NODES = 256
#: Largest N * N * links entries of the pair-load array (int64).
MAX_PAIR_ENTRIES = 40_000_000
#: Default number of sampled paths per pair for path systems without an exact provider.
DEFAULT_SAMPLES = 200


@dataclass
class GraphPairLoads:
    """Pair loads of one path system on one network: ``gamma[s, d, c] = num[s, d, c] / den[s, d]``.

    Attributes
    ----------
    network : Network
    routing : str
    num : ndarray of int64, shape (N, N, links)
        Over the endpoints (``network.endpoints``: the T terminals of a network with terminals,
        numbered first, else all N nodes), so row ``s`` is node ``s``.
    den : ndarray of int64, shape (N, N)
    how : str
        ``"exact"`` or ``"sampled, M paths per pair"``.
    """

    network: Network
    routing: str
    num: np.ndarray
    den: np.ndarray
    how: str = "exact"

    @property
    def exact(self) -> bool:
        return self.how == "exact"

    @property
    def size(self) -> int:
        """The number of endpoints (terminals, or all nodes)."""
        return self.num.shape[0]

    @cached_property
    def gamma(self) -> np.ndarray:
        """Float pair loads, shape (N, N, links)."""
        return self.num / self.den[:, :, None].astype(np.float64)

    def load(self, link: int, source: int, dest: int) -> Fraction:
        """Exact (or sampled) ``gamma_link(source, dest)``."""
        return Fraction(int(self.num[source, dest, link]), int(self.den[source, dest]))

    def mean_length(self) -> float:
        """Average (expected) path length over all N^2 ordered pairs."""
        return float((self.num.sum(axis=2) / self.den).mean())


# --- checks and the public entry points -----------------------------------------------------------


def routing_names() -> list[str]:
    """Every routing name the load analysis accepts on some network."""
    return [n for n in PATH_SYSTEMS.names() if n != "explicit"]


def check_graph(network: Network) -> None:
    """Refuse networks the all-pairs analysis cannot handle (UserError, one line)."""
    if network.leveled:
        raise UserError(f"the load analysis needs all-pairs traffic; on {network.name} packets go from "
                        "inputs to outputs only (use a mesh, torus, hypercube or any graph)")
    N, L = network.num_nodes, network.num_links
    if N > MAX_GRAPH_NODES or N * N * L > MAX_PAIR_ENTRIES:
        raise UserError(f"{network.name} has {N:,} nodes and {L:,} links; the all-pairs load analysis "
                        f"handles at most {MAX_GRAPH_NODES} nodes and {MAX_PAIR_ENTRIES:,} pair-link entries "
                        f"(nodes² x links, here {N * N * L:,})")
    if np.isinf(_distances(network)).any():
        raise UserError(f"{network.name} is not connected; the load analysis needs a path between every pair")


def check_routing(text: str, network: Network) -> Spec:
    """The parsed routing name, refused with one line if the analysis cannot use it here."""
    spec = parse_spec(text)
    if spec.name == "explicit" or spec.name not in PATH_SYSTEMS:
        raise UserError(f"unknown routing {spec.name!r} for the load analysis (known: {', '.join(routing_names())})")
    PATH_SYSTEMS.entry(spec.name).factory(spec, network, None)     # its own parameter checks
    return spec



def graph_pair_loads(network: Network, routing: str, samples: int = DEFAULT_SAMPLES,
                     rng: np.random.Generator | None = None, exact: bool = True,
                     base_dir: Path | None = None) -> GraphPairLoads:
    """Pair loads of the path system ``routing`` on ``network``, exact where possible.

    Parameters
    ----------
    network : Network
    routing : str
        A path-system name (``shortest``, ``random-shortest``, ``dimension-order``,
        ``valiant:base=...``, and on tori ``dor``, ``romm``, ...).
    samples : int
        Paths per pair when sampling.
    rng : numpy.random.Generator, optional
        Source of the sampled paths.
    exact : bool
        False forces sampling even when an exact provider exists (for tests and comparisons).

    Returns
    -------
    GraphPairLoads

    Examples
    --------
    >>> from universal.networks import build_network
    >>> pl = graph_pair_loads(build_network("hypercube:d=3"), "random-shortest")
    >>> pl.how, pl.load(0, 0, 7)                     # link 0 -> 1 on 1 of the 3 first hops
    ('exact', Fraction(1, 3))
    """
    check_graph(network)
    spec = check_routing(routing, network)
    result = _exact(spec, network, base_dir) if exact else None
    if result is not None:
        return GraphPairLoads(network, spec.text, *result, how="exact")
    if samples < 1:
        raise UserError("sampled pair loads need at least one path per pair")
    rng = rng if rng is not None else np.random.default_rng(0)
    num, den = _sampled(spec, network, samples, rng, base_dir)
    return GraphPairLoads(network, spec.text, num, den, how=f"sampled, {samples} paths per pair")


#: The capacity rule of networks with terminals (see the module docstring).
TERMINAL_CAPACITY_RULE = "1 = one packet per step on a terminal's injection link"


@dataclass(frozen=True)
class Capacity:
    """The per-channel load that counts as throughput 1.

    Attributes
    ----------
    load : Fraction
    rule : str
        How it was obtained (printed in captions and JSON).
    """

    load: Fraction
    rule: str


def graph_capacity(network: Network) -> Capacity:
    """Capacity load of ``network``: the closed form on tori (k >= 3), else the smallest largest
    channel load of uniform traffic under the exact minimal routings available.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> graph_capacity(build_network("torus:k=4,n=2")).load
    Fraction(1, 2)
    >>> graph_capacity(build_network("mesh:k=4,n=2")).load      # k/4 across the bisection
    Fraction(1, 1)
    """
    if network.kind == "torus" and network.params["k"] >= 3:
        t = Torus(network.params["k"], network.params["n"])
        return Capacity(t.capacity_load, "k/8 (k even)" if t.k % 2 == 0 else "(k²-1)/(8k) (k odd)")
    if network.terminals is not None:
        return Capacity(Fraction(1), TERMINAL_CAPACITY_RULE)
    minimal = ["random-shortest"] + (["dimension-order"] if network.kind in ("mesh", "torus", "hypercube") else [])
    best = None
    for name in minimal:
        pl = graph_pair_loads(network, name)
        load = _uniform_max(pl)
        if best is None or load < best[0]:
            best = (load, name)
    return Capacity(best[0], f"max channel load of uniform traffic under {best[1]} (minimal) routing")


def _uniform_max(pl: GraphPairLoads) -> Fraction:
    """Exact largest channel load of uniform traffic (1/N to every destination)."""
    N = pl.size
    sums = {}
    for dv in np.unique(pl.den).tolist():          # group pairs by denominator: exact integer sums
        mask = pl.den == dv
        part = pl.num[mask]
        # int64 sums are exact below 2**62; beyond, Python integers
        sums[dv] = part.sum(axis=0) if dv * len(part) < _INT_LIMIT else part.astype(object).sum(axis=0)
    floats = sum(v / dv for dv, v in sums.items())
    near = np.flatnonzero(floats >= float(floats.max()) * (1 - 1e-9) - 1e-12)
    return max(sum((Fraction(int(v[c]), dv) for dv, v in sums.items()), Fraction(0)) for c in near) / N


def graph_traffic(network: Network, text: str) -> Traffic:
    """A traffic pattern of :mod:`universal.oblivious.traffic` on any network.

    Meshes and hypercubes keep their coordinates (``transpose``, ``tornado``, ``bitcomp`` as on
    tori); other graphs are one line of N nodes. ``neighbor`` is uniform over the graph's
    neighbours. On a network with terminals the patterns act on the T terminals, one line of T,
    and the dragonfly adds ``wc-group`` (see :func:`wc_group_traffic`).
    """
    spec = parse_spec(text)
    if network.terminals is not None:
        return terminal_traffic(network, spec, text)
    if spec.name == "wc-group":
        raise UserError(f"traffic 'wc-group' is defined on the dragonfly, not on {network.name}")
    if spec.name == "neighbor":
        check_known_params(spec, set())
        A = network.adjacency.toarray().astype(np.int64)
        degree = A.sum(axis=1)
        common = math.lcm(*map(int, np.unique(degree)))
        return rational_traffic(spec.text, A * (common // degree)[:, None], common)
    if network.kind in ("mesh", "torus", "hypercube"):
        grid = Grid(network.params["k"], network.params["n"], network.name)
    else:
        grid = Grid(network.num_nodes, 1, network.name)
    return make_traffic(grid, text)


def graph_load_row(pl: GraphPairLoads, traffic: Traffic, capacity: Capacity, min_length: float,
                   rng: np.random.Generator, progress=None) -> LoadResult:
    """Throughput (fraction of capacity) and locality of one path system under one traffic."""
    cap = float(capacity.load)
    loc = pl.mean_length() / min_length if min_length > 0 else 1.0
    N = pl.size
    src = np.arange(N)
    if traffic.is_random:
        worst = np.empty(traffic.count)
        for i in range(traffic.count):
            perm = rng.permutation(N)
            worst[i] = pl.gamma[src, perm].sum(axis=0).max()
            advance_progress(progress, 1)
        thr = cap / worst
        return LoadResult(pl.routing, traffic.name, float(thr.min()), float(worst.max()), loc,
                          mean=float(thr.mean()), best=float(thr.max()), histogram=throughput_histogram(thr),
                          pair_loads=pl.how)
    if pl.how == "exact":
        exact = _exact_perm_max(pl, traffic.perm) if traffic.perm is not None else _exact_matrix_max(pl, traffic)
        if exact is not None:
            return LoadResult.from_exact(pl.routing, traffic.name, capacity.load, exact, loc, pl.how)
    # sampled pair loads (or a matrix given only in floats): the loads are estimates, no fraction is claimed
    m = float(graph_link_loads(pl, traffic).max())
    return LoadResult(pl.routing, traffic.name, cap / m if m > 0 else float("inf"), m, loc, pair_loads=pl.how)


def _exact_matrix_max(pl: GraphPairLoads, traffic: Traffic) -> Fraction | None:
    """Exact largest link load of a matrix pattern given exactly (None without ``exact``)."""
    if traffic.exact is None:
        return None
    num, den = traffic.exact
    floats = np.einsum("sd,sdc->c", traffic.matrix, pl.gamma)
    near = np.flatnonzero(floats >= float(floats.max()) * (1 - 1e-9))
    N = pl.size
    values = pl.num[:, :, near].reshape(N * N, len(near))
    sums, common = exact_column_sums(values, np.asarray(num).reshape(-1), pl.den.reshape(-1))
    return Fraction(int(max(sums)), common) / den


def graph_link_loads(pl: GraphPairLoads, traffic: Traffic) -> np.ndarray:
    """Expected load of every link under one traffic pattern (a matrix or one permutation).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("mesh:k=3,n=2")
    >>> pl = graph_pair_loads(net, "dimension-order")
    >>> float(graph_link_loads(pl, graph_traffic(net, "transpose")).max())  # k - 1 packets turn at a corner
    2.0
    """
    if traffic.is_random:
        raise UserError(f"link loads need one traffic pattern, not {traffic.name!r} (random permutations)")
    if traffic.perm is not None:
        return pl.gamma[np.arange(pl.size), traffic.perm].sum(axis=0)
    return np.einsum("sd,sdc->c", traffic.matrix, pl.gamma)


def _exact_perm_max(pl: GraphPairLoads, perm: np.ndarray) -> Fraction:
    """Exact largest link load of one permutation: floats find the candidates, Fractions decide."""
    src = np.arange(len(perm))
    floats = pl.gamma[src, perm].sum(axis=0)
    near = np.flatnonzero(floats >= float(floats.max()) * (1 - 1e-9) - 1e-12)
    nums, dens = pl.num[src, perm], pl.den[src, perm]
    return max(sum((Fraction(int(a), int(b)) for a, b in zip(nums[:, c], dens) if a), Fraction(0))
               for c in near)


def graph_worst_case(pl: GraphPairLoads, capacity: Capacity, progress=None) -> WorstCaseResult:
    """The exact worst-case permutation of the tabulated path system: one max-weight matching
    per link (all links; no symmetry is assumed), the heaviest reported (lowest link id on ties).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("mesh:k=3,n=2")
    >>> w = graph_worst_case(graph_pair_loads(net, "dimension-order"), graph_capacity(net))
    >>> w.max_load_exact, w.channel
    (Fraction(2, 1), ('1,0', '0,0'))
    """
    net = pl.network
    best = None
    for link in range(net.num_links):
        m = max_weight_matching(pl.num[:, :, link], pl.den)
        if best is None or m.weight > best[1].weight:
            best = (link, m)
        advance_progress(progress, 1)
    link, m = best
    load = m.weight
    cap = capacity.load
    tail, head = int(net.link_tail[link]), int(net.link_head[link])
    return WorstCaseResult(
        routing=pl.routing, torus=net.name, throughput=float(cap / load) if load else float("inf"),
        max_load=float(load), max_load_exact=load, channel=(net.label_of(tail), net.label_of(head)),
        channel_index=link, permutation=m.permutation, exact=True, error_bound=Fraction(0),
        throughput_exact=cap / load if load else Fraction(0), focus_channels=[f"all {net.num_links} links"],
        method="certified", pair_loads=pl.how)


def min_mean_length(network: Network) -> float:
    """Average BFS distance over all N^2 ordered pairs of endpoints (terminals where there are
    any): the minimal average path length."""
    ends = network.endpoints
    return float(_distances(network)[np.ix_(ends, ends)].mean())
