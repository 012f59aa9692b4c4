"""The routing-design linear programs of Towles, Dally & Boyd (2003) on the k-ary n-cube.

"Throughput-centric routing algorithm design" (Towles, Dally & Boyd, SPAA 2003) casts the
choice of a randomized oblivious routing as a multicommodity flow and optimises one of three
costs, each a linear program:

* capacity (their eq. 6): the largest channel load of uniform traffic;
* worst-case throughput (eq. 8): the largest load any permutation can put on a channel;
* average-case throughput (eq. 9): the mean, over a seeded sample of M random permutations, of
  each permutation's largest channel load.

Relative routing (§4 there, SPEC §10): by translation symmetry it is enough to route one unit
from node 0 to each offset ``t``; the pair ``(s, s + t)`` then loads channel ``c`` with the flow
of ``c - s``. The route variables and the map ``F`` to channel flows come from
:mod:`universal.design.families`.

Why eq. 8 is exact. For a fixed routing the load that a traffic matrix ``L`` puts on channel
``c`` is ``sum_{s,d} L[s,d] W[s,d]`` with ``W[s,d] = gamma_c(s,d)``, linear in ``L``; over the
doubly-stochastic matrices (whose vertices are the permutations, Birkhoff-von Neumann) its
maximum is the weight of a maximum-weight perfect matching. That assignment LP has the dual
``min sum_s u_s + sum_d v_d`` subject to ``u_s + v_d >= W[s,d]`` with ``u, v`` free, and strong
duality makes the two optima equal. Writing ``sum u + sum v <= w`` together with the dual
constraints therefore states "every permutation loads ``c`` by at most ``w``" with ``2N``
potentials and ``N^2`` linear constraints instead of ``N!`` constraints: any feasible ``(u, v)``
certifies the bound, and the minimisation over ``u, v, w`` and the routing reaches it. Since
``W`` is linear in the route variables, the whole problem stays an LP. Translation maps every
channel of a class ``(dim, sign)`` onto the one leaving node 0, so one pair of potential vectors
per class (``2n`` in all) covers every channel.

Locality (eq. 5) is the mean hop count over all ``N^2`` pairs, ``s = d`` included, divided by the
minimal mean; it enters as a constraint ``H_avg <= L x minimal`` (an upper bound where the
paper's eq. 10 writes an equality) or, with ``then="locality"``, as a second objective: after
the best cost ``z*`` is found, the LP is solved again with the cost held at ``z* (1 + 1e-7)``
and the total flow (the hop count) minimised.

Solver: HiGHS through ``scipy.optimize.linprog``. The interior-point method (with crossover, so
the answer is a vertex) is the default because it is the one that scales here: on the
average-case LP of the 8-ary 2-cube it finished in about two minutes where dual simplex had
not finished after 27 (measured for this project; here, with the two cores shared by other
jobs, one interior-point solve of that LP took about 8 minutes). Cutting planes (load rows of the average
case added only once violated, each restricted LP solved afresh) were tried as well and were
slower here: the restricted LPs grow and every restart pays for them again. The worst-case and
capacity LPs are solved over symmetric routings only (:func:`~universal.design.families.symmetrize`:
the automorphisms fixing node 0, and reading every route backwards), which makes them many times
smaller; ``benchmarks/design.py`` times the worst-case LP for k = 4..14. HiGHS runs in C and returns to Python only when done, so an LP of more than
:data:`IN_PROCESS_NONZEROS` nonzeros is solved in a forked child process that a Ctrl-C or
SIGTERM kills at once (the fork adds about 0.05 s; smaller LPs solve in well under a second
here and stay in this process).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from universal.errors import UserError
from universal.paths.torus.geometry import Torus

from .families import RouteVariables, route_variables, symmetrize
from .rows import average_rows, capacity_rows, worst_case_rows

__all__ = ["OBJECTIVES", "DEFAULT_SAMPLES", "LPSolution", "solve_design", "sample_permutations",
           "solver_version", "LEXICOGRAPHIC_SLACK", "estimate_seconds", "check_design_size", "MAX_SAMPLES",
           "MAX_SECONDS"]

#: The objectives of the design LP and one line about each.
OBJECTIVES = {
    "capacity": "largest channel load under uniform traffic (TDB eq. 6)",
    "worst-case": "largest load any permutation puts on a channel (TDB eq. 8, matching dual)",
    "average-case": "mean over M random permutations of their largest channel load (TDB eq. 9)",
}

#: Permutations in the average-case sample by default (TDB §5.4 use 100).
DEFAULT_SAMPLES = 100

#: Relative slack on the first objective when the second one (locality) is optimised.
LEXICOGRAPHIC_SLACK = 1e-7

#: HiGHS method used by default (see the module docstring for the measurement behind it).
DEFAULT_METHOD = "highs-ipm"


#: Most permutations an average-case sample may hold (TDB use 100).
MAX_SAMPLES = 100_000
#: A design estimated to take longer than this (seconds) is refused, as long load analyses are.
MAX_SECONDS = 3600
#: Seconds per (LP rows)^1.5, fitted to the CPU seconds of the worst-case LPs of benchmarks/design.py
#: (k = 10, 12, 14: 1.0, 1.8 and 5.0 s for 3,302, 6,734 and 12,350 rows, both stages) and, for the
#: denser average-case LP, to 2TURNA on the 7-ary 2-cube (19,700 rows, 259 s); both measured on
#: this project's 2-core machine.
SECONDS_PER_ROW_POWER = {"worst-case": 4.0e-6, "capacity": 4.0e-6, "average-case": 9.4e-5}
#: Seconds every LP costs whatever its size (building it, starting HiGHS): both stages on the
#: 4-ary 2-cube (110 rows) take about 0.02 s of CPU here. It is what a long tradeoff sweep of
#: small LPs pays.
SECONDS_PER_SOLVE = 0.02


def _lp_rows(torus: Torus, objective: str, paths: str, samples: int) -> int:
    """Rows of the design LP, about, counted without building it.

    The symmetric LPs (worst case, capacity) keep about one conservation row in ``2**(n+1) n!``
    (the symmetries fixing node 0, and reading routes backwards) and the worst case one
    matching-dual row in ``2**n (n-1)!`` (those that also fix the focus channel, and the
    reversal's pairing of ``(s, d)`` with ``(e - d, e - s)``): about ``5 N^2 / 16`` rows on a 2-cube.
    """
    N, C, n = torus.N, torus.num_channels, torus.n
    group = 2 ** n * math.factorial(n) * 2
    if objective == "average-case":
        return samples * C + (N if paths == "2turn" else N * N)
    eq_rows = N if paths == "2turn" else N * N // group
    if objective == "worst-case":
        return N * N // (group // (2 * n)) + eq_rows
    return 2 * n + eq_rows


def estimate_seconds(torus: Torus, objective: str, paths: str = "all", samples: int = DEFAULT_SAMPLES,
                     solves: int = 1) -> float:
    """A rough estimate of the solver time of ``solves`` design LPs, in seconds.

    Interior-point time grows about as the 1.5th power of the LP's rows here; the constants are
    measured (:data:`SECONDS_PER_ROW_POWER`, both stages of ``--then locality``, plus
    :data:`SECONDS_PER_SOLVE` for every LP), so the estimate is good to a factor of two or three,
    enough to refuse what would take days and to warn about what takes minutes.

    Examples
    --------
    >>> round(estimate_seconds(Torus(12, 2), "worst-case"))
    2
    >>> estimate_seconds(Torus(64, 2), "worst-case") > MAX_SECONDS
    True
    """
    rows = _lp_rows(torus, objective, paths, samples)
    # the constants were measured with the locality stage: an LP solved once takes about half
    return solves * (SECONDS_PER_SOLVE + SECONDS_PER_ROW_POWER[objective] * float(rows) ** 1.5)


def check_design_size(torus: Torus, objective: str, paths: str = "all", samples: int = DEFAULT_SAMPLES,
                      solves: int = 1) -> float:
    """Refuse, with the estimate, a design that would take more than :data:`MAX_SECONDS`.

    Returns
    -------
    float
        The estimate in seconds (see :func:`estimate_seconds`).

    Examples
    --------
    >>> check_design_size(Torus(64, 2), "worst-case")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: designing on torus:k=64,n=2 would take about 13 hours (an LP of 5,242,880 rows, estimated from measured solves), more than this tool runs (one hour): use a smaller torus
    """
    if not 1 <= samples <= MAX_SAMPLES:
        raise UserError(f"the average case takes 1 to {MAX_SAMPLES:,} permutations (got {samples:,})")
    seconds = estimate_seconds(torus, objective, paths, samples, solves)
    if seconds > MAX_SECONDS:
        rows = _lp_rows(torus, objective, paths, samples)
        what = f"{solves:,} LPs of {rows:,} rows each" if solves > 1 else f"an LP of {rows:,} rows"
        fix = ("fewer --tradeoff points" if solves > 1 else
               "fewer --samples or a smaller torus" if objective == "average-case" else "a smaller torus")
        raise UserError(f"designing on {torus.name} would take about {_duration(seconds)} ({what}, estimated "
                        f"from measured solves), more than this tool runs (one hour): use {fix}")
    return seconds


def _duration(seconds: float) -> str:
    """``"5 hours"``, ``"300 days"``, ``"2e+09 years"``: a long time in words."""
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size or unit == "minutes":
            value = seconds / size
            return f"{value:,.0f} {unit}" if value < 1e6 else f"{value:.1g} {unit}"
    return f"{seconds:.0f} seconds"


def solver_version() -> str:
    """``"scipy X.Y.Z HiGHS"``: the solver build, part of the designed-routing cache key."""
    import scipy
    return f"scipy {scipy.__version__} HiGHS"


@dataclass
class LPSolution:
    """What one design LP (or a lexicographic pair of them) returned.

    Attributes
    ----------
    x : ndarray
        Route variables (channel flows or path probabilities).
    flows : ndarray, shape (N, C)
        Channel flows of one unit from node 0 to each offset.
    cost : float
        Optimal value of the throughput objective (a channel load).
    hops : float
        Mean hop count ``H_avg`` of the solution (over all N^2 pairs).
    status : str
        The solver's message.
    seconds : float
        Wall time of the solve(s).
    paths : list or None
        A path family's paths (``2turn``): ``paths[j] = (offset, legs)`` of ``x[j]``.
    """

    x: np.ndarray
    flows: np.ndarray
    cost: float
    hops: float
    status: str
    seconds: float
    lp_rows: int = 0
    lp_cols: int = 0
    stages: list = field(default_factory=list)
    paths: list | None = None


def sample_permutations(N: int, M: int, seed: int) -> np.ndarray:
    """M random permutations of N nodes from ``numpy.random.default_rng(seed)``, shape (M, N).

    Examples
    --------
    >>> sample_permutations(4, 2, 0).tolist()
    [[2, 0, 1, 3], [3, 2, 1, 0]]
    """
    rng = np.random.default_rng(seed)
    return np.array([rng.permutation(N) for _ in range(M)], dtype=np.int64).reshape(M, N)


#: LPs with more nonzeros than this are solved in a child process. HiGHS runs in C and does not
#: return to Python until it is done, so a Ctrl-C or SIGTERM would wait for the end of the solve
#: (minutes on the 14-ary 2-cube); the child is killed at once instead. Below this size a solve
#: takes well under a second here, less than the child would add (see :func:`_solve`).
IN_PROCESS_NONZEROS = 20_000

#: The LP a forked child solves (:func:`_solve_pending`): it inherits the arguments, so the
#: constraint matrices are never copied through a pipe.
_PENDING: tuple | None = None


def _linprog(c, A_ub, b_ub, A_eq, b_eq, bounds, method: str):
    from scipy.optimize import OptimizeResult, linprog
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method=method)
    # What the callers read; the dual values (as long as the rows) stay behind.
    return OptimizeResult(x=res.x, fun=res.fun, status=res.status, message=res.message)


def _solve_pending():
    """In the forked child: solve the LP the parent left in :data:`_PENDING`."""
    return _linprog(*_PENDING)


def _solve_in_child(args: tuple):
    """``_linprog(*args)`` in a forked worker process that Ctrl-C and SIGTERM stop at once: the
    parent waits on a pipe, where a signal interrupts it, and kills the worker on the way out
    (:func:`universal.workers.run_in_processes`)."""
    global _PENDING
    from contextlib import closing

    import scipy.optimize  # noqa: F401  imported once, before the fork: the child inherits it and
    # the parent needs it anyway to unpickle the result (else both import it, one after the other)

    from universal.workers import WorkerDied, run_in_processes

    _PENDING = args
    try:
        with closing(run_in_processes(_solve_pending, [()], jobs=1)) as results:
            return next(results)
    except WorkerDied as exc:
        how = " (killed: perhaps out of memory)" if exc.exitcode == -9 else ""
        raise UserError(f"the process solving the design LP ended unexpectedly (exit code {exc.exitcode}){how}") \
            from None
    finally:
        _PENDING = None


def _can_fork() -> bool:
    """Whether a child process can be forked here: not on systems without fork, and not inside a
    worker process of a sweep or a Dask cluster (daemonic processes may not have children; their
    parent stops them, solve included)."""
    import multiprocessing
    return "fork" in multiprocessing.get_all_start_methods() and not multiprocessing.current_process().daemon


def _solve(c, A_ub, b_ub, A_eq, b_eq, bounds, method: str):
    args = (c, A_ub, b_ub, A_eq, b_eq, bounds, method)
    big = A_ub.nnz + (A_eq.nnz if A_eq is not None else 0) > IN_PROCESS_NONZEROS
    res = _solve_in_child(args) if big and _can_fork() else _linprog(*args)
    if res.status == 2:
        return None, res
    if res.status != 0:
        raise UserError(f"the design LP was not solved: {res.message}")
    return res.x, res


def solve_design(torus: Torus, objective: str = "worst-case", paths: str = "all",
                 locality: float | None = None, then: str | None = None,
                 samples: int = DEFAULT_SAMPLES, seed: int = 0,
                 method: str = DEFAULT_METHOD, variables: RouteVariables | None = None) -> LPSolution:
    """Solve the design LP of ``objective`` over path family ``paths`` on ``torus``.

    Parameters
    ----------
    torus : Torus
    objective : str
        ``capacity``, ``worst-case`` or ``average-case`` (:data:`OBJECTIVES`).
    paths : str
        ``all``, ``minimal`` or ``2turn``.
    locality : float, optional
        Upper bound L on the locality (mean hop count over the minimal one), at least 1.
    then : str, optional
        ``"locality"``: among the optimal routings, take one with the shortest paths.
    samples, seed : int
        The average-case sample: ``samples`` permutations from ``default_rng(seed)``.
    method : str
        HiGHS method for ``scipy.optimize.linprog`` (``highs-ipm``, ``highs-ds``, ``highs``).
    variables : RouteVariables, optional
        Precomputed route variables (a tradeoff sweep reuses them); by default those of
        ``paths``, restricted to symmetric routings (:func:`~universal.design.families.symmetrize`)
        except for the average case.

    Returns
    -------
    LPSolution

    Raises
    ------
    UserError
        For an unknown objective, a locality bound below 1, or an infeasible LP.

    Examples
    --------
    >>> sol = solve_design(Torus(4, 2), "worst-case")
    >>> round(float(Torus(4, 2).capacity_load) / sol.cost, 6)     # half of capacity
    0.5

    References
    ----------
    B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design" (SPAA
    2003), eqs. 6, 8, 9, 10 and 15.
    """
    from scipy import sparse
    if objective not in OBJECTIVES:
        raise UserError(f"unknown objective {objective!r} (known: {', '.join(OBJECTIVES)})")
    if then not in (None, "locality"):
        raise UserError(f"unknown second objective {then!r} (only 'locality')")
    if locality is not None and not locality >= 1:
        raise UserError(f"a locality bound must be at least 1 (the minimal mean path length), got {locality}")
    if objective == "average-case" and samples < 1:
        raise UserError(f"the average case needs at least one permutation (got {samples})")
    check_design_size(torus, objective, paths, samples)
    start = time.perf_counter()
    symmetric = objective != "average-case"
    if variables is None:
        variables = route_variables(torus, paths)
        variables = symmetrize(variables) if symmetric else variables
    rv = variables
    N, C, J = torus.N, torus.num_channels, 2 * torus.n
    nx = rv.size
    hop_row = np.asarray(rv.F.sum(axis=0)).ravel()       # total flow = hop count per variable
    hmin = float(torus.average_min_distance)
    # cost rows: each row's load minus its cost variable must be <= 0
    if objective == "worst-case":
        # a symmetric routing loads every class alike: one focus class is enough
        J = 1 if rv.expand is not None else J
        Fx, pots, weights = worst_case_rows(rv, J)
        n_pot = pots.shape[1]
        totals = sparse.csr_matrix((weights, (np.arange(n_pot) // (n_pot // J), np.arange(n_pot))),
                                   shape=(J, n_pot))
        A_ub = sparse.vstack([
            sparse.hstack([Fx, pots, sparse.csr_matrix((Fx.shape[0], 1))]),
            sparse.hstack([sparse.csr_matrix((J, nx)), totals, -np.ones((J, 1))]),
        ], format="csr")
        extra_bounds = [(None, None)] * n_pot + [(0, None)]
        cost_c = np.zeros(n_pot + 1)
        cost_c[-1] = 1.0
    elif objective == "capacity":            # every class's uniform load is at most w
        rows = capacity_rows(rv)
        A_ub = sparse.hstack([rows, -np.ones((rows.shape[0], 1))], format="csr")
        extra_bounds = [(0, None)]
        cost_c = np.ones(1)
    else:                                     # permutation m's channel loads are at most z_m
        rows = average_rows(rv, sample_permutations(N, samples, seed))
        r = np.arange(rows.shape[0])
        link = sparse.csr_matrix((-np.ones(len(r)), (r, r // C)), shape=(len(r), samples))
        A_ub = sparse.hstack([rows, link], format="csr")
        extra_bounds = [(0, None)] * samples
        cost_c = np.full(samples, 1.0 / samples)
    n_extra = len(extra_bounds)
    b_ub = np.zeros(A_ub.shape[0])
    if locality is not None:
        A_ub = sparse.vstack([A_ub, sparse.hstack([sparse.csr_matrix(hop_row[None, :]),
                                                   sparse.csr_matrix((1, n_extra))])], format="csr")
        b_ub = np.append(b_ub, locality * hmin * N)
    A_eq = sparse.hstack([rv.A_eq, sparse.csr_matrix((rv.A_eq.shape[0], n_extra))], format="csr")
    bounds = [tuple(b) for b in rv.bounds.tolist()] + extra_bounds
    c = np.concatenate([np.zeros(nx), cost_c])
    z, res = _solve(c, A_ub, b_ub, A_eq, rv.b_eq, bounds, method)
    if z is None:
        bound = f" with locality at most {locality:g}" if locality is not None else ""
        raise UserError(f"the design LP is infeasible{bound} on {torus.name} with {paths} paths")
    cost = float(res.fun)
    stages = [res.message]
    if then == "locality":
        keep = sparse.csr_matrix(np.concatenate([np.zeros(nx), cost_c])[None, :])
        A2 = sparse.vstack([A_ub, keep], format="csr")
        b2 = np.append(b_ub, cost * (1 + LEXICOGRAPHIC_SLACK) + 1e-12)
        c2 = np.concatenate([hop_row, np.zeros(n_extra)])
        z2, res2 = _solve(c2, A2, b2, A_eq, rv.b_eq, bounds, method)
        if z2 is None:
            raise UserError("the locality stage of the design LP turned infeasible (numerical trouble)")
        z = z2
        cost = float(cost_c @ z[nx:]) if objective != "worst-case" else float(z[-1])
        stages.append(res2.message)
    x = np.clip(z[:nx], 0.0, None)
    flows = np.asarray(rv.F @ x).reshape(N, C)
    if rv.expand is not None:
        x = np.asarray(rv.expand @ x).ravel()
    seconds = time.perf_counter() - start
    return LPSolution(x=x, flows=flows, cost=cost, hops=float(flows.sum()) / N, status=stages[-1],
                      seconds=seconds, lp_rows=A_ub.shape[0] + A_eq.shape[0], lp_cols=A_ub.shape[1],
                      stages=stages, paths=rv.paths)
