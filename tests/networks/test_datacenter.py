"""Networks with concentration (issue 26): dragonfly, k-ary n-tree, flattened butterfly, HyperX.

Oracles: the counts of the defining papers (Kim, Dally, Scott & Abts 2008 for the dragonfly;
Petrini & Vanneschi 1997 for the k-ary n-tree; Kim, Dally & Abts 2007 for the flattened
butterfly; Ahn et al. 2009 for HyperX), and the structure checked node by node with networkx.
"""

from __future__ import annotations

import math
import os
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from universal.cli import main
from universal.networks import build_network
from universal.workloads import build_problem


def routers_and_terminals(net):
    T = len(net.terminals)
    return T, net.num_nodes - T


def check_terminals(net, per_router: int | None):
    """Terminals are nodes 0..T-1, each of degree 1 into its router; no edge is doubled."""
    T, R = routers_and_terminals(net)
    g = net.graph
    assert g.number_of_edges() == net.num_edges          # no parallel edges, no self-loops
    assert net.terminals.tolist() == list(range(T))
    assert all(g.degree(t) == 1 for t in range(T))
    assert [next(iter(g[t])) for t in range(T)] == net.router_of.tolist()
    assert net.router_of.min() >= T
    if per_router is not None:
        assert set(Counter(net.router_of.tolist()).values()) == {per_router}
    assert nx.is_connected(g)


@pytest.mark.parametrize("p,a,h,g", [(1, 2, 1, 3), (2, 4, 2, 9), (2, 4, 2, 5), (3, 6, 3, 19),
                                     (2, 3, 2, 7), (1, 4, 1, 3), (4, 8, 4, 33)])
def test_dragonfly_counts(p, a, h, g):
    """g*a routers with p terminals each; g*a*(a-1)/2 local and g*a*h/2 global edges; every two
    groups joined by a*h/(g-1) global links; inside a group all-to-all."""
    net = build_network(f"dragonfly:p={p},a={a},h={h},g={g}")
    T, R = routers_and_terminals(net)
    assert (R, T) == (g * a, g * a * p)
    assert net.num_edges == T + g * a * (a - 1) // 2 + g * a * h // 2
    check_terminals(net, p)
    group = lambda v: (v - T) // a
    between = Counter()
    for u, v in net.edges.tolist():
        if u >= T and group(u) != group(v):
            between[frozenset((group(u), group(v)))] += 1
    assert len(between) == g * (g - 1) // 2 and set(between.values()) == {a * h // (g - 1)}
    degree = dict(net.graph.degree(range(T, T + R)))
    assert set(degree.values()) == {p + (a - 1) + h}   # router radix k = p + a + h - 1


@pytest.mark.parametrize("p,groups,routers,terminals", [(2, 9, 36, 72), (4, 33, 264, 1056)])
def test_balanced_dragonfly(p, groups, routers, terminals):
    """The issue's numbers: a = 2p = 2h and g = a*h + 1."""
    net = build_network(f"dragonfly:p={p}")
    assert net.params == {"p": p, "a": 2 * p, "h": p, "g": groups}
    assert routers_and_terminals(net) == (terminals, routers)


def test_dragonfly_palmtree():
    """Router 0 of every group holds the global link to the next group, router a-1 the one from
    the previous group (the palmtree arrangement with g = a*h + 1)."""
    net = build_network("dragonfly:p=2")
    T, a, g = 72, 4, 9
    for G in range(g):
        nxt = (G + 1) % g
        assert net.graph.has_edge(T + G * a, T + nxt * a + a - 1)


@pytest.mark.parametrize("k,n", [(2, 1), (2, 2), (2, 3), (3, 2), (4, 2), (4, 3), (3, 4)])
def test_fat_tree_counts(k, n):
    """k^n terminals, n levels of k^(n-1) switches, n*k^n edges; every switch has k links down
    and k up (the top level only k down); diameter 2n between terminals."""
    net = build_network(f"fattree:k={k},n={n}")
    T, R = routers_and_terminals(net)
    assert (T, R) == (k ** n, n * k ** (n - 1))
    assert net.num_edges == n * k ** n
    check_terminals(net, k)
    W = k ** (n - 1)
    degree = dict(net.graph.degree(range(T, T + R)))
    assert [degree[T + s] for s in range(R)] == [k] * W + [2 * k] * (R - W)
    assert nx.diameter(net.graph) == 2 * n


