"""UGAL's choice (:mod:`universal.engine.adaptive`, :func:`universal.engine.routes.ugal_pick`,
:mod:`universal.engine.compiled_adaptive`): with bounded buffers a first link's q is the packets
waiting for it plus its used credits, the packets that crossed it and still sit in its buffer at
the next router; on the ideal network the waiting packets alone. Pinned by counts known by hand:
a two-packet run on the engine and its plain reference alike, and hand-built states for the
rule q_min * H_min > q_val * H_val + T (Kim, Dally, Scott & Abts, "Technology-Driven,
Highly-Scalable Dragonfly Topology", ISCA 2008, §4.2) in the engine's ``ugal``, the compiled
kernel's and UGAL-L's, and UGAL-G's sums of queues over B plus hops."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from universal.engine.batch import route_batch

from tests.openloop.helpers import network


def _two_packets(routing: str, buffer: int | None, vcs: int, engine: str) -> tuple[list, list]:
    """Node 0 of the 8-node ring sends A to node 2, then B to node 3, from a FIFO source (seed 0,
    which draws B's intermediate on the minus side: its Valiant path leaves on 0 -> 7)."""
    net = network("torus:k=8,n=1")
    run = route_batch(net, np.array([0, 0]), np.array([2, 3]), routing, "fifo", seed=0, buffer=buffer, vcs=vcs,
                      engine=engine, source_queue="fifo")
    p = run.paths
    nodes = [net.link_head[p.links[p.offsets[i]:p.offsets[i + 1]]].tolist() for i in range(2)]
    return run.result.delivery.tolist(), nodes


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("vcs", [1, 6])
def test_a_used_credit_sends_ugal_on_its_valiant_path(engine, vcs):
    """Hand count. Step 0: A, at the front, sees nothing anywhere (q_min = 0) and goes minimally,
    crossing 0 -> 1. Step 1: A sits in that link's buffer at node 1 (one used credit) and nothing
    waits for the link; B, now at the front, decides: q_min = 0 waiting + 1 credit = 1 with
    H_min = 3, q_val = 0 on 0 -> 7, so 1 * 3 > 0 * H_val + threshold for a threshold of 2 (B takes
    its Valiant path, 5 hops) and not for 3 (minimal). The waiting packets alone (q_min = 0) would
    keep B minimal at any threshold >= 0; with unbounded buffers, where there are no credits, it is."""
    minimal, valiant = [1, 2, 3], [7, 6, 5, 4, 3]
    delivery, paths = _two_packets("ugal:threshold=2", 1, vcs, engine)
    assert paths == [[1, 2], valiant] and delivery == [2, 6]
    assert _two_packets("ugal:threshold=3", 1, vcs, engine)[1] == [[1, 2], minimal]
    assert _two_packets("ugal:threshold=2", None, 1, engine)[1] == [[1, 2], minimal]


# ----------------------------------------------------------------------------- UGAL's rule, by hand
# Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008,
# §4.2: a packet takes its non-minimal (Valiant) candidate when q_min * H_min > q_val * H_val + T,
# else the minimal one (minimal wins ties). On the 8-node ring a packet from node 0 to node 3 with
# its intermediate at node 6 has H_min = 3 (first link 0 -> 1) and H_val = 2 + 3 = 5 (first link
# 0 -> 7). Each case: packets waiting for 0 -> 1, its used credits, packets waiting for 0 -> 7,
# the threshold, the buffer size, and whether the packet goes to the intermediate.
RING_CASES = {
    # 0 + 1 credit = 1: 1 * 3 > 0 * 5 + 2; without the credit 0 > 2 would keep it minimal
    "used-credit": (0, 1, 0, 2.0, 1, True),
    # unbounded buffers have no credits: the packet in the link's buffer does not count, 0 > 2 is false
    "no-credits-unbounded": (0, 1, 0, 2.0, None, False),
    # 3 * 3 = 9 > 2 * 5 = 10 is false; without the hops 3 > 2 would go to the intermediate
    "hops-weigh": (3, 0, 2, 0.0, None, False),
    # 2 * 3 = 6 > 0 * 5 + 4; without the hops 2 > 4 would stay minimal
    "hops-and-threshold": (2, 0, 0, 4.0, None, True),
    # 5 * 3 = 15 > 3 * 5 = 15 is false: minimal wins the tie
    "tie": (5, 0, 3, 0.0, None, False),
}


def _ring_state(waiting_min: int, credits_min: int, waiting_val: int, buffer: int | None):
    """The ring's UGAL tables, the link ids of 0 -> 1 and 0 -> 7, and the per-link waiting counts
    and occupancy (one VC class) of a case."""
    from universal.engine.routes import build_router

    net = network("torus:k=8,n=1")
    router = build_router("ugal", net)
    to_1, to_7 = (int(net.links_between(np.array([0]), np.array([v]))[0]) for v in (1, 7))
    waiting = np.zeros(net.num_links, dtype=np.int64)
    waiting[to_1], waiting[to_7] = waiting_min, waiting_val
    occupancy = np.zeros(net.num_links, dtype=np.int64)
    occupancy[to_1] = credits_min
    return net, router, waiting, occupancy


@pytest.mark.parametrize("case", list(RING_CASES))
def test_ugal_s_choice_follows_the_rule_by_hand(case):
    """:func:`universal.engine.adaptive._ugal_choice` (the engine's ``ugal``, at creation) on a
    hand-built state: the first links' q are the packets waiting plus, with bounded buffers, the
    used credits, weighted by the candidates' hops."""
    from types import SimpleNamespace

    from universal.engine.adaptive import _ugal_choice

    waiting_min, credits_min, waiting_val, threshold, buffer, to_via = RING_CASES[case]
    net, router, waiting, occupancy = _ring_state(waiting_min, credits_min, waiting_val, buffer)
    batch = SimpleNamespace(buffer=buffer, classes=1, links_span=net.num_links, occupancy=occupancy,
                            a={"node": np.array([0]), "dst": np.array([3]), "via": np.array([6]),
                               "run": np.array([0]), "target": np.array([-1])})
    tabs = {"ugal_distance": router.distance, "ugal_productive": router.productive, "threshold": np.array([threshold])}
    _ugal_choice(batch, np.array([0]), np.array([0]), waiting, tabs)
    assert batch.a["target"].tolist() == [6 if to_via else 3] and batch.a["via"].tolist() == [-1]


@pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                    reason="numba is not installed: the compiled adaptive kernel never runs")
@pytest.mark.parametrize("case", [c for c in RING_CASES if RING_CASES[c][4] is None])
def test_the_compiled_kernel_s_ugal_follows_the_rule_by_hand(case):
    """The compiled open-loop kernel's UGAL (:func:`universal.engine.compiled_adaptive._decide`) on
    the same states; it runs with unbounded buffers only, so it has no credits to count."""
    from universal.engine.compiled_adaptive import _decide

    waiting_min, credits_min, waiting_val, threshold, buffer, to_via = RING_CASES[case]
    net, router, waiting, _ = _ring_state(waiting_min, credits_min, waiting_val, buffer)
    one = lambda x: np.array([x], dtype=np.int64)          # noqa: E731
    target, via = one(-1), one(6)
    _decide(0, 3, net.num_links, router.productive, router.distance, np.zeros((1, 1, 2), np.int64),
            np.array([threshold]), waiting, one(0), one(0), target, one(3), via, np.zeros(1, np.uint64), one(0),
            np.zeros((1, 1), np.int64), np.zeros((1, 1), np.int64), np.zeros(8, np.int64), np.zeros(8, np.int64))
    assert target.tolist() == [6 if to_via else 3] and via.tolist() == [-1]


