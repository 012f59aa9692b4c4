"""The FIFO source queue (``source_queue="fifo"``, :mod:`universal.engine.source_queue`): a node's
source queue as the GOAL paper's input-queued router has it, whose first B packets alone are
routed and leave in order. Pinned by a count known by hand, and the engine against its plain
reference on every routing kind, VCs, CHAOS and B = 2 (where the in-order rule has work to do)."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine.reference_runs import simulate_reference
from universal.engine.workload import OfferedTraffic
from universal.errors import UserError
from universal.openloop import Measurement, RunSpec, build_injection, build_router, simulate_batch

from tests.openloop.helpers import assert_run_equals_reference, network, spec

STEPS = 150


def _to_neighbours() -> RunSpec:
    """Node 0 of the 4-ary 2-cube sends 12 packets per step (poisson), each to one of its four
    neighbours: a one-hop flow on each of its four links, backlogged from the first steps."""
    net = network("torus:k=4,n=2")
    n = net.num_nodes
    matrix = np.zeros((n, n))
    neighbours = np.unique(net.link_head[net.link_tail == 0])
    assert len(neighbours) == 4
    matrix[0, neighbours] = 1.0 / len(neighbours)
    rowsum = matrix.sum(axis=1)
    cum = np.cumsum(matrix, axis=1) / np.where(rowsum > 0, rowsum, 1)[:, None]
    cum[:, -1] = 1.0
    return RunSpec(OfferedTraffic("0->neighbours", rowsum, None, cum, matrix), build_router("dor", net),
                   build_injection("poisson"), 12.0, seed=0)


# (B, b, V, source queue, packets delivered per step once backlogged): with every queued packet
# contending, each of the four links carries B per step; a FIFO lets B leave per step in all,
# whatever their links (every one-hop packet finds its link free, no buffer to enter)
PER_STEP = [(1, None, 1, "all", 4), (1, 1, 2, "all", 4), (1, None, 1, "fifo", 1), (1, 1, 2, "fifo", 1),
            (2, None, 1, "all", 8), (2, None, 1, "fifo", 2), (2, 1, 2, "fifo", 2)]


@pytest.mark.parametrize("B,b,V,queue,rate", PER_STEP, ids=str)
def test_a_fifo_source_lets_b_packets_leave_per_step_and_all_lets_every_link_take_one(B, b, V, queue, rate):
    s = _to_neighbours()
    got = simulate_batch([s], bandwidth=B, buffer=b, vcs=V, measurement=Measurement(steps=200),
                         source_queue=queue)[0].records["delivered"]
    assert ((got >= 50) & (got < 200)).sum() == rate * 150
    if queue == "fifo":         # in creation order: packet i leaves in step i // B
        assert got[got >= 0].tolist() == [i // B for i in range((got >= 0).sum())]
    assert got.tolist() == simulate_reference(s, 200, bandwidth=B, buffer=b, vcs=V, source_queue=queue)["delivered"]


CASES = [
    # (network, routing, traffic, rate, injection, priority, B, b, V)
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "age", 1, None, 1),
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "age", 2, None, 1),
    ("torus:k=4,n=2", "val", "uniform", 0.9, "bernoulli", "age", 1, 1, 4),
    ("torus:k=4,n=2", "val", "bitcomp", 0.9, "poisson", "age", 2, 2, 4),
    ("torus:k=4,n=2", "rlb", "tornado", 0.9, "bernoulli", "age", 1, 1, 6),
    ("torus:k=4,n=2", "min-adaptive", "uniform", 0.9, "bernoulli", "age", 1, None, 1),
    ("torus:k=4,n=2", "min-adaptive", "bitcomp", 0.9, "bernoulli", "age", 1, 1, 3),
    ("torus:k=4,n=2", "goal", "tornado", 0.9, "poisson", "age", 2, 1, 3),
    ("torus:k=4,n=2", "ugal", "bitcomp", 0.9, "bernoulli", "age", 1, 1, 6),
    # UGAL's q counts the used credits with bounded buffers (4-ary tornado is one hop: no choice)
    ("torus:k=5,n=2", "ugal", "tornado", 1.0, "poisson", "age", 1, 1, 6),
    ("torus:k=5,n=2", "ugal", "tornado", 1.0, "bernoulli", "age", 1, 2, 6),
    ("torus:k=5,n=2", "ugal", "uniform", 1.0, "poisson", "age", 1, 2, 6),
    ("torus:k=4,n=2", "romm", "uniform", 1.5, "poisson", "farthest-to-go", 2, 2, 6),
    ("torus:k=4,n=2", "chaos:queue=2", "bitcomp", 0.9, "bernoulli", "age", 1, 1, 1),
    ("torus:k=4,n=2", "chaos:queue=1", "uniform", 1.5, "poisson", "age", 2, 2, 1),
    ("dragonfly:p=1,a=4,h=1", "ugal-l", "wc-group", 0.6, "bernoulli", "age", 1, 4, 1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_fifo_source_queue_equals_reference(case):
    assert_run_equals_reference(case, STEPS, 100, source_queue="fifo")


def test_fifo_and_all_differ_beyond_saturation():
    """Not a no-op: VAL with one-place VCs at twice capacity delivers other packets in other steps."""
    s = spec("torus:k=4,n=2", "val", "uniform", 1.0)
    runs = [simulate_batch([s], buffer=1, vcs=4, measurement=Measurement(steps=STEPS), source_queue=q)[0]
            for q in ("all", "fifo")]
    assert runs[0].records["delivered"].tolist() != runs[1].records["delivered"].tolist()


def test_unknown_source_queue_is_refused():
    with pytest.raises(UserError, match="unknown source queue 'lifo'"):
        simulate_batch([spec("torus:k=4,n=2", "dor", "uniform", 0.5)], source_queue="lifo")


def test_the_compiled_kernel_does_not_take_a_fifo_run(monkeypatch):
    """Forced on, the compiled open-loop kernel (which has no FIFO sources) must leave a FIFO run to
    the numpy engine: the run still equals the reference."""
    pytest.importorskip("numba", reason="the compiled open-loop kernel needs numba")
    from universal.engine import runs

    monkeypatch.setattr(runs, "COMPILED", True)
    s = spec("torus:k=4,n=2", "dor", "uniform", 1.0, injection="poisson", seed=5)
    fast = simulate_batch([s], measurement=Measurement(steps=STEPS), source_queue="fifo")[0]
    assert fast.records["delivered"].tolist() == simulate_reference(s, STEPS, source_queue="fifo")["delivered"]


def test_a_batch_with_fifo_sources_sends_one_packet_per_node_and_step():
    """4 packets per node of the 8-node ring, 2 to each neighbour: with every packet contending
    each node's two links carry one each per step, T = 2; a FIFO source lets one leave per step,
    T = 4 (hand count), on paths fixed in advance and adaptively, the fast engine equal to its
    reference."""
    from universal.engine.batch import route_batch, simulate

    net = network("torus:k=8,n=1")
    src = np.repeat(np.arange(8), 4)
    dst = (src + np.tile([1, -1, 1, -1], 8)) % 8
    for queue, T in (("all", 2), ("fifo", 4)):
        runs = [route_batch(net, src, dst, "min-adaptive", "fifo", engine=e, source_queue=queue)
                for e in ("fast", "reference")]
        assert runs[0].result.T == T
        assert runs[0].result.delivery.tolist() == runs[1].result.delivery.tolist()
        fixed = simulate(runs[0].paths, "random-rank", np.random.default_rng(0), source_queue=queue)
        assert fixed.T == T
    with pytest.raises(UserError, match="bufferless"):
        simulate(runs[0].paths, "trial-and-failure", np.random.default_rng(0), source_queue="fifo")


@pytest.mark.parametrize("value,message", [('"fifo"', None), ('"lifo"', "unknown source queue 'lifo'"),
                                           ("1", "'source_queue' must be a name")])
def test_a_scenario_names_its_source_queue(tmp_path, value, message):
    from universal.scenario import load_scenario

    f = tmp_path / "sq.toml"
    f.write_text('kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\ntraffic = "uniform"\n'
                 f'loads = [0.2]\nsource_queue = {value}\n')
    if message is None:
        assert load_scenario(str(f)).openloop.source_queue == "fifo"
        assert load_scenario(str(f)).openloop.settings()["source_queue"] == "fifo"
    else:
        with pytest.raises(UserError, match=message):
            load_scenario(str(f))


def test_a_bad_source_queue_on_the_command_line_is_one_error_line():
    import subprocess
    import sys

    for command, value in (("openloop --network torus:k=4,n=2 --loads 0.2", "lifo"), ("route --network "
                           "torus:k=4,n=2 --problem permutation:random", "lifo"),
                           ("openloop --network torus:k=4,n=2 --loads 0.2", "fifo:w=0")):
        out = subprocess.run([sys.executable, "-m", "universal", *command.split(), "--source-queue", value],
                             capture_output=True, text=True)
        assert out.returncode == 2 and out.stdout == ""
        assert out.stderr.count("\n") <= 1 and out.stderr.startswith("error: argument --source-queue")


def test_with_fifo_sources_chaos_still_starves_its_least_served_source_and_goal_does_not():
    """GOAL §5.5, Figure 13, with the paper's source queue, on the small case of
    ``tests/engine/test_chaos.py`` (6-ary 2-cube, bit complement, 2-deep VCs, 3 VCs' budget) at
    0.9 packets per node per step, beyond both routings' saturation: CHAOS's least served source
    gets under half its mean (0.42 measured), GOAL's keeps 0.9 of it and GOAL's mean holds
    (0.634; with the engine's default source queue 0.518, so this fails if the FIFO is ignored)."""
    beyond = Measurement(window=300, warmup_min=100, warmup_max=1000, drain=False)
    got = {}
    for routing in ("chaos", "goal"):
        res, = simulate_batch([spec("torus:k=6,n=2", routing, "bitcomp", 0.9, seed=2)], buffer=2, vcs=3,
                              measurement=beyond, source_queue="fifo")
        got[routing] = (res.accepted, res.accepted_min / res.accepted)
    assert got["chaos"][1] < 0.5
    assert got["goal"][1] > 0.85 and got["goal"][0] > 0.6


def test_saturation_searches_of_an_oblivious_and_an_adaptive_routing_together_end_as_alone():
    """DOR and GOAL searched in one batch with FIFO sources: a packet reaching the front of its
    queue reads its first link from the path store only if it has a path (an adaptive packet's
    stale place pointed past the store: IndexError), and each search ends as it does alone."""
    from universal.openloop.saturation import find_saturations

    specs = [spec("torus:k=4,n=2", r, "tornado", 1.0, seed=3) for r in ("dor", "goal")]
    short = Measurement(warmup_max=600, latency_limit=300)     # quick, still beyond saturation
    kwargs = dict(tolerance=0.2, rounds=2, buffer=2, vcs=3, source_queue="fifo", measurement=short)
    together = find_saturations(specs, **kwargs)
    alone = [find_saturations([s], **kwargs)[0] for s in specs]
    assert [t.theta for t in together] == [a.theta for a in alone]


# the look-ahead window (``fifo:w=W``): the first W packets routed, each may leave on its own
WINDOW_CASES = [
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "age", 1, None, 1, 2),
    ("torus:k=4,n=2", "val", "bitcomp", 0.9, "poisson", "age", 1, 2, 4, 3),
    ("torus:k=4,n=2", "rlb", "tornado", 0.9, "bernoulli", "age", 1, 1, 6, 2),
    ("torus:k=4,n=2", "min-adaptive", "bitcomp", 0.9, "bernoulli", "age", 1, 1, 3, 2),
    ("torus:k=4,n=2", "goal", "tornado", 0.9, "poisson", "age", 2, 1, 3, 3),
    ("torus:k=5,n=2", "ugal", "uniform", 1.0, "poisson", "age", 1, 2, 6, 2),
]


@pytest.mark.parametrize("case", WINDOW_CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_a_source_window_equals_reference(case):
    assert_run_equals_reference(case[:-1], STEPS, 100, source_queue=f"fifo:w={case[-1]}")


def test_a_source_window_lets_w_packets_leave_per_step_and_spans_fifo_to_all():
    """Node 0 backlogged with one-hop packets for its four neighbours: W = 1 is ``fifo`` and a
    window longer than the queue is ``all`` (every delivery step equal); W = 2 sends at most 2 per
    step, more than one on average (two front packets for two links often differ)."""
    s = _to_neighbours()
    def got(queue):
        return simulate_batch([s], measurement=Measurement(steps=200), source_queue=queue)[0].records["delivered"]
    assert got("fifo:w=1").tolist() == got("fifo").tolist()
    assert got("fifo:w=100000").tolist() == got("all").tolist()
    two = got("fifo:w=2")
    per_step = np.bincount(two[two >= 0])
    assert per_step.max() == 2 and 1.2 * 150 < ((two >= 50) & (two < 200)).sum() < 2 * 150
    assert two.tolist() == simulate_reference(s, 200, source_queue="fifo:w=2")["delivered"]


@pytest.mark.parametrize("value", ["fifo:w=0", "fifo:w=x", "fifo:w=", "fifo:w=-1"])
def test_a_bad_source_window_is_refused(value):
    with pytest.raises(UserError, match="unknown source queue"):
        simulate_batch([spec("torus:k=4,n=2", "dor", "uniform", 0.5)], source_queue=value)
