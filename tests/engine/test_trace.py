"""The step-by-step trace (``route --trace``) shows exactly what the reference engine did.

Every test rebuilds, from the trace alone (the JSON object a user sees), what the engines
report: per-packet delivery steps, the step of every hop, the largest buffer, the deadlock,
and for the bufferless protocols the rounds, discards, crossings and the last
acknowledgement; then compares it with the reference engine's and the fast engine's results.
Recording must change nothing, and the printed log of a hand-worked case is checked line by line.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import replace
import json

import networkx as nx
import numpy as np
import pytest
from rich.console import Console

from universal.engine import simulate, simulate_reference
from universal.errors import UserError
from universal.networks import build_network, from_networkx
from universal.paths import PathCollection, route_paths
from universal.protocols import build_protocol
from universal.reporting.trace import (MAX_TRACE_COPIES, MAX_TRACE_PACKETS, check_traceable, print_trace, trace_route, trace_run,
                                       trace_to_json)
from universal.workloads import build_problem

from .helpers import with_ranks

BUFFERED = ["random-rank", "growing-rank", "fifo", "farthest-to-go", "nearest-to-go", "longest-in-system", "random"]
BUFFERLESS = ["trial-and-failure", "trial-and-failure:redraw=no", "duplication", "duplication:copies=4"]


def butterfly_case(problem: str, seed: int, system: str = "dimension-order") -> PathCollection:
    net = build_network("butterfly:d=3")
    prob = build_problem(problem, net, np.random.default_rng(seed))
    return route_paths(system, prob, net, np.random.default_rng(seed + 100))


def ring(k: int):
    return from_networkx(nx.cycle_graph(k), name=f"ring{k}")


def ring_deadlock() -> PathCollection:
    """Four packets three hops clockwise on a 4-ring: with b = 1 nothing moves in step 2."""
    return PathCollection.from_node_paths(ring(4), [[i, (i + 1) % 4, (i + 2) % 4, (i + 3) % 4] for i in range(4)])


def link_names(coll: PathCollection) -> list[list[str]]:
    """Every path as its link names ``tail->head``, as the trace prints them."""
    out = []
    for i in range(coll.size):
        nodes = [coll.network.label_of(v) for v in coll.node_path(i)]
        out.append([f"{a}->{b}" for a, b in zip(nodes, nodes[1:])])
    return out


def results(coll: PathCollection, protocol, seed: int, **kwargs):
    """The reference and the fast engine's results for the same inputs (hops recorded)."""
    ref = simulate_reference(coll, protocol, np.random.default_rng(seed), record_hops=True, **kwargs)
    fast = simulate(coll, protocol, np.random.default_rng(seed), record_hops=True, **kwargs)
    return ref, fast


# --- recording changes nothing ----------------------------------------------------------------


def same_result(a, b) -> None:
    for name, value in vars(a).items():
        other = getattr(b, name)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, other, err_msg=name)
        else:
            assert value == other, name


@pytest.mark.parametrize("protocol, kwargs", [(p, {}) for p in BUFFERED + BUFFERLESS]
                         + [("fifo", {"buffer": 1}), ("random", {"bandwidth": 2, "buffer": 1}),
                            ("trial-and-failure", {"bandwidth": 2})])
def test_recording_changes_neither_results_nor_draws(protocol, kwargs):
    coll = butterfly_case("h-relation:h=2", 3)
    plain_rng, traced_rng = np.random.default_rng(7), np.random.default_rng(7)
    plain = simulate_reference(coll, protocol, plain_rng, record_hops=True, **kwargs)
    trace: list = []
    traced = simulate_reference(coll, protocol, traced_rng, record_hops=True, trace=trace, **kwargs)
    same_result(plain, traced)
    assert plain_rng.bit_generator.state == traced_rng.bit_generator.state  # the same draws, no more
    assert trace and json.loads(json.dumps(trace)) is not None  # plain Python values only


# --- buffered protocols: rebuild the run from the trace -------------------------------------


