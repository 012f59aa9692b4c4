"""Invariants of every run of the fast engine (SPEC §2, §9), checked on random small instances.

Each property draws a network, a problem, a path system, a protocol, a bandwidth and seeds,
runs the fast engine with ``record_hops=True`` and checks the schedule it reports against
the model: every packet delivered exactly once, hops in path order, no link over its
bandwidth, no link idle while a packet waits for it, the trivial bounds on T, and the largest
buffer recomputed independently from the hop steps.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from universal.engine import simulate
from universal.networks import build_network, from_networkx
from universal.paths import PathCollection, route_paths
from universal.workloads import build_problem

PROTOCOLS = ["random-rank", "growing-rank", "fifo", "farthest-to-go", "nearest-to-go",
             "longest-in-system", "random", "growing-rank:K=2", "random-rank:K=1"]

NETWORKS = ["butterfly:d=2", "butterfly:d=3", "wrapped-butterfly:d=3", "mesh:k=3,n=2", "mesh:k=4,n=1",
            "torus:k=3,n=2", "torus:k=4,n=2", "hypercube:d=3", "hypercube:d=4", "petersen", "regular"]

PROBLEMS = ["permutation:random", "h-relation:h=2", "h-relation:h=3", "h-function:h=1", "h-function:h=3",
            "broadcast:source=0", "gossip"]

GRID_OR_LEVELED = ("butterfly", "wrapped-butterfly", "mesh", "torus", "hypercube")


@lru_cache(maxsize=None)
def network(name: str):
    if name == "petersen":
        return from_networkx(nx.petersen_graph(), "petersen")
    if name == "regular":
        return from_networkx(nx.random_regular_graph(4, 10, seed=3), "regular-4-10")
    return build_network(name)


@st.composite
def instances(draw):
    """(collection, protocol, bandwidth, engine seed) for a random small instance."""
    net = network(draw(st.sampled_from(NETWORKS)))
    systems = ["shortest", "random-shortest", "valiant", "valiant:base=random-shortest"]
    if net.kind in GRID_OR_LEVELED:
        systems.append("dimension-order")
    problem = draw(st.sampled_from(PROBLEMS))
    system = draw(st.sampled_from(systems))
    seed = draw(st.integers(0, 2**32 - 1))
    prob = build_problem(problem, net, np.random.default_rng(seed))
    coll = route_paths(system, prob, net, np.random.default_rng(seed + 1))
    protocol = draw(st.sampled_from(PROTOCOLS))
    bandwidth = draw(st.integers(1, 3))
    return coll, protocol, bandwidth, draw(st.integers(0, 2**32 - 1))


def per_path(coll: PathCollection, flat: np.ndarray) -> list[list[int]]:
    """Split an array aligned with ``coll.links`` into one list per path."""
    return [flat[coll.offsets[i]:coll.offsets[i + 1]].tolist() for i in range(coll.size)]


def recompute_max_buffer(coll: PathCollection, hop_steps: np.ndarray) -> int:
    """Largest link-buffer occupancy at the end of any step, from the hop steps alone.

    After crossing hop j (link ``path[j]``) in step ``s_j``, a packet that is not yet at its
    destination sits in the buffer of that link from the end of step ``s_j`` until it crosses
    hop j+1 in step ``s_{j+1}``, i.e. at the ends of steps ``s_j .. s_{j+1} - 1``.
    """
    occupancy: Counter = Counter()
    for links, steps in zip(per_path(coll, coll.links), per_path(coll, hop_steps)):
        for j in range(len(links) - 1):
            for t in range(steps[j], steps[j + 1]):
                occupancy[(links[j], t)] += 1
    return max(occupancy.values(), default=0)


def check_schedule(coll: PathCollection, res, bandwidth: int) -> None:
    """All invariants of a completed run with recorded hops."""
    lengths = coll.lengths
    assert res.status == "delivered"
    assert res.delivered == coll.size
    # Every packet delivered exactly once: at step 0 if its path is empty, else at a step >= 1.
    assert np.all(res.delivery >= 0)
    np.testing.assert_array_equal(res.delivery == 0, lengths == 0)
    assert res.hops == int(lengths.sum())
    assert res.hop_steps.shape == coll.links.shape
    assert np.all(res.hop_steps >= 1)

    links_of = per_path(coll, coll.links)
    steps_of = per_path(coll, res.hop_steps)
    for i, steps in enumerate(steps_of):
        # A packet makes at most one hop per step, in path order.
        assert all(a < b for a, b in zip(steps, steps[1:])), (i, steps)
        if steps:
            assert res.delivery[i] == steps[-1]

    # No link carries more than B packets in one step.
    used = Counter(zip(coll.links.tolist(), res.hop_steps.tolist()))
    assert max(used.values(), default=0) <= bandwidth

    # Greedy (work-conserving): in every step a link forwards min(B, packets waiting for it).
    # Packet i waits for hop j in steps prev+1 .. s_j, where prev is the step of hop j-1 (0 if j == 0).
    waiting: Counter = Counter()
    for links, steps in zip(links_of, steps_of):
        for j, (link, s) in enumerate(zip(links, steps)):
            for t in range((steps[j - 1] if j else 0) + 1, s + 1):
                waiting[(link, t)] += 1
    for key, count in waiting.items():
        assert used[key] == min(bandwidth, count), key

    # T between the lower bound max(C/B, D) and the total number of hops.
    T = res.T
    assert T == int(res.delivery.max())
    assert T >= max(math.ceil(coll.congestion / bandwidth), coll.dilation)
    assert T <= int(lengths.sum())
    assert res.steps == T

    assert res.max_buffer == recompute_max_buffer(coll, res.hop_steps)


@settings(max_examples=150, deadline=None)
@given(instances())
def test_schedule_invariants(instance):
    """Every run delivers every packet once, respects B, never idles a wanted link, and its
    reported largest buffer matches the one recomputed from the hop steps."""
    coll, protocol, bandwidth, seed = instance
    res = simulate(coll, protocol, np.random.default_rng(seed), bandwidth=bandwidth, record_hops=True)
    check_schedule(coll, res, bandwidth)


@settings(max_examples=40, deadline=None)
@given(instances())
def test_same_seed_same_result(instance):
    """The same inputs and seed give the same result, whether or not hops are recorded."""
    coll, protocol, bandwidth, seed = instance
    first = simulate(coll, protocol, np.random.default_rng(seed), bandwidth=bandwidth, record_hops=True)
    again = simulate(coll, protocol, np.random.default_rng(seed), bandwidth=bandwidth, record_hops=True)
    plain = simulate(coll, protocol, np.random.default_rng(seed), bandwidth=bandwidth)
    for other in (again, plain):
        np.testing.assert_array_equal(first.delivery, other.delivery)
        assert (first.status, first.steps, first.max_buffer, first.hops) == \
               (other.status, other.steps, other.max_buffer, other.hops)
    np.testing.assert_array_equal(first.hop_steps, again.hop_steps)
    assert plain.hop_steps is None


@settings(max_examples=40, deadline=None)
@given(instances(), st.integers(0, 30))
def test_step_limit_is_a_prefix(instance, limit):
    """Stopping at a step limit gives exactly the first ``limit`` steps of the full run."""
    coll, protocol, bandwidth, seed = instance
    full = simulate(coll, protocol, np.random.default_rng(seed), bandwidth=bandwidth, record_hops=True)
    cut = simulate(coll, protocol, np.random.default_rng(seed), bandwidth=bandwidth, record_hops=True,
                   step_limit=limit)
    if limit >= full.T:
        assert cut.status == "delivered"
        np.testing.assert_array_equal(cut.delivery, full.delivery)
        return
    assert cut.status == "step-limit"
    assert cut.steps == limit
    expect = np.where(full.delivery <= limit, full.delivery, -1)
    np.testing.assert_array_equal(cut.delivery, expect)
    np.testing.assert_array_equal(cut.hop_steps, np.where(full.hop_steps <= limit, full.hop_steps, -1))
    assert cut.hops == int(np.count_nonzero(full.hop_steps <= limit))
