"""Bounded buffers beyond saturation: the credit rule's rate of one-place buffers, pinned.

A packet may enter a VC only if that VC had a free place at the start of the step (the credit
rule of :mod:`universal.engine.vcs`), so a place entered in step t, left in step t + 1 at the
earliest, is free again only at the start of step t + 2: a chain of one-place buffers carries at
most one packet every two steps, and a class with two places (b = 2, or two VCs of b = 1 in one
class) one per step. This is what holds MIN AD, GOAL and VAL far below their ideal-network Θ
with b = 1 (docs/openloop.md, "Virtual channels and deadlock freedom"); the oracle is the closed form,
and the plain reference engine must deliver every packet in the same step.
"""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine.reference_runs import simulate_reference
from universal.engine.workload import OfferedTraffic
from universal.openloop import Measurement, RunSpec, build_injection, build_router, simulate_batch

from tests.openloop.helpers import network

STEPS, SETTLED = 400, 100


def one_flow(net, source: int, dest: int) -> OfferedTraffic:
    """A traffic matrix in which only ``source`` sends, all of it to ``dest``."""
    n = net.num_nodes
    matrix = np.zeros((n, n))
    matrix[source, dest] = 1.0
    rowsum = matrix.sum(axis=1)
    cum = np.cumsum(matrix, axis=1) / np.where(rowsum > 0, rowsum, 1)[:, None]
    cum[:, -1] = 1.0
    return OfferedTraffic(f"{source}->{dest}", rowsum, None, cum, matrix)


def chain_spec() -> RunSpec:
    """Node 0 of the 16-node ring sends one packet every step to node 7: a chain of 7 links that
    never crosses the dateline, so with DOR's dateline VCs every hop is in class 0."""
    net = network("torus:k=16,n=1")
    return RunSpec(one_flow(net, 0, 7), build_router("dor", net), build_injection("bernoulli"), 1.0, seed=0)


# (b, V, packets delivered per step once the chain is full): one place per class carries 1/2;
# DOR's 2 classes with V = 4 give class 0 two VCs, which act as one buffer of two places
CASES = [(1, 1, 0.5), (1, 2, 0.5), (2, 1, 1.0), (2, 2, 1.0), (1, 4, 1.0), (None, 1, 1.0)]


@pytest.mark.parametrize("buffer,vcs,rate", CASES, ids=lambda c: str(c))
def test_a_chain_of_one_place_buffers_carries_one_packet_every_two_steps(buffer, vcs, rate):
    res = simulate_batch([chain_spec()], buffer=buffer, vcs=vcs, measurement=Measurement(steps=STEPS))[0]
    delivered = res.records["delivered"]
    assert res.status == "steps"
    assert ((delivered >= SETTLED) & (delivered < STEPS)).sum() == rate * (STEPS - SETTLED)
    # the first packet is never held up: delivered in step 6, its 7th hop
    assert delivered[0] == 6


@pytest.mark.parametrize("buffer,vcs", [(1, 2), (2, 2)])
def test_the_reference_engine_carries_the_same_chain_alike(buffer, vcs):
    res = simulate_batch([chain_spec()], buffer=buffer, vcs=vcs, measurement=Measurement(steps=STEPS))[0]
    ref = simulate_reference(chain_spec(), STEPS, buffer=buffer, vcs=vcs)
    assert res.records["delivered"].tolist() == ref["delivered"]


def test_a_backlogged_source_sends_on_all_its_links_in_the_same_step():
    """The engine's source queue is no FIFO: every queued packet waits directly for its first link,
    so node 0 of the 4-ary 2-cube, sending 8 packets per step (poisson) to its four neighbours,
    delivers 4 per step once backlogged, with bounded buffers too (a FIFO source, whose head alone
    may leave, would deliver at most 1). This is the source model behind the fall of the accepted
    rate beyond saturation with b = 1 (docs/openloop.md, "One packet per VC, and beyond saturation")."""
    net = network("torus:k=4,n=2")
    n = net.num_nodes
    matrix = np.zeros((n, n))
    neighbours = np.unique(net.link_head[net.link_tail == 0])
    matrix[0, neighbours] = 1.0 / len(neighbours)
    rowsum = matrix.sum(axis=1)
    cum = np.cumsum(matrix, axis=1) / np.where(rowsum > 0, rowsum, 1)[:, None]
    cum[:, -1] = 1.0
    traffic = OfferedTraffic("0->neighbours", rowsum, None, cum, matrix)
    s = RunSpec(traffic, build_router("dor", net), build_injection("poisson"), 8.0, seed=0)
    for buffer, vcs in ((None, 1), (1, 2)):
        delivered = simulate_batch([s], buffer=buffer, vcs=vcs, measurement=Measurement(steps=200))[0].records["delivered"]
        assert len(neighbours) == 4
        assert ((delivered >= 50) & (delivered < 200)).sum() == 4 * 150
    assert delivered.tolist() == simulate_reference(s, 200, buffer=1, vcs=2)["delivered"]