def replay_buffered(data: dict, coll: PathCollection, bandwidth: int, buffer: int | None) -> dict:
    """What the engine reports, rebuilt from the trace; checks every step's record on the way."""
    n, names = coll.size, link_names(coll)
    hops = [[] for _ in range(n)]  # (step, link name) of every crossing, per packet
    delivery = [0 if not names[i] else -1 for i in range(n)]
    arrival = [0] * n  # step of the last crossing (FIFO's key)
    max_buffer = 0
    deadlock_step = blocked = full_links = None
    ranks = [p["rank"] for p in data["packets"]]
    for number, s in enumerate(data["steps"], start=1):
        assert s["step"] == number
        waiting = sorted(i for i in range(n) if delivery[i] < 0)
        # Every waiting packet contends for exactly the next link of its path.
        assert sorted(c["packet"] for e in s["links"] for c in e["contenders"]) == waiting
        for e in s["links"]:
            order = [(c["key"], c["packet"]) for c in e["contenders"]]
            assert order == sorted(order)  # priority order: lowest (key, id) first
            assert len(e["crossed"]) <= bandwidth
            lost = [x["packet"] for x in e["lost"]]
            assert sorted(e["crossed"] + lost) == sorted(c["packet"] for c in e["contenders"])
            for c in e["contenders"]:
                i, key = c["packet"], c["key"]
                assert names[i][len(hops[i])] == e["link"]
                made = len(hops[i])
                if data["protocol"] == "random-rank":
                    assert key == ranks[i]
                elif data["protocol"] == "growing-rank":
                    assert key == ranks[i] * data["D"] + made * data["K"]
                elif data["protocol"] == "fifo":
                    assert key == arrival[i]
                elif data["protocol"] == "nearest-to-go":
                    assert key == len(names[i]) - made
            for x in e["lost"]:
                if x["reason"] == "buffer-full":
                    assert buffer is not None and x["beaten_by"] == []
                else:  # every packet that crossed was ahead of it in (key, id) order, and B were used
                    assert x["reason"] == ("lower-key" if bandwidth == 1 else "bandwidth")
                    assert sorted(x["beaten_by"]) == sorted(e["crossed"]) and len(e["crossed"]) == bandwidth
                    assert all((c["key"], c["packet"]) < (x["key"], x["packet"])
                               for c in e["contenders"] if c["packet"] in e["crossed"])
            for i in e["crossed"]:
                hops[i].append((s["step"], e["link"]))
                arrival[i] = s["step"]
                if len(hops[i]) == len(names[i]):
                    delivery[i] = s["step"]
        assert sorted(s["delivered"]) == sorted(i for i in waiting if delivery[i] == s["step"])
        # The buffers at the end of the step: every undelivered packet that moved sits in the
        # buffer of the link it crossed last; none holds more than b.
        expect: dict[str, list[int]] = {}
        for i in range(n):
            if delivery[i] < 0 and hops[i]:
                expect.setdefault(hops[i][-1][1], []).append(i)
        assert {b["link"]: sorted(b["packets"]) for b in s["buffers"]} == expect
        if buffer is not None:
            assert all(len(b["packets"]) <= buffer for b in s["buffers"])
        if s["deadlock"]:
            assert not any(e["crossed"] for e in s["links"]) and number == len(data["steps"])
            assert all(x["reason"] == "buffer-full" for e in s["links"] for x in e["lost"])
            deadlock_step, blocked = s["step"], waiting
            full_links = sorted({e["link"] for e in s["links"]})
        else:
            max_buffer = max([max_buffer, *(len(b["packets"]) for b in s["buffers"])])
    hop_steps = [step for i in range(n) for step in
                 [h[0] for h in hops[i]] + [-1] * (len(names[i]) - len(hops[i]))]
    for i in range(n):
        assert [h[1] for h in hops[i]] == names[i][:len(hops[i])]  # along its path
    return {"delivery": delivery, "hop_steps": hop_steps, "max_buffer": max_buffer, "steps": len(data["steps"]),
            "hops": sum(map(len, hops)), "deadlock_step": deadlock_step, "blocked": blocked, "full_links": full_links}


