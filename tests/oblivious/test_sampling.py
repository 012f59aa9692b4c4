"""Sampled routes (the engine's path systems) are valid and follow the exact pair loads."""

from __future__ import annotations

import numpy as np
import pytest

from universal.errors import UserError
from universal.oblivious import ROUTINGS, get_routing, Torus, pair_loads, sample_paths

#: Every registered torus routing and the fixed-order IVAL variant.
NAMES = [*ROUTINGS, "ival:order=xy"]


def _is_walk(torus: Torus, path: np.ndarray) -> bool:
    diff = (torus.coords[path[1:]] - torus.coords[path[:-1]]) % torus.k
    moved = (diff != 0).sum(axis=1)
    return bool(np.all(moved == 1) and np.all(np.isin(diff[diff != 0], [1, torus.k - 1])))


@pytest.mark.parametrize("name", NAMES)
def test_paths_are_walks_from_source_to_destination(name):
    torus = Torus(6, 2)
    rng = np.random.default_rng(11)
    src = rng.integers(0, torus.N, 300)
    dst = rng.integers(0, torus.N, 300)
    paths = sample_paths(name, 6, 2, src, dst, rng)
    for s, d, p in zip(src, dst, paths):
        assert p[0] == s and p[-1] == d
        assert _is_walk(torus, p)
        if get_routing(name).minimal:
            assert len(p) - 1 == torus.min_distance(torus.sub(d, s))
        if name.startswith("ival"):
            assert len(set(p.tolist())) == len(p)            # loops removed: a simple path


@pytest.mark.parametrize("name", NAMES)
def test_sampled_channel_frequencies_match_exact_loads(name):
    torus = Torus(4, 2)                  # even k: exercises the tie splits
    pl = pair_loads(name, torus)
    full = pl.full_numerators() / pl.den[:, None]
    rng = np.random.default_rng(5)
    samples = 4000
    for s, d in [(0, 10), (5, 7), (13, 2)]:
        paths = sample_paths(name, 4, 2, [s] * samples, [d] * samples, rng)
        counts = np.zeros(torus.num_channels)
        for p in paths:
            for u, v in zip(p[:-1], p[1:]):
                diff = (torus.coords[v] - torus.coords[u]) % 4
                dim = int(np.nonzero(diff)[0][0])
                counts[torus.channel(u, dim, 1 if diff[dim] == 1 else -1)] += 1
        freq = counts / samples
        # exact loads from node 0 translated to source s
        off = int(torus.sub(d, s))
        tails, dims, signs = torus.channel_parts(np.arange(torus.num_channels))
        exact = full[off, torus.channel(torus.sub(tails, s), dims, signs)]
        sigma = np.sqrt(np.maximum(exact * (1 - exact), 1e-12) / samples)
        assert np.all(np.abs(freq - exact) <= 5 * sigma + 1e-9), (name, s, d)


def test_sampling_is_reproducible_and_checks_input():
    a = sample_paths("romm", 5, 2, [0, 3], [12, 24], np.random.default_rng(3))
    b = sample_paths("romm", 5, 2, [0, 3], [12, 24], np.random.default_rng(3))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert sample_paths("val", 5, 2, [4], [4], np.random.default_rng(0))[0][0] == 4
    with pytest.raises(UserError):
        sample_paths("romm", 5, 2, [0], [25], np.random.default_rng(0))
    with pytest.raises(UserError):
        sample_paths("nope", 5, 2, [0], [1], np.random.default_rng(0))
