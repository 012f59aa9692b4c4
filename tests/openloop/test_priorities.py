"""The survey's protocols as open-loop priorities (SPEC §6, §11; issue 23): who wins a link when
two packets contend, worked by hand; ``random`` is ``random-rank``; the bufferless protocols are
refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest

from universal.errors import UserError
from universal.openloop import Measurement, RunSpec, build_injection, build_router, simulate_batch
from universal.engine.creation import InjectionState, draw_chunk
from universal.engine.priorities import PRIORITIES, RANK_RANGE, check_priority, rank_span
from universal.engine.reference_runs import simulate_reference
from universal.engine.workload import OfferedTraffic

from .helpers import network


def _two_senders(priority: str, seed: int) -> RunSpec:
    """On the 8-ring, node 0 sends to node 3 and node 1 to node 2, one packet each per step (DOR).

    Step 0 creates packet 0 (0 -> 3) and packet 1 (1 -> 2); both cross their first link. Step 1
    creates packets 2 and 3 (again 0 -> 3 and 1 -> 2), and packet 3, new at node 1, contends for
    link 1 -> 2 with packet 0, which has just arrived there: packet 0 is older, has made one hop
    and has two to go; packet 3 has made none and has one to go. Nothing else wants that link.
    """
    net = network("torus:k=8,n=1")
    N = net.num_nodes
    perm = np.full(N, -1, dtype=np.int64)
    perm[0], perm[1] = 3, 2
    rowsum = (perm >= 0).astype(float)
    matrix = np.zeros((N, N))
    matrix[[0, 1], [3, 2]] = 1.0
    traffic = OfferedTraffic("two-senders", rowsum, perm, None, matrix)
    return RunSpec(traffic, build_router("dor", net), build_injection("bernoulli"), 1.0, seed=seed,
                   priority=priority)


def _newcomer_wins(priority: str, seed: int = 0) -> bool:
    """Whether packet 3 wins link 1 -> 2 in step 1: in a 2-step run it is then delivered in step 1."""
    s = _two_senders(priority, seed)
    fast = simulate_batch([s], measurement=Measurement(steps=2))[0].records["delivered"]
    ref = simulate_reference(s, 2)["delivered"]
    assert fast.tolist() == ref and fast[1] == 0          # packet 1 crossed alone in step 0
    return bool(fast[3] == 1)


def _ranks(seed: int) -> tuple[int, int]:
    """The ranks of packets 0 and 3 (drawn at creation, as the engines draw them)."""
    c = draw_chunk(_two_senders("random-rank", seed), InjectionState(), 0, np.random.default_rng(seed))
    assert c.step[:4].tolist() == [0, 0, 1, 1] and c.src[:4].tolist() == [0, 1, 0, 1]
    return int(c.rank[0]), int(c.rank[3])


@pytest.mark.parametrize("priority, newcomer", [
    ("age", False),                 # packet 0 was created first
    ("longest-in-system", False),   # the same rule: packet 0 has been in the system longer
    ("fifo", False),                # both reached node 1 in step 1; the tie goes to the older
    ("farthest-to-go", False),      # packet 0 has two hops to go, packet 3 one
    ("nearest-to-go", True),        # packet 3 has one hop to go, packet 0 two
    ("injection-age", False),       # packet 0 was injected in step 0; packet 3 is still in its queue
])
def test_greedy_rules_two_packets_contending(priority, newcomer):
    assert _newcomer_wins(priority) is newcomer


def _seed_where(predicate) -> int:
    return next(seed for seed in range(200) if predicate(*_ranks(seed)))


def test_random_rank_the_lower_rank_wins_whatever_the_age():
    younger_lower = _seed_where(lambda r0, r3: r3 < r0)
    older_lower = _seed_where(lambda r0, r3: r0 < r3)
    assert _newcomer_wins("random-rank", younger_lower)
    assert not _newcomer_wins("random-rank", older_lower)


def test_growing_rank_one_hop_adds_k_over_d_to_the_rank():
    # D = 4 on the 8-ring; packet 0 has crossed one link, so its key is rank0 + K/4 against
    # packet 3's rank3: packet 3 wins while rank3 < rank0 + K/4, although rank0 < rank3
    assert rank_span(network("torus:k=8,n=1")) == 4
    close = _seed_where(lambda r0, r3: r0 < r3 < r0 + RANK_RANGE // 4)
    far = _seed_where(lambda r0, r3: r3 > r0 + RANK_RANGE // 4)
    assert not _newcomer_wins("random-rank", close)       # random rank: the lower rank, packet 0
    assert _newcomer_wins("growing-rank", close)          # growing rank: packet 0's rank grew past
    assert not _newcomer_wins("growing-rank", far)        # ... but not past this one


def test_random_is_random_rank():
    for routing in ("dor", "goal"):
        net = network("torus:k=4,n=2")
        from .helpers import spec
        runs = [spec("torus:k=4,n=2", routing, "uniform", 0.8, priority=p, seed=3) for p in ("random", "random-rank")]
        a, b = (simulate_batch([s], measurement=Measurement(steps=150))[0].records["delivered"] for s in runs)
        assert net.num_nodes == 16 and np.array_equal(a, b)


def test_every_priority_is_named_and_bufferless_protocols_are_refused_with_the_reason():
    assert set(PRIORITIES) >= {"age", "fifo", "random", "random-rank", "growing-rank", "farthest-to-go",
                               "nearest-to-go", "longest-in-system"}
    for name in ("trial-and-failure", "duplication"):
        with pytest.raises(UserError, match="no open-loop form: it is bufferless"):
            check_priority(name)
    with pytest.raises(UserError, match="unknown priority 'oldest'"):
        check_priority("oldest")


def test_rank_span_is_the_diameter():
    assert [rank_span(network(n)) for n in ("torus:k=5,n=2", "hypercube:d=4", "mesh:k=3,n=3")] == [4, 4, 6]