def check_buffered(coll: PathCollection, protocol: str, seed: int, bandwidth: int = 1, buffer: int | None = None):
    trace = trace_run(coll, protocol, np.random.default_rng(seed), bandwidth=bandwidth, buffer=buffer)
    data = json.loads(json.dumps(trace_to_json(trace)))  # what a script reads
    got = replay_buffered(data, coll, bandwidth, buffer)
    net = coll.network

    def name(link: int) -> str:
        return f"{net.label_of(int(net.link_tail[link]))}->{net.label_of(int(net.link_head[link]))}"

    for res in results(coll, protocol, seed, bandwidth=bandwidth, buffer=buffer):
        assert got["delivery"] == res.delivery.tolist()
        assert got["hop_steps"] == res.hop_steps.tolist()
        assert (got["max_buffer"], got["steps"], got["hops"]) == (res.max_buffer, res.steps, res.hops)
        assert got["deadlock_step"] == res.deadlock_step
        if res.deadlock:
            assert got["blocked"] == res.blocked.tolist()
            assert got["full_links"] == sorted(name(e) for e in res.full_links)
        assert data["result"]["status"] == res.status and data["result"]["T"] == res.T
    return data


@pytest.mark.parametrize("protocol", BUFFERED)
@pytest.mark.parametrize("bandwidth", [1, 2])
def test_buffered_trace_replays_the_run(protocol, bandwidth):
    """BF(3) with every buffered protocol: a 2-relation (contention) and Valiant's bit reversal."""
    check_buffered(butterfly_case("h-relation:h=2", 1), protocol, 11, bandwidth)
    check_buffered(butterfly_case("permutation:bit-reversal", 2, "valiant"), protocol, 12, bandwidth)


@pytest.mark.parametrize("protocol", ["random-rank", "fifo", "farthest-to-go", "random"])
@pytest.mark.parametrize("bandwidth", [1, 2])
def test_bounded_buffer_trace_replays_the_run(protocol, bandwidth):
    """b = 1 on BF(3): packets wait for room ("buffer-full"); the trace shows it."""
    data = check_buffered(butterfly_case("h-relation:h=3", 4), protocol, 13, bandwidth, buffer=1)
    assert any(x["reason"] == "buffer-full" for s in data["steps"] for e in s["links"] for x in e["lost"])


@pytest.mark.parametrize("protocol", BUFFERED)
def test_ring_deadlock_trace(protocol):
    """The 4-ring with b = 1: step 1 fills every clockwise buffer, step 2 moves nothing."""
    data = check_buffered(ring_deadlock(), protocol, 5, buffer=1)
    assert [s["deadlock"] for s in data["steps"]] == [False, True]
    assert data["steps"][1]["buffers"] == [{"link": f"{i}->{(i + 1) % 4}", "packets": [i]} for i in range(4)]
    assert data["result"]["blocked"] == [0, 1, 2, 3]


# --- bufferless protocols -------------------------------------------------------------------


