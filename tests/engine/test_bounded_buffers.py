"""Bounded link buffers (SPEC §2): a packet enters the buffer of the link it crosses only if the
buffer had room at the start of the step; a packet crossing its last link is delivered and needs
no room; a step that moves nothing while packets wait is a deadlock, reported, never a hang.

Hand-built cases (expected schedules worked out in comments) run on both engines; property tests
check the schedules both engines report against the model; and the fast engine must agree
exactly with the reference on well over 100 seeded cases.

Conventions as in ``test_semantics``: packet ``i`` follows path ``i``; all start at step 0; on a
line ``mesh:k=N,n=1`` nodes are 0 - 1 - 2 - ...; ``longest-in-system`` and ``random-rank:K=1``
give every packet the same key, so the lowest id wins.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from universal.engine import simulate, simulate_reference
from universal.networks import build_network
from universal.paths import PathCollection

from .test_equivalence import BUFFERED_PROTOCOLS, DELAYED_PROTOCOLS, SCENARIOS, build_case

ENGINES = [pytest.param(simulate, id="one"), pytest.param(simulate_reference, id="reference")]
BY_ID = ["longest-in-system", "random-rank:K=1", "growing-rank:K=1"]


def line(nodes: int):
    return build_network(f"mesh:k={nodes},n=1")


def ring(nodes: int):
    """A ring 0 - 1 - ... - (nodes-1) - 0 (the torus with one dimension)."""
    return build_network(f"torus:k={nodes},n=1")


def link(net, tail: int, head: int) -> int:
    return int(net.links_between(np.array([tail]), np.array([head]))[0])


def hop_lists(coll: PathCollection, flat: np.ndarray) -> list[list[int]]:
    return [flat[coll.offsets[i]:coll.offsets[i + 1]].tolist() for i in range(coll.size)]


# --- hand-built semantics ------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", BY_ID)
def test_room_freed_in_a_step_is_not_room_in_that_step(engine, protocol):
    """b = 1, B = 1, packets 0 and 1 both on 0 -> 1 -> 2 -> 3.

    step 1: link 0->1 takes packet 0 (lower id) into its buffer; packet 1 waits (B = 1).
    step 2: packet 0 crosses 1->2 (its buffer was empty). Packet 1 wants 0->1, whose buffer held
            packet 0 at the start of the step: no room, although packet 0 leaves it now.
    step 3: packet 0 crosses 2->3, its last link: delivered at 3. Packet 1 enters 0->1.
    step 4: packet 1 crosses 1->2 (emptied in step 3). step 5: delivered.
    With unbounded buffers packet 1 would follow one step behind: 2, 3, 4.
    """
    net = line(4)
    coll = PathCollection.from_node_paths(net, [[0, 1, 2, 3], [0, 1, 2, 3]])
    res = engine(coll, protocol, np.random.default_rng(0), buffer=1, record_hops=True)
    assert hop_lists(coll, res.hop_steps) == [[1, 2, 3], [3, 4, 5]]
    assert res.delivery.tolist() == [3, 5]
    assert (res.status, res.steps, res.max_buffer, res.hops, res.buffer) == ("delivered", 5, 1, 6, 1)
    assert res.deadlock_step is None and res.blocked is None and res.full_links is None
    free = engine(coll, protocol, np.random.default_rng(0), record_hops=True)
    assert hop_lists(coll, free.hop_steps) == [[1, 2, 3], [2, 3, 4]]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", BY_ID)
def test_crossing_the_last_link_needs_no_room(engine, protocol):
    """b = 1, B = 1 on the line 0..5: packet 0 on 2->3->4->5, packet 1 on 1->2->3->4, packet 2 on 1->2.

    step 1: packet 0 enters buffer 2->3; packet 1 (lower id) enters buffer 1->2; packet 2 waits
            (B = 1 on 1->2).
    step 2: packet 0 enters buffer 3->4 (empty). Packet 1 wants 2->3, not its last link, whose
            buffer held packet 0 at the start of the step: it stays in buffer 1->2. Packet 2 wants
            1->2, whose buffer is full (packet 1 sits there), but 1->2 is its last link: it
            crosses and is delivered at 2.
    step 3: packet 0 crosses 4->5, its last link: delivered at 3. Packet 1 enters buffer 2->3
            (emptied in step 2).
    step 4: packet 1 crosses 3->4, its last link: delivered at 4.
    Had the last crossing needed room, packet 2 would have waited until buffer 1->2 was empty at
    the start of a step (step 4).
    """
    net = line(6)
    coll = PathCollection.from_node_paths(net, [[2, 3, 4, 5], [1, 2, 3, 4], [1, 2]])
    res = engine(coll, protocol, np.random.default_rng(0), buffer=1, record_hops=True)
    assert hop_lists(coll, res.hop_steps) == [[1, 2, 3], [1, 3, 4], [2]]
    assert res.delivery.tolist() == [3, 4, 2]
    assert (res.status, res.steps, res.max_buffer, res.hops) == ("delivered", 4, 1, 7)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", BY_ID)
def test_bandwidth_two_buffer_one_lets_one_enter(engine, protocol):
    """B = 2, b = 1 on the line 0..2: packets 0 and 1 on 0->1->2, packet 2 on 0->1.

    step 1: link 0->1 may pass two packets, but its buffer has one place: packet 0 enters it;
            packet 1 would enter too, no room, it stays; packet 2 crosses its last link (no room
            needed) as the second crossing: delivered at 1.
    step 2: packet 0 crosses 1->2, delivered at 2; packet 1 finds buffer 0->1 full (packet 0 was
            there at the start of the step) and waits.
    step 3: packet 1 enters buffer 0->1; step 4: delivered.
    """
    net = line(3)
    coll = PathCollection.from_node_paths(net, [[0, 1, 2], [0, 1, 2], [0, 1]])
    res = engine(coll, protocol, np.random.default_rng(0), bandwidth=2, buffer=1, record_hops=True)
    assert hop_lists(coll, res.hop_steps) == [[1, 2], [3, 4], [1]]
    assert res.delivery.tolist() == [2, 4, 1]
    assert (res.status, res.steps, res.max_buffer, res.hops) == ("delivered", 4, 1, 5)
    # Only packets 0 and 1 (B = 2, b = 2): both enter in step 1 and go on together.
    both = PathCollection.from_node_paths(net, [[0, 1, 2], [0, 1, 2]])
    res = engine(both, protocol, np.random.default_rng(0), bandwidth=2, buffer=2, record_hops=True)
    assert hop_lists(both, res.hop_steps) == [[1, 2], [1, 2]]
    assert res.max_buffer == 2


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", BUFFERED_PROTOCOLS)
def test_ring_deadlock_is_reported(engine, protocol):
    """Ring of 4 nodes, b = 1: node i sends a packet 3 hops clockwise, i -> i+1 -> i+2 -> i+3.

    step 1: every packet is alone on its first link i -> i+1 and that buffer is empty: all four
            enter, and every clockwise buffer is now full.
    step 2: packet i wants i+1 -> i+2, whose buffer holds packet i+1; no packet is on its last
            link, so nothing moves: a deadlock at step 2, all four packets blocked, the four
            clockwise links full. Whatever the protocol, since no rule can make room.
    With b = 2 the same packets enter the second buffers in step 2 and are delivered at step 3.
    """
    net = ring(4)
    coll = PathCollection.from_node_paths(net, [[i, (i + 1) % 4, (i + 2) % 4, (i + 3) % 4] for i in range(4)])
    res = engine(coll, protocol, np.random.default_rng(5), buffer=1, record_hops=True)
    assert res.status == "deadlock" and res.deadlock
    assert res.steps == res.deadlock_step == 2
    assert res.T == 2
    assert res.blocked.tolist() == [0, 1, 2, 3]
    assert res.full_links.tolist() == sorted(link(net, i, (i + 1) % 4) for i in range(4))
    assert res.blocked.dtype == np.int64 and res.full_links.dtype == np.int64
    assert res.delivery.tolist() == [-1] * 4
    assert hop_lists(coll, res.hop_steps) == [[1, -1, -1]] * 4
    assert (res.hops, res.max_buffer, res.buffer) == (4, 1, 1)

    res = engine(coll, protocol, np.random.default_rng(5), buffer=2, record_hops=True)
    assert res.status == "delivered" and res.delivery.tolist() == [3] * 4
    assert res.max_buffer == 1  # each buffer holds one packet at a time


@pytest.mark.parametrize("engine", ENGINES)
def test_deadlock_lists_only_the_packets_still_waiting(engine):
    """The ring deadlock plus packet 4 on 0 -> 1 (one hop) and packet 5 with an empty path.

    step 1: link 0->1 has packets 0 and 4; by id (longest-in-system) packet 0 enters the buffer,
            packet 4 waits. The other three ring packets enter their first buffers.
    step 2: the ring packets are stuck as before; packet 4 crosses 0->1, its last link, although
            buffer 0->1 is full: delivered at 2. Something moved: no deadlock yet.
    step 3: nothing moves: deadlock at step 3; blocked 0..3 (not 4, delivered; not 5, delivered
            at step 0).
    """
    net = ring(4)
    paths = [[i, (i + 1) % 4, (i + 2) % 4, (i + 3) % 4] for i in range(4)] + [[0, 1], [2]]
    coll = PathCollection.from_node_paths(net, paths)
    res = engine(coll, "longest-in-system", np.random.default_rng(0), buffer=1, record_hops=True)
    assert (res.status, res.steps, res.deadlock_step) == ("deadlock", 3, 3)
    assert res.blocked.tolist() == [0, 1, 2, 3]
    assert res.full_links.tolist() == sorted(link(net, i, (i + 1) % 4) for i in range(4))
    assert res.delivery.tolist() == [-1, -1, -1, -1, 2, 0]


@pytest.mark.parametrize("engine", ENGINES)
def test_step_limit_before_deadlock(engine):
    """A step limit of 1 stops the ring run before the deadlocking step: status "step-limit"."""
    net = ring(4)
    coll = PathCollection.from_node_paths(net, [[i, (i + 1) % 4, (i + 2) % 4, (i + 3) % 4] for i in range(4)])
    res = engine(coll, "fifo", np.random.default_rng(0), buffer=1, step_limit=1)
    assert (res.status, res.steps, res.deadlock_step, res.blocked) == ("step-limit", 1, None, None)


@pytest.mark.parametrize("engine", ENGINES)
def test_buffer_must_be_positive(engine):
    coll = PathCollection.from_node_paths(line(3), [[0, 1, 2]])
    with pytest.raises(ValueError):
        engine(coll, "fifo", np.random.default_rng(0), buffer=0)


# --- properties --------------------------------------------------------------------------------


def ring_case(seed: int) -> PathCollection:
    """A loaded ring: 2k..4k packets, mostly clockwise, paths of k/2 .. k-1 hops (deadlocks are common)."""
    g = np.random.default_rng(seed)
    k = int(g.integers(4, 7))
    paths = []
    for _ in range(int(g.integers(2 * k, 4 * k))):
        source, length = int(g.integers(k)), int(g.integers(max(1, k // 2), k))
        direction = 1 if g.random() < 0.9 else -1
        paths.append([(source + direction * j) % k for j in range(length + 1)])
    return PathCollection.from_node_paths(ring(k), paths)


def check_bounded(coll: PathCollection, res, b: int, B: int) -> None:
    """The schedule in ``res.hop_steps`` obeys SPEC §2 with buffers of size b and bandwidth B."""
    links_of, steps_of = hop_lists(coll, coll.links), hop_lists(coll, res.hop_steps)
    end = res.steps
    assert res.buffer == b
    for i, steps in enumerate(steps_of):
        made = [s for s in steps if s >= 0]
        # Hops are made in path order, one per step, and not after the run ended.
        assert steps[:len(made)] == made and all(s == -1 for s in steps[len(made):])
        assert all(0 < x < y for x, y in zip(made, made[1:])) and all(1 <= s <= end for s in made)
        # Delivered exactly once, in the step of the last hop; else not delivered.
        expect = 0 if not steps else (made[-1] if len(made) == len(steps) else -1)
        assert res.delivery[i] == expect
    assert res.hops == sum(s >= 0 for steps in steps_of for s in steps)
    if res.status == "delivered":
        assert np.all(res.delivery >= 0)

    # Occupancy at the end of every step (buffers of links, not of injection).
    occupancy: Counter = Counter()
    for links, steps in zip(links_of, steps_of):
        for j in range(len(links) - 1):
            if steps[j] < 0:
                break
            leave = steps[j + 1] if steps[j + 1] >= 0 else end + 1
            for t in range(steps[j], leave):
                occupancy[(links[j], t)] += 1
    assert max(occupancy.values(), default=0) <= b
    assert res.max_buffer == max((c for (_, t), c in occupancy.items() if t <= end), default=0)

    # Per link and step: at most B cross, the buffer's entrants fit in the room at the start of
    # the step, and the link is used as much as the rule allows (min(B, last-hop contenders +
    # min(room, entering contenders))).
    crossed: Counter = Counter()
    entered: Counter = Counter()
    final_want: Counter = Counter()
    entering_want: Counter = Counter()
    for links, steps in zip(links_of, steps_of):
        for j, (e, s) in enumerate(zip(links, steps)):
            last = j == len(links) - 1
            if s >= 0:
                crossed[(e, s)] += 1
                entered[(e, s)] += not last
            if j > 0 and steps[j - 1] < 0:
                break
            since = steps[j - 1] if j > 0 else 0
            until = s if s >= 0 else end
            for t in range(since + 1, until + 1):
                (final_want if last else entering_want)[(e, t)] += 1
    assert max(crossed.values(), default=0) <= B
    for (e, t), count in entered.items():
        assert occupancy[(e, t - 1)] + count <= b, (e, t)
    for key in set(final_want) | set(entering_want):
        e, t = key
        room = b - occupancy[(e, t - 1)]
        assert crossed[key] == min(B, final_want[key] + min(room, entering_want[key])), key

    if res.status == "deadlock":
        assert res.steps == res.deadlock_step
        assert not any(t == end for (_, t) in crossed)
        waiting = [i for i in range(coll.size) if res.delivery[i] < 0]
        assert res.blocked.tolist() == waiting
        wanted = {links_of[i][steps_of[i].index(-1)] for i in waiting}
        assert res.full_links.tolist() == sorted(wanted)
        assert all(occupancy[(e, end - 1)] == b for e in wanted)
    else:
        assert res.deadlock_step is None and res.blocked is None and res.full_links is None


NETWORK_CASES = ["bf3-hrel2-valiant", "mesh4-hrel2-valiant-shortest", "torus4-hrel2-valiant",
                 "hcube3-gossip-dor", "petersen-gossip-rshortest", "regular-hfun2-rshortest"]


@st.composite
def bounded_instances(draw):
    if draw(st.booleans()):
        coll = ring_case(draw(st.integers(0, 10**6)))
    else:
        coll = build_case(draw(st.sampled_from(NETWORK_CASES)), None, draw(st.integers(0, 10**6)))
    return (coll, draw(st.sampled_from(BUFFERED_PROTOCOLS)), draw(st.integers(1, 3)), draw(st.integers(1, 3)),
            draw(st.integers(0, 2**32 - 1)))


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=60, deadline=None)
@given(bounded_instances())
def test_bounded_schedule_invariants(engine, instance):
    """No buffer over b, entrants only into room there was at the start of the step, at most B per
    link and step, links used as much as the rule allows, packets delivered exactly once, and a
    deadlock reported with exactly the waiting packets and the full links they need."""
    coll, protocol, b, B, seed = instance
    res = engine(coll, protocol, np.random.default_rng(seed), bandwidth=B, buffer=b, record_hops=True)
    check_bounded(coll, res, b, B)


# --- the fast engine against the reference -------------------------------------------------------


def assert_same(fast, ref) -> None:
    assert (fast.status, fast.steps, fast.max_buffer, fast.hops, fast.buffer, fast.deadlock_step) == \
           (ref.status, ref.steps, ref.max_buffer, ref.hops, ref.buffer, ref.deadlock_step)
    np.testing.assert_array_equal(fast.delivery, ref.delivery)
    np.testing.assert_array_equal(fast.hop_steps, ref.hop_steps)
    for field in ("blocked", "full_links"):
        a, r = getattr(fast, field), getattr(ref, field)
        assert (a is None) == (r is None), field
        if a is not None:
            assert a.dtype == r.dtype == np.int64
            np.testing.assert_array_equal(a, r)


# 7 protocols x b in {1, 2, 3} x B in {1, 2}, each on two of the equivalence scenarios (rotating
# through all of them): 84 cases; plus 63 loaded rings, where b = 1 and 2 often deadlock.
SCENARIO_CASES = [
    pytest.param(SCENARIOS[(2 * index + r) % len(SCENARIOS)][0], protocol, b, B,
                 id=f"{SCENARIOS[(2 * index + r) % len(SCENARIOS)][0]}-{protocol}-b{b}-B{B}")
    for index, (protocol, b, B) in enumerate((p, b, B) for p in BUFFERED_PROTOCOLS for b in (1, 2, 3) for B in (1, 2))
    for r in range(2)
]
RING_CASES = [(seed, BUFFERED_PROTOCOLS[seed % 7], 1 + seed % 3, 1 + (seed // 7) % 2) for seed in range(63)]


@pytest.mark.parametrize("scenario_id, protocol, b, B", SCENARIO_CASES)
def test_fast_matches_reference_bounded(scenario_id, protocol, b, B, tmp_path):
    seed = 300 + 7 * b + B + len(protocol)
    coll = build_case(scenario_id, tmp_path, seed)
    kwargs = dict(bandwidth=B, buffer=b, record_hops=True)
    fast = simulate(coll, protocol, np.random.default_rng(seed), **kwargs)
    ref = simulate_reference(coll, protocol, np.random.default_rng(seed), **kwargs)
    assert_same(fast, ref)


@pytest.mark.parametrize("seed, protocol, b, B", [pytest.param(*c, id=f"ring{c[0]}-{c[1]}-b{c[2]}-B{c[3]}")
                                                   for c in RING_CASES])
def test_fast_matches_reference_on_loaded_rings(seed, protocol, b, B):
    coll = ring_case(seed)
    kwargs = dict(bandwidth=B, buffer=b, record_hops=True)
    fast = simulate(coll, protocol, np.random.default_rng(seed), **kwargs)
    ref = simulate_reference(coll, protocol, np.random.default_rng(seed), **kwargs)
    assert_same(fast, ref)


@pytest.mark.parametrize("seed, protocol, b, B", [
    pytest.param(seed, protocol, 1 + seed % 3, 1 + seed % 2, id=f"ring{seed}-{protocol}-b{1 + seed % 3}-B{1 + seed % 2}")
    for protocol in DELAYED_PROTOCOLS for seed in range(8)])
def test_fast_matches_reference_with_delays_and_bounded_buffers(seed, protocol, b, B):
    """Random delays with bounded buffers: a step may move nothing while packets are still held
    back (not a deadlock); both engines must agree on that and on every later step."""
    coll = ring_case(seed)
    kwargs = dict(bandwidth=B, buffer=b, record_hops=True)
    fast = simulate(coll, protocol, np.random.default_rng(seed), **kwargs)
    ref = simulate_reference(coll, protocol, np.random.default_rng(seed), **kwargs)
    assert_same(fast, ref)


def test_ring_cases_exercise_deadlocks_and_deliveries():
    """The loaded rings are worth comparing on: some end in a deadlock, some deliver everything."""
    statuses = Counter(simulate_reference(ring_case(seed), protocol, np.random.default_rng(seed), bandwidth=B,
                                          buffer=b).status for seed, protocol, b, B in RING_CASES)
    assert statuses["deadlock"] >= 5 and statuses["delivered"] >= 5, statuses


@pytest.mark.parametrize("protocol", BUFFERED_PROTOCOLS)
def test_step_limits_agree_bounded(protocol):
    """Cut a bounded run short at several limits: both engines stop in the same state."""
    coll = ring_case(11)
    full = simulate_reference(coll, protocol, np.random.default_rng(3), buffer=2)
    for limit in {0, 1, full.steps // 2, max(full.steps - 1, 0), full.steps}:
        kwargs = dict(buffer=2, step_limit=limit, record_hops=True)
        fast = simulate(coll, protocol, np.random.default_rng(3), **kwargs)
        ref = simulate_reference(coll, protocol, np.random.default_rng(3), **kwargs)
        assert_same(fast, ref)
        assert ref.status == (full.status if limit >= full.steps else "step-limit")
