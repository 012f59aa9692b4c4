"""worst_case_for_channels on an arbitrary graph, and its exactness guard."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from universal.oblivious import worst_case_for_channels


def test_any_graph_with_shortest_paths_matches_brute_force():
    g = nx.petersen_graph()
    sub = [0, 1, 2, 3, 4, 5, 6]            # brute force over 7! permutations of a 7-node subgraph
    h = g.subgraph(sub).copy()
    h.add_edges_from([(0, 5), (2, 6)])
    N = h.number_of_nodes()
    assert nx.is_connected(h)
    # all shortest paths, uniformly: integer weights over the lcm of path counts
    paths = {(s, d): list(nx.all_shortest_paths(h, s, d)) for s in h for d in h if s != d}
    D = int(np.lcm.reduce([len(p) for p in paths.values()]))
    channels = [(u, v) for u, v in h.edges] + [(v, u) for u, v in h.edges]

    def weights(ch):
        W = np.zeros((N, N), dtype=np.int64)
        for (s, d), ps in paths.items():
            hits = sum(1 for p in ps if any((a, b) == ch for a, b in zip(p, p[1:])))
            W[s, d] = hits * (D // len(ps))
        return W

    res = worst_case_for_channels(weights, channels, N)
    perms = np.array(list(itertools.permutations(range(N))))
    brute = max(int(weights(ch)[np.arange(N)[None, :], perms].sum(axis=1).max()) for ch in channels)
    assert res.weight == brute
    assert res.per_channel[res.channel] == brute


def test_refuses_weights_outside_the_exact_range():
    big = np.full((4, 4), 2 ** 52, dtype=np.int64)
    with pytest.raises(ValueError, match="exact range"):
        worst_case_for_channels(lambda c: big, [0], 4)
    with pytest.raises(TypeError):
        worst_case_for_channels(lambda c: np.ones((4, 4)), [0], 4)
