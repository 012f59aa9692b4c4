"""random-delay:alpha= (Leighton, Maggs & Rao's first step behind Theorem 14): delays from
[0, alpha * C), then greedy FIFO. Hand-worked schedules in both engines, and parameter errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from universal.engine import simulate, simulate_reference
from universal.errors import UserError
from universal.networks import build_network
from universal.paths import PathCollection
from universal.protocols import build_protocol

from .helpers import with_ranks

ENGINES = [simulate, simulate_reference]


def chain(packets: int, hops: int) -> PathCollection:
    """``packets`` packets on the same ``hops``-hop path of a line."""
    net = build_network(f"mesh:k={hops + 1},n=1")
    return PathCollection.from_node_paths(net, [list(range(hops + 1))] * packets)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_delayed_packet_starts_after_its_delay(engine):
    """Three packets on one 3-hop path with delays 4, 0, 1 (set by hand). Packet 1 leaves in
    step 1 and arrives in step 3; packet 2 may move from step 2 and follows right behind it
    (arrives step 4); packet 0 waits until step 4 is over, then needs 3 steps: step 7."""
    coll = chain(3, 3)
    res = engine(coll, with_ranks("random-delay:alpha=2", [4, 0, 1]), np.random.default_rng(0), record_hops=True)
    assert res.delivery.tolist() == [7, 3, 4]
    assert res.status == "delivered"


@pytest.mark.parametrize("engine", ENGINES)
def test_fifo_decides_among_released_packets(engine):
    """Delays 1, 0, 1 on a 2-hop chain: packet 1 crosses the first link in step 1 and is in the
    middle buffer since step 1; packets 0 and 2 are released after step 1 and arrived at their
    injection buffer "at step 1" too, so the tie goes by id: packet 0 in step 2, packet 2 in
    step 3; deliveries 3, 2, 4."""
    coll = chain(3, 2)
    res = engine(coll, with_ranks("random-delay:alpha=2", [1, 0, 1]), np.random.default_rng(0))
    assert res.delivery.tolist() == [3, 2, 4]


def test_delays_are_drawn_from_zero_to_alpha_C():
    """K = ceil(alpha * C) delay values, every one of them used over many packets."""
    protocol = build_protocol("random-delay:alpha=0.75")
    lengths = np.full(4000, 3)
    state = protocol.setup(np.random.default_rng(1), lengths, 8, 3)
    assert state.K == math.ceil(0.75 * 8) == 6
    assert sorted(set(protocol.release_steps(state).tolist())) == list(range(6))


def test_T_is_at_least_the_largest_delay_plus_D():
    coll = chain(6, 2)
    for seed in range(5):
        res = simulate(coll, "random-delay:alpha=3", np.random.default_rng(seed))
        state = build_protocol("random-delay:alpha=3").setup(np.random.default_rng(seed), coll.lengths, 6, 2)
        assert res.T >= int(state.ranks.max()) + 2


@pytest.mark.parametrize("text, message", [
    ("random-delay:alpha=0", "out of range"),
    ("random-delay:alpha=-1", "out of range"),
    ("random-delay:alpha=nan", "out of range"),
    ("random-delay:alpha=100", "out of range"),
    ("random-delay:alpha=x", "not a number"),
    ("random-delay:beta=1", "beta"),
])
def test_bad_parameters_are_refused(text, message):
    with pytest.raises(UserError, match=message):
        build_protocol(text)
