"""Hand-worked examples that pin the model of SPEC §2 and the contention rules of §6.

Every expected delivery step below is worked out by hand in a comment. The cases run on a
line (``mesh:k=N,n=1``, nodes 0 - 1 - 2 - ...) with paths given as node lists, and are
checked on both engines: the fast one and the reference.

Conventions: packet ``i`` follows path ``i``; all packets start at step 0 in their source's
injection buffer; a packet crossing its last link in step t is delivered at step t.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from universal.engine import simulate, simulate_reference
from universal.networks import build_network, from_networkx
from universal.paths import PathCollection, route_paths
from universal.protocols import build_protocol
from universal.protocols.buffered import RANDOM_KEY_RANGE
from universal.workloads import build_problem

from .helpers import with_ranks

ALL = ["random-rank", "growing-rank", "fifo", "farthest-to-go", "nearest-to-go", "longest-in-system", "random"]
DETERMINISTIC = ["fifo", "farthest-to-go", "nearest-to-go", "longest-in-system", "random-rank:K=1", "growing-rank:K=1"]


def line(nodes: int = 6):
    """A line 0 - 1 - ... - (nodes-1): one edge, two directed links, between neighbours."""
    return build_network(f"mesh:k={nodes},n=1")


def run(coll: PathCollection, protocol, seed: int = 0, **kwargs):
    """Run both engines; they must agree; return the fast engine's result."""
    fast = simulate(coll, protocol, np.random.default_rng(seed), record_hops=True, **kwargs)
    ref = simulate_reference(coll, protocol, np.random.default_rng(seed), record_hops=True, **kwargs)
    np.testing.assert_array_equal(fast.delivery, ref.delivery)
    np.testing.assert_array_equal(fast.hop_steps, ref.hop_steps)
    assert (fast.status, fast.steps, fast.max_buffer, fast.hops) == (ref.status, ref.steps, ref.max_buffer, ref.hops)
    return fast




# --- single packets -------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ALL)
@pytest.mark.parametrize("L", [1, 2, 5])
def test_single_packet_arrives_after_L_steps(protocol, L):
    """Alone, a packet crosses one link per step: hop j in step j, delivery at step L."""
    coll = PathCollection.from_node_paths(line(6), [list(range(L + 1))])
    res = run(coll, protocol)
    assert res.delivery.tolist() == [L]
    assert res.hop_steps.tolist() == list(range(1, L + 1))
    assert (res.T, res.hops, res.status) == (L, L, "delivered")
    # It waits in one link buffer at the end of steps 1..L-1 (none if L == 1).
    assert res.max_buffer == (1 if L > 1 else 0)


@pytest.mark.parametrize("protocol", ALL)
def test_zero_length_paths_are_delivered_at_step_0(protocol, tmp_path):
    """Fixed points of a torus permutation have empty paths: delivered at step 0, no hops."""
    net = build_network("torus:k=3,n=2")
    # Swap nodes 0 and 1, fix the other seven. Dimension order: 0 -> 1 is one hop in +x,
    # 1 -> 0 one hop in -x, on two different directed links, so both arrive at step 1.
    file = tmp_path / "perm.txt"
    file.write_text("\n".join(map(str, [1, 0, 2, 3, 4, 5, 6, 7, 8])) + "\n")
    prob = build_problem(f"permutation:file={file}", net, np.random.default_rng(0))
    coll = route_paths("dimension-order", prob, net, np.random.default_rng(0))
    assert coll.lengths.tolist() == [1, 1, 0, 0, 0, 0, 0, 0, 0]
    res = run(coll, protocol)
    assert res.delivery.tolist() == [1, 1, 0, 0, 0, 0, 0, 0, 0]
    assert (res.T, res.hops, res.max_buffer, res.status) == (1, 2, 0, "delivered")


@pytest.mark.parametrize("protocol", ALL)
def test_identity_permutation_takes_no_steps(protocol):
    """All paths empty: T = 0 after zero steps, every packet delivered at step 0."""
    net = build_network("torus:k=4,n=2")
    coll = PathCollection.from_node_paths(net, [[v] for v in range(net.num_nodes)])
    res = run(coll, protocol)
    assert res.delivery.tolist() == [0] * net.num_nodes
    assert (res.T, res.steps, res.hops, res.max_buffer, res.status) == (0, 0, 0, 0, "delivered")


