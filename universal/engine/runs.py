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

Parts. :class:`_Batch` is built here (its state, the loop over the steps) from one mixin per
module: :mod:`~universal.engine.runs_pool`, :mod:`~universal.engine.runs_injection`,
:mod:`~universal.engine.runs_order`, :mod:`~universal.engine.runs_step` and
:mod:`~universal.engine.runs_phases`; the dispatch to the compiled kernels and the public API stay here.
"""

from __future__ import annotations

import math

import numpy as np

from universal.engine.contention import ONE  # noqa: F401 (imported from here: benchmarks/source_queue_probe.py)
from universal.errors import UserError
from universal.engine.creation import CHUNK, InjectionState, RunSpec
from universal.engine.measure import DONE, Measurement, RunResult
from universal.engine.adaptive import decide as adaptive_decide, decide_star
from universal.engine.priorities import BATCH_RULES, PRIORITIES, RANK_RANGE, check_priority, rank_span
from universal.engine.runs_injection import Injection
from universal.engine.runs_order import PriorityOrder
from universal.engine.runs_phases import Phases
from universal.engine.runs_pool import MAX_WAITING, PacketPool
from universal.engine.runs_step import Step

__all__ = ["PRIORITIES", "simulate_batch", "simulate"]

#: Engine kinds: 0 follows a path from the store (UGAL-L/G too, once it has picked one of its two).
_KIND = {"torus": 0, "paths": 0, "ugal-paths": 0, "min-adaptive": 1, "goal": 2, "ugal": 3, "splitter": 4, "chaos": 5}
_BIG = np.int64(1) << 40
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
    path drawn at creation) or MIN AD, GOAL and UGAL (not on a network with terminals, where
    UGAL reads used credits the kernels do not keep), an age priority, open-loop sources,
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
    # UGAL on a network with terminals reads used credits, which the kernels do not keep
    return all(s.priority in KERNEL_PRIORITIES and s.injection.name in KERNEL_INJECTIONS
               and s.router.kind in KERNEL_ROUTERS
               and not (s.router.kind == "ugal" and s.router.network.terminals is not None) for s in specs)


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


class _Batch(PacketPool, Injection, PriorityOrder, Step, Phases):
    """State of one batch of runs (see the module docstring): its construction, the loop over
    the steps, and the parts it is made of, one mixin per module:
    :class:`~universal.engine.runs_pool.PacketPool` (the packet arrays and the route store),
    :class:`~universal.engine.runs_injection.Injection` (drawing and injecting the packets),
    :class:`~universal.engine.runs_order.PriorityOrder` (the contention order),
    :class:`~universal.engine.runs_step.Step` (contention and moves) and
    :class:`~universal.engine.runs_phases.Phases` (the measurement phases and the results)."""

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
        # (UGAL on a network with terminals counts the used credits as UGAL-L does)
        ugal_credits = net.terminals is not None and bool((self.kinds == 3).any())
        self.track = buffer is not None or bool(self.ugal_mode.any()) or self.batch_stats or ugal_credits
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

    # (here beside EDGE_SPACE_MIN, which the tests set on this module)
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