# UGAL-L and UGAL-G (:func:`universal.engine.routes.ugal_pick`) behind a terminal's own link: the
# minimal path is slots 0, 1, 2 (H_min = 3, first router link 1), the Valiant one 0, 3, 4, 5, 2
# (H_val = 5, first router link 3). UGAL-L compares q_min * H_min with q_val * H_val + T, q the
# first router link's waiting packets plus its used credits; UGAL-G the packets waiting on the
# whole path over B plus its hops, + T on the Valiant side. Each case: the mode (1 local, 2
# global), the waiting packets and used credits by slot, T, B, and whether Valiant is taken.
PICK_CASES = {
    # 0 waiting + 2 credits: 2 * 3 = 6 > 0; without the credits 0 > 0 would stay minimal
    "local-used-credits": (1, {}, {1: 2}, 0.0, 1, True),
    # 3 * 3 = 9 > 2 * 5 = 10 is false; without the hops 3 > 2 would take Valiant
    "local-hops-weigh": (1, {1: 3, 3: 2}, {}, 0.0, 1, False),
    # 5 * 3 = 15 > 3 * 5 = 15 is false: minimal wins the tie
    "local-tie": (1, {1: 5, 3: 3}, {}, 0.0, 1, False),
    # 2 + 3 = 5 > 0 + 5 is false; without Valiant's hops 5 > 0 would take it
    "global-valiant-hops": (2, {1: 2}, {}, 0.0, 1, False),
    # 5 + 3 = 8 > 0 + 5; without the minimal path's hops 5 > 5 would stay minimal
    "global-minimal-hops": (2, {1: 5}, {}, 0.0, 1, True),
    # 4 / 2 + 3 = 5 > 0 + 5 is false; without the bandwidth 4 + 3 = 7 > 5 would take Valiant
    "global-bandwidth": (2, {1: 4}, {}, 0.0, 2, False),
    # 5 + 3 = 8 > 0 + 5 + 4 is false: the threshold keeps it minimal
    "global-threshold": (2, {1: 5}, {}, 4.0, 1, False),
}


