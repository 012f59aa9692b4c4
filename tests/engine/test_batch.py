"""The batch model on the open-loop engine (issue 23 scope 2): adaptive routings (MIN AD, GOAL,
UGAL) route a problem's packets hop by hop, the survey's protocols deciding contention.

Oracles: the plainly written reference engine (same seed, same deliveries and the same links
crossed in the same steps), a hand-worked ring, and a slow replay of the crossings that checks
every realised path, C, D, T and the largest buffer independently of the code that reports them.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from universal.errors import UserError
from universal.networks import build_network
from universal.engine.batch import ADAPTIVE_PROTOCOLS, route_batch
from tests.test_cli import run

ROUTINGS = ["min-adaptive", "goal", "ugal"]


def _problem(net, seed: int, h: int = 1):
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(net.num_nodes), h)
    return src, rng.permutation(np.tile(np.arange(net.num_nodes), h))


@pytest.mark.parametrize("routing", ROUTINGS)
@pytest.mark.parametrize("protocol", list(ADAPTIVE_PROTOCOLS))
@pytest.mark.parametrize("network, bandwidth, buffer", [("torus:k=4,n=2", 1, None), ("torus:k=5,n=2", 2, None),
                                                        ("torus:k=4,n=2", 1, 2), ("torus:k=5,n=2", 1, 1)])
def test_fast_equals_reference(routing, protocol, network, bandwidth, buffer):
    net = build_network(network)
    for seed in range(2):
        src, dst = _problem(net, seed, h=2)
        a = route_batch(net, src, dst, routing, protocol, seed=seed, bandwidth=bandwidth, buffer=buffer)
        b = route_batch(net, src, dst, routing, protocol, seed=seed, bandwidth=bandwidth, buffer=buffer,
                        engine="reference")
        assert a.result.status == b.result.status
        assert np.array_equal(a.result.delivery, b.result.delivery)
        assert np.array_equal(a.paths.offsets, b.paths.offsets) and np.array_equal(a.paths.links, b.paths.links)
        assert np.array_equal(a.result.crossings, b.result.crossings)


@pytest.mark.parametrize("routing", ["ugal-l", "ugal-g"])
def test_dragonfly_ugal_fast_equals_reference(routing):
    net = build_network("dragonfly:p=2")
    rng = np.random.default_rng(5)
    src = np.repeat(net.terminals, 2)
    dst = rng.permutation(src)
    for protocol in ("fifo", "random-rank"):
        a = route_batch(net, src, dst, routing, protocol, seed=3)
        b = route_batch(net, src, dst, routing, protocol, seed=3, engine="reference")
        assert a.result.status == b.result.status == "delivered"
        assert np.array_equal(a.result.delivery, b.result.delivery) and np.array_equal(a.paths.links, b.paths.links)


def test_a_ring_by_hand():
    """Tornado on the 8-ring, every packet 3 hops clockwise: they move in lock-step, each link
    carries 3 packets one after the other, nobody waits, and one packet sits in each buffer."""
    net = build_network("torus:k=8,n=1")
    run_ = route_batch(net, np.arange(8), (np.arange(8) + 3) % 8, "min-adaptive", "fifo")
    assert run_.result.status == "delivered"
    assert run_.result.delivery.tolist() == [3] * 8
    assert (run_.result.T, run_.paths.congestion, run_.paths.dilation, run_.result.max_buffer) == (3, 3, 3, 1)


def _replay(net, run_, src, dst):
    """Check one run from its crossings alone: paths, C, D, T, the largest buffer."""
    tail, head = net.link_tail, net.link_head
    by_packet = defaultdict(list)
    for step, link, packet in run_.result.crossings.tolist():
        by_packet[packet].append((step, link))
    loads = defaultdict(int)
    buffers = defaultdict(int)                 # (link, step) -> packets in the link's buffer at its end
    for p in range(len(src)):
        hops = sorted(by_packet[p])
        node = int(src[p])
        for i, (step, link) in enumerate(hops):
            assert int(tail[link]) == node                    # a walk along links
            node = int(head[link])
            loads[link] += 1
            if i + 1 < len(hops):                            # waits in this buffer until the next hop
                for t in range(step, hops[i + 1][0]):
                    buffers[(link, t)] += 1
        if run_.result.delivery[p] >= 0:
            assert node == int(dst[p])
            assert run_.result.delivery[p] == (hops[-1][0] if hops else 0)
        assert run_.paths.links[run_.paths.offsets[p]:run_.paths.offsets[p + 1]].tolist() == [l for _, l in hops]
    assert run_.paths.congestion == max(loads.values())
    assert run_.paths.dilation == max(len(v) for v in by_packet.values())
    assert run_.result.max_buffer == max(buffers.values(), default=0)
    if run_.result.status == "delivered":
        assert run_.result.T == max(step for hops in by_packet.values() for step, _ in hops)


@pytest.mark.parametrize("routing", ROUTINGS)
def test_realised_paths_c_d_t_and_buffers_replayed(routing):
    net = build_network("torus:k=6,n=2")
    src, dst = _problem(net, 3, h=3)
    for protocol in ADAPTIVE_PROTOCOLS:
        _replay(net, route_batch(net, src, dst, routing, protocol, seed=1), src, dst)


def test_minimal_adaptive_paths_are_shortest():
    net = build_network("torus:k=6,n=2")
    src, dst = _problem(net, 4, h=2)
    run_ = route_batch(net, src, dst, "min-adaptive", "random-rank", seed=2)
    coords = np.stack([np.arange(36) % 6, np.arange(36) // 6], axis=1)
    diff = (coords[dst] - coords[src]) % 6
    assert np.diff(run_.paths.offsets).tolist() == np.minimum(diff, 6 - diff).sum(axis=1).tolist()


def test_bounded_buffers_may_deadlock_and_say_so():
    net = build_network("torus:k=4,n=2")
    src, dst = _problem(net, 0, h=4)
    statuses = {route_batch(net, src, dst, "min-adaptive", "fifo", seed=s, buffer=1).result.status for s in range(6)}
    assert statuses <= {"delivered", "deadlock"} and statuses


@pytest.mark.parametrize("problem", ["permutation:tornado", "h-relation:h=8"])
def test_route_compares_oblivious_and_adaptive_routings_as_a_batch(capsys, problem):
    """Issue 23's acceptance: DOR, VAL, MIN AD and GOAL on the 8-ary 2-cube with FIFO and random rank."""
    status, out, err = run(capsys, "route", "--network", "torus:k=8,n=2", "--problem", problem, "--paths",
                           "dor,val,min-adaptive,goal", "--protocols", "fifo,random-rank", "--json")
    assert status == 0, err
    rows = json.loads(out)["rows"]
    assert len(rows) == 8 and all(r["status"] == "delivered" for r in rows)
    for r in rows:
        assert r["T"] >= r["lower_bound"] == max(r["C"], r["D"])
        if r["paths"] in ("min-adaptive", "goal"):
            assert r["bound"] is None
            assert (r["bound_note"] is None) == (r["protocol"] == "fifo")


