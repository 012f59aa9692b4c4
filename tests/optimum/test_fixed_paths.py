"""OPT(P) of a fixed path collection (SPEC §12): hand-worked cases, the sandwich
max(ceil(C/B), D) <= OPT <= T of every protocol, replayed schedules, time limits and errors."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine import simulate
from universal.errors import UserError
from universal.networks import build_network
from universal.optimum import optimum, replay, trivial_lower_bound
from universal.paths import PathCollection, route_paths
from universal.workloads import build_problem

BUFFERED = ["random-rank", "growing-rank", "fifo", "farthest-to-go", "nearest-to-go", "longest-in-system", "random",
            "random-delay:alpha=1", "random-delay:alpha=0.5"]
BUFFERLESS = ["trial-and-failure", "duplication"]


def check_sandwich(paths: PathCollection, bandwidth: int, res) -> None:
    """max(ceil(C/B), D) <= OPT <= T of every protocol, and the schedule replays to OPT steps.

    A bufferless protocol's delivered packets follow a valid schedule too (T is its last
    acknowledgement, after its last delivery), so OPT is below both. (Duplication can fail to
    deliver at all: two copies of D = 1 paths collide in every round; such a run has no T.)"""
    assert trivial_lower_bound(paths, bandwidth) == res.lower_bound <= res.lower <= res.upper
    for k, protocol in enumerate(BUFFERED + BUFFERLESS):
        run = simulate(paths, protocol, np.random.default_rng(k), bandwidth=bandwidth)
        assert run.status == "delivered" or protocol == "duplication", protocol
        if run.status == "delivered":
            # Proven OPT is below every T; with bounds only the lower bound is (upper is just the
            # best schedule found, and another seed's run may beat it).
            proven = res.upper if res.status == "optimal" else res.lower
            assert proven <= run.last_delivery <= run.T, protocol
    assert replay(paths, res.schedule.hop_steps, bandwidth).makespan == res.upper


def line(nodes: int):
    """The path network 0 - 1 - ... - (nodes - 1)."""
    return build_network(f"mesh:k={nodes},n=1")


@pytest.mark.parametrize("D", [1, 2, 5])
def test_two_packets_sharing_one_link(D):
    """Two packets on the same D-hop path of a line share every link. With B = 1 one of them
    crosses the first link a step later and arrives in step D + 1; with B = 2 both move together
    and arrive in step D."""
    paths = PathCollection.from_node_paths(line(D + 1), [list(range(D + 1))] * 2)
    one = optimum(paths, bandwidth=1)
    two = optimum(paths, bandwidth=2)
    assert (one.status, one.upper) == ("optimal", D + 1)
    assert (two.status, two.upper) == ("optimal", D)
    check_sandwich(paths, 1, one)
    check_sandwich(paths, 2, two)


def test_two_packets_meeting_only_on_their_last_link():
    """Paths 0->1->2->3 and 4->5->2->3 on a tree share only the last link 2->3: with B = 1 they
    cannot both cross it in step 3, so OPT = D + 1 = 4; with B = 2, OPT = D = 3."""
    from universal.networks import from_networkx
    import networkx as nx

    net = from_networkx(nx.Graph([(0, 1), (1, 2), (2, 3), (4, 5), (5, 2)]), "tree")
    paths = PathCollection.from_node_paths(net, [[0, 1, 2, 3], [4, 5, 2, 3]])
    assert paths.congestion == 2 and paths.dilation == 3
    one, two = optimum(paths, bandwidth=1), optimum(paths, bandwidth=2)
    assert (one.upper, two.upper) == (4, 3)
    check_sandwich(paths, 1, one)
    check_sandwich(paths, 2, two)


@pytest.mark.parametrize("C, D", [(2, 2), (3, 4), (5, 3), (6, 6)])
def test_a_chain_needs_C_plus_D_minus_1(C, D):
    """C packets on the same D-hop path: the first link carries one packet per step, so the last
    packet leaves the source in step C at the earliest and then needs D - 1 more steps, while
    pipelining (packet j crosses hop k in step j + k) meets that bound: OPT = C + D - 1. The lower
    bound max(C, D) is not reached, and the solver proves optimality (lower = upper)."""
    paths = PathCollection.from_node_paths(line(D + 1), [list(range(D + 1))] * C)
    res = optimum(paths, bandwidth=1)
    assert res.lower_bound == max(C, D)
    assert (res.status, res.lower, res.upper) == ("optimal", C + D - 1, C + D - 1)
    assert res.upper > res.lower_bound
    check_sandwich(paths, 1, res)


def test_bandwidth_divides_the_chain():
    """With B = 2 the C packets of a chain leave in ceil(C/B) waves: OPT = ceil(C/2) + D - 1."""
    paths = PathCollection.from_node_paths(line(4), [[0, 1, 2, 3]] * 5)
    res = optimum(paths, bandwidth=2)
    assert res.upper == 3 + 3 - 1
    check_sandwich(paths, 2, res)


# (network, problem, path system, seed): small instances where contention matters.
INSTANCES = [
    ("butterfly:d=3", "h-relation:h=2", "valiant", 1),
    ("butterfly:d=4", "h-relation:h=3", "valiant", 0),
    ("butterfly:d=4", "permutation:bit-reversal", "dimension-order", 0),
    ("hypercube:d=4", "h-function:h=3", "valiant", 1),
    ("torus:k=4,n=2", "h-relation:h=2", "valiant", 0),
    ("mesh:k=4,n=2", "h-relation:h=2", "valiant", 2),
    ("mesh:k=3,n=2", "permutation:transpose", "dimension-order", 0),
]


def build(net_name: str, problem: str, system: str, seed: int) -> PathCollection:
    net = build_network(net_name)
    prob = build_problem(problem, net, np.random.default_rng(seed))
    return route_paths(system, prob, net, np.random.default_rng(seed + 10))


@pytest.mark.parametrize("bandwidth", [1, 2])
@pytest.mark.parametrize("instance", INSTANCES, ids=[f"{a}-{b}-{c}" for a, b, c, _ in INSTANCES])
def test_opt_lies_between_the_lower_bound_and_every_protocol(instance, bandwidth):
    """max(ceil(C/B), D) <= OPT <= T of every buffered protocol, and the returned schedule replays
    (independently of the solver) to exactly OPT steps."""
    paths = build(*instance)
    res = optimum(paths, bandwidth=bandwidth, time_limit=20)
    assert res.status == "optimal"
    check_sandwich(paths, bandwidth, res)


def test_the_solver_beats_the_best_protocol_here():
    """On Valiant's paths of this butterfly instance the best protocol needs 13 steps; the
    solver finds a 12-step schedule and proves that no 11-step one exists."""
    paths = build("butterfly:d=4", "h-relation:h=3", "valiant", 0)
    res = optimum(paths, bandwidth=1, time_limit=20)
    assert res.hint > res.upper == res.lower
    assert res.upper > res.lower_bound
    check_sandwich(paths, 1, res)


def test_a_time_limit_reached_is_a_result_with_bounds():
    """A tiny time limit leaves a gap: status "bounds", lower <= upper, a checked schedule."""
    paths = build("butterfly:d=4", "h-relation:h=3", "valiant", 0)
    res = optimum(paths, bandwidth=1, time_limit=1e-4)
    assert res.status == "bounds"
    assert res.lower_bound <= res.lower < res.upper
    assert res.opt is None and res.gap > 0
    assert res.summary()["opt_status"] == "bounds"
    check_sandwich(paths, 1, res)


def test_results_reproduce():
    """Deterministic CP-SAT: the same instance gives the same bounds and schedule."""
    paths = build("butterfly:d=4", "h-relation:h=3", "valiant", 0)
    first, second = (optimum(paths, bandwidth=1, time_limit=0.05) for _ in range(2))
    assert (first.lower, first.upper, first.status) == (second.lower, second.upper, second.status)
    np.testing.assert_array_equal(first.schedule.hop_steps, second.schedule.hop_steps)


@pytest.mark.parametrize("limit", [0, -1, float("nan"), float("inf")])
def test_bad_time_limits_are_refused(limit):
    paths = PathCollection.from_node_paths(line(3), [[0, 1, 2]] * 2)
    with pytest.raises(UserError, match="time limit"):
        optimum(paths, time_limit=limit)


def test_too_large_a_collection_is_refused_before_solving(monkeypatch):
    import universal.optimum.fixed_paths as fixed

    monkeypatch.setattr(fixed, "MAX_HOPS", 3)
    paths = PathCollection.from_node_paths(line(3), [[0, 1, 2]] * 2)
    with pytest.raises(UserError, match="at most 3 hops"):
        fixed.optimum(paths)


@pytest.mark.parametrize("not_paths", [None, [[0, 1, 2]], "dimension-order"])
def test_opt_needs_a_path_collection(not_paths):
    with pytest.raises(UserError, match="path collection"):
        optimum(not_paths)