def replay_bufferless(data: dict, coll: PathCollection, bandwidth: int) -> dict:
    """Rounds, discards, crossings, deliveries and the last acknowledgement, from the trace."""
    n, names = coll.size, link_names(coll)
    D = max(coll.dilation, 1)
    active = [i for i in range(n) if names[i]]
    delivery = [0 if not names[i] else -1 for i in range(n)]
    crossings, discarded, finish = [], 0, 0
    steps = {s["step"]: s for s in data["steps"]}
    for j, rnd in enumerate(data["rounds"], start=1):
        t0 = (j - 1) * 4 * D
        assert (rnd["round"], rnd["first_step"], rnd["last_step"]) == (j, t0 + 1, t0 + 4 * D)
        # Every active packet sends rnd["copies"] attempts, each with a delay in [D].
        assert sorted(d["packet"] for d in rnd["draws"]) == sorted(a for a in active for _ in range(rnd["copies"]))
        assert all(0 <= d["delay"] < D for d in rnd["draws"])
        delays = {(d["packet"], d["copy"]): d["delay"] for d in rnd["draws"]}
        ranks = {d["packet"]: d["rank"] for d in rnd["draws"]}
        alive = set(delays)
        delivered: dict[int, list[int]] = {}
        for t in range(t0 + 1, t0 + 2 * D + 1):
            wants: dict[str, list[tuple[int, int]]] = {}
            for (i, q) in sorted(alive):
                k = t - t0 - delays[(i, q)] - 1
                if 0 <= k < len(names[i]):
                    wants.setdefault(names[i][k], []).append((i, q))
            s = steps.get(t, {"links": [], "delivered": []})
            assert {e["link"]: sorted((w["packet"], w["copy"]) for w in e["wanting"]) for e in s["links"]} == wants
            for e in s["links"]:
                crossed = [(x["packet"], x["copy"]) for x in e["crossed"]]
                lost = [(x["packet"], x["copy"]) for x in e["discarded"]]
                if "duplication" in data["protocol"]:  # B-collision rule
                    assert (crossed, lost) == ((crossed, []) if len(e["wanting"]) <= bandwidth else ([], lost))
                    assert all(x["reason"] == "collision" for x in e["discarded"])
                else:  # B-priority rule, by (rank, packet id)
                    order = sorted(wants[e["link"]], key=lambda a: (ranks[a[0]], a[0]))
                    assert (crossed, lost) == (order[:bandwidth], order[bandwidth:])
                    assert all(x["reason"] == "lower-rank" for x in e["discarded"])
                alive -= set(lost)
                discarded += len(lost)
                for i, q in crossed:
                    crossings.append((t, e["link"], i))
                    if t - t0 - delays[(i, q)] == len(names[i]):
                        delivered.setdefault(i, []).append(delays[(i, q)])
                        if delivery[i] < 0:
                            delivery[i] = t
            assert sorted((x["packet"], x["copy"]) for x in s["delivered"]) == \
                sorted(a for a in alive if t - t0 - delays[a] == len(names[a[0]]))
        acks = {i: t0 + 4 * D - max(ds) for i, ds in delivered.items()}
        assert {a["packet"]: a["step"] for a in rnd["acks"]} == acks
        finish = max([finish, *acks.values()])
        active = [i for i in active if i not in acks]
        assert rnd["still_active"] == active
    return {"delivery": delivery, "rounds": len(data["rounds"]), "discarded": discarded, "finish": finish,
            "crossings": sorted(crossings)}


@pytest.mark.parametrize("protocol", BUFFERLESS)
@pytest.mark.parametrize("bandwidth", [1, 2])
@pytest.mark.parametrize("problem, seed", [("h-relation:h=2", 1), ("h-relation:h=4", 2), ("permutation:random", 3)])
def test_bufferless_trace_replays_the_run(protocol, bandwidth, problem, seed):
    coll = butterfly_case(problem, seed)
    trace = trace_run(coll, protocol, np.random.default_rng(seed), bandwidth=bandwidth)
    data = json.loads(json.dumps(trace_to_json(trace)))
    got = replay_bufferless(data, coll, bandwidth)
    net = coll.network
    run = build_protocol(protocol)
    if run.name == "duplication":   # a trace stops doubling at MAX_TRACE_COPIES copies a round
        run = replace(run, max_round_copies=MAX_TRACE_COPIES)
    for res in results(coll, run, seed, bandwidth=bandwidth):
        assert got["delivery"] == res.delivery.tolist()
        assert (got["rounds"], got["discarded"], got["finish"]) == (res.rounds, res.discarded, res.finish)
        assert got["crossings"] == sorted((t, f"{net.label_of(int(net.link_tail[e]))}->"
                                              f"{net.label_of(int(net.link_head[e]))}", i)
                                          for t, e, i in res.crossings.tolist())
        assert data["result"]["T"] == res.T and data["result"]["status"] == res.status


