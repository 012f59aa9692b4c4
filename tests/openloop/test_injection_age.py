"""The ``injection-age`` priority (:mod:`universal.engine.priorities`): the GOAL paper's age since
injection (Singh, Dally, Gupta & Towles, 2003, §5.1). Pinned by a count known by hand, and the
engine against its plain reference on every routing kind, bounded buffers, VCs, CHAOS and both
source-queue models, with the same seed."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine.reference_runs import simulate_reference
from universal.engine.workload import OfferedTraffic
from universal.openloop import Measurement, RunSpec, build_injection, build_router, simulate_batch

from tests.openloop.helpers import assert_run_equals_reference, network

STEPS = 150


def _merge(priority: str) -> RunSpec:
    """Nodes 0 and 1 of the 8-node ring each create one packet per step (bernoulli at 1.0) for
    node 2: node 0's packets cross node 1 and contend there with node 1's own for link 1 -> 2."""
    net = network("torus:k=8,n=1")
    matrix = np.zeros((net.num_nodes, net.num_nodes))
    matrix[0, 2] = matrix[1, 2] = 1.0
    rowsum = matrix.sum(axis=1)
    cum = np.cumsum(matrix, axis=1) / np.where(rowsum > 0, rowsum, 1)[:, None]
    cum[:, -1] = 1.0
    return RunSpec(OfferedTraffic("0,1->2", rowsum, None, cum, matrix), build_router("dor", net),
                   build_injection("bernoulli"), 1.0, seed=0, priority=priority)


def test_an_injected_packet_beats_an_older_one_still_in_its_source_queue():
    """Packet ids: 2t node 0's packet of step t, 2t + 1 node 1's. Under injection-age node 0's
    packet of step t, injected in step t, beats every queued packet of node 1 at link 1 -> 2 in
    step t + 1, however much older (in step 3 node 0's packet 4, created in step 2, beats node 1's
    packet 3, created in step 1): node 1 sends its first packet (step 0, link free) and no other.
    Under age (from creation) packet 3 is the older and goes first; the link alternates."""
    steps = 60
    got = simulate_batch([_merge("injection-age")], measurement=Measurement(steps=steps))[0].records["delivered"]
    assert got[0::2].tolist() == [t + 1 for t in range(steps - 1)] + [-1]
    assert got[1::2].tolist() == [0] + [-1] * (steps - 1)
    assert got.tolist() == simulate_reference(_merge("injection-age"), steps)["delivered"]
    age = simulate_batch([_merge("age")], measurement=Measurement(steps=steps))[0].records["delivered"]
    assert age[3] == 3 and age[4] == 4
    assert (age[1::2] >= 0).sum() > steps // 3


CASES = [
    # (network, routing, traffic, rate, injection, priority, B, b, V)
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "injection-age", 1, None, 1),
    ("torus:k=4,n=2", "dor", "tornado", 1.5, "poisson", "injection-age", 2, None, 1),
    ("torus:k=4,n=2", "val", "uniform", 0.9, "bernoulli", "injection-age", 1, 1, 4),
    ("torus:k=4,n=2", "val", "bitcomp", 0.9, "poisson", "injection-age", 2, 2, 4),
    ("torus:k=4,n=2", "rlb", "tornado", 0.9, "bernoulli", "injection-age", 1, 1, 6),
    ("torus:k=4,n=2", "min-adaptive", "uniform", 0.9, "bernoulli", "injection-age", 1, None, 1),
    ("torus:k=4,n=2", "min-adaptive", "bitcomp", 0.9, "bernoulli", "injection-age", 1, 1, 3),
    ("torus:k=4,n=2", "goal", "tornado", 0.9, "poisson", "injection-age", 2, 1, 3),
    ("torus:k=4,n=2", "goal", "bitcomp", 0.9, "bernoulli", "injection-age", 1, 2, 3),
    ("torus:k=4,n=2", "ugal", "bitcomp", 0.9, "bernoulli", "injection-age", 1, 1, 6),
    ("torus:k=4,n=2", "chaos:queue=2", "bitcomp", 0.9, "bernoulli", "injection-age", 1, 1, 1),
    ("dragonfly:p=1,a=4,h=1", "ugal-l", "wc-group", 0.6, "bernoulli", "injection-age", 1, 4, 1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_injection_age_equals_reference(case):
    assert_run_equals_reference(case, STEPS, 100)


@pytest.mark.parametrize("case", [CASES[2], CASES[6], CASES[9]], ids=lambda c: "-".join(str(x) for x in c))
def test_injection_age_with_a_fifo_source_equals_reference(case):
    assert_run_equals_reference(case, STEPS, 100, source_queue="fifo")


def test_injection_age_is_not_age_beyond_saturation():
    """Not a no-op: VAL with one-place VCs at offered 1.0 delivers other packets in other steps."""
    net = network("torus:k=4,n=2")

    def run(priority: str) -> np.ndarray:
        s = RunSpec(_uniform(net), build_router("val", net), build_injection("bernoulli"), 1.0, seed=3,
                    priority=priority)
        return simulate_batch([s], buffer=1, vcs=4, measurement=Measurement(steps=STEPS))[0].records["delivered"]

    assert run("age").tolist() != run("injection-age").tolist()


def _uniform(net):
    from universal.openloop.workload import offered_traffic

    return offered_traffic(net, "uniform")


def test_the_compiled_kernels_leave_injection_age_to_numpy():
    """Their dispatch checks the priority: age goes to a kernel, injection-age stays in numpy."""
    from tests.openloop.helpers import spec
    from universal.engine.runs import kernel_supports

    for routing in ("dor", "goal"):
        assert kernel_supports([spec("torus:k=4,n=2", routing, "uniform", 0.5)], None, Measurement())
        assert not kernel_supports([spec("torus:k=4,n=2", routing, "uniform", 0.5, priority="injection-age")],
                                   None, Measurement())
