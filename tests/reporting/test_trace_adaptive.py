"""``route --trace`` for adaptive routings: the reference engine's run step by step.

Oracles: a case counted by hand (MIN AD on the 3 x 3 torus), the table row's own run (the one
engine's deliveries and crossings, rebuilt from the trace alone), the CHAOS moves into the
shared queues that ``route --html`` draws (``BatchRun.queued``), and each routing's choice rule
read off every recorded choice.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from rich.console import Console

from universal.cli import main
from universal.engine.batch import route_batch
from universal.experiment import Experiment, run_experiment
from universal.reporting.trace_adaptive import adaptive_trace_to_json, trace_adaptive_route
from universal.reporting.trace_adaptive_text import print_adaptive_trace

TORUS = "torus:k=4,n=2"


def hand_pairs(tmp_path) -> str:
    """Two packets 1,0 -> 1,1, one 0,0 -> 1,1 (two allowed first links), two 0,1 -> 1,1."""
    path = tmp_path / "hand.txt"
    path.write_text("1,0 1,1\n1,0 1,1\n0,0 1,1\n0,1 1,1\n0,1 1,1\n")
    return f"pairs:file={path}"


def text(data: dict) -> str:
    buf = io.StringIO()
    print_adaptive_trace(data, Console(file=buf, width=80, color_system=None))
    return buf.getvalue()


def test_min_adaptive_by_hand(tmp_path):
    """Step 1: p0 and p3 cross (p1, p4 lose on the lower id, all arrived 0), p2 crosses its first
    link, either one (both have 0 waiting). Step 2: p1 and p4 cross; p2, now at 1,0 or 0,1 with one
    link left, loses it to p1 or p4 (arrived 0 before 1). Step 3: p2 crosses. T = 3, 6 hops."""
    data = adaptive_trace_to_json(trace_adaptive_route("torus:k=3,n=2", hand_pairs(tmp_path), "min-adaptive", "fifo"))
    r = data["result"]
    assert (r["T"], r["delivery"], r["hops"], len(data["steps"])) == (3, [1, 2, 3, 1, 2], 6, 3)
    step1, step2, step3 = data["steps"]
    (choice,) = [c for c in step1["choices"] if c["packet"] == 2]
    assert choice["allowed"] == [{"link": "0,0->1,0", "waiting": 0}, {"link": "0,0->0,1", "waiting": 0}]
    assert choice["took"] in ("0,0->1,0", "0,0->0,1")
    lost1 = {x["packet"]: x for e in step1["links"] for x in e["lost"]}
    assert set(lost1) == {1, 4} and lost1[1]["beaten_by"] == [0] and lost1[4]["beaten_by"] == [3]
    assert lost1[1]["why"] == "lost to p0 (both arrived 0, lower id)"
    (lost2,) = [x for e in step2["links"] for x in e["lost"]]
    assert lost2["packet"] == 2 and lost2["reason"] == "lower-key"
    assert lost2["why"].endswith("(arrived 0 before arrived 1)")
    assert [s["delivered"] for s in data["steps"]] == [[0, 3], [1, 4], [2]]
    assert step3["buffers"] == [] and step1["buffers"] == [{"link": choice["took"], "packets": [2]}]
    out = text(data)
    assert "p2 at 0,0 chose among 0,0->1,0 (0), 0,0->0,1 (0)" in out and "T = 3: all 5 packets delivered" in out


def crossings_of(data: dict, net) -> np.ndarray:
    """(step, link, packet) of every crossing, from the trace alone."""
    ids = {net.link_label(e): e for e in range(net.num_links)}
    rows = [(s["step"], ids[e["link"]], i) for s in data["steps"] for e in s["links"] for i in e["crossed"]]
    return np.array(sorted(rows), dtype=np.int64).reshape(-1, 3)


@pytest.mark.parametrize("routing", ["min-adaptive", "goal", "ugal", "chaos:queue=2"])
@pytest.mark.parametrize("seed", [0, 1])
def test_equals_the_table_rows_run(routing, seed):
    """The trace's deliveries and crossings are the row's run (the one engine's), the row's T."""
    problem, buffer = "permutation:random", 1
    trace = trace_adaptive_route(TORUS, problem, routing, "fifo", seed=seed, buffer=buffer)
    data = adaptive_trace_to_json(trace)
    res = run_experiment(Experiment(TORUS, problem, [routing], ["fifo"], seeds=[seed], buffer=buffer), keep_runs=True)
    (paths, run), = res.runs
    delivery = [0 if len(p["path"]) == 1 else -1 for p in data["packets"]]     # no hop: delivered in step 0
    for s in data["steps"]:
        for i in s["delivered"]:
            delivery[i] = s["step"]
    assert delivery == run.delivery.tolist() == data["result"]["delivery"]
    assert data["result"]["T"] == res.rows[0].T and len(data["steps"]) == res.rows[0].T
    expected = run.crossings[np.lexsort((run.crossings[:, 2], run.crossings[:, 1], run.crossings[:, 0]))]
    assert np.array_equal(crossings_of(data, paths.network), expected)
    assert (data["result"]["C"], data["result"]["D"]) == (res.rows[0].C, res.rows[0].D)


@pytest.mark.parametrize("routing", ["min-adaptive", "goal", "ugal:threshold=-1", "chaos:queue=1"])
def test_every_choice_follows_the_rule(routing):
    """Every choice takes an allowed link; MIN AD, GOAL and UGAL one with the fewest waiting; CHAOS
    one with room first, then the fewest others waiting (or a deflection off the allowed links, from
    a full queue). (UGAL with threshold -1: in a batch every packet decides in step 1, when no packet
    waits for a link yet, so with the default threshold 0 none would take Valiant's path.)"""
    data = adaptive_trace_to_json(trace_adaptive_route(TORUS, "h-relation:h=4", routing, "fifo", buffer=1))
    choices = [c for s in data["steps"] for c in s["choices"]]
    assert choices
    for c in choices:
        links = [a["link"] for a in c["allowed"]]
        waiting = [a["waiting"] for a in c["allowed"]]
        if c.get("deflected"):
            assert c["took"] not in links and not any(c["room"])
            continue
        assert c["took"] in links
        k = links.index(c["took"])
        if "room" in c:             # room first, then the fewest other packets waiting
            assert c["room"][k] or not any(c["room"])
            assert waiting[k] == min(w for w, room in zip(waiting, c["room"]) if room == c["room"][k])
        else:
            assert waiting[k] == min(waiting)
    assert sum(len({a["waiting"] for a in c["allowed"]}) > 1 for c in choices) >= 5     # counts that decide
    if routing.startswith("ugal"):
        assert {c["phase"] for c in choices if "phase" in c} == {"valiant"}
        for c in choices:           # a Valiant packet passes its intermediate
            if c.get("phase") == "valiant":
                assert c["via"] in data["packets"][c["packet"]]["path"]
        decided = [c["packet"] for c in choices if "phase" in c]    # one decision at the source, when its
        assert 0 < len(decided) == len(set(decided)) <= data["n"]    # intermediate is neither end


def test_chaos_shared_queue_is_named():
    """h-relation:h=2 on the 3 x 3 torus, seed 4, b = 1, one place per queue: two packets lose their
    link, move into their node's shared queue, sit there, and leave it in the next step; the moves are
    the ones ``route --html`` draws (the reference's ``queued``)."""
    trace = trace_adaptive_route("torus:k=3,n=2", "h-relation:h=2", "chaos:queue=1", "fifo", seed=4, buffer=1)
    data = adaptive_trace_to_json(trace)
    entered = [(s["step"], i) for s in data["steps"] for i in s["queue_events"]["entered"]]
    assert entered and entered == sorted(trace.run.queued)
    for t, i in entered:
        s = data["steps"][t - 1]
        assert any(i in q["packets"] for q in s["queues"])                  # it sits there after the step
        assert any(x["packet"] == i for e in s["links"] for x in e["lost"])   # having lost its link
        left = [u["step"] for u in data["steps"] if i in u["queue_events"]["left"]]
        assert left and left[0] > t
    assert all(len(q["packets"]) <= 1 for s in data["steps"] for q in s["queues"])
    assert any(x["reason"] == "held" for s in data["steps"] for e in s["links"] for x in e["lost"])
    out = text(data)
    step, pid = entered[0]
    assert f"p{pid}" in out and "entered a shared queue" in out and "left a shared queue" in out
    assert "held at its source by the injection gate" in out


def test_refuses_a_run_unlike_the_rows(monkeypatch):
    """The trace checks the reference against the row's run, and refuses when they differ."""
    import universal.engine.batch as batch

    fast = batch._fast

    def off_by_one(*args, **kwargs):
        delivered, crossings, status, most, blocked = fast(*args, **kwargs)
        return delivered + 1, crossings, status, most, blocked

    monkeypatch.setattr(batch, "_fast", off_by_one)
    with pytest.raises(RuntimeError, match="differs"):
        trace_adaptive_route("torus:k=3,n=2", "permutation:random", "min-adaptive", "fifo")


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_json_shape(capsys):
    status, out, err = run_cli(capsys, "route", "--network", "torus:k=3,n=2", "--problem", "h-relation:h=2",
                               "--paths", "chaos:queue=1", "--buffer", "1", "--protocols", "fifo", "--seed", "4",
                               "--trace", "--json")
    assert status == 0, err
    data = json.loads(out)
    assert {"network", "problem", "paths", "routing", "seed", "protocol", "adaptive", "n", "B", "b", "queue", "key",
            "rule", "choice", "packets", "steps", "result", "vcs", "source_queue", "vc_buffer", "classes"} <= set(data)
    assert data["adaptive"] is True and data["routing"] == "chaos" and data["queue"] == "1"
    step = data["steps"][0]
    assert set(step) == {"step", "choices", "sources", "links", "queue_held", "delivered", "buffers", "deadlock",
                         "queues", "queue_events"}
    assert set(step["links"][0]) == {"link", "contenders", "crossed", "lost"}
    assert set(step["choices"][0]) == {"packet", "node", "allowed", "took", "room", "deflected"}
    assert set(data["packets"][0]) == {"packet", "source", "dest", "path"}


@pytest.mark.parametrize("argv, fragment", [
    (["--network", "torus:k=3,n=2", "--problem", "h-relation:h=8"], "72 packets, more than 64"),
    (["--network", "torus:k=17,n=2", "--problem", "permutation:random"], "289 nodes, more than 256"),
    (["--network", TORUS, "--problem", "permutation:random", "--vcs", "2", "--buffer", "1"], "needs 3 virtual channels"),
    (["--network", TORUS, "--problem", "permutation:random", "--protocols", "growing-rank"], "not available"),
])
def test_refused_with_one_line(argv, fragment, capsys):
    status, out, err = run_cli(capsys, "route", *argv, "--paths", "min-adaptive", "--trace")
    assert status == 2 and fragment in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_chaos_takes_vcs_as_its_queue_budget(capsys):
    """CHAOS has no VCs: --vcs 2 with b = 1 gives its shared queue (2 - 1) x 1 x 4 = 4 places."""
    status, out, err = run_cli(capsys, "route", "--network", TORUS, "--problem", "permutation:random", "--paths",
                               "chaos", "--buffer", "1", "--vcs", "2", "--protocols", "fifo", "--trace", "--json")
    assert status == 0, err
    assert json.loads(out)["queue"] == "4"


def test_ugal_paths_choose_at_the_source():
    """UGAL-L on a dragonfly: every packet takes its minimal or its Valiant path in step 1."""
    data = adaptive_trace_to_json(trace_adaptive_route("dragonfly:p=1", "permutation:random", "ugal-l", "fifo"))
    sources = data["steps"][0]["sources"]
    assert [s["packet"] for s in sources] == list(range(data["n"]))
    for s in sources:
        hops = len(data["packets"][s["packet"]]["path"]) - 1
        assert hops == s[s["took"]]


def test_bandwidth_two_losses_name_the_winners():
    """B = 2: a packet that loses did so to the two that crossed, ahead of it."""
    trace = trace_adaptive_route("torus:k=3,n=2", "h-relation:h=4", "min-adaptive", "fifo", seed=1, bandwidth=2)
    data = adaptive_trace_to_json(trace)
    lost = [(e, x) for s in data["steps"] for e in s["links"] for x in e["lost"]]
    assert lost and all(x["reason"] == "bandwidth" and x["beaten_by"] == e["crossed"] and len(e["crossed"]) == 2
                        for e, x in lost)
    row = route_batch(trace.run.paths.network, trace.run.paths.sources, trace.run.paths.dests, "min-adaptive", "fifo",
                      seed=np.random.SeedSequence(1).spawn(3)[2], bandwidth=2)
    assert data["result"]["delivery"] == row.result.delivery.tolist()


def test_deadlock_is_the_rows():
    """MIN AD with b = 1 and one VC on the 8-ring deadlocks (h-relation:h=4, seed 0): the trace's last
    step moves nothing, and its waiting packets and their links are the row's blocked packets and
    full links."""
    data = adaptive_trace_to_json(trace_adaptive_route("torus:k=8,n=1", "h-relation:h=4", "min-adaptive", "fifo",
                                                       buffer=1))
    res = run_experiment(Experiment("torus:k=8,n=1", "h-relation:h=4", ["min-adaptive"], ["fifo"], buffer=1))
    row, last = res.rows[0], data["steps"][-1]
    assert row.status == data["result"]["status"] == "deadlock" and last["deadlock"]
    assert row.deadlock_step == last["step"] == data["result"]["deadlock_step"]
    waiting = sorted(x["packet"] for e in last["links"] for x in e["lost"])
    assert all(x["reason"] == "buffer-full" for e in last["links"] for x in e["lost"])
    assert waiting == row.blocked_packets == data["result"]["blocked"]
    assert sorted(e["link"] for e in last["links"]) == sorted(row.full_links) == sorted(data["result"]["full_links"])
    assert "Deadlock in step 8" in text(data)


def test_splitter_choices_are_the_output_sets_edges():
    """The multibutterfly with s = 16: a packet at level 0 chooses among the √s/2 = 2 edges into
    the output set toward its row (at level 1, k = 1: no choice); the run is the row's (checked)."""
    data = adaptive_trace_to_json(trace_adaptive_route("multibutterfly:s=16,d=2", "permutation:random", "splitter",
                                                       "fifo"))
    first = data["steps"][0]["choices"]
    assert len(first) == data["n"] and all(len(c["allowed"]) == 2 for c in first)
    assert all(c["took"] in [a["link"] for a in c["allowed"]] for s in data["steps"] for c in s["choices"])
    assert "ties by the packet's tie number" not in data["choice"]


def test_chaos_deflection_is_named():
    """h-relation:h=4 on the 4-ary 2-cube, seed 14, b = 1, one place per queue: p61 sits in the full
    shared queue of 2,3 after step 2, both its productive links are full in step 3, and it is deflected
    onto a link away from its destination: its path is two hops longer than the minimal one."""
    trace = trace_adaptive_route(TORUS, "h-relation:h=4", "chaos:queue=1", "fifo", seed=14, buffer=1)
    data = adaptive_trace_to_json(trace)
    deflected = [(s["step"], c) for s in data["steps"] for c in s["choices"] if c["deflected"]]
    assert [(t, c["packet"], c["node"]) for t, c in deflected] == [(3, 61, "2,3")]
    (t, c), = deflected
    assert not any(c["room"]) and c["took"] not in [a["link"] for a in c["allowed"]]
    assert {"node": "2,3", "packets": [61]} in data["steps"][t - 2]["queues"]      # in the queue after step 2
    assert 61 in data["steps"][t - 1]["queue_events"]["left"]
    net = trace.run.paths.network
    minimal = int(net.distances(trace.run.paths.sources[61:62], trace.run.paths.dests[61:62])[0])
    assert len(data["packets"][61]["path"]) - 1 == minimal + 2
    words = " ".join(text(data).split())          # (the 80-column log wraps the line)
    assert "p61 at 2,3 chose among 2,3->2,2 (0, full), 2,3->2,0 (0, full): deflected onto 2,3->1,3" in words


@pytest.mark.parametrize("protocol, words", [("random-rank", "rank"), ("fifo", "arrived"), ("farthest-to-go", "key"),
                                             ("nearest-to-go", "hops left"), ("longest-in-system", "lower id")])
def test_every_protocol_names_its_key(protocol, words):
    """Each protocol's losers say why in its own key's words; CHAOS's keys start with the place."""
    for routing in ("min-adaptive", "chaos:queue=1"):
        data = adaptive_trace_to_json(trace_adaptive_route("torus:k=3,n=2", "h-relation:h=3", routing, protocol,
                                                           buffer=1))
        whys = [x["why"] for s in data["steps"] for e in s["links"] for x in e["lost"] if x["reason"] == "lower-key"]
        assert whys and all(w.startswith("lost to p") and words in w for w in whys)
        if routing.startswith("chaos"):
            assert all(any(place in w for place in ("source", "input buffer", "shared queue")) for w in whys)
