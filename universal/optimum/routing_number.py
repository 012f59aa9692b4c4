"""The routing number R(G) = max over permutations π of R(G, π), exactly, for networks of at
most 8 nodes (Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1995, §3).

Two permutations related by an automorphism σ of G (π' = σ π σ^-1: the packet of σ(v) goes to
σ(π(v))) need the same time, so only one permutation per class is examined; networkx lists the
automorphisms. The classes are scanned keeping the largest R(G, π) found so far, R*; a class is
settled without the exact model when a greedy schedule on shortest paths, or a schedule of R*
steps that CP-SAT finds, shows R(G, π) <= R*; otherwise R(G, π) is computed exactly and becomes
the new R*.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.optimum.fixed_paths import check_time_limit
from universal.optimum.free_paths import _feasible, all_distances, routing_time, shortest_path_schedule
from universal.optimum.schedule import Schedule
from universal.workloads import Problem

#: Largest network (nodes) whose routing number is computed: 8! = 40,320 permutations.
MAX_NODES = 8


@dataclass
class RoutingNumberResult:
    """R(G) with an attaining permutation.

    Attributes
    ----------
    lower, upper : int
        Proven bounds on R(G) (equal when ``status == "optimal"``).
    status : str
        ``"optimal"`` or ``"bounds"`` (a time limit left some class unsettled).
    permutation : list of int
        π attaining ``lower``: node v sends its packet to ``permutation[v]``.
    schedule : Schedule
        A replay-checked optimal schedule of that permutation.
    classes : int
        Permutation classes under the automorphisms.
    automorphisms : int
        Size of the automorphism group.
    exact_solves : int
        Classes that needed the exact model.
    seconds : float
    unsettled : list
        Permutations whose R(G, π) was left between bounds by the time limit.
    """

    lower: int
    upper: int
    status: str
    permutation: list[int]
    schedule: Schedule
    classes: int
    automorphisms: int
    exact_solves: int
    seconds: float
    unsettled: list = field(default_factory=list)


def automorphisms(network: Network) -> np.ndarray:
    """Every automorphism of the network's graph, one per row (row[v] = image of v).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> len(automorphisms(build_network("hypercube:d=3")))
    48
    """
    from networkx.algorithms.isomorphism import GraphMatcher

    graph = network.graph
    maps = [[m[v] for v in range(network.num_nodes)] for m in GraphMatcher(graph, graph).isomorphisms_iter()]
    return np.array(maps, dtype=np.int64).reshape(-1, network.num_nodes)


def permutation_classes(num_nodes: int, symmetries: np.ndarray) -> np.ndarray:
    """One representative (the lexicographically smallest) per class of permutations under conjugation.

    Examples
    --------
    The 3-node path has two automorphisms (identity, reversal); its 6 permutations fall into 4 classes.

    >>> permutation_classes(3, np.array([[0, 1, 2], [2, 1, 0]])).tolist()
    [[0, 1, 2], [0, 2, 1], [1, 2, 0], [2, 1, 0]]
    """
    perms = np.array(list(itertools.permutations(range(num_nodes))), dtype=np.int64).reshape(-1, num_nodes)
    weights = num_nodes ** np.arange(num_nodes - 1, -1, -1, dtype=np.int64)
    codes = None
    for sigma in symmetries:
        inverse = np.argsort(sigma)
        conjugate = sigma[perms[:, inverse]]  # w -> sigma(pi(sigma^-1(w)))
        code = conjugate @ weights
        codes = code if codes is None else np.minimum(codes, code)
    keep = np.unique(codes)
    return perms[np.searchsorted(perms @ weights, keep)]


def routing_number(network: Network, bandwidth: int = 1, *, time_limit: float = 10.0, workers: int = 1,
                   seed: int = 0, progress: Callable[[int, int], None] | None = None) -> RoutingNumberResult:
    """R(G) = max over permutations π of R(G, π), for networks of at most 8 nodes.

    Parameters
    ----------
    network : Network
    bandwidth : int
        B.
    time_limit : float
        Limit per exact solve, in CP-SAT's deterministic time (about seconds).
    workers, seed : int
        CP-SAT settings.
    progress : callable, optional
        Called as ``progress(done, total)`` after every permutation class.

    Returns
    -------
    RoutingNumberResult

    Examples
    --------
    On the 3-node path the two end nodes swapping need 2 steps, the diameter.

    >>> from universal.networks import build_network
    >>> res = routing_number(build_network("mesh:k=3,n=1"))
    >>> res.upper, res.permutation, res.classes
    (2, [1, 2, 0], 4)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1995, §3.
    """
    time_limit = check_time_limit(time_limit)
    if network.num_nodes > MAX_NODES:
        raise UserError(f"the routing number is computed for networks of at most {MAX_NODES} nodes "
                        f"({MAX_NODES}! = {math.factorial(MAX_NODES):,} permutations); "
                        f"{network.name} has {network.num_nodes}")
    started = time.perf_counter()
    dist = all_distances(network)
    symmetries = automorphisms(network)
    classes = permutation_classes(network.num_nodes, symmetries)
    nodes = np.arange(network.num_nodes, dtype=np.int64)
    # Longest distance first: the permutations most likely to need many steps set R* early.
    reach = dist[nodes, classes].max(axis=1)
    order = np.argsort(-reach, kind="stable")
    best = None  # (R(G, pi), permutation, schedule)
    solves, unsettled, upper_open = 0, [], 0
    for done, row in enumerate(order):
        if progress:
            progress(done, len(order))
        perm = classes[row]
        problem = Problem("permutation", nodes, perm.copy())
        current = best[0] if best else 0
        if best is not None:
            if reach[row] <= current and shortest_path_schedule(problem, network, bandwidth, seed, current)[2] <= current:
                continue
            if reach[row] <= current:
                found, _ = _feasible(network, nodes, perm, dist, bandwidth, current, time_limit, workers, seed)
                if found:
                    continue
        result = routing_time(problem, network, bandwidth, time_limit=time_limit, workers=workers, seed=seed)
        solves += 1
        if result.status != "optimal":
            unsettled.append(perm.tolist())
            upper_open = max(upper_open, result.upper)
        if best is None or result.lower > best[0]:
            best = (result.lower, perm.tolist(), result.schedule)
    lower = best[0]
    upper = max(lower, upper_open)
    status = "optimal" if not unsettled or upper == lower else "bounds"
    return RoutingNumberResult(lower, upper, status, best[1], best[2], len(classes), len(symmetries), solves,
                               time.perf_counter() - started, unsettled)
