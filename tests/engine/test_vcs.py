"""Virtual channels (SPEC §13; GOAL paper §4.1): the dateline classes of the torus routings, the
acyclic channel dependency graph they give, the class counts the routings need, and the one
engine against its plain reference with virtual channels."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from universal.engine.measure import Measurement
from universal.engine.reference_runs import simulate_reference
from universal.engine.routes import build_router
from universal.engine.runs import simulate_batch
from universal.engine.vcs import (channel_geometry, class_capacity, classes_needed, classes_of_paths, first_class,
                                  next_class, path_classes, plan_vcs)
from universal.errors import UserError
from universal.networks import build_network
from universal.paths import route_paths
from universal.paths.torus.algorithms import ROUTINGS
from universal.workloads import build_problem

from tests.openloop.helpers import network, spec

TORUS_ROUTINGS = ["dor", "val", "romm", "rlb", "rlbth", "ival", "ival:order=xy"]


def _sampled_paths(net_name: str, routing: str, count: int, seed: int = 0) -> list[list[int]]:
    net = network(net_name)
    router = build_router(routing, net)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, net.num_nodes, count)
    dst = rng.integers(0, net.num_nodes, count)
    draw = router.draw(src, dst, rng)
    return [draw.links[draw.offsets[i]:draw.offsets[i + 1]].tolist() for i in range(count)]


def test_dor_and_val_need_the_papers_vc_counts():
    """Table 1 of the GOAL paper: DOR 2 VCs, VAL two subnetworks of 2 VCs."""
    net = build_network("torus:k=8,n=2")
    assert classes_needed(build_router("dor", net)) == 2
    assert classes_needed(build_router("val", net)) == 4


@pytest.mark.parametrize("routing", TORUS_ROUTINGS)
@pytest.mark.parametrize("net_name", ["torus:k=5,n=2", "torus:k=4,n=3"])
def test_channel_dependency_graph_of_the_classes_is_acyclic(net_name, routing):
    """Dally & Seitz's condition, checked on the routes themselves: over many sampled routes the
    graph with an edge from (link, class) of every hop to (link, class) of the next is acyclic,
    and no hop needs a class beyond the routing's count."""
    net = network(net_name)
    geo = channel_geometry(net)
    needed = classes_needed(build_router(routing, net))
    graph = nx.DiGraph()
    most = 0
    for path in _sampled_paths(net_name, routing, 3000):
        cls = path_classes(path, geo)
        most = max(most, max(cls, default=0))
        graph.add_edges_from(((a, ca), (b, cb)) for a, ca, b, cb in zip(path, cls, path[1:], cls[1:]))
    assert nx.is_directed_acyclic_graph(graph)
    assert most < needed


def test_without_classes_the_dependency_graph_of_dor_has_cycles():
    """The check above can fail: with one class DOR's rings are cycles."""
    graph = nx.DiGraph()
    for path in _sampled_paths("torus:k=5,n=2", "dor", 2000):
        graph.add_edges_from(zip(path, path[1:]))
    assert not nx.is_directed_acyclic_graph(graph)


@pytest.mark.parametrize("routing", ["val", "rlb", "ival"])
def test_vectorised_classes_equal_the_hop_by_hop_walk(routing):
    net = network("torus:k=5,n=2")
    geo = channel_geometry(net)
    paths = [p for p in _sampled_paths("torus:k=5,n=2", routing, 500, seed=3) if p]
    cls = first_class(geo.wrap[[p[0] for p in paths]], geo.ring)
    hop = 0
    alive = list(range(len(paths)))
    while alive:
        got = {i: int(c) for i, c in zip(alive, cls)}
        for i in alive:
            assert got[i] == path_classes(paths[i], geo)[hop]
        keep = [j for j, i in enumerate(alive) if hop + 1 < len(paths[i])]
        alive2 = [alive[j] for j in keep]
        crossed = np.array([paths[alive[j]][hop] for j in keep], dtype=np.int64)
        nxt = np.array([paths[alive[j]][hop + 1] for j in keep], dtype=np.int64)
        cls = next_class(cls[keep], geo.type[crossed], geo.type[nxt], geo.wrap[nxt], geo.ring) if keep else cls[:0]
        alive, hop = alive2, hop + 1


@pytest.mark.parametrize("net_name,system", [("torus:k=5,n=2", "valiant"), ("torus:k=5,n=2", "random-shortest"),
                                             ("torus:k=4,n=3", "val"), ("torus:k=6,n=2", "romm"),
                                             ("mesh:k=4,n=2", "valiant"), ("hypercube:d=4", "valiant"),
                                             ("torus:k=3,n=2", "valiant")])
def test_classes_of_a_path_collection_equal_the_walk_of_every_path(net_name, system):
    """A batch on fixed paths counts its classes on the paths themselves, all hops at once: the
    count is the walk's largest class plus one."""
    net = build_network(net_name)
    problem = build_problem("h-relation:h=3", net, np.random.default_rng(1))
    paths = route_paths(system, problem, net, np.random.default_rng(2))
    geo = channel_geometry(net)
    walked = max(max(path_classes(paths.links[paths.offsets[i]:paths.offsets[i + 1]].tolist(), geo), default=-1)
                 for i in range(paths.size))
    assert classes_of_paths(paths) == walked + 1
    assert classes_of_paths(route_paths("dimension-order", problem, net, np.random.default_rng(0))) \
        == (2 if net.kind == "torus" and net.params["k"] > 2 else 1)


