"""The bufferless protocols, trial-and-failure and duplication, exactly as the module docstring of
:mod:`universal.protocols.bufferless` fixes them (SPEC §6).

Reminders of that contract used in the hand-worked cases below: D = max(dilation, 1); round j
is the 4D steps t0+1 .. t0+4D with t0 = (j-1)·4D; a packet (copy) with delay delta crosses hop
k in step t0+delta+k+1; its acknowledgement reaches the source at t0+4D-delta; trial-and-
failure draws ranks rng.integers(0, K, size=n) then delays rng.integers(0, D, size=n) once, before
round 1 (and every round in the variant redraw=yes); duplication draws rng.integers(0, D, size=(a, c))
per round, c = 2^(j-1) (min with copies=N in the capped variant).

Some cases script the generator (:class:`Script`): it hands out the given arrays in order and
records the calls, so the delays and ranks are chosen by hand and the calls are checked too.
Every hand-built case runs on both engines; then properties are checked on seeded runs, and the
fast engine must agree exactly with the reference on well over 100 cases per protocol.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import networkx as nx
import numpy as np
import pytest

from universal.engine import simulate, simulate_reference
from universal.networks import build_network, from_networkx
from universal.paths import PathCollection
from universal.protocols import build_protocol

from .test_equivalence import SCENARIOS, build_case

ENGINES = [pytest.param(simulate, id="one"), pytest.param(simulate_reference, id="reference")]


class Script:
    """A stand-in for ``numpy.random.Generator`` whose ``integers`` returns scripted arrays."""

    def __init__(self, *draws):
        self.draws = [np.array(d, dtype=np.int64) for d in draws]
        self.calls: list[tuple] = []

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        assert not endpoint
        size = tuple(size) if isinstance(size, (tuple, list)) else (size,)
        self.calls.append((int(low), int(high), size))
        assert self.draws, f"unexpected draw {self.calls[-1]}"
        out = self.draws.pop(0)
        assert out.shape == size, (out.shape, size)
        assert np.all((low <= out) & (out < high))
        return out


def line(nodes: int):
    return build_network(f"mesh:k={nodes},n=1")


def link(net, tail: int, head: int) -> int:
    return int(net.links_between(np.array([tail]), np.array([head]))[0])


def rows(res) -> list[tuple[int, int, int]]:
    return [tuple(map(int, r)) for r in res.crossings]


# --- trial-and-failure, by hand -------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_tf_collision_lower_id_wins_ties(engine):
    """K = 1 (all ranks 0), B = 1, packets 0 and 1 both on the single link 0->1; D = 1, delays 0.

    Round 1 (steps 1-4): both want 0->1 in step 1; ranks tie, packet 0 (lower id) crosses and is
    delivered at 1 (ack at 0+4-0 = 4); packet 1 is discarded. Round 2 (steps 5-8): packet 1 alone
    crosses in step 5 (ack at 8). T = 8, 2 rounds, 1 discarded attempt, 2 crossings.
    """
    net = line(2)
    coll = PathCollection.from_node_paths(net, [[0, 1], [0, 1]])
    res = engine(coll, "trial-and-failure:K=1", np.random.default_rng(3), record_hops=True)
    e = link(net, 0, 1)
    assert res.delivery.tolist() == [1, 5]
    assert (res.status, res.steps, res.rounds, res.discarded, res.finish, res.hops) == ("delivered", 8, 2, 1, 8, 2)
    assert (res.T, res.last_delivery, res.max_buffer, res.buffer, res.copies_capped) == (8, 5, 0, 0, None)
    assert rows(res) == [(1, e, 0), (5, e, 1)]
    assert res.crossings.dtype == np.int64 and res.crossings.shape == (2, 3)


@pytest.mark.parametrize("engine", ENGINES)
def test_tf_collision_lower_rank_wins(engine):
    """As above with scripted ranks 1 and 0: packet 1 has the lower rank and wins despite its id."""
    net = line(2)
    coll = PathCollection.from_node_paths(net, [[0, 1], [0, 1]])
    rng = Script([1, 0], [0, 0])
    res = engine(coll, "trial-and-failure:K=5", rng, record_hops=True)
    assert res.delivery.tolist() == [5, 1]
    assert (res.rounds, res.discarded, res.finish) == (2, 1, 8)
    # By default ranks and delays are drawn once, before round 1 (survey §4.3).
    assert rng.calls == [(0, 5, (2,)), (0, 1, (2,))] and not rng.draws
    # The variant redraw=yes draws again in round 2 for all n = 2 packets, though one is done.
    rng = Script([1, 0], [0, 0], [4, 2], [0, 0])
    res = engine(coll, "trial-and-failure:K=5,redraw=yes", rng, record_hops=True)
    assert res.delivery.tolist() == [5, 1]
    assert rng.calls == [(0, 5, (2,)), (0, 1, (2,))] * 2 and not rng.draws


@pytest.mark.parametrize("engine", ENGINES)
def test_tf_collision_with_the_run_generator(engine):
    """Seeded generators: replaying the contract's draws says who wins round 1; the other packet
    goes alone in round 2. K = ceil(C·D^(1/B-1) + log2 n) = ceil(2 + 1) = 3 for C = 2, D = 1, n = 2."""
    net = line(2)
    coll = PathCollection.from_node_paths(net, [[0, 1], [0, 1]])
    winners = set()
    for seed in range(12):
        ranks = np.random.default_rng(seed).integers(0, 3, size=2)
        winner = min((int(ranks[i]), i) for i in range(2))[1]
        winners.add(winner)
        res = engine(coll, "trial-and-failure", np.random.default_rng(seed))
        assert res.delivery[winner] == 1 and res.delivery[1 - winner] == 5
        assert (res.rounds, res.discarded, res.finish) == (2, 1, 8)
    assert winners == {0, 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_tf_redraw_or_keep_the_first_draws(engine):
    """B = 1, D = 1, three packets on link 0->1, K = 7 given.

    Round 1, ranks (2, 0, 1): packet 1 crosses at step 1; packets 0 and 2 are discarded.
    redraw=no: round 2 keeps (2, 0, 1): packet 2 beats packet 0 (step 5), packet 0 goes in round 3
      (step 9). Two generator calls in all.
    redraw=yes: round 2 draws (0, 6, 1): packet 0 now wins (step 5), packet 2 waits for round 3
      (ranks (3, 3, 3), alone: step 9). Six calls, every one for all n = 3 packets.
    Either way 2 + 1 = 3 discarded attempts, 3 rounds, T = 12.
    """
    net = line(2)
    coll = PathCollection.from_node_paths(net, [[0, 1]] * 3)
    keep = Script([2, 0, 1], [0, 0, 0])
    res = engine(coll, "trial-and-failure:K=7,redraw=no", keep)
    assert res.delivery.tolist() == [9, 1, 5]
    assert (res.rounds, res.discarded, res.finish, res.steps) == (3, 3, 12, 12)
    assert keep.calls == [(0, 7, (3,)), (0, 1, (3,))]

    fresh = Script([2, 0, 1], [0, 0, 0], [0, 6, 1], [0, 0, 0], [3, 3, 3], [0, 0, 0])
    res = engine(coll, "trial-and-failure:K=7,redraw=yes", fresh)
    assert res.delivery.tolist() == [5, 1, 9]
    assert (res.rounds, res.discarded, res.finish) == (3, 3, 12)
    assert fresh.calls == [(0, 7, (3,)), (0, 1, (3,))] * 3 and not fresh.draws


@pytest.mark.parametrize("engine", ENGINES)
def test_tf_delays_and_acknowledgements(engine):
    """Line 0..3, D = 3, B = 1; scripted ranks (0, 1), delays (2, 0).

    Packet 0 on 2->3 (delay 2): crosses in step 0+2+0+1 = 3, delivered at 3, ack at 12-2 = 10.
    Packet 1 on 0->1->2->3 (delay 0): steps 1, 2, 3; it wants 2->3 in step 3 like packet 0 and
    has the higher rank: discarded there, after two crossings. Round 2 (t0 = 12) keeps its delay 0:
    packet 1 crosses in steps 13, 14, 15, delivered at 15, ack at 24-0 = 24.
    T = 24, 2 rounds, 1 discarded, 1 + 2 + 3 = 6 crossings.
    The variant redraw=yes draws again for round 2, scripted ranks (5, 5), delays (1, 1): packet 1
    crosses in steps 14, 15, 16, delivered at 16, ack at 24-1 = 23.
    """
    net = line(4)
    coll = PathCollection.from_node_paths(net, [[2, 3], [0, 1, 2, 3]])
    e01, e12, e23 = link(net, 0, 1), link(net, 1, 2), link(net, 2, 3)
    rng = Script([0, 1], [2, 0])
    res = engine(coll, "trial-and-failure:K=6", rng, record_hops=True)
    assert res.delivery.tolist() == [3, 15]
    assert (res.status, res.rounds, res.discarded, res.finish, res.T, res.steps, res.hops) == \
           ("delivered", 2, 1, 24, 24, 24, 6)
    assert rows(res) == sorted([(3, e23, 0), (1, e01, 1), (2, e12, 1), (13, e01, 1), (14, e12, 1), (15, e23, 1)])
    assert rng.calls == [(0, 6, (2,)), (0, 3, (2,))]

    rng = Script([0, 1], [2, 0], [5, 5], [1, 1])
    res = engine(coll, "trial-and-failure:K=6,redraw=yes", rng, record_hops=True)
    assert res.delivery.tolist() == [3, 16]
    assert (res.status, res.rounds, res.discarded, res.finish, res.T, res.steps, res.hops) == \
           ("delivered", 2, 1, 23, 23, 24, 6)
    assert rows(res) == sorted([(3, e23, 0), (1, e01, 1), (2, e12, 1), (14, e01, 1), (15, e12, 1), (16, e23, 1)])
    assert rng.calls == [(0, 6, (2,)), (0, 3, (2,))] * 2


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tf_enough_bandwidth_finishes_in_one_round(engine, seed):
    """With B >= C no link ever has more than B contenders, so nothing is discarded: one round,
    packet i delivered at delta_i + L_i, and T = 4D - (smallest delay). The delays are replayed
    from the contract's draws (ranks first, then delays)."""
    coll = build_case("bf3-hfun3-valiant", None, 40 + seed)
    C, D, n = coll.congestion, coll.dilation, coll.size
    assert C >= 2 and D >= 2
    K = build_protocol("trial-and-failure").rank_range(C, D, n, C)
    replay = np.random.default_rng(seed)
    replay.integers(0, K, size=n)
    delays = replay.integers(0, D, size=n)
    res = engine(coll, "trial-and-failure", np.random.default_rng(seed), bandwidth=C, record_hops=True)
    assert (res.status, res.rounds, res.discarded, res.steps) == ("delivered", 1, 0, 4 * D)
    np.testing.assert_array_equal(res.delivery, np.where(coll.lengths > 0, delays + coll.lengths, 0))
    assert res.finish == res.T == 4 * D - int(delays[coll.lengths > 0].min())
    assert res.hops == len(res.crossings) == int(coll.lengths.sum())


