"""The fast open-loop engine: many independent runs advanced together in one array state
(SPEC §11; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for
torus networks", 2003, §2 and §5).

The model, step ``t = 0, 1, ...``:

1. Packets created in step ``t`` join their source's queue. A packet whose destination is its
   source is delivered at once (zero hops, latency 0) unless its routing gives it a path: under
   VAL such a packet still goes to its random intermediate and back, as Valiant's trick routes
   every packet and as the load analysis counts it. An adaptive packet that has just been
   created or has just arrived at a node picks its next link now, from the allowed links, the
   one with the fewest packets waiting for it at the start of the step (see
   :mod:`universal.engine.routes`). With virtual channels (GOAL's *-channels) it chooses a link
   and a VC class, and chooses again in every step in which that class buffer is full
   (:func:`universal.engine.adaptive.decide_star`).
2. Every link forwards up to B of the packets waiting for it, highest priority first: ``age``
   (the oldest; packet ids follow creation order, so ties go to the lower id) or another rule
   of :mod:`universal.engine.priorities` (``injection-age``, ``fifo``, ``random-rank``, ``growing-rank``,
   ``farthest-to-go``, ...; every one breaks ties toward the oldest). With bounded buffers (b
   packets per link buffer) a packet may enter a buffer only if it had room at the start of
   the step, as in the batch engine; a run in which nothing moves while packets wait is deadlocked.
3. A packet crossing its last link in step ``t`` is delivered in step ``t``; its latency is
   ``t - created + 1``, so a packet that never waits has latency equal to its hop count.

Source queues and link buffers are unbounded by default: every packet waits directly for its
next link, the ideal output-queued network of Towles, Dally & Boyd (2003, §2.1), whose
saturation throughput is capacity over the largest channel load. With ``source_queue="fifo"``
a source queue is instead the input-queued router's FIFO: its first B packets alone are routed
and they leave in order (:mod:`universal.engine.source_queue`). With ``vc_buffer="fifo"`` every
virtual channel is a FIFO whose head alone may leave (:mod:`universal.engine.fifo_vcs`).

Batching. A run's links are numbered ``run * L + link`` in one array state, so a step costs the
same few dozen numpy calls for one run or two hundred; on small networks the per-call overhead
dominates, and batching independent runs (seeds, load points, routings) is what makes the
engine fast. Every random draw belongs to one run (:mod:`universal.engine.creation`), so a
run's result does not depend on what it is batched with.

Layout. The waiting packets sit in preallocated arrays, lowest priority first, in the region
``[head, cap)``: new packets (the youngest) are written just below ``head``; delivered ones are
marked dead (their ``want`` is a dummy link) and squeezed out when they pile up.
"""

from __future__ import annotations

import math

import numpy as np

from universal.engine.contention import winners as _winners, winners_at as _winners_at
from universal.engine.contention import ONE, entering_allowed, _KEEPS_LAST
from universal.errors import UserError
from universal.engine.creation import CHUNK, InjectionState, RunSpec, draw_chunk
from universal.engine.measure import (DONE, DRAIN, WARMUP, WINDOW, Measurement, RunResult,
                                        PERIOD, deliverable_per_step, latency_summary, regression_slope,
                                        slope_standard_error, stability_verdict)
from universal.engine.adaptive import decide as adaptive_decide, decide_star
from universal.engine.priorities import BATCH_RULES, PRIORITIES, RANK_RANGE, RANKED, check_priority, rank_span

__all__ = ["PRIORITIES", "simulate_batch", "simulate"]

#: Engine kinds: 0 follows a path from the store (UGAL-L/G too, once it has picked one of its two).
_KIND = {"torus": 0, "paths": 0, "ugal-paths": 0, "min-adaptive": 1, "goal": 2, "ugal": 3, "splitter": 4, "chaos": 5}
_BIG = np.int64(1) << 40
#: Waiting packets across a batch beyond this are refused (memory), checked as the pool grows.
MAX_WAITING = 40_000_000
#: Links (over a batch) from which an edge-indexed scratch pays (smaller ones stay in cache anyway).
EDGE_SPACE_MIN = 1 << 18


#: The compiled open-loop kernel (:mod:`universal.engine.compiled_openloop`): None runs the batches
#: it supports on it when numba is installed and the batch is large enough (:func:`_kernel_pays`);
#: True or False forces it on or off (the tests compare the two).
COMPILED: bool | None = None
#: Packets a batch is expected to create (at least, see :func:`_kernel_pays`) from which it runs
#: on the compiled kernel once a kernel has run in this process, and before: importing numba and
#: loading the cached kernel costs about 0.6 s of CPU time once per process.
KERNEL_MIN_PACKETS_WARM = 5_000
KERNEL_MIN_PACKETS_COLD = 500_000


#: What the compiled kernel implements: the oldest packet first, ties to the lower packet id; the
#: open-loop sources (the batch model has kernels of its own).
KERNEL_PRIORITIES = ("age", "longest-in-system")
KERNEL_INJECTIONS = ("bernoulli", "poisson", "on-off")
#: Router kinds the kernels take: the oblivious ones and the adaptive ones decided hop by hop
#: from the queues (:mod:`universal.engine.compiled_queues`).
KERNEL_ROUTERS = ("torus", "paths", "min-adaptive", "goal", "ugal")


def kernel_supports(specs: list[RunSpec], buffer: int | None, measurement: Measurement) -> bool:
    """Whether the compiled kernels (:mod:`universal.engine.compiled_openloop`, and for adaptive
    runs :mod:`universal.engine.compiled_adaptive`) implement these runs: oblivious routings (one
    path drawn at creation) or MIN AD, GOAL and UGAL, an age priority, open-loop sources,
    unbounded buffers (virtual channels then change nothing) and a measurement that records no
    crossings.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=4,n=2")
    >>> run = lambda routing: RunSpec(offered_traffic(net, "uniform"), build_router(routing, net),
    ...                               build_injection("bernoulli"), 0.5)
    >>> kernel_supports([run("val"), run("goal")], None, Measurement()), kernel_supports([run("goal")], 4, Measurement())
    (True, False)
    """
    if buffer is not None or measurement.until_delivered or measurement.record_crossings:
        return False
    return all(s.priority in KERNEL_PRIORITIES and s.injection.name in KERNEL_INJECTIONS
               and s.router.kind in KERNEL_ROUTERS for s in specs)


def _kernel_pays(specs: list[RunSpec], buffer: int | None, measurement: Measurement) -> bool:
    """Whether these runs go to the compiled kernel: it supports them, numba is installed
    (:data:`COMPILED` forces either way), and they create enough packets for it to pay: their
    offered packets per step times the steps they run at least (the warm-up's minimum and the
    window, or the fixed length)."""
    if COMPILED is False or not specs:
        return False
    import importlib.util
    import sys

    loaded = sys.modules.get("universal.engine.compiled")
    if (loaded is not None and not loaded.NUMBA) or (loaded is None and importlib.util.find_spec("numba") is None):
        return False
    if not kernel_supports(specs, buffer, measurement):
        return False
    if COMPILED:
        return True
    kernel = sys.modules.get("universal.engine.compiled_openloop")
    least = KERNEL_MIN_PACKETS_WARM if kernel is not None and kernel.WARM else KERNEL_MIN_PACKETS_COLD
    steps = [measurement.steps] * len(specs) if measurement.steps is not None else \
        [measurement.warmup_min + measurement.window_for(s.rate) for s in specs]
    return sum(float(s.rate * s.traffic.rowsum.sum()) * n for s, n in zip(specs, steps)) >= least


