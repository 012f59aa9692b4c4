"""The FIFO source queue of the one engine (``source_queue="fifo"``): a node's source queue as the
injection channel of an input-queued router, whose head alone may leave.

Two models of a node's source queue (SPEC §11, §13):

``all`` (the default, SPEC §11's ideal network)
    Every queued packet waits directly for its first link, as a packet in the network does: when
    a place on any of its node's outgoing links frees, the highest-priority queued packet that
    can use it takes it.
``fifo`` (the router of Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks", ISCA 2003, §5.1; BookSim's injection queue is the same)
    The source queue is one more input channel of the node's router, a FIFO in creation order
    (packet id) that carries up to B packets per step, like every channel. Only its first B
    packets, the *front*, are routed: they wait for their first link, count in the adaptive
    routings' queue lengths and (adaptive ones) choose their first hop; the packets behind them
    are not routed yet and wait for nothing. A front packet leaves only if every packet before it
    in the queue leaves in the same step, so the queue drains in order and a blocked head holds
    the packets behind it (head-of-line blocking). With B = 1 (the paper's one flit per cycle)
    the head alone may leave, one packet per step at most. The packets that left are replaced at
    the end of the step by the next ones of the queue, which are routed (and, adaptive, decide)
    at the start of the next step, as a packet arriving at a node does. (UGAL-L/G on networks
    with terminals still choose between their two paths when the packet is created.)
``fifo:w=W`` (a FIFO with a look-ahead window of W packets; a prototype between the two)
    The first W packets of the queue (in creation order) are routed, as ``fifo``'s front is, but
    each of them may leave whenever it wins its first link, whatever the packets before it do;
    a packet that leaves is replaced at the end of the step by the next one of the queue. So a
    node sends up to W packets per step (one per free place on its links) and a blocked packet
    holds the queue only while W packets are blocked. With B = 1, W = 1 is ``fifo``; W at least
    the queue's length is ``all``.

In the engine a packet behind the front waits for the dummy *held* link, which never lets it
across (:class:`universal.engine.runs._Batch`'s ``held_link``), and is not counted in the links'
waiting counts. "Leaves only if every packet before it leaves" is settled by repeating the
step's contention without the packets that broke it until none does (a packet removed from the
contention only lets others win, so this ends): with B = 1 there is nothing to repeat.
:func:`universal.engine.reference_runs.simulate_reference` is the plain version.

Examples
--------
>>> check_source_queue("fifo")
'fifo'
"""

from __future__ import annotations

import numpy as np

from universal.engine.contention import ONE
from universal.errors import UserError

__all__ = ["SOURCE_QUEUES", "check_source_queue", "source_window", "FifoSources", "front_violations"]

#: The source-queue models (see the module docstring); the first is the default.
SOURCE_QUEUES = ("all", "fifo", "fifo:w=W")


def check_source_queue(name: str) -> str:
    """``name`` if it is a source-queue model, else a :class:`UserError` naming the models.

    Examples
    --------
    >>> check_source_queue("all")
    'all'
    >>> check_source_queue("fifo:w=4")
    'fifo:w=4'
    """
    if name in ("all", "fifo"):
        return name
    w = name[len("fifo:w="):] if isinstance(name, str) and name.startswith("fifo:w=") else ""
    if not (w.isdigit() and int(w) >= 1 and w == str(int(w))):
        raise UserError(f"unknown source queue {name!r}: choose one of {', '.join(SOURCE_QUEUES)} (all: every "
                        "queued packet may take a free place on its node's links; fifo: the head alone, "
                        "B per step in order; fifo:w=W: the first W packets, each may leave, W >= 1)")
    return name


def source_window(name: str, bandwidth: int) -> tuple[int, bool] | None:
    """The routed front's size of a queue and whether it leaves in order; None for ``all``.

    Examples
    --------
    >>> source_window("fifo", 2), source_window("fifo:w=4", 1), source_window("all", 1)
    ((2, True), (4, False), None)
    """
    if check_source_queue(name) == "all":
        return None
    return (bandwidth, True) if name == "fifo" else (int(name[len("fifo:w="):]), False)


def front_violations(src_key: np.ndarray, pid: np.ndarray, won: np.ndarray) -> np.ndarray:
    """Front packets that won although a packet before them in their queue did not.

    Parameters
    ----------
    src_key : ndarray
        The queue (``run * N + node``) of every front packet.
    pid : ndarray
        Their ids (queue order).
    won : ndarray of bool
        Whether each won its link in this round.

    Returns
    -------
    ndarray of int
        Indices (into the arguments) of the winners to take out of the contention.

    Examples
    --------
    >>> front_violations(np.array([0, 0, 0, 1]), np.array([5, 6, 7, 8]), np.array([True, False, True, True])).tolist()
    [2]
    """
    o = np.lexsort((pid, src_key))
    key, w = src_key[o], won[o]
    first = np.concatenate([[True], key[1:] != key[:-1]])
    # the losers so far in each queue, in queue order: a winner after one breaks the order
    lost = np.cumsum(~w)                                  # losers up to and including each
    start = np.maximum.accumulate(np.where(first, np.arange(len(key)), 0))
    lost_before = lost - ~w - np.where(start > 0, lost[start - 1], 0)
    return o[w & (lost_before > 0)]


