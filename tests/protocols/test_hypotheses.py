"""Bounds are shown only where their theorems' hypotheses hold (survey §4.1-§4.4).

One row per failed hypothesis (its bound and T/bound are null and its note names the
hypothesis), and one row per protocol where every hypothesis holds (its bound is the protocol's
expression evaluated on the row's C, D, n and B).
"""

from __future__ import annotations

import math

import pytest

from universal.experiment import Experiment, run_experiment, summarize
from universal.networks import build_network
from universal.paths import PathCollection
from universal.protocols import build_protocol
from universal.protocols.hypotheses import duplication_bandwidth
from universal.reporting.tables import bound_lines, experiment_table


def _row(network, problem, paths, protocol, bandwidth=1, buffer=None, seed=0):
    [row] = run_experiment(Experiment(network, problem, [paths], [protocol], seeds=[seed], bandwidth=bandwidth,
                                      buffer=buffer)).rows
    return row


FAILED = [
    # (what fails, the run, a fragment of its note)
    ("not leveled", ("mesh:k=4,n=2", "permutation:transpose", "dimension-order", "random-rank"),
     "survey §4.1 needs a leveled path collection: these paths are not leveled"),
    ("not shortest, not shortcut-free", ("hypercube:d=4", "permutation:transpose", "valiant", "growing-rank"),
     "survey §4.2 needs a shortcut-free path collection: these paths are not shortcut-free"),
    ("b = 1 (random rank: unbounded buffers)",
     ("butterfly:d=4", "h-relation:h=2", "dimension-order", "random-rank", 1, 1),
     "survey §4.1 needs unbounded link buffers: b = 1"),
    ("b = 1 < C (growing rank: buffers of size C)",
     ("butterfly:d=4", "h-relation:h=2", "dimension-order", "growing-rank", 1, 1),
     "survey §4.2 needs link buffers of size at least C: b = 1 < C = "),
    ("B = 2 (the rank protocols: bandwidth 1)", ("butterfly:d=4", "h-relation:h=2", "dimension-order", "random-rank", 2),
     "survey §4.1 needs bandwidth 1: B = 2"),
    ("B below duplication's range", ("butterfly:d=3", "permutation:bit-reversal", "dimension-order", "duplication"),
     "survey §4.4 needs B of order L = log(C·D)/loglog(C·D), read as L <= B <= 2L: B = 1 < L = 1.9"),
    ("B above duplication's range",
     ("butterfly:d=3", "permutation:bit-reversal", "dimension-order", "duplication", 4),
     "B = 4 > 2L = 3.8"),
    ("B > log n (trial-and-failure)",
     ("butterfly:d=3", "permutation:bit-reversal", "dimension-order", "trial-and-failure", 4),
     "survey §4.3 needs B <= log n: B = 4 > log n = 3.0"),
    ("K too small", ("butterfly:d=4", "h-relation:h=2", "dimension-order", "random-rank:K=2"),
     "survey §4.1 needs a rank range K at least the default order: K = 2 < "),
    ("trial-and-failure redrawn every round", ("butterfly:d=4", "h-relation:h=2", "dimension-order",
                                               "trial-and-failure:redraw=yes"),
     "survey §4.3 needs ranks and delays drawn once: redraw=yes draws them every round (a variant)"),
    ("duplication capped", ("butterfly:d=4", "h-relation:h=2", "dimension-order", "duplication:copies=1", 2, None, 4),
     "survey §4.4 needs 2^(j-1) copies in round j: the cap copies=1 cut them (a variant)"),
]


@pytest.mark.parametrize("what, run, note", FAILED, ids=[f[0] for f in FAILED])
def test_a_failed_hypothesis_hides_the_bound_and_names_itself(what, run, note):
    row = _row(*run)
    assert row.bound is None and row.T_over_bound is None and row.bound_expr is not None
    assert note in row.bound_note
    result = run_experiment(Experiment(run[0], run[1], [run[2]], [run[3]], seeds=[run[6] if len(run) > 6 else 0],
                                       bandwidth=run[4] if len(run) > 4 else 1,
                                       buffer=run[5] if len(run) > 5 else None))
    _, body = experiment_table(result).visible(200)
    assert body[0].count("n/a") >= 2                      # the bound and T/bound cells
    [line] = bound_lines(result.rows)
    assert line.startswith(f"bound n/a, {run[2]} / {run[3]}: survey §4.")


HOLDS = [
    ("random-rank", ("butterfly:d=4", "h-relation:h=2", "dimension-order", "random-rank")),
    ("growing-rank", ("hypercube:d=4", "permutation:transpose", "dimension-order", "growing-rank", 1, 8)),
    ("trial-and-failure", ("butterfly:d=4", "h-relation:h=2", "valiant", "trial-and-failure", 2)),
    ("duplication", ("butterfly:d=3", "permutation:bit-reversal", "dimension-order", "duplication", 2, None, 1)),
]


@pytest.mark.parametrize("name, run", HOLDS, ids=[h[0] for h in HOLDS])
def test_where_every_hypothesis_holds_the_bound_is_shown(name, run):
    row = _row(*run)
    assert row.bound_note is None and row.status == "delivered"
    expected = build_protocol(run[3]).bound(row.C, row.D, row.n, row.bandwidth)
    assert row.bound == round(expected, 3) and row.T_over_bound == round(row.T / expected, 4)
    [s] = summarize([row])
    assert s["bound"] == row.bound


def test_closed_forms_of_the_bounds():
    """The expressions with log base 2 and constant 1 (README's table of bounds)."""
    log = math.log2
    assert build_protocol("random-rank").bound(10, 6, 64) == 10 + 6 + 6
    assert build_protocol("trial-and-failure").bound(8, 16, 256, 2) == (8 * 4 + 16 * 8) / 2
    assert build_protocol("duplication").bound(4, 4, 256) == pytest.approx(4 * 3 + 4 + 8 * 3 / log(4))
    assert duplication_bandwidth(2, 3) == pytest.approx(log(6) / log(log(6)))


def test_shortcut_free_is_decided_on_the_links_the_paths_use():
    """Shortest paths are shortcut-free; so are non-shortest paths nobody can shortcut (a detour
    that uses links no other path offers), but not a detour another path's links cut short."""
    net = build_network("mesh:k=3,n=2")                       # nodes x + 3y
    detour = [0, 3, 4, 1]                                     # 0 -> 1 the long way round
    alone = PathCollection.from_node_paths(net, [detour])
    assert alone.is_shortest is False and alone.is_shortcut_free is True
    beside = PathCollection.from_node_paths(net, [detour, [0, 1, 2]])   # offers the link 0 -> 1
    assert beside.is_shortcut_free is False


def test_a_bound_over_seeds_needs_every_seed():
    """Whether the cap cuts the copies depends on the seed: the summary shows a bound only when
    every seed's row has one."""
    rows = run_experiment(Experiment("butterfly:d=4", "h-relation:h=2", ["dimension-order"],
                                     ["duplication:copies=1"], seeds=[3, 4], bandwidth=2)).rows
    # seed 3 finishes in one round (the cap never cuts), seed 4 needs a second round
    assert [r.bound is None for r in rows] == [False, True]
    [s] = summarize(rows)
    assert s["bound"] is None and s["T_over_bound"] is None and len(s["bound_notes"]) == 1
