"""The s-ary d-dimensional multibutterfly (survey §5.1): sizes and degrees as the definition
gives them, every input reaching every output along level paths, the splitter rule's allowed
links, seeded reproducibility, and the measured expansion of its random splitters."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from universal.errors import UserError
from universal.networks import build_network
from universal.networks.expansion import splitter_adjacency, splitter_expansion
from universal.networks.multibutterfly import multibutterfly, splitter_links, splitter_table


@pytest.mark.parametrize("s, d", [(4, 3), (16, 1), (16, 3), (36, 2), (64, 2)])
def test_sizes_and_degrees_follow_the_definition(s, d):
    root = math.isqrt(s)
    net = multibutterfly(s, d, seed=3)
    rows = root ** d
    assert net.num_nodes == (d + 1) * rows and net.depth == d
    tail, head = net.edges[:, 0], net.edges[:, 1]
    assert np.all(net.levels[head] == net.levels[tail] + 1)            # every edge goes one level down
    down = np.bincount(tail, minlength=net.num_nodes)
    up = np.bincount(head, minlength=net.num_nodes)
    level = net.levels.astype(np.int64)
    last = level == d - 1
    # s/2 edges down (sqrt(s)/2 into each of sqrt(s) output sets), sqrt(s) on the last level (merged).
    assert np.all(down[(level < d - 1)] == s // 2) and np.all(down[last] == root) and np.all(down[level == d] == 0)
    assert np.all(up[(level >= 1) & (level < d)] == s // 2) and np.all(up[level == d] == root)
    keys = tail * net.num_nodes + head
    assert len(np.unique(keys)) == len(keys)                             # a simple graph


def test_each_input_has_sqrt_s_over_2_edges_into_each_output_set():
    net = multibutterfly(16, 3, seed=1)
    table = splitter_table(net)
    rows = len(net.inputs)
    for level in range(net.depth):
        heads = net.link_head[table.links[level]] - (level + 1) * rows       # (rows, sqrt s, k)
        q = table.block[level]
        own = (np.arange(rows) // (q * 4))[:, None, None] * 4 + np.arange(4)[None, :, None]
        assert np.all(heads // q == own)                                     # into output set j of its splitter


def test_every_input_reaches_every_output_by_level_paths():
    net = multibutterfly(16, 3, seed=2)
    rows = len(net.inputs)
    reach = np.eye(rows, dtype=bool)                                         # inputs x nodes of the level
    for level in range(net.depth):
        tail, head = net.edges[:, 0] - level * rows, net.edges[:, 1] - (level + 1) * rows
        mine = (net.levels[net.edges[:, 0]] == level)
        step = np.zeros((rows, rows), dtype=bool)
        step[tail[mine], head[mine]] = True
        reach = (reach.astype(np.int64) @ step.astype(np.int64)) > 0
    assert reach.all()


def test_splitter_links_lead_only_towards_the_destination():
    """Following any allowed link at every level ends at the destination (walked for all pairs)."""
    net = multibutterfly(16, 2, seed=5)
    rows = len(net.inputs)
    for source, dest in itertools.product(range(rows), repeat=2):
        frontier = {source}
        for _ in range(net.depth):
            nodes = np.array(sorted(frontier))
            frontier = set(net.link_head[splitter_links(net, nodes, np.full(len(nodes), dest))].ravel().tolist())
        assert frontier == {net.depth * rows + dest}


def test_the_seed_fixes_the_network():
    a, b, c = multibutterfly(16, 3, seed=7), multibutterfly(16, 3, seed=7), multibutterfly(16, 3, seed=8)
    assert np.array_equal(a.edges, b.edges) and not np.array_equal(a.edges, c.edges)
    assert build_network("multibutterfly:s=16,d=3,seed=7").name == "multibutterfly:s=16,d=3,seed=7"


@pytest.mark.parametrize("text, message", [
    ("multibutterfly:s=9,d=3", "square with an even root"),
    ("multibutterfly:s=8,d=3", "square with an even root"),
    ("multibutterfly:s=16,d=0", "out of range"),
    ("multibutterfly:s=64,d=12", "more than this tool handles"),
    ("multibutterfly:s=16,d=3,k=2", "unknown parameter"),
])
def test_bad_parameters_are_refused(text, message):
    with pytest.raises(UserError, match=message):
        build_network(text)


def _reference_ratios(adjacency: np.ndarray, largest: int) -> list[float]:
    """min |N(S)|/|S| per size, with Python sets over every subset (the slow obvious way)."""
    neighbours = [set(np.flatnonzero(row).tolist()) for row in adjacency]
    out = []
    for k in range(1, largest + 1):
        out.append(min(len(set().union(*(neighbours[i] for i in S))) / k
                       for S in itertools.combinations(range(len(neighbours)), k)))
    return out


@pytest.mark.parametrize("level, output_set", [(0, 0), (0, 3), (1, 2)])
def test_exact_expansion_matches_a_plain_enumeration(level, output_set):
    net = multibutterfly(16, 2, seed=4)
    res = splitter_expansion(net, level, 0, output_set, alpha=0.5)
    adjacency = splitter_adjacency(net, level, 0, output_set)
    assert res.exact and res.error is None
    assert res.ratios.tolist() == pytest.approx(_reference_ratios(adjacency, len(res.ratios)))


def test_closed_forms_of_the_expansion():
    """One input has sqrt(s)/2 neighbours in an output set (1 on the last level, merged);
    all m inputs reach the whole output set of m/sqrt(s) nodes."""
    net = multibutterfly(64, 2, seed=0)
    first = splitter_expansion(net, 0, 0, 1, alpha=1 / 64)
    assert first.ratios.tolist() == [4.0]
    whole = splitter_expansion(net, 1, 3, 5, alpha=1.0)
    assert whole.exact and whole.ratios[0] == 1.0 and whole.ratios[-1] == pytest.approx(1 / 8)


def test_sampling_never_reports_less_than_the_exact_minimum():
    net = multibutterfly(16, 3, seed=6)
    exact = splitter_expansion(net, 1, 2, 1, alpha=0.25)
    sampled = splitter_expansion(net, 1, 2, 1, alpha=0.25, samples=300, exact_limit=0,
                                 rng=np.random.default_rng(1))
    assert exact.exact and not sampled.exact and sampled.error == pytest.approx(0.01)
    assert np.all(sampled.ratios >= exact.ratios - 1e-12)
    assert sampled.ratios[0] == exact.ratios[0]                 # 300 draws of 16 singletons see them all
