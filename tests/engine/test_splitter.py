"""The multibutterfly's deterministic splitter routing (survey §5.1, Theorems 26-27; issue 23
scope 4): fast = reference, the rule by hand, determinism, and the acceptance comparison with the
butterfly's unique paths."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.test_cli import run
from universal.networks import build_network
from universal.engine.batch import ADAPTIVE_PROTOCOLS, route_batch


def _permutation(net, seed: int, h: int = 1):
    rows = len(net.inputs)
    rng = np.random.default_rng(seed)
    return np.repeat(net.inputs, h), net.outputs[rng.permutation(np.repeat(np.arange(rows), h))]


@pytest.mark.parametrize("network", ["multibutterfly:s=4,d=4", "multibutterfly:s=16,d=2", "multibutterfly:s=16,d=3"])
@pytest.mark.parametrize("buffer", [None, 1])
def test_fast_equals_reference(network, buffer):
    net = build_network(network)
    for seed in range(2):
        src, dst = _permutation(net, seed, h=2)
        for protocol in ADAPTIVE_PROTOCOLS:
            a = route_batch(net, src, dst, "splitter", protocol, seed=seed, buffer=buffer)
            b = route_batch(net, src, dst, "splitter", protocol, seed=seed, buffer=buffer, engine="reference")
            assert a.result.status == b.result.status
            assert np.array_equal(a.result.delivery, b.result.delivery)
            assert np.array_equal(a.paths.links, b.paths.links)


def test_two_packets_of_one_node_for_one_output_set_take_its_two_edges():
    """From input (0, 0) both packets head for rows 12..15 (output set 3 of the first splitter):
    the node's two edges into that set reach rows 13 and 14; packet 0 takes the first, packet 1
    the second, so neither waits."""
    net = build_network("multibutterfly:s=16,d=2")
    out = net.outputs
    run_ = route_batch(net, np.array([0, 0]), np.array([out[12], out[15]]), "splitter", "fifo")
    first = [net.link_label(int(l)) for l in run_.paths.links[run_.paths.offsets[:-1]]]
    assert first == ["0,0->1,13", "0,0->1,14"]
    assert run_.result.delivery.tolist() == [2, 2]


def test_the_rule_is_deterministic():
    net = build_network("multibutterfly:s=16,d=3")
    src, dst = _permutation(net, 7, h=2)
    runs = [route_batch(net, src, dst, "splitter", "fifo", seed=s) for s in (0, 1, 2)]
    assert all(np.array_equal(r.paths.links, runs[0].paths.links) for r in runs)
    assert all(np.array_equal(r.result.delivery, runs[0].result.delivery) for r in runs)


def test_every_hop_goes_down_one_level_into_the_right_output_set():
    from universal.networks.multibutterfly import splitter_links
    net = build_network("multibutterfly:s=16,d=3")
    src, dst = _permutation(net, 3, h=3)
    run_ = route_batch(net, src, dst, "splitter", "random-rank", seed=1)
    rows = len(net.inputs)
    for p in range(len(src)):
        node = int(src[p])
        for link in run_.paths.links[run_.paths.offsets[p]:run_.paths.offsets[p + 1]].tolist():
            assert link in splitter_links(net, [node], [int(dst[p]) - net.depth * rows])[0].tolist()
            node = int(net.link_head[link])
        assert node == dst[p]


def _t(capsys, network: str, problem: str, paths: str) -> list[int]:
    status, out, err = run(capsys, "route", "--network", network, "--problem", problem, "--paths", paths,
                           "--protocols", "fifo,random-rank", "--json")
    assert status == 0, err
    rows = json.loads(out)["rows"]
    assert all(r["status"] == "delivered" for r in rows)
    return [r["T"] for r in rows]


@pytest.mark.parametrize("problem", ["permutation:bit-reversal", "permutation:transpose", "permutation:random"])
def test_the_multibutterfly_routes_1024_inputs_within_3d_steps(capsys, problem):
    assert max(_t(capsys, "multibutterfly:s=16,d=5", problem, "splitter")) <= 3 * 5


def test_the_butterfly_with_as_many_inputs_needs_sqrt_n_over_2_on_bit_reversal(capsys):
    assert min(_t(capsys, "butterfly:d=10", "permutation:bit-reversal", "splitter")) >= 16


def test_splitter_is_refused_where_it_is_not_defined(capsys):
    status, out, err = run(capsys, "route", "--network", "torus:k=4,n=2", "--problem", "permutation:random",
                           "--paths", "splitter")
    assert status == 2 and "needs a multibutterfly" in err and err.count("\n") == 1
