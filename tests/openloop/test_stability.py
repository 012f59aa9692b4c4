"""Bounded buffers beyond saturation: the credit rule's rate of one-place buffers, pinned.

A packet may enter a VC only if that VC had a free place at the start of the step (the credit
rule of :mod:`universal.engine.vcs`), so a place entered in step t, left in step t + 1 at the
earliest, is free again only at the start of step t + 2: a chain of one-place buffers carries at
most one packet every two steps, and a class with two places (b = 2, or two VCs of b = 1 in one
class) one per step. This is what holds MIN AD, GOAL and VAL far below their ideal-network Θ
with b = 1 (README, "Virtual channels and deadlock freedom"); the oracle is the closed form,
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
