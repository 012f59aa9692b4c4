"""Optimal oblivious routing by linear programming (SPEC §10).

Front door: :func:`design` solves one design LP of Towles, Dally & Boyd, "Throughput-centric
routing algorithm design" (SPAA 2003) on a k-ary n-cube and returns the routing with its figures,
each recomputed from the saved routing by the exact machinery of :mod:`universal.oblivious`;
:func:`tradeoff` sweeps the locality bound (their Figures 1 and 6). The LP itself is in
:mod:`universal.design.lp`, the path families in :mod:`universal.design.families`, the disk
cache behind the ``2turn`` and ``2turna`` routings in :mod:`universal.design.cache`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from universal.errors import UserError
from universal.paths.torus.designed import FlowRouting, integer_flows, path_families
from universal.paths.torus.geometry import Torus

from universal.paths.torus import designed as _designed

from . import cache as _cache
from .families import FAMILIES, route_variables, symmetrize
from .lp import (DEFAULT_SAMPLES, OBJECTIVES, LPSolution, check_design_size, estimate_seconds, sample_permutations,
                 solve_design, solver_version)

__all__ = ["design", "tradeoff", "DesignResult", "torus_of", "evaluate_routing", "FAMILIES",
           "OBJECTIVES", "DEFAULT_SAMPLES", "solve_design", "solver_version", "HELDOUT_SEED_OFFSET",
           "check_design_size", "estimate_seconds"]

#: The held-out sample of the average case is drawn with seed ``seed + HELDOUT_SEED_OFFSET``.
HELDOUT_SEED_OFFSET = 1


def torus_of(network) -> Torus:
    """The :class:`Torus` of a network name (UserError for anything but ``torus:k=,n=``).

    Examples
    --------
    >>> torus_of("torus:k=8,n=2").N
    64
    """
    if isinstance(network, Torus):
        return network
    from universal.registry import parse_spec
    spec = parse_spec(str(network))
    if spec.name != "torus":
        raise UserError(f"routing design works on tori (torus:k=K,n=N), not on {network!r}")
    try:
        k, n = int(spec.params.get("k", "")), int(spec.params.get("n", "2"))
    except ValueError:
        raise UserError(f"{network!r}: k and n must be integers") from None
    if set(spec.params) - {"k", "n"}:
        raise UserError(f"{network!r}: a torus takes only k= and n=")
    return Torus(k, n)


@dataclass
class DesignResult:
    """One designed routing and its figures.

    Attributes
    ----------
    network, objective, paths : str
    throughput_worst : float or None
        Exact worst-case throughput of the routing, as a fraction of capacity.
    throughput_average : float or None
        Capacity over the mean, over the sample (``samples`` permutations from ``seed``), of each
        permutation's largest channel load (TDB eq. 9).
    throughput_average_heldout : float or None
        The same on a second sample (seed ``seed + 1``) that the LP never saw.
    throughput_capacity : float or None
        Throughput under uniform traffic, fraction of capacity (1 for a balanced routing).
    locality : float
        Mean hop count over all N^2 pairs over the minimal mean (TDB eq. 5).
    lp_throughput : float
        The LP's own optimum of its objective, as a throughput (fraction of capacity).
    status : str
    seconds : float
        Wall time of the LP solve(s).
    locality_bound : float or None
    routing : FlowRouting
    """

    network: str
    objective: str
    paths: str
    throughput_worst: float | None
    throughput_average: float | None
    throughput_average_heldout: float | None
    throughput_capacity: float | None
    locality: float
    lp_throughput: float
    status: str
    seconds: float
    locality_bound: float | None = None
    then: str | None = None
    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    routing: FlowRouting | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        """JSON-ready dictionary (the routing itself is left out; save it with ``--save``)."""
        return {"network": self.network, "objective": self.objective, "paths": self.paths,
                "then": self.then, "locality_bound": self.locality_bound,
                "throughput_worst": self.throughput_worst, "throughput_average": self.throughput_average,
                "throughput_average_heldout": self.throughput_average_heldout,
                "throughput_capacity": self.throughput_capacity, "locality": self.locality,
                "lp_throughput": self.lp_throughput, "samples": self.samples, "seed": self.seed,
                "status": self.status, "seconds": self.seconds}


def evaluate_routing(routing, torus: Torus, samples: int = DEFAULT_SAMPLES, seed: int = 0,
                     worst: bool = True, average: bool = True) -> dict:
    """Exact figures of any torus routing: worst case, average case on two samples, locality.

    Parameters
    ----------
    routing : str or Routing
    torus : Torus
    samples, seed : int
        The average case uses ``samples`` permutations from ``seed`` and, held out, from
        ``seed + 1``.
    worst, average : bool
        Which throughputs to compute.

    Returns
    -------
    dict
        ``throughput_worst``, ``throughput_average``, ``throughput_average_heldout``,
        ``throughput_capacity``, ``locality`` (None where not computed).

    Examples
    --------
    >>> f = evaluate_routing("dor", Torus(4, 2), samples=4)
    >>> round(f["throughput_worst"], 6), f["locality"]
    (0.333333, 1.0)
    """
    from universal.oblivious import pair_loads, worst_case
    from universal.oblivious.throughput import permutation_max_loads
    pl = pair_loads(routing, torus)
    cap = float(torus.capacity_load)
    out = {"throughput_worst": None, "throughput_average": None, "throughput_average_heldout": None}
    uniform = max(float(tab.sum()) / float(torus.N) for tab in
                  (pl.tables[c] / pl.den[:, None].astype(float) for c in pl.tables))
    out["throughput_capacity"] = cap / uniform
    out["locality"] = float(pl.mean_length() / torus.average_min_distance)
    if worst:
        out["throughput_worst"] = worst_case(torus.k, torus.n, routing).throughput
    if average:
        for key, s in (("throughput_average", seed), ("throughput_average_heldout", seed + HELDOUT_SEED_OFFSET)):
            loads = permutation_max_loads(pl, sample_permutations(torus.N, samples, s))
            out[key] = cap / float(np.mean(loads))
    return out


def design(network, objective: str = "worst-case", paths: str = "all",
           locality: float | None = None, then: str | None = None,
           samples: int = DEFAULT_SAMPLES, seed: int = 0, name: str | None = None,
           evaluate: bool = True, variables=None) -> DesignResult:
    """Design the optimal oblivious routing of ``objective`` on a torus, by LP.

    Parameters
    ----------
    network : str or Torus
        ``torus:k=K,n=N``.
    objective : str
        ``capacity``, ``worst-case`` or ``average-case``.
    paths : str
        Path family: ``all``, ``minimal`` or ``2turn``.
    locality : float, optional
        Upper bound L >= 1 on the locality (mean path length over the minimal one).
    then : str, optional
        ``"locality"``: among the optima, the routing with the shortest paths.
    samples, seed : int
        Average case: the sample of random permutations.
    name : str, optional
        Name of the routing in tables.
    evaluate : bool
        Recompute the worst and average case of the routing with the exact machinery (else only
        the LP's own objective and the locality are filled in).

    Returns
    -------
    DesignResult

    Examples
    --------
    >>> r = design("torus:k=4,n=2", "worst-case", then="locality", evaluate=False)
    >>> round(r.lp_throughput, 6), round(r.locality, 4)
    (0.5, 1.35)

    References
    ----------
    B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design" (SPAA
    2003), §3 and §5.
    """
    torus = torus_of(network)
    if paths not in FAMILIES:
        raise UserError(f"unknown path family {paths!r} (known: {', '.join(FAMILIES)})")
    check_design_size(torus, objective, paths, samples)
    sol = solve_design(torus, objective, paths, locality=locality, then=then, samples=samples,
                       seed=seed, variables=variables)
    meta = {"objective": objective, "paths": paths, "then": then, "locality_bound": locality,
            "samples": samples if objective == "average-case" else None,
            "seed": seed if objective == "average-case" else None,
            "solver": solver_version(), "lp_cost": sol.cost, "lp_status": sol.status}
    label = name or f"lp:{objective}/{paths}"
    if sol.paths is not None:
        # a path family's design is its weighted paths: re-decomposing the summed flows would
        # splice them into routes outside the family (see universal.paths.torus.designed)
        routing = FlowRouting.from_paths(torus, path_families(torus, sol.x, sol.paths, _den()), _den(),
                                         label, meta=meta)
    else:
        routing = FlowRouting(torus, integer_flows(torus, sol.flows), _den(), label, meta=meta)
    cap = float(torus.capacity_load)
    figures = evaluate_routing(routing, torus, samples, seed, worst=evaluate,
                               average=evaluate) if evaluate else {
        "throughput_worst": cap / sol.cost if objective == "worst-case" else None,
        "throughput_average": cap / sol.cost if objective == "average-case" else None,
        "throughput_average_heldout": None,
        "throughput_capacity": cap / sol.cost if objective == "capacity" else None,
        "locality": sol.hops / float(torus.average_min_distance)}
    return DesignResult(network=torus.name, objective=objective, paths=paths, locality_bound=locality,
                        then=then, lp_throughput=cap / sol.cost, status=sol.status, seconds=sol.seconds,
                        samples=samples, seed=seed, routing=routing, **figures)


def _den() -> int:
    from universal.paths.torus.designed import DENOMINATOR
    return DENOMINATOR


def tradeoff(network, objective: str = "worst-case", paths: str = "all", points: int = 8,
             samples: int = DEFAULT_SAMPLES, seed: int = 0, progress=None) -> list[DesignResult]:
    """The optimal tradeoff between throughput and locality (TDB Figures 1 and 6).

    The locality bound L sweeps ``points`` values evenly from 1 (minimal routing) to the locality
    of the throughput-optimal routing with the shortest paths (beyond it the curve is flat).

    Parameters
    ----------
    network : str or Torus
    objective, paths : str
    points : int
        Number of bounds (at least 2).
    samples, seed : int
    progress : callable, optional
        Called with 1 after each LP.

    Returns
    -------
    list of DesignResult
        Sorted by the locality bound; each holds the LP's optimum (``lp_throughput``) and the
        locality of its routing. The figures are the LP's own (not re-evaluated).

    Examples
    --------
    >>> curve = tradeoff("torus:k=4,n=2", points=3)
    >>> [round(r.lp_throughput, 4) for r in curve]
    [0.3333, 0.4396, 0.5]
    """
    if points < 2:
        raise UserError(f"a tradeoff curve needs at least 2 points (got {points})")
    torus = torus_of(network)
    check_design_size(torus, objective, paths, samples, solves=points)
    rv = route_variables(torus, paths)
    rv = symmetrize(rv) if objective != "average-case" else rv
    top = design(torus, objective, paths, then="locality", samples=samples, seed=seed,
                 evaluate=False, variables=rv)
    bounds = np.linspace(1.0, top.locality, points)
    out = []
    for L in bounds[:-1]:
        try:
            out.append(design(torus, objective, paths, locality=float(L), samples=samples, seed=seed,
                              evaluate=False, variables=rv))
        except UserError:
            pass                          # no routing of this family is that local (e.g. 2TURN at L=1)
        if progress is not None:
            progress(1)
    top.locality_bound = float(bounds[-1])
    out.append(top)
    if progress is not None:
        progress(1)
    return out


def _design_by_name(torus: Torus, objective: str, paths: str, name: str) -> FlowRouting:
    """The designer behind ``2turn`` / ``2turna``: the cached LP design of that torus."""
    return _cache.cached_design(torus, objective, paths, name, solve=design)


# ``2turn`` and ``2turna`` (registered by name with the torus routings) design through this function
_designed.DESIGNER = _design_by_name