@pytest.mark.parametrize("engine", ENGINES)
def test_tf_step_limit_cuts_between_rounds(engine):
    """K = 1, B = 1, D = 1, three packets on one link: one delivered per round (steps 1, 5, 9).
    A round j starts only if j·4D <= limit: limits 8..11 run two rounds, 12 all three."""
    coll = PathCollection.from_node_paths(line(2), [[0, 1]] * 3)
    for limit in (8, 11):
        res = engine(coll, "trial-and-failure:K=1", np.random.default_rng(0), step_limit=limit)
        assert res.delivery.tolist() == [1, 5, -1]
        assert (res.status, res.steps, res.rounds, res.discarded, res.T) == ("step-limit", 8, 2, 3, 8)
        assert res.finish == 8  # the last acknowledgement seen
    res = engine(coll, "trial-and-failure:K=1", np.random.default_rng(0), step_limit=12)
    assert (res.status, res.steps, res.rounds, res.finish) == ("delivered", 12, 3, 12)
    # rounds=2 sets the default limit to 2 rounds
    res = engine(coll, "trial-and-failure:K=1,rounds=2", np.random.default_rng(0))
    assert (res.status, res.rounds) == ("step-limit", 2)
    res = engine(coll, "trial-and-failure:K=1", np.random.default_rng(0), step_limit=3)
    assert (res.status, res.steps, res.rounds, res.finish) == ("step-limit", 0, 0, 0)
    assert res.delivery.tolist() == [-1, -1, -1]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", ["trial-and-failure", "duplication"])
