"""The compiled open-loop kernel (:mod:`universal.engine.compiled_openloop`) runs a batch exactly
as the numpy engine (:mod:`universal.engine.runs`) and the reference engine do.

Oracles, on the same seeds: the numpy engine with the kernel switched off (every field of every
result, the generators' final states, the link-hops and packets created) and
:func:`universal.engine.reference_runs.simulate_reference` (the step every packet is delivered
in). The kernel's draws (:func:`draw_chunk_fast`) against :func:`draw_chunk`, array for array.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from universal.engine import runs
from universal.engine.creation import InjectionState, draw_chunk
from universal.engine.reference_runs import simulate_reference
from universal.engine.runs import _Batch, simulate_batch
from universal.openloop import Measurement

from tests.openloop.helpers import spec

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed: the compiled open-loop kernel cannot run "
                                       "(universal.engine.runs stays on numpy)")


@pytest.fixture
def engine():
    """Run batches with the kernel on (True) or off (False); the automatic choice afterwards."""
    def run(specs, on, B=1, measurement=Measurement(steps=150), **kw):
        runs.COMPILED = on
        try:
            batch = _Batch(specs, B, None, measurement, **kw)
            return batch, batch.run()
        finally:
            runs.COMPILED = None
    yield run
    runs.COMPILED = None


def _same_field(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_field(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same_field(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and a == b


def assert_same(numpy_engine, kernel):
    """Every field of every result, and what the batches leave behind, identical."""
    (b0, r0), (b1, r1) = numpy_engine, kernel
    assert len(r0) == len(r1)
    for x, y in zip(r0, r1):
        assert vars(x).keys() == vars(y).keys()
        for k, v in vars(x).items():
            assert _same_field(v, getattr(y, k)), k
    assert b0.link_hops == b1.link_hops and b0.next_pid == b1.next_pid
    for g0, g1 in zip(b0.rngs, b1.rngs):
        assert g0.bit_generator.state == g1.bit_generator.state
    for s0, s1 in zip(b0.inj_state, b1.inj_state):
        assert _same_field(s0.on, s1.on)


FIXED = [
    # (network, routing, traffic, rate, injection, priority, B)
    ("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "age", 1),
    ("torus:k=4,n=2", "val", "bitcomp", 0.5, "bernoulli", "age", 1),
    ("torus:k=5,n=2", "romm", "tornado", 0.9, "bernoulli", "age", 1),
    ("torus:k=4,n=2", "rlb", "uniform", 0.9, "poisson", "age", 1),
    ("torus:k=4,n=2", "ival", "transpose", 0.9, "bernoulli", "longest-in-system", 1),
    ("mesh:k=4,n=2", "shortest", "uniform", 0.5, "on-off:burst=4", "age", 1),
    ("hypercube:d=4", "valiant", "bitrev", 0.5, "bernoulli", "age", 1),
    ("torus:k=4,n=2", "dor", "uniform", 2.5, "poisson", "age", 2),
    ("dragonfly:p=1,a=4,h=1", "valiant", "uniform", 0.6, "bernoulli", "age", 1),
    # the adaptive routings, decided hop by hop from the queues (compiled_adaptive)
    ("torus:k=4,n=2", "min-adaptive", "uniform", 0.9, "bernoulli", "age", 1),
    ("torus:k=5,n=2", "goal", "tornado", 0.9, "poisson", "age", 1),
    ("torus:k=4,n=2", "ugal", "bitcomp", 0.7, "bernoulli", "longest-in-system", 1),
    ("hypercube:d=4", "min-adaptive", "bitrev", 0.5, "bernoulli", "age", 1),
    ("torus:k=4,n=2", "goal", "uniform", 2.5, "poisson", "age", 2),
    ("dragonfly:p=1,a=4,h=1", "ugal:threshold=2", "uniform", 0.6, "poisson", "age", 1),
]


@pytest.mark.parametrize("case", FIXED, ids=lambda c: "-".join(str(x) for x in c))
def test_fixed_length_runs_match_the_numpy_engine_and_the_reference(case, engine):
    net, routing, traffic, rate, injection, priority, B = case
    make = lambda: [spec(net, routing, traffic, rate, injection=injection, priority=priority, seed=s)  # noqa: E731
                    for s in (7, 8)]
    fast = engine(make(), True, B)
    assert_same(engine(make(), False, B), fast)
    delivered = fast[1][0].records["delivered"]
    assert (delivered >= 0).sum() > 100
    ref = simulate_reference(make()[0], 150, bandwidth=B)
    assert delivered.tolist() == ref["delivered"]


MEASURED = [
    # (network, routing, traffic, rates, injection, B): a batch of loads through warm-up, window and drain
    ("torus:k=4,n=2", "dor", "uniform", (0.2, 0.6, 0.95, 1.6), "bernoulli", 1),
    ("torus:k=4,n=2", "val", "tornado", (0.1, 0.4, 0.7), "poisson", 1),
    ("torus:k=5,n=2", "rlb", "bitcomp", (0.3, 0.9), "bernoulli", 2),
    ("torus:k=4,n=2", "ival", "uniform", (0.3, 0.7), "on-off:burst=4", 1),
    ("mesh:k=4,n=2", "shortest", "hotspot:count=1,factor=4", (0.1, 0.3), "bernoulli", 1),
    ("torus:k=4,n=2", "goal", "uniform", (0.3, 0.9, 1.8), "poisson", 1),
    ("torus:k=4,n=2", "ugal", "tornado", (0.2, 0.5), "bernoulli", 1),
    ("torus:k=4,n=2", "min-adaptive", "transpose", (0.4, 2.5), "poisson", 2),
]


@pytest.mark.parametrize("case", MEASURED, ids=lambda c: "-".join(str(x) for x in c))
def test_measured_runs_match_the_numpy_engine(case, engine):
    net, routing, traffic, rates, injection, B = case
    make = lambda: [spec(net, routing, traffic, r, injection=injection, seed=i)  # noqa: E731
                    for i, r in enumerate(rates)]
    m = Measurement(window=300, warmup_max=1500, drain_limit=600)
    fast = engine(make(), True, B, m)
    assert_same(engine(make(), False, B, m), fast)
    statuses = {r.status for r in fast[1]}
    assert "stable" in statuses and any(r.labelled_packets is not None for r in fast[1])


def test_a_batch_mixing_oblivious_and_adaptive_runs_matches_the_numpy_engine(engine):
    """One batch of every kind the queues' kernel decides, with runs ended beyond saturation
    while the others go on (their waiting and undecided packets dropped)."""
    make = lambda: [spec("torus:k=4,n=2", r, "uniform", rate, injection="poisson", seed=i)  # noqa: E731
                    for i, (r, rate) in enumerate((("dor", 0.4), ("goal", 3.0), ("ugal", 0.8),
                                                   ("min-adaptive", 3.5), ("val", 0.3), ("goal", 0.6)))]
    m = Measurement(window=200, latency_limit=3, overload="stop")
    fast = engine(make(), True, 1, m)
    assert_same(engine(make(), False, 1, m), fast)
    assert [r.status for r in fast[1]].count("backlog-limit") == 2


@pytest.mark.parametrize("B", [1, 2])
def test_runs_one_after_the_other_match_the_batch_wide_list_and_numpy(B, engine, monkeypatch):
    """Measured batches run run after run (:mod:`universal.engine.compiled_run_lists`) and on the
    batch-wide list kernel give the numpy engine's results, records in each run's order
    included, with a run ended beyond saturation while the others go on."""
    from universal.engine import compiled_openloop

    make = lambda: [spec("torus:k=4,n=2", "dor", "uniform", r, injection=inj, seed=i)  # noqa: E731
                    for i, (r, inj) in enumerate(((0.3, "bernoulli"), (0.85, "bernoulli"), (0.5 * B, "poisson"),
                                                  (3.0 * B, "poisson")))]
    m = Measurement(window=300, latency_limit=3, overload="stop")
    numpy_engine = engine(make(), False, B, m)
    for by_run in (True, False):
        monkeypatch.setattr(compiled_openloop, "BY_RUN", by_run)
        assert_same(numpy_engine, engine(make(), True, B, m))
    assert [r.status for r in numpy_engine[1]].count("backlog-limit") == 1


def test_the_compiled_tie_numbers_are_tie_uniform():
    from universal.engine.compiled_adaptive import tie_uniform_one
    from universal.engine.ties import tie_uniform

    tie = np.random.default_rng(5).integers(0, 2**63, size=50).astype(np.uint64)
    hops = np.arange(50) % 7
    assert [tie_uniform_one(t, h) for t, h in zip(tie, hops)] == tie_uniform(tie, hops).tolist()


def test_overload_stops_a_run_and_drops_its_packets(engine):
    """A run far beyond saturation ends in its warm-up (``overload="stop"``) while the others go on."""
    make = lambda: [spec("torus:k=4,n=2", "dor", "uniform", r, injection="poisson", seed=i)  # noqa: E731
                    for i, r in enumerate((0.3, 3.0))]     # saturation: 2 packets per node and step
    m = Measurement(window=200, latency_limit=2, overload="stop")
    fast = engine(make(), True, 1, m)
    assert_same(engine(make(), False, 1, m), fast)
    assert [r.status for r in fast[1]] == ["stable", "backlog-limit"]


K8 = "torus:k=8,n=2"


@pytest.mark.parametrize("routing, traffic, injection, net", [
    ("dor", "uniform", "bernoulli", K8), ("dor", "tornado", "poisson", K8), ("val", "uniform", "bernoulli", K8),
    ("romm", "hotspot:count=2,factor=4", "poisson", K8), ("ival", "diagonal", "bernoulli", K8),
    ("rlb", "uniform", "on-off:burst=4", K8), ("rlb", "tornado", "poisson", K8),
    ("val", "uniform", "poisson", "torus:k=5,n=3"), ("romm", "transpose", "bernoulli", "torus:k=4,n=2")])
def test_fast_draws_are_draw_chunks(routing, traffic, injection, net):
    from universal.engine.compiled_draws import draw_chunk_fast

    s = spec(net, routing, traffic, 0.4, injection=injection)
    r0, r1 = np.random.default_rng(3), np.random.default_rng(3)
    i0, i1 = InjectionState(), InjectionState()
    for t0 in (0, 100, 200):         # DOR's table is built in the first chunk and used after
        a, b = draw_chunk(s, i0, t0, r0), draw_chunk_fast(s, i1, t0, r1)
        for x, y in ((a.step, b.step), (a.src, b.src), (a.dst, b.dst), (a.route.offsets, b.route.offsets),
                     (a.route.links, b.route.links)):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        assert r0.bit_generator.state == r1.bit_generator.state
        assert len(a.src) > 100


@pytest.mark.parametrize("traffic", ["uniform", "tornado", "hotspot:count=2,factor=4"])
def test_a_batchs_draws_together_are_its_runs_draws(traffic):
    """BatchDraws (every run's chunk in one call) gives the arrays that _gather lays end to end
    from the runs' own draw_chunk_fast chunks, a done run left out, and the same generator states."""
    from universal.engine.compiled_batch_draws import BatchDraws
    from universal.engine.compiled_draws import draw_chunk_fast
    from universal.engine.compiled_openloop import _gather
    from universal.engine.measure import DONE

    make = lambda: _Batch([spec("torus:k=8,n=2", "dor", traffic, r, seed=i)  # noqa: E731
                           for i, r in enumerate((0.2, 0.5, 0.9))], 1, None, Measurement())
    from universal.engine.routes import _TABLES

    a, b = make(), make()
    _TABLES.pop(("dor-table", id(b.net)), None)   # BatchDraws has DOR build its table
    together = BatchDraws(b)
    assert together.ok
    for t0 in (0, 100, 200):
        if t0 == 200:
            a.phase[1] = b.phase[1] = DONE
        drawn = together.draw(t0)               # the first builds DOR's table, from no run's generator
        parts = [(r, draw_chunk_fast(s, a.inj_state[r], t0, a.rngs[r]))
                 for r, s in enumerate(a.specs) if a.phase[r] != DONE]
        for x, y in zip(_gather(parts, a.R), drawn):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        for g0, g1 in zip(a.rngs, b.rngs):
            assert g0.bit_generator.state == g1.bit_generator.state
    assert len(drawn[0]) > 1000


def test_batch_draws_take_only_dor_bernoulli_and_one_traffic():
    from universal.engine.compiled_batch_draws import BatchDraws

    def ok(*specs):
        return BatchDraws(_Batch(list(specs), 1, None, Measurement())).ok

    net = "torus:k=4,n=2"
    assert ok(spec(net, "dor", "uniform", 0.2), spec(net, "dor", "uniform", 0.4, seed=1))
    assert not ok(spec(net, "dor", "uniform", 0.2), spec(net, "dor", "tornado", 0.4))
    assert not ok(spec(net, "val", "uniform", 0.2))
    assert not ok(spec(net, "dor", "uniform", 0.2, injection="poisson"))


def test_destination_search_is_numpys_on_every_edge():
    """Keys on the rows' cumulative values themselves, and just below and above them."""
    from universal.engine.compiled_draws import _destinations
    from universal.openloop.workload import offered_traffic

    for name in ("uniform", "hotspot:count=2,factor=8", "hotspot:count=1,factor=3,background=bitcomp"):
        traffic = offered_traffic(spec("torus:k=4,n=2", "dor", "uniform", 0.1).router.network, name)
        flat = traffic._flat_cumulative
        N = len(traffic.rowsum)
        src = np.repeat(np.arange(N), 3 * (N + 2))
        cum = np.concatenate([traffic.cumulative, np.zeros((N, 1)), np.full((N, 1), np.nextafter(1, 0))], axis=1)
        u = np.concatenate([c for c in (cum, np.nextafter(cum, 0), np.nextafter(cum, 1))], axis=1).ravel()
        u = np.clip(u, 0, np.nextafter(1, 0))
        expect = np.clip(np.searchsorted(flat, src + u, side="right") - src * N, 0, N - 1)
        assert np.array_equal(_destinations(flat, src, u, N), expect)


def test_a_mixed_batch_is_split_and_gives_each_run_its_own_result(engine):
    """The kernel's runs go to the kernel, the others (UGAL-L and -G) to numpy, with the results
    of the whole batch on numpy (measured runs: a fixed-length run's records number packets across its batch,
    so those batches are not split)."""
    make = lambda: [spec("dragonfly:p=1,a=4,h=1", r, "uniform", 0.4, seed=i)  # noqa: E731
                    for i, r in enumerate(("valiant", "ugal-l", "min-adaptive", "ugal-g"))]
    m = Measurement(window=300)
    runs.COMPILED = True
    try:
        assert runs._kernel_split(make(), None, m) == ([0, 2], [1, 3])
        assert runs._kernel_split(make(), None, Measurement(steps=100)) is None
        mixed = simulate_batch(make(), measurement=m)
    finally:
        runs.COMPILED = None
    whole = engine(make(), False, 1, m)[1]
    for a, b in zip(whole, mixed):
        for k, v in vars(a).items():
            if k == "labelled_packets":
                # the numpy engine lists a step's deliveries in link order, not youngest first,
                # in a batch without adaptive runs that keeps the waiting counts (UGAL-L/G's)
                v, w = (tuple(np.asarray(c)[np.lexsort(x)] for c in x) for x in (v, b.labelled_packets))
                assert _same_field(v, w), k
                continue
            assert _same_field(v, getattr(b, k)), k


def test_what_the_kernel_does_not_take_stays_on_numpy():
    s = lambda **kw: spec("torus:k=4,n=2", kw.pop("routing", "dor"), "uniform", 0.5, **kw)  # noqa: E731
    m = Measurement()
    assert runs.kernel_supports([s(), s(priority="longest-in-system")], None, m)
    assert not runs.kernel_supports([s()], 4, m)                             # bounded buffers
    assert not runs.kernel_supports([s(priority="fifo")], None, m)
    assert runs.kernel_supports([s(routing="goal"), s(routing="ugal"), s(routing="min-adaptive")], None, m)
    assert not runs.kernel_supports([s(routing="chaos")], None, m)                 # shared queues
    assert not runs.kernel_supports([spec("dragonfly:p=1,a=4,h=1", "ugal-l", "uniform", 0.5)], None, m)  # credits
    assert not runs.kernel_supports([s(routing="goal")], 4, m)
    assert not runs.kernel_supports([s()], None, Measurement(steps=10, record_crossings=True))


def test_small_batches_stay_on_numpy_until_a_kernel_is_loaded(monkeypatch):
    from universal.engine import compiled_openloop

    small = [spec("torus:k=4,n=2", "dor", "uniform", 0.5)]           # 8 packets a step, 1300 steps
    large = [spec("torus:k=8,n=2", "dor", "uniform", 0.5, seed=s) for s in range(64)]
    m = Measurement()
    monkeypatch.setattr(compiled_openloop, "WARM", False)
    assert not runs._kernel_pays(small, None, m) and runs._kernel_pays(large, None, m)
    monkeypatch.setattr(compiled_openloop, "WARM", True)
    assert runs._kernel_pays(small, None, m)
    monkeypatch.setattr(runs, "COMPILED", False)
    assert not runs._kernel_pays(large, None, m)
