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
        ``"delivered"`` (all packets arrived), ``"step-limit"``, ``"deadlock"`` or, for
        duplication, ``"copy-limit"`` (the next round would send more copies than allowed).
    steps : int
        Steps simulated.
    max_buffer : int
        Largest number of packets seen in one link buffer at the end of a step.
    hops : int
        Link crossings made (packet-hops).
    hop_steps : ndarray of int64 or None
        With ``record_hops=True`` (buffered protocols): the step in which each hop was made,
        aligned with the collection's flat ``links`` array (-1 for hops not made).
    buffer : int or None
        Link-buffer size b the run used (None: unbounded; 0 for the bufferless protocols).
    deadlock_step : int or None
        With status ``"deadlock"``: the step that moved no packet.
    blocked : ndarray of int64 or None
        With status ``"deadlock"``: ids of the packets still waiting, increasing.
    full_links : ndarray of int64 or None
        With status ``"deadlock"``: the links (increasing) whose full buffers the waiting packets
        need to enter.
    rounds : int or None
        Bufferless protocols: rounds run.
    discarded : int or None
        Bufferless protocols: discarded packet attempts (trial-and-failure) or copies (duplication).
    finish : int or None
        Bufferless protocols: step in which the last acknowledgement arrived (this is T).
    copies_capped : bool or None
        Duplication: whether some round would have sent more copies than the cap allows.
    crossings : ndarray of int64 or None
        With ``record_hops=True`` (bufferless protocols): one row ``(step, link, packet)`` per
        link crossing, sorted; discarded attempts appear up to their last crossing.

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
    buffer: int | None = None
    deadlock_step: int | None = None
    blocked: np.ndarray | None = None
    full_links: np.ndarray | None = None
    rounds: int | None = None
    discarded: int | None = None
    finish: int | None = None
    copies_capped: bool | None = None
    crossings: np.ndarray | None = None

    @property
    def delivered(self) -> int:
        """Number of packets delivered."""
        return int(np.count_nonzero(self.delivery >= 0))

    @property
    def T(self) -> int:
        """Routing time: the step of the last delivery (all packets start at step 0), or of the
        last acknowledgement for the bufferless protocols; the steps run if not all arrived."""
        if self.status != "delivered":
            return self.steps
        if self.finish is not None:
            return self.finish
        return int(self.delivery.max()) if len(self.delivery) else 0

    @property
    def last_delivery(self) -> int:
        """Step of the last delivery (-1 if none)."""
        return int(self.delivery.max()) if len(self.delivery) else -1

    @property
    def deadlock(self) -> bool:
        """Whether the run ended in a deadlock (possible only with bounded buffers)."""
        return self.status == "deadlock"

    @property
    def mean_latency(self) -> float:
        """Mean delivery step of the delivered packets (they are all injected at step 0)."""
        got = self.delivery[self.delivery >= 0]
        return float(got.mean()) if len(got) else 0.0

    @property
    def max_latency(self) -> int:
        got = self.delivery[self.delivery >= 0]
        return int(got.max()) if len(got) else 0
