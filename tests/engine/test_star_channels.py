"""GOAL's *-channels for the adaptive routings (SPEC §13; Singh, Dally, Gupta & Towles, "GOAL: a
load-balanced adaptive routing algorithm for torus networks", 2003, §4.1): the escape classes'
extended channel dependency graph is acyclic, the one engine equals its plain reference with
them, and with one packet per VC nothing deadlocks at full load where one VC does."""

from __future__ import annotations

from functools import lru_cache

import networkx as nx
import pytest

from universal.engine.measure import Measurement
from universal.engine.routes import build_router
from universal.engine.runs import simulate_batch
from universal.engine.vcs import channel_geometry, plan_vcs

from tests.openloop.helpers import assert_run_equals_reference, network, spec


def _escape_graph(net_name: str, routing: str, wrap_classes: bool = True) -> nx.DiGraph:
    """Duato's extended dependency graph of the * classes, over every route the routing can take.

    A packet's state is its node, its destination, its remaining hops per dimension and
    direction (GOAL: the quadrant drawn at creation; MIN AD: every minimal direction), the
    dimensions whose wrap-around it has crossed and (UGAL) its target: the intermediate node in
    phase 0, the destination in phase 1, where the wrap bits start afresh. Its escape channels
    in a state are (link, class) for the allowed links of the lowest dimension still to correct,
    class *_1 once the wrap-around of that dimension is crossed (or crossed by the hop), else
    *_0 (UGAL: three classes per phase). A packet holding
    escape channel c may next request any escape channel of any state it can reach after
    crossing c, by any allowed hops (direct and indirect dependencies): those are the edges.
    With ``wrap_classes=False`` every escape hop takes one class (the check can fail).
    """
    net = network(net_name)
    geo = channel_geometry(net)
    router = build_router(routing, net)
    k, n = router.k_n
    head = net.link_head.tolist()
    dim_of = (geo.type // 2).tolist()
    wraps = geo.wrap.tolist()
    dl = router.dir_link

    def coord(v, i):
        return (v // k ** i) % k

    def allowed(state):
        node, dst, legs, _, target = state
        if routing == "goal":
            return [int(dl[node, i, 0 if s > 0 else 1]) for i, (s, r) in enumerate(legs) if r > 0]
        return [int(e) for e in router.productive[node, target] if e >= 0]

    def move(state, e):
        node, dst, legs, wrapped, target = state
        if routing == "goal":
            i = dim_of[e]
            legs = tuple((s, r - (j == i)) for j, (s, r) in enumerate(legs))
        wrapped |= wraps[e] << dim_of[e]
        if head[e] == target != dst:            # UGAL: the second phase
            target, wrapped = dst, 0
        return (head[e], dst, legs, wrapped, target)

    def escapes(state):
        links = allowed(state)
        if not links:
            return frozenset()
        low = min(dim_of[e] for e in links)
        wrapped, phase = state[3], int(state[4] == state[1] and routing == "ugal")
        return frozenset((e, 3 * phase + (int(bool(wrapped >> low & 1) or wraps[e]) if wrap_classes else 0))
                         for e in links if dim_of[e] == low)

    @lru_cache(maxsize=None)
    def onward(state):                      # every escape channel requestable from here on
        out = set(escapes(state))
        for e in allowed(state):
            out |= onward(move(state, e))
        return frozenset(out)

    graph = nx.DiGraph()
    seen = set()

    def visit(state):
        if state in seen:
            return
        seen.add(state)
        for e, c in escapes(state):
            graph.add_edges_from(((e, c), x) for x in onward(move(state, e)))
        for e in allowed(state):
            visit(move(state, e))

    for s in range(net.num_nodes):
        for d in range(net.num_nodes):
            if routing == "goal":        # every quadrant: each dimension either way round
                delta = [(coord(d, i) - coord(s, i)) % k for i in range(n)]
                quads = [[]]
                for x in delta:
                    ways = [(1, x), (-1, (k - x) % k)] if x else [(1, 0)]
                    quads = [q + [w] for q in quads for w in ways]
                for legs in quads:
                    visit((s, d, tuple(legs), 0, d))
            elif routing == "ugal":          # minimal, or through any intermediate node
                for via in range(net.num_nodes):
                    visit((s, d, (), 0, d if via in (s, d) else via))
            else:
                visit((s, d, (), 0, d))
    return graph


@pytest.mark.parametrize("net_name,routing", [("torus:k=4,n=2", "min-adaptive"), ("torus:k=5,n=2", "goal"),
                                              ("torus:k=4,n=2", "goal"), ("torus:k=4,n=2", "ugal")])
def test_escape_classes_have_an_acyclic_extended_dependency_graph(net_name, routing):
    """Duato's condition for the *-channels, on every route: so a packet can always fall back to
    an escape class, and the escape classes cannot deadlock."""
    graph = _escape_graph(net_name, routing)
    assert graph.number_of_edges() > 100
    assert nx.is_directed_acyclic_graph(graph)


def test_one_escape_class_per_link_has_cycles():
    """The check above can fail: without the wrap-around bit (*_0 only) the rings are cycles."""
    assert not nx.is_directed_acyclic_graph(_escape_graph("torus:k=4,n=2", "min-adaptive", wrap_classes=False))


def test_the_star_plan_counts_and_shares():
    torus, mesh = network("torus:k=4,n=2"), network("mesh:k=4,n=2")
    goal = plan_vcs(build_router("goal", torus), 3, 8)
    assert (goal.scheme, goal.classes, goal.capacity.tolist()) == ("star", 3, [8, 8, 8])
    assert plan_vcs(build_router("ugal", torus), 6, 1).classes == 6          # two phases
    assert plan_vcs(build_router("min-adaptive", mesh), 2, 1).classes == 2   # no wrap-around: *, non-*


STEPS = 100
CASES = [
    # (network, routing, traffic, rate, injection, priority, B, b, V)
    ("torus:k=4,n=2", "min-adaptive", "uniform", 1.0, "bernoulli", "age", 1, 1, 3),
    ("torus:k=5,n=2", "min-adaptive", "transpose", 1.0, "poisson", "fifo", 1, 2, 3),
    ("torus:k=5,n=2", "goal", "tornado", 1.0, "bernoulli", "age", 1, 1, 3),
    ("torus:k=4,n=2", "goal", "uniform", 2.0, "poisson", "fifo", 2, 2, 4),
    ("torus:k=4,n=2", "goal", "bitcomp", 1.0, "bernoulli", "farthest-to-go", 1, 1, 5),
    ("torus:k=4,n=2", "ugal", "uniform", 1.0, "bernoulli", "age", 1, 1, 6),
    ("torus:k=5,n=2", "ugal", "tornado", 1.0, "poisson", "fifo", 1, 2, 6),
    # UGAL's q counts the used credits with bounded buffers: b = 1 and 2, both sources' processes
    ("torus:k=5,n=2", "ugal", "tornado", 1.0, "poisson", "age", 1, 1, 6),
    ("torus:k=5,n=2", "ugal", "tornado", 1.0, "bernoulli", "age", 1, 2, 6),
    ("mesh:k=4,n=2", "min-adaptive", "bitcomp", 1.0, "bernoulli", "age", 1, 1, 2),
    ("hypercube:d=4", "ugal", "bitcomp", 1.0, "poisson", "age", 1, 1, 4),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_engine_equals_reference_with_star_channels(case):
    assert_run_equals_reference(case, STEPS, 100)


TRAFFICS = ["uniform", "bitcomp", "transpose", "tornado"]


def test_no_deadlock_at_full_load_with_one_packet_per_vc():
    """MIN AD and GOAL with their 3 classes and b = 1 at offered 1.0 never deadlock (the engine's
    detector would end the run with status deadlock); all eight runs in one batch."""
    specs = [spec("torus:k=5,n=2", r, t, 1.0, seed=2) for r in ("min-adaptive", "goal") for t in TRAFFICS]
    results = simulate_batch(specs, buffer=1, vcs=3, measurement=Measurement(steps=300))
    assert [r.status for r in results] == ["steps"] * 8
    assert all((r.records["delivered"] >= 0).sum() > 1500 for r in results)


def test_without_the_star_channels_min_adaptive_deadlocks():
    """The check above can fail: with one VC the same MIN AD run deadlocks (and GOAL's too)."""
    specs = [spec("torus:k=5,n=2", r, "uniform", 1.0, seed=2) for r in ("min-adaptive", "goal")]
    assert [r.status for r in simulate_batch(specs, buffer=1, measurement=Measurement(steps=300))] == ["deadlock"] * 2


def test_a_run_does_not_depend_on_what_it_is_batched_with():
    """Oblivious runs (dateline classes) and adaptive ones (*-channels) share one batch."""
    specs = [spec("torus:k=4,n=2", r, "uniform", 1.0, seed=4) for r in ("dor", "goal", "ugal", "min-adaptive")]
    together = simulate_batch(specs, buffer=1, vcs=6, measurement=Measurement(steps=150))
    for s, res in zip(specs, together):
        alone = simulate_batch([s], buffer=1, vcs=6, measurement=Measurement(steps=150))[0]
        assert res.records["delivered"].tolist() == alone.records["delivered"].tolist()