# --- hand-worked cases: the printed log ------------------------------------------------------




def printed(data) -> list[str]:
    console = Console(record=True, width=200, emoji=False, markup=False, highlight=False, file=io.StringIO())
    print_trace(data, console)
    return [line.rstrip() for line in console.export_text().splitlines()]


def test_hand_worked_contention_log():
    """Line 0 - 1 - 2; packet 0 goes 0 -> 1 -> 2 with rank 5, packet 1 goes 0 -> 1 with rank 2.

    step 1: both want link 0->1; packet 1 has the lower rank and crosses (its last link: it is
            delivered); packet 0 loses to it (rank 2 < 5) and stays in its injection buffer.
    step 2: packet 0 crosses 0->1 alone and sits in that link's buffer.
    step 3: packet 0 crosses 1->2: delivered. T = 3, largest buffer 1, latencies 3 and 1.
    """
    coll = PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2], [0, 1]])
    trace = trace_run(coll, with_ranks("random-rank", [5, 2]), np.random.default_rng(0))
    data = trace_to_json(trace)
    first = data["steps"][0]["links"][0]
    assert first["contenders"] == [{"packet": 1, "key": 2}, {"packet": 0, "key": 5}]
    assert first["crossed"] == [1]
    assert first["lost"] == [{"packet": 0, "key": 5, "reason": "lower-key", "beaten_by": [1],
                              "why": "lost to p1 (rank 2 < 5)"}]
    lines = printed(data)
    assert lines[0] == "Trace of random-rank on mesh:k=3,n=1: explicit paths"
    assert lines[1] == "2 packets, C = 2, D = 2, B = 1, unbounded link buffers; lower bound max(C/B, D) = 2"
    assert lines[2].startswith("Contention: lowest rank wins; ties go to the lower packet id; ranks drawn from 0..")
    assert lines[lines.index("step 1"):] == [
        "step 1",
        "  0->1: p1 (rank 2), p0 (rank 5) -> p1 crossed; p0 lost to p1 (rank 2 < 5)",
        "  delivered: p1",
        "  buffers: all empty",
        "step 2",
        "  0->1: p0 crossed (rank 5)",
        "  buffers: 0->1 [p0]",
        "step 3",
        "  1->2: p0 crossed (rank 5)",
        "  delivered: p0",
        "  buffers: all empty",
        "T = 3: all 2 packets delivered; largest buffer 1, mean latency 2.00, 3 hops",
    ]


def test_hand_worked_ties_bandwidth_and_full_buffers():
    """Line 0 - 1 - 2, B = 2, b = 1, longest-in-system (all keys 0: by id); packets 0 and 1 go
    0 -> 1 -> 2, packet 2 and 3 go 0 -> 1.

    step 1: link 0->1 has all four, in order p0 p1 p2 p3 (keys 0, by id). p0 enters the empty
            buffer (b = 1); p1 finds no room; p2 crosses its last link (needs no room): B = 2
            crossings used, so p3 loses on bandwidth to p0 and p2.
    """
    coll = PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2], [0, 1, 2], [0, 1], [0, 1]])
    data = trace_to_json(trace_run(coll, "longest-in-system", np.random.default_rng(0), bandwidth=2, buffer=1))
    link = data["steps"][0]["links"][0]
    assert link["crossed"] == [0, 2]
    assert [(x["packet"], x["reason"], x["beaten_by"]) for x in link["lost"]] == \
        [(1, "buffer-full", []), (3, "bandwidth", [0, 2])]
    lines = printed(data)
    assert lines[lines.index("step 1") + 1] == (
        "  0->1: p0 (key 0), p1 (key 0), p2 (key 0), p3 (key 0) -> p0 p2 crossed; "
        "p1 waits: no room in the buffer of 0->1; p3 lost: B = 2 crossings used up by p0 (key 0), p2 (key 0)")


