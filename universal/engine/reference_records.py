"""The plain records the reference engine reads (:mod:`universal.engine.reference_core`): a
packet (:class:`RefPacket`) and what its routing decisions read (:class:`RoutingView`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from universal.networks import Network

__all__ = ["RefPacket", "RoutingView"]


@dataclass
class RefPacket:
    """One packet as the reference engine sees it.

    ``path`` is the list of links of a packet routed obliviously (None for an adaptive one, which
    keeps ``node``, ``target`` and, under GOAL, ``signs``/``remaining`` per dimension).
    ``want`` is the link it waits for (None: an adaptive packet still to choose), ``buffer`` the
    link whose buffer it sits in (None: its source), ``arrived`` the step it reached its current
    node (the fifo rule's key), ``injected`` the step it crossed its first link (-1: not yet; the
    injection-age rule's key), ``alt`` a UGAL-L/G packet's second candidate path and ``classes``
    the virtual channel class of every hop of ``path`` (with virtual channels). With FIFO VCs
    ``fifo_vc`` is the (link, VC) queue it sits in (None: its source) and ``next_vc`` the VC it
    was granted for the hop it is about to make. With GOAL's
    *-channels an adaptive packet keeps ``vc``, the class of the hop it waits to make (chosen
    with ``want``), and ``wrapped``, bit i set once it has crossed dimension i's wrap-around.
    """

    pid: int
    created: int
    src: int
    dst: int
    node: int
    path: list | None
    target: int
    via: int = -1
    signs: list = field(default_factory=list)
    remaining: list = field(default_factory=list)
    tie: int = 0
    rank: int = 0
    pos: int = 0
    hops: int = 0
    arrived: int = 0
    injected: int = -1
    want: int | None = None
    buffer: int | None = None
    alt: list | None = None
    classes: list | None = None
    vc: int | None = None
    wrapped: int = 0
    fifo_vc: tuple | None = None
    next_vc: int = 0


@dataclass
class RoutingView:
    """What the reference's routing decisions read, in plain Python.

    ``kind`` is ``paths`` (every packet follows its ``path``), ``ugal-paths`` (UGAL-L/G: a minimal
    path and a Valiant one, one taken at injection; ``mode`` is ``local`` or ``global``),
    ``min-adaptive``, ``goal``, ``ugal``, ``chaos`` or ``splitter``. ``distance`` is the hop distance
    table (min-adaptive, ugal, chaos), ``k``, ``n`` the torus (goal) and ``queue`` CHAOS's
    shared-queue places per node. ``link_weight`` (UGAL on a dragonfly): every link's weight, 1
    and ``1 + N`` for a global link; the reference then finds the lightest paths itself
    (:meth:`ReferenceCore.lightest`) and its minimal legs are those, their hops its distances.
    """

    kind: str
    network: Network
    threshold: float = 0.0
    mode: str | None = None
    distance: list | None = None
    link_weight: list | None = None
    k: int = 0
    n: int = 0
    queue: list | None = None