@pytest.mark.parametrize("case", list(PICK_CASES))
def test_ugal_l_and_g_pick_by_the_rule_by_hand(case):
    from universal.engine.routes import ugal_pick

    mode, waiting_at, credits_at, threshold, bandwidth, valiant = PICK_CASES[case]
    store = np.array([0, 1, 2, 0, 3, 4, 5, 2])
    waiting, credits = np.zeros(6, dtype=np.int64), np.zeros(6, dtype=np.int64)
    for slot, n in waiting_at.items():
        waiting[slot] = n
    for slot, n in credits_at.items():
        credits[slot] = n
    one = lambda x: np.array([x])        # noqa: E731
    got = ugal_pick(store, waiting, credits, one(0), one(3), one(3), one(8), one(mode), one(threshold), 1, bandwidth)
    assert got.tolist() == [valiant]


# ----------------------------------------------------------------- UGAL on a network with terminals
# On dragonfly:p=1,a=2,h=1,g=3 (terminals 0-5, routers 6-11) terminal 0 hangs off router 6 =
# g0.r0. A packet from it to terminal 2 (g1.r0.t0) with its intermediate at router 10 (g2.r0):
# every path starts on the terminal's own link 0 -> 6, so UGAL reads the links out of router 6,
# the first where the candidates differ: minimal g0.r0 -> g1.r1 (H_min = 4 from the terminal),
# Valiant g0.r0 -> g0.r1 (H_val = 6). The used credits count on the ideal network too, as UGAL-L's
# (Kim, Dally, Scott & Abts 2008, §4.2). Each case: packets waiting by link label, used credits
# by link label, the threshold, and whether the packet goes to the intermediate.
TERMINAL_CASES = {
    # 0 waiting + 2 credits = 2: 2 * 4 > 0 * 6; the old rule read the terminal's one link (0 > 0)
    "router-credits-unbounded": ({}, {"g0.r0->g1.r1": 2}, 0.0, True),
    # 3 * 4 = 12 > 1 * 6 = 6: the router's waiting packets weigh with the whole paths' hops
    "router-waiting": ({"g0.r0->g1.r1": 3, "g0.r0->g0.r1": 1}, {}, 0.0, True),
    # 3 * 4 = 12 > 2 * 6 = 12 is false: minimal wins the tie
    "router-tie": ({"g0.r0->g1.r1": 3, "g0.r0->g0.r1": 2}, {}, 0.0, False),
    # the terminal's own link is both candidates' first: its queue decides nothing
    "terminal-link-shared": ({"g0.r0.t0->g0.r0": 5}, {}, 0.0, False),
}


