"""R(G, π) with free paths (SPEC §12) and the routing number R(G) of small networks, against
values worked out by hand."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from universal.errors import UserError
from universal.networks import build_network, from_networkx
from universal.optimum import optimum, replay
from universal.optimum.free_paths import routing_time
from universal.optimum.routing_number import automorphisms, permutation_classes, routing_number
from universal.paths import route_paths
from universal.workloads import Problem, build_problem


def barbell():
    """Two triangles {0, 1, 2} and {3, 4, 5} joined by the bridge 2 - 3."""
    return from_networkx(nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (3, 5)]), "barbell")


SWAP_SIDES = Problem("swap sides", np.arange(6), np.array([4, 5, 3, 2, 0, 1]))


def test_swapping_the_sides_of_a_barbell():
    """Three packets cross the bridge 2 -> 3 (from 0, 1 and 2), one per step with B = 1. The
    packets of 0 and 1 need a step to reach node 2, so they cross in step 2 at the earliest; the
    three crossings take three different steps, so the last is in step >= 3, and if it is not the
    packet of node 2, that packet still needs a step after the bridge: >= 4. If the packet of 2
    crossed last, in step 3, the other two would share steps 1-2 but cannot use step 1. So
    R = 4 with B = 1 (node 2's packet in step 1, the others in steps 2 and 3), one more than the
    distance 3. With B = 2 both cross in step 2: R = 3, the distance."""
    net = barbell()
    one = routing_time(SWAP_SIDES, net, 1)
    assert (one.status, one.upper, one.lower_bound) == ("optimal", 4, 3)
    assert one.extra["infeasible"] == [3]
    assert routing_time(SWAP_SIDES, net, 2).upper == 3
    # The schedule replays on the paths it chose, which join every source to its destination.
    replay(one.schedule.collection, one.schedule.hop_steps, 1, SWAP_SIDES.sources, SWAP_SIDES.dests)


@pytest.mark.parametrize("network, problem, system", [
    ("mesh:k=3,n=2", "permutation:transpose", "dimension-order"),
    ("torus:k=4,n=2", "permutation:random", "shortest"),
    ("hypercube:d=3", "permutation:bit-reversal", "dimension-order"),
    ("butterfly:d=3", "permutation:bit-reversal", "dimension-order"),
])
def test_free_paths_never_need_more_than_fixed_ones(network, problem, system):
    """max distance <= R(G, π) <= OPT(P) for any path collection P of π."""
    net = build_network(network)
    prob = build_problem(problem, net, np.random.default_rng(0))
    paths = route_paths(system, prob, net, np.random.default_rng(1))
    free = routing_time(prob, net, 1)
    fixed = optimum(paths, 1)
    assert free.status == fixed.status == "optimal"
    assert free.lower_bound <= free.upper <= fixed.upper


def test_a_time_limit_reached_leaves_bounds():
    """A 3-relation on the 4x4 torus: greedy on shortest paths needs 5 steps, the distance bound
    is 4. Without time the solver finds a 4-step schedule; with almost none, bounds [4, 5]."""
    net = build_network("torus:k=4,n=2")
    prob = build_problem("h-relation:h=3", net, np.random.default_rng(1))
    short = routing_time(prob, net, 1, time_limit=1e-6)
    full = routing_time(prob, net, 1, time_limit=20)
    assert (short.status, short.lower, short.upper) == ("bounds", 4, 5)
    assert (full.status, full.upper) == ("optimal", 4)


def test_automorphism_classes():
    """The 3-cube has 3! * 2^3 = 48 automorphisms. The 6 permutations of the 3-node path fall
    into 4 classes under its reversal r: the identity; the swaps (0 1) and (1 2), exchanged by
    r; the swap (0 2); the two 3-cycles, exchanged by r."""
    assert len(automorphisms(build_network("hypercube:d=3"))) == 48
    symmetries = automorphisms(build_network("mesh:k=3,n=1"))
    assert sorted(map(tuple, symmetries.tolist())) == [(0, 1, 2), (2, 1, 0)]
    assert permutation_classes(3, symmetries).tolist() == [[0, 1, 2], [0, 2, 1], [1, 2, 0], [2, 1, 0]]


def test_routing_number_of_the_3_node_path():
    """R(P_3) = 2. Lower bound: the end nodes' packets of the reversal travel 2 hops. Upper
    bound: at most two packets move right (from nodes 0 and 1) and they use links 0->1 and 1->2;
    the one from node 1 crosses 1->2 in step 1, the one from node 0 crosses 0->1 in step 1 and
    1->2 in step 2; the left-moving packets likewise on the other two links. Every permutation
    takes at most 2 steps."""
    res = routing_number(build_network("mesh:k=3,n=1"))
    assert (res.status, res.lower, res.upper) == ("optimal", 2, 2)
    perm = res.permutation
    dist = np.abs(np.arange(3) - np.array(perm))
    assert dist.max() == 2


def test_routing_number_of_the_4_cycle():
    """R(C_4) = 2. Lower bound: a packet to the opposite node travels 2 hops. Upper bound: in
    step 1 every packet leaves its own node (one packet per node, so no link is wanted twice);
    in step 2 only packets bound for the opposite node still move, over a link into their
    destination w, and the packet that does so started at the node opposite w: at most one
    packet per link. So any choice of directions routes every permutation in 2 steps."""
    res = routing_number(build_network("torus:k=4,n=1"))
    assert (res.status, res.lower, res.upper) == ("optimal", 2, 2)


def test_routing_number_of_the_complete_graph_K4():
    """R(K_4) = 1: every packet crosses the link straight to its destination in step 1, and no
    two packets share a link since they start at different nodes."""
    res = routing_number(from_networkx(nx.complete_graph(4), "K4"))
    assert (res.lower, res.upper, res.classes) == (1, 1, 5)


def test_routing_number_of_the_3_cube():
    """R(Q_3) = 3. Lower bound: the diameter (v to its complement needs 3 hops; on the
    complement permutation bit fixing in a fixed order uses each link of one dimension once per
    step, 3 steps). Upper bound: every one of the 984 permutation classes gets a schedule of at
    most 3 steps, each replayed by the independent checker (greedy protocol schedules on
    shortest paths, or CP-SAT's); no class needs a 4th step."""
    res = routing_number(build_network("hypercube:d=3"))
    assert (res.status, res.lower, res.upper) == ("optimal", 3, 3)
    assert res.automorphisms == 48 and res.classes == 984
    complement = Problem("complement", np.arange(8), np.arange(8) ^ 7)
    assert routing_time(complement, build_network("hypercube:d=3"), 1).upper == 3


def test_routing_number_is_at_least_any_permutation():
    """The barbell's side swap needs 4 steps, so R(barbell) >= 4 = the value found, with an
    attaining permutation whose own R(G, π) is 4."""
    net = barbell()
    res = routing_number(net)
    assert res.upper == res.lower >= 4
    attaining = Problem("attaining", np.arange(6), np.array(res.permutation))
    assert routing_time(attaining, net, 1).upper == res.lower


def test_routing_number_refuses_large_networks():
    with pytest.raises(UserError, match="at most 8 nodes"):
        routing_number(build_network("mesh:k=3,n=2"))


def test_free_path_results_reproduce():
    """The horizons share a budget counted in the solver's deterministic time, never the wall
    clock: the same instance and limit give the same bounds and schedule every time."""
    net = build_network("torus:k=4,n=2")
    prob = build_problem("h-relation:h=3", net, np.random.default_rng(1))
    first, second = (routing_time(prob, net, 1, time_limit=0.05) for _ in range(2))
    assert (first.lower, first.upper, first.status, first.extra) == (second.lower, second.upper, second.status,
                                                                    second.extra)
    np.testing.assert_array_equal(first.schedule.hop_steps, second.schedule.hop_steps)