def test_hand_worked_trial_and_failure_log():
    """Line 0 - 1 - 2, trial-and-failure, K = 4; packet 0 goes 0 -> 1 -> 2, packet 1 goes 0 -> 1.

    D = 2, rounds of 8 steps. Draws in round 1 (scripted): ranks [3, 1], delays [0, 0]: both want
    0->1 in step 1; packet 1 has the lower rank and goes on (delivered at step 1, ack at step 8);
    packet 0 is discarded. Round 2 (t0 = 8, steps 9..16), in the variant redraw=yes: ranks [2, 0],
    delays [1, 0]: packet 0 alone crosses 0->1 in step t0 + 1 + 0 + 1 = 10 and 1->2 in step 11
    (delivered); its ack arrives at t0 + 4D - delay = 8 + 8 - 1 = 15 = T. By default the draws are
    kept: packet 0 (delay 0) crosses in steps 9 and 10, ack at 8 + 8 - 0 = 16 = T.
    """

    class Script:
        def __init__(self, *draws):
            self.draws = [np.array(d, dtype=np.int64) for d in draws]

        def integers(self, low, high=None, size=None, dtype=np.int64):
            return self.draws.pop(0)

    coll = PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2], [0, 1]])
    kept = printed(trace_to_json(trace_run(coll, "trial-and-failure:K=4", Script([3, 1], [0, 0]))))
    assert kept[kept.index("round 2 (steps 9..16)"):] == [
        "round 2 (steps 9..16)",
        "  draws: p0 delay 0 rank 3",
        "  step 9: 0->1 p0",
        "  step 10: 1->2 p0",
        "    delivered: p0",
        "  acknowledged: p0 at step 16; still active: none",
        "T = 16 (last acknowledgement; last delivery at step 10): 2 rounds, 1 discarded, 3 link crossings",
    ]
    trace = trace_run(coll, "trial-and-failure:K=4,redraw=yes", Script([3, 1], [0, 0], [2, 0], [1, 0]))
    data = trace_to_json(trace)
    assert data["result"]["T"] == 15 and data["result"]["discarded"] == 1
    lines = printed(data)
    start = lines.index("round 1 (steps 1..8)")
    assert lines[start:] == [
        "round 1 (steps 1..8)",
        "  draws: p0 delay 0 rank 3, p1 delay 0 rank 1",
        "  step 1: 0->1 p1",
        "    p0 discarded at 0->1: lost to p1 (rank 1 < 3)",
        "    delivered: p1",
        "  acknowledged: p1 at step 8; still active: p0",
        "round 2 (steps 9..16)",
        "  draws: p0 delay 1 rank 2",
        "  step 10: 0->1 p0",
        "  step 11: 1->2 p0",
        "    delivered: p0",
        "  acknowledged: p0 at step 15; still active: none",
        "T = 15 (last acknowledgement; last delivery at step 11): 2 rounds, 1 discarded, 3 link crossings",
    ]


def test_duplication_collision_is_named():
    """Two copies on one link with B = 1: both discarded by the B-collision rule."""
    coll = butterfly_case("h-relation:h=2", 1)
    data = trace_to_json(trace_run(coll, "duplication", np.random.default_rng(0)))
    gone = [x for s in data["steps"] for e in s["links"] for x in e["discarded"]]
    assert gone and all(x["reason"] == "collision" and "more than B = 1" in x["why"] for x in gone)
    assert len(gone) == data["result"]["discarded"]


# --- limits, names, JSON ---------------------------------------------------------------------


def test_too_large_is_refused_in_one_line():
    with pytest.raises(UserError, match=f"more than {MAX_TRACE_PACKETS}") as err:
        trace_route("butterfly:d=5", "h-relation:h=4")
    assert "\n" not in str(err.value)
    with pytest.raises(UserError, match="nodes"):
        trace_route("torus:k=20,n=2", "permutation:random")
    coll = butterfly_case("h-relation:h=2", 0)
    check_traceable(coll)  # 16 packets: fine
    big = PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2]] * (MAX_TRACE_PACKETS + 1))
    with pytest.raises(UserError, match="packets"):
        trace_run(big, "fifo", np.random.default_rng(0))


