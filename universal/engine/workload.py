"""What an open-loop run offers: the traffic rows, the injection process and the rate units
(SPEC §11; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for
torus networks", 2003, §2).

A traffic pattern is a matrix ``L`` whose row ``s`` is the distribution of the destinations of
the packets node ``s`` creates, scaled by the fraction of the offered rate ``s`` sends: a row
that sums to ``0.5`` sends at half the rate, a zero row sends nothing (GOAL's admissible
traffic may be doubly sub-stochastic). Permutations are matrices with one 1 per row.

Injection processes (per node, independently):

``bernoulli``
    one packet per step with probability ``rate * rowsum`` (at most one per step, so the rate in
    packets must not exceed 1);
``poisson``
    a Poisson number of packets per step with mean ``rate * rowsum`` (any rate: local traffic can
    be offered beyond one packet per node per step);
``on-off:burst=8``
    a two-state Markov source (as BookSim's ``on_off``): while *on* the node creates one packet
    per step with probability ``rowsum``, it leaves the on state with probability ``1/burst``
    (bursts last ``burst`` steps on average) and enters it with the probability that makes the
    long-run rate the offered one. Needs a rate below one packet per step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from universal.errors import UserError
from universal.registry import check_known_params, parse_spec, take_int

__all__ = ["INJECTIONS", "Injection", "OfferedTraffic", "build_injection"]


@dataclass(frozen=True)
class Injection:
    """An injection process: ``name`` (``bernoulli``, ``poisson``, ``on-off``) and its burst length.

    ``batch`` is the batch model's workload on the same engine: the packets of one routing
    problem, ``packets = (sources, destinations)``, all created in step 0 and none later
    (:mod:`universal.engine.batch`). A batch may bring the ranks of the survey's protocols,
    ``ranks = (ranks, K, D)``: packet i's rank, the rank range K and growing rank's D (the
    collection's dilation), as :meth:`universal.protocols.Protocol.setup` draws them, in place
    of the open loop's ranks from [0, 2^31) and the network's diameter. A batch run with the
    ``protocol`` rule brings the survey's protocol itself, ``protocol = (Protocol, RankState)``,
    whose keys decide contention (the random-delay and per-step random rules, and any protocol
    written against :class:`universal.protocols.Protocol`), and may hold packet i back until
    step ``release[i]`` (random delay: it first contends in batch step ``release[i] + 1``).
    ``vc_classes`` is the number of virtual channel classes a batch's routes need, counted on
    the routes themselves (:mod:`universal.engine.vcs`).
    """

    name: str
    burst: int = 0
    text: str = ""
    packets: tuple | None = field(default=None, compare=False, hash=False, repr=False)
    ranks: tuple | None = field(default=None, compare=False, hash=False, repr=False)
    protocol: tuple | None = field(default=None, compare=False, hash=False, repr=False)
    release: np.ndarray | None = field(default=None, compare=False, hash=False, repr=False)
    vc_classes: int | None = field(default=None, compare=False, hash=False, repr=False)

    def max_rate(self) -> float:
        """Largest rate in packets per node per step the process can offer (inf for poisson)."""
        return float("inf") if self.name == "poisson" else 1.0


#: The injection processes by name, with one line each (the CLI's help lists them).
INJECTIONS = {
    "bernoulli": "at most one packet per node per step, with probability rate (the default)",
    "poisson": "a Poisson number of packets per node per step with mean rate (any rate)",
    "on-off": "bursty two-state Markov source, on for burst=8 steps on average",
}


def build_injection(text: str) -> Injection:
    """Parse ``bernoulli``, ``poisson`` or ``on-off[:burst=B]``.

    Examples
    --------
    >>> build_injection("on-off:burst=4")
    Injection(name='on-off', burst=4, text='on-off:burst=4')
    """
    spec = parse_spec(text)
    if spec.name not in INJECTIONS:
        raise UserError(f"unknown injection process {spec.name!r} (known: {', '.join(INJECTIONS)})")
    if spec.arg is not None:
        raise UserError(f"injection {spec.name!r} takes key=value parameters, not {spec.arg!r}")
    if spec.name == "on-off":
        check_known_params(spec, {"burst"})
        return Injection("on-off", take_int(spec, "burst", default=8, low=1, high=10**6), spec.text)
    check_known_params(spec, set())
    return Injection(spec.name, 0, spec.text)


@dataclass(frozen=True, eq=False)
class OfferedTraffic:
    """A traffic pattern as an open-loop run uses it.

    Attributes
    ----------
    name : str
    rowsum : ndarray, shape (N,)
        Fraction of the offered rate each node sends (1 for a doubly stochastic pattern).
    perm : ndarray or None
        ``perm[s]`` for permutations (-1 for a node that sends nothing).
    cumulative : ndarray or None, shape (N, N)
        Row-normalised cumulative distribution of the destinations (matrix patterns).
    matrix : ndarray, shape (N, N)
        The traffic matrix itself (for the exact load analysis).
    """

    name: str
    rowsum: np.ndarray
    perm: np.ndarray | None
    cumulative: np.ndarray | None
    matrix: np.ndarray

    @cached_property
    def _flat_cumulative(self) -> np.ndarray:
        N = len(self.rowsum)
        return (np.arange(N)[:, None] + self.cumulative).ravel()

    @property
    def senders(self) -> np.ndarray:
        """Nodes whose row is not zero."""
        return np.flatnonzero(self.rowsum > 0)

    def destinations(self, sources: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One destination per packet from its source's row (one ``rng.random`` call for matrices)."""
        if self.perm is not None:
            return self.perm[sources]
        u = rng.random(len(sources))
        N = len(self.rowsum)
        # rows laid end to end (row s occupies [s, s + 1]): one search finds every destination
        flat = self._flat_cumulative
        out = np.searchsorted(flat, sources + u, side="right") - sources * N
        return np.clip(out, 0, N - 1)
