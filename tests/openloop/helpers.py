"""Shared builders for the open-loop tests."""

from __future__ import annotations

from universal.networks import build_network
from universal.openloop import RunSpec, build_injection, build_router, offered_traffic

_NETS: dict = {}


def network(name: str):
    """One network object per name (the runs of a batch must share it)."""
    if name not in _NETS:
        _NETS[name] = build_network(name)
    return _NETS[name]


def spec(net: str, routing: str, traffic: str, rate: float, *, injection: str = "bernoulli",
         priority: str = "age", seed=0) -> RunSpec:
    """A run of ``routing`` under ``traffic`` at ``rate`` packets per node per step."""
    n = network(net)
    return RunSpec(offered_traffic(n, traffic), build_router(routing, n), build_injection(injection), rate,
                   seed=seed, priority=priority)


def assert_run_equals_reference(case: tuple, steps: int, least_delivered: int, source_queue: str = "all",
                                vc_buffer: str = "set") -> None:
    """One open-loop run of ``case`` = (network, routing, traffic, rate, injection, priority, B, b,
    V) on the engine and on the plain reference, same seed, source-queue and VC-buffer model: the same
    packets delivered in the same steps, and enough of them that the comparison says something."""
    from universal.engine.measure import Measurement
    from universal.engine.reference_runs import simulate_reference
    from universal.engine.runs import simulate_batch

    net, routing, traffic, rate, injection, priority, B, b, V = case
    s = spec(net, routing, traffic, rate, injection=injection, priority=priority, seed=5)
    fast = simulate_batch([s], bandwidth=B, buffer=b, vcs=V, measurement=Measurement(steps=steps),
                          source_queue=source_queue, vc_buffer=vc_buffer)[0]
    ref = simulate_reference(s, steps, bandwidth=B, buffer=b, vcs=V, source_queue=source_queue, vc_buffer=vc_buffer)
    assert fast.status == ref["status"] == "steps"
    delivered = fast.records["delivered"]
    assert (delivered >= 0).sum() > least_delivered
    assert delivered.tolist() == ref["delivered"]
