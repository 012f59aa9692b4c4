"""The contention order of the one engine's batch (:class:`universal.engine.runs._Batch`): the
waiting packets' positions lowest priority first under the run's priority rule
(:mod:`universal.engine.priorities`), or None where the layout already is in that order.
"""

from __future__ import annotations

import numpy as np


class PriorityOrder:
    """The batch's packets in contention order (a mixin of :class:`universal.engine.runs._Batch`)."""

    def _order(self) -> np.ndarray | None:
        """Positions (relative to head) lowest priority first, or None when the layout already is."""
        if self.chaos:          # CHAOS: by class (shared queue, input buffer, source), then the rule
            return self._sorted_positions()
        if self.priority in ("age", "longest-in-system"):
            return None
        if self.layout_sorted:
            return None
        if self.per_step:
            return self._per_step_positions()
        if self.priority in ("random", "random-rank"):
            # ranks never change: the order holds until packets join or the pool is compacted
            # (delivered packets keep their places, marked dead), so a batch sorts once
            if self.static_order is None or self.static_layout != self.layout:
                self.static_order, self.static_layout = self._sorted_positions(), self.layout
            return self.static_order
        return self._sorted_positions()

    def _sorted_positions(self) -> np.ndarray:
        """Positions (relative to head) sorted by the rule's key, lowest priority first."""
        h, a = self.head, self.a
        dead = a["want"][h:] == self.trash
        if self.priority == "fifo":
            primary = -a["arrived"][h:]
        elif self.priority in ("random", "random-rank"):
            primary = -a["rank"][h:]
        elif self.priority == "growing-rank":      # rank + hops made * K / D, scaled by D
            primary = -(a["rank"][h:] * self.span + self._hops_made() * self.rank_range)
        elif self.priority == "nearest-to-go":
            primary = -self._hops_left()
        elif self.priority == "injection-age":
            primary = _injection_key(a["injected"][h:])
        elif self.priority == "protocol":          # the survey's keys: the lowest first
            primary = -self.protocol.keys(self.rank_state, a["pid"][h:], self._hops_made(), a["arrived"][h:])
        elif self.priority in ("age", "longest-in-system"):     # (CHAOS only) the layout's order
            primary = np.zeros(len(dead), dtype=np.int64)
        else:
            primary = self._hops_left()
        if self.chaos:
            from universal.engine.chaos import class_rank

            primary = primary - primary.min() if len(primary) else primary
            primary = class_rank(self, h) * (int(primary.max()) + 1 if len(primary) else 1) + primary
        # the layout is already oldest last (ids decrease from head on), so sorting by the rule's
        # key alone, ties kept in layout order, breaks its ties toward the older packet. Packed
        # as key << bits | position, one sort of plain integers does it several times faster
        # than a stable argsort; keys too wide to pack take the argsort. Dead packets go first.
        n = len(primary)
        bits = max(1, (n - 1).bit_length())
        low = int(primary.min()) if n else 0
        width = (int(primary.max()) - low + 2) if n else 1
        if width.bit_length() + bits <= 62:
            packed = np.where(dead, 0, ((primary - (low - 1)) << bits)) | np.arange(n, dtype=np.int64)
            return self._sort_packed(packed, bits)
        primary = np.where(dead, np.iinfo(np.int64).min, primary)
        return np.argsort(primary, kind="stable")

    def _per_step_positions(self) -> np.ndarray:
        """Live positions (relative to head) lowest priority first, by fresh keys that the protocol
        draws from the run's generator (for a batch: the generator its ranks came from) in
        increasing packet id order, ties to the lower id."""
        h, a = self.head, self.a
        live = np.flatnonzero(a["want"][h:] < self.trash)
        pid = a["pid"][h:][live]
        # a batch lies youngest first, so reversed its ids increase (sorted anyway if not)
        live = live[::-1] if (np.diff(pid) < 0).all() else live[np.argsort(pid, kind="stable")]
        fresh = self.protocol.draw_step_keys(self.rngs[0], len(live))
        bits = max(1, (len(live) - 1).bit_length())
        ranked = np.sort((fresh << bits) | np.arange(len(live), dtype=np.int64))[::-1] & ((1 << bits) - 1)
        return live[ranked]

    def _sort_packed(self, packed: np.ndarray, bits: int) -> np.ndarray:
        """Positions of the packed keys ``key << bits | position``, sorted.

        A step changes the keys of the movers only, so laid out in the last sort's order (same
        layout) the keys are nearly sorted, which a merge sort (``kind="stable"``) runs through
        several times faster than a quicksort sorts them afresh. The packed keys are distinct,
        so the result is the same either way.
        """
        if self.last_order is not None and self.last_layout == self.layout and len(self.last_order) == len(packed):
            order = np.sort(np.take(packed, self.last_order), kind="stable") & ((1 << bits) - 1)
        else:
            order = np.sort(packed) & ((1 << bits) - 1)
        self.last_order, self.last_layout = order, self.layout
        return order

    def _hops_made(self) -> np.ndarray:
        """Links each live packet has crossed (an oblivious packet's ``hops`` is its path length)."""
        h, a = self.head, self.a
        made = a["hops"][h:] - (a["end"][h:] - a["cur"][h:])
        if self.adaptive:
            made = np.where(a["kind"][h:] > 0, a["hops"][h:], made)
        return made

    def _hops_left(self) -> np.ndarray:
        h, a = self.head, self.a
        left = a["end"][h:] - a["cur"][h:]
        if self.adaptive:
            from universal.engine.adaptive import adaptive_hops_left

            kind = a["kind"][h:]
            left = np.where(kind > 0, adaptive_hops_left(self, h), left)
        return left


def _injection_key(injected: np.ndarray) -> np.ndarray:
    """The ``injection-age`` sort key (higher wins) of packets stamped with the step they crossed
    their first link (-1: still in the source queue): the earlier stamp wins, and a queued packet
    loses to every stamped one (its key is below every stamp's). Ties are left to the layout
    order, which is ``age``'s.

    Examples
    --------
    >>> _injection_key(np.array([5, -1, 3, -1, 5])).tolist()
    [-5, -6, -3, -6, -5]
    """
    key = -injected
    queued = injected < 0
    if queued.any():
        key[queued] = -(int(injected.max()) + 1)
    return key
