"""Path systems: how a path is chosen for every (source, destination) pair.

* ``shortest`` / ``random-shortest``: shortest paths on any graph; at every hop the next node
  is the lowest-numbered (resp. a uniformly random) neighbour one step closer to the destination.
* ``dimension-order``: bit-fixing on hypercubes, dimension order (x_0 first, the shorter way
  round, ``+`` on a tie) on meshes and tori, the unique level path on butterflies.
* ``valiant``: Valiant's trick over a base system: first to a uniformly random intermediate
  node (a random row on leveled networks), then to the destination.
* ``explicit:file=PATH``: the user's own paths, one per line as node names, validated.
* ``minimal`` (dragonfly, fat tree, flattened butterfly, HyperX) and ``nca`` (fat tree): the
  minimal routings of the networks with terminals (:mod:`universal.paths.datacenter`); on the
  dragonfly ``valiant`` goes through a random intermediate group, on the others through a random
  router.
* ``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``, ``ival`` (tori only): the oblivious routings of
  the load analysis (:mod:`universal.paths.torus`, analysed by :mod:`universal.oblivious`), each path drawn from the same distribution
  whose exact channel loads ``universal load`` reports.

Reference: Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", §2.3, §3.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from universal.datafiles import read_rows
from universal.errors import UserError
from universal.networks import Network, butterfly, resolve_path
from universal.paths.torus.algorithms import ROUTING_FACTORIES, ROUTINGS, get_routing, sample_paths
from universal.paths.torus.geometry import MAX_NODES as OBLIVIOUS_MAX_NODES
from universal.paths.collection import KEEP_LOADS_LINKS, PathCollection
from universal.paths.level_rows import LevelRowsCollection
from universal.paths.datacenter import dragonfly_paths
from universal.registry import Registry, Spec, check_known_params, parse_spec, with_file_resolved
from universal.workloads import Problem


@dataclass
class PathSystem:
    """A named rule that turns a problem into a :class:`PathCollection`.

    ``route(problem, network, rng)`` does the work; ``caption`` explains the layout in tables;
    ``deterministic`` says the paths do not depend on ``rng`` (one routing of every pair then
    gives exact pair loads, e.g. for the expected congestion).
    """

    name: str
    route: Callable[[Problem, Network, np.random.Generator], PathCollection]
    caption: str = ""
    deterministic: bool = False


PATH_SYSTEMS: Registry[PathSystem] = Registry("path system")


# --- leveled networks: the level path (bit-fixing on butterflies) -------------------------------


def _check_leveled_problem(problem: Problem, network: Network) -> None:
    levels = network.levels
    bad = (levels[problem.sources] != 0) | (levels[problem.dests] != levels[network.outputs[0]])
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise UserError(
            f"on {network.name} packets go from inputs (level 0) to outputs; pair "
            f"{network.label_of(int(problem.sources[i]))} -> {network.label_of(int(problem.dests[i]))} does not"
        )


def _level_links(d: int, start_level: int, rows: np.ndarray, target_rows: np.ndarray,
                 out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Links of the level paths over levels ``start_level .. start_level + d`` fixing bits 0..d-1.

    Uses the link numbering of :func:`universal.networks.generators.butterfly`: the forward link
    from ``(i, r)`` of kind ``c`` is ``4 * (i * 2**d + r) + 2 * c``. Returns ``(links, final rows)``
    with ``links`` of shape (len(rows), d), written into ``out`` if given (e.g. int32 columns of
    a larger matrix, so that no int64 copy of the paths is ever made).

    Before step ``i`` the row holds the target's bits below ``i`` and its own from ``i`` up, and
    the link crosses exactly when bit ``i`` differs: each column is a few in-place operations in
    the type of ``out`` (int32 on every butterfly up to BF(20) with Valiant's trick), with no
    row updated step after step.

    Examples
    --------
    >>> links, final = _level_links(2, 0, np.array([0, 3]), np.array([3, 3]))
    >>> links.tolist(), final.tolist()     # row 0 crosses at both levels, row 3 at neither
    ([[2, 22], [12, 28]], [3, 3])
    """
    if out is None:
        out = np.empty((len(rows), d), dtype=np.int64)
    kind = out.dtype.type
    start = np.asarray(rows).astype(out.dtype)
    differ = start ^ np.asarray(target_rows).astype(out.dtype)   # the bits the path fixes
    start4, differ4 = start << 2, differ << 2
    part, cross = np.empty_like(start), np.empty_like(start)
    for step in range(d):
        np.bitwise_and(differ4, kind(((1 << step) - 1) << 2), out=part)
        np.bitwise_xor(part, start4, out=part)                      # 4 * row before the step
        np.add(part, kind(4 * (start_level + step) << d), out=part)
        if step:                                                    # 2 * (bit `step` of differ)
            np.right_shift(differ, step - 1, out=cross)
        else:
            np.left_shift(differ, 1, out=cross)
        np.bitwise_and(cross, kind(2), out=cross)
        np.bitwise_or(part, cross, out=out[:, step])
    return out, start ^ differ


