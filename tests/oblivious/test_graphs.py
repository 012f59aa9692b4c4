"""Load analysis of any path system on any small network (universal.graph_loads, issue 4).

Oracles: brute force over explicit paths (networkx shortest paths with their sampling
probabilities, dimension order written out from coordinates), all permutations of a tiny graph,
the torus engine of universal.oblivious, and closed forms (torus capacity k/8 and (k^2-1)/(8k),
the mesh bisection bound k/4).
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from universal.cli import main
from universal.oblivious import graphs as graph_loads
from universal.oblivious.graphs import graph_capacity, graph_pair_loads, graph_worst_case
from universal.load_analysis import LoadAnalysis, run_load_analysis
from universal.networks import build_network, from_networkx
from universal.oblivious import Torus



def _link(net, u, v) -> int:
    return int(net.links_between([u], [v])[0])


def _random_shortest_oracle(net):
    """gamma by enumerating every shortest path with the probability of the uniform next hop."""
    g = net.graph
    dist = dict(nx.all_pairs_shortest_path_length(g))
    out = {}
    for s in g:
        for d in g:
            loads: dict[int, Fraction] = {}
            for path in nx.all_shortest_paths(g, s, d) if s != d else []:
                p = Fraction(1)
                for x in path[:-1]:
                    p /= sum(1 for y in g[x] if dist[y][d] == dist[x][d] - 1)
                for x, y in zip(path, path[1:]):
                    loads[_link(net, x, y)] = loads.get(_link(net, x, y), 0) + p
            out[s, d] = loads
    return out


def _dimension_order_oracle(net):
    """Dimension order from coordinates: fix x_0, then x_1, ... (no wrap on meshes and cubes)."""
    k, n = net.params["k"], net.params["n"]
    out = {}
    for s in range(net.num_nodes):
        for d in range(net.num_nodes):
            cur, loads = s, {}
            for i in range(n):
                while (cur // k ** i) % k != (d // k ** i) % k:
                    step = k ** i if (d // k ** i) % k > (cur // k ** i) % k else -k ** i
                    loads[_link(net, cur, cur + step)] = Fraction(1)
                    cur += step
            out[s, d] = loads
    return out


def _assert_equal(pl, oracle):
    for (s, d), loads in oracle.items():
        got = {c: pl.load(c, s, d) for c in np.flatnonzero(pl.num[s, d])}
        assert got == loads, (s, d)


@pytest.mark.parametrize("name", ["mesh:k=3,n=2", "hypercube:d=3", "mesh:k=4,n=1"])
def test_exact_loads_equal_brute_force(name):
    net = build_network(name)
    _assert_equal(graph_pair_loads(net, "random-shortest"), _random_shortest_oracle(net))
    _assert_equal(graph_pair_loads(net, "dimension-order"), _dimension_order_oracle(net))


def test_valiant_is_the_average_over_intermediates():
    net = build_network("mesh:k=3,n=2")
    base = _dimension_order_oracle(net)
    pl = graph_pair_loads(net, "valiant")
    N = net.num_nodes
    for s, d in [(0, 8), (4, 4), (2, 6)]:
        want: dict[int, Fraction] = {}
        for w in range(N):
            for c, v in [*base[s, w].items(), *base[w, d].items()]:
                want[c] = want.get(c, 0) + v / N
        assert {c: pl.load(c, s, d) for c in np.flatnonzero(pl.num[s, d])} == want


def _torus_links(net, torus):
    """Network link id of every torus-engine channel index."""
    out = {}
    for c in range(torus.num_channels):
        tail, head = torus.channel_ends(c)
        out[c] = _link(net, tail, head)
    return out


def test_dimension_order_equals_torus_dor_except_on_ties():
    """On odd k both are the same algorithm; on even k the path system always goes + on a tie
    (offset k/2) while DOR splits evenly, so they agree on every pair without a tie."""
    for k in (5, 4):
        net = build_network(f"torus:k={k},n=2")
        general = graph_pair_loads(net, "dimension-order")
        dor = graph_pair_loads(net, "dor")           # the torus tables, translated
        torus = Torus(k, 2)
        tie = (torus.coords[torus.offset_table] * 2 == k).any(axis=2)
        if k % 2:
            assert not tie.any()
        same = ~tie
        lhs = general.num[same] * dor.den[same][:, None]
        rhs = dor.num[same] * general.den[same][:, None]
        assert np.array_equal(lhs, rhs)
        # on ties both are minimal: same expected length
        assert np.allclose(general.num.sum(axis=2) / general.den, dor.num.sum(axis=2) / dor.den)


def test_torus_tables_translate_to_the_network_links():
    from universal.oblivious import pair_loads
    net = build_network("torus:k=4,n=2")
    torus = Torus(4, 2)
    pl = pair_loads("romm", torus)
    general = graph_pair_loads(net, "romm")
    links = _torus_links(net, torus)
    for s, d in [(0, 5), (7, 2), (13, 10)]:
        for c in range(torus.num_channels):
            assert general.load(links[c], s, d) == pl.load(c, s, d)


def test_sampled_loads_are_within_sampling_error():
    net = build_network("hypercube:d=3")
    exact = graph_pair_loads(net, "random-shortest")
    M = 400
    sampled = graph_pair_loads(net, "random-shortest", samples=M, exact=False, rng=np.random.default_rng(1))
    assert sampled.how == f"sampled, {M} paths per pair" and not sampled.exact
    p = exact.gamma
    sigma = np.sqrt(p * (1 - p) / M)
    assert np.all(np.abs(sampled.gamma - p) <= 5 * sigma + 1e-12)


@pytest.mark.parametrize("routing", ["random-shortest", "valiant", "shortest"])
def test_worst_case_by_matching_equals_brute_force(routing):
    g = nx.cycle_graph(6)
    g.add_edge(0, 3)
    net = from_networkx(g, "ring+chord")
    pl = graph_pair_loads(net, routing)
    perms = np.array(list(itertools.permutations(range(6))))
    brute = max(pl.gamma[np.arange(6)[None, :], perms].sum(axis=1).max(axis=0))
    res = graph_worst_case(pl, graph_capacity(net))
    assert float(res.max_load_exact) == pytest.approx(brute, abs=1e-12)
    load = sum((pl.load(res.channel_index, s, int(d)) for s, d in enumerate(res.permutation)), Fraction(0))
    assert load == res.max_load_exact


def test_capacity_closed_forms():
    """random-shortest is minimal and balanced on a torus: its uniform max load is the SPEC §7
    capacity; on a mesh dimension order meets the bisection bound k/4."""
    for k in (4, 5):
        net = build_network(f"torus:k={k},n=2")
        assert graph_loads._uniform_max(graph_pair_loads(net, "random-shortest")) == Torus(k, 2).capacity_load
    cap = graph_capacity(build_network("mesh:k=4,n=2"))
    assert cap.load == Fraction(4, 4) and "dimension-order" in cap.rule


def test_locality_of_valiant_and_minimal_routing():
    rep = run_load_analysis(LoadAnalysis("mesh:k=3,n=2", ["random-shortest", "valiant"], ["uniform"]))
    rows = {r.routing: r for r in rep.loads}
    assert rows["random-shortest"].locality == pytest.approx(1.0)
    assert rows["valiant"].locality == pytest.approx(2.0)          # two minimal legs of mean length each


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_load_and_worstcase_on_a_mesh(capsys):
    status, out, err = run(capsys, "load", "--network", "mesh:k=3,n=2", "--routing", "dimension-order,valiant",
                           "--traffic", "uniform,transpose", "--json")
    assert status == 0, err
    data = json.loads(out)
    assert data["network"] == {"name": "mesh:k=3,n=2", "nodes": 9, "links": 24}
    assert "dimension-order" in data["capacity_rule"]
    assert {r["pair_loads"] for r in data["rows"]} == {"exact"}
    status, out, err = run(capsys, "worstcase", "--network", "hypercube:d=3", "--routing", "valiant", "--json")
    assert status == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["max_load_exact"] == "1" and row["exact"] is True and sorted(row["permutation"]) == list(range(8))


def test_output_says_when_pair_loads_are_sampled(capsys, monkeypatch):
    monkeypatch.delitem(graph_loads.PAIR_LOADS, "random-shortest")
    status, out, err = run(capsys, "load", "--network", "mesh:k=3,n=2", "--routing", "random-shortest",
                           "--traffic", "uniform", "--samples", "20")
    assert status == 0, err
    assert "random-shortest: sampled, 20 paths per pair" in " ".join(out.split())
    status, out, err = run(capsys, "worstcase", "--network", "mesh:k=3,n=2", "--routing", "random-shortest",
                           "--samples", "20", "--json")
    assert json.loads(out)["rows"][0]["pair_loads"] == "sampled, 20 paths per pair"


@pytest.mark.parametrize("traffic", ["uniform", "neighbor", "hotspot:count=2,factor=3", "transpose"])
@pytest.mark.parametrize("network,routing", [("mesh:k=3,n=2", "random-shortest"), ("hypercube:d=3", "valiant")])
def test_every_rational_traffic_gets_an_exact_throughput(network, routing, traffic):
    """max_load_exact = the largest sum of L[s, d] * gamma_c(s, d) over links, in Fractions pair by
    pair; the float columns are these fractions rounded once."""
    if traffic == "transpose" and network.startswith("hypercube"):
        traffic = "bitcomp"
    net = build_network(network)
    report = run_load_analysis(LoadAnalysis(network, [routing], [traffic]))
    [row] = report.loads
    pl = graph_pair_loads(net, routing)
    pattern = graph_loads.graph_traffic(net, traffic)
    if pattern.perm is not None:
        weight = {(s, int(d)): Fraction(1) for s, d in enumerate(pattern.perm)}
    else:
        num, den = pattern.exact
        weight = {(s, d): Fraction(int(num[s, d]), den) for s in range(net.num_nodes) for d in range(net.num_nodes)}
    expected = max(sum(w * pl.load(c, s, d) for (s, d), w in weight.items() if w) for c in range(net.num_links))
    assert row.max_load_exact == expected and row.max_load == float(expected)
    assert row.throughput_exact == report.capacity_load / expected
    assert row.throughput == float(row.throughput_exact)


def test_sampled_pair_loads_claim_no_fraction():
    net = build_network("mesh:k=3,n=2")
    pl = graph_pair_loads(net, "random-shortest", samples=5, exact=False, rng=np.random.default_rng(1))
    row = graph_loads.graph_load_row(pl, graph_loads.graph_traffic(net, "uniform"), graph_capacity(net), 1.0,
                                     np.random.default_rng(0))
    assert row.max_load_exact is None and row.throughput_exact is None and row.max_load > 0


def test_random_perms_where_every_permutation_gives_the_same_throughput():
    """Valiant's routing on the 5 x 5 mesh loads its busiest channel the same under every
    permutation, so the exact worst case (a second method) equals every sample; the histogram is
    one bin holding all M samples instead of numpy's zero-width-range error."""
    report = run_load_analysis(LoadAnalysis("mesh:k=5,n=2", ["valiant"], ["random-perms:50"], worstcase=True))
    (sampled,), (worst,) = report.loads, report.worst
    counts, edges = sampled.histogram
    assert counts.tolist() == [50] and edges[0] <= sampled.throughput <= edges[-1]
    assert sampled.throughput == pytest.approx(sampled.best) == pytest.approx(worst.throughput)
