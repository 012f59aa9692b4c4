"""Oblivious paths on the multibutterfly: ``dimension-order`` (the lowest allowed link at every
level) and ``random-splitter`` (a random allowed link, drawn at creation) run from inputs to
outputs along the splitter rule's allowed links, and ``route`` delivers on them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from universal.cli import main
from universal.errors import UserError
from universal.networks import build_network
from universal.networks.multibutterfly import splitter_links
from universal.paths import build_path_system
from universal.workloads import build_problem


@pytest.mark.parametrize("system", ["dimension-order", "random-splitter"])
def test_every_hop_is_an_allowed_link_and_paths_end_at_the_destination(system):
    net = build_network("multibutterfly:s=16,d=3,seed=1")
    rows = len(net.inputs)
    prob = build_problem("h-relation:h=2", net, np.random.default_rng(0))
    paths = build_path_system(system, net).route(prob, net, np.random.default_rng(2))
    hops = paths.links.reshape(prob.size, 3).astype(np.int64)
    assert np.array_equal(net.link_tail[hops[:, 0]], prob.sources)
    assert np.array_equal(net.link_head[hops[:, -1]], prob.dests)
    nodes = prob.sources
    for level in range(3):
        allowed = splitter_links(net, nodes, prob.dests - 3 * rows)
        assert np.all((allowed == hops[:, level, None]).any(axis=1))
        nodes = net.link_head[hops[:, level]]
    if system == "dimension-order":
        assert np.all(hops[:, 0] == splitter_links(net, prob.sources, prob.dests - 3 * rows)[:, 0])


def test_random_splitter_paths_depend_on_the_seed_only():
    net = build_network("multibutterfly:s=16,d=3")
    prob = build_problem("permutation:random", net, np.random.default_rng(0))
    system = build_path_system("random-splitter", net)
    a, b, c = (system.route(prob, net, np.random.default_rng(s)).links for s in (5, 5, 6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_route_delivers_the_named_permutations_from_inputs_to_outputs(capsys):
    status = main(["route", "--network", "multibutterfly:s=16,d=3", "--problem",
                   "permutation:bit-reversal,permutation:transpose,permutation:random",
                   "--paths", "dimension-order,random-splitter", "--protocols", "random-rank,fifo", "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert status == 0 and len(rows) == 12
    assert all(r["status"] == "delivered" and r["D"] == 3 and r["T"] >= max(r["C"], 3) for r in rows)


@pytest.mark.parametrize("network, system, message", [
    ("torus:k=4,n=2", "random-splitter", "need a multibutterfly"),
    ("multibutterfly:s=16,d=2", "valiant", "not provided on a multibutterfly"),
])
def test_path_systems_that_do_not_apply_are_refused(network, system, message):
    with pytest.raises(UserError, match=message):
        build_path_system(system, build_network(network))
