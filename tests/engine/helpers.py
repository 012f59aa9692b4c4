"""Shared helpers for the engine tests."""

from __future__ import annotations

import numpy as np

from universal.protocols import build_protocol
from universal.protocols.buffered import RankState


def with_ranks(name: str, ranks: list[int]):
    """The protocol ``name`` with its random ranks replaced by ``ranks`` (K and D as usual), so a
    hand-worked case can fix who wins each contention."""
    protocol = build_protocol(name)
    draw = protocol.setup

    def setup(rng, lengths, C, D):
        state = draw(rng, lengths, C, D)
        return RankState(K=state.K, D=state.D, ranks=np.array(ranks, dtype=np.int64), lengths=state.lengths)

    protocol.setup = setup
    return protocol
