"""The fast open-loop engine against the plain reference engine: with one seed, every packet is
delivered in the same step, for every routing kind, injection process, priority rule,
bandwidth and bounded buffers (deadlock included)."""

from __future__ import annotations

import numpy as np
import pytest

from universal.openloop import Measurement, simulate_batch
from universal.engine.reference_runs import simulate_reference

from .helpers import spec

STEPS = 120

CASES = [
    # (network, routing, traffic, rate, injection, priority, B, b)
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "age", 1, None),
    ("torus:k=4,n=2", "val", "bitcomp", 0.5, "bernoulli", "age", 1, None),
    ("torus:k=5,n=2", "romm", "tornado", 0.9, "bernoulli", "age", 1, None),
    ("torus:k=4,n=2", "rlb", "uniform", 0.9, "bernoulli", "age", 1, None),
    ("torus:k=4,n=2", "ival", "transpose", 0.9, "bernoulli", "age", 1, None),
    ("torus:k=4,n=2", "min-adaptive", "uniform", 0.9, "bernoulli", "age", 1, None),
    ("torus:k=4,n=2", "goal", "tornado", 0.9, "bernoulli", "age", 1, None),
    ("torus:k=4,n=2", "ugal", "bitcomp", 0.9, "bernoulli", "age", 1, None),
    ("torus:k=4,n=2", "ugal:threshold=3", "uniform", 0.9, "poisson", "age", 1, None),
    ("mesh:k=4,n=2", "shortest", "uniform", 0.5, "bernoulli", "age", 1, None),
    ("hypercube:d=4", "valiant", "bitrev", 0.5, "bernoulli", "age", 1, None),
    ("torus:k=4,n=2", "dor", "uniform", 1.5, "poisson", "age", 1, None),
    ("torus:k=4,n=2", "goal", "uniform", 0.5, "on-off:burst=4", "age", 1, None),
    ("torus:k=4,n=2", "val", "uniform", 0.6, "bernoulli", "fifo", 1, None),
    ("torus:k=4,n=2", "goal", "uniform", 0.6, "bernoulli", "random", 1, None),
    ("torus:k=4,n=2", "min-adaptive", "neighbor", 0.6, "bernoulli", "farthest-to-go", 1, None),
    ("torus:k=4,n=2", "dor", "uniform", 2.5, "poisson", "age", 2, None),
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "age", 1, 1),
    ("torus:k=4,n=2", "goal", "uniform", 0.9, "bernoulli", "age", 1, 1),
    ("torus:k=4,n=2", "min-adaptive", "uniform", 0.9, "bernoulli", "fifo", 2, 2),
    ("torus:k=5,n=2", "ugal", "tornado", 0.6, "bernoulli", "age", 1, 2),      # q counts used credits, one VC
    # networks with terminals (issue 26): the oblivious routings, and UGAL-L/G's choice between
    # two paths (UGAL-L reads the used credits, so one case with bounded buffers too)
    ("dragonfly:p=1,a=4,h=1", "minimal", "wc-group", 0.5, "bernoulli", "age", 1, None),
    ("dragonfly:p=1,a=4,h=1", "valiant", "uniform", 0.6, "bernoulli", "age", 1, None),
    ("dragonfly:p=1,a=4,h=1", "ugal-l", "wc-group", 0.6, "bernoulli", "age", 1, None),
    ("dragonfly:p=1,a=4,h=1", "ugal-g", "wc-group", 0.6, "poisson", "farthest-to-go", 1, None),
    ("dragonfly:p=1,a=4,h=1", "ugal-l:threshold=2", "uniform", 0.9, "bernoulli", "age", 1, 4),
    ("fattree:k=2,n=3", "ugal-g", "bitcomp", 0.8, "bernoulli", "fifo", 2, None),
    # ugal on networks with terminals: the queues out of the source's router, used credits counted
    ("dragonfly:p=1,a=4,h=1", "ugal", "wc-group", 0.6, "bernoulli", "age", 1, None),
    ("dragonfly:p=1,a=4,h=1", "ugal", "wc-group", 0.9, "poisson", "age", 1, 2),
    # its legs the dragonfly's minimal paths (fewest global links; the reference finds them by
    # Dijkstra), its intermediate where the packet enters another group; hops left by those legs
    ("dragonfly:p=1,a=4,h=1", "ugal", "uniform", 0.9, "bernoulli", "farthest-to-go", 1, None),
    # (seed 7 sends 22-65% of the dragonfly's, hyperx's and flatfly's decisions the Valiant way, 5% of the fat tree's)
    ("fattree:k=2,n=3", "ugal", "uniform", 1.5, "poisson", "age", 1, None),
    ("hyperx:S=4,4,T=1", "ugal:threshold=1", "bitcomp", 0.9, "bernoulli", "fifo", 1, 2),
    ("flatfly:k=4,n=2,c=2", "ugal", "bitrev", 1.5, "poisson", "age", 2, 2),
    # the survey's protocols as open-loop priorities, unbounded and bounded buffers
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "random-rank", 1, None),
    ("torus:k=4,n=2", "val", "uniform", 0.6, "bernoulli", "growing-rank", 1, None),
    ("torus:k=4,n=2", "ugal", "bitcomp", 0.9, "bernoulli", "growing-rank", 1, None),
    ("mesh:k=4,n=2", "shortest", "uniform", 0.5, "bernoulli", "growing-rank", 2, None),
    ("torus:k=4,n=2", "romm", "uniform", 0.9, "bernoulli", "nearest-to-go", 1, None),
    ("torus:k=4,n=2", "goal", "tornado", 0.9, "bernoulli", "nearest-to-go", 1, None),
    ("torus:k=4,n=2", "val", "bitcomp", 0.5, "bernoulli", "longest-in-system", 1, None),
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "random-rank", 1, 2),
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "growing-rank", 1, 2),
    ("torus:k=4,n=2", "min-adaptive", "uniform", 0.9, "bernoulli", "growing-rank", 2, 2),
    ("torus:k=4,n=2", "dor", "tornado", 0.9, "bernoulli", "nearest-to-go", 1, 1),
    ("torus:k=4,n=2", "min-adaptive", "uniform", 0.9, "bernoulli", "longest-in-system", 1, 2),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_same_delivery_step_for_every_packet(case):
    net, routing, traffic, rate, injection, priority, B, b = case
    s = spec(net, routing, traffic, rate, injection=injection, priority=priority, seed=7)
    fast = simulate_batch([s], bandwidth=B, buffer=b, measurement=Measurement(steps=STEPS))[0]
    ref = simulate_reference(s, STEPS, bandwidth=B, buffer=b)
    assert fast.status == ref["status"]
    delivered = fast.records["delivered"]
    assert len(delivered) > 50 and (delivered >= 0).sum() > 25
    assert delivered.tolist() == ref["delivered"]


def test_bounded_buffers_deadlock_is_reported_not_a_hang():
    s = spec("torus:k=4,n=2", "goal", "uniform", 0.9, seed=7)
    fast = simulate_batch([s], buffer=1, measurement=Measurement(steps=STEPS))[0]
    assert fast.status == "deadlock"


def test_a_run_does_not_depend_on_the_runs_batched_with_it():
    alone = [simulate_batch([spec("torus:k=4,n=2", r, "uniform", 0.7, seed=s)],
                            measurement=Measurement(steps=STEPS))[0] for r, s in (("dor", 1), ("goal", 2), ("ugal", 3))]
    together = simulate_batch([spec("torus:k=4,n=2", r, "uniform", 0.7, seed=s) for r, s in
                               (("dor", 1), ("goal", 2), ("ugal", 3))], measurement=Measurement(steps=STEPS))
    for a, b in zip(alone, together):
        assert np.array_equal(a.records["delivered"], b.records["delivered"])
