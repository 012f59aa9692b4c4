"""FIFO virtual channels (``vc_buffer="fifo"``): every VC a FIFO of b one-flit packets whose head
alone may leave, the buffers of the input-queued router of Singh, Dally, Gupta & Towles ("GOAL:
a load-balanced adaptive routing algorithm for torus networks", ISCA 2003, §4.1 and §5.1).

Two models of a VC buffer (``--vc-buffer``):

``set`` (the default)
    The places of a VC class at the head of a link form one buffer of (VCs of the class) × b
    places, and any packet in it may leave, by priority: no head-of-line blocking.
``fifo``
    Each of the link's V virtual channels is a FIFO of b places. Only the packet at a VC's head
    is routed across the switch (one per VC and step), so a head whose next link or next buffer is
    taken holds every packet behind it in that VC, even those that want an idle link
    (head-of-line blocking). A packet crossing a link into a VC class takes one VC of its class
    that had a free place at the start of the step (the credit rule, as for sets); of those the
    one holding the fewest packets, ties to the lowest VC number. With one-flit packets a VC may be
    allocated whenever it has a credit; BookSim's allocator can be told to put empty VCs first
    (its ``vc_prioritize_empty`` option, off by default), and we go one step further to the
    emptiest, deterministically: it keeps a class's VCs as even as it can, so one blocked head
    holds as few packets as the class allows.
    With one VC per link (``--vcs 1``) the link's one buffer is a FIFO.

Every packet still routes as before while it waits (an adaptive packet re-chooses its link and
class in every step in which the class it chose has no free VC; packets behind a head choose
too, but cannot leave until they reach the head). A class has a free place if and only if one
of its VCs has (each VC holds b), so the class-level room of the set model is still the test of
whether a packet may enter; the FIFO decides only *which* packets may leave and which VC a packet
enters. With B > 1 a VC would have to send several packets in order per step; that is refused.

State: per VC buffer ``v * links_span + link`` (VC ``v`` at the head of ``link``), the packets in
it and two counters, the next place number to give and the place number of its head; a packet
in a VC carries its VC buffer and its place number, and is at the head when its place number is
the head's. :func:`universal.engine.reference_runs.simulate_reference` is the plain version.

Examples
--------
>>> check_vc_buffer("fifo")
'fifo'
"""

from __future__ import annotations

import numpy as np

from universal.engine.contention import ONE
from universal.errors import UserError

__all__ = ["VC_BUFFERS", "check_vc_buffer", "FifoVCs", "vc_ranges"]

#: The VC buffer models (see the module docstring); the first is the default.
VC_BUFFERS = ("set", "fifo")


#: ``buffer`` not given: :func:`check_vc_buffer` checks the name alone (a scenario file's key).
_UNCHECKED = object()


def check_vc_buffer(name: str, buffer=_UNCHECKED, bandwidth: int = 1, routing: str | None = None) -> str:
    """``name`` if it is a VC buffer model (and, given ``buffer``, one that fits the run: FIFO
    VCs need bounded buffers, B = 1 and a routing with VCs), else a :class:`UserError`.

    Examples
    --------
    >>> check_vc_buffer("set")
    'set'
    >>> check_vc_buffer("fifo", buffer=None)
    Traceback (most recent call last):
    ...
    universal.errors.UserError: --vc-buffer fifo needs bounded buffers: give --buffer b (each VC a FIFO of b packets)
    """
    if name not in VC_BUFFERS:
        raise UserError(f"unknown VC buffer {name!r}: choose one of {', '.join(VC_BUFFERS)} (set: any packet of a "
                        "VC class may leave; fifo: each VC a FIFO whose head alone may leave)")
    if name == "fifo" and buffer is not _UNCHECKED:
        if buffer is None:
            raise UserError("--vc-buffer fifo needs bounded buffers: give --buffer b (each VC a FIFO of b packets)")
        if bandwidth != 1:
            raise UserError(f"--vc-buffer fifo takes B = 1 (a VC's head alone leaves, one packet per step); "
                            f"got --bandwidth {bandwidth}")
        if routing is not None and routing.split(":")[0] == "chaos":
            raise UserError("--vc-buffer fifo is for routings with virtual channels; CHAOS has none "
                            "(its input buffers and shared queue are its own model)")
    return name


