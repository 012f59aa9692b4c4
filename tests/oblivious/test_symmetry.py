"""The symmetries the worst-case search relies on (focus channels) really hold."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from universal.oblivious import ROUTINGS, get_routing, Torus, focus_classes, pair_loads

#: Every registered torus routing and the fixed-order IVAL variant.
NAMES = [*ROUTINGS, "ival:order=xy"]


def _image_tables(torus: Torus, full: np.ndarray, perm_dims, flip) -> np.ndarray:
    """Loads after applying g (permute dimensions, then reflect the flagged ones), g(0) = 0:
    out[g(t), g(c)] = full[t, c]."""
    k = torus.k
    c = torus.coords
    g = c[:, perm_dims]
    g = np.where(np.asarray(flip)[None, :], (-g) % k, g)
    gnode = torus.node(g)
    out = np.zeros_like(full)
    for ch in range(torus.num_channels):
        tail, head = torus.channel_ends(ch)
        u, v = int(gnode[tail]), int(gnode[head])
        # the image link u -> v: find its channel index
        du = torus.coords[v] - torus.coords[u]
        dim = int(np.nonzero(du % k)[0][0])
        sign = 1 if du[dim] % k == 1 else -1
        out[gnode, torus.channel(u, dim, sign)] = full[:, ch]
    return out


def _full(name, torus):
    pl = pair_loads(name, torus)
    return pl.full_numerators(), pl.den


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k,n", [(4, 2), (5, 2), (3, 3), (4, 3)])
def test_declared_symmetries_hold(name, k, n):
    torus = Torus(k, n)
    full, den = _full(name, torus)
    alg = get_routing(name)
    scaled = full * (np.lcm.reduce(den) // den)[:, None]
    identity = list(range(n))
    if alg.reflection_symmetric:
        for dim in range(n):
            flip = [i == dim for i in range(n)]
            assert np.array_equal(_image_tables(torus, scaled, identity, flip), scaled), (name, dim)
    if alg.dimension_symmetric:
        for perm in itertools.permutations(range(n)):
            image = _image_tables(torus, scaled, list(perm), [False] * n)
            assert np.array_equal(image, scaled), (name, perm)


@pytest.mark.parametrize("name", ["dor", "val", "ival:order=xy"])
def test_dimension_order_algorithms_are_not_dimension_symmetric(name):
    """The check above can fail: x-first routings change under swapping x and y."""
    torus = Torus(4, 2)
    full, den = _full(name, torus)
    scaled = full * (np.lcm.reduce(den) // den)[:, None]
    assert not np.array_equal(_image_tables(torus, scaled, [1, 0], [False, False]), scaled)
    assert len(focus_classes(name, 2)) == 2


def test_focus_classes():
    assert focus_classes("romm", 2) == [(0, 1)]
    assert focus_classes("dor", 3) == [(0, 1), (1, 1), (2, 1)]
