"""CHAOS written plainly, one packet at a time: the reference core's version of the rules of
:mod:`universal.engine.chaos` (Konstantinidou & Snyder, "The Chaos router", IEEE Transactions on
Computers, 1994, in the synchronous-step model).

A packet's ``buffer`` is None in its source queue, a link id in that link's input buffer, and
``("queue", node)`` in its node's shared queue; the core's ``occupancy`` counts all of them.
"""

from __future__ import annotations

from collections import defaultdict

from universal.engine.ties import tie_uniform_py

__all__ = ["ChaosRules"]


class ChaosRules:
    """The CHAOS rules over a :class:`~universal.engine.reference_core.ReferenceCore`.

    Parameters
    ----------
    core : ReferenceCore
        Its ``out`` (links leaving every node, increasing id), ``head``, ``dist``, ``buffer`` (b)
        and ``occupancy``.
    queue : list of int
        Shared-queue places of every node.
    """

    def __init__(self, core, queue: list[int]) -> None:
        self.core, self.queue = core, queue
        self.open: list[bool] = [True] * len(queue)
        self.queue_start: list[int] = [0] * len(queue)

    @staticmethod
    def place(p) -> int:
        """0 in a shared queue, 1 in an input buffer, 2 in the source queue (the smaller goes first)."""
        if p.buffer is None:
            return 2
        return 0 if isinstance(p.buffer, tuple) else 1

    def _room(self, p, e: int) -> bool:
        core = self.core
        return core.head[e] == p.dst or core.occupancy[e] < core.buffer

    def _productive(self, p, e: int) -> bool:
        core = self.core
        return core.dist[core.head[e]][p.dst] == core.dist[p.node][p.dst] - 1

    def decide(self, waiting: list, counts: dict) -> None:
        """Steps 1 and 2: the injection gate of every node and every packet's link."""
        core = self.core
        inputs: dict[int, int] = defaultdict(int)
        for key, n in core.occupancy.items():
            if not isinstance(key, tuple):
                inputs[core.head[key]] += n
        for v in range(len(self.queue)):
            self.queue_start[v] = core.occupancy[("queue", v)]
            self.open[v] = self.queue_start[v] + inputs[v] < self.queue[v]
        for p in waiting:
            if p.want is not None and self._productive(p, p.want) and self._room(p, p.want):
                continue                                # keeps its choice
            options = [e for e in core.out[p.node] if self._productive(p, e)]

            def cost(e: int) -> tuple:
                return (not self._room(p, e), counts.get(e, 0) - (p.want == e))

            u = tie_uniform_py(p.tie, p.hops)
            best = min(cost(e) for e in options)
            tied = [e for e in options if cost(e) == best]
            choice = tied[min(int(u * len(tied)), len(tied) - 1)]
            full = self.queue_start[p.node] >= self.queue[p.node]
            if not self._room(p, choice) and self.place(p) == 0 and full:
                free = [e for e in core.out[p.node] if not self._productive(p, e) and self._room(p, e)]
                if free:                                # deflected, uniformly among them
                    choice = free[min(int(u * len(free)), len(free) - 1)]
            p.want = choice

    def held(self, p) -> bool:
        """Whether the injection gate holds ``p`` back in this step."""
        return p.buffer is None and not self.open[p.node]

    def into_queue(self, waiting: list, moved: set, key) -> int:
        """Step 4: input packets that did not cross move into their node's shared queue while
        it had room at the start of the step, by ``key`` (the smallest first); returns how many."""
        core = self.core
        by_node: dict[int, list] = defaultdict(list)
        for p in waiting:
            if p.pid not in moved and self.place(p) == 1:
                by_node[p.node].append(p)
        count = 0
        for v, group in by_node.items():
            room = self.queue[v] - self.queue_start[v]
            for p in sorted(group, key=key)[:max(room, 0)]:
                core.occupancy[p.buffer] -= 1
                p.buffer = ("queue", v)
                core.occupancy[p.buffer] += 1
                count += 1
        return count