def test_trace_route_is_the_route_row(capsys):
    """trace_route splits the seed like ``route`` does: same T as the experiment's row."""
    from universal.experiment import Experiment, run_experiment

    exp = Experiment("torus:k=4,n=2", "permutation:tornado", ["valiant"], ["growing-rank"], seeds=[3], buffer=2)
    row = run_experiment(exp).rows[0]
    trace = trace_route("torus:k=4,n=2", "permutation:tornado", "valiant", "growing-rank", seed=3, buffer=2)
    assert (trace.result.T, trace.result.hops, trace.result.max_buffer) == (row.T, row.hops, row.max_buffer)
    print_trace(trace)  # on the CLI's console: names such as permutation:tornado stay as they are
    assert "permutation:tornado, valiant paths" in capsys.readouterr().out
    lines = printed(trace)
    assert lines[0] == "Trace of growing-rank on torus:k=4,n=2: permutation:tornado, valiant paths, seed 3"
    assert any("2,0->3,0" in line or "3,0->0,0" in line for line in lines)  # links as tail->head labels


def test_json_round_trips():
    for protocol, kwargs in [("random-rank", {}), ("fifo", {"buffer": 1}), ("trial-and-failure", {}),
                             ("duplication", {"bandwidth": 2})]:
        data = trace_to_json(trace_run(butterfly_case("h-relation:h=2", 2), protocol, np.random.default_rng(1),
                                       **kwargs))
        assert json.loads(json.dumps(data)) == data
        assert printed(json.loads(json.dumps(data))) == printed(data)  # the log prints from the JSON
    data = trace_to_json(trace_run(ring_deadlock(), "fifo", np.random.default_rng(0), buffer=1))
    assert json.loads(json.dumps(data)) == data and data["result"]["status"] == "deadlock"
    assert printed(data)[-1].startswith("Deadlock in step 2: no packet could move; 4 packets wait (p0 p1 p2 p3)")


def test_default_duplication_doubles_its_copies_round_by_round():
    """A small case of bufferless_tradeoff (a dense h-relation, Valiant's paths on a butterfly,
    B = 1): the survey's duplication sends 1, 2, 4, ... copies per packet in rounds 1, 2, 3, ...
    (no cap), and every round's draws hold that many delays per active packet."""
    trace = trace_route("butterfly:d=3", "h-relation:h=8", "valiant", "duplication", seed=0)
    data = trace_to_json(trace)
    copies = [r["copies"] for r in data["rounds"]]
    assert len(copies) >= 3 and copies == [2 ** j for j in range(len(copies))]
    assert data["result"]["copies_capped"] is False
    for r in data["rounds"]:
        per_packet = Counter(d["packet"] for d in r["draws"])
        assert set(per_packet.values()) == {r["copies"]}


def test_random_delay_trace_shows_the_delays():
    """random-delay's trace lists every packet's delay; no packet crosses a link before the step
    after its delay, and the delays are the ones the engine drew (the same generator)."""
    from universal.reporting.trace import trace_to_json

    data = trace_to_json(trace_route("mesh:k=4,n=1", "permutation:bit-complement", "dimension-order",
                                     "random-delay:alpha=2", seed=0))
    delays = {p["packet"]: p["delay"] for p in data["packets"]}
    assert set(delays) == {0, 1, 2, 3} and all(0 <= d < 2 * 2 for d in delays.values())  # alpha * C, C = 2
    first_move = {}
    for step in data["steps"]:
        for link in step["links"]:
            for packet in link["crossed"]:
                first_move.setdefault(packet, step["step"])
    assert set(first_move) == set(delays)
    assert all(first_move[p] > delays[p] for p in delays)
    # Packets with delay 0 start at different nodes, so none competes for its first link: step 1.
    assert all(first_move[p] == 1 for p in delays if delays[p] == 0)
