"""Exact channel loads on the networks with terminals (issue 26), against hand derivations.

Throughput there is in packets per terminal per step: ``1 / max channel load`` when every
terminal injects one packet per step (capacity load 1, a terminal's own link).

The balanced dragonfly with p = 2: a = 4 routers per group, h = 2 global links per router,
g = 9 groups, one global link between every two groups, 8 terminals per group, T = 72.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from universal.cli import main
from universal.load_analysis import LoadAnalysis, run_load_analysis
from universal.networks import build_network
from universal.oblivious.graphs import (graph_capacity, graph_link_loads, graph_pair_loads, graph_traffic,
                                        graph_worst_case)

T, A, G = 72, 4, 9


@pytest.fixture(scope="module")
def dragonfly():
    return build_network("dragonfly:p=2")


def link_classes(net):
    """Masks of injection, ejection, local and global links."""
    tail, head = net.link_tail, net.link_head
    inj, ej = (tail < T) & (head >= T), (head < T)
    group = lambda v: (v - T) // A
    routers = (tail >= T) & (head >= T)
    local = routers & (group(tail) == group(head))
    return inj, ej, local, routers & ~local


def exact_loads(pl, traffic):
    """Every link's load as a Fraction (exact sums over the pairs)."""
    num, den = traffic.exact
    out = []
    for c in range(pl.num.shape[2]):
        total = Fraction(0)
        for s, d in zip(*np.nonzero(num * (pl.num[:, :, c] > 0))):
            total += Fraction(int(num[s, d]), den) * pl.load(c, int(s), int(d))
        out.append(total)
    return out


def test_minimal_uniform(dragonfly):
    """Uniform: every terminal sends 1/72 of its packets to each terminal, itself included.

    * injection / ejection link: 71/72 (the share to itself crosses nothing);
    * global link X -> Y: the 8 terminals of X to the 8 of Y: 64/72 = 8/9;
    * local link u -> v: u's 2 terminals to v's 2 (4/72), u's 2 terminals to the 2 groups behind
      v's global links (2 * 16/72), and the 2 * 8 terminals arriving at u's global links for v's
      2 terminals (2 * 16/72): 68/72 = 17/18.
    So the throughput is 72/71 packets per terminal per step, the terminals' own links."""
    pl = graph_pair_loads(dragonfly, "minimal")
    loads = exact_loads(pl, graph_traffic(dragonfly, "uniform"))
    inj, ej, local, glob = link_classes(dragonfly)
    want = {Fraction(71, 72): inj | ej, Fraction(17, 18): local, Fraction(8, 9): glob}
    for value, mask in want.items():
        assert {loads[c] for c in np.flatnonzero(mask)} == {value}


def test_minimal_wc_group(dragonfly):
    """wc-group: group i's 8 terminals all go to group i+1 over the one global link joining them,
    which carries a*p = 8: throughput 1/(a*p) = 1/8 (Kim et al. 2008, §4.2)."""
    rep = run_load_analysis(LoadAnalysis("dragonfly:p=2", ["minimal"], ["wc-group"]))
    row = rep.loads[0]
    assert row.max_load_exact == 8 and row.throughput == 0.125
    pl = graph_pair_loads(dragonfly, "minimal")
    loads = graph_link_loads(pl, graph_traffic(dragonfly, "wc-group"))
    assert sorted(dragonfly.link_label(c) for c in np.flatnonzero(loads == 8)) == \
        sorted(f"g{i}.r0->g{(i + 1) % G}.r3" for i in range(G))


@pytest.mark.parametrize("traffic", ["uniform", "wc-group"])
def test_valiant(dragonfly, traffic):
    """Valiant over groups, intermediate I uniform over the 9 groups; minimal when I is the
    source's or the destination's group. A group injects 8 packets per step in all.

    wc-group (group S to S+1), global link X -> Y = X + o:
    o = 1: the direct link when I is S or S+1: 8 * 2/9 = 16/9;
    o != 1: first hop of group X with I = Y (8/9) plus second hop with I = X for the group
    Y - 1 (8/9): 16/9.
    uniform: direct (S = X, D = Y, I in {X, Y}): 8 * 1/9 * 2/9 = 16/81; first hop (S = X,
    I = Y, D != Y): 8 * 1/9 * 8/9 = 64/81; second hop (I = X, D = Y, any of the 8 groups
    S != X): 8 * 8 * 1/81 = 64/81; together 16/9.
    Every global link carries 16/9, and no other link more: throughput 9/16."""
    pl = graph_pair_loads(dragonfly, "valiant")
    loads = exact_loads(pl, graph_traffic(dragonfly, traffic))
    _, _, _, glob = link_classes(dragonfly)
    assert {loads[c] for c in np.flatnonzero(glob)} == {Fraction(16, 9)}
    assert max(loads) == Fraction(16, 9)
    row = run_load_analysis(LoadAnalysis("dragonfly:p=2", ["valiant"], [traffic])).loads[0]
    assert row.max_load_exact == Fraction(16, 9)


