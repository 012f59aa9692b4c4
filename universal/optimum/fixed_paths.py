"""OPT(P): the fewest steps in which a fixed path collection can be routed (SPEC §12).

Meyer auf der Heide & Scheideler ("Communication in Parallel Systems", 1995, §3 and Theorem 14)
compare online protocols with the best offline schedule on the same paths; Leighton, Maggs & Rao
("Packet routing and job-shop scheduling in O(congestion + dilation) steps", 1994) show that it
is O(C + D). Computing it exactly is a job-shop problem with unit operations: every packet is a
job, every hop an operation of length one on its link, a link is a machine that serves B
operations per step. The model here is OR-Tools CP-SAT's: one integer start per hop, hops of a
path in increasing steps, per link a no-overlap (B = 1) or cumulative (B > 1) constraint, and the
makespan minimised. The search starts from the best protocol's schedule (a hint and the first
upper bound) with max(ceil(C/B), D) as the lower bound; a time limit ends it with proven bounds.

CP-SAT runs deterministically: one worker (``workers`` may raise it; more than one worker then
interleaves the strategies deterministically), a fixed seed, and the time limit counted in
CP-SAT's deterministic time (calibrated to be about seconds) rather than on the wall clock, so
that the same instance gives the same bounds on any machine and under any load.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from universal.errors import UserError
from universal.optimum.schedule import Schedule, replay
from universal.paths import PathCollection

#: Largest number of hops (packet-link pairs) the model accepts: beyond it the model alone
#: takes seconds to build and the solver rarely proves anything within a sensible limit.
MAX_HOPS = 20_000

#: Protocols whose schedules give the first upper bound and the solver's hint (the
#: deterministic greedy rules and random rank; random-delay is Theorem 14's first step).
HINT_PROTOCOLS = ("farthest-to-go", "fifo", "random-rank", "growing-rank", "nearest-to-go")


@dataclass
class OptimumResult:
    """OPT for one instance, or the bounds proven when the time limit ended the search.

    Attributes
    ----------
    lower, upper : int
        Proven bounds: lower <= OPT <= upper (equal when ``status == "optimal"``).
    status : str
        ``"optimal"`` (proven) or ``"bounds"`` (time limit reached first).
    schedule : Schedule
        A replay-checked schedule of makespan ``upper``.
    lower_bound : int
        The trivial bound max(ceil(C/B), D) for fixed paths, max distance for free paths.
    hint : int or None
        The makespan of the schedule the search started from (the best protocol's T).
    hint_source : str
        Where the hint came from (a protocol name, or ``"given"``).
    seconds : float
        Wall-clock time the solver used.
    extra : dict
        Model-specific details (e.g. the steps proven infeasible for free paths).
    """

    lower: int
    upper: int
    status: str
    schedule: Schedule
    lower_bound: int
    hint: int | None = None
    hint_source: str = ""
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def opt(self) -> int | None:
        """OPT if proven, else None."""
        return self.upper if self.status == "optimal" else None

    @property
    def gap(self) -> float:
        """Relative proven gap (upper - lower) / upper (0 when optimal)."""
        return (self.upper - self.lower) / self.upper if self.upper else 0.0

    def summary(self) -> dict:
        """The JSON keys ``opt``, ``opt_lower``, ``opt_upper``, ``opt_status`` (and the trivial bound)."""
        return {"opt": self.opt, "opt_lower": self.lower, "opt_upper": self.upper, "opt_status": self.status,
                "opt_trivial_lower": self.lower_bound, "opt_seconds": round(self.seconds, 3)}


def trivial_lower_bound(collection: PathCollection, bandwidth: int) -> int:
    """max(ceil(C/B), D): no schedule is shorter (SPEC §12).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("mesh:k=3,n=1")
    >>> trivial_lower_bound(PathCollection.from_node_paths(net, [[0, 1, 2]] * 3), 2)
    2
    """
    return max(math.ceil(collection.congestion / bandwidth), collection.dilation)


def check_time_limit(time_limit: float) -> float:
    """The time limit as a float, refused unless positive and finite.

    Examples
    --------
    >>> check_time_limit(0)
    Traceback (most recent call last):
    ...
    universal.errors.UserError: the time limit must be a positive number of seconds, not 0
    """
    limit = float(time_limit)
    if not (limit > 0 and math.isfinite(limit)):
        raise UserError(f"the time limit must be a positive number of seconds, not {time_limit}")
    return limit


def best_protocol_schedule(collection: PathCollection, bandwidth: int, seed: int = 0,
                           protocols: tuple[str, ...] = HINT_PROTOCOLS) -> tuple[np.ndarray, int, str]:
    """The shortest schedule among ``protocols`` (fast engine, seeded), as (hop steps, T, protocol).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("mesh:k=3,n=1")
    >>> steps, T, name = best_protocol_schedule(PathCollection.from_node_paths(net, [[0, 1, 2]] * 2), 1)
    >>> T
    3
    """
    from universal.engine import simulate

    best = None
    for k, name in enumerate(protocols):
        result = simulate(collection, name, np.random.default_rng([seed, k]), bandwidth=bandwidth, record_hops=True)
        if result.status == "delivered" and (best is None or result.T < best[1]):
            best = (result.hop_steps, result.T, name)
    if best is None:  # pragma: no cover - unbounded buffers never deadlock
        raise RuntimeError("no protocol delivered every packet")
    return best


def solver_parameters(solver, time_limit: float, workers: int, seed: int) -> None:
    """Deterministic CP-SAT settings (see the module docstring).

    Examples
    --------
    >>> from ortools.sat.python import cp_model
    >>> solver = cp_model.CpSolver()
    >>> solver_parameters(solver, 5.0, 1, 0)
    >>> solver.parameters.num_workers, solver.parameters.max_deterministic_time
    (1, 5.0)
    """
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    solver.parameters.max_deterministic_time = float(time_limit)
    if workers > 1:
        solver.parameters.interleave_search = True
    solver.parameters.log_search_progress = False


def optimum(collection: PathCollection, bandwidth: int = 1, *, time_limit: float = 10.0,
            hint: tuple[np.ndarray, int, str] | None = None, workers: int = 1, seed: int = 0) -> OptimumResult:
    """OPT(P) of a path collection with bandwidth B, proven optimal or bounded.

    Parameters
    ----------
    collection : PathCollection
        The fixed paths P.
    bandwidth : int
        B.
    time_limit : float
        Limit on the search, in CP-SAT's deterministic time (about seconds).
    hint : (hop_steps, T, source), optional
        A schedule to start from; default: the best of :data:`HINT_PROTOCOLS`.
    workers : int
        CP-SAT workers (1 is deterministic and suits the shared 2-core machines).
    seed : int
        CP-SAT's random seed and the seed of the hint protocols.

    Returns
    -------
    OptimumResult

    Examples
    --------
    Two packets share the first link of a two-hop path: the second waits one step.

    >>> from universal.networks import build_network
    >>> net = build_network("mesh:k=3,n=1")
    >>> res = optimum(PathCollection.from_node_paths(net, [[0, 1, 2], [0, 1, 2]]))
    >>> res.status, res.upper, res.lower_bound
    ('optimal', 3, 2)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1995, §3, Theorem 14;
    Leighton, Maggs & Rao, "Packet routing and job-shop scheduling in O(congestion + dilation)
    steps", 1994.
    """
    if not isinstance(collection, PathCollection):
        raise UserError(f"OPT is defined for a path collection (universal.paths.PathCollection), "
                        f"not {type(collection).__name__}")
    time_limit = check_time_limit(time_limit)
    if bandwidth < 1:
        raise UserError("the bandwidth B must be at least 1")
    hops = int(collection.lengths.sum())
    if hops > MAX_HOPS:
        raise UserError(f"OPT is computed for at most {MAX_HOPS:,} hops; this collection has {hops:,}")
    lower_bound = trivial_lower_bound(collection, bandwidth)
    if hint is None:
        hint = best_protocol_schedule(collection, bandwidth, seed)
    hint_steps, hint_T, hint_source = hint
    best = replay(collection, hint_steps, bandwidth)
    started = time.perf_counter()
    if hint_T <= lower_bound:
        return OptimumResult(lower_bound, best.makespan, "optimal", best, lower_bound, hint_T, hint_source,
                             time.perf_counter() - started)
    lower, steps = _solve(collection, bandwidth, lower_bound, best, time_limit, workers, seed)
    if steps is not None:
        candidate = replay(collection, steps, bandwidth)
        if candidate.makespan < best.makespan:
            best = candidate
    if lower > best.makespan:
        raise AssertionError(f"CP-SAT proved OPT >= {lower} but a schedule of {best.makespan} steps was checked")
    status = "optimal" if lower == best.makespan else "bounds"
    return OptimumResult(lower, best.makespan, status, best, lower_bound, hint_T, hint_source,
                         time.perf_counter() - started)


def _solve(collection: PathCollection, bandwidth: int, lower_bound: int, hint: Schedule, time_limit: float,
           workers: int, seed: int) -> tuple[int, np.ndarray | None]:
    """Run CP-SAT; return (proven lower bound, hop steps of the best schedule found or None)."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    upper = hint.makespan
    lengths = collection.lengths.tolist()
    offsets = collection.offsets.tolist()
    links = collection.links.tolist()
    start: list = [None] * len(links)
    per_link: dict[int, list] = {}
    makespan = model.NewIntVar(lower_bound, upper, "makespan")
    for packet, length in enumerate(lengths):
        for k in range(length):
            hop = offsets[packet] + k
            # Hop k of a path of length L is crossed in a step within [k + 1, upper - (L - 1 - k)].
            var = model.NewIntVar(k + 1, upper - (length - 1 - k), f"t{packet}_{k}")
            start[hop] = var
            per_link.setdefault(links[hop], []).append(var)
            if k:
                model.Add(var >= start[hop - 1] + 1)
            model.AddHint(var, int(hint.hop_steps[hop]))
        if length:
            model.Add(makespan >= start[offsets[packet] + length - 1])
    for link, group in per_link.items():
        if len(group) <= 1:
            continue
        # A crossing in step t occupies the link during [t, t + 1).
        intervals = [model.NewFixedSizeIntervalVar(var, 1, "") for var in group]
        if bandwidth == 1:
            model.AddNoOverlap(intervals)
        elif len(group) > bandwidth:
            model.AddCumulative(intervals, [1] * len(intervals), bandwidth)
    model.AddHint(makespan, upper)
    model.Minimize(makespan)
    solver = cp_model.CpSolver()
    solver_parameters(solver, time_limit, workers, seed)
    status = solver.Solve(model)
    if status in (cp_model.INFEASIBLE, cp_model.MODEL_INVALID):
        raise AssertionError(f"CP-SAT found the model {solver.StatusName(status)} although the hint is feasible")
    lower = max(lower_bound, math.ceil(solver.BestObjectiveBound() - 1e-6))
    if status == cp_model.OPTIMAL:
        lower = int(solver.ObjectiveValue())
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        steps = np.array([solver.Value(var) for var in start], dtype=np.int64)
        return int(lower), steps
    return int(lower), None
