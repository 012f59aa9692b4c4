"""FIFO virtual channels (``vc_buffer="fifo"``, :mod:`universal.engine.fifo_vcs`): the fast engine
equals its plain reference, a hand-counted case of head-of-line blocking, one-place FIFOs are
sets, and bad input is refused with one line."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from universal.engine.batch import batch_spec
from universal.engine.measure import Measurement
from universal.engine.reference_runs import simulate_reference
from universal.engine.routes import build_router
from universal.engine.runs import simulate, simulate_batch
from universal.errors import UserError

from tests.openloop.helpers import assert_run_equals_reference, network, spec

STEPS = 150

CASES = [
    # (network, routing, traffic, rate, injection, priority, B, b, V), source queue
    (("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "age", 1, 2, 2), "all"),
    (("torus:k=4,n=2", "dor", "uniform", 0.9, "bernoulli", "age", 1, 2, 4), "all"),   # 2 VCs per class
    (("torus:k=4,n=2", "dor", "uniform", 1.2, "poisson", "age", 1, 3, 1), "fifo"),    # one FIFO per link
    (("torus:k=4,n=2", "val", "bitcomp", 0.6, "bernoulli", "age", 1, 2, 4), "all"),
    (("torus:k=4,n=2", "romm", "tornado", 0.9, "poisson", "age", 1, 2, 6), "all"),
    (("torus:k=4,n=2", "rlb", "transpose", 0.9, "bernoulli", "age", 1, 1, 6), "all"),
    (("torus:k=4,n=2", "ival", "uniform", 0.9, "bernoulli", "age", 1, 2, 4), "fifo"),
    (("torus:k=4,n=2", "min-adaptive", "uniform", 0.9, "bernoulli", "age", 1, 2, 3), "all"),
    (("torus:k=4,n=2", "min-adaptive", "bitcomp", 0.9, "poisson", "age", 1, 1, 3), "fifo"),
    (("torus:k=4,n=2", "goal", "uniform", 0.9, "poisson", "age", 1, 2, 3), "all"),
    (("torus:k=4,n=2", "goal", "tornado", 0.9, "bernoulli", "age", 1, 2, 6), "fifo"),
    (("torus:k=4,n=2", "ugal", "bitcomp", 0.9, "bernoulli", "age", 1, 2, 6), "all"),
    (("torus:k=4,n=2", "ugal", "uniform", 0.9, "poisson", "age", 1, 1, 6), "fifo"),
]


@pytest.mark.parametrize("case,queue", CASES, ids=lambda c: "-".join(map(str, c)) if isinstance(c, tuple) else c)
def test_fifo_vcs_equal_the_reference(case, queue):
    """Every packet delivered in the same step by the engine and the plain reference (FIFOs kept
    as Python lists there), every routing with VCs, b = 1 and 2 (3 with one VC), bernoulli and
    poisson, both source queues."""
    assert_run_equals_reference(case, STEPS, 100, source_queue=queue, vc_buffer="fifo")


def _hol_batch(vcs: int, vc_buffer: str) -> tuple[list, list]:
    """The hand-counted batch of :func:`test_head_of_line_blocking_by_hand` on both engines."""
    net = network("torus:k=5,n=2")
    node = lambda x, y: x + 5 * y        # noqa: E731
    src = np.array([node(1, 0)] * 4 + [node(0, 0)] * 2)
    dst = np.array([node(2, 0)] * 4 + [node(2, 0), node(1, 1)])
    s = batch_spec(build_router("dor", net), src, dst, "age")
    fast = simulate(s, buffer=2, vcs=vcs, vc_buffer=vc_buffer, measurement=Measurement(steps=50, until_delivered=True))
    ref = simulate_reference(s, 50, buffer=2, vcs=vcs, create_until=1, vc_buffer=vc_buffer)
    return fast.records["delivered"].tolist(), ref["delivered"]


def test_head_of_line_blocking_by_hand():
    """DOR on the 5-ary 2-cube, b = 2. Packets 0-3 go from (1,0) to (2,0) and take that link in
    steps 0-3 (the oldest first). Packet 4, (0,0) -> (2,0), crosses into (1,0) in step 0 and waits
    for the same link until step 4; packet 5, (0,0) -> (1,1), follows it into (1,0) in step 1 and
    wants the idle +y link. In a set it leaves in step 2; in a FIFO it sits behind packet 4 and
    leaves in step 5, after packet 4 has gone (head-of-line blocking). With 4 VCs (DOR's two
    dateline classes of 2 VCs each) packet 5 takes the class's empty second VC and leaves in
    step 2 again (the emptiest-VC rule; the first VC with room would have been packet 4's)."""
    assert _hol_batch(1, "set") == ([0, 1, 2, 3, 4, 2],) * 2
    assert _hol_batch(1, "fifo") == ([0, 1, 2, 3, 4, 5],) * 2
    assert _hol_batch(4, "fifo") == ([0, 1, 2, 3, 4, 2],) * 2


@pytest.mark.parametrize("routing,vcs", [("val", 4), ("goal", 3), ("min-adaptive", 6)])
def test_one_place_fifos_are_sets(routing, vcs):
    """With b = 1 every packet in a VC is its head, so FIFO VCs are the set model exactly (the
    stability rows of issue 24 at b = 1 cannot change): same deliveries beyond saturation."""
    s = spec("torus:k=4,n=2", routing, "bitcomp", 1.0, seed=3)
    got = [simulate_batch([s], buffer=1, vcs=vcs, measurement=Measurement(steps=STEPS), vc_buffer=m)[0]
           for m in ("set", "fifo")]
    assert got[0].records["delivered"].tolist() == got[1].records["delivered"].tolist()


def test_deeper_fifos_are_not_sets():
    """Not a no-op: DOR with 2-deep VCs on uniform traffic near capacity delivers other packets in
    other steps with FIFOs than with sets."""
    s = spec("torus:k=4,n=2", "dor", "uniform", 0.9, seed=5)
    got = [simulate_batch([s], buffer=2, vcs=2, measurement=Measurement(steps=STEPS), vc_buffer=m)[0]
           for m in ("set", "fifo")]
    assert got[0].records["delivered"].tolist() != got[1].records["delivered"].tolist()


@pytest.mark.parametrize("routing,kwargs,message", [
    ("dor", dict(buffer=None), "needs bounded buffers"),
    ("dor", dict(buffer=2, bandwidth=2), "takes B = 1"),
    ("chaos", dict(buffer=2), "for routings with virtual channels; CHAOS has none"),
    ("dor", dict(buffer=2, vc_buffer="lifo"), "unknown VC buffer 'lifo'"),
])
def test_bad_vc_buffers_are_refused(routing, kwargs, message):
    kwargs = {"vc_buffer": "fifo", **kwargs}
    with pytest.raises(UserError, match=message):
        simulate_batch([spec("torus:k=4,n=2", routing, "uniform", 0.5)], measurement=Measurement(steps=10), **kwargs)


def test_a_fifo_vc_without_buffers_on_the_command_line_is_one_error_line():
    """(The other refusals share the check: ``test_bad_vc_buffers_are_refused``.)"""
    command = "openloop --network torus:k=4,n=2 --routing dor --loads 0.2 --vc-buffer fifo"
    out = subprocess.run([sys.executable, "-m", "universal", *command.split()], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") <= 1 and out.stderr.startswith("error: --vc-buffer fifo needs bounded buffers")


def test_a_scenario_names_its_vc_buffer(tmp_path):
    from universal.scenario import load_scenario

    f = tmp_path / "vb.toml"
    body = 'kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\ntraffic = "uniform"\nloads = [0.2]\n'
    f.write_text(body + 'buffer = 2\nvcs = 2\nvc_buffer = "fifo"\n')
    study = load_scenario(str(f)).openloop
    assert study.vc_buffer == "fifo" and study.settings()["vc_buffer"] == "fifo"
    f.write_text(body + 'vc_buffer = "lifo"\n')
    with pytest.raises(UserError, match="unknown VC buffer 'lifo'"):
        load_scenario(str(f))


def test_a_study_runs_the_vc_buffer_it_names():
    """The option reaches the engine through a load sweep (OpenLoopStudy -> cells -> engine): DOR
    with one 2-deep VC per class at 0.45 of capacity has a higher mean latency with FIFOs than with
    sets (2.568 against 2.514 measured: head-of-line blocking), and ``set`` is the default."""
    from universal.openloop.study import OpenLoopStudy, run_study

    def latency(**kwargs) -> float:
        study = OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.45], buffer=2, vcs=2, window=300,
                              **kwargs)
        row, = run_study(study).rows
        return row["latency_mean"]

    fifo, unset = latency(vc_buffer="fifo"), latency()
    assert fifo > unset == latency(vc_buffer="set")
