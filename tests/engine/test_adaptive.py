"""UGAL's queue estimate on a torus (:mod:`universal.engine.adaptive`): with bounded buffers a
first link's q is the packets waiting for it plus its used credits, the packets that crossed it
and still sit in its buffer at the next router; on the ideal network the waiting packets alone.
Pinned by a count known by hand, on the engine and its plain reference alike."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine.batch import route_batch

from tests.openloop.helpers import network


def _two_packets(routing: str, buffer: int | None, vcs: int, engine: str) -> tuple[list, list]:
    """Node 0 of the 8-node ring sends A to node 2, then B to node 3, from a FIFO source (seed 0,
    which draws B's intermediate on the minus side: its Valiant path leaves on 0 -> 7)."""
    net = network("torus:k=8,n=1")
    run = route_batch(net, np.array([0, 0]), np.array([2, 3]), routing, "fifo", seed=0, buffer=buffer, vcs=vcs,
                      engine=engine, source_queue="fifo")
    p = run.paths
    nodes = [net.link_head[p.links[p.offsets[i]:p.offsets[i + 1]]].tolist() for i in range(2)]
    return run.result.delivery.tolist(), nodes


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("vcs", [1, 6])
def test_a_used_credit_sends_ugal_on_its_valiant_path(engine, vcs):
    """Hand count. Step 0: A, at the front, sees nothing anywhere (q_min = 0) and goes minimally,
    crossing 0 -> 1. Step 1: A sits in that link's buffer at node 1 (one used credit) and nothing
    waits for the link; B, now at the front, decides: q_min = 0 waiting + 1 credit = 1 with
    H_min = 3, q_val = 0 on 0 -> 7, so 1 * 3 > 0 * H_val + threshold for a threshold of 2 (B takes
    its Valiant path, 5 hops) and not for 3 (minimal). The waiting packets alone (q_min = 0) would
    keep B minimal at any threshold >= 0; with unbounded buffers, where there are no credits, it is."""
    minimal, valiant = [1, 2, 3], [7, 6, 5, 4, 3]
    delivery, paths = _two_packets("ugal:threshold=2", 1, vcs, engine)
    assert paths == [[1, 2], valiant] and delivery == [2, 6]
    assert _two_packets("ugal:threshold=3", 1, vcs, engine)[1] == [[1, 2], minimal]
    assert _two_packets("ugal:threshold=2", None, 1, engine)[1] == [[1, 2], minimal]
