"""``route --trace`` on fixed paths with dateline VC classes, a FIFO source queue or FIFO VCs.

Oracles: two cases counted by hand (tornado on the 8-ring, which deadlocks with one buffer per
link and drains with two dateline classes; the head-of-line blocking case of
``tests/engine/test_fifo_vcs.py``), and the table row's run, which the trace must equal (it
refuses otherwise: checked by breaking the row).
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

from universal.experiment import Experiment, run_experiment
from universal.reporting.trace import trace_route, trace_to_json
from universal.reporting.trace_adaptive import adaptive_trace_to_json
from universal.reporting.trace_adaptive_text import print_adaptive_trace
from universal.reporting.trace_channels import trace_channels_route
from tests.reporting.test_trace_adaptive import run_cli

RING = "torus:k=8,n=1"


def test_dateline_classes_end_the_rings_deadlock_by_hand():
    """Tornado on the 8-ring (every packet 3 hops +), b = 1. One buffer per link: every packet
    enters a buffer in step 1 and none has room in step 2, a deadlock. Two VCs: the hop over the
    dateline 7->0 enters class c1, so p7 (7 -> 0 -> 1 -> 2) sits in c1 of 7->0, then moves into c1
    of 0->1 beside p0 (in c0) in step 2, while p0..p6 wait for their full c0 places; the ring
    then drains one packet per step from p7 back to p0: T = 10."""
    one = trace_to_json(trace_route(RING, "permutation:tornado", "dimension-order", "fifo", buffer=1))
    assert one["result"]["status"] == "deadlock" and one["result"]["deadlock_step"] == 2
    data = adaptive_trace_to_json(trace_channels_route(RING, "permutation:tornado", "dimension-order", "fifo",
                                                       buffer=1, vcs=2))
    assert data["classes"] == ["c0", "c1"] and data["result"]["T"] == 10
    step1, step2 = data["steps"][:2]
    assert {"link": "7->0", "packets": [7], "classes": ["c1"]} in step1["buffers"]
    assert all(b["classes"] == ["c0"] for b in step1["buffers"] if b["link"] != "7->0")
    assert {"link": "0->1", "packets": [0, 7], "classes": ["c0", "c1"]} in step2["buffers"]
    (e,) = [e for e in step2["links"] if e["link"] == "1->2"]
    assert e["lost"][0]["why"] == "waits: no room left in class c0 of 1->2"
    assert [r["delivery"] for r in [data["result"]]][0] == [10, 9, 8, 7, 6, 5, 4, 3]


def _hol_case(tmp_path) -> tuple[str, str]:
    """tests/engine/test_fifo_vcs.py's head-of-line case on the 5 x 5 torus, as files."""
    (tmp_path / "pairs.txt").write_text("1,0 2,0\n" * 4 + "0,0 2,0\n0,0 1,1\n")
    (tmp_path / "paths.txt").write_text("1,0 2,0\n" * 4 + "0,0 1,0 2,0\n0,0 1,0 1,1\n")
    return f"pairs:file={tmp_path / 'pairs.txt'}", f"explicit:file={tmp_path / 'paths.txt'}"


@pytest.mark.parametrize("vcs, vc_buffer, delivery", [(1, "set", [1, 2, 3, 4, 5, 3]), (1, "fifo", [1, 2, 3, 4, 5, 6]),
                                                       (4, "fifo", [1, 2, 3, 4, 5, 3])])
def test_head_of_line_blocking_by_hand(tmp_path, vcs, vc_buffer, delivery):
    """p5 wants the idle +y link from (1,0) but sits behind p4 in (1,0)'s buffer: with a set it
    leaves in step 3; in a FIFO it waits behind p4 (step 3 says so) until step 6; with 4 VCs it
    took the empty second VC and leaves in step 3."""
    problem, paths = _hol_case(tmp_path)
    data = adaptive_trace_to_json(trace_channels_route("torus:k=5,n=2", problem, paths, "longest-in-system",
                                                       buffer=2, vcs=vcs, vc_buffer=vc_buffer))
    assert data["result"]["delivery"] == delivery
    if (vcs, vc_buffer) == (1, "fifo"):
        (e,) = [e for e in data["steps"][2]["links"] if e["link"] == "1,0->1,1"]
        assert e["lost"] == [{"packet": 5, "key": [], "reason": "behind-head", "beaten_by": [],
                              "why": "waits: behind the head of its FIFO VC, 0,0->1,0 v0"}]
        assert {"link": "0,0->1,0", "vc": 0, "packets": [4, 5]} in data["steps"][1]["vcs"]


def test_source_queue_fifo_sends_one_packet_per_node_and_step():
    """--source-queue fifo with B = 1: in step 1 at most one packet leaves every node, the first
    of its queue (the lower id), and the run is the row's."""
    data = adaptive_trace_to_json(trace_channels_route("torus:k=4,n=2", "h-relation:h=2", "dimension-order",
                                                       "random-rank", source_queue="fifo"))
    crossed = [i for e in data["steps"][0]["links"] for i in e["crossed"]]
    sources = [data["packets"][i]["source"] for i in crossed]
    assert len(sources) == len(set(sources)) == 16
    first = {}
    for p in data["packets"]:
        first.setdefault(p["source"], p["packet"])
    assert sorted(crossed) == sorted(first.values())
    row = run_experiment(Experiment(network="torus:k=4,n=2", problem=["h-relation:h=2"], paths=["dimension-order"],
                                    protocols=["random-rank"], seeds=[0], source_queue="fifo")).rows[0]
    assert data["result"]["T"] == row.T


@pytest.mark.parametrize("protocol", ["random-rank", "growing-rank", "fifo", "farthest-to-go", "nearest-to-go",
                                      "longest-in-system"])
def test_every_protocol_is_the_rows_run(protocol):
    """Valiant's paths need 4 dateline classes on the 4-ary 2-cube: the trace is the row's run."""
    data = adaptive_trace_to_json(trace_channels_route("torus:k=4,n=2", "h-relation:h=2", "valiant", protocol,
                                                       buffer=1, vcs=4))
    row = run_experiment(Experiment(network="torus:k=4,n=2", problem=["h-relation:h=2"], paths=["valiant"],
                                    protocols=[protocol], seeds=[0], buffer=1, vcs=4)).rows[0]
    assert (data["result"]["T"], data["result"]["C"], data["result"]["D"]) == (row.T, row.C, row.D)
    assert data["classes"] == ["c0", "c1", "c2", "c3"]
    text = io.StringIO()
    print_adaptive_trace(data, Console(file=text, width=80, color_system=None))
    assert max(len(line) for line in text.getvalue().splitlines()) <= 80


def test_refuses_a_run_unlike_the_rows(monkeypatch):
    """Break the row's run (one packet delivered a step late): the trace refuses."""
    import universal.engine.batch as batch

    real = batch.simulate

    def late(*args, **kwargs):
        res = real(*args, **kwargs)
        res.delivery = res.delivery + np.eye(1, len(res.delivery), dtype=np.int64)[0]
        return res

    monkeypatch.setattr(batch, "simulate", late)
    with pytest.raises(RuntimeError, match="differs"):
        trace_channels_route(RING, "permutation:tornado", "dimension-order", "fifo", buffer=1, vcs=2)


def test_cli_traces_dateline_classes(capsys):
    status, out, err = run_cli(capsys, "route", "--network", RING, "--problem", "permutation:tornado", "--paths",
                               "dimension-order", "--protocols", "fifo", "--buffer", "1", "--vcs", "2", "--trace")
    assert status == 0, err
    assert "7->0 [p7:c1]" in " ".join(out.split()) and "T = 10" in out