class FifoSources:
    """Per-queue counts of a batch's FIFO source queues (see the module docstring).

    Parameters
    ----------
    batch : universal.engine.runs._Batch
        The batch (its runs, nodes, bandwidth B and packet arrays).
    window : int, optional
        The front's size (default B, ``fifo``; W for ``fifo:w=W``).
    ordered : bool
        Whether the front leaves in queue order (``fifo``) or each packet on its own (``fifo:w=W``).
    """

    def __init__(self, batch, window: int | None = None, ordered: bool = True) -> None:
        self.batch = batch
        self.cap = batch.B if window is None else window      # routed packets of a queue at most
        self.ordered = ordered                                # the front leaves in order (fifo)
        self.front = np.zeros(batch.R * batch.N, dtype=np.int64)     # routed packets of each queue (<= cap)
        self.behind = np.zeros(batch.R * batch.N, dtype=np.int64)    # packets behind the front

    def join(self, lo: int, hi: int) -> None:
        """The packets just written at ``lo..hi`` (created in this step, routed as every new packet
        is) join their queues: those beyond the first B of a queue are taken back off their link."""
        b, a = self.batch, self.batch.a
        key = a["run"][lo:hi] * b.N + a["src"][lo:hi]
        o = np.lexsort((a["pid"][lo:hi], key))
        k = key[o]
        first = np.concatenate([[True], k[1:] != k[:-1]])
        turn = np.arange(len(k)) - np.maximum.accumulate(np.where(first, np.arange(len(k)), 0))
        place = np.empty(len(k), dtype=np.int64)
        place[o] = turn                                   # 0, 1, ... among this step's packets of the queue
        behind = (self.behind[key] > 0) | (self.front[key] + place >= self.cap)
        self.front += np.bincount(key[~behind], minlength=len(self.front))
        self.behind += np.bincount(key[behind], minlength=len(self.behind))
        if not behind.any():
            return
        g = lo + np.flatnonzero(behind)
        want = a["want"][g]
        if b.count_waiting:
            np.subtract.at(b.waiting, want[want >= 0], ONE)
        a["want"][g] = b.held_link
        if b.adaptive and len(b.pending_decide):          # not routed yet: no decision
            b.pending_decide = b.pending_decide[a["want"][b.pending_decide] != b.held_link]

    def release(self, left: np.ndarray) -> None:
        """The front packets of the queues ``left`` (one entry per packet that left its queue in
        this step) are replaced by the next ones in queue order, routed from now on."""
        b, a = self.batch, self.batch.a
        if not len(left):
            return
        self.front -= np.bincount(left, minlength=len(self.front))
        take = np.minimum(self.behind, self.cap - self.front)
        if not take.any():
            return
        h = b.head
        held = np.flatnonzero(a["want"][h:] == b.held_link) + h
        key = a["run"][held] * b.N + a["src"][held]
        held, key = held[take[key] > 0], key[take[key] > 0]
        o = np.lexsort((a["pid"][held], key))
        held, key = held[o], key[o]
        first = np.concatenate([[True], key[1:] != key[:-1]])
        turn = np.arange(len(key)) - np.maximum.accumulate(np.where(first, np.arange(len(key)), 0))
        g = held[turn < take[key]]
        self.front += take
        self.behind -= take
        self._route(g)

    def _route(self, g: np.ndarray) -> None:
        """The packets at ``g`` reach the front: an oblivious one waits for its first link (in the
        class of its first hop), an adaptive one chooses at the start of the next step."""
        b, a = self.batch, self.batch.a
        # an adaptive packet's "cur" is no place in the path store: read the store for the others only
        ad = a["kind"][g] > 0 if b.adaptive else np.zeros(len(g), dtype=bool)
        want = np.full(len(g), -1, dtype=a["want"].dtype)
        want[~ad] = b.store[a["cur"][g[~ad]]]
        if b.adaptive:
            b.pending_decide = np.concatenate([b.pending_decide, g[ad]])
        a["want"][g] = want
        if b.count_waiting:
            np.add.at(b.waiting, want[want >= 0], ONE)
        if b.vc is not None:
            from universal.engine.vcs import first_class

            obl = want >= 0
            a["vc"][g[obl]] = first_class(b.vc_wrap[want[obl]], b.vc.ring)

    def in_order(self, at: np.ndarray, recompute) -> np.ndarray:
        """The step's winners ``at`` (positions from ``head``) with the queue order kept: while a
        front packet wins although one before it in its queue lost, the contention is run again
        (``recompute(excluded)``, the positions taken out) without the packets that broke it."""
        b, a = self.batch, self.batch.a
        h = b.head
        front = np.flatnonzero((a["prev"][h:] == b.inject_slot) & (a["want"][h:] < b.trash))
        if not len(front):
            return at
        key = a["run"][h:][front] * b.N + a["src"][h:][front]
        pid = a["pid"][h:][front]
        excluded = np.empty(0, dtype=np.int64)
        while True:
            # (the packets taken out wait for the dummy link, which may name "winners": not real ones)
            at = at[~np.isin(at, excluded)]
            bad = front_violations(key, pid, np.isin(front, at))
            if not len(bad):
                return at
            excluded = np.concatenate([excluded, front[bad]])
            at = recompute(excluded)

    def leavers(self, gi: np.ndarray) -> np.ndarray:
        """The queues (``run * N + node``) of the packets at ``gi`` that are leaving their source
        queue now (read before the move records where they went)."""
        b, a = self.batch, self.batch.a
        out = gi[a["prev"][gi] == b.inject_slot]
        return a["run"][out] * b.N + a["src"][out]