def _row_blocks(rows: int, columns: int, cache_bytes: int = 1 << 20) -> list[slice]:
    """Slices of about ``cache_bytes`` of a (rows, columns) int32 matrix filled column by column.

    Filling a whole column of a million-row path matrix touches a cache line per row; a block
    that fits in cache is filled column by column at the speed of sequential writes.
    """
    step = max(1, cache_bytes // (4 * max(columns, 1)))
    return [slice(i, min(i + step, rows)) for i in range(0, rows, step)]


def _collection_from_matrix(network: Network, link_matrix: np.ndarray, sources: np.ndarray,
                            dests: np.ndarray, system: str, note: str = "") -> PathCollection:
    n, length = link_matrix.shape
    offsets = np.arange(n + 1, dtype=np.int64) * length
    return PathCollection(network, offsets, link_matrix.reshape(-1), sources, dests, system, note)


def level_paths(problem: Problem, network: Network) -> PathCollection:
    """The unique level-by-level paths on BF(d), and the d-hop level paths on W-BF(d)."""
    _check_leveled_problem(problem, network)
    d = network.params["d"]
    width = 1 << d
    if network.kind == "butterfly" and _keeps_rows(problem.size * d):
        passes = _row_passes(d, [problem.sources, problem.dests])
        paths: PathCollection = LevelRowsCollection(network, d, passes, problem.sources, problem.dests,
                                                    "dimension-order")
        _count_level_loads(paths, d, passes)
        return paths
    links = np.empty((problem.size, d), dtype=network.link_type)
    if not _fill_compiled(links, d, [(problem.sources % width, problem.dests % width)]):
        for block in _row_blocks(problem.size, d):
            _level_links(d, 0, problem.sources[block] % width, problem.dests[block] % width, out=links[block])
    paths = _collection_from_matrix(network, links, problem.sources, problem.dests, "dimension-order")
    if network.kind == "butterfly":         # W-BF(d)'s last level wraps to level 0's nodes
        _count_level_loads(paths, d, [(problem.sources % width, problem.dests % width)])
    return paths


#: Butterfly level path collections of at least this many link crossings count their C from the
#: rows the packets pass, with numba (:func:`_count_level_loads`). It is the engine's threshold for
#: compiled kernels (``universal.engine.batch.COMPILED_MIN_HOPS_COLD``): from there on numba is
#: loaded for routing anyway; below it counting the path array takes tens of milliseconds.
CLOSED_MIN_HOPS = 16_000_000


def _keeps_rows(hops: int) -> bool:
    """Whether a butterfly's level path collection of ``hops`` hops in all is kept as the rows its
    packets pass (:class:`~universal.paths.level_rows.LevelRowsCollection`, its path array written
    only if read): from :data:`CLOSED_MIN_HOPS` on, with numba (which counts C from those rows and
    routes from them)."""
    if hops < CLOSED_MIN_HOPS:
        return False
    from universal.paths.level_loads import NUMBA     # imports numba: large runs only
    return NUMBA


#: The path systems whose paths on BF(d) are its level paths (and Valiant's trick's passes, with
#: one of them as its base).
LEVEL_PATH_SYSTEMS = ("dimension-order", "shortest", "random-shortest")


def keeps_rows(network: Network, system: str, packets: int) -> bool:
    """Whether ``system``'s paths for ``packets`` packets on ``network`` are kept as the rows the
    packets pass (:class:`~universal.paths.level_rows.LevelRowsCollection`): a butterfly's level
    paths, or Valiant's trick on them, of :data:`CLOSED_MIN_HOPS` hops or more, with numba. Asked
    before the paths exist (the memory estimate), by the rule that builds them (:func:`_keeps_rows`).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> bf, torus = build_network("butterfly:d=4"), build_network("torus:n=2,k=4")
    >>> keeps_rows(bf, "valiant", 64), keeps_rows(torus, "valiant", 10**8)   # (BF(4) from 2 million packets)
    (False, False)
    """
    if network.kind != "butterfly":
        return False
    spec = parse_spec(system)
    passes = 1
    if spec.name == "valiant":
        spec, passes = parse_spec(spec.params.get("base", default_base(network))), 2
    return spec.name in LEVEL_PATH_SYSTEMS and _keeps_rows(packets * passes * network.params["d"])


def _row_passes(d: int, nodes: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The passes ``(rows[k], rows[k + 1])`` of level paths through the rows of the given nodes
    (a node's row is its id mod 2^d), each kept once in the smallest type the counting and routing
    kernels take (int32 up to BF(29): 16 MB per row array on BF(20) with a 4-relation, where int64
    takes 32 MB), written there directly (no int64 rows in between)."""
    kind = np.int32 if d < 30 else np.int64
    rows = [np.bitwise_and(n, (1 << d) - 1, out=np.empty(len(n), dtype=kind), casting="unsafe") for n in nodes]
    return list(zip(rows[:-1], rows[1:]))


def _fill_compiled(links: np.ndarray, d: int, passes: list[tuple[np.ndarray, np.ndarray]]) -> bool:
    """Fill a large butterfly level path matrix compiled, row by row
    (:func:`universal.paths.level_loads.fill_level_links`: on BF(20) with Valiant's trick
    a fraction of the numpy fill's time, which goes column by column); False, nothing written,
    below :data:`CLOSED_MIN_HOPS` or without numba."""
    if links.size < CLOSED_MIN_HOPS:
        return False
    from universal.paths.level_loads import NUMBA, fill_level_links     # imports numba: large runs only
    if not NUMBA:
        return False
    fill_level_links(passes, d, links)
    return True


def _count_level_loads(paths: PathCollection, d: int, passes: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Give a butterfly's large level path collection its C counted from the rows the packets
    pass (:func:`universal.paths.level_loads.level_loads`: on BF(20) with Valiant's trick a
    fraction of the time of counting the path array), and its link loads where it keeps them."""
    if int(paths.offsets[-1]) < CLOSED_MIN_HOPS:       # the hops, without writing a path array
        return
    from universal.paths.level_loads import NUMBA, level_loads     # imports numba: large runs only
    if not NUMBA:
        return
    keep = paths.network.num_links <= KEEP_LOADS_LINKS
    counted = level_loads(d, passes, paths.network.num_links if keep else None)
    if counted is not None:
        paths.set_loads(*counted)


def multibutterfly_paths(problem: Problem, network: Network, rng: np.random.Generator | None = None) -> PathCollection:
    """Level paths on a multibutterfly: at every level one of the links into the output set that
    leads to the destination (the splitter rule's allowed set), the lowest-numbered one
    (``dimension-order``) or, with ``rng``, a uniformly random one drawn now (``random-splitter``).

    Parameters
    ----------
    problem : Problem
        From inputs to outputs.
    network : Network
        A multibutterfly.
    rng : numpy.random.Generator, optional

    Returns
    -------
    PathCollection

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.workloads import build_problem
    >>> net = build_network("multibutterfly:s=16,d=3")
    >>> prob = build_problem("permutation:random", net, np.random.default_rng(0))
    >>> paths = multibutterfly_paths(prob, net, np.random.default_rng(1))
    >>> paths.dilation, bool(np.all(paths.dests == prob.dests))
    (3, True)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §5.1.
    """
    from universal.networks.multibutterfly import splitter_paths

    _check_leveled_problem(problem, network)
    rows = len(network.inputs)
    links = splitter_paths(network, problem.sources, problem.dests - network.depth * rows, rng)
    name = "dimension-order" if rng is None else "random-splitter"
    return _collection_from_matrix(network, links, problem.sources, problem.dests, name)


# --- meshes, tori and hypercubes: dimension order ------------------------------------------------


def _grid_dimension_order_hops(network: Network, sources: np.ndarray, dests: np.ndarray) -> list[np.ndarray]:
    """The hops (tails, heads, owner) of dimension-order paths on meshes and tori."""
    k, n = network.params["k"], network.params["n"]
    wrap = network.kind in ("torus", "hypercube") and k > 2
    current = sources.astype(np.int64).copy()
    steps: list[tuple[np.ndarray, np.ndarray]] = []  # (moving mask, next node) per hop
    for dim in range(n):
        stride = k**dim
        x = (current // stride) % k
        y = (dests // stride) % k
        forward = (y - x) % k if wrap else np.abs(y - x)
        if wrap:
            backward = (x - y) % k
            go_plus = forward <= backward  # ties (k even, offset k/2) go in the + direction
            hops = np.where(go_plus, forward, backward)
            delta = np.where(go_plus, 1, -1)
        else:
            hops = forward
            delta = np.where(y >= x, 1, -1)
        for h in range(int(hops.max()) if len(hops) else 0):
            moving = hops > h
            xs = (current // stride) % k
            nxt = current + (((xs + delta) % k) - xs) * stride
            current = np.where(moving, nxt, current)
            steps.append((moving, current.copy()))
    return _compact_hops(sources, steps)


def _compact_hops(sources: np.ndarray, steps: list[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """Turn per-hop (moving mask, node) records into a (tails, heads, owner) triple of flat arrays."""
    if not steps:
        empty = np.empty(0, dtype=np.int64)
        return [empty, empty, empty]
    moving = np.stack([m for m, _ in steps], axis=1)
    nodes = np.stack([v for _, v in steps], axis=1)
    previous = np.concatenate([sources[:, None], nodes[:, :-1]], axis=1)
    # A path's moves are not contiguous across dimensions in the matrix; keep them in hop order.
    owner = np.repeat(np.arange(len(sources)), moving.sum(axis=1))
    return [previous[moving], nodes[moving], owner]


def _collection_from_hops(network: Network, sources: np.ndarray, dests: np.ndarray,
                          hops: list[np.ndarray], system: str, note: str = "") -> PathCollection:
    tails, heads, owner = hops
    counts = np.bincount(owner, minlength=len(sources))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    links = network.links_between(tails, heads)
    return PathCollection(network, offsets, links, sources, dests, system, note)


def dimension_order_paths(problem: Problem, network: Network) -> PathCollection:
    """Dimension-order (e-cube, bit-fixing) paths; the level path on butterflies; on a
    multibutterfly the level path that fixes one base-√s digit of the row per level, taking the
    lowest-numbered of the allowed links (:func:`multibutterfly_paths`)."""
    if network.kind in ("butterfly", "wrapped-butterfly"):
        return level_paths(problem, network)
    if network.kind == "multibutterfly":
        return multibutterfly_paths(problem, network)
    if network.kind not in ("mesh", "torus", "hypercube"):
        raise UserError(f"dimension-order routing needs a mesh, torus, hypercube or (multi)butterfly, not "
                        f"{network.name}")
    hops = _grid_dimension_order_hops(network, problem.sources, problem.dests)
    return _collection_from_hops(network, problem.sources, problem.dests, hops, "dimension-order")


# --- any graph: shortest paths -------------------------------------------------------------------


def _distance_to(network: Network, dests: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``f(nodes, packet_index) -> hop distance from nodes to dests[packet_index]``."""
    if network.kind in ("mesh", "torus", "hypercube"):
        return lambda nodes, who: network.distances(nodes, dests[who])
    from scipy.sparse.csgraph import shortest_path

    unique, row_of = np.unique(dests, return_inverse=True)
    if len(unique) * network.num_nodes > 50_000_000:
        raise UserError(f"shortest paths on {network.name} to {len(unique)} destinations need too much memory")
    table = shortest_path(network.adjacency, unweighted=True, indices=unique)
    return lambda nodes, who: table[row_of[who], nodes]


def shortest_paths(problem: Problem, network: Network, rng: np.random.Generator | None = None) -> PathCollection:
    """Shortest paths, hop by hop: among neighbours one step closer, the lowest id (or a random one).

    Parameters
    ----------
    rng : numpy.random.Generator, optional
        If given, each hop picks uniformly among the neighbours one step closer to the destination
        (``random-shortest``); if None the lowest-numbered one (``shortest``).
    """
    if network.kind == "butterfly":
        # Between an input and an output of BF(d) the level path is the unique shortest path.
        coll = level_paths(problem, network)
        coll.system = "random-shortest" if rng is not None else "shortest"
        return coll
    sources, dests = problem.sources, problem.dests
    distance = _distance_to(network, dests)
    remaining = distance(sources, np.arange(len(sources)))
    if np.any(~np.isfinite(remaining)):
        i = int(np.flatnonzero(~np.isfinite(remaining))[0])
        raise UserError(f"no path from {network.label_of(int(sources[i]))} to {network.label_of(int(dests[i]))} in {network.name}")
    remaining = remaining.astype(np.int64)
    indptr, indices = network.adjacency.indptr, network.adjacency.indices
    current = sources.astype(np.int64).copy()
    steps = []
    for _ in range(int(remaining.max()) if len(remaining) else 0):
        who = np.flatnonzero(remaining > 0)
        here = current[who]
        degree = indptr[here + 1] - indptr[here]
        owner = np.repeat(np.arange(len(who)), degree)
        first = np.repeat(indptr[here] - np.cumsum(degree) + degree, degree)
        candidates = indices[first + np.arange(len(owner))].astype(np.int64)
        closer = distance(candidates, who[owner]) == remaining[who][owner] - 1
        owner, candidates = owner[closer], candidates[closer]
        if rng is None:
            key = candidates.astype(np.float64)
        else:
            key = rng.random(len(candidates))
        order = np.lexsort((key, owner))
        owner, candidates = owner[order], candidates[order]
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        nxt = current.copy()
        nxt[who[owner[starts]]] = candidates[starts]
        moving = remaining > 0
        current = nxt
        remaining = remaining - moving
        steps.append((moving, current.copy()))
    hops = _compact_hops(sources, steps)
    name = "random-shortest" if rng is not None else "shortest"
    return _collection_from_hops(network, sources, dests, hops, name)


# --- Valiant's trick -----------------------------------------------------------------------------


def _concatenate(first: PathCollection, second: PathCollection, system: str, note: str) -> PathCollection:
    lengths = first.lengths + second.lengths
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    owner = np.concatenate([np.repeat(np.arange(first.size), first.lengths),
                            np.repeat(np.arange(second.size), second.lengths)])
    phase = np.concatenate([np.zeros(len(first.links), np.int64), np.ones(len(second.links), np.int64)])
    order = np.lexsort((phase, owner))
    links = np.concatenate([first.links, second.links])[order]
    return PathCollection(first.network, offsets, links, first.sources, second.dests, system, note)


VALIANT_BUTTERFLY_NOTE = "valiant on BF(d): two butterflies back to back (depth 2d); C counts the links of both"
VALIANT_WRAPPED_NOTE = "valiant on W-BF(d): both passes (d hops each) share the wrapped butterfly's links"


def valiant_butterfly_paths(problem: Problem, network: Network, rng: np.random.Generator,
                            middle: np.ndarray | None = None) -> PathCollection:
    """Valiant's trick on BF(d): the first pass ends in a random row of a second butterfly.

    The paths live on :func:`~universal.networks.butterfly` ``(d, passes=2)``: levels
    ``0..d`` are the first butterfly, ``d..2d`` the second, so the collection stays leveled with
    depth 2d and C counts the links of both. ``middle`` gives the intermediate rows instead of
    drawing them (one per packet).
    """
    _check_leveled_problem(problem, network)
    d = network.params["d"]
    width = 1 << d
    host = butterfly(d, passes=2)
    if middle is None:
        middle = rng.integers(0, width, size=problem.size)
    if _keeps_rows(problem.size * 2 * d):
        # the path array (4 bytes per hop) is not written: C is counted and the run is routed from
        # the rows; the sources are the problem's own, shared (no path system writes into them)
        passes = _row_passes(d, [problem.sources, middle, problem.dests])
        dests = np.add(passes[1][1], 2 * d * width, dtype=np.int64)
        paths: PathCollection = LevelRowsCollection(host, d, passes, problem.sources, dests, "valiant",
                                                    VALIANT_BUTTERFLY_NOTE)
        _count_level_loads(paths, d, passes)
        return paths
    src_rows, dst_rows = problem.sources % width, problem.dests % width
    dests = 2 * d * width + dst_rows
    links = np.empty((problem.size, 2 * d), dtype=host.link_type)
    if not _fill_compiled(links, d, [(src_rows, middle), (middle, dst_rows)]):
        for block in _row_blocks(problem.size, 2 * d):
            _, rows = _level_links(d, 0, src_rows[block], middle[block], out=links[block, :d])
            _level_links(d, d, rows, dst_rows[block], out=links[block, d:])
    # the sources are the problem's own, shared as the level paths share them (no path system
    # writes into them): a copy is 34 MB on BF(20), kept as long as the paths
    paths = _collection_from_matrix(host, links, problem.sources, dests, "valiant", VALIANT_BUTTERFLY_NOTE)
    _count_level_loads(paths, d, [(src_rows, middle), (middle, dst_rows)])
    return paths


def valiant_paths(problem: Problem, network: Network, rng: np.random.Generator,
                  base: PathSystem | None = None, middle: np.ndarray | None = None) -> PathCollection:
    """Valiant's trick: route to a random intermediate, then to the destination, on the base system.

    On BF(d) with the default base see :func:`valiant_butterfly_paths`. On W-BF(d) the
    intermediate is a random row and both passes use the level paths of the same links.
    Elsewhere the intermediate is a uniformly random node, or router on a network with terminals
    (the dragonfly's own ``valiant`` picks a group instead: :mod:`universal.paths.datacenter`). ``middle`` gives the intermediates
    instead of drawing them: one per packet, as indices into the inputs (rows) on leveled
    networks and as nodes elsewhere.

    References
    ----------
    L. G. Valiant, "A Scheme for Fast Parallel Communication", SIAM J. Comput. 11(2), 1982;
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", §3.2 and Theorem 12.
    """
    if base is None:
        base = PATH_SYSTEMS.entry(default_base(network)).factory(Spec(default_base(network)), network, None)
    if network.kind == "butterfly" and base.name in LEVEL_PATH_SYSTEMS:
        return valiant_butterfly_paths(problem, network, rng, middle)
    if middle is not None:
        middle = network.inputs[middle] if network.inputs is not None else np.asarray(middle, dtype=np.int64)
    elif network.inputs is not None:
        middle = network.inputs[rng.integers(0, len(network.inputs), size=problem.size)]
    else:
        # a uniformly random router: terminals only send and receive (every node elsewhere)
        routers = network.routers
        middle = routers[rng.integers(0, len(routers), size=problem.size)]
    first = base.route(Problem(problem.name, problem.sources, middle), network, rng)
    second = base.route(Problem(problem.name, middle, problem.dests), network, rng)
    note = VALIANT_WRAPPED_NOTE if network.kind == "wrapped-butterfly" else f"valiant over {base.name}"
    return _concatenate(first, second, "valiant", note)


def longest_path_bound(network: Network, system: str) -> int:
    """A rough upper bound on path lengths under ``system``, to size work before routing anything.

    The depth of a leveled network, n(k - 1) on a mesh or torus, N - 1 elsewhere; twice that
    for Valiant's trick.

    >>> from universal.networks import build_network
    >>> longest_path_bound(build_network("butterfly:d=8"), "valiant")
    16
    """
    if network.leveled:
        longest = network.depth
    elif network.kind in ("mesh", "torus", "hypercube"):
        longest = network.params["n"] * (network.params["k"] - 1)
    else:
        longest = network.num_nodes - 1
    return longest * (2 if parse_spec(system).name == "valiant" else 1)


def default_base(network: Network) -> str:
    """The path system used when none is named: by Valiant's trick and by ``route`` without ``--paths``.

    Dimension order where the network has dimensions, ``minimal`` on the networks with terminals
    (dragonfly, fat tree, flattened butterfly, HyperX), shortest paths elsewhere (edge lists,
    networkx graphs), where dimension order does not exist.

    Parameters
    ----------
    network : Network

    Returns
    -------
    str

    Examples
    --------
    >>> import networkx as nx
    >>> from universal.networks import build_network, from_networkx
    >>> default_base(build_network("torus:k=4,n=2")), default_base(from_networkx(nx.petersen_graph()))
    ('dimension-order', 'shortest')
    """
    if network.kind in ("butterfly", "wrapped-butterfly", "multibutterfly", "mesh", "torus", "hypercube"):
        return "dimension-order"
    if network.kind in TERMINAL_KINDS:
        return "minimal"
    return "shortest"


# --- explicit paths ------------------------------------------------------------------------------


def read_explicit_paths(network: Network, path: Path) -> list[list[int]]:
    """Read one path per line as node names; ``#`` starts a comment."""
    result = []
    for lineno, fields in read_rows(path, "paths"):
        try:
            result.append([network.node(f) for f in fields])
        except UserError as exc:
            raise UserError(f"{path}:{lineno}: {exc}") from None
    if not result:
        raise UserError(f"{path}: no paths")
    return result


def explicit_paths(problem: Problem, network: Network, file: Path) -> PathCollection:
    """The user's paths; path ``i`` must run from the problem's ``i``-th source to its destination."""
    node_paths = read_explicit_paths(network, file)
    coll = PathCollection.from_node_paths(network, node_paths, "explicit")
    if coll.size != problem.size:
        raise UserError(f"{file} has {coll.size} paths but the problem has {problem.size} packets")
    wrong = (coll.sources != problem.sources) | (coll.dests != problem.dests)
    if np.any(wrong):
        i = int(np.flatnonzero(wrong)[0])
        raise UserError(
            f"{file}: path {i + 1} runs {network.label_of(int(coll.sources[i]))} -> "
            f"{network.label_of(int(coll.dests[i]))}, but packet {i + 1} goes "
            f"{network.label_of(int(problem.sources[i]))} -> {network.label_of(int(problem.dests[i]))}"
        )
    return coll


# --- the registry --------------------------------------------------------------------------------


@PATH_SYSTEMS.register("shortest", "shortest paths, lowest-numbered next hop")
def _shortest(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
    check_known_params(spec, set())
    return PathSystem("shortest", lambda prob, net, rng: shortest_paths(prob, net), deterministic=True)


@PATH_SYSTEMS.register("random-shortest", "shortest paths, uniformly random next hop among closer neighbours")
def _random_shortest(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
    check_known_params(spec, set())
    return PathSystem("random-shortest", lambda prob, net, rng: shortest_paths(prob, net, rng))


@PATH_SYSTEMS.register("dimension-order", "bit-fixing / dimension order; the level path on butterflies")
def _dimension_order(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
    check_known_params(spec, set())
    return PathSystem("dimension-order", lambda prob, net, rng: dimension_order_paths(prob, net),
                      deterministic=True)


@PATH_SYSTEMS.register("random-splitter", "multibutterfly: at every level a random link into the output set that "
                       "leads to the destination, drawn at creation")
def _random_splitter(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
    check_known_params(spec, set())
    if network.kind != "multibutterfly":
        raise UserError(f"random-splitter paths need a multibutterfly, not {network.name}")
    return PathSystem("random-splitter", lambda prob, net, rng: multibutterfly_paths(prob, net, rng))


#: Network kinds with terminals, and their ``minimal`` routing.
TERMINAL_KINDS = ("dragonfly", "fattree", "flatfly", "hyperx")


@PATH_SYSTEMS.register("minimal", "minimal routing of a dragonfly (local-global-local), fat tree "
                       "(nearest common ancestor), flattened butterfly or HyperX (random dimension order)")
def _minimal(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
    check_known_params(spec, set())
    if network.kind not in TERMINAL_KINDS:
        raise UserError(f"path system 'minimal' is defined on dragonfly, fattree, flatfly and hyperx networks, "
                        f"not on {network.name} (use shortest, random-shortest or dimension-order)")
    if network.kind == "dragonfly":
        return PathSystem("minimal", lambda prob, net, rng: dragonfly_paths("minimal", prob.sources, prob.dests, net, rng))
    return PathSystem("minimal", lambda prob, net, rng: _named(shortest_paths(prob, net, rng), "minimal"))


@PATH_SYSTEMS.register("nca", "fat tree: up through random parents to a nearest common ancestor, then down")
def _nca(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
    check_known_params(spec, set())
    if network.kind != "fattree":
        raise UserError(f"path system 'nca' (nearest common ancestor) is defined on fat trees (fattree:k=,n=), "
                        f"not on {network.name}")
    return PathSystem("nca", lambda prob, net, rng: _named(shortest_paths(prob, net, rng), "nca"))


def _named(coll: PathCollection, system: str) -> PathCollection:
    coll.system = system
    return coll


@PATH_SYSTEMS.register("valiant", "Valiant's trick: via a random intermediate (valiant:base=NAME)")
def _valiant(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
    check_known_params(spec, {"base"})
    if network.kind == "dragonfly" and "base" not in spec.params:
        return PathSystem("valiant", lambda prob, net, rng: dragonfly_paths("valiant", prob.sources, prob.dests, net, rng),
                          "valiant on the dragonfly: via a random intermediate group")
    base_name = spec.params.get("base", default_base(network))
    if parse_spec(base_name).name == "valiant":
        raise UserError("valiant:base= cannot itself be valiant")
    if network.kind == "multibutterfly":
        raise UserError("valiant is not provided on a multibutterfly (its second pass would need a second "
                        "multibutterfly behind the first); use random-splitter paths")
    base = build_path_system(base_name, network, base_dir)
    caption = ""
    if network.kind == "butterfly" and base.name in LEVEL_PATH_SYSTEMS:
        caption = VALIANT_BUTTERFLY_NOTE
    elif network.kind == "wrapped-butterfly":
        caption = VALIANT_WRAPPED_NOTE
    name = "valiant" if "base" not in spec.params else spec.text
    return PathSystem(name, lambda prob, net, rng: valiant_paths(prob, net, rng, base), caption)


@PATH_SYSTEMS.register("explicit", "the user's paths from file=PATH, one per line as node names")
def _explicit(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
    check_known_params(spec, {"file"})
    file = spec.params.get("file") or spec.arg
    if not file:
        raise UserError(f"{spec.text!r}: give the file as explicit:file=PATH")
    path = resolve_path(file, base_dir)
    return PathSystem("explicit", lambda prob, net, rng: explicit_paths(prob, net, path))


def oblivious_paths(routing: str, problem: Problem, network: Network, rng: np.random.Generator) -> PathCollection:
    """Paths drawn from the oblivious routing ``routing`` of the load analysis (tori only).

    Each packet's path is sampled independently with
    :func:`universal.paths.torus.sample_paths`, so the expected number of paths on a link is the
    channel load that ``universal load`` computes exactly for the same traffic.

    Parameters
    ----------
    routing : str
        ``dor``, ``val``, ``romm``, ``rlb``, ``rlbth`` or ``ival``.
    problem : Problem
    network : Network
        A ``torus:k=,n=`` network with k >= 3.
    rng : numpy.random.Generator

    Returns
    -------
    PathCollection

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.workloads import build_problem
    >>> net = build_network("torus:k=8,n=2")
    >>> prob = build_problem("permutation:tornado", net, np.random.default_rng(0))
    >>> coll = oblivious_paths("romm", prob, net, np.random.default_rng(0))
    >>> coll.congestion, coll.dilation, coll.is_shortest
    (3, 3, True)

    References
    ----------
    B. Towles, "Finding worst-case permutations for oblivious routing algorithms", §5 (ROMM);
    B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design", Table 1.
    """
    if network.kind != "torus":
        raise UserError(f"path system {routing!r} is defined on tori (torus:k=,n=) only, not on {network.name}")
    k, n = network.params["k"], network.params["n"]
    if network.num_nodes > OBLIVIOUS_MAX_NODES:
        raise UserError(f"path system {routing!r} handles tori of at most {OBLIVIOUS_MAX_NODES} nodes; "
                        f"{network.name} has {network.num_nodes:,}")
    node_paths = sample_paths(routing, k, n, problem.sources, problem.dests, rng)
    return PathCollection.from_node_paths(network, node_paths, routing)


def _register_oblivious(name: str, summary: str) -> None:
    """File the oblivious routing ``name`` in :data:`PATH_SYSTEMS` (one entry per routing)."""

    @PATH_SYSTEMS.register(name, f"{summary} (tori only)")
    def _factory(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
        if spec.arg is not None:
            raise UserError(f"path system {name!r} takes no argument (got {spec.arg!r})")
        label = get_routing(spec.text).name             # checks the parameters (ival:order=xy)
        if network.kind != "torus":
            raise UserError(f"path system {name!r} is defined on tori (torus:k=,n=) only, not on {network.name}")
        if network.params["k"] < 3:
            # On a 2-ary torus the + and - links of a dimension join the same two nodes, so a
            # routing's choice of direction, which these algorithms are made of, names no link.
            raise UserError(f"path system {name!r} needs a torus with k >= 3 (on {network.name} the + and - "
                            f"directions of a dimension lead to the same node); use dimension-order or "
                            f"shortest there")
        return PathSystem(label, lambda prob, net, rng: oblivious_paths(label, prob, net, rng))


for _routing in ROUTINGS.values():
    _register_oblivious(_routing.name, _routing.summary)


def _register_designed(name: str, summary: str) -> None:
    """File a data-given torus routing (``lp:file=``, ``mix:``, ``2turn``, ...) in :data:`PATH_SYSTEMS`."""

    @PATH_SYSTEMS.register(name, f"{summary} (tori only)")
    def _factory(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
        text = with_file_resolved(spec.text, base_dir)   # lp:file= in a scenario: next to the scenario
        get_routing(text)                            # checks the parameters (and a file) now
        if network.kind != "torus":
            raise UserError(f"path system {name!r} is defined on tori (torus:k=,n=) only, not on {network.name}")
        return PathSystem(spec.text, lambda prob, net, rng: oblivious_paths(text, prob, net, rng))


for _name, (_summary, _) in ROUTING_FACTORIES.items():
    _register_designed(_name, _summary)


def build_path_system(system: str | PathSystem, network: Network, base_dir: Path | None = None) -> PathSystem:
    """A path system by name (SPEC §8).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> build_path_system("valiant", build_network("butterfly:d=4")).name
    'valiant'
    """
    if isinstance(system, PathSystem):
        return system
    spec = parse_spec(system)
    return PATH_SYSTEMS.entry(spec.name).factory(spec, network, base_dir)


def route_paths(system: str | PathSystem, problem: Problem, network: Network,
                rng: np.random.Generator, base_dir: Path | None = None) -> PathCollection:
    """Choose the paths of ``problem`` on ``network`` with the named path system.

    Parameters
    ----------
    system : str or PathSystem
    problem : Problem
    network : Network
    rng : numpy.random.Generator
        Source of the random choices (intermediates, random next hops).

    Returns
    -------
    PathCollection

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import hypercube
    >>> from universal.workloads import build_problem
    >>> net = hypercube(4)
    >>> prob = build_problem("permutation:transpose", net, np.random.default_rng(0))
    >>> route_paths("dimension-order", prob, net, np.random.default_rng(0)).dilation
    4
    """
    ps = build_path_system(system, network, base_dir)
    return ps.route(problem, network, rng)
