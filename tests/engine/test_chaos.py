"""CHAOS in the one engine (SPEC §13; Konstantinidou & Snyder, "The Chaos router", 1994, as
Singh, Dally, Gupta & Towles use it in "GOAL: a load-balanced adaptive routing algorithm for
torus networks", 2003): the fast engine equals the plain reference, it deflects, it never
deadlocks, and beyond saturation it starves injection where GOAL does not."""

from __future__ import annotations

import numpy as np
import pytest

from universal.cli import main
from universal.engine.batch import route_batch
import universal.engine.chaos as chaos_module
from universal.engine.chaos import queue_sizes
from universal.engine.measure import Measurement
from universal.engine.reference_runs import simulate_reference
from universal.engine.routes import build_router
from universal.engine.runs import simulate_batch
from universal.errors import UserError

from tests.openloop.helpers import assert_run_equals_reference, network, spec

STEPS = 100
CASES = [
    # (network, routing, traffic, rate, injection, priority, B, b, V)
    ("torus:k=4,n=2", "chaos:queue=1", "uniform", 2.0, "poisson", "age", 1, 1, 1),
    ("torus:k=4,n=2", "chaos:queue=2", "bitcomp", 1.0, "bernoulli", "age", 1, 1, 1),
    ("torus:k=5,n=2", "chaos:queue=2", "tornado", 1.0, "poisson", "fifo", 1, 2, 1),
    ("torus:k=4,n=2", "chaos", "transpose", 1.0, "poisson", "age", 1, 1, 2),
    ("torus:k=8,n=1", "chaos:queue=1", "tornado", 1.0, "bernoulli", "farthest-to-go", 1, 2, 1),
    ("mesh:k=4,n=2", "chaos:queue=1", "bitcomp", 2.0, "poisson", "age", 1, 1, 1),
    ("mesh:k=4,n=2", "chaos:queue=2", "uniform", 1.0, "bernoulli", "nearest-to-go", 2, 2, 1),
    ("torus:k=4,n=2", "chaos:queue=1", "uniform", 2.0, "poisson", "random-rank", 1, 1, 1),
    ("torus:k=4,n=2", "chaos:queue=1", "uniform", 2.0, "poisson", "growing-rank", 1, 1, 1),
    ("torus:k=6,n=2", "chaos", "tornado", 1.0, "bernoulli", "age", 1, 2, 3),     # even k, the budget's queue
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_engine_equals_reference(case):
    """Same seed, same packets delivered in the same steps, one packet at a time or in arrays."""
    assert_run_equals_reference(case, STEPS, 150)


def _extra_hops(s, b: int) -> np.ndarray:
    """Hops beyond the minimal distance of every packet the reference delivered."""
    record: dict = {}
    run = simulate_reference(s, STEPS, buffer=b, record=record)
    crossings = np.array(record["crossings"])
    hops = np.bincount(crossings[:, 1], minlength=len(record["src"]))
    done = np.array(run["delivered"]) >= 0
    src, dst = np.array(record["src"])[done], np.array(record["dst"])[done]
    return hops[done] - s.router.distance[src, dst]


def test_full_queues_deflect_and_the_fast_engine_follows():
    """The mesh case above misroutes (its deflections are part of what the equality checked),
    by an even number of hops each time; with a queue of 64 places nothing is ever misrouted."""
    extra = _extra_hops(spec("mesh:k=4,n=2", "chaos:queue=1", "bitcomp", 2.0, injection="poisson", seed=5), 1)
    assert (extra > 0).sum() >= 10 and (extra % 2 == 0).all()
    roomy = _extra_hops(spec("mesh:k=4,n=2", "chaos:queue=64", "bitcomp", 2.0, injection="poisson", seed=5), 1)
    assert (roomy == 0).all()


def test_batches_equal_the_reference_and_deliver_everything():
    """A batch (every packet present at step 0) through the same engine: fast = reference."""
    net = network("torus:k=4,n=2")
    rng = np.random.default_rng(3)
    src = np.repeat(np.arange(16), 4)
    dst = rng.integers(0, 16, size=len(src))
    runs = [route_batch(net, src, dst, "chaos:queue=1", "longest-in-system", buffer=1, engine=e)
            for e in ("fast", "reference")]
    assert runs[0].result.status == runs[1].result.status == "delivered"
    assert runs[0].result.delivery.tolist() == runs[1].result.delivery.tolist()
    # the fullest link buffer (a blocked packet leaves it for the shared queue, unseen by crossings)
    assert runs[0].result.max_buffer == runs[1].result.max_buffer == 1


TRAFFICS = ["uniform", "bitcomp", "transpose", "tornado"]


@pytest.mark.parametrize("net", ["torus:k=4,n=2", "mesh:k=4,n=2"])
def test_no_deadlock_with_the_smallest_buffers_at_full_load(net):
    """b = 1 and one queue place, poisson sources at twice capacity: the engine's deadlock
    detector (which ends a run with status deadlock) never fires, and packets still arrive in
    the last hundred steps."""
    specs = [spec(net, "chaos:queue=1", t, 2.0, injection="poisson", seed=2) for t in TRAFFICS]
    results = simulate_batch(specs, buffer=1, measurement=Measurement(steps=400))
    assert [r.status for r in results] == ["steps"] * 4
    assert all((r.records["delivered"] >= 300).sum() > 100 for r in results)


#: Beyond saturation a run never settles: measure after a fixed warm-up (long enough for the
#: starved sources to fall behind), in a short window.
_BEYOND = Measurement(window=300, warmup_min=100, warmup_max=1000, drain=False)


def _accepted(routing: str, rate: float) -> tuple[float, float]:
    """(α*, α') of one run on the 6-ary 2-cube under bit complement, 2-deep VCs, 3 VCs' budget."""
    s = spec("torus:k=6,n=2", routing, "bitcomp", rate, seed=2)
    res, = simulate_batch([s], buffer=2, vcs=3, measurement=_BEYOND)
    return res.accepted, res.accepted_min


def test_beyond_saturation_chaos_starves_sources_and_goal_does_not():
    """GOAL §5.5, Figure 13, on a small case: offered 0.7 packets per node per step (beyond
    both routings' saturation, about 0.5), CHAOS's least served source gets almost nothing while
    the mean accepted rate holds (injection-queue starvation: through traffic and the shared
    queue go first); GOAL's least served source keeps most of the mean. Below saturation
    (0.45) CHAOS serves every source alike."""
    mean, least = _accepted("chaos", 0.7)
    assert mean > 0.5 and least < 0.2 * mean
    mean, least = _accepted("goal", 0.7)
    assert mean > 0.45 and least > 0.7 * mean
    mean, least = _accepted("chaos", 0.45)
    assert abs(mean - 0.45) < 0.02 and least > 0.8 * mean


def test_a_chaos_run_does_not_depend_on_what_it_is_batched_with():
    """CHAOS runs batched with others run in a batch of their own, each as alone."""
    specs = [spec("torus:k=4,n=2", r, "uniform", 1.0, seed=4) for r in ("min-adaptive", "chaos:queue=2", "dor",
                                                                          "chaos:queue=1")]
    together = simulate_batch(specs, buffer=1, measurement=Measurement(steps=150))
    for s, res in zip(specs, together):
        alone = simulate_batch([s], buffer=1, measurement=Measurement(steps=150))[0]
        assert res.records["delivered"].tolist() == alone.records["delivered"].tolist()


def _five_by_five(seed: int = 2):
    return simulate_batch([spec("torus:k=5,n=2", "chaos:queue=1", "uniform", 1.0, seed=seed)], buffer=1,
                          measurement=Measurement(steps=400))[0]


def test_no_deadlock_where_min_adaptive_without_the_shared_queue_deadlocks():
    """The run below deadlocks when the shared queue is taken away (no packet ever enters it, so
    none is deflected) together with the injection gate: the detector can fire, and CHAOS's
    queue is what keeps it quiet."""
    assert _five_by_five().status == "steps"


def test_without_queue_and_gate_the_same_run_deadlocks(monkeypatch):
    import universal.engine.chaos as chaos

    monkeypatch.setattr(chaos, "into_queue", lambda batch, movers, order: np.empty(0, dtype=np.int64))
    monkeypatch.setattr(chaos, "gate", lambda batch, order: np.zeros(len(batch.chaos_gate) if order is None
                                                                       else len(order), dtype=bool))
    assert _five_by_five().status == "deadlock"


def test_the_queue_takes_the_paper_buffer_budget():
    """GOAL's budget, 6 VCs of 8 per link: CHAOS keeps 8 per input link, the queue gets 4 x 40."""
    net = network("torus:k=8,n=2")
    assert set(queue_sizes(build_router("chaos", net), 8, 6).tolist()) == {160}
    mesh = queue_sizes(build_router("chaos", network("mesh:k=4,n=2")), 8, 6)
    assert (mesh.min(), mesh.max()) == (80, 160)             # corners have two input links
    with pytest.raises(UserError, match="shared queue"):
        queue_sizes(build_router("chaos", net), 8, 1)


@pytest.mark.parametrize("argv,words", [
    (["--routing", "chaos:queue=0", "--buffer", "8"], "at least 1 packet"),
    (["--routing", "chaos"], "bounded input buffers"),
    (["--routing", "chaos", "--buffer", "8"], "needs a shared queue"),
    (["--routing", "chaos:queue=x", "--buffer", "8"], "whole number"),
])
def test_bad_chaos_input_is_one_error_line(argv, words, capsys):
    status = main(["openloop", "--network", "torus:k=4,n=2", "--loads", "0.1", "--window", "200", *argv])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0]


