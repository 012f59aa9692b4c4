""":func:`universal.engine.compiled.priority_order` sorts by (key, id) whichever way it sorts: by
counting (compiled, or as plain Python), as int16 keys, or with a wide argsort."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine import compiled


@pytest.fixture(params=["compiled", "python", "no-numba"])
def mode(request, monkeypatch):
    if request.param == "compiled" and not compiled.NUMBA:
        pytest.skip("numba is not installed: the counting sort is never taken")
    if request.param == "python":
        monkeypatch.setattr(compiled, "_counting_order",
                            getattr(compiled._counting_order, "py_func", compiled._counting_order))
        monkeypatch.setattr(compiled, "NUMBA", True)
    if request.param == "no-numba":
        monkeypatch.setattr(compiled, "NUMBA", False)
    return request.param


@pytest.mark.parametrize("n, low, span", [(1, 5, 1), (50, 0, 3), (300, -7, 40), (2000, 10, 1500), (700, 0, 2**15),
                                          (900, 3, 2**20), (64, 2**40, 10)])
def test_the_order_is_the_stable_argsort_of_the_keys(mode, n, low, span):
    g = np.random.default_rng(n + span)
    ids = np.sort(g.choice(10 * n, size=n, replace=False)).astype(np.int64)
    keys = low + g.integers(0, span, size=n)
    got = compiled.priority_order(ids, keys)
    assert got.dtype == ids.dtype
    np.testing.assert_array_equal(got, ids[np.argsort(keys, kind="stable")])


def test_no_keys_no_ids():
    assert len(compiled.priority_order(np.empty(0, np.int64), np.empty(0, np.int64))) == 0