@pytest.mark.parametrize("argv, says", [
    (["--network", "torus:k=4,n=2", "--paths", "goal", "--protocols", "trial-and-failure"], "not available"),
    (["--network", "torus:k=4,n=2", "--paths", "min-adaptive", "--protocols", "growing-rank"], "not available"),
    (["--network", "torus:k=4,n=2", "--paths", "goal", "--opt"], "fixed in advance"),
    (["--network", "hypercube:d=4", "--paths", "goal"], "goal routing needs"),
    (["--network", "butterfly:d=3", "--paths", "min-adaptive"], "leveled"),
])
def test_what_adaptive_batches_do_not_do_is_one_line(capsys, argv, says):
    status, out, err = run(capsys, "route", "--problem", "permutation:random", *argv)
    assert status == 2 and out == "" and says in err and err.count("\n") == 1, err


def test_an_unknown_protocol_is_refused_by_the_library():
    net = build_network("torus:k=4,n=2")
    with pytest.raises(UserError, match="does not decide contention"):
        route_batch(net, np.arange(16), np.arange(16), "goal", "duplication")


def test_adaptive_deadlock_names_its_packets_on_both_engines(capsys):
    """MIN AD with b = 1 and one VC on the 8-ring, h-relation:h=4, seed 0: every packet left waits
    for a full buffer of the ring's one direction; both engines hand over the same waiting packets
    and links, the deadlock's step is the one after the last crossing, and route prints the row
    (it gave a traceback when the result had no blocked packets)."""
    from universal.workloads import build_problem

    net = build_network("torus:k=8,n=1")
    seeds = np.random.SeedSequence(0).spawn(3)
    prob = build_problem("h-relation:h=4", net, np.random.default_rng(seeds[0]))
    runs = [route_batch(net, prob.sources, prob.dests, "min-adaptive", "fifo", seed=seeds[2], buffer=1, engine=e)
            for e in ("fast", "reference")]
    for one in runs:
        res = one.result
        assert res.status == "deadlock" and res.deadlock_step == int(res.crossings[:, 0].max()) + 1
        assert res.blocked.tolist() == np.flatnonzero(res.delivery < 0).tolist()
        turn = (net.link_head[res.full_links] - net.link_tail[res.full_links]) % 8      # one direction round
        assert len(res.full_links) == 8 and len(set(turn.tolist())) == 1
    assert runs[0].result.blocked.tolist() == runs[1].result.blocked.tolist()
    assert runs[0].result.full_links.tolist() == runs[1].result.full_links.tolist()
    status, out, err = run(capsys, "route", "--network", "torus:k=8,n=1", "--problem", "h-relation:h=4", "--paths",
                           "min-adaptive", "--buffer", "1", "--protocols", "fifo")
    assert status == 0 and "no packet could move in step 8" in out, err
