"""Packet creation for open-loop runs: every random draw of a run happens here, a chunk of steps
at a time, from the run's own generator (SPEC §11).

Drawing a chunk (:data:`CHUNK` steps) makes, in this order: the injection counts of every node
and step, the destinations, the routing choices (:meth:`Router.draw`), then, when the run needs
them, the tie seeds (adaptive routing). The random ranks of the ranked priorities
(``random-rank``, ``random``, ``growing-rank``) come from a second generator of the run
(:func:`rank_generator`), so a run offers the same packets on the same paths under every
priority: priorities are compared on common random numbers. Packets are
listed by (creation step, source node). Both engines - the fast one and the plain reference -
use these draws, so with one seed they see the same packets; a run's draws never depend on the
runs batched with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from universal.errors import UserError
from universal.engine.priorities import RANK_RANGE, RANKED
from universal.engine.routes import RouteDraw, Router
from universal.engine.workload import Injection, OfferedTraffic

__all__ = ["CHUNK", "RunSpec", "Creations", "InjectionState", "draw_chunk", "rank_generator"]

#: Steps drawn at once; part of the random stream's definition (changing it changes the draws).
#: The measurement's phases change only at these boundaries (``measure.PERIOD``).
CHUNK = 100


@dataclass
class RunSpec:
    """One open-loop run: what it offers and how it routes.

    Attributes
    ----------
    traffic : OfferedTraffic
    router : Router
    injection : Injection
    rate : float
        Offered rate in packets per node per step (a node with row sum ``r`` creates ``rate * r``).
    seed : int or numpy.random.SeedSequence
    priority : str
        ``age`` (default) or another rule of :mod:`universal.engine.priorities`.
    """

    traffic: OfferedTraffic
    router: Router
    injection: Injection
    rate: float
    seed: object = 0
    priority: str = "age"

    def node_rates(self) -> np.ndarray:
        """Packets per step each node creates on average."""
        return self.rate * self.traffic.rowsum

    def check(self) -> None:
        """Refuse rates the injection process cannot offer (one ``UserError``)."""
        if self.injection.name == "batch":
            return                         # its packets are given, not offered at a rate
        if not self.rate > 0:
            raise UserError(f"the offered rate must be positive (got {self.rate:g} packets per node per step)")
        top = float(self.node_rates().max())
        if not top <= MAX_PACKETS_PER_NODE_STEP:
            raise UserError(f"this load asks a node for {top:.4g} packets per step; at most "
                            f"{MAX_PACKETS_PER_NODE_STEP} are created per node and step (a run far beyond "
                            "saturation holds hundreds of steps of them in memory)")
        if self.injection.name != "poisson" and top > 1 + 1e-12:
            raise UserError(f"{self.injection.name} injection creates at most one packet per node per step; "
                            f"this load asks a node for {top:.4g} packets per step (use --injection poisson)")
        if self.injection.name == "on-off" and top >= 1 - 1e-12:
            raise UserError("on-off injection needs a rate below one packet per node per step")


#: Most packets one node may be asked to create per step (poisson sources; bernoulli and on-off
#: create at most one). Far beyond any network's saturation, and it bounds the memory of a run
#: that holds hundreds of steps of offered packets before it is judged unstable.
MAX_PACKETS_PER_NODE_STEP = 100


@dataclass
class InjectionState:
    """What an injection process carries from one chunk to the next (on-off: the node states)."""

    on: np.ndarray | None = None
    ranks: np.random.Generator | None = None     # the run's rank stream, made at its first chunk


@dataclass
class Creations:
    """The packets a run creates in one chunk, in creation order.

    ``step``, ``src``, ``dst`` per packet; ``route`` the routing choices; ``rank`` (the ranked
    priorities) and ``tie`` (adaptive routing) when the run needs them.
    """

    step: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    route: RouteDraw
    rank: np.ndarray | None = None
    tie: np.ndarray | None = None


def _injection_counts(spec: RunSpec, state: InjectionState, steps: int, rng: np.random.Generator) -> np.ndarray:
    """Packets created per (step, node), shape (steps, N)."""
    p = spec.node_rates()
    N = len(p)
    name = spec.injection.name
    if name == "bernoulli":
        return (rng.random((steps, N)) < p).astype(np.int64)
    if name == "poisson":
        return rng.poisson(p, size=(steps, N)).astype(np.int64)
    # on-off: leave the on state w.p. beta = 1/burst, enter it w.p. alpha, so that the long-run
    # fraction of steps on is alpha / (alpha + beta) = rate; while on, send w.p. the row sum.
    rowsum = spec.traffic.rowsum
    beta = 1.0 / spec.injection.burst
    alpha = beta * spec.rate / (1.0 - spec.rate)
    if alpha > 1:
        raise UserError(f"on-off with burst={spec.injection.burst} cannot offer rate {spec.rate:.4g} "
                        "(the off state would have to last less than a step); use a longer burst")
    u = rng.random((steps + 1, N))
    send = rng.random((steps, N))
    on = state.on if state.on is not None else u[0] < spec.rate
    counts = np.empty((steps, N), dtype=np.int64)
    for t in range(steps):
        counts[t] = on & (send[t] < rowsum)
        on = np.where(on, u[t + 1] >= beta, u[t + 1] < alpha)
    state.on = on
    return counts


#: The spawn key that makes a run's rank stream from its seed (far from the children 0, 1, ...
#: that ``SeedSequence.spawn`` numbers).
RANK_STREAM = 0x52414E4B


def rank_generator(seed) -> np.random.Generator:
    """The generator of a run's random ranks: a child of its seed that no other draw uses.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        The run's seed (:attr:`RunSpec.seed`); a SeedSequence is not changed.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> int(rank_generator(7).integers(0, 100)) == int(rank_generator(np.random.SeedSequence(7)).integers(0, 100))
    True
    """
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    child = np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, RANK_STREAM), pool_size=ss.pool_size)
    return np.random.default_rng(child)


def draw_chunk(spec: RunSpec, state: InjectionState, first_step: int, rng: np.random.Generator,
               steps: int = CHUNK) -> Creations:
    """Draw every packet ``spec`` creates in steps ``first_step .. first_step + steps - 1``.

    Parameters
    ----------
    spec : RunSpec
    state : InjectionState
        Updated in place (the on-off source states).
    first_step : int
    rng : numpy.random.Generator
        The run's generator.
    steps : int

    Returns
    -------
    Creations

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=4,n=1")
    >>> spec = RunSpec(offered_traffic(net, "tornado"), build_router("dor", net), build_injection("bernoulli"), 1.0)
    >>> c = draw_chunk(spec, InjectionState(), 0, np.random.default_rng(0), steps=2)
    >>> c.step.tolist(), c.src.tolist(), c.dst.tolist()
    ([0, 0, 0, 0, 1, 1, 1, 1], [0, 1, 2, 3, 0, 1, 2, 3], [1, 2, 3, 0, 1, 2, 3, 0])
    """
    if spec.injection.name == "batch":      # the problem's packets, all in step 0
        src, dst = (np.asarray(a, dtype=np.int64) for a in spec.injection.packets)
        if first_step > 0:
            src, dst = src[:0], dst[:0]
        t = np.zeros(len(src), dtype=np.int64)
    else:
        counts = _injection_counts(spec, state, steps, rng)
        t, src = np.nonzero(counts)
        reps = counts[t, src]
        t, src = np.repeat(t, reps), np.repeat(src, reps)
        dst = spec.traffic.destinations(src, rng)
    route = spec.router.draw(src, dst, rng)
    tie = rng.integers(0, 2**63, size=len(src)).astype(np.uint64) if spec.router.adaptive else None
    rank = None
    if spec.priority in RANKED and spec.injection.ranks is not None:     # a batch's survey ranks
        rank = np.asarray(spec.injection.ranks[0], dtype=np.int64)[:len(src)]
    elif spec.priority in RANKED:
        if state.ranks is None:
            state.ranks = rank_generator(spec.seed)
        rank = state.ranks.integers(0, RANK_RANGE, size=len(src))
    return Creations(t + first_step, src.astype(np.int64), dst.astype(np.int64), route, rank, tie)