@pytest.mark.parametrize("protocol", ALL)
def test_no_packets(protocol):
    """An empty collection is delivered at once: zero steps, T = 0."""
    coll = PathCollection.from_node_paths(line(3), [])
    res = run(coll, protocol)
    assert len(res.delivery) == 0 and len(res.hop_steps) == 0
    assert (res.status, res.steps, res.T, res.hops, res.max_buffer) == ("delivered", 0, 0, 0, 0)


# --- two packets, one link --------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ALL)
def test_opposite_directions_do_not_contend(protocol):
    """An edge is two directed links: 0 -> 1 and 1 -> 0 both cross in step 1 with B = 1."""
    coll = PathCollection.from_node_paths(line(2), [[0, 1], [1, 0]])
    assert run(coll, protocol).delivery.tolist() == [1, 1]


@pytest.mark.parametrize("protocol", DETERMINISTIC)
def test_tie_goes_to_lowest_id(protocol):
    """Two packets on the same one-link path with equal keys (K=1 makes every rank 0;
    FIFO, farthest/nearest-to-go and longest-in-system tie too): packet 0 crosses in step 1,
    packet 1 in step 2."""
    coll = PathCollection.from_node_paths(line(2), [[0, 1], [0, 1]])
    res = run(coll, protocol)
    assert res.delivery.tolist() == [1, 2]
    assert res.max_buffer == 0  # a one-link path never enters a link buffer


def test_random_rank_lower_rank_wins():
    """Random rank: of two packets wanting the same link in step 1, the lower rank crosses
    first (delivered at 1, the other at 2); equal ranks go to the lower id. The ranks are
    the ones the protocol draws first from the run's generator."""
    coll = PathCollection.from_node_paths(line(2), [[0, 1], [0, 1]])
    protocol = build_protocol("random-rank")
    seen_higher_id_wins = False
    for seed in range(30):
        ranks = protocol.setup(np.random.default_rng(seed), coll.lengths, coll.congestion, coll.dilation).ranks
        # K = C + D + ceil(log2 n) = 2 + 1 + 1.
        assert ranks.min() >= 0 and ranks.max() < 4
        res = run(coll, "random-rank", seed=seed)
        winner = 1 if ranks[1] < ranks[0] else 0
        seen_higher_id_wins |= winner == 1
        assert res.delivery[winner] == 1 and res.delivery[1 - winner] == 2, (seed, ranks)
    assert seen_higher_id_wins  # the rank, not the id, decided at least once


def test_random_rank_with_constructed_ranks():
    """Ranks 5, 2, 7 on one link: packet 1 first (step 1), then 0 (step 2), then 2 (step 3)."""
    coll = PathCollection.from_node_paths(line(2), [[0, 1]] * 3)
    assert run(coll, with_ranks("random-rank", [5, 2, 7])).delivery.tolist() == [2, 1, 3]


def test_random_rule_uses_fresh_keys_of_the_step():
    """The ``random`` rule: the keys of step 1 are drawn, after the initial ranks, in one call
    for the waiting packets in id order; the lower key crosses first."""
    coll = PathCollection.from_node_paths(line(2), [[0, 1], [0, 1]])
    seen = set()
    for seed in range(20):
        rng = np.random.default_rng(seed)
        rng.integers(0, 4, size=2)  # the initial ranks every protocol draws (K = 4)
        keys = rng.integers(0, RANDOM_KEY_RANGE, size=2)
        winner = int(np.argmin(keys))
        seen.add(winner)
        res = run(coll, "random", seed=seed)
        assert res.delivery[winner] == 1 and res.delivery[1 - winner] == 2
    assert seen == {0, 1}


@pytest.mark.parametrize("protocol", ALL)
def test_bandwidth_two_lets_both_cross(protocol):
    """With B = 2 both packets cross the shared link in step 1."""
    coll = PathCollection.from_node_paths(line(2), [[0, 1], [0, 1]])
    assert run(coll, protocol, bandwidth=2).delivery.tolist() == [1, 1]


def test_bandwidth_two_three_packets():
    """B = 2, three packets, ranks 4, 0, 1 on one link: packets 1 and 2 in step 1, packet 0 in step 2."""
    coll = PathCollection.from_node_paths(line(2), [[0, 1]] * 3)
    assert run(coll, with_ranks("random-rank", [4, 0, 1]), bandwidth=2).delivery.tolist() == [2, 1, 1]