def test_fat_tree_is_the_definition():
    """Petrini & Vanneschi: <w, l> ~ <w', l+1> iff w and w' agree except in digit l (k=3, n=3)."""
    k, n = 3, 3
    net = build_network(f"fattree:k={k},n={n}")
    T, W = k ** n, k ** (n - 1)
    words = [tuple(w) for w in np.ndindex(*(k,) * (n - 1))]   # digit 0 most significant
    want = set()
    for level in range(n - 1):
        for i, w in enumerate(words):
            for j, v in enumerate(words):
                if all(w[x] == v[x] for x in range(n - 1) if x != level):
                    want.add(frozenset((T + level * W + i, T + (level + 1) * W + j)))
    for t in range(T):
        want.add(frozenset((t, T + (n - 1) * W + t // k)))
    assert {frozenset(map(int, e)) for e in net.edges} == want


@pytest.mark.parametrize("k,n,c", [(2, 2, 2), (4, 2, 4), (4, 3, 4), (3, 3, 1), (2, 4, 2), (8, 2, 3)])
def test_flattened_butterfly_counts(k, n, c):
    """k^(n-1) routers of radix c + (n-1)(k-1), c terminals each; a router reaches any other in
    at most n-1 hops (one per dimension)."""
    net = build_network(f"flatfly:k={k},n={n},c={c}")
    T, R = routers_and_terminals(net)
    assert (T, R) == (c * k ** (n - 1), k ** (n - 1))
    assert net.num_edges == T + R * (n - 1) * (k - 1) // 2
    check_terminals(net, c)
    routers = net.graph.subgraph(range(T, T + R))
    assert set(dict(routers.degree()).values()) == {(n - 1) * (k - 1)}
    assert nx.diameter(routers) == n - 1


@pytest.mark.parametrize("S,T", [([4, 4], 2), ([3, 4, 2], 1), ([5], 3), ([2, 2, 2, 2], 2)])
def test_hyperx_counts(S, T):
    """prod(S) routers, T terminals each, a router joined to sum(S_i - 1) others; the router
    graph is the Cartesian product of complete graphs K_S1 x K_S2 x ... (a Hamming graph)."""
    text = f"hyperx:S={','.join(map(str, S))},K={','.join('1' * len(S))},T={T}"
    net = build_network(text)
    Tt, R = routers_and_terminals(net)
    assert (Tt, R) == (T * math.prod(S), math.prod(S))
    assert net.num_edges == Tt + R * sum(s - 1 for s in S) // 2
    check_terminals(net, T)
    hamming = nx.complete_graph(S[0])
    for s in S[1:]:
        hamming = nx.cartesian_product(hamming, nx.complete_graph(s))
    assert nx.is_isomorphic(net.graph.subgraph(range(Tt, Tt + R)), hamming)


def test_flatfly_is_hyperx():
    """The k-ary n-flat is HyperX with n-1 dimensions of k and T = c (Ahn et al. §2)."""
    a, b = build_network("flatfly:k=4,n=3,c=2"), build_network("hyperx:S=4,4,T=2")
    assert np.array_equal(a.edges, b.edges) and a.kind == "flatfly" and b.kind == "hyperx"


def test_problems_address_terminals():
    """Permutations, h-relations and gossip go between terminals only."""
    net = build_network("dragonfly:p=1")
    rng = np.random.default_rng(0)
    perm = build_problem("permutation:random", net, rng)
    T = len(net.terminals)
    assert sorted(perm.sources.tolist()) == sorted(perm.dests.tolist()) == list(range(T))
    rel = build_problem("h-relation:h=3", net, rng)
    assert rel.size == 3 * T and rel.dests.max() < T
    assert build_problem("gossip", net, rng).size == T * (T - 1)


@pytest.mark.parametrize("argv, words", [
    (["--network", "dragonfly:p=2,h=0"], "h=0"),
    (["--network", "dragonfly:p=0"], "p=0"),
    (["--network", "dragonfly:p=2,g=6"], "must divide"),
    (["--network", "dragonfly:p=2,g=10"], "between 2 and"),
    (["--network", "fattree:k=1,n=2"], "k=1"),
    (["--network", "fattree:k=2"], "n="),
    (["--network", "hyperx:S=4,4,K=1,1,1,T=2"], "S has 2 dimensions but K has 3"),
    (["--network", "hyperx:S=4,1,T=2"], "at least 2"),
    (["--network", "hyperx:S=4,4,K=2,T=2"], "K > 1"),
    (["--network", "flatfly:k=4,n=1"], "n=1"),
    (["--network", "fattree:k=1000,n=24"], "more than"),
    (["--network", "dragonfly:p=2", "--problem", "pairs:file=pairs.txt"], "is a router"),
])
def test_bad_parameters(argv, words, tmp_path, capsys):
    """One ``error:`` line and exit status 2 (route, the first command to build a network)."""
    (tmp_path / "pairs.txt").write_text("0 g0.r1\n")
    if "--problem" not in argv:
        argv = argv + ["--problem", "permutation:random"]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        status = main(["route", *argv])
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and words in err, err
