"""Routing protocols, registered by name (SPEC §6, §8).

>>> from universal.protocols import build_protocol
>>> p = build_protocol("random-rank")
>>> p.bound_expr
'C + D + log n'
"""

from __future__ import annotations

from universal.protocols.buffered import PROTOCOLS, Protocol, RankState
from universal.protocols.bufferless import BufferlessProtocol, Duplication, TrialAndFailure
from universal.registry import parse_spec


def build_protocol(protocol: str | Protocol) -> Protocol:
    """A protocol by name, e.g. ``"random-rank"`` or ``"growing-rank:K=64"``.

    Examples
    --------
    >>> build_protocol("growing-rank:K=64").K
    64
    """
    if isinstance(protocol, Protocol):
        return protocol
    spec = parse_spec(protocol)
    return PROTOCOLS.entry(spec.name).factory(spec)


__all__ = ["PROTOCOLS", "BufferlessProtocol", "Duplication", "Protocol", "RankState", "TrialAndFailure",
           "build_protocol"]