def test_pipeline_on_a_shared_path():
    """Two packets on the path 0-1-2-3 (K=1, so packet 0 has priority): packet 0 crosses in
    steps 1, 2, 3; packet 1 follows one step behind (2, 3, 4). One packet per buffer at a time."""
    coll = PathCollection.from_node_paths(line(4), [[0, 1, 2, 3], [0, 1, 2, 3]])
    res = run(coll, "random-rank:K=1")
    assert res.delivery.tolist() == [3, 4]
    assert res.hop_steps.tolist() == [1, 2, 3, 2, 3, 4]
    assert res.max_buffer == 1
    assert res.mean_latency == 3.5


# --- the greedy rules ---------------------------------------------------------------------------

# Two packets injected at node 0: packet 0 goes to node 1, packet 1 to node 2 (both start at
# step 0, so FIFO ties and goes to the lower id).
#   fifo, longest-in-system: packet 0 first (step 1); packet 1 crosses 0->1 in 2, 1->2 in 3.
#   farthest-to-go: packet 1 (2 hops left) first: 0->1 in 1, 1->2 in 2; packet 0 in step 2.
#   nearest-to-go: packet 0 (1 hop left) first, as fifo.
INJECTED = [[0, 1], [0, 1, 2]]
INJECTED_EXPECTED = {"fifo": [1, 3], "longest-in-system": [1, 3], "farthest-to-go": [2, 2], "nearest-to-go": [1, 3]}

# Packets 0 and 1 (the blockers) are injected at node 2 for node 3; packet 2 goes 0 -> 4,
# packet 3 goes 1 -> 3. Link 2->3 is wanted by all four.
#   step 1: 2->3 blockers 0 and 1 tie under every rule: packet 0 crosses (delivered 1).
#           packet 2 crosses 0->1, packet 3 crosses 1->2 (both alone on their links).
#   step 2: 2->3 wanted by packet 1 (injected, 1 hop left) and packet 3 (arrived at step 1,
#           1 hop left): packet 1 wins under every rule (earlier arrival; else tie -> lower id),
#           delivered 2. Packet 2 crosses 1->2 and now sits with packet 3 in the buffer of
#           link 1->2: 2 packets, the largest buffer of the run.
#   step 3: 2->3 wanted by packet 2 (arrived step 2, 2 hops left) and packet 3 (arrived
#           step 1, 1 hop left).
#     fifo: packet 3 (earlier arrival, despite its higher id) -> delivered 3; packet 2
#           crosses 2->3 in 4, 3->4 in 5.
#     nearest-to-go: packet 3 (1 left) -> same as fifo.
#     farthest-to-go: packet 2 (2 left) crosses in 3, 3->4 in 4; packet 3 crosses in 4.
#     longest-in-system (all injected at step 0, so by id): packet 2 -> as farthest-to-go.
BLOCKED = [[2, 3], [2, 3], [0, 1, 2, 3, 4], [1, 2, 3]]
BLOCKED_EXPECTED = {"fifo": [1, 2, 5, 3], "nearest-to-go": [1, 2, 5, 3],
                    "farthest-to-go": [1, 2, 4, 4], "longest-in-system": [1, 2, 4, 4]}


@pytest.mark.parametrize("protocol", sorted(INJECTED_EXPECTED))
def test_greedy_rules_at_injection(protocol):
    """Farthest-to-go differs from FIFO and nearest-to-go on two packets sharing a first link."""
    coll = PathCollection.from_node_paths(line(3), INJECTED)
    assert run(coll, protocol).delivery.tolist() == INJECTED_EXPECTED[protocol]


@pytest.mark.parametrize("protocol", sorted(BLOCKED_EXPECTED))
def test_greedy_rules_in_link_buffers(protocol):
    """FIFO follows arrival times at the buffer, not ids; farthest-to-go differs from it."""
    coll = PathCollection.from_node_paths(line(5), BLOCKED)
    res = run(coll, protocol)
    assert res.delivery.tolist() == BLOCKED_EXPECTED[protocol]
    assert res.max_buffer == 2