def vc_ranges(vcs: int, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The first VC and the number of VCs of every class: class c owns the VCs ``v`` with
    ``v * classes // vcs == c`` (:func:`universal.engine.vcs.class_capacity`), a contiguous range.

    Examples
    --------
    >>> [x.tolist() for x in vc_ranges(6, 3)], [x.tolist() for x in vc_ranges(3, 2)]
    ([[0, 2, 4], [2, 2, 2]], [[0, 2], [2, 1]])
    """
    owners = np.arange(vcs) * classes // vcs
    count = np.bincount(owners, minlength=classes)
    first = np.concatenate([[0], np.cumsum(count)[:-1]])
    return first.astype(np.int64), count.astype(np.int64)


class FifoVCs:
    """The FIFO VC state of one batch (:class:`universal.engine.runs._Batch`)."""

    def __init__(self, batch, vcs: int) -> None:
        self.span = batch.links_span
        self.vcs = vcs if batch.vc is not None else 1
        size = self.vcs * self.span
        self.occ = np.zeros(size, dtype=np.int32)       # packets in each VC buffer
        self.tail = np.zeros(size, dtype=np.int64)      # the place number the next packet gets
        self.head = np.zeros(size, dtype=np.int64)      # the place number of the packet at the head
        # per run and class: first VC and VCs (a batch may mix routings with different class counts)
        classes = batch.classes
        self.first = np.zeros((batch.R, classes), dtype=np.int64)
        self.count = np.ones((batch.R, classes), dtype=np.int64)
        if batch.vc is not None:
            from universal.engine.vcs import plan_vcs

            for r, s in enumerate(batch.specs):
                g = plan_vcs(s.router, vcs, batch.buffer, s.injection.vc_classes).classes
                first, count = vc_ranges(vcs, g)
                self.first[r, :g], self.count[r, :g] = first, count
        self.widest = int(self.count.max())

    def at_head(self, vcbuf: np.ndarray, seq: np.ndarray) -> np.ndarray:
        """Whether each packet may leave its buffer: it is in no VC (its source queue) or at its
        VC's head."""
        inside = vcbuf >= 0
        return ~inside | (seq == self.head[np.where(inside, vcbuf, 0)])

    def move(self, a: dict, gi: np.ndarray, old: np.ndarray, movers: np.ndarray, entered: np.ndarray,
             run: np.ndarray) -> None:
        """The packets ``gi`` crossed a link (``old``: their VC buffers before, -1 for none); of
        them ``movers`` entered the class buffers ``entered`` (``class * links_span + link``).
        The movers take the emptiest VC of their class as it was at the start of the step (before
        anyone left), then the leavers free their places."""
        if len(movers):
            cls, link = entered // self.span, entered % self.span
            first, count = self.first[run, cls], self.count[run, cls]
            j = np.arange(self.widest)
            v = first[:, None] + j[None, :]
            held = self.occ[np.minimum(v, self.vcs - 1) * self.span + link[:, None]]
            occ = np.where(j[None, :] < count[:, None], held, np.iinfo(np.int32).max)
            vb = (first + np.argmin(occ, axis=1)) * self.span + link
        inside = old >= 0
        np.subtract.at(self.occ, old[inside], ONE)
        np.add.at(self.head, old[inside], 1)
        if len(movers):
            # B = 1: at most one packet enters a link, so a VC, per step: no two share a place number
            a["vcbuf"][movers] = vb
            a["seq"][movers] = self.tail[vb]
            self.tail[vb] += 1
            np.add.at(self.occ, vb, ONE)

    def drop(self, vcbuf: np.ndarray) -> None:
        """Packets of ended runs leave their VCs (their runs' buffers are never used again)."""
        np.subtract.at(self.occ, vcbuf[vcbuf >= 0], ONE)
