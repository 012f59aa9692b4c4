"""The replay checker: every rule of the model (SPEC §12) is enforced, so a wrong solver
schedule cannot be reported."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine import simulate
from universal.networks import build_network
from universal.optimum import ScheduleError, replay
from universal.paths import PathCollection, route_paths
from universal.workloads import build_problem


@pytest.fixture
def two_on_a_line():
    """Packets 0 and 1 both go 0 -> 1 -> 2 on the 3-node line."""
    return PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2], [0, 1, 2]])


def test_a_valid_schedule_replays_to_its_makespan(two_on_a_line):
    schedule = replay(two_on_a_line, np.array([1, 2, 2, 3]), bandwidth=1)
    assert schedule.makespan == 3
    assert schedule.moves() == [[(0, 0)], [(0, 2), (1, 0)], [(1, 2)]]


@pytest.mark.parametrize("steps, bandwidth, message", [
    ([1, 2, 1, 2], 1, "more than B = 1"),       # both cross 0->1 in step 1
    ([2, 1, 1, 2], 2, "before hop 0"),          # hop 1 before hop 0
    ([1, 1, 1, 2], 2, "crosses two links"),     # two hops in one step
    ([1, 3, 2, 2], 1, "crosses two links"),     # packet 1's hops both in step 2
    ([0, 1, 1, 2], 2, "< 1"),                   # step 0 does not exist
    ([1, 2, 1], 2, "3 hop steps for 4 hops"),   # a hop without a step
])
def test_every_broken_rule_is_caught(two_on_a_line, steps, bandwidth, message):
    with pytest.raises(ScheduleError, match=message):
        replay(two_on_a_line, np.array(steps), bandwidth=bandwidth)


def test_free_paths_must_solve_the_problem(two_on_a_line):
    with pytest.raises(ScheduleError, match="source, destination"):
        replay(two_on_a_line, np.array([1, 2, 1, 2]), 2, sources=np.array([0, 0]), dests=np.array([2, 1]))


def test_every_engine_schedule_replays_to_its_T():
    """A second method for the same quantity: the engine's recorded hops replay to the engine's T."""
    net = build_network("butterfly:d=4")
    prob = build_problem("h-relation:h=3", net, np.random.default_rng(3))
    paths = route_paths("valiant", prob, net, np.random.default_rng(4))
    for bandwidth in (1, 2):
        for protocol in ("random-rank", "fifo", "farthest-to-go"):
            res = simulate(paths, protocol, np.random.default_rng(5), bandwidth=bandwidth, record_hops=True)
            assert replay(paths, res.hop_steps, bandwidth).makespan == res.T