class _Batch:
    """State of one batch of runs (see the module docstring)."""

    def __init__(self, specs: list[RunSpec], bandwidth: int, buffer: int | None, measurement: Measurement,
                 vcs: int = 1, source_queue: str = "all", vc_buffer: str = "set") -> None:
        net = specs[0].router.network
        if any(s.router.network is not net for s in specs):
            raise ValueError("the runs of a batch share one network object")
        self.specs, self.net = specs, net
        self.R, self.N, self.L = len(specs), net.num_nodes, net.num_links
        self.B, self.buffer, self.m = bandwidth, buffer, measurement
        self.priority = specs[0].priority
        if any(s.priority != self.priority for s in specs):
            raise ValueError("the runs of a batch share one priority rule")
        # the survey's protocol itself (a batch run's random delays, per-step random keys, ...)
        self.protocol = self.rank_state = None
        if self.priority in BATCH_RULES:
            if self.R != 1 or specs[0].injection.protocol is None:
                raise ValueError("the protocol rule is for one batch run that brings its protocol")
            self.protocol, self.rank_state = specs[0].injection.protocol
        else:
            check_priority(self.priority)
        self.per_step = self.protocol is not None and self.protocol.dynamic == "per-step"
        # growing rank's K and D: the survey's, where a batch brings its ranks, else 2^31 and the diameter
        given = {s.injection.ranks[1:] if s.injection.ranks is not None else None for s in specs}
        if len(given) > 1:
            raise ValueError("the runs of a batch share one rank range and D")
        given = given.pop()
        self.rank_range = given[0] if given else RANK_RANGE
        self.span = (given[1] if given else rank_span(net)) if self.priority == "growing-rank" else 1
        self.trash = self.R * self.L            # the dead packets' dummy link
        self.inject_slot = self.trash + 1       # "buffer" of packets still in their source queue
        self.held_link = self.trash + 2         # what a batch packet held back by its delay waits for
        self.release = specs[0].injection.release if self.R == 1 else None
        self.holding = 0                        # packets still held back
        self.release_at = np.empty(0, dtype=np.int64)   # the steps in which some are released, increasing
        self.kinds = np.array([_KIND[s.router.kind] for s in specs])
        self.adaptive = bool((self.kinds > 0).any())
        self.dims = int(net.params.get("n", 1)) if (self.kinds == 2).any() else 0
        # UGAL-L/G: 1 local, 2 global, 0 for other routings; a terminal's own link comes first
        self.ugal_mode = np.array([{"local": 1, "global": 2}[s.router.extra["mode"]]
                                   if s.router.kind == "ugal-paths" else 0 for s in specs])
        self.ugal_threshold = np.array([s.router.threshold for s in specs], dtype=float)
        self.first_hop = 1 if net.terminals is not None else 0
        self.rngs = [np.random.default_rng(s.seed) for s in specs]
        self.inj_state = [InjectionState() for _ in specs]
        self.scratch = self.arange = None       # see _scratch_for
        self.end_step: dict[int, int] = {}      # run -> the step it ended in (see _finish)
        self.drain_steps: dict[int, int] = {}   # run -> the steps its drain took
        self.grouped = None                     # the compiled hand-over's records split by run
        self.shift = 0                          # the scratch is indexed by link >> shift (see _edge_space)
        # packets in every link buffer (at the link's head, waiting for their next link): the
        # bounded buffers' room, UGAL-L's used credits (SPEC §13) and a batch's largest buffer
        self.batch_stats = measurement.until_delivered and self.R == 1
        self.track = buffer is not None or bool(self.ugal_mode.any()) or self.batch_stats
        self.fifo = None                        # a FIFO source queue (universal.engine.source_queue)
        if source_queue != "all":
            self.track = True                   # "prev" tells the packets still in their source queue
        self._plan_vcs(vcs)
        self.vcfifo = None                      # FIFO VCs (universal.engine.fifo_vcs)
        if vc_buffer == "fifo":
            from universal.engine.fifo_vcs import FifoVCs

            self.vcfifo = FifoVCs(self, vcs)
        self.occupancy = np.zeros(self.classes * self.links_span, dtype=np.int32) if self.track else None
        # CHAOS (a batch of CHAOS runs only, see simulate_batch): a shared queue per node
        self.chaos = bool((self.kinds == 5).any())
        if self.chaos:
            from universal.engine.chaos import setup as chaos_setup

            chaos_setup(self, vcs)
        self.max_buffer = 0
        self.blocked: tuple | None = None
        # packets committed to each link, kept up to date (counting them afresh every step would cost
        # a pass over every waiting packet): the adaptive decisions read it, and the links with
        # packets are where the winners are
        self.waiting = np.zeros(self.trash + 3, dtype=np.int32)
        # kept where something reads it (adaptive choices, UGAL); elsewhere the winners are found
        # without it, and two ufunc.at passes per step are saved
        self.count_waiting = self.adaptive or bool(self.ugal_mode.any())
        self._alloc(4096)
        if source_queue != "all":
            from universal.engine.source_queue import FifoSources, source_window

            if self.release is not None:
                raise UserError("a FIFO source queue (--source-queue fifo) does not take a protocol's release "
                                "delays: leave it out, or use --source-queue all")
            self.fifo = FifoSources(self, *source_window(source_queue, bandwidth))
        self.store = np.empty(1 << 16, dtype=np.int64)
        self.store_len = 0
        self.next_pid = 0
        self.pending = None
        self.pending_at = 0
        self._init_measurement()
        self.progress = None
        self.static_order, self.static_layout = None, 0
        self.last_order, self.last_layout = None, 0     # the last sort's result (see _sorted_positions)
        self.layout_sorted = False
        self.link_hops = 0
        self.ending: list[int] = []             # runs that ended; their packets go at once

    def _plan_vcs(self, vcs: int) -> None:
        """Virtual channel classes (:mod:`universal.engine.vcs`): a packet's buffer is its class's
        at the head of the link it crossed, numbered ``class * links_span + link``; one class (no
        classes) is the model of SPEC §2."""
        from universal.engine.vcs import plan_vcs

        self.links_span = self.trash + 3        # the links of every run and the dummy links
        plans = [plan_vcs(s.router, vcs, self.buffer, s.injection.vc_classes) for s in self.specs]
        self.vc = plans[0] if plans[0] is not None and self.buffer is not None else None
        self.classes = max(p.classes for p in plans) if self.vc is not None else 1
        if self.vc is None:
            return
        # places per (run, class) buffer; the runs' links and the dummy links' channel geometry
        self.vc_cap = np.zeros((self.R, self.classes), dtype=np.int32)
        for r, p in enumerate(plans):
            self.vc_cap[r, :p.classes] = p.capacity
        geo = self.vc.geometry
        self.vc_type = np.concatenate([np.tile(geo.type.astype(np.int64), self.R), np.zeros(3, np.int64)])
        self.vc_wrap = np.concatenate([np.tile(geo.wrap, self.R), np.zeros(3, bool)])
        self.buf_scratch = None

    # ------------------------------------------------------------------ storage
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

    # ------------------------------------------------------------------ measurement state
    def _init_measurement(self) -> None:
        R, N = self.R, self.N
        self.phase = np.full(R, WARMUP if self.m.steps is None else WINDOW)
        self.phase_start = np.zeros(R, dtype=np.int64)
        self.backlog = np.zeros(R, dtype=np.int64)
        self.block_sum = np.zeros(R)
        self.prev_block = np.full(R, -1.0)
        self.sums = np.zeros((R, 5))
        self.accepted = np.zeros((R, N), dtype=np.int64)
        self.outstanding = np.zeros(R, dtype=np.int64)
        self.labelled = np.zeros(R, dtype=np.int64)
        self.status = [""] * R
        self.warmup_len = np.zeros(R, dtype=np.int64)
        self.slope = np.zeros(R)
        self.records: list[tuple] = []
        self.rates = np.array([s.rate for s in self.specs])
        self.offered_per_step = np.array([s.rate * s.traffic.rowsum.sum() for s in self.specs])
        # the backlog limit counts at most the packets a stable run could deliver (a memory cap)
        self.limit_per_step = np.minimum(self.offered_per_step, [deliverable_per_step(s.traffic, self.net, self.B)
                                                                 for s in self.specs])
        self.window_len = np.array([self.m.window_for(s.rate) for s in self.specs])
        self.base_window = self.window_len.copy()
        self.window_offset = np.zeros(R, dtype=np.int64)
        self.extensions = np.zeros(R, dtype=np.int64)
        self.period_means: list[list[float]] = [[] for _ in range(R)]    # backlog per period of the stretch
        self.drain_len = np.array([self.m.drain_for(s.rate) for s in self.specs])
        self.all_records = [] if self.m.steps is not None else None
        self.created_records: list[tuple] = []
        self.history = np.zeros((CHUNK, R), dtype=np.int64)    # backlog after every step of the chunk
        self.in_window = self.phase == WINDOW
        self.accepted_idx: list[np.ndarray] = []                # run * N + src of window deliveries
        self.crossing_log: list[tuple] = []                     # (step, pid, link) with record_crossings

    # ------------------------------------------------------------------ creation
    def _draw(self, t0: int) -> None:
        """Draw the next chunk of every active run and prepare its injection, step by step.

        Phases change only at chunk boundaries (every CHUNK steps), so whether a packet is
        labelled, and the whole accounting of the packets delivered at creation (source =
        destination), is settled here for the chunk at once.
        """
        parts = [(r, draw_chunk(spec, self.inj_state[r], t0, self.rngs[r]))
                 for r, spec in enumerate(self.specs) if self.phase[r] != DONE]
        self.chunk_start = t0
        if not parts:
            self.pending = None
            return
        def cat(get, fill=0, dtype=np.int64):
            arrays = [get(r, c) for r, c in parts]
            arrays = [x if x is not None else np.full(len(c.step), fill, dtype=dtype) for x, (_, c) in zip(arrays, parts)]
            return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)     # one run: no copy
        step = cat(lambda r, c: c.step)
        run = cat(lambda r, c: np.full(len(c.step), r, dtype=np.int64))
        order = np.lexsort((run, step))
        P = len(order)
        # oblivious routes: one append of every run's links (global link ids) to the store
        lengths = cat(lambda r, c: np.diff(c.route.offsets) if c.route.offsets is not None else None)
        # (run 0's links as they are: a batch's one draw of a large network stores its paths uncopied)
        links = [c.route.links + r * self.L if r else c.route.links for r, c in parts if c.route.offsets is not None]
        # UGAL-L/G: the Valiant candidates follow the minimal paths in the same append
        alt_lengths = cat(lambda r, c: np.diff(c.route.alt_offsets) if c.route.alt_offsets is not None else None)
        links += [c.route.alt_links + r * self.L for r, c in parts if c.route.alt_offsets is not None]
        at = self._store_append(links[0] if len(links) == 1 else np.concatenate(links)) if links else 0
        cur = at + np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        p = {"step": step, "run": run, "src": cat(lambda r, c: c.src), "dst": cat(lambda r, c: c.dst),
             "cur": cur, "end": cur + lengths, "hops": lengths}
        if self.ugal_mode.any():
            alt = at + int(lengths.sum()) + np.concatenate([[0], np.cumsum(alt_lengths)[:-1]]).astype(np.int64)
            # a packet to itself with an empty minimal path is delivered at creation, not rerouted
            p["alt"] = np.where((self.ugal_mode[run] > 0) & (lengths > 0), alt, -1)
            p["alt_end"] = alt + alt_lengths
        if self.adaptive:
            p["kind"] = self.kinds[run].astype(np.int8)
            p["tie"] = cat(lambda r, c: c.tie, dtype=np.uint64)
            via = cat(lambda r, c: c.route.via, fill=-1)
            p["via"] = np.where((via == p["src"]) | (via == p["dst"]), -1, via)
        if self.dims:
            zeros = lambda c: np.zeros((len(c.step), self.dims), np.int64)  # noqa: E731
            p["signs"] = np.concatenate([c.route.signs if c.route.signs is not None else zeros(c) for _, c in parts])
            p["remaining"] = np.concatenate([c.route.remaining if c.route.remaining is not None else zeros(c)
                                             for _, c in parts])
        if self.priority in RANKED:
            p["rank"] = cat(lambda r, c: c.rank)
        # ids in creation order: by step, then run, then node
        q = {k: p[k][order] for k in ("step", "run", "src", "dst")}
        q["pid"] = self.next_pid + np.arange(P, dtype=np.int64)
        self.next_pid += P
        q["label"] = (self.phase[q["run"]] == WINDOW) if self.m.steps is None else np.zeros(P, dtype=bool)
        # delivered at creation: s = d with an empty path (VAL's s = d packets travel s -> w -> s)
        zero = (q["src"] == q["dst"]) & (p["hops"][order] == 0)
        self._account_zero_hop(q, zero)
        # the others, per step youngest first (they are prepended: lowest priority first); one
        # gather of every field
        keep = np.flatnonzero(~zero)
        keep = keep[np.lexsort((-q["pid"][keep], q["step"][keep]))]
        final = order[keep]
        p = {k: v[final] for k, v in p.items()}
        p["pid"], p["label"] = q["pid"][keep], q["label"][keep]
        local = p["step"] - t0
        self.bounds = np.searchsorted(local, np.arange(CHUNK + 1))
        if t0 == 0:
            self._edge_space(parts)
        self.inj_counts = np.bincount(local * self.R + p["run"], minlength=CHUNK * self.R).reshape(CHUNK, self.R)
        lab = p["label"]
        self.lab_counts = np.bincount(local[lab] * self.R + p["run"][lab],
                                      minlength=CHUNK * self.R).reshape(CHUNK, self.R)
        self.pending = p

    def _account_zero_hop(self, p: dict, zero: np.ndarray) -> None:
        """Packets whose destination is their source and whose routing gives them no path are
        delivered when created (0 hops, latency 0)."""
        run, src = p["run"], p["src"]
        if self.m.steps is not None:
            self.created_records.append((run, p["pid"], p["step"]))
            self.all_records.append((run[zero], p["pid"][zero], p["step"][zero]))
            return
        lab = p["label"]
        self.labelled += np.bincount(run[lab], minlength=self.R)
        z = lab & zero                       # in a window phase: labelled and accepted at once
        if z.any():
            self.accepted_idx.append(run[z] * self.N + src[z])
            k = int(z.sum())
            if self.m.latencies:
                self.records.append((run[z], np.zeros(k, np.int64), np.zeros(k, np.int64), src[z], p["dst"][z]))

    # ------------------------------------------------------------------ the step
    def run(self) -> list[RunResult]:
        if self.fifo is None and _kernel_pays(self.specs, self.buffer, self.m):
            from universal.engine.compiled_openloop import run_batch

            return run_batch(self, MAX_WAITING)
        t = 0
        self.pending_decide = np.empty(0, dtype=np.int64)
        fixed = self.m.steps
        while (self.phase != DONE).any():
            if t % CHUNK == 0:
                self._draw(t)
            self._inject(t)
            if self.chaos:
                from universal.engine.chaos import decide as chaos_decide

                chaos_decide(self, t)
            elif self.adaptive:
                (adaptive_decide if self.vc is None else decide_star)(self, t)
            if self.holding:
                self._release(t)
            self._move(t)
            if fixed is not None:
                if self.m.until_delivered:        # a batch: every packet was created in step 0
                    for r in np.flatnonzero((self.backlog == 0) & (self.phase != DONE)):
                        self._finish(int(r), t, "drained")
                    self._drop_ended()
                if t + 1 >= fixed:
                    self.phase[:] = DONE
            else:
                self.history[t % CHUNK] = self.backlog
                if (t + 1) % CHUNK == 0:
                    self._advance_phases(t)
            t += 1
        self._flush_accepted()
        return self._results(t)

    def _inject(self, t: int) -> None:
        """The packets created in step ``t`` join the network, youngest first below ``head``."""
        p = self.pending
        if p is None:
            return
        i = t - self.chunk_start
        lo, hi = int(self.bounds[i]), int(self.bounds[i + 1])
        if hi == lo:
            return
        sel = slice(lo, hi)
        if self.buffer is not None and (self.phase[p["run"][sel]] == DONE).any():
            sel = np.arange(lo, hi)[self.phase[p["run"][sel]] != DONE]     # a run deadlocked in this chunk
        m = len(p["run"][sel])
        if not m:
            return
        if self.head < m:
            self._compact(m)
        lo_, hi_ = self.head - m, self.head
        a = self.a
        for name in ("pid", "src", "dst", "run", "hops", "cur", "end", "label"):
            a[name][lo_:hi_] = p[name][sel]
        a["created"][lo_:hi_] = t
        if "alt" in p:
            self._ugal_pick(lo_, p["alt"][sel], p["alt_end"][sel])
        if self.adaptive:
            kind = p["kind"][sel]
            for name in ("kind", "tie", "via"):
                a[name][lo_:hi_] = p[name][sel]
            a["node"][lo_:hi_] = p["src"][sel]
            a["target"][lo_:hi_] = p["dst"][sel]
            a["hops"][lo_:hi_] = np.where(kind > 0, 0, a["hops"][lo_:hi_])
            if self.dims:
                a["signs"][lo_:hi_] = p["signs"][sel]
                a["remaining"][lo_:hi_] = p["remaining"][sel]
            obl = kind == 0
            want = np.full(m, -1, dtype=np.int64)
            want[obl] = self.store[a["cur"][lo_:hi_][obl]]
            a["want"][lo_:hi_] = want
            np.add.at(self.waiting, want[obl], ONE)     # adaptive: always counted
            self.pending_decide = np.concatenate([self.pending_decide, np.flatnonzero(~obl) + lo_])
        else:
            want = self.store[a["cur"][lo_:hi_]]
            a["want"][lo_:hi_] = want
            if self.count_waiting:
                np.add.at(self.waiting, want, ONE)
        if self.track:
            a["prev"][lo_:hi_] = self.inject_slot
        if self.vcfifo is not None:
            a["vcbuf"][lo_:hi_] = -1
        if self.vc is not None:
            from universal.engine.vcs import first_class

            a["vc"][lo_:hi_] = first_class(self.vc_wrap[a["want"][lo_:hi_]], self.vc.ring)
            if self.adaptive:           # an adaptive packet's class is chosen with its link, every step
                a["wrapped"][lo_:hi_] = 0
        if self.priority in ("fifo", "protocol"):
            a["arrived"][lo_:hi_] = t
        if self.priority == "injection-age":
            a["injected"][lo_:hi_] = -1
        if self.release is not None:
            self._hold(lo_, hi_, t)
        if self.priority in RANKED:
            a["rank"][lo_:hi_] = p["rank"][sel]
        # static ranks: a batch's packets (all created together, into an empty network) are laid
        # out in priority order, lowest first, so no step sorts them or gathers through an order.
        # Only a batch: later packets would be sorted in with ties broken by position, which
        # stands for the packet id only while the layout is in creation order.
        self.layout_sorted = self.priority in ("random", "random-rank") and not self.adaptive \
            and self.m.until_delivered and hi_ == self.cap
        if self.layout_sorted:
            perm = _rank_order(a["rank"][lo_:hi_], a["pid"][lo_:hi_])
            for arr in a.values():
                arr[lo_:hi_] = arr[lo_:hi_][perm]
        self.head = lo_
        self.layout += 1
        if self.fifo is not None:
            self.fifo.join(lo_, hi_)
        if isinstance(sel, slice):
            self.backlog += self.inj_counts[i]
            self.outstanding += self.lab_counts[i]
        else:
            self.backlog += np.bincount(p["run"][sel], minlength=self.R)
            self.outstanding += np.bincount(p["run"][sel][p["label"][sel]], minlength=self.R)

    def _hold(self, lo: int, hi: int, t: int) -> None:
        """Batch packets whose delay has not ended wait for the dummy held link, which never lets
        them across (a batch's packet ids are its packet numbers: all are created in step 0)."""
        want = self.a["want"][lo:hi]
        held = self.release[self.a["pid"][lo:hi]] > t
        want[held] = self.held_link
        self.holding += int(held.sum())
        self.release_at = np.union1d(self.release_at, self.release[self.a["pid"][lo:hi][held]])

    def _release(self, t: int) -> None:
        """The held packets whose delay ends join the contention in step ``t`` (batch step t + 1)."""
        if not len(self.release_at) or self.release_at[0] > t:
            return                  # no delay ends now: no pass over the packets
        self.release_at = self.release_at[self.release_at > t]
        h, a = self.head, self.a
        held = np.flatnonzero(a["want"][h:] == self.held_link) + h
        due = held[self.release[a["pid"][held]] <= t]
        a["want"][due] = self.store[a["cur"][due]]
        self.holding -= len(due)

    def _ugal_pick(self, lo: int, alt: np.ndarray, alt_end: np.ndarray) -> None:
        """UGAL-L/G: the packets injected at ``lo..`` take their Valiant path where the queues say
        so (:func:`universal.engine.routes.ugal_pick`), from the counts at the start of the step."""
        from universal.engine.routes import ugal_pick

        which = np.flatnonzero(alt >= 0)
        if not len(which):
            return
        rows, a = lo + which, self.a
        run = a["run"][rows]
        cur, end = a["cur"][rows], a["end"][rows]
        go = ugal_pick(self.store, self.waiting, self.occupancy, cur, end, alt[which], alt_end[which],
                       self.ugal_mode[run], self.ugal_threshold[run], self.first_hop, self.B)
        a["cur"][rows] = np.where(go, alt[which], cur)
        a["end"][rows] = np.where(go, alt_end[which], end)
        a["hops"][rows] = a["end"][rows] - a["cur"][rows]

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

    def _scratch_for(self) -> None:
        """Size the per-link scratch and the positions ``0 .. cap - 1`` for the current pool.

        The scratch is written at random places every step, so it takes the smallest type that
        holds a position (uint16 for a pool of at most 2^16 slots, else int32): a quarter or
        half of int64 stays in cache far better on a network of millions of links.
        """
        dtype = np.uint16 if self.cap <= 2**16 else np.int32 if self.cap <= 2**31 else np.int64
        if self.arange is None or self.arange.dtype != dtype or len(self.arange) < self.cap:
            self.arange = np.arange(self.cap, dtype=dtype)
        size = ((self.trash + 2) >> self.shift) + 1    # the dummy links: dead, injection, held
        if self.scratch is None or self.scratch.dtype != dtype or len(self.scratch) != size:
            self.scratch = np.empty(size, dtype=dtype)

    def _edge_space(self, parts: list) -> None:
        """Index the scratch by edge (link >> 1) when no edge is used in both directions (leveled
        networks such as the butterfly): a link and its edge then name the same contenders, and
        half the slots stay in cache better (the batch engine's trick).

        Decided when the first chunk is drawn, for a batch only (every route is known then), and
        only where it pays: unbounded buffers and routes fixed at creation (bounded buffers and
        the waiting counts are kept by link), on a network too large for the scratch to fit in
        cache anyway. Links ``2e`` and ``2e + 1`` are an edge's two directions; an even number
        of links keeps the runs' links and the dead packets' dummy link on edges of their own.
        """
        if (self.buffer is not None or self.count_waiting or self.adaptive or self.L % 2
                or self.trash < EDGE_SPACE_MIN or any(s.injection.name != "batch" for s in self.specs)):
            return
        for _, c in parts:
            loads = c.route.paths.link_loads if c.route.paths is not None else None   # cached with C
            if loads is None:
                loads = np.zeros(self.L, dtype=bool)
                loads[c.route.links] = True
            if np.logical_and(loads[0::2], loads[1::2]).any():
                return
        self.shift = 1

    def _move(self, t: int) -> None:
        h, a = self.head, self.a
        n = self.cap - h
        if n == 0:
            return
        self._scratch_for()
        order = self._order()
        want = a["want"][h:] if order is None else a["want"][h:][order]
        at = self._winners_now(want, order, n)
        if self.fifo is not None and self.fifo.ordered and self.B > 1:    # a queue's front leaves in order
            at = self.fifo.in_order(at, lambda out: self._winners_now(_held_out(want, order, out, self.held_link),
                                                                      order, n))
        crossed = a["want"][h:][at]
        if self.ndead or self.holding or self.fifo is not None:     # the dead and the held wait for dummy links
            ok = crossed < self.trash
            at, crossed = at[ok], crossed[ok]
        if self.adaptive:
            ok = crossed >= 0
            at, crossed = at[ok], crossed[ok]
        gi = at + h
        left = self.fifo.leavers(gi) if self.fifo is not None else None
        self._move_on(t, gi, crossed, order)
        if left is not None:
            self.fifo.release(left)

    def _winners_now(self, want: np.ndarray, order: np.ndarray | None, n: int) -> np.ndarray:
        """Positions (from head, in layout order where the adaptive decisions need it) of the
        packets that win their link in this step, ``want`` laid out as ``order`` says."""
        if self.count_waiting and self.buffer is None and self.B == 1 and _KEEPS_LAST and 2 * n > self.trash:
            # many packets per link: the last (highest priority) packet of every link that has
            # packets, found with one scatter (and a pass over the links, not over the packets)
            self.scratch[want] = self.arange[:n]
            at = self.scratch[np.flatnonzero(self.waiting[:self.trash])].astype(np.int64)
            if order is None and self.adaptive:     # adaptive decisions see movers in layout order
                at = np.sort(at)
        elif self.buffer is None:
            # by edge where that names the same contenders (see _edge_space); the shift is one
            # cheap pass, the scatter into half the slots saves more (it misses the cache less)
            keyed = want >> self.shift if self.shift else want
            at = np.flatnonzero(_winners(keyed, self.B, self.scratch, self.arange))
        else:
            at = np.flatnonzero(self._bounded(want, order))
        if order is not None:
            # back to layout positions; in layout order (creation order), as the adaptive
            # decisions see them
            at = np.sort(order[at]) if self.adaptive else order[at]
        return at

    def _move_on(self, t: int, gi: np.ndarray, crossed: np.ndarray, order: np.ndarray | None) -> None:
        """The packets at ``gi`` cross the links ``crossed``: they move on or are delivered."""
        a = self.a
        self.link_hops += len(gi)
        if self.m.record_crossings:
            self.crossing_log.append((np.full(len(gi), t, dtype=np.int64), a["pid"][gi], crossed.copy()))
        if self.count_waiting:
            np.subtract.at(self.waiting, crossed, ONE)
        if self.buffer is not None and not self.chaos:
            self._check_deadlock(t, crossed)
        if self.track:
            np.subtract.at(self.occupancy, a["prev"][gi], ONE)
        old_vc = a["vcbuf"][gi] if self.vcfifo is not None else None
        if not len(gi):
            if self.chaos:
                self._chaos_queue(t, gi, crossed, order)
            return
        if self.adaptive:
            from universal.engine.adaptive import advance

            done = advance(self, gi, crossed)
        else:
            cur = a["cur"][gi] + 1
            done = cur == a["end"][gi]
            on = gi
            if done.any():          # most steps deliver nothing: no compressions then
                on, cur = gi[~done], cur[~done]
            a["cur"][on] = cur
            a["want"][on] = want = self.store[cur]
            if self.count_waiting:
                np.add.at(self.waiting, want, ONE)
        moved_on = gi[~done] if self.adaptive else on
        if self.track:
            entered = crossed if moved_on is gi else crossed[~done]
            if self.vc is not None:
                entered = self._enter_classes(moved_on, entered)
            if self.vcfifo is not None:
                self.vcfifo.move(a, gi, old_vc, moved_on, entered, a["run"][moved_on])
            a["prev"][moved_on] = entered
            np.add.at(self.occupancy, entered, ONE)
            if self.batch_stats and len(entered) and not self.chaos:
                self.max_buffer = max(self.max_buffer, int(self.occupancy[entered].max()))
        if self.priority in ("fifo", "protocol"):
            a["arrived"][moved_on] = t + 1
        if self.priority == "injection-age":       # stamped once, as the first link is crossed
            a["injected"][gi] = np.where(a["injected"][gi] < 0, t, a["injected"][gi])
        if self.chaos:
            self._chaos_queue(t, gi, crossed, order)
        if done.any():
            self._deliver(t, gi[done])

    def _chaos_queue(self, t: int, gi: np.ndarray, crossed: np.ndarray, order: np.ndarray | None) -> None:
        """CHAOS: blocked input packets into the shared queues; a step that neither crossed a link
        nor filled a queue is a deadlock (which the model rules out: :mod:`universal.engine.chaos`)."""
        from universal.engine.chaos import into_queue

        moved = into_queue(self, gi, order)
        if self.batch_stats:        # the fullest link buffer at the end of the step
            self.max_buffer = max(self.max_buffer, int(self.occupancy[:self.R * self.L].max()))
        self._check_deadlock(t, np.concatenate([crossed, moved * self.L]))

    def _enter_classes(self, movers: np.ndarray, crossed: np.ndarray) -> np.ndarray:
        """The class buffers the movers (not delivered) entered, and the class of their next hop."""
        from universal.engine.vcs import next_class

        a = self.a
        cls = a["vc"][movers]
        if self.adaptive:           # adaptive packets choose their next class with their next link
            obl = a["kind"][movers] == 0
            m, c, x = movers[obl], cls[obl], crossed[obl]
        else:
            m, c, x = movers, cls, crossed
        nxt = a["want"][m]
        a["vc"][m] = next_class(c, self.vc_type[x], self.vc_type[nxt], self.vc_wrap[nxt], self.vc.ring)
        return cls.astype(np.int64) * self.links_span + crossed

    def _bounded(self, want: np.ndarray, order: np.ndarray | None) -> np.ndarray:
        """Winners with bounded buffers (the batch engine's rule), lowest priority first."""
        h, a = self.head, self.a
        if self.adaptive:
            from universal.engine.adaptive import final_hop

            final = final_hop(self, h)
        else:
            final = a["cur"][h:] + 1 == a["end"][h:]
        if order is not None:
            final = final[order]
        w = np.where(want < 0, self.trash, want)
        real = w < self.trash                     # not dead, held or undecided
        if self.vcfifo is not None:               # FIFO VCs: a VC's head alone may leave
            head = self.vcfifo.at_head(a["vcbuf"][h:], a["seq"][h:])
            real &= head if order is None else head[order]
        if self.chaos:                            # source packets the injection gate holds back
            from universal.engine.chaos import gate

            real &= ~gate(self, order)
        entering = np.flatnonzero(~final & real)
        admit = final & real                      # delivered by the crossing: no buffer to enter
        if self.vc is None:
            room = self.buffer - np.take(self.occupancy, np.take(w, entering))
            admit[entering_allowed(w, entering, room, min(self.B, self.buffer), self.scratch)] = True
        else:
            # the buffer to enter is the wanted link's at the class of the hop
            cls = a["vc"][h:] if order is None else a["vc"][h:][order]
            cls = np.take(cls, entering).astype(np.int64)
            run = np.take(a["run"][h:] if order is None else a["run"][h:][order], entering)
            buf = np.zeros(len(w), dtype=np.int64)
            buf[entering] = cls * self.links_span + np.take(w, entering)
            room = self.vc_cap[run, cls] - np.take(self.occupancy, buf[entering])
            if self.buf_scratch is None or self.buf_scratch.dtype != self.scratch.dtype:
                self.buf_scratch = np.empty(self.classes * self.links_span, dtype=self.scratch.dtype)
            most = min(self.B, int(self.vc_cap.max()))
            admit[entering_allowed(buf, entering, room, most, self.buf_scratch)] = True
        admissible = np.flatnonzero(admit)
        win = np.zeros(len(w), dtype=bool)
        if len(admissible):
            got = _winners_at(w, admissible, self.B, self.scratch)
            win[admissible[got]] = True
        return win

    def _check_deadlock(self, t: int, crossed: np.ndarray) -> None:
        """A run with waiting packets and no move in this step is deadlocked (bounded buffers)."""
        if self.holding:                # a later release may still move (a batch: one run)
            return
        moved = np.bincount(crossed // self.L, minlength=self.R)
        stuck = (moved == 0) & (self.backlog > 0) & (self.phase != DONE)
        for r in np.flatnonzero(stuck):
            if self.batch_stats:
                self._record_blocked(int(r))
            self._finish(int(r), t, "deadlock")
        self._drop_ended()

    def _record_blocked(self, r: int) -> None:
        """A deadlocked batch's waiting packets (ids) and the links they wait for."""
        h, a = self.head, self.a
        live = np.flatnonzero((a["run"][h:] == r) & (a["want"][h:] < self.trash)) + h
        self.blocked = (np.sort(a["pid"][live]), np.unique(a["want"][live] - r * self.L))

    def _deliver(self, t: int, gi: np.ndarray) -> None:
        a = self.a
        run = a["run"][gi]
        a["want"][gi] = self.trash
        self.ndead += len(gi)
        if self.R == 1:
            self.backlog[0] -= len(gi)
        else:
            self.backlog -= np.bincount(run, minlength=self.R)
        if self.m.steps is not None:
            self.all_records.append((run, a["pid"][gi], np.full(len(gi), t, np.int64)))
        else:
            inwin = self.in_window[run]
            if inwin.any():
                self.accepted_idx.append(run[inwin] * self.N + a["src"][gi[inwin]])
            lab = a["label"][gi]
            if lab.any():
                g = gi[lab]
                self.outstanding -= np.bincount(run[lab], minlength=self.R)
                if self.m.latencies:
                    self.records.append((run[lab], t - a["created"][g] + 1, a["hops"][g], a["src"][g], a["dst"][g]))
        if self.ndead > (self.cap - self.head - self.ndead) + 256:       # more dead than live
            self._compact(0)

    def _flush_accepted(self) -> None:
        if self.accepted_idx:
            idx = np.concatenate(self.accepted_idx)
            self.accepted += np.bincount(idx, minlength=self.R * self.N).reshape(self.R, self.N)
            self.accepted_idx = []

    # ------------------------------------------------------------------ phases
    def _advance_phases(self, t: int) -> None:
        """End of a chunk (step ``t``): move runs between phases (see :mod:`universal.engine.measure`)."""
        m, ph = self.m, self.phase
        self._flush_accepted()
        hist = self.history
        b = self.backlog
        limit = self.limit_per_step * m.latency_limit + self.N
        # far beyond saturation the warm-up would never settle: measure now, or stop (the search,
        # which stops a run past the limit in its window too: BookSim's latency threshold)
        over = b > limit
        for r in np.flatnonzero((ph == WARMUP) & over):
            if m.overload == "stop":
                self._finish(int(r), t, "backlog-limit")
            else:
                self._start_window(int(r), t)
        if m.overload == "stop" and m.stop_in_window:
            for r in np.flatnonzero((ph == WINDOW) & over):
                self._finish(int(r), t, "backlog-limit")
        # warm-up: settled once the backlog stopped growing (at most 1% and one packet above the last chunk)
        warm = ph == WARMUP
        mean = hist.mean(axis=0)
        settled = (self.prev_block >= 0) & (mean <= (1 + m.change) * self.prev_block + 1)
        start = warm & (((t + 1) >= m.warmup_min) & settled | ((t + 1) >= m.warmup_max))
        self.prev_block = np.where(warm, mean, self.prev_block)
        # window: regression sums of (x = step in the stretch, y = backlog) over this chunk
        win = np.flatnonzero(ph == WINDOW)
        if len(win):
            steps = np.arange(t + 1 - CHUNK, t + 1)
            x = (steps[:, None] - self.phase_start[win] - self.window_offset[win]).astype(float)
            y = hist[:, win].astype(float)
            self.sums[win] += np.stack([np.ones(len(win)) * CHUNK, x.sum(0), y.sum(0), (x * y).sum(0),
                                        (x * x).sum(0)], axis=1)
            for r, v in zip(win, y.mean(axis=0)):
                self.period_means[r].append(float(v))
            for r in win[t + 1 - self.phase_start[win] >= self.window_len[win]]:
                self._end_window(int(r), t)
        for r in np.flatnonzero(start):
            self._start_window(int(r), t)
        drain = np.flatnonzero(ph == DRAIN)
        for r in drain[self.outstanding[drain] == 0]:
            self._finish(int(r), t, "stable")
        for r in drain[(ph[drain] == DRAIN) & (t + 1 - self.phase_start[drain] >= self.drain_len[drain])]:
            self._finish(int(r), t, "drain-limit")
        self.in_window = ph == WINDOW
        self._drop_ended()

    def _end_window(self, r: int, t: int) -> None:
        """Judge stability at the end of a window (or of one of its extensions)."""
        m = self.m
        self.slope[r] = regression_slope(*self.sums[r])
        noise = slope_standard_error(self.period_means[r], PERIOD)
        verdict = stability_verdict(self.slope[r], self.offered_per_step[r], int(self.extensions[r]), m,
                                    noise=noise, bandwidth=self.B)
        if verdict == "extend":
            # the window so far becomes warm-up for a new stretch as long as all of it
            self.extensions[r] += 1
            self.window_offset[r] = self.window_len[r]
            self.window_len[r] *= 2
            self.sums[r] = 0
            self.period_means[r] = []
        elif verdict == "stable" and m.drain:
            self.phase[r] = DRAIN
            self.phase_start[r] = t + 1
        else:
            self._finish(r, t, verdict)

    def _start_window(self, r: int, t: int) -> None:
        self.phase[r] = WINDOW
        self.phase_start[r] = t + 1
        self.warmup_len[r] = t + 1

    def _finish(self, r: int, t: int, status: str) -> None:
        if self.phase[r] == DONE:
            return
        self.status[r] = status
        if self.phase[r] == DRAIN:
            self.drain_steps[r] = t + 1 - self.phase_start[r]
        self.phase[r] = DONE
        if self.progress is not None:
            self.progress(1)
        self.end_step[r] = t + 1
        self.backlog[r] = 0
        self.ending.append(r)

    def _drop_ended(self) -> None:
        """Remove the packets of the runs that just ended (one pass for all of them)."""
        if not self.ending:
            return
        ended = np.zeros(self.R + 1, dtype=bool)
        ended[self.ending] = True
        self.ending = []
        h, a = self.head, self.a
        mine = np.flatnonzero(ended[a["run"][h:]] & (a["want"][h:] != self.trash)) + h
        if self.track:
            np.subtract.at(self.occupancy, a["prev"][mine], ONE)
        if self.vcfifo is not None:
            self.vcfifo.drop(a["vcbuf"][mine])
        w = a["want"][mine]
        if self.count_waiting:
            np.subtract.at(self.waiting, w[w >= 0], ONE)
        a["want"][mine] = self.trash
        self.ndead += len(mine)
        if self.adaptive and len(getattr(self, "pending_decide", ())):
            # an ended run's undecided packets are dead too: deciding would bring them back
            self.pending_decide = self.pending_decide[a["want"][self.pending_decide] != self.trash]

    # ------------------------------------------------------------------ results
    def _results(self, steps: int) -> list[RunResult]:
        out = []
        if self.m.steps is not None:
            def cat(recs, i):
                return np.concatenate([x[i] for x in recs]) if recs else np.empty(0, np.int64)
            run, pid, step = cat(self.all_records, 0), cat(self.all_records, 1), cat(self.all_records, 2)
            crun, cpid, cstep = (cat(self.created_records, i) for i in range(3))
            ends = self.end_step
            xstep, xpid, xlink = (cat(self.crossing_log, i) for i in range(3))
            for r, spec in enumerate(self.specs):
                mine = cpid[(crun == r) & (cstep < ends.get(r, steps))]
                delivered = np.full(len(mine), -1, dtype=np.int64)
                d = (run == r) & (step < ends.get(r, steps))
                delivered[_index_in(mine, pid[d])] = step[d]
                records = {"pid": mine, "delivered": delivered}
                if self.batch_stats:
                    records.update(max_buffer=self.max_buffer, hops=self.link_hops, blocked=self.blocked)
                if self.m.record_crossings:       # this run's crossings: its own packet and link numbers
                    x = (xlink // self.L) == r
                    records["crossings"] = np.stack([xstep[x], _index_in(mine, xpid[x]),
                                                     xlink[x] - r * self.L], axis=1)
                out.append(RunResult(spec.rate, status=self.status[r] or "steps", steps=steps,
                                     records=records))
            return out
        # the compiled kernels split their records by run themselves (compiled_openloop.hand_over)
        grouped = self.grouped
        cols = [np.concatenate(c) if len(c) > 1 else c[0] for c in zip(*self.records)] if self.records \
            else [np.empty(0, np.int64)] * 5
        # group by run, keeping delivery order (a radix sort on small run numbers; one run is one group).
        # Only the stable runs' records are gathered, each into arrays of its own: a result then
        # holds its own packets, not views of the whole batch's records (a saturation search keeps
        # its runs' results, and the unstable runs' records were most of its memory)
        run = cols[0].astype(np.int16) if self.R < 2**15 else cols[0]
        by_run = np.argsort(run, kind="stable") if self.R > 1 and grouped is None else None
        cuts = np.concatenate([[0], np.cumsum(np.bincount(run, minlength=self.R))])
        for r, spec in enumerate(self.specs):
            res = RunResult(spec.rate, status=self.status[r], stable=self.status[r] == "stable",
                            warmup=int(self.warmup_len[r]), window=int(self.window_len[r]),
                            slope=float(self.slope[r]), labelled=int(self.labelled[r]),
                            steps=int(self.end_step.get(r, steps)))
            res.drain = int(self.drain_steps.get(r, 0))
            senders = spec.traffic.senders
            if self.status[r] in ("stable", "unstable", "drain-limit"):
                acc = self.accepted[r, senders] / (self.window_len[r] * spec.traffic.rowsum[senders])
                res.accepted, res.accepted_min = float(acc.mean()), float(acc.min())
            if res.stable and self.m.latencies:   # a saturation table's searches keep no latencies
                if grouped is not None:
                    src, dst, lat, hops = grouped[r]
                else:
                    mine = slice(cuts[r], cuts[r + 1]) if by_run is None else by_run[cuts[r]:cuts[r + 1]]
                    src, dst, lat, hops = cols[3][mine], cols[4][mine], cols[1][mine], cols[2][mine]
                for k, v in latency_summary(lat, hops).items():
                    setattr(res, k, v)
                res.labelled_packets = (src, dst, lat, hops)
            out.append(res)
        return out


def _held_out(want: np.ndarray, order: np.ndarray | None, out: np.ndarray, held: int) -> np.ndarray:
    """``want`` (laid out as ``order`` says) with the packets at layout positions ``out`` waiting
    for the dummy ``held`` link instead: out of the step's contention."""
    want = want.copy()
    if order is None:
        want[out] = held
    else:
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        want[rank[out]] = held
    return want


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


def _rank_order(rank: np.ndarray, pid: np.ndarray) -> np.ndarray:
    """Indices of packets laid out youngest first (``pid`` decreasing), lowest priority first
    by static rank: the highest rank first, ties to the younger packet.

    Ranks in a range of less than 2^15 (the survey's K = C + D + log n) are sorted as int16
    with a stable argsort, a radix sort several times faster than a lexsort; ties keep the layout
    order, which is the younger packet first.
    """
    if len(rank) and int(rank.max()) - int(rank.min()) < 2**15:
        return np.argsort((rank.max() - rank).astype(np.int16), kind="stable")
    return np.lexsort((pid, rank))[::-1]


def _index_in(ids: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Where the packet ids ``which`` are in ``ids``, a run's ids in creation order (increasing;
    one block when the run's packets were all created together, as a batch's are: then no search)."""
    if len(ids) and int(ids[-1]) - int(ids[0]) == len(ids) - 1:
        return which - ids[0]
    return np.searchsorted(ids, which)


def _check_window(spec: RunSpec, measurement: Measurement) -> None:
    """Refuse a window in which some sending node expects to create less than one packet: its
    accepted rate, and so α', would measure nothing (the default window expects 200)."""
    if measurement.steps is not None or measurement.window is None:
        return
    window = measurement.window_for(spec.rate)
    least = window * float(spec.node_rates()[spec.traffic.senders].min())
    if least < 1:
        raise UserError(f"a measurement window of {measurement.window} steps ({window} as run, whole periods of "
                        f"100) is too short to measure anything at {spec.rate:.4g} packets per node per step: "
                        f"a sending node expects {least:.2g} packets in it (give at least "
                        f"{math.ceil(window / least)} steps, or leave --window out)")


def simulate_batch(specs: list[RunSpec], *, bandwidth: int = 1, buffer: int | None = None,
                   measurement: Measurement | None = None, progress=None, vcs: int = 1,
                   source_queue: str = "all", vc_buffer: str = "set") -> list[RunResult]:
    """Run several open-loop runs together in one array state (see the module docstring).

    Parameters
    ----------
    specs : list of RunSpec
        The runs; they share one network object and one priority rule.
    bandwidth : int
        B, packets per link per step.
    buffer : int, optional
        Link-buffer size b (default unbounded); with ``vcs`` the size of every virtual channel.
    measurement : Measurement, optional
    progress : callable, optional
        Called with 1 whenever a run finishes.
    vcs : int
        V, virtual channels per link (:mod:`universal.engine.vcs`): with V >= 2 and bounded
        buffers every hop enters its route's deadlock-free class; a routing that needs more than
        V classes, or has none, is refused.
    source_queue : {"all", "fifo", "fifo:w=W"}
        The source queue's model (:mod:`universal.engine.source_queue`): ``all``, every queued
        packet may take a free place on its node's links (SPEC §11's ideal network); ``fifo``,
        the input-queued router's FIFO, whose first B packets alone are routed and leave in order
        (with B = 1 the head alone); ``fifo:w=W``, its first W packets routed, each may leave.
    vc_buffer : {"set", "fifo"}
        The VC buffer's model (:mod:`universal.engine.fifo_vcs`): ``set``, any packet of a class
        buffer may leave; ``fifo``, every VC a FIFO of ``buffer`` packets whose head alone may
        leave (head-of-line blocking; needs ``buffer`` and B = 1).

    Returns
    -------
    list of RunResult, one per spec.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=8,n=1")
    >>> spec = RunSpec(offered_traffic(net, "tornado"), build_router("dor", net), build_injection("bernoulli"), 0.2)
    >>> res, = simulate_batch([spec], measurement=Measurement(window=500))
    >>> res.status, res.hops_mean, round(res.accepted, 1)
    ('stable', 3.0, 0.2)
    """
    measurement = measurement or Measurement()
    measurement.check()
    from universal.engine.source_queue import check_source_queue

    check_source_queue(source_queue)
    from universal.engine.fifo_vcs import check_vc_buffer

    for s in specs:
        check_vc_buffer(vc_buffer, buffer, bandwidth, s.router.kind)
    if bandwidth < 1:
        raise UserError("bandwidth B must be at least 1")
    if buffer is not None and buffer < 1:
        raise UserError("buffer size b must be at least 1 (or unbounded)")
    for s in specs:
        s.check()
        _check_window(s, measurement)
    if not specs:
        return []
    split = _chaos_split(specs) or _kernel_split(specs, buffer, measurement)
    if split is not None:
        # runs apart from the others (a run's result does not depend on its batch): one batch
        # of each, the results in the order of ``specs``
        out: list = [None] * len(specs)
        for part in split:
            for i, res in zip(part, simulate_batch([specs[i] for i in part], bandwidth=bandwidth, buffer=buffer,
                                                   measurement=measurement, progress=progress, vcs=vcs,
                                                   source_queue=source_queue, vc_buffer=vc_buffer)):
                out[i] = res
        return out
    batch = _Batch(specs, bandwidth, buffer, measurement, vcs, source_queue, vc_buffer)
    batch.progress = progress
    return batch.run()


def _chaos_split(specs: list[RunSpec]) -> tuple | None:
    """The positions of the other runs and of the CHAOS runs where a batch mixes them (CHAOS
    keeps shared queues and no VC classes, so its runs form a batch of their own); else None."""
    chaos = [s.router.kind == "chaos" for s in specs]
    if not any(chaos) or all(chaos):
        return None
    return tuple([i for i, c in enumerate(chaos) if c == flag] for flag in (False, True))


def _kernel_split(specs: list[RunSpec], buffer: int | None, measurement: Measurement) -> tuple | None:
    """The positions of the runs the compiled kernel takes and of the others, where a batch
    mixes them and the kernel's share is worth running on it; else None. Only measured runs
    are split: a fixed-length run's records number its packets across the batch."""
    if COMPILED is False or len(specs) < 2 or measurement.steps is not None:
        return None
    takes = [kernel_supports([s], buffer, measurement) for s in specs]
    if all(takes) or not any(takes):
        return None
    fast = [i for i, k in enumerate(takes) if k]
    if not _kernel_pays([specs[i] for i in fast], buffer, measurement):
        return None
    return fast, [i for i, k in enumerate(takes) if not k]


def simulate(spec: RunSpec, **kwargs) -> RunResult:
    """One open-loop run (:func:`simulate_batch` with a single spec)."""
    return simulate_batch([spec], **kwargs)[0]
