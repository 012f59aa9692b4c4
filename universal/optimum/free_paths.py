"""R(G, π): the fewest steps to route a problem when the paths are free too (SPEC §12).

Meyer auf der Heide & Scheideler ("Communication in Parallel Systems", 1995, §3) define the
routing number R(G, π) as the time of a best offline algorithm that chooses both the paths and
the schedule. It is computed here on the time-expanded network: for a horizon T, a copy of every
node per step 0..T, a waiting arc (v, t-1) -> (v, t) and a moving arc (u, t-1) -> (v, t) per
link u -> v; every packet is one unit of flow from (source, 0) to (destination, T), and at most
B packets use a moving arc. Each horizon is a CP-SAT feasibility problem (only node copies a
packet can reach and still get home from are modelled); horizons are tried from the largest
source-destination distance up to the best protocol's T on shortest paths, so the first
feasible horizon is R(G, π) and every smaller one was proven infeasible. The time limit is
shared by all horizons; when it runs out the proven bounds are returned.
"""

from __future__ import annotations

import time

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.optimum.fixed_paths import OptimumResult, check_time_limit, solver_parameters
from universal.optimum.schedule import replay
from universal.paths import PathCollection, route_paths
from universal.workloads import Problem

#: Largest time-expanded model accepted: packets x links x horizon (the moving arcs).
MAX_ARCS = 400_000


def all_distances(network: Network) -> np.ndarray:
    """Hop distances between all node pairs (N x N); refused if some pair is disconnected.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> all_distances(build_network("mesh:k=3,n=1")).tolist()
    [[0, 1, 2], [1, 0, 1], [2, 1, 0]]
    """
    from scipy.sparse.csgraph import shortest_path

    dist = shortest_path(network.adjacency, unweighted=True)
    if np.isinf(dist).any():
        raise UserError(f"{network.name} is not connected: some packets could never be routed")
    return dist.astype(np.int64)


def shortest_path_schedule(problem: Problem, network: Network, bandwidth: int, seed: int = 0,
                           enough: int = 0) -> tuple[PathCollection, np.ndarray, int]:
    """An upper bound on R(G, π): the best greedy schedule on shortest paths (fast engine).

    The search stops at the first schedule of at most ``enough`` steps.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("mesh:k=3,n=1")
    >>> _, _, T = shortest_path_schedule(Problem("p", np.array([0, 2]), np.array([2, 0])), net, 1)
    >>> T
    2
    """
    from universal.engine import simulate

    best = None
    for k, system in enumerate(("shortest", "random-shortest")):
        paths = route_paths(system, problem, network, np.random.default_rng([seed, k]))
        for j, protocol in enumerate(("farthest-to-go", "random-rank")):
            result = simulate(paths, protocol, np.random.default_rng([seed, k, j]), bandwidth=bandwidth,
                              record_hops=True)
            if best is None or result.T < best[2]:
                best = (paths, result.hop_steps, result.T)
            if best[2] <= enough:
                return best
    return best


def routing_time(problem: Problem, network: Network, bandwidth: int = 1, *, time_limit: float = 10.0,
                 workers: int = 1, seed: int = 0) -> OptimumResult:
    """R(G, π) for the problem's packets with free paths, proven or bounded.

    Parameters
    ----------
    problem : Problem
        The packets (any multiset of pairs; a permutation for the routing number).
    network : Network
    bandwidth : int
        B.
    time_limit : float
        Limit on the whole search, in CP-SAT's deterministic time (about seconds).
    workers, seed : int
        CP-SAT settings (see :mod:`universal.optimum.fixed_paths`).

    Returns
    -------
    OptimumResult
        ``schedule.collection`` holds the paths the optimum uses; ``extra["infeasible"]`` the
        horizons proven too short.

    Examples
    --------
    Two packets cross a 3-node path in opposite directions: the links differ, 2 steps.

    >>> from universal.networks import build_network
    >>> net = build_network("mesh:k=3,n=1")
    >>> res = routing_time(Problem("swap", np.array([0, 2]), np.array([2, 0])), net)
    >>> res.status, res.upper
    ('optimal', 2)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1995, §3.
    """
    time_limit = check_time_limit(time_limit)
    if bandwidth < 1:
        raise UserError("the bandwidth B must be at least 1")
    dist = all_distances(network)
    sources, dests = problem.sources.astype(np.int64), problem.dests.astype(np.int64)
    lower_bound = int(dist[sources, dests].max()) if len(sources) else 0
    paths, steps, upper = shortest_path_schedule(problem, network, bandwidth, seed)
    arcs = len(sources) * network.num_links * max(upper - 1, 1)
    if arcs > MAX_ARCS:
        raise UserError(f"R(G, π) with free paths is computed for time-expanded models of at most "
                        f"{MAX_ARCS:,} moving arcs (packets x links x steps); this one needs {arcs:,}")
    best = replay(paths, steps, bandwidth, sources, dests)
    started = time.perf_counter()
    lower, infeasible, budget = lower_bound, [], time_limit
    while lower < best.makespan:
        found, spent = _feasible(network, sources, dests, dist, bandwidth, lower, budget, workers, seed)
        # The budget is counted in the solver's deterministic time, like the limit, so that the
        # same instance gets the same bounds whatever the machine's load.
        budget -= max(spent, 1e-6)
        if found is None:  # time limit: the bounds stand
            break
        if found is False:
            infeasible.append(lower)
            lower += 1
            continue
        best = replay(*found, bandwidth, sources, dests)
        break
    status = "optimal" if lower == best.makespan else "bounds"
    return OptimumResult(lower, best.makespan, status, best, lower_bound, upper, "shortest paths",
                         time.perf_counter() - started, {"infeasible": infeasible})