def test_empty_paths(engine, protocol):
    """Empty paths are delivered (and done) at step 0: with only those, no round runs."""
    net = line(3)
    coll = PathCollection.from_node_paths(net, [[1], [2]])
    res = engine(coll, protocol, np.random.default_rng(0), record_hops=True)
    assert res.delivery.tolist() == [0, 0]
    assert (res.status, res.steps, res.rounds, res.finish, res.T, res.hops, res.discarded) == \
           ("delivered", 0, 0, 0, 0, 0, 0)
    assert res.crossings.shape == (0, 3)
    # Mixed with a one-hop packet (D = 1): it goes in round 1, step 1, ack at step 4.
    coll = PathCollection.from_node_paths(net, [[1], [1, 2], [2]])
    res = engine(coll, protocol, np.random.default_rng(0))
    assert res.delivery.tolist() == [0, 1, 0]
    assert (res.rounds, res.finish, res.steps) == (1, 4, 4)


# --- duplication, by hand ----------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_dup_collision_both_die(engine):
    """B = 1, D = 1, packets 0 and 1 on link 0->1: every copy wants it in step t0+1.

    By default (survey §4.4) each packet sends 2^(j-1) copies in round j: 1, 2, 4 for rounds 1-3,
    and with more than B copies on the link in step t0+1 all are discarded. Limit 12 = 3 rounds:
    2 + 4 + 8 = 14 discarded copies, nothing crosses, nothing delivered, no acknowledgement
    (finish 0), no cap.
    """
    net = line(2)
    coll = PathCollection.from_node_paths(net, [[0, 1], [0, 1]])
    res = engine(coll, "duplication", np.random.default_rng(0), step_limit=12, record_hops=True)
    assert res.delivery.tolist() == [-1, -1]
    assert (res.status, res.steps, res.rounds, res.discarded, res.hops, res.finish) == \
           ("step-limit", 12, 3, 14, 0, 0)
    assert res.copies_capped is False
    assert res.crossings.shape == (0, 3)
    # With copies=1 (a variant) every round sends one copy per packet: 2 + 2 + 2 discarded, capped.
    res = engine(coll, "duplication:copies=1", np.random.default_rng(0), step_limit=12)
    assert (res.rounds, res.discarded, res.copies_capped) == (3, 6, True)
    # Without a step limit the doubling runs until a round would send more copies than allowed:
    # round 12 would send 2 * 2^11 = 4096 > 4000 copies, so 11 rounds run (status copy-limit).
    limited = replace(build_protocol("duplication"), max_round_copies=4000)
    res = engine(coll, limited, np.random.default_rng(0))
    assert (res.status, res.rounds, res.steps, res.discarded) == ("copy-limit", 11, 44, 2 * (2 ** 11 - 1))
    # B = 2: the two copies may share the link: both delivered at step 1, in one round.
    res = engine(coll, "duplication", np.random.default_rng(0), bandwidth=2)
    assert res.delivery.tolist() == [1, 1]
    assert (res.rounds, res.discarded, res.finish) == (1, 0, 4)


