"""``route --trace``: UGAL's comparison with the engine's numbers, and runs with virtual channels.

Oracles: one UGAL decision counted by hand from the trace's own buffers line; every printed
comparison redone from its printed numbers (the products, and the side the rule picks must be
the side the packet took); hop counts H against the network's distances (a second method);
the *-channel choice rule redone from every recorded option.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from universal.networks import build_network
from universal.reporting.trace_adaptive import adaptive_trace_to_json, trace_adaptive_route
from universal.reporting.trace_adaptive_text import print_adaptive_trace
from tests.reporting.test_trace_adaptive import run_cli

TORUS = "torus:k=4,n=2"
#: With a FIFO source queue a packet decides when it reaches the queue's head, and with --buffer the
#: used credits count in q: some packets go Valiant (6 of 64 here).
VALIANT_CASE = {"source_queue": "fifo", "buffer": 2}


def wide_text(data: dict) -> str:
    buf = io.StringIO()
    print_adaptive_trace(data, Console(file=buf, width=400, color_system=None))
    return buf.getvalue()


def ugal_data(problem: str = "h-relation:h=4", routing: str = "ugal", **options) -> dict:
    options = {**VALIANT_CASE, **options}
    return adaptive_trace_to_json(trace_adaptive_route(TORUS, problem, routing, "fifo", **options))


_HEAD = re.compile(r"p(\d+) at (\S+): (minimal|Valiant via \S+), since")
_COMPARISON = re.compile(r"q_min·H_min = (\d+)·(\d+) = (\d+) (>|<=) q_val·H_val \+ T = (\d+)·(\d+) \+ (-?[\d.]+) = "
                         r"(-?[\d.]+)")


def decision_lines(text: str) -> list[tuple[re.Match, re.Match]]:
    """Every printed UGAL decision: its head line and the comparison on the line below it."""
    lines = [line.strip() for line in text.splitlines()]
    heads = [(k, _HEAD.fullmatch(line)) for k, line in enumerate(lines) if line.startswith("p")]
    return [(head, _COMPARISON.fullmatch(lines[k + 1])) for k, head in heads if head]


@pytest.mark.parametrize("routing", ["ugal", "ugal:threshold=1"])
def test_printed_products_reproduce_every_choice(routing):
    """Every printed UGAL line: its products are the products of its numbers, the comparison is
    the rule's (Valiant when q_min·H_min > q_val·H_val + T, minimal on a tie) and the packet went
    the way the comparison says: via the intermediate it names, or minimally (its hops are H_min)."""
    data = ugal_data(routing=routing)
    lines = decision_lines(wide_text(data))
    decided = [c for s in data["steps"] for c in s["choices"] if "phase" in c]
    assert len(lines) == len(decided) > 0
    sides = set()
    for head, m in lines:
        assert m, head.group(0)
        pid, side = head.group(1), head.group(3)
        qm, hm, left, op, qv, hv, T, right = (*map(float, m.groups()[:3]), m.group(4), *map(float, m.groups()[4:]))
        assert left == qm * hm and right == qv * hv + T
        assert op == (">" if left > right else "<=")
        valiant = side.startswith("Valiant")
        assert valiant == (op == ">")
        path = data["packets"][int(pid)]["path"]
        if valiant:
            assert side.split()[-1] in path[1:-1]
        else:
            assert len(path) - 1 == hm
        sides.add(valiant)
    assert sides == {True, False}       # both outcomes are checked


def test_one_decision_counted_by_hand():
    """p20 (0,1 -> 3,1, one hop west) decides in step 2, at the head of its source queue. At the
    end of step 1 the buffers line shows p4 in the buffer of 0,1->3,1: one used credit, and no
    packet waits for it, so q_min = 1, H_min = 1. Its intermediate 3,2 is reached from 0,1 by
    0,1->3,1 (q = 1) or 0,1->0,2 (empty: q = 0), so q_val = 0, and H_val = 2 + 1 = 3. 1·1 = 1 >
    0·3 + 0: Valiant, and its path goes through 3,2."""
    data = ugal_data()
    step1, step2 = data["steps"][0], data["steps"][1]
    assert {"link": "0,1->3,1", "packets": [4]} in step1["buffers"]
    (c,) = [c for c in step2["choices"] if c["packet"] == 20 and "phase" in c]
    assert (c["q_min"], c["H_min"], c["q_val"], c["H_val"], c["T"]) == (1, 1, 0, 3, 0)
    assert (c["phase"], c["via"], c["at"]) == ("valiant", "3,2", "0,1")
    assert data["packets"][20]["path"] == ["0,1", "0,2", "3,2", "3,1"]
    assert ("p20 at 0,1: Valiant via 3,2, since\n      q_min·H_min = 1·1 = 1 > q_val·H_val + T = 0·3 + 0 = 0"
            in wide_text(data))


def test_hops_are_the_networks_distances():
    """H_min = d(source, dest) and H_val = d(source, via) + d(via, dest), from the network's own
    distance table (not the router's), for every decision."""
    data = ugal_data()
    net = build_network(TORUS)
    node = {net.label_of(v): v for v in range(net.num_nodes)}
    d = net.distances
    for c in (c for s in data["steps"] for c in s["choices"] if "phase" in c):
        p = data["packets"][c["packet"]]
        src, dst, via = node[p["source"]], node[p["dest"]], node[c["via"]]
        assert c["H_min"] == int(d([src], [dst])[0])
        assert c["H_val"] == int(d([src], [via])[0] + d([via], [dst])[0])


def test_default_source_queue_decides_on_empty_queues():
    """With the default source queue every packet decides in step 1, before any queue holds a
    packet: q_min = q_val = 0 everywhere, so every decision is minimal (README, "Adaptive routing
    in the batch model")."""
    data = ugal_data("h-relation:h=2", source_queue="all", buffer=None)
    decided = [c for s in data["steps"] for c in s["choices"] if "phase" in c]
    assert decided and all(c["q_min"] == c["q_val"] == 0 and c["phase"] == "minimal" for c in decided)
    assert {s["step"] for s in data["steps"] if any("phase" in c for c in s["choices"])} == {1}


def test_ugal_l_and_g_print_their_numbers():
    """UGAL-L compares q·H with q the first router link's; UGAL-G q/B + H with q summed along the
    path: the printed line redoes the comparison and the path taken has the printed hops."""
    for routing, op in [("ugal-l", "q_min·H_min"), ("ugal-g", "q_min/B + H_min")]:
        data = adaptive_trace_to_json(trace_adaptive_route("dragonfly:p=1", "permutation:random", routing, "fifo"))
        out = wide_text(data)
        sources = [s for step in data["steps"] for s in step["sources"]]
        lines = [line.strip() for line in out.splitlines()]
        pairs = [(line, lines[k + 1]) for k, line in enumerate(lines) if re.fullmatch(r"p\d+ takes its \w+ path, since",
                                                                                      line)]
        assert sources and len(pairs) == len(sources)
        for head, line in pairs:    # e.g. "q_min·H_min = 0·4 = 0 <= q_val·H_val + T = 0·6 + 0 = 0"
            m = re.fullmatch(re.escape(op) + r" = .* = (\S+) (>|<=) .* = (\S+)", line)
            assert m, line
            valiant = "valiant" in head
            assert (float(m.group(1)) > float(m.group(3))) == (m.group(2) == ">") == valiant
        for s in sources:
            assert (s["H_min"], s["H_val"]) == (s["minimal"], s["valiant"])
            assert len(data["packets"][s["packet"]]["path"]) - 1 == s[s["took"]]


def _cost(option: dict) -> tuple:
    """GOAL's *-channel order: room first, then the fewest others waiting, then non-* before *."""
    return (option["full"], option["waiting"], option["vc"].startswith("*"))


@pytest.mark.parametrize("routing, vcs", [("min-adaptive", 3), ("goal", 3), ("ugal", 6)])
def test_star_channel_choices_follow_the_rule(routing, vcs):
    """With --vcs every choice names its (link, class) options; the one taken is a cheapest, its
    class is the one the packet then sits in, and the run is the row's (the trace checks it)."""
    data = adaptive_trace_to_json(trace_adaptive_route(TORUS, "h-relation:h=4", routing, "fifo", buffer=1, vcs=vcs,
                                                       bandwidth=2))
    assert data["classes"][:3] == ["*_0", "*_1", "non-*"] or data["classes"][:3] == ["*_0 ph1", "*_1 ph1",
                                                                                      "non-* ph1"]
    classes_seen = set()
    for s in data["steps"]:
        for c in s["choices"]:
            taken = [o for o in c["options"] if (o["link"], o["vc"]) == (c["took"], c["vc"])]
            assert len(taken) == 1 and _cost(taken[0]) == min(_cost(o) for o in c["options"])
        for b in s["buffers"]:
            classes_seen |= set(b["classes"])
    assert any(name.startswith("*") for name in classes_seen)    # the escape classes are used


def test_a_full_class_is_named(capsys):
    """B = 2, one place per class: the second packet into a class finds no room left in it."""
    status, out, err = run_cli(capsys, "route", "--network", TORUS, "--problem", "h-relation:h=2", "--paths",
                               "min-adaptive", "--protocols", "fifo", "--vcs", "3", "--buffer", "1", "--bandwidth",
                               "2", "--trace")
    assert status == 0, err
    assert "p16 waits: no room left in class non-* of 0,0->0,3" in " ".join(out.split())


def test_fifo_vcs_name_the_head():
    data = adaptive_trace_to_json(trace_adaptive_route(TORUS, "h-relation:h=2", "goal", "fifo", buffer=2, vcs=3,
                                                       vc_buffer="fifo", seed=1))
    behind = [lost for s in data["steps"] for e in s["links"] for lost in e["lost"] if lost["reason"] == "behind-head"]
    assert behind and all("behind the head of its FIFO VC" in lost["why"] for lost in behind)
    for s in data["steps"]:         # a packet that waits behind a head is in that VC, not at its head
        for e in s["links"]:
            for lost in e["lost"]:
                if lost["reason"] == "behind-head":
                    link, v = lost["why"].split(", ")[-1].rsplit(" v", 1)
                    before = data["steps"][s["step"] - 2]["vcs"]
                    (vc,) = [x for x in before if (x["link"], x["vc"]) == (link, int(v))]
                    assert lost["packet"] in vc["packets"][1:]


def test_fixed_paths_refuse_a_protocol_the_reference_cannot_follow(capsys):
    status, out, err = run_cli(capsys, "route", "--network", TORUS, "--problem", "h-relation:h=2", "--paths",
                               "dimension-order", "--vcs", "2", "--buffer", "1", "--protocols", "random", "--trace")
    assert status == 2 and "use random-rank, growing-rank" in err and len(err.strip().splitlines()) == 1


def test_packets_held_behind_their_source_queue_are_named():
    """--source-queue fifo with B = 2: a node's first two packets are routed and leave in order.
    In step 2 at 3,0 p35 finds no room, so p51, behind it, is held although its own link had
    room; every held packet has a packet ahead of it in its queue that did not leave."""
    data = adaptive_trace_to_json(trace_adaptive_route(TORUS, "h-relation:h=4", "min-adaptive", "fifo", seed=2,
                                                       source_queue="fifo", bandwidth=2, buffer=1))
    assert 51 in data["steps"][1]["queue_held"]
    held = 0
    for s in data["steps"]:
        crossed = {i for e in s["links"] for i in e["crossed"]}
        for i in s["queue_held"]:
            src = data["packets"][i]["source"]
            ahead = [p["packet"] for p in data["packets"][:i] if p["source"] == src]
            assert any(j not in crossed and data["result"]["delivery"][j] > s["step"] for j in ahead)
            held += 1
    assert held > 0


def test_with_terminals_q_is_read_at_the_source_router():
    """On a dragonfly a terminal's one link is both legs' first: q is read at its router, and the
    line says so (``p0 at g0.r0.t0: minimal (q at g0.r0), since``)."""
    net = build_network("dragonfly:p=1")
    data = adaptive_trace_to_json(trace_adaptive_route("dragonfly:p=1", "h-relation:h=2", "ugal", "fifo",
                                                       source_queue="fifo"))
    node = {net.label_of(v): v for v in range(net.num_nodes)}
    decided = [c for s in data["steps"] for c in s["choices"] if "phase" in c]
    assert decided
    out = wide_text(data)
    for c in decided:
        assert node[c["at"]] == int(net.router_of[node[c["node"]]]) != node[c["node"]]
        assert f"p{c['packet']} at {c['node']}: {'minimal' if c['phase'] == 'minimal' else 'Valiant via ' + c['via']}" \
               f" (q at {c['at']}), since" in out
