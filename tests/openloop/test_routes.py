"""The paths the open-loop engine draws at creation have the distribution whose channel loads
``universal load`` sums exactly (SPEC §11): link frequencies of many drawn paths against the
exact route family of the pair, walked node by node (a second expansion, not the engine's)."""

from __future__ import annotations

import numpy as np
import pytest

from universal.paths.torus import Torus
from universal.paths.torus.algorithms import legs_to_nodes

from .helpers import spec


def exact_pair_loads(router, torus: Torus, dest: int) -> np.ndarray:
    """Probability that a packet 0 -> dest crosses each link, from the routing's exact family."""
    fam = router.routing.family(torus, dest)
    net = router.network
    loads = np.zeros(net.num_links)
    for dims, steps, w in zip(fam.dims, fam.steps, fam.weights):
        nodes = legs_to_nodes(torus, 0, dims, steps)
        loads[net.links_between(nodes[:-1], nodes[1:])] += w
    return loads / fam.weights.sum()


@pytest.mark.parametrize("routing", ["val", "ival", "romm", "rlb"])
@pytest.mark.parametrize("dest", [0, 9, 29, 36])         # (0,0) itself, (1,1), (5,3), (4,4)
def test_drawn_paths_cross_links_as_often_as_the_exact_family_says(routing, dest):
    s = spec("torus:k=8,n=2", routing, "uniform", 0.1)
    torus, n = Torus(8, 2), 40000
    draw = s.router.draw(np.zeros(n, np.int64), np.full(n, dest), np.random.default_rng(11))
    freq = np.bincount(draw.links, minlength=s.router.network.num_links) / n
    exact = exact_pair_loads(s.router, torus, dest)
    # 5 binomial standard errors per link (a loop-free path crosses a link at most once)
    assert np.all(np.abs(freq - exact) <= 5 * np.sqrt(exact * (1 - exact) / n) + 1e-12)
    assert np.diff(draw.offsets).mean() == pytest.approx(exact.sum(), rel=0.02, abs=1e-12)