# FIFO ranks by the step of arrival at the current buffer, not by hops made nor by id. Graph:
# the line 0 - 1 - 2 - 3 - 4 with a pendant node 5 on node 3. Packets 0-2 (blockers) go 5 -> 3,
# packets 3-6 (blockers) go 3 -> 4, packet 7 ("B") goes 5 -> 3 -> 4, packet 8 ("A") 0 -> ... -> 4.
#   steps 1-3: link 5->3 serves blockers 0, 1, 2 (all injected at step 0; ties by id, B has a
#              higher id); link 3->4 serves blockers 3, 4, 5; A crosses 0->1, 1->2, 2->3 and
#              reaches node 3 at the end of step 3 (arrival 3, 3 hops made).
#   step 4:    B crosses 5->3 (arrival 4, 1 hop made); on 3->4 blocker 6 (arrival 0) beats A.
#   step 5:    link 3->4 wanted by A (arrival 3, id 8) and B (arrival 4, id 7).
#     fifo: A arrived first -> A delivered at 5, B at 6.
#     longest-in-system (by id here): B at 5, A at 6.
ARRIVAL_GRAPH = [(0, 1), (1, 2), (2, 3), (3, 4), (3, 5)]
ARRIVAL_PATHS = [[5, 3]] * 3 + [[3, 4]] * 4 + [[5, 3, 4], [0, 1, 2, 3, 4]]
ARRIVAL_EXPECTED = {"fifo": [1, 2, 3, 1, 2, 3, 4, 6, 5], "longest-in-system": [1, 2, 3, 1, 2, 3, 4, 5, 6]}


@pytest.mark.parametrize("protocol", sorted(ARRIVAL_EXPECTED))
def test_fifo_serves_by_arrival_time(protocol):
    """FIFO lets the packet that reached the buffer first go first, even with a higher id and
    more hops made."""
    net = from_networkx(nx.Graph(ARRIVAL_GRAPH), "line-with-pendant")
    coll = PathCollection.from_node_paths(net, ARRIVAL_PATHS)
    res = run(coll, protocol)
    assert res.delivery.tolist() == ARRIVAL_EXPECTED[protocol]
    assert res.max_buffer == 1


# --- growing rank -------------------------------------------------------------------------------

# Line 0 - 1 - 2, K = 8, D = 2 (so a hop adds K/D = 4 to the rank; keys are rank*D + hops*K).
#   packet 0: 1 -> 2, rank 0;  packet 1: 0 -> 1 -> 2, rank 0;  packet 2: 1 -> 2, rank r.
#   step 1: link 1->2: packet 0 (key 0) beats packet 2 (key 2r) -> packet 0 delivered at 1.
#           link 0->1: packet 1 crosses alone (now 1 hop made, key 0*2 + 1*8 = 8).
#   step 2: link 1->2: packet 1 (moved, key 8) against packet 2 (waited, key 2r).
#     growing rank: r = 3: key 6 < 8, packet 2 goes first -> delivery [1, 3, 2];
#                   r = 4: key 8 = 8, tie to the lower id, packet 1 -> [1, 2, 3];
#                   r = 5: key 10 > 8, packet 1 -> [1, 2, 3].
#     random rank never grows: packet 1 (rank 0 < r) goes first for every r -> [1, 2, 3].
@pytest.mark.parametrize("r, growing, random", [
    (1, [1, 3, 2], [1, 2, 3]),
    (3, [1, 3, 2], [1, 2, 3]),
    (4, [1, 2, 3], [1, 2, 3]),
    (5, [1, 2, 3], [1, 2, 3]),
])
def test_growing_rank_lets_the_waiting_packet_pass(r, growing, random):
    """A packet that moved yields to one that waited when their ranks differ by less than K/D."""
    coll = PathCollection.from_node_paths(line(3), [[1, 2], [0, 1, 2], [1, 2]])
    assert (coll.congestion, coll.dilation) == (3, 2)
    assert run(coll, with_ranks("growing-rank:K=8", [0, 0, r])).delivery.tolist() == growing
    assert run(coll, with_ranks("random-rank:K=8", [0, 0, r])).delivery.tolist() == random


def test_growing_rank_default_K():
    """Without K=, K = C + D + ceil(log2 n) = 3 + 2 + 2 = 7 on the case above. In step 2 the
    moved packet 1 has key 0*2 + 1*7 = 7. Waiting packet 2 with rank 3 has key 6 < 7 and goes
    first (delivery [1, 3, 2]); with rank 4 its key 8 > 7 and it goes second ([1, 2, 3])."""
    coll = PathCollection.from_node_paths(line(3), [[1, 2], [0, 1, 2], [1, 2]])
    K = build_protocol("growing-rank").setup(np.random.default_rng(0), coll.lengths, 3, 2).K
    assert K == 3 + 2 + math.ceil(math.log2(3))
    assert run(coll, with_ranks("growing-rank", [0, 0, 3])).delivery.tolist() == [1, 3, 2]
    assert run(coll, with_ranks("growing-rank", [0, 0, 4])).delivery.tolist() == [1, 2, 3]