def test_worstcase_minimal_is_at_least_wc_group(dragonfly):
    """The certified worst case of minimal routing loads a channel to 8, as much as wc-group (no
    permutation can put more than the 8 terminals of one group on the one global link between two
    groups); its permutation, routed again, loads that channel to 8."""
    pl = graph_pair_loads(dragonfly, "minimal")
    worst = graph_worst_case(pl, graph_capacity(dragonfly))
    assert worst.exact and worst.method == "certified"
    assert worst.max_load_exact >= 8 and worst.max_load_exact == 8
    perm = np.asarray(worst.permutation)
    assert sorted(perm.tolist()) == list(range(T))
    assert pl.gamma[np.arange(T), perm, worst.channel_index].sum() == pytest.approx(8)


def test_fat_tree_nca_full_bisection():
    """k-ary n-tree, nca: a subtree of k^j terminals has k^j links up and k^j down, and the
    random up choice spreads its traffic evenly: no permutation loads a channel beyond 1 (the
    certified worst case), so uniform traffic and every permutation run at full rate. Uniform:
    injection links 63/64 (k=4, n=3), leaf up-links 1 - 4/64 = 15/16."""
    rep = run_load_analysis(LoadAnalysis("fattree:k=4,n=3", ["nca"], ["uniform"], worstcase=True))
    assert rep.loads[0].max_load_exact == Fraction(63, 64)
    assert rep.worst[0].max_load_exact == 1 and rep.worst[0].method == "certified"
    net = build_network("fattree:k=4,n=3")
    loads = graph_link_loads(graph_pair_loads(net, "nca"), graph_traffic(net, "uniform"))
    leaf = net.link_tail >= 64 + 32
    up = leaf & (net.link_head >= 64)
    assert np.allclose(loads[up], 15 / 16)


def test_cli_json_and_capacity(capsys):
    """The JSON names the terminals and the capacity rule; wc-group is refused off the dragonfly."""
    assert main(["load", "--network", "dragonfly:p=1", "--routing", "minimal", "--traffic", "wc-group",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["network"]["terminals"] == 6 and out["capacity_load_exact"] == "1"
    assert out["rows"][0]["throughput"] == pytest.approx(1 / 2)        # 1/(a*p) with a = 2, p = 1
    assert main(["load", "--network", "fattree:k=2,n=2", "--traffic", "wc-group"]) == 2
    assert "defined on the dragonfly" in capsys.readouterr().err


def test_hyperx_minimal_uniform():
    """HyperX 4 x 4, T = 2 (32 terminals), minimal = one hop per wrong dimension in a random
    order; uniform sends 1/32 of a terminal's packets to each terminal.

    * a terminal's own links: 31/32 (the share to itself crosses nothing);
    * router link (x0, x1) -> (x0', x1): its 2 terminals to the 2 of (x0', x1) (4/32), to the
      2 * 3 terminals of (x0', y), y != x1, with dimension 0 first (6/32), and the 3 * 2
      terminals of (x0, z), z != x1, to the 2 of (x0', x1) with dimension 1 first (6/32):
      1/2. By symmetry every router link carries 1/2, and so does the flattened butterfly with
      the same shape."""
    for name in ("hyperx:S=4,4,T=2", "flatfly:k=4,n=3,c=2"):
        net = build_network(name)
        pl = graph_pair_loads(net, "minimal")
        assert pl.exact
        loads = exact_loads(pl, graph_traffic(net, "uniform"))
        term = (net.link_tail < 32) | (net.link_head < 32)
        assert {loads[c] for c in np.flatnonzero(term)} == {Fraction(31, 32)}
        assert {loads[c] for c in np.flatnonzero(~term)} == {Fraction(1, 2)}
