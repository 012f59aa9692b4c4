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

Beside this module (which exports their names too): :mod:`~universal.paths.leveled` (level-path
arithmetic, multibutterfly paths), :mod:`~universal.paths.hop_paths` (grid and shortest-path hops),
:mod:`~universal.paths.node_paths` (explicit and torus paths), :mod:`~universal.paths.defaults`,
:mod:`~universal.paths.system_registry` (:class:`PathSystem`, the registry, the look-up by name).

Reference: Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", §2.3, §3.2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from universal.errors import UserError
from universal.networks import Network, butterfly, resolve_path
from universal.paths.collection import KEEP_LOADS_LINKS, PathCollection
from universal.paths.level_rows import LevelRowsCollection
from universal.paths.datacenter import dragonfly_paths
from universal.paths.torus_names import DATA_GIVEN, OBLIVIOUS
from universal.registry import Spec, check_known_params, parse_spec, with_file_resolved
from universal.workloads import Problem
# the parts moved out (re-exported: names imported from here elsewhere). _row_passes is looked up
# here by level_paths and valiant_butterfly_paths (benchmarks/route_phases.py wraps systems._row_passes)
from universal.paths.defaults import TERMINAL_KINDS, default_base, longest_path_bound  # noqa: F401
from universal.paths.hop_paths import _collection_from_hops, _compact_hops, _distance_to, _grid_dimension_order_hops
from universal.paths.leveled import (_check_leveled_problem, _collection_from_matrix, _level_links, _row_blocks,
                                     _row_passes, multibutterfly_paths)
from universal.paths.node_paths import explicit_paths, oblivious_paths, read_explicit_paths  # noqa: F401
# PathSystem, the registry and the look-up by name (imported from here by universal.paths and the engine)
from universal.paths.system_registry import PATH_SYSTEMS, PathSystem, build_path_system, route_paths  # noqa: F401


# --- leveled networks: the level path (bit-fixing on butterflies) -------------------------------


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


# --- meshes, tori and hypercubes: dimension order ------------------------------------------------


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


def _register_oblivious(name: str, summary: str) -> None:
    """File the oblivious routing ``name`` in :data:`PATH_SYSTEMS` (one entry per routing)."""

    @PATH_SYSTEMS.register(name, f"{summary} (tori only)")
    def _factory(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
        if spec.arg is not None:
            raise UserError(f"path system {name!r} takes no argument (got {spec.arg!r})")
        from universal.paths.torus.algorithms import get_routing     # a torus routing: loaded when named

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


for _name, _summary in OBLIVIOUS.items():      # the names only: a butterfly route never loads tori
    _register_oblivious(_name, _summary)


def _register_designed(name: str, summary: str) -> None:
    """File a data-given torus routing (``lp:file=``, ``mix:``, ``2turn``, ...) in :data:`PATH_SYSTEMS`."""

    @PATH_SYSTEMS.register(name, f"{summary} (tori only)")
    def _factory(spec: Spec, network: Network, base_dir: Path | None) -> PathSystem:
        from universal.paths.torus.algorithms import get_routing

        text = with_file_resolved(spec.text, base_dir)   # lp:file= in a scenario: next to the scenario
        get_routing(text)                            # checks the parameters (and a file) now
        if network.kind != "torus":
            raise UserError(f"path system {name!r} is defined on tori (torus:k=,n=) only, not on {network.name}")
        return PathSystem(spec.text, lambda prob, net, rng: oblivious_paths(text, prob, net, rng))


for _name, _summary in DATA_GIVEN.items():
    _register_designed(_name, _summary)