def _feasible(network: Network, sources: np.ndarray, dests: np.ndarray, dist: np.ndarray, bandwidth: int,
              horizon: int, budget: float, workers: int, seed: int):
    """Route every packet within ``horizon`` steps? Returns (answer, deterministic time used):
    the answer is (collection, hop steps) if so, False if proven impossible, None if the budget
    ran out first."""
    from ortools.sat.python import cp_model

    if budget <= 0:
        return None, 0.0
    model = cp_model.CpModel()
    tails, heads = network.link_tail.tolist(), network.link_head.tolist()
    moves: list[dict[tuple[int, int], object]] = []  # per packet: (link, step) -> bool
    per_arc: dict[tuple[int, int], list] = {}
    for packet, (s, d) in enumerate(zip(sources.tolist(), dests.tolist())):
        # Node copy (v, t) is usable iff v is reachable from s in t steps and d from v in horizon - t.
        usable = {(v, t) for t in range(horizon + 1) for v in range(network.num_nodes)
                  if dist[s, v] <= t and dist[v, d] <= horizon - t}
        at = {key: model.NewBoolVar("") for key in usable}
        model.Add(at[(s, 0)] == 1)
        mine: dict[tuple[int, int], object] = {}
        for t in range(1, horizon + 1):
            into: dict[int, list] = {}
            out_of: dict[int, list] = {}
            for link, (u, v) in enumerate(zip(tails, heads)):
                # A delivered packet stays put: it never leaves its destination.
                if u != d and (u, t - 1) in usable and (v, t) in usable:
                    x = model.NewBoolVar("")
                    mine[(link, t)] = x
                    per_arc.setdefault((link, t), []).append(x)
                    into.setdefault(v, []).append(x)
                    out_of.setdefault(u, []).append(x)
            for v in range(network.num_nodes):
                before, after = (v, t - 1) in usable, (v, t) in usable
                stay = model.NewBoolVar("") if before and after else 0
                if before:
                    model.Add(at[(v, t - 1)] == stay + sum(out_of.get(v, [])))
                if after:
                    model.Add(at[(v, t)] == stay + sum(into.get(v, [])))
            model.AddExactlyOne([at[(v, t)] for v in range(network.num_nodes) if (v, t) in usable])
        moves.append(mine)
    for group in per_arc.values():
        if len(group) > bandwidth:
            model.Add(sum(group) <= bandwidth)
    solver = cp_model.CpSolver()
    solver_parameters(solver, budget, workers, seed)
    status = solver.Solve(model)
    spent = solver.deterministic_time
    if status == cp_model.INFEASIBLE:
        return False, spent
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, spent
    node_paths, hop_steps = [], []
    for packet, mine in enumerate(moves):
        taken = sorted((t, link) for (link, t), x in mine.items() if solver.Value(x))
        node_paths.append([int(sources[packet])] + [heads[link] for _, link in taken])
        hop_steps += [t for t, _ in taken]
    collection = PathCollection.from_node_paths(network, node_paths, system="optimal (free paths)")
    return (collection, np.array(hop_steps, dtype=np.int64)), spent