@pytest.mark.parametrize("engine", ENGINES)
def test_dup_copies_double_until_the_cap(engine):
    """As above with copies=4: rounds send 1, 2, 4, 4 copies per packet (all collide at step t0+1).

    Limit 12 (3 rounds): 2 + 4 + 8 = 14 discarded, 2^2 = 4 not above the cap: not capped.
    Limit 15: still 3 rounds (a 4th needs 16). Limit 16: the 4th sends 4 (2^3 = 8 > 4: capped),
    14 + 8 = 22 discarded. The scripted generator sees shapes (2,1), (2,2), (2,4), (2,4).
    """
    coll = PathCollection.from_node_paths(line(2), [[0, 1], [0, 1]])
    for limit in (12, 15):
        res = engine(coll, "duplication:copies=4", np.random.default_rng(0), step_limit=limit)
        assert (res.rounds, res.steps, res.discarded, res.copies_capped) == (3, 12, 14, False)
    rng = Script([[0]] * 2, [[0, 0]] * 2, [[0] * 4] * 2, [[0] * 4] * 2)
    res = engine(coll, "duplication:copies=4", rng, step_limit=16)
    assert (res.rounds, res.steps, res.discarded, res.copies_capped) == (4, 16, 22, True)
    assert rng.calls == [(0, 1, (2, 1)), (0, 1, (2, 2)), (0, 1, (2, 4)), (0, 1, (2, 4))]


