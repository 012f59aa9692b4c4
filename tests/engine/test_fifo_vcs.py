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


# ---------------------------------------------------------------- batches (route --vc-buffer)

def _fixed_paths(net_name: str, system: str, problem: str, seed: int):
    from universal.paths import route_paths
    from universal.workloads import build_problem

    net = network(net_name)
    return route_paths(system, build_problem(problem, net, np.random.default_rng(seed)), net,
                       np.random.default_rng(seed + 1))


def _batch_and_reference(paths, protocol: str, buffer: int, vcs: int, vc_buffer: str, seed: int):
    """The delivery steps of a batch on fixed paths by the one engine (``batch.simulate``) and by
    the plain reference (the same packets, ranks and seed, batch step numbering)."""
    from dataclasses import replace

    from universal.engine.batch import fixed_paths_spec, simulate as simulate_paths
    from universal.engine.vcs import classes_of_paths

    got = simulate_paths(paths, protocol, np.random.default_rng(seed), buffer=buffer, vcs=vcs, vc_buffer=vc_buffer)
    s = fixed_paths_spec(paths, protocol, None, np.random.default_rng(seed))
    if vcs != 1:
        s.injection = replace(s.injection, vc_classes=classes_of_paths(paths))
    ref = simulate_reference(s, int(paths.lengths.sum()) + 1, buffer=buffer, create_until=1, vcs=vcs,
                             vc_buffer=vc_buffer)
    want = np.where(paths.lengths == 0, 0, np.array(ref["delivered"]) + 1)
    return got, want


# (network, path system, problem, V): DOR with its dateline classes (2 on a torus), VAL (4), and
# Valiant's trick on a butterfly, which has no VCs: every link's one buffer a FIFO
FIXED = [("torus:k=4,n=2", "dimension-order", "h-relation:h=3", 2), ("torus:k=5,n=2", "dimension-order",
         "h-relation:h=4", 2), ("torus:k=4,n=2", "valiant", "h-relation:h=2", 4),
         ("butterfly:d=3", "valiant", "h-relation:h=4", 1)]


@pytest.mark.parametrize("net_name,system,problem,vcs", FIXED, ids=lambda x: str(x))
@pytest.mark.parametrize("buffer", [1, 2])
def test_batch_fifo_vcs_on_fixed_paths_equal_the_reference(net_name, system, problem, vcs, buffer):
    """``route --vc-buffer fifo`` on paths fixed in advance: every packet delivered in the same
    step by the one engine and by the reference, three protocols and two seeds each, and never a
    deadlock (the classes of the paths). At b = 2 FIFOs change some run (not a no-op)."""
    changed = False
    for protocol in ("fifo", "random-rank", "farthest-to-go"):
        for seed in range(2):
            paths = _fixed_paths(net_name, system, problem, seed)
            got, want = _batch_and_reference(paths, protocol, buffer, vcs, "fifo", seed)
            assert got.status == "delivered" and np.array_equal(got.delivery, want)
            as_sets, _ = _batch_and_reference(paths, protocol, buffer, vcs, "set", seed)
            changed |= not np.array_equal(as_sets.delivery, got.delivery)
    assert changed == (buffer > 1)


@pytest.mark.parametrize("routing,vcs", [("min-adaptive", 3), ("goal", 3), ("ugal", 6)])
@pytest.mark.parametrize("buffer", [1, 2])
def test_adaptive_batches_with_fifo_vcs_equal_the_reference(routing, vcs, buffer):
    """``route --paths min-adaptive,goal,ugal --vc-buffer fifo``: the same deliveries and the same
    links crossed in the same steps by both engines, with GOAL's *-channels; at b = 2 FIFOs
    change some run."""
    from universal.engine.batch import route_batch

    net = network("torus:k=4,n=2")
    changed = False
    for seed in range(2):
        rng = np.random.default_rng(seed)
        src = np.repeat(np.arange(net.num_nodes), 6)
        dst = rng.permutation(src)
        runs = {(engine, model): route_batch(net, src, dst, routing, "fifo", seed=seed, buffer=buffer, vcs=vcs,
                                             vc_buffer=model, engine=engine)
                for engine in ("fast", "reference") for model in ("set", "fifo")}
        a, b = runs["fast", "fifo"], runs["reference", "fifo"]
        assert a.result.status == b.result.status == "delivered"
        assert np.array_equal(a.result.delivery, b.result.delivery)
        assert np.array_equal(a.result.crossings, b.result.crossings)
        changed |= not np.array_equal(runs["fast", "set"].result.delivery, a.result.delivery)
    assert changed == (buffer > 1)