def test_classes_of_paths_count_a_second_wrap_around_in_one_run():
    """Paths that go round a ring more than once, turn back and wrap again (no routing of the
    load analysis does): still the walk's count."""
    from universal.paths import PathCollection

    net = build_network("torus:k=4,n=2")
    plus_x = lambda v: net.links_between([v], [v - v % 4 + (v + 1) % 4])[0]
    minus_y = lambda v: net.links_between([v], [(v - 4) % 16])[0]
    around = [3, 0, 1, 2, 3, 0, 1]                                   # +x twice over the dateline
    paths = [[plus_x(v) for v in around], [plus_x(v) for v in around[:3]] + [minus_y(v) for v in (2, 14, 10)]
             + [plus_x(v) for v in (6, 7, 4)], [minus_y(v) for v in (0, 12)]]
    geo = channel_geometry(net)
    for path in paths:
        one = PathCollection(net, np.array([0, len(path)]), np.array(path, dtype=np.int64),
                             np.array([int(net.link_tail[path[0]])]), np.array([int(net.link_head[path[-1]])]),
                             "explicit")
        assert classes_of_paths(one) == max(path_classes(path, geo)) + 1
    assert [max(path_classes(p, geo)) for p in paths] == [3, 3, 1]


def test_classes_of_paths_need_a_network_with_channel_types():
    net = build_network("butterfly:d=3")
    problem = build_problem("permutation:random", net, np.random.default_rng(0))
    assert classes_of_paths(route_paths("dimension-order", problem, net, np.random.default_rng(0))) is None


def test_mesh_classes_are_levels_only():
    net = build_network("mesh:k=4,n=2")
    geo = channel_geometry(net)
    assert not geo.ring
    x = net.links_between([0], [1])[0]
    y = net.links_between([1], [5])[0]
    xx = net.links_between([5], [6])[0]
    assert path_classes([x, y, xx], geo) == [0, 0, 1]


def test_extra_vcs_are_shared_out_between_the_classes():
    assert class_capacity(4, 2, 1).tolist() == [2, 2]
    assert class_capacity(5, 2, 3).tolist() == [9, 6]


def test_refusals_name_the_number():
    net = network("torus:k=4,n=2")
    with pytest.raises(UserError, match="needs 4 virtual channels"):
        plan_vcs(build_router("val", net), 3, 1)
    with pytest.raises(UserError, match="between 1 and"):
        plan_vcs(build_router("dor", net), 0, 1)
    with pytest.raises(UserError, match="goal needs 3 virtual channels .* --vcs 2 is too few"):
        plan_vcs(build_router("goal", net), 2, 1)
    with pytest.raises(UserError, match="ugal needs 6 virtual channels .* --vcs 5 is too few"):
        plan_vcs(build_router("ugal", net), 5, 1)
    with pytest.raises(UserError, match="min-adaptive needs 3 virtual channels .* --vcs 2 is too few"):
        plan_vcs(build_router("min-adaptive", net), 2, 1)
    assert plan_vcs(build_router("min-adaptive", network("mesh:k=4,n=2")), 2, 1).classes == 2   # no wrap-around
    with pytest.raises(UserError, match="tori, meshes and hypercubes"):
        plan_vcs(build_router("shortest", network("butterfly:d=3")), 2, 1)
    assert plan_vcs(build_router("val", net), 1, 1) is None