@pytest.mark.parametrize("engine", ENGINES)
def test_dup_copies_arriving_twice_count_once(engine):
    """Line 0..3, B = 2; packet 0 on 2->3, packet 1 on 1->2->3, packet 2 on 0->1->2->3; D = 3.

    Round 1, delays (2, 1, 0): packet 2 crosses 0->1 at step 1; packets 1 and 2 cross 1->2 at step
    2 (two copies, B = 2: fine); all three want 2->3 at step 3: three > B, all discarded.
    Round 2 (t0 = 12, 2 copies each), delays A = (0, 1), packet 1 = (2, 2), packet 2 = (0, 2):
      packet 0: 2->3 at 13 and 14;
      packet 1: 1->2 at 15, 15; 2->3 at 16, 16;
      packet 2: copy 0: 0->1 at 13, 1->2 at 14, 2->3 at 15; copy 2: 15, 16, 17.
      Per link and step at most 2 copies, so every copy arrives. Deliveries: packet 0 at 13 (its
      second copy at 14 does not count again), packet 1 at 16, packet 2 at 15.
      Acks: packet 0 at 24 - 1 = 23 (its latest-leaving copy is acknowledged first), packets 1
      and 2 at 24 - 2 = 22. T = 23.
    Crossings: 3 in round 1, 2 + 4 + 6 = 12 in round 2.
    """
    net = line(4)
    coll = PathCollection.from_node_paths(net, [[2, 3], [1, 2, 3], [0, 1, 2, 3]])
    e01, e12, e23 = link(net, 0, 1), link(net, 1, 2), link(net, 2, 3)
    rng = Script([[2], [1], [0]], [[0, 1], [2, 2], [0, 2]])
    res = engine(coll, "duplication", rng, bandwidth=2, record_hops=True)
    assert rng.calls == [(0, 3, (3, 1)), (0, 3, (3, 2))]
    assert res.delivery.tolist() == [13, 16, 15]
    assert res.delivered == 3
    assert (res.status, res.rounds, res.steps, res.discarded, res.hops, res.finish, res.T, res.last_delivery) == \
           ("delivered", 2, 24, 3, 15, 23, 23, 16)
    assert res.copies_capped is False
    expect = [(1, e01, 2), (2, e12, 1), (2, e12, 2),
              (13, e23, 0), (14, e23, 0),
              (15, e12, 1), (15, e12, 1), (16, e23, 1), (16, e23, 1),
              (13, e01, 2), (14, e12, 2), (15, e23, 2), (15, e01, 2), (16, e12, 2), (17, e23, 2)]
    assert rows(res) == sorted(expect)


