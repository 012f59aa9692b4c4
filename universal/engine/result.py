"""The outcome of one routing run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RoutingResult:
    """What a run of the engine measured.

    Attributes
    ----------
    delivery : ndarray of int64
        Step in which every packet was delivered (0 for empty paths, -1 if never).
    status : str
        ``"delivered"`` (all packets arrived), ``"step-limit"`` or ``"deadlock"``.
    steps : int
        Steps simulated.
    max_buffer : int
        Largest number of packets seen in one link buffer at the end of a step.
    hops : int
        Link crossings made (packet-hops).
    hop_steps : ndarray of int64 or None
        With ``record_hops=True``: the step in which each hop was made, aligned with the
        collection's flat ``links`` array (-1 for hops not made).

    Examples
    --------
    >>> r = RoutingResult(np.array([0, 3, 2]), "delivered", 3, 1, 5)
    >>> r.T, r.mean_latency
    (3, 1.6666666666666667)
    """

    delivery: np.ndarray
    status: str
    steps: int
    max_buffer: int
    hops: int
    hop_steps: np.ndarray | None = None

    @property
    def delivered(self) -> int:
        """Number of packets delivered."""
        return int(np.count_nonzero(self.delivery >= 0))

    @property
    def T(self) -> int:
        """Routing time: the step of the last delivery (all packets start at step 0)."""
        return int(self.delivery.max()) if len(self.delivery) and self.status == "delivered" else self.steps

    @property
    def mean_latency(self) -> float:
        """Mean delivery step of the delivered packets (they are all injected at step 0)."""
        got = self.delivery[self.delivery >= 0]
        return float(got.mean()) if len(got) else 0.0

    @property
    def max_latency(self) -> int:
        got = self.delivery[self.delivery >= 0]
        return int(got.max()) if len(got) else 0