STEPS = 150
CASES = [
    # (routing, traffic, rate, injection, priority, B, b, V)
    ("dor", "uniform", 1.0, "bernoulli", "age", 1, 1, 2),
    ("dor", "tornado", 1.0, "bernoulli", "age", 1, 2, 3),
    ("val", "bitcomp", 1.0, "bernoulli", "age", 1, 1, 4),
    ("val", "uniform", 2.0, "poisson", "age", 1, 2, 4),
    ("romm", "tornado", 1.0, "poisson", "fifo", 1, 1, 6),
    ("rlb", "uniform", 1.0, "bernoulli", "age", 2, 1, 6),
    ("rlbth", "transpose", 1.0, "bernoulli", "random-rank", 1, 2, 7),
    ("ival", "transpose", 1.0, "bernoulli", "age", 1, 1, 4),
    ("ival", "uniform", 2.5, "poisson", "growing-rank", 2, 2, 5),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_engine_equals_reference_with_virtual_channels(case):
    routing, traffic, rate, injection, priority, B, b, V = case
    s = spec("torus:k=4,n=2", routing, traffic, rate, injection=injection, priority=priority, seed=5)
    fast = simulate_batch([s], bandwidth=B, buffer=b, vcs=V, measurement=Measurement(steps=STEPS))[0]
    ref = simulate_reference(s, STEPS, bandwidth=B, buffer=b, vcs=V)
    assert fast.status == ref["status"] == "steps"
    delivered = fast.records["delivered"]
    assert (delivered >= 0).sum() > 100
    assert delivered.tolist() == ref["delivered"]


@pytest.mark.parametrize("routing,vcs", [("dor", 2), ("val", 4), ("romm", 6), ("rlb", 6), ("ival", 4)])
@pytest.mark.parametrize("traffic", ["uniform", "bitcomp", "transpose", "tornado"])
def test_no_deadlock_at_full_load_with_one_packet_per_vc(routing, vcs, traffic):
    """With their classes the oblivious routings never deadlock, even with b = 1 at offered 1.0
    (the engine's detector would end the run); with one VC, DOR on tornado does."""
    s = spec("torus:k=5,n=2", routing, traffic, 1.0, seed=2)
    res = simulate_batch([s], buffer=1, vcs=vcs, measurement=Measurement(steps=1500))[0]
    assert res.status == "steps"


def test_one_vc_deadlocks_where_the_classes_do_not():
    s = spec("torus:k=8,n=2", "dor", "tornado", 1.0, seed=2)
    assert simulate_batch([s], buffer=1, measurement=Measurement(steps=1500))[0].status == "deadlock"
    assert simulate_batch([s], buffer=1, vcs=2, measurement=Measurement(steps=1500))[0].status == "steps"


# ---------------------------------------------------------------- batches on fixed paths

def _batch_case(net_name: str, system: str, problem: str = "h-relation:h=2"):
    net = build_network(net_name)
    return route_paths(system, build_problem(problem, net, np.random.default_rng(1)), net, np.random.default_rng(2))


@pytest.mark.parametrize("protocol", ["fifo", "random-rank", "farthest-to-go", "growing-rank"])
@pytest.mark.parametrize("net_name, extra", [("torus:k=4,n=2", 0), ("torus:k=5,n=2", 1), ("mesh:k=4,n=2", 0),
                                             ("hypercube:d=4", 1)])
@pytest.mark.parametrize("buffer", [1, 2])
def test_batch_with_virtual_channels_equals_the_reference(protocol, net_name, extra, buffer):
    """A batch on fixed paths with VCs (``route --vcs``), its classes counted on the paths: the
    one engine delivers every packet in the same step as the reference, and never deadlocks."""
    from universal.engine.batch import fixed_paths_spec, simulate as simulate_one
    from dataclasses import replace

    paths = _batch_case(net_name, "valiant")
    vcs = classes_of_paths(paths) + extra
    result = simulate_one(paths, protocol, np.random.default_rng(7), buffer=buffer, vcs=vcs)
    spec = fixed_paths_spec(paths, protocol, None, np.random.default_rng(7))
    spec.injection = replace(spec.injection, vc_classes=classes_of_paths(paths))
    run = simulate_reference(spec, int(paths.lengths.sum()) + 1, buffer=buffer, create_until=1, vcs=vcs)
    assert result.status == "delivered" and run["status"] == "drained"
    assert np.array_equal(result.delivery, np.where(paths.lengths == 0, 0, np.array(run["delivered"]) + 1))


@pytest.mark.parametrize("protocol", ["random", "random-delay", "nearest-to-go", "longest-in-system"])
def test_every_buffered_protocol_delivers_a_batch_with_one_packet_per_virtual_channel(protocol):
    """The protocols that the one engine's reference does not read (per-step keys, delays) run
    with VCs too: b = 1, and still no deadlock."""
    from universal.engine.batch import simulate as simulate_one

    paths = _batch_case("torus:k=5,n=2", "valiant", "h-relation:h=4")
    result = simulate_one(paths, protocol, np.random.default_rng(3), buffer=1, vcs=classes_of_paths(paths))
    assert result.status == "delivered" and result.delivered == paths.size


def test_batch_deadlock_of_one_buffer_per_link_ends_with_two_virtual_channels():
    """Tornado on a ring with one packet per link buffer: every packet takes a place in step 1 and
    none has room in step 2 (a deadlock, reported as such); the dateline classes of two VCs
    break the cycle and every packet arrives."""
    from universal.engine.batch import simulate as simulate_one

    paths = _batch_case("torus:k=8,n=1", "dimension-order", "permutation:tornado")
    one = simulate_one(paths, "fifo", np.random.default_rng(0), buffer=1)
    assert one.status == "deadlock" and one.deadlock_step is not None
    two = simulate_one(paths, "fifo", np.random.default_rng(0), buffer=1, vcs=2)
    assert two.status == "delivered" and two.T >= paths.dilation


def test_batch_refuses_too_few_virtual_channels_naming_the_count():
    from universal.engine.batch import simulate as simulate_one

    paths = _batch_case("torus:k=5,n=2", "valiant")
    needed = classes_of_paths(paths)
    with pytest.raises(UserError, match=f"needs {needed} virtual channels"):
        simulate_one(paths, "fifo", np.random.default_rng(0), buffer=1, vcs=needed - 1)
    with pytest.raises(UserError, match="not on butterfly"):
        simulate_one(_batch_case("butterfly:d=3", "valiant"), "fifo", np.random.default_rng(0), buffer=1, vcs=2)
