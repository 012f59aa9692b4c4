"""The load analysis behind ``universal load``, ``universal worstcase`` and ``kind = "load"``
scenarios (SPEC §7, §8): a thin layer over :mod:`universal.oblivious` that parses the network
name, runs the tables and the exact worst case, and writes worst permutations to files.

Two engines sit behind it. A torus (k >= 3) with the oblivious routings ``dor``, ``val``,
``romm``, ``rlb``, ``rlbth``, ``ival`` uses :mod:`universal.oblivious` (relative routing and
focus channels, up to 4096 nodes). Any other combination - meshes, hypercubes, edge lists,
networkx graphs, and any path system of :data:`universal.paths.PATH_SYSTEMS` (``shortest``,
``random-shortest``, ``dimension-order``, ``valiant``, ...) - uses the all-pairs analysis of
:mod:`universal.graph_loads` (up to 256 nodes), exact where the paths can be enumerated and
sampled otherwise, as the output says.

Examples
--------
>>> report = run_load_analysis(LoadAnalysis("torus:k=9,n=2", ["dor"], ["tornado"], worstcase=True))
>>> round(report.loads[0].throughput, 3), str(report.worst[0].max_load_exact)
(0.278, '4')

References
----------
B. Towles, "Finding worst-case permutations for oblivious routing algorithms" (Table 1);
B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design" (SPAA 2003).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from universal.oblivious import graphs as graph_loads
import universal.design  # noqa: F401  (installs the designer behind the 2turn / 2turna routings)
from universal.datafiles import check_writable, write_atomically
from universal.errors import UserError
from universal.oblivious.graphs import Capacity
from universal.networks import NETWORKS, Network, build_network, resolve_path
from universal.oblivious import (ROUTINGS, LoadResult, Torus, WorstCaseResult, focus_classes, get_routing,
                                 is_torus_routing, load_table, make_traffic, worst_case)
from universal.paths.torus.geometry import MAX_NODES as TORUS_MAX_NODES
from universal.registry import check_known_params, parse_spec, take_int, with_file_resolved

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["LoadAnalysis", "LoadReport", "Target", "resolve_target", "torus_from_network",
           "run_load_analysis", "progress_total", "permutation_paths", "write_permutation_file"]

Progress = Callable[[int], object] | None

#: Largest M x N of ``random-perms:M`` (the permutations are held as an M x N int64 array, twice).
MAX_PERM_ENTRIES = 50_000_000

#: Analyses estimated to run longer than this (seconds) are refused before they start.
MAX_SECONDS = 3600
#: Seconds per route and channel class when tabulating pair loads (measured on a 2-core machine;
#: the estimate is a rough guide: 2.5 times too long for ROMM on the 16-ary 3-cube, close for RLB).
_SECONDS_PER_ROUTE_CLASS = 2e-6


@dataclass
class LoadAnalysis:
    """What to analyse. Strings are the registered names of SPEC §8.

    Attributes
    ----------
    network : str, Network or networkx.Graph
        A network name of SPEC §8 (``torus:k=K,n=N``, ``mesh:k=4,n=2``, ``hypercube:d=4``,
        ``edgelist:PATH``) or a network object.
    routings : list of str
        Oblivious routings (``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``, ``ival``; tori) or
        path systems (``shortest``, ``random-shortest``, ``dimension-order``, ``valiant``, ...).
    traffics : list of str
        Traffic patterns for the load table (may be empty when only the worst case is wanted).
    worstcase : bool
        Also find the exact worst-case permutation of every routing.
    seed : int
        Seed of the random permutations (``random-perms:M``).
    name : str
        Scenario name, if any.
    base_dir : Path or None
        Folder that relative ``matrix:file=`` names resolve against (a scenario's folder).
    samples : int
        Paths per pair for path systems whose pair loads cannot be enumerated exactly.
    """

    network: str | Network | nx.Graph
    routings: Sequence[str]
    traffics: Sequence[str] = ()
    worstcase: bool = False
    seed: int = 0
    name: str = ""
    base_dir: Path | None = None
    samples: int = graph_loads.DEFAULT_SAMPLES

    def resolved_routings(self) -> list[str]:
        """The routings with a relative ``file=`` (``lp:file=opt.routing``) resolved against
        :attr:`base_dir`, as the files they read are found.

        Examples
        --------
        >>> LoadAnalysis("torus:k=4,n=2", ["dor", "lp:file=o.routing"], base_dir=Path("s")).resolved_routings()
        ['dor', 'lp:file=s/o.routing']
        """
        return [with_file_resolved(r, self.base_dir) for r in self.routings]


@dataclass
class Target:
    """The network of an analysis and the engine that handles it.

    Attributes
    ----------
    network : Network
    torus : Torus or None
        Set when the torus engine (relative routing, focus channels) is used.
    """

    network: Network
    torus: Torus | None = None

    @property
    def name(self) -> str:
        return self.torus.name if self.torus is not None else self.network.name

    @property
    def nodes(self) -> int:
        return self.network.num_nodes


def default_routing(network: Network) -> str:
    """``dor`` on tori, ``dimension-order`` on meshes and hypercubes, ``minimal`` on the networks
    with terminals (dragonfly, fat tree, flattened butterfly, HyperX), ``shortest`` elsewhere."""
    if network.kind == "torus" and network.params["k"] >= 3:
        return "dor"
    if network.terminals is not None:
        return "minimal"
    return "dimension-order" if network.kind in ("mesh", "hypercube", "torus") else "shortest"


def resolve_target(analysis: LoadAnalysis) -> Target:
    """Build the network and pick the engine; every routing name is checked here (UserError).

    Examples
    --------
    >>> resolve_target(LoadAnalysis("torus:k=9,n=2", ["dor"])).torus.N
    81
    >>> resolve_target(LoadAnalysis("mesh:k=4,n=2", ["shortest"])).torus is None
    True
    """
    if not analysis.routings:
        raise UserError("name at least one routing")
    if isinstance(analysis.network, str):
        spec = parse_spec(analysis.network)
        NETWORKS.entry(spec.name)                 # an unknown name gets the registry's own message
    net = build_network(analysis.network, analysis.base_dir)
    names = [parse_spec(r).name for r in analysis.routings]
    if net.kind == "torus" and all(is_torus_routing(r) for r in analysis.routings):
        torus = Torus(net.params["k"], net.params["n"])      # explains k >= 3 and the size limit
        for r in analysis.resolved_routings():
            get_routing(r)
        return Target(net, torus)
    graph_loads.check_graph(net)
    for r in analysis.routings:
        graph_loads.check_routing(r, net)
    return Target(net)


@dataclass
class LoadReport:
    """Results of a :class:`LoadAnalysis`.

    Attributes
    ----------
    name : str
        Scenario name ("" for the ad-hoc commands).
    torus : Torus or None
        The torus of the torus engine; None on the general-graph engine.
    network : dict
        ``{name, nodes, links}`` of the network analysed.
    loads : list of LoadResult
        Routing-major rows of the load table.
    worst : list of WorstCaseResult
        One per routing when the worst case was asked for.
    seed : int
    capacity : Capacity or None
        The capacity load and how it was obtained (general graphs; tori use the closed form).
    graph : Network or None
        The network object (for node labels in reports).
    """

    name: str
    torus: Torus | None
    network: dict
    loads: list[LoadResult] = field(default_factory=list)
    worst: list[WorstCaseResult] = field(default_factory=list)
    seed: int = 0
    capacity: Capacity | None = None
    graph: Network | None = None

    @property
    def capacity_load(self) -> Fraction:
        """Uniform per-channel load under minimal balanced routing (throughput 1 = this load)."""
        return self.capacity.load if self.capacity is not None else self.torus.capacity_load

    @property
    def capacity_rule(self) -> str:
        """How the capacity load was obtained."""
        if self.capacity is not None:
            return self.capacity.rule
        return "k/8 (k even)" if self.torus.k % 2 == 0 else "(k²-1)/(8k) (k odd)"

    def to_json(self) -> dict:
        """The ``--json`` object: ``network``, ``capacity_load`` and ``rows``.

        ``rows`` holds the load rows when a load table was computed, else the worst-case rows;
        when both were computed (a scenario), the worst-case rows are under ``worstcase``.
        """
        out: dict = {}
        if self.name:
            out["scenario"] = self.name
        out.update(network=self.network, capacity_load=float(self.capacity_load),
                   capacity_load_exact=str(self.capacity_load), capacity_rule=self.capacity_rule)
        worst = [w.as_dict() for w in self.worst]
        if self.loads:
            out["seed"] = self.seed
            out["rows"] = [r.as_dict() for r in self.loads]
            if worst:
                out["worstcase"] = worst
        else:
            out["rows"] = worst
        return out


def torus_from_network(text: str) -> Torus:
    """The :class:`Torus` named by ``torus:k=K,n=N``; any other network is a UserError.

    Parameters
    ----------
    text : str
        A network name of SPEC §8.

    Returns
    -------
    Torus

    Examples
    --------
    >>> torus_from_network("torus:k=9,n=2").N
    81
    """
    spec = parse_spec(text)
    if spec.name != "torus":
        NETWORKS.entry(spec.name)          # an unknown name gets the registry's own message
        raise UserError(f"the load analysis supports only tori so far (torus:k=,n=), not {text!r}")
    check_known_params(spec, {"k", "n"})
    return Torus(take_int(spec, "k"), take_int(spec, "n"))   # Torus explains k >= 3, n >= 1


def _resolve_traffic(text: str, base_dir: Path | None) -> str:
    """The traffic name with a relative ``file=`` resolved against ``base_dir``."""
    spec = parse_spec(text)
    if "file" in spec.params and base_dir is not None:
        return text.replace(spec.params["file"], str(resolve_path(spec.params["file"], base_dir)))
    return text


def _check_size(nodes: int, count: int, traffic: str, name: str) -> None:
    """Refuse ``random-perms:M`` whose permutations would not fit in memory (before drawing them)."""
    if count * nodes > MAX_PERM_ENTRIES:
        raise UserError(f"{traffic} on {name} needs {count:,} x {nodes:,} permutation entries, more "
                        f"than this tool handles ({MAX_PERM_ENTRIES:,}); ask for fewer permutations")


def _traffics(analysis: LoadAnalysis, target: Target) -> list:
    """Every traffic pattern, built (and so checked) before any long computation."""
    out = []
    for text in analysis.traffics:
        text = _resolve_traffic(text, analysis.base_dir)
        if target.torus is not None:
            pattern = make_traffic(target.torus, text)
        else:
            pattern = graph_loads.graph_traffic(target.network, text)
        _check_size(target.nodes, pattern.count, text, target.name)
        out.append(pattern)
    return out


def progress_total(analysis: LoadAnalysis, target: Target | None = None) -> int:
    """Work units the progress callback of :func:`run_load_analysis` will be advanced by.

    Per routing on a torus: N for tabulating its pair loads and one per random permutation
    (load table), and N plus one per focus channel (worst case). On a general graph: N for the
    pair loads, one per random permutation, and one per link (worst case).
    """
    target = target if target is not None else resolve_target(analysis)
    random_perms = sum(p.count for p in _traffics(analysis, target))
    total = 0
    for routing in analysis.routings:
        if target.torus is not None:
            if analysis.traffics:
                total += target.nodes + random_perms
            if analysis.worstcase:
                total += target.nodes + len(focus_classes(routing, target.torus.n))
        else:
            total += target.nodes + random_perms + (target.network.num_links if analysis.worstcase else 0)
    return total


def run_load_analysis(analysis: LoadAnalysis, progress: Progress = None) -> LoadReport:
    """Run the load table and/or the exact worst case of ``analysis``.

    Parameters
    ----------
    analysis : LoadAnalysis
    progress : callable or tqdm-like, optional
        Advanced in work units (see :func:`progress_total`).

    Returns
    -------
    LoadReport

    Raises
    ------
    UserError
        Unknown routing or traffic, a network too big for the analysis, parameters out of range.

    Examples
    --------
    >>> rep = run_load_analysis(LoadAnalysis("torus:k=8,n=2", ["val"], ["tornado"]))
    >>> rep.loads[0].throughput, rep.loads[0].locality
    (0.5, 2.0)
    >>> rep = run_load_analysis(LoadAnalysis("hypercube:d=3", ["dimension-order"], ["bitcomp"]))
    >>> rep.capacity_rule, rep.loads[0].throughput, rep.loads[0].pair_loads
    ('max channel load of uniform traffic under random-shortest (minimal) routing', 0.5, 'exact')
    """
    target = resolve_target(analysis)
    if not analysis.traffics and not analysis.worstcase:
        raise UserError("name at least one traffic pattern (or ask for the worst case)")
    patterns = _traffics(analysis, target)
    seconds = estimate_seconds(analysis, target)
    if seconds > MAX_SECONDS:
        raise UserError(f"the analysis on {target.name} would take more than {MAX_SECONDS // 60} minutes "
                        f"(estimated from the number of routes to tabulate), more than this tool runs: use a "
                        f"smaller torus or a routing with fewer routes")
    if target.torus is None:
        return _run_graph(analysis, target, patterns, progress)
    torus = target.torus
    traffics = [_resolve_traffic(t, analysis.base_dir) for t in analysis.traffics]
    network = {"name": torus.name, "nodes": torus.N, "links": torus.num_channels}
    report = LoadReport(analysis.name, torus, network, seed=analysis.seed, graph=target.network)
    if traffics:
        report.loads = load_table(torus.k, torus.n, analysis.resolved_routings(), traffics,
                                  np.random.default_rng(analysis.seed), progress=progress)
    if analysis.worstcase:
        report.worst = [worst_case(torus.k, torus.n, r, progress=progress) for r in analysis.resolved_routings()]
    return report


def estimate_seconds(analysis: LoadAnalysis, target: Target | None = None) -> float:
    """A rough estimate of how long :func:`run_load_analysis` will take, in seconds.

    On tori the time goes into tabulating the pair loads: it grows with the number of routes
    of every offset times the channel classes tabulated. The routes of up to 16 evenly spaced
    offsets are counted (stopping early once the estimate passes :data:`MAX_SECONDS`, or after
    a second of counting) and scaled to all N offsets. Not counted: the M permutations of ``random-perms:M`` (bounded by
    :data:`MAX_PERM_ENTRIES`; at most about ten minutes, for ROMM on the 64-ary 2-cube) and
    general graphs (at most 256 nodes; seconds to a minute), both shown by the progress bar.

    Parameters
    ----------
    analysis : LoadAnalysis
    target : Target, optional
        From :func:`resolve_target` (computed if not given).

    Returns
    -------
    float
        Seconds; once above :data:`MAX_SECONDS` only a lower bound.

    Examples
    --------
    >>> estimate_seconds(LoadAnalysis("torus:k=8,n=2", ["dor"], ["uniform"])) < 1
    True
    >>> estimate_seconds(LoadAnalysis("torus:k=8,n=4", ["rlb"], ["uniform"])) > MAX_SECONDS
    True
    """
    target = target if target is not None else resolve_target(analysis)
    torus = target.torus
    if torus is None:
        return 0.0
    key = (torus.k, torus.n, tuple(analysis.routings), bool(analysis.traffics), analysis.worstcase)
    if key not in _ESTIMATES:  # the CLI announces the estimate and run_load_analysis checks it: count once
        _ESTIMATES[key] = _estimate_torus(analysis, torus)
    return _ESTIMATES[key]


_ESTIMATES: dict[tuple, float] = {}


def _estimate_torus(analysis: LoadAnalysis, torus: Torus) -> float:
    """Seconds to tabulate the pair loads of every routing (see :func:`estimate_seconds`)."""
    total = 0.0
    for routing in analysis.resolved_routings():
        classes = (2 * torus.n if analysis.traffics else 0)
        classes += len(focus_classes(routing, torus.n)) if analysis.worstcase else 0
        alg = get_routing(routing)
        offsets = np.unique(np.linspace(0, torus.N - 1, min(16, torus.N)).round().astype(np.int64))
        routes = 0
        start = time.perf_counter()
        for done, offset in enumerate(offsets, 1):
            routes += len(alg.family(torus, int(offset)).weights)
            per_route = classes * _SECONDS_PER_ROUTE_CLASS * torus.N / done
            if done >= 2 and (total + routes * per_route > MAX_SECONDS or time.perf_counter() - start > 1):
                break  # clearly too long, or the offsets counted so far must do (counting is work too)
        total += routes * per_route
    return total


def _run_graph(analysis: LoadAnalysis, target: Target, patterns: list, progress: Progress) -> LoadReport:
    """The general-graph engine: all-pairs pair loads per routing, rows, worst case per link."""
    net = target.network
    capacity = graph_loads.graph_capacity(net)
    min_length = graph_loads.min_mean_length(net)
    report = LoadReport(analysis.name, None, net.summary(), seed=analysis.seed, capacity=capacity, graph=net)
    rng = np.random.default_rng(analysis.seed)
    sampler = np.random.default_rng([analysis.seed, 1])      # sampled paths: their own stream
    for routing in analysis.routings:
        pl = graph_loads.graph_pair_loads(net, routing, analysis.samples, sampler, base_dir=analysis.base_dir)
        if progress is not None:
            progress(net.num_nodes)
        for pattern in patterns:
            report.loads.append(graph_loads.graph_load_row(pl, pattern, capacity, min_length, rng, progress))
        if analysis.worstcase:
            report.worst.append(graph_loads.graph_worst_case(pl, capacity, progress))
    return report


def permutation_paths(path: str | Path, routings: Sequence[str]) -> dict[str, Path]:
    """Where ``--permutation-file PATH`` writes each routing's worst permutation.

    One routing writes ``PATH`` itself; several write ``STEM.ROUTING.SUFFIX`` next to it.
    The folder must exist and be writable (checked here, before the long computation).

    Examples
    --------
    >>> {r: p.name for r, p in permutation_paths("/tmp/worst.txt", ["dor", "romm"]).items()}
    {'dor': 'worst.dor.txt', 'romm': 'worst.romm.txt'}
    """
    path = check_writable(path, "permutation")
    if len(routings) == 1:
        return {routings[0]: path}
    return {r: path.with_name(f"{path.stem}.{_file_tag(r)}{path.suffix}") for r in routings}


def _file_tag(routing: str) -> str:
    """A file-name-safe tag of a routing name (``valiant:base=shortest`` -> ``valiant-base-shortest``)."""
    spec = parse_spec(routing)
    if spec.name in ROUTINGS:
        return get_routing(routing).name
    return re.sub(r"[^A-Za-z0-9_-]+", "-", routing).strip("-")


def write_permutation_file(path: str | Path, result: WorstCaseResult) -> Path:
    """Write ``result.permutation`` atomically in the ``permutation:file=`` format.

    Line ``i`` (after ``#`` comments) holds the destination id of source id ``i``. The text goes
    to a temporary file in the same folder, which then replaces ``path`` (``os.replace``), so a
    reader never sees a half-written file.

    Parameters
    ----------
    path : str or Path
    result : WorstCaseResult

    Returns
    -------
    Path
        The file written.
    """
    path = Path(path).expanduser()
    header = (f"# worst-case permutation of {result.routing} on {result.torus}: line i (after these "
              f"comments) is the destination id of source id i\n"
              f"# it loads channel {result.channel[0]}->{result.channel[1]} to {result.max_load_exact} "
              f"(throughput {result.throughput:.3f} of capacity)\n"
              f"# use it as: --problem permutation:file={path.name}\n")
    text = header + "".join(f"{int(d)}\n" for d in result.permutation)
    write_atomically(path, text)
    return path