@pytest.mark.parametrize("case", list(TERMINAL_CASES))
def test_ugal_on_terminals_reads_the_source_router_s_links(case):
    from types import SimpleNamespace

    from universal.engine.adaptive import _tables, _ugal_choice
    from universal.engine.routes import build_router

    waiting_at, credits_at, threshold, to_via = TERMINAL_CASES[case]
    net = network("dragonfly:p=1,a=2,h=1,g=3")
    router = build_router(f"ugal:threshold={threshold}", net)
    link = {net.link_label(e): e for e in range(net.num_links)}
    waiting, occupancy = np.zeros(net.num_links, dtype=np.int64), np.zeros(net.num_links, dtype=np.int64)
    for name, n in waiting_at.items():
        waiting[link[name]] = n
    for name, n in credits_at.items():
        occupancy[link[name]] = n
    batch = SimpleNamespace(buffer=None, classes=1, links_span=net.num_links, occupancy=occupancy, net=net,
                            N=net.num_nodes, L=net.num_links, kinds=np.array([3]),
                            specs=[SimpleNamespace(router=router)],
                            a={"node": np.array([0]), "dst": np.array([2]), "via": np.array([10]),
                               "run": np.array([0]), "target": np.array([-1])})
    _ugal_choice(batch, np.array([0]), np.array([0]), waiting, _tables(batch))
    assert batch.a["target"].tolist() == [10 if to_via else 2] and batch.a["via"].tolist() == [-1]


def test_ugal_s_intermediate_on_terminals_is_a_router_other_than_the_ends():
    """Terminals only send and receive: the intermediate is a router, drawn uniformly; at the
    source's or the destination's router the Valiant path is minimal, so there is none (-1)."""
    from universal.engine.routes import build_router

    net = network("flatfly:k=4,n=2,c=1")                  # terminals 0..3, routers 4..7
    src, dst = np.zeros(3000, np.int64), np.full(3000, 3)
    via = build_router("ugal", net).draw(src, dst, np.random.default_rng(1)).via
    routers, counts = np.unique(via, return_counts=True)
    assert routers.tolist() == [-1, 5, 6]                 # 4 and 7 are the ends' routers
    assert np.allclose(counts / 3000, [2 / 4, 1 / 4, 1 / 4], atol=0.03)