@pytest.mark.parametrize("engine", ENGINES)
def test_dup_copy_departures_double_per_round(engine):
    """A star: 39 packets from leaves 2..40 through the centre 0 to leaf 1 (D = 2), B = 8, cap 8.

    Each packet's first link (leaf -> centre) is its own, and it sends at most 8 = B copies, so
    every copy departs: round j shows active_j · 2^(j-1) crossings of first links. The shared
    link 0->1 passes at most B copies in each of its D = 2 forward-pass slots, so at most 16
    packets finish per round and a limit of 3 rounds (24 steps) is always used up.
    """
    net = from_networkx(nx.star_graph(40), "star")
    coll = PathCollection.from_node_paths(net, [[leaf, 0, 1] for leaf in range(2, 41)])
    res = engine(coll, "duplication:copies=8", np.random.default_rng(9), bandwidth=8, step_limit=24,
                 record_hops=True)
    assert res.rounds == 3 and res.steps == 24
    shared = link(net, 0, 1)
    for j in (1, 2, 3):
        t0 = (j - 1) * 8
        active = int(np.count_nonzero((res.delivery == -1) | (res.delivery > t0)))
        departures = sum(1 for t, e, _ in rows(res) if t0 < t <= t0 + 8 and e != shared)
        assert departures == active * 2 ** (j - 1), j
    assert active >= 39 - 32


# --- properties ----------------------------------------------------------------------------------


def check_bufferless(coll: PathCollection, res, protocol: str, B: int) -> None:
    """What every bufferless run must satisfy, whatever the draws."""
    D = max(coll.dilation, 1)
    R = 4 * D
    lengths = coll.lengths
    paths = [coll.links[coll.offsets[i]:coll.offsets[i + 1]].tolist() for i in range(coll.size)]
    trial = protocol.startswith("trial")
    assert res.steps == res.rounds * R
    assert (res.max_buffer, res.buffer) == (0, 0)
    assert res.hops == len(res.crossings)
    crossings = rows(res)
    assert crossings == sorted(crossings)
    assert (res.copies_capped is None) == trial
    np.testing.assert_array_equal(res.delivery == 0, lengths == 0)
    if res.status == "delivered":
        assert np.all(res.delivery >= 0)
        assert res.T == res.finish >= coll.dilation
        if coll.dilation:
            assert res.finish > (res.rounds - 1) * R  # the last round acknowledged someone
    elif res.status == "copy-limit":
        # the round after the last would have sent more copies than a round may hold
        assert not trial
        active = int(np.count_nonzero(res.delivery == -1))
        assert active * 2 ** res.rounds > 4096
    else:
        assert res.status == "step-limit"
    # Crossings happen in forward passes only, on links of the packet's path, at most B per link and step.
    assert all((t - 1) % R < 2 * D for t, _, _ in crossings)
    assert all(e in paths[p] for _, e, p in crossings)
    per_slot = Counter((t, e) for t, e, _ in crossings)
    assert max(per_slot.values(), default=0) <= B
    by_packet: dict[int, list[tuple[int, int]]] = {}
    for t, e, p in crossings:
        by_packet.setdefault(p, []).append((t, e))
    for p in range(coll.size):
        mine = by_packet.get(p, [])
        d = int(res.delivery[p])
        if d > 0:
            done = (d - 1) // R + 1  # the round that delivered it: nothing of it crosses afterwards
            assert all(t <= done * R for t, _ in mine)
            assert (d, paths[p][-1]) in mine
        if d == -1 and res.status == "delivered":
            raise AssertionError(p)
    if trial:
        # One attempt per active packet and round: in each round a packet crosses a prefix of
        # its path in consecutive steps; it is delivered in the one round where the prefix is
        # the whole path, else that attempt was discarded. Its ack is at 2·t0 + 4D + 1 - (first step).
        discarded = 0
        last_ack = 0
        for j in range(1, res.rounds + 1):
            t0 = (j - 1) * R
            for p in range(coll.size):
                d = int(res.delivery[p])
                if lengths[p] == 0 or (0 < d <= t0):
                    continue
                got = [(t, e) for t, e in by_packet.get(p, []) if t0 < t <= t0 + R]
                assert [e for _, e in got] == paths[p][:len(got)]
                assert all(t == got[0][0] + k for k, (t, _) in enumerate(got))
                if got:
                    assert t0 < got[0][0] <= t0 + D
                if len(got) == lengths[p]:
                    assert d == got[-1][0]
                    last_ack = max(last_ack, 2 * t0 + R + 1 - got[0][0])
                else:
                    discarded += 1
        assert res.discarded == discarded
        assert res.finish == last_ack
    elif coll.is_simple:
        # Every copy is delivered or discarded: copies sent = discarded + copies that arrived.
        cap = 8 if protocol == "duplication:copies=8" else (2 if protocol == "duplication:copies=2" else 2 ** 62)
        sent = 0
        for j in range(1, res.rounds + 1):
            t0 = (j - 1) * R
            active = int(np.count_nonzero((lengths > 0) & ((res.delivery == -1) | (res.delivery > t0))))
            sent += active * min(2 ** (j - 1), cap)
        arrived = sum(1 for t, e, p in crossings if e == paths[p][-1])
        assert sent == res.discarded + arrived


