"""The one engine's open-loop front end routes a batch on paths fixed in advance exactly as its
batch front end does (issue 23): same paths, same contention rule (the deterministic ones, and
random and growing rank with the survey's ranks drawn as the batch front end draws them), every
packet delivered in the same step, with unbounded and bounded buffers and B = 1 or 2; a deadlock
of bounded buffers is a deadlock in both. In the ``compiled`` variant the batch front end runs on
the compiled kernel, a second implementation of the same step (the retired vectorised batch
engine was the oracle here before)."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine import simulate
from universal.networks import build_network
from universal.engine.batch import fixed_paths_spec
from universal.engine.runs import simulate as simulate_open
from universal.engine.measure import Measurement
from universal.engine.routes import router_for_paths
from universal.paths import route_paths
from universal.workloads import build_problem

#: batch protocol -> the open-loop priority of the same meaning
RULES = {"fifo": "fifo", "longest-in-system": "age", "farthest-to-go": "farthest-to-go",
         "nearest-to-go": "nearest-to-go", "random-rank": "random-rank", "growing-rank": "growing-rank"}

SEED = 5


def _open_loop_delivery(paths, protocol: str, bandwidth: int, buffer: int | None):
    # the survey's ranks, drawn first from the run's generator as the batch engine draws them
    spec = fixed_paths_spec(paths, protocol, RULES[protocol], np.random.default_rng(SEED))
    res = simulate_open(spec, bandwidth=bandwidth, buffer=buffer,
                        measurement=Measurement(steps=int(paths.lengths.sum()) + 1, until_delivered=True))
    delivered = res.records["delivered"]
    # batch numbering: packets first move in step 1; a packet with no hop to make arrives in step 0
    return np.where(paths.lengths == 0, 0, np.where(delivered >= 0, delivered + 1, -1)), res.status


@pytest.mark.parametrize("protocol", list(RULES))
@pytest.mark.parametrize("network, problem, system", [
    ("torus:k=5,n=2", "h-relation:h=3", "valiant"),
    ("butterfly:d=4", "h-relation:h=2", "valiant"),
    ("mesh:k=4,n=2", "permutation:transpose", "dimension-order"),
])
@pytest.mark.parametrize("bandwidth, buffer", [(1, None), (2, None), (1, 2), (2, 1)])
def test_open_loop_engine_equals_batch_engine_on_fixed_paths(protocol, network, problem, system, bandwidth, buffer):
    net = build_network(network)
    paths = route_paths(system, build_problem(problem, net, np.random.default_rng(3)), net,
                        np.random.default_rng(4))
    batch = simulate(paths, protocol, np.random.default_rng(SEED), bandwidth=bandwidth, buffer=buffer)
    delivered, status = _open_loop_delivery(paths, protocol, bandwidth, buffer)
    if batch.status == "deadlock":
        assert status == "deadlock"
        # up to the deadlock both moved the same packets: those delivered, in the same steps
        assert np.array_equal(batch.delivery, delivered)
    else:
        assert batch.status == "delivered" and status == "drained"
        assert np.array_equal(batch.delivery, delivered)


def test_the_fixed_paths_router_refuses_other_packets():
    net = build_network("torus:k=4,n=1")
    paths = route_paths("dimension-order", build_problem("permutation:tornado", net, np.random.default_rng(0)),
                        net, np.random.default_rng(0))
    router = router_for_paths(paths)
    with pytest.raises(ValueError, match="not those of the collection"):
        router.draw(paths.dests, paths.sources, np.random.default_rng(0))


@pytest.mark.parametrize("protocol", ["random-rank", "growing-rank"])
def test_the_open_loop_reference_reads_the_survey_ranks_too(protocol):
    """The one reference core, from its open-loop front end, with the batch's survey ranks."""
    from universal.engine.reference_runs import simulate_reference

    net = build_network("torus:k=4,n=2")
    paths = route_paths("valiant", build_problem("h-relation:h=2", net, np.random.default_rng(1)), net,
                        np.random.default_rng(2))
    batch = simulate(paths, protocol, np.random.default_rng(SEED), buffer=2)
    spec = fixed_paths_spec(paths, protocol, protocol, np.random.default_rng(SEED))
    run = simulate_reference(spec, int(paths.lengths.sum()) + 1, buffer=2, create_until=1)
    delivered = np.array(run["delivered"])
    assert np.array_equal(batch.delivery, np.where(paths.lengths == 0, 0, delivered + 1))


@pytest.mark.parametrize("protocol", list(RULES))
@pytest.mark.parametrize("bandwidth", [1, 2])
def test_the_edge_indexed_scratch_changes_nothing(protocol, bandwidth, monkeypatch):
    """On a leveled network (no edge used both ways) a large batch finds its winners by edge; forced
    on a small one, two batched runs deliver and cross exactly as with the scratch by link."""
    from universal.engine import runs

    net = build_network("butterfly:d=4")
    paths = route_paths("valiant", build_problem("h-relation:h=2", net, np.random.default_rng(3)), net,
                        np.random.default_rng(4))
    seen = []

    def run(least):
        monkeypatch.setattr(runs, "EDGE_SPACE_MIN", least)
        specs = [fixed_paths_spec(paths, protocol, RULES[protocol], np.random.default_rng(s)) for s in (SEED, 6)]
        batch = runs._Batch(specs, bandwidth, None, Measurement(steps=10**4, until_delivered=True,
                                                                record_crossings=True))
        res = batch.run()
        seen.append(batch.shift)
        return [r.records for r in res]

    by_link, by_edge = run(1 << 40), run(0)
    assert seen == [0, 1]
    for a, b in zip(by_link, by_edge):
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