def test_ugal_s_intermediate_on_the_dragonfly_is_where_it_enters_another_group():
    """Valiant's path on the dragonfly (Kim, Dally, Scott & Abts 2008, §4): minimal to a random
    intermediate group other than the ends', then minimal on; the intermediate is the router
    where the source group's global link into that group lands, each group equally likely."""
    from universal.engine.routes import build_router

    net = network("dragonfly:p=1,a=4,h=1")                # groups of 4 routers, node 20 + 4 G + j
    src, dst = np.zeros(3000, np.int64), np.full(3000, 19)  # group 0 to group 4
    via = build_router("ugal", net).draw(src, dst, np.random.default_rng(1)).via
    routers, counts = np.unique(via, return_counts=True)
    tail, head = net.link_tail, net.link_head
    into = {int(v) for v in head[(tail >= 20) & (tail < 24) & (head >= 24)]}   # where group 0's links land
    assert sorted((r - 20) // 4 for r in routers) == [1, 2, 3] and set(routers.tolist()) <= into
    assert np.allclose(counts / 3000, 1 / 3, atol=0.03)


def test_the_compiled_kernel_leaves_ugal_on_terminals_to_numpy():
    """The kernel keeps no used credits, which UGAL reads on a network with terminals."""
    from universal.engine.creation import RunSpec
    from universal.engine.measure import Measurement
    from universal.engine.routes import build_router
    from universal.engine.runs import kernel_supports
    from universal.engine.workload import build_injection
    from universal.openloop.workload import offered_traffic

    def run(net_name, routing):
        net = network(net_name)
        return RunSpec(offered_traffic(net, "uniform"), build_router(routing, net), build_injection("bernoulli"), 0.5)

    assert kernel_supports([run("torus:k=4,n=2", "ugal")], None, Measurement())
    assert kernel_supports([run("dragonfly:p=1,a=2,h=1,g=3", "min-adaptive")], None, Measurement())
    assert not kernel_supports([run("dragonfly:p=1,a=2,h=1,g=3", "ugal")], None, Measurement())


def _global_links(net) -> np.ndarray:
    """The dragonfly's global links, from its labels: router ``gG.rj`` to a router of another group."""
    labels = [net.link_label(e).split("->") for e in range(net.num_links)]
    return np.array([len(u.split(".")) == len(v.split(".")) == 2 and u.split(".")[0] != v.split(".")[0]
                     for u, v in labels])


def test_ugal_s_legs_on_the_dragonfly_cross_the_fewest_global_links():
    """UGAL's minimal legs on the dragonfly are the dragonfly's minimal paths: from a router to
    one of its own group no global link, to another group exactly one, with the fewest hops
    among those. MIN AD's hop-minimal paths (the tables ``ugal`` used before) may cross two:
    then on uniform traffic ``ugal`` saturated at 0.850 on dragonfly:p=2,a=4,h=2, MIN AD 0.934."""
    from universal.engine.routes import build_router

    net = network("dragonfly:p=1,a=4,h=1")
    T, a = len(net.terminals), net.params["a"]
    router = build_router("ugal", net)
    prod, dist = router.productive, router.distance
    hop = build_router("min-adaptive", net)
    glob = _global_links(net)
    group = lambda v: (v - T) // a                                       # noqa: E731
    routers = np.arange(T, net.num_nodes)
    for v in routers:
        for d in routers[routers != v]:
            links = prod[v, d][prod[v, d] >= 0]
            assert len(links)
            for e in links:
                w = net.link_head[e]
                left = 0 if group(w) == group(d) else 1                  # the fewest from w on
                assert glob[e] + left == (0 if group(v) == group(d) else 1) and dist[w, d] == dist[v, d] - 1
    assert (dist >= hop.distance).all() and (prod != hop.productive).any()   # MIN AD's differ


def test_ugal_on_the_dragonfly_crosses_at_most_two_global_links():
    """A packet follows its minimal leg (at most one global link) or goes through an intermediate
    group (two); before, hop-minimal legs to and from a random router crossed up to four."""
    from universal.openloop import Measurement, simulate_batch

    from tests.openloop.helpers import spec

    s = spec("dragonfly:p=1,a=4,h=1", "ugal", "uniform", 0.8, seed=3)
    res = simulate_batch([s], measurement=Measurement(steps=400, record_crossings=True))[0]
    cross = res.records["crossings"]
    glob = _global_links(s.router.network)
    per = np.bincount(cross[:, 1], weights=glob[cross[:, 2]], minlength=len(res.records["delivered"]))
    delivered = res.records["delivered"] >= 0
    assert delivered.sum() > 3000
    assert per[delivered].max() == 2 and (per[delivered] == 2).mean() > 0.1


def test_ugal_and_min_adaptive_on_the_dragonfly_keep_their_own_tables_in_one_batch():
    """MIN AD routes over hop-minimal paths, UGAL over the dragonfly's: batched together each
    run delivers as it does alone."""
    from universal.openloop import Measurement, simulate_batch

    from tests.openloop.helpers import spec

    runs = [("min-adaptive", 1), ("ugal", 2), ("ugal:threshold=2", 3)]
    make = lambda r, seed: spec("dragonfly:p=1,a=4,h=1", r, "uniform", 0.8, seed=seed)   # noqa: E731
    alone = [simulate_batch([make(r, seed)], measurement=Measurement(steps=200))[0] for r, seed in runs]
    together = simulate_batch([make(r, seed) for r, seed in runs], measurement=Measurement(steps=200))
    for x, y in zip(alone, together):
        assert np.array_equal(x.records["delivered"], y.records["delivered"])