PROPERTY_NETWORKS = ["bf3-hrel2-valiant", "mesh4-hrel2-valiant-shortest", "torus4-perm-rshortest",
                     "hcube3-gossip-dor", "petersen-gossip-rshortest", "regular-hfun2-rshortest",
                     "torus4-fixedpoints-dor", "bf4-hrel3-dor"]
PROPERTY_PROTOCOLS = ["trial-and-failure", "trial-and-failure:redraw=no", "trial-and-failure:K=2",
                      "duplication", "duplication:copies=2", "duplication:copies=8"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", PROPERTY_PROTOCOLS)
def test_bufferless_properties(engine, protocol):
    """Seeded runs on several networks and bandwidths: every packet delivered exactly once (and
    nothing of it moves after its round), at most B crossings per link and step, crossings only
    in forward passes, T = finish >= D, steps = rounds·4D, discards accounted for."""
    # Doubling without a cap is stopped at 4096 copies a round (status copy-limit) to stay quick.
    run = replace(build_protocol(protocol), max_round_copies=4096) if protocol == "duplication" else protocol
    for k, scenario in enumerate(PROPERTY_NETWORKS):
        coll = build_case(scenario, None, 500 + k)
        for B in (1, 2, 3):
            limit = 4 * max(coll.dilation, 1) * 60
            res = engine(coll, run, np.random.default_rng(17 * k + B), bandwidth=B, step_limit=limit,
                         record_hops=True)
            check_bufferless(coll, res, protocol, B)


# --- the fast engine against the reference ------------------------------------------------------


def assert_same(fast, ref) -> None:
    assert (fast.status, fast.steps, fast.hops, fast.rounds, fast.discarded, fast.finish, fast.copies_capped) == \
           (ref.status, ref.steps, ref.hops, ref.rounds, ref.discarded, ref.finish, ref.copies_capped)
    assert (fast.max_buffer, fast.buffer, fast.T) == (ref.max_buffer, ref.buffer, ref.T)
    np.testing.assert_array_equal(fast.delivery, ref.delivery)
    assert fast.crossings is not None and ref.crossings is not None
    assert fast.crossings.dtype == ref.crossings.dtype == np.int64
    np.testing.assert_array_equal(fast.crossings, ref.crossings)


def _limit(coll: PathCollection, kind: int) -> int | None:
    """No limit, a limit of exactly one round, or one step short of two rounds."""
    R = 4 * max(coll.dilation, 1)
    return [None, None, R, 2 * R - 1][kind]


TF_VARIANTS = ["trial-and-failure", "trial-and-failure:redraw=no", "trial-and-failure:K=2,redraw=no",
               "trial-and-failure:K=3"]
DUP_VARIANTS = ["duplication", "duplication:copies=2", "duplication:copies=1", "duplication:copies=16"]

# Every scenario x B in {1, 2, 3} x 2 variants per protocol: 156 cases per protocol, with the
# variant and the step-limit kind rotating.
EQUIVALENCE_CASES = [
    pytest.param(sid, variants[(3 * s + B + r) % len(variants)], B, (s + B + 2 * r) % 4,
                 id=f"{sid}-{variants[(3 * s + B + r) % len(variants)]}-B{B}-lim{(s + B + 2 * r) % 4}")
    for variants in (TF_VARIANTS, DUP_VARIANTS)
    for s, (sid, *_) in enumerate(SCENARIOS)
    for B in (1, 2, 3)
    for r in range(2)
]


#: Copies a round of the default (uncapped) duplication may send in these cases: small enough for
#: the reference engine, and reached by some cases, so that both engines stop alike (copy-limit).
EQUIVALENCE_ROUND_COPIES = 1 << 12


def _as_run(protocol: str):
    """The protocol of an equivalence case (default duplication with the smaller copy budget)."""
    p = build_protocol(protocol)
    return replace(p, max_round_copies=EQUIVALENCE_ROUND_COPIES) if protocol == "duplication" else p


@pytest.mark.parametrize("scenario_id, protocol, B, limit_kind", EQUIVALENCE_CASES)
def test_fast_matches_reference_bufferless(scenario_id, protocol, B, limit_kind, tmp_path):
    seed = 900 + 13 * [s[0] for s in SCENARIOS].index(scenario_id) + B + limit_kind
    coll = build_case(scenario_id, tmp_path, seed)
    protocol = _as_run(protocol)
    kwargs = dict(bandwidth=B, step_limit=_limit(coll, limit_kind), record_hops=True)
    fast = simulate(coll, protocol, np.random.default_rng(seed), **kwargs)
    ref = simulate_reference(coll, protocol, np.random.default_rng(seed), **kwargs)
    assert_same(fast, ref)
    plain = simulate(coll, protocol, np.random.default_rng(seed), bandwidth=B, step_limit=kwargs["step_limit"])
    assert plain.crossings is None
    np.testing.assert_array_equal(plain.delivery, ref.delivery)
    assert (plain.finish, plain.discarded, plain.rounds) == (ref.finish, ref.discarded, ref.rounds)


def test_equivalence_cases_cover_both_outcomes():
    """The cases above include runs that finish, runs cut by the step limit, several rounds,
    duplication runs that reach the copy cap (copies=N) and default duplication runs stopped by
    the copy budget; 100+ cases per protocol."""
    assert sum(1 for c in EQUIVALENCE_CASES if c.values[1].startswith("trial")) >= 100
    assert sum(1 for c in EQUIVALENCE_CASES if c.values[1].startswith("dup")) >= 100
    seen = Counter()
    for c in EQUIVALENCE_CASES:
        scenario_id, protocol, B, limit_kind = c.values
        if scenario_id.startswith(("edgelist", "torus4-explicit", "mesh3-explicit")):
            continue  # these need files; the others are enough for the census
        seed = 900 + 13 * [s[0] for s in SCENARIOS].index(scenario_id) + B + limit_kind
        coll = build_case(scenario_id, None, seed)
        ref = simulate_reference(coll, _as_run(protocol), np.random.default_rng(seed), bandwidth=B,
                                 step_limit=_limit(coll, limit_kind))
        seen[ref.status] += 1
        seen["multi-round"] += ref.rounds > 1
        seen["capped"] += bool(ref.copies_capped)
        seen["discards"] += ref.discarded > 0
    assert all(seen[k] >= 10 for k in ("delivered", "step-limit", "multi-round", "capped", "discards")), seen
    assert seen["copy-limit"] >= 1, seen