def test_tornado_beyond_saturation_stays_at_the_minimal_bound():
    """Why CHAOS matches MIN AD on tornado here (GOAL §5.2 has it 5% above): source packets take
    a link only when no through packet wants it, so the through packets reaching a node on its
    one loaded input never outnumber what its +x link carries; no shared queue ever holds a
    packet, CHAOS deflects only from a full one, and the accepted rate is the closed-form
    minimal bound 1 / (ceil(k/2) - 1) = 1/2 per node on the 6-ary 2-cube (offered 0.7)."""
    s = spec("torus:k=6,n=2", "chaos", "tornado", 0.7, seed=1)
    fullest = []
    decide = chaos_module.decide

    def watched(batch, t):
        decide(batch, t)
        fullest.append(int(batch.queue_start.max()))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chaos_module, "decide", watched)
        res, = simulate_batch([s], buffer=8, vcs=6, measurement=Measurement(steps=600, record_crossings=True))
    delivered, pid = res.records["delivered"], res.records["pid"]
    done = delivered >= 0
    hops = np.bincount(res.records["crossings"][:, 1], minlength=int(pid.max()) + 1)[pid[done]]
    assert res.status == "steps" and (hops == 2).all() and max(fullest) == 0
    assert abs((delivered >= 300).sum() / 300 / 36 - 0.5) < 0.01


