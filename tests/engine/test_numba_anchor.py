"""The numba anchor of ``benchmarks/numba_anchor.py`` routes as the reference engine does.

Its kernel is plain Python that numba compiles; here it runs uncompiled (numba is not a
dependency), on small cases, with the ranks the project's engines draw from the same seed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from universal.engine import simulate_reference
from universal.networks import butterfly
from universal.paths import route_paths
from universal.workloads import build_problem

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "numba_anchor.py"


@pytest.fixture(scope="module")
def anchor():
    if not SCRIPT.exists():
        pytest.skip("benchmarks/ is not part of this copy")
    path = list(sys.path)
    try:                        # the script puts its checkout first on sys.path: undo that
        spec = importlib.util.spec_from_file_location("numba_anchor", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
    return module


@pytest.mark.parametrize("d, h, paths", [(3, 1, "valiant"), (4, 2, "valiant"), (4, 3, "dimension-order")])
def test_anchor_delivers_every_packet_when_the_reference_engine_does_with_its_largest_buffer(anchor, d, h, paths):
    net = butterfly(d)
    coll = route_paths(paths, build_problem(f"h-relation:h={h}", net, np.random.default_rng(d)), net,
                       np.random.default_rng(h))
    ref = simulate_reference(coll, "random-rank", np.random.default_rng(7))
    delivery, hops, max_buffer = anchor.anchor_route(anchor.random_rank_steps, coll, 7)
    np.testing.assert_array_equal(delivery, ref.delivery)
    assert hops == ref.hops == int(coll.lengths.sum())
    assert max_buffer == ref.max_buffer


@pytest.mark.parametrize("d, h, paths", [(3, 1, "valiant"), (4, 2, "valiant"), (4, 3, "dimension-order")])
def test_the_lighter_anchor_delivers_every_packet_when_the_reference_engine_does(anchor, d, h, paths):
    """``--anchor light``: the same loop without the buffers' occupancy, on ranks given."""
    net = butterfly(d)
    coll = route_paths(paths, build_problem(f"h-relation:h={h}", net, np.random.default_rng(d)), net,
                       np.random.default_rng(h))
    ref = simulate_reference(coll, "random-rank", np.random.default_rng(7))
    delivery, hops = anchor.light_route(anchor.random_rank_steps_light, coll, anchor.project_ranks(coll, 7))
    np.testing.assert_array_equal(delivery, ref.delivery)
    assert hops == ref.hops == int(coll.lengths.sum())
