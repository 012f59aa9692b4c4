"""The contention rules of the open-loop engine: the survey's protocols read in an open system
(SPEC §6, §11; Meyer auf der Heide & Scheideler, "Communication in parallel systems", 1996,
§4.1-4.2 and the greedy rules).

In an open system packets keep arriving, so there is no problem size n, congestion C or
dilation D fixed before the run; each rule is read as follows (every rule breaks ties toward
the older packet, the lower packet id, ids following creation order):

* ``age`` - the oldest packet first, age counted from the packet's creation (the default).
* ``injection-age`` - the GOAL paper's arbitration as it states it (Singh, Dally, Gupta &
  Towles, "GOAL: a load-balanced adaptive routing algorithm for torus networks", 2003, §5.1:
  priority to the packet with the older time-stamp since injection). A packet is *injected* in
  the step it crosses its first link, and that step is its time stamp: among packets in the
  network the earlier stamp wins, equal stamps go as ``age`` (the older, then the lower id). A
  packet still in its source queue has no stamp yet and loses to every injected packet; among
  themselves queued packets go as ``age``. So a packet created later but injected earlier beats
  one that waited longer in its source queue, which ``age`` would let win. Where the paper's
  router keeps its not-yet-injected packets is our reading: it says only that the stamp is taken
  at injection, so ranking queued packets behind every stamped one (and by creation among
  themselves) is the reading, not the paper's words.
* ``longest-in-system`` - the survey's greedy rule of the same meaning: the packet created
  earliest. In an open system this *is* ``age`` (same rule, same results); in the batch engine,
  where every packet starts at step 0, it reduces to the packet id.
* ``fifo`` - the earliest arrival at the current node, then the oldest.
* ``random-rank`` - a rank drawn uniformly from [K] when the packet is created, never changed;
  the lowest rank wins (survey §4.1). With no finite C + D + log n to size it, K is
  :data:`RANK_RANGE` = 2^31, so ties between ranks are all but absent and the rule is a random
  order of the packets, fixed at creation and independent of their age.
* ``random`` - the same rule as ``random-rank`` (its earlier name here; the same draws give the
  same results). The batch protocol ``random`` of SPEC §6 redraws every step; this one does not.
* ``growing-rank`` - random rank whose rank grows by K/D every time the packet crosses a link
  (survey §4.2), so a packet's ranks strictly increase along its path. D, the dilation in the
  survey, is here the network's diameter (:func:`rank_span`), the same for every routing: a
  packet that has made D hops more than another loses to it whatever their initial ranks.
  Exactly: the key ``rank * D + hops_made * K``, the lowest first.
* ``farthest-to-go`` / ``nearest-to-go`` - the most / fewest hops still ahead first (for an
  adaptive packet: its remaining minimal distance, through its intermediate if it has one).

Trial-and-failure and duplication are not priorities: they are bufferless (a packet that loses
is discarded and sent again in the next round of 4D steps, over a batch known in advance), and
the open-loop engine buffers every packet it creates, so they are refused with the reason.

With unbounded buffers every rule is work-conserving - a link forwards B packets whenever B wait
- so for an oblivious routing the rule moves latency, not the saturation throughput (capacity
over the largest channel load).
"""

from __future__ import annotations

import numpy as np

from universal.errors import UserError

__all__ = ["BATCH_RULES", "PRIORITIES", "RANKED", "RANK_RANGE", "check_priority", "rank_span"]

#: Contention rules of the open-loop engine (SPEC §11): name -> one line.
PRIORITIES = {
    "age": "oldest packet first, ties to the lower id (age from creation; the default)",
    "injection-age": "earliest first link crossed first (GOAL's time-stamp since injection), then as age; "
                     "packets still in their source queue after every injected one, as age among themselves",
    "longest-in-system": "the packet created earliest first: the same rule as age in an open system",
    "fifo": "earliest arrival at the current node first, then the oldest",
    "random-rank": "a rank drawn uniformly at creation, the lowest first, then the oldest (survey §4.1)",
    "random": "the same rule as random-rank (its earlier name; same draws, same results)",
    "growing-rank": "random rank plus K/D per hop made (D: the network's diameter), the lowest first, "
                    "then the oldest (survey §4.2)",
    "farthest-to-go": "most hops left first, then the oldest",
    "nearest-to-go": "fewest hops left first, then the oldest",
}

