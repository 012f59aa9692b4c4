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
