"""The packet pool of the one engine's batch (:class:`universal.engine.runs._Batch`): the waiting
packets' field arrays and the route store the oblivious packets read their links from.

The waiting packets sit in preallocated arrays, lowest priority first, in the region
``[head, cap)`` (see :mod:`universal.engine.runs`); a compaction drops the dead ones and makes
room below ``head``. The route store holds the remaining links of every oblivious packet's path
(global link ids ``run * L + link``); a packet's ``cur`` and ``end`` point into it.
"""

from __future__ import annotations

import numpy as np

from universal.errors import UserError
from universal.engine.priorities import RANKED

#: Waiting packets across a batch beyond this are refused (memory), checked as the pool grows.
MAX_WAITING = 40_000_000


class PacketPool:
    """The batch's packet arrays and route store (a mixin of :class:`universal.engine.runs._Batch`)."""

    def _fields(self) -> dict[str, tuple]:
        f = {"want": (np.int64,), "pid": (np.int64,), "created": (np.int64,), "src": (np.int64,),
             "label": (np.bool_,), "run": (np.int64,), "hops": (np.int64,), "cur": (np.int64,),
             "end": (np.int64,), "dst": (np.int64,)}
        if self.adaptive:
            f.update(kind=(np.int8,), node=(np.int64,), target=(np.int64,), tie=(np.uint64,), via=(np.int64,))
        if self.dims:
            f.update(signs=(np.int64, self.dims), remaining=(np.int64, self.dims))
        if self.track:
            f["prev"] = (np.int64,)
        if self.vc is not None:
            f["vc"] = (np.int8,)                # the class of the hop the packet waits to make
            if self.adaptive:
                f["wrapped"] = (np.int64,)      # *-channels: bit i, dimension i's wrap-around crossed
        if self.vcfifo is not None:
            f.update(vcbuf=(np.int64,), seq=(np.int64,))    # the VC buffer a packet is in, its place
        if self.priority in ("fifo", "protocol"):
            f["arrived"] = (np.int64,)
        if self.priority in RANKED:
            f["rank"] = (np.int64,)
        if self.priority == "injection-age":
            f["injected"] = (np.int64,)         # the step of the first link crossed; -1 still queued
        return f

    def _alloc(self, cap: int) -> None:
        self.cap, self.head = cap, cap
        self.layout = getattr(self, "layout", 0) + 1    # positions changed: orders computed before are stale
        self.a = {}
        for name, (dtype, *shape) in self._fields().items():
            self.a[name] = np.empty((cap, *shape), dtype=dtype)
        self.ndead = 0

    def _compact(self, room: int) -> None:
        """Drop the dead packets and leave at least ``room`` free slots below ``head``."""
        live = np.flatnonzero(self.a["want"][self.head:] != self.trash) + self.head
        need = len(live) + room
        if need > MAX_WAITING:
            raise UserError(f"more than {MAX_WAITING:,} packets wait at once in this batch; offer less load "
                            "or batch fewer runs")
        cap = self.cap if need <= self.cap // 2 else max(2 * need, 4096)
        old = self.a
        self._alloc(cap)
        start = cap - len(live)
        for name, arr in old.items():
            self.a[name][start:] = arr[live]
        self.head = start
        if self.adaptive:
            self.pending_decide = np.flatnonzero(self.a["want"][start:] == -1) + start
        # the route store is compacted only when a chunk is drawn (pending packets point into it)

    def _compact_store(self) -> None:
        """Copy the remaining route links of the live oblivious packets to a fresh store."""
        h = self.head
        cur, end = self.a["cur"][h:], self.a["end"][h:]
        want = self.a["want"][h:]
        obl = (want >= 0) & (want != self.trash)
        if self.adaptive:
            obl &= self.a["kind"][h:] == 0
        idx = np.flatnonzero(obl)
        lengths = end[idx] - cur[idx]
        total = int(lengths.sum())
        new = np.empty(max(2 * total, 1 << 16), dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        src = np.repeat(cur[idx] - starts, lengths) + np.arange(total)
        new[:total] = self.store[src]
        cur[idx], end[idx] = starts, starts + lengths
        self.store, self.store_len = new, total

    def _store_append(self, links: np.ndarray) -> int:
        """Append ``links`` and return where they start. The store may keep the array itself (it
        never writes below ``store_len``), so the caller must not change it afterwards."""
        if self.store_len + len(links) > len(self.store):
            self._compact_store()
            if self.store_len == 0:            # nothing live (a batch's one draw): keep the array itself
                # (int32 as path collections hold it: no copy, and half the memory to gather from)
                keep = links if links.dtype == np.int32 else links.astype(np.int64, copy=False)
                self.store, self.store_len = keep, len(links)
                return 0
            self._compact_store_if_needed(len(links))
        at = self.store_len
        self.store[at:at + len(links)] = links
        self.store_len += len(links)
        return at

    def _compact_store_if_needed(self, extra: int) -> None:
        self._compact_store()
        if self.store_len + extra > len(self.store):
            grown = np.empty(2 * (self.store_len + extra), dtype=np.int64)
            grown[:self.store_len] = self.store[:self.store_len]
            self.store = grown
