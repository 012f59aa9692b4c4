"""Schedules of a path collection and the independent replay check every solver result passes.

A schedule gives, for every hop of every path, the step (1, 2, ...) in which the packet crosses
that link; it is stored aligned with the collection's flat ``links`` array, like the engines'
``hop_steps``. The model is the one of SPEC §2 and §12 (Meyer auf der Heide & Scheideler,
"Communication in Parallel Systems", 1995, §2.1 and §3): every packet crosses the links of its
path in order, at most one link per step; at most B packets cross a link in one step; buffers
are unbounded. :func:`replay` checks those rules by walking the packets step by step, sharing
no code with the solvers, so a schedule a solver got wrong is caught before anyone sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from universal.paths import PathCollection


class ScheduleError(AssertionError):
    """A schedule breaks the model's rules. It comes from a solver, so this is a bug, never output."""


@dataclass
class Schedule:
    """A checked schedule: the step of every hop and its makespan.

    Attributes
    ----------
    collection : PathCollection
        The paths the packets follow (for free paths: the paths the solver chose).
    hop_steps : ndarray of int64
        Step of every hop, aligned with ``collection.links``.
    bandwidth : int
        B, the packets a link may forward per step.
    makespan : int
        The last step in which a packet moves (0 if no packet moves).
    """

    collection: PathCollection
    hop_steps: np.ndarray
    bandwidth: int
    makespan: int

    def moves(self) -> list[list[tuple[int, int]]]:
        """Per step ``1..makespan``, the ``(packet, link)`` crossings, by packet id.

        Examples
        --------
        >>> from universal.networks import build_network
        >>> net = build_network("mesh:k=3,n=1")
        >>> paths = PathCollection.from_node_paths(net, [[0, 1, 2], [1, 2]])
        >>> replay(paths, np.array([1, 2, 1]), bandwidth=1).moves()
        [[(0, 0), (1, 2)], [(0, 2)]]
        """
        owner = np.repeat(np.arange(self.collection.size), self.collection.lengths)
        steps: list[list[tuple[int, int]]] = [[] for _ in range(self.makespan)]
        for packet, link, step in zip(owner.tolist(), self.collection.links.tolist(), self.hop_steps.tolist()):
            steps[step - 1].append((packet, link))
        return [sorted(s) for s in steps]


def replay(collection: PathCollection, hop_steps: np.ndarray, bandwidth: int,
           sources: np.ndarray | None = None, dests: np.ndarray | None = None) -> Schedule:
    """Check a schedule against the model's rules by replaying it, and return it as a :class:`Schedule`.

    Every packet starts at the first node of its path; in each step it may cross the next link
    of its path, which must leave the node where it is; it is delivered when its path is done.
    At most ``bandwidth`` packets cross a link per step. With ``sources`` and ``dests`` (free
    paths), every path must also join the packet's source to its destination.

    Parameters
    ----------
    collection : PathCollection
    hop_steps : array of int
        Step (>= 1) of every hop, aligned with ``collection.links``.
    bandwidth : int
        B.
    sources, dests : array of int, optional
        The routing problem the paths must solve.

    Returns
    -------
    Schedule

    Raises
    ------
    ScheduleError
        If any rule is broken (a solver bug).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("mesh:k=3,n=1")
    >>> paths = PathCollection.from_node_paths(net, [[0, 1, 2], [0, 1, 2]])
    >>> replay(paths, np.array([1, 2, 2, 3]), bandwidth=1).makespan
    3
    >>> replay(paths, np.array([1, 2, 1, 2]), bandwidth=1)
    Traceback (most recent call last):
    ...
    universal.optimum.schedule.ScheduleError: step 1: 2 packets cross link 0->1, more than B = 1

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1995, §2.1.
    """
    net = collection.network
    steps = [int(s) for s in np.asarray(hop_steps).tolist()]
    links = collection.links.tolist()
    offsets = collection.offsets.tolist()
    if len(steps) != len(links):
        raise ScheduleError(f"{len(steps)} hop steps for {len(links)} hops")
    tails, heads = net.link_tail.tolist(), net.link_head.tolist()
    # Each packet's position and the index of its next hop, walked step by step.
    where = [int(s) for s in collection.sources.tolist()]
    if sources is not None:
        if [int(s) for s in sources] != where or [int(d) for d in dests] != collection.dests.tolist():
            raise ScheduleError("the paths do not solve the routing problem's (source, destination) pairs")
    next_hop = offsets[:-1]
    crossings: dict[int, list[tuple[int, int]]] = {}
    for packet in range(collection.size):
        for hop in range(offsets[packet], offsets[packet + 1]):
            if steps[hop] < 1:
                raise ScheduleError(f"packet {packet} crosses hop {hop - offsets[packet]} in step {steps[hop]} < 1")
            crossings.setdefault(steps[hop], []).append((packet, hop))
    makespan = max(crossings, default=0)
    for step in range(1, makespan + 1):
        per_link: dict[int, int] = {}
        moved: set[int] = set()
        for packet, hop in crossings.get(step, []):
            if packet in moved:
                raise ScheduleError(f"step {step}: packet {packet} crosses two links")
            moved.add(packet)
            if hop != next_hop[packet]:
                raise ScheduleError(f"step {step}: packet {packet} crosses hop {hop - offsets[packet]} "
                                    f"before hop {next_hop[packet] - offsets[packet]}")
            link = links[hop]
            if tails[link] != where[packet]:
                raise ScheduleError(f"step {step}: packet {packet} is at node {where[packet]}, "
                                    f"not at the tail of link {net.link_label(link)}")
            per_link[link] = per_link.get(link, 0) + 1
            if per_link[link] > bandwidth:
                raise ScheduleError(f"step {step}: {per_link[link]} packets cross link {net.link_label(link)}, "
                                    f"more than B = {bandwidth}")
        # Moves are applied after the whole step is checked: a packet moves at most once per step.
        for packet, hop in crossings.get(step, []):
            where[packet] = heads[links[hop]]
            next_hop[packet] = hop + 1
    for packet in range(collection.size):
        if next_hop[packet] != offsets[packet + 1] or where[packet] != int(collection.dests[packet]):
            raise ScheduleError(f"packet {packet} does not reach its destination")
    return Schedule(collection, np.asarray(steps, dtype=np.int64), bandwidth, makespan)