#: Rules of batch runs only (:func:`universal.engine.simulate`): the survey's protocol itself decides,
#: through its keys (:meth:`universal.protocols.Protocol.keys`, lowest first, ties to the lower
#: packet id) or, for a per-step rule such as ``random``, fresh keys drawn every step from the
#: run's generator in increasing packet id order. An open system has no problem to draw its ranks
#: or delays for, so these are not open-loop priorities.
BATCH_RULES = ("protocol",)

#: The rules that read a rank drawn at creation (all from the same draw of the run's generator).
RANKED = ("random-rank", "random", "growing-rank")

#: K, the range [0, K) of the ranks drawn at creation.
RANK_RANGE = 2**31

#: The survey's protocols with no open-loop form, and why.
_NOT_PRIORITIES = {
    "trial-and-failure": "it is bufferless: a packet that loses a link is discarded and resent in rounds of 4D "
                         "steps over a batch known in advance, and the open-loop engine buffers every packet it "
                         "creates (run it with 'universal route --protocols trial-and-failure')",
    "duplication": "it is bufferless: copies that collide are discarded and resent in rounds over a batch known "
                   "in advance, and the open-loop engine buffers every packet it creates (run it with "
                   "'universal route --protocols duplication')",
}


def check_priority(name: str) -> str:
    """``name`` if it is an open-loop priority, else one :class:`UserError` saying why not.

    Parameters
    ----------
    name : str

    Returns
    -------
    str

    Examples
    --------
    >>> check_priority("growing-rank")
    'growing-rank'
    >>> check_priority("trial-and-failure")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: priority 'trial-and-failure' has no open-loop form: it is bufferless: a packet \
that loses a link is discarded and resent in rounds of 4D steps over a batch known in advance, and the open-loop \
engine buffers every packet it creates (run it with 'universal route --protocols trial-and-failure')
    """
    if name in PRIORITIES:
        return name
    if name in _NOT_PRIORITIES:
        raise UserError(f"priority {name!r} has no open-loop form: {_NOT_PRIORITIES[name]}")
    raise UserError(f"unknown priority {name!r} (known: {', '.join(PRIORITIES)})")


def rank_span(network) -> int:
    """D of ``growing-rank``: the network's diameter (at least 1).

    The survey's D is the dilation of the path collection; an open system has no collection
    fixed in advance, so the longest shortest path of the network stands in for it. On meshes,
    tori and hypercubes it is the distance from node 0 (a corner of the mesh); elsewhere the
    largest distance found by breadth-first search from every node, a block of sources at a
    time.

    Parameters
    ----------
    network : universal.networks.Network

    Returns
    -------
    int

    Examples
    --------
    >>> from universal.networks import build_network
    >>> rank_span(build_network("torus:k=8,n=2")), rank_span(build_network("mesh:k=4,n=2"))
    (8, 6)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in parallel systems", 1996, §4.2.
    """
    N = network.num_nodes
    if network.kind in ("mesh", "torus", "hypercube"):
        d = network.distances(np.zeros(N, dtype=np.int64), np.arange(N, dtype=np.int64))
        return max(1, int(d.max()))
    from scipy.sparse.csgraph import shortest_path

    best = 0
    block = max(1, 2_000_000 // max(N, 1))
    for lo in range(0, N, block):
        dist = shortest_path(network.adjacency, unweighted=True, indices=np.arange(lo, min(N, lo + block)))
        if np.isinf(dist).any():
            raise UserError(f"{network.name} is not connected; open-loop runs need paths between all nodes")
        best = max(best, int(dist.max()))
    return max(1, best)
