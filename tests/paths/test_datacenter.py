"""Routings of the networks with terminals (issue 26): the dragonfly's minimal and Valiant paths,
the fat tree's nearest-common-ancestor paths.

Oracles: the global links found in the edge list itself (not the palmtree formula), networkx
ancestors in the fat tree, and the law of large numbers: the paths drawn per packet cross every
link as often as the enumerated pair loads say.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from universal.networks import build_network
from universal.paths import route_paths
from universal.paths.datacenter import dragonfly_pair_loads, dragonfly_paths
from universal.workloads import Problem


def global_edges(net):
    """{(group, group): [(router, router)]} read from the edge list."""
    T, a = len(net.terminals), net.params["a"]
    found = {}
    for u, v in net.edges.tolist():
        if u >= T and (u - T) // a != (v - T) // a:
            for x, y in ((u, v), (v, u)):
                found.setdefault(((x - T) // a, (y - T) // a), []).append((x, y))
    return found


@pytest.mark.parametrize("name", ["dragonfly:p=2", "dragonfly:p=1,a=3,h=2,g=7", "dragonfly:p=1,a=4,h=1,g=3"])
def test_minimal_is_local_global_local(name):
    """Every terminal pair: injection, at most one local hop, the (a) global link joining the two
    groups, at most one local hop, ejection; inside a group one local hop; none to itself."""
    net = build_network(name)
    T, a = len(net.terminals), net.params["a"]
    glob = global_edges(net)
    s, d = np.repeat(np.arange(T), T), np.tile(np.arange(T), T)
    coll = dragonfly_paths("minimal", s, d, net, np.random.default_rng(1))
    for i in range(len(s)):
        path = coll.node_path(i)
        rs, rd = int(net.router_of[s[i]]), int(net.router_of[d[i]])
        if s[i] == d[i]:
            assert path == [s[i]]
            continue
        assert path[0] == s[i] and path[1] == rs and path[-2] == rd and path[-1] == d[i]
        routers = path[1:-1]
        Gs, Gd = (rs - T) // a, (rd - T) // a
        if Gs == Gd:
            assert routers == ([rs] if rs == rd else [rs, rd])
            continue
        x, y = next((x, y) for x, y in zip(routers, routers[1:]) if (x - T) // a != (y - T) // a)
        assert (x, y) in glob[(Gs, Gd)]
        assert routers == ([rs] if rs != x else []) + [x, y] + ([rd] if rd != y else [])


def test_valiant_goes_through_the_chosen_group():
    """Valiant's global hops: one (minimal) or two, the first into a group uniformly chosen:
    over many packets from group 0 to group 1 every third group is visited about equally often."""
    net = build_network("dragonfly:p=2")
    T, a, g = 72, 4, 9
    n = 18_000
    coll = dragonfly_paths("valiant", np.zeros(n, np.int64), np.full(n, 8), net, np.random.default_rng(2))
    visited = np.zeros(g)
    for i in range(n):
        groups = [(v - T) // a for v in coll.node_path(i)[1:-1]]
        hops = [y for x, y in zip(groups, groups[1:]) if x != y]
        assert len(hops) in (1, 2) and hops[-1] == 1
        visited[hops[0] if len(hops) == 2 else 0] += 1
    share = visited / n                     # groups 2..8 each 1/9; minimal (groups 0, 1) 2/9
    assert np.allclose(share[2:], 1 / 9, atol=0.01) and abs(share[0] - 2 / 9) < 0.015


@pytest.mark.parametrize("routing", ["minimal", "valiant"])
def test_drawn_paths_match_the_enumerated_loads(routing):
    """The mean crossings of every link over 400 drawn paths per pair (three pairs) is the
    enumerated pair load within 5 standard errors."""
    net = build_network("dragonfly:p=2,g=5")      # two global links between every two groups
    num, den = dragonfly_pair_loads(net, routing)
    for s, d in [(0, 20), (3, 3), (5, 6)]:
        n = 400
        coll = dragonfly_paths(routing, np.full(n, s), np.full(n, d), net, np.random.default_rng(s))
        counts = np.bincount(coll.links, minlength=net.num_links) / n
        exact = num[s, d] / den[s, d]
        sigma = np.sqrt(np.maximum(exact * (1 - np.minimum(exact, 1)), 1e-4) / n)
        assert np.all(np.abs(counts - exact) <= 5 * sigma + 1e-9), (s, d)


def test_nca_climbs_to_a_nearest_common_ancestor():
    """Fat tree: every path goes up to a lowest common ancestor switch (by the networkx tree of
    the two terminals' ancestors) and straight down; the up choices are spread evenly."""
    net = build_network("fattree:k=3,n=3")
    T, W = 27, 9
    level = lambda v: (v - T) // W
    s, d = np.repeat(np.arange(T), T), np.tile(np.arange(T), T)
    coll = route_paths("nca", Problem("all", s, d), net, np.random.default_rng(0))
    dist = dict(nx.all_pairs_shortest_path_length(net.graph))
    for i in range(len(s)):
        path = coll.node_path(i)
        assert len(path) - 1 == dist[int(s[i])][int(d[i])]
        if len(path) > 1:
            levels = [level(v) for v in path[1:-1]]
            top = levels.index(min(levels))
            assert levels[:top + 1] == sorted(levels[:top + 1], reverse=True)   # up ...
            assert levels[top:] == sorted(levels[top:])                           # ... then down


def test_ugal_candidate_group_avoids_both_ends():
    """UGAL's non-minimal candidate: an intermediate group uniform over the g - 2 groups other
    than the source's and the destination's (g - 1 when they are one group); through either of
    them Valiant's path would be the minimal path again. Chi-square-free check: every allowed
    group within 5 standard errors of 1/(g - 2), the two ends never."""
    from universal.paths.datacenter import other_group

    g, n = 9, 63_000
    rng = np.random.default_rng(4)
    for G1, G2 in [(2, 5), (5, 2), (0, 8), (4, 4)]:
        got = other_group(np.full(n, G1), np.full(n, G2), g, rng)
        share = np.bincount(got, minlength=g) / n
        allowed = [x for x in range(g) if x not in (G1, G2)]
        assert share[G1] == share[G2] == 0
        p = 1 / len(allowed)
        assert np.all(np.abs(share[allowed] - p) <= 5 * np.sqrt(p * (1 - p) / n))