def _hol_fixed_paths(vcs: int, vc_buffer: str) -> list[int]:
    from universal.engine.batch import simulate as simulate_paths
    from universal.paths import PathCollection

    net = network("torus:k=5,n=2")
    node = lambda x, y: x + 5 * y        # noqa: E731
    paths = [[node(1, 0), node(2, 0)]] * 4 + [[node(0, 0), node(1, 0), node(2, 0)],
                                              [node(0, 0), node(1, 0), node(1, 1)]]
    coll = PathCollection.from_node_paths(net, paths)
    run = simulate_paths(coll, "longest-in-system", np.random.default_rng(0), buffer=2, vcs=vcs, vc_buffer=vc_buffer)
    return run.delivery.tolist()


def test_head_of_line_blocking_in_a_batch_by_hand():
    """The hand-counted case above as ``route`` runs it (steps numbered from 1, ties to the lower
    packet id). Packets 0-3 take (1,0) -> (2,0) in steps 1-4. Packet 4 enters (1,0)'s buffer in
    step 1, packet 5 behind it in step 2 (the link's one crossing per step went to packet 4).
    Packet 4 waits for the busy link until step 5. Packet 5 wants the idle +y link: with a set it
    leaves in step 3; in a FIFO it is behind packet 4 and leaves in step 6. With 4 VCs (the
    paths' one dateline class owns all four) it enters the empty second VC and leaves in step 3."""
    assert _hol_fixed_paths(1, "set") == [1, 2, 3, 4, 5, 3]
    assert _hol_fixed_paths(1, "fifo") == [1, 2, 3, 4, 5, 6]
    assert _hol_fixed_paths(4, "fifo") == [1, 2, 3, 4, 5, 3]


@pytest.mark.parametrize("extra,message", [
    ([], "needs bounded buffers"),
    (["--buffer", "2", "--bandwidth", "2"], "takes B = 1"),
    (["--buffer", "1,unbounded"], "needs bounded buffers"),
    (["--buffer", "2", "--paths", "chaos"], "CHAOS has none"),
    (["--buffer", "2", "--protocols", "trial-and-failure"], "trial-and-failure is bufferless"),
    (["--buffer", "2", "--trace", "--protocols", "random"], "use random-rank, growing-rank, fifo"),
])
def test_route_refuses_fifo_vcs_it_cannot_run_in_one_line(capsys, extra, message):
    from tests.test_cli import assert_user_error, run

    command = ["route", "--network", "torus:k=4,n=2", "--problem", "h-relation:h=2", "--protocols", "fifo",
               "--vc-buffer", "fifo", *extra]
    status, out, err = run(capsys, *command)
    assert_user_error(status, out, err, message)
    assert out == ""


def test_route_says_which_vc_buffer_ran(capsys):
    """The JSON names ``vc_buffer`` only when it is ``fifo``, and the table's caption says FIFO VCs."""
    import json

    from tests.test_cli import run

    command = ["route", "--network", "torus:k=4,n=2", "--problem", "h-relation:h=3", "--buffer", "2", "--vcs", "2"]
    assert json.loads(run(capsys, *command, "--vc-buffer", "fifo", "--json")[1])["vc_buffer"] == "fifo"
    assert "vc_buffer" not in json.loads(run(capsys, *command, "--json")[1])
    assert "FIFO VCs" in " ".join(run(capsys, *command, "--vc-buffer", "fifo")[1].split())
    assert "FIFO VCs" not in " ".join(run(capsys, *command)[1].split())
    one = ["route", "--network", "butterfly:d=3", "--problem", "h-relation:h=4", "--buffer", "2", "--vc-buffer", "fifo"]
    assert "FIFO link buffers" in " ".join(run(capsys, *one)[1].split())       # no VCs: the link's one buffer


def test_a_batch_scenario_names_its_vc_buffer(tmp_path):
    from universal.experiment import run_experiment
    from universal.scenario import load_scenario

    f = tmp_path / "vb.toml"
    body = ('network = "torus:k=4,n=2"\nproblem = "h-relation:h=3"\npaths = ["dimension-order"]\n'
            'protocols = ["fifo"]\nbuffer = 2\nvcs = 2\n')
    f.write_text(body + 'vc_buffer = "fifo"\n')
    exp = load_scenario(str(f)).experiment
    assert exp.vc_buffer == "fifo" and run_experiment(exp).to_json()["vc_buffer"] == "fifo"
    f.write_text(body + 'vc_buffer = "lifo"\n')
    with pytest.raises(UserError, match="unknown VC buffer 'lifo'"):
        load_scenario(str(f))