@pytest.fixture(scope="module")
def tornado_bench():
    """``benchmarks/chaos_tornado.py`` as a module (the table of rules tried in docs/openloop.md, "CHAOS", comes
    from it)."""
    import importlib.util
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "chaos_tornado.py"
    if not script.exists():
        pytest.skip("benchmarks/ is not part of this copy")
    path = list(sys.path)
    try:                        # the script puts its checkout first on sys.path: undo that
        loader = importlib.util.spec_from_file_location("chaos_tornado", script)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    finally:
        sys.path[:] = path
    return module


def test_the_rules_tried_on_tornado_behave_as_the_readme_says(tornado_bench):
    """On the 6-ary 2-cube with small queues, beyond the minimal bound: with the gate's free
    place kept, source packets joining the queue misroute nothing; taking the last place, they
    overflow the queues and deroute (the original's trigger); the shipped rules are restored
    after each variant (the second shipped run equals the first)."""
    runs = {v: tornado_bench.run(6, 0.7, 400, v, 4) for v in ("shipped", "sources-into-queue", "sources-fill-queue")}
    assert runs["shipped"]["misrouted"] == 0 and runs["shipped"]["fullest"] == 0
    assert runs["sources-into-queue"]["misrouted"] == 0 and runs["sources-into-queue"]["fullest"] <= 3
    assert runs["sources-fill-queue"]["misrouted"] > 0 and runs["sources-fill-queue"]["fullest"] == 4
    assert tornado_bench.run(6, 0.7, 400, "shipped", 4) == runs["shipped"]


@pytest.mark.parametrize("argv", [["--variants", "nope"], ["--queue", "0"], ["--loads", "x"], ["--steps", "1"],
                                  ["--k", "6", "--loads", "0.9"]])
def test_the_tornado_benchmark_refuses_bad_input_in_one_line(tornado_bench, argv, capsys):
    assert tornado_bench.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("error: ")
