"""Why the accepted rate falls beyond saturation with one-packet VCs: one instrumented run per
offered load, with the engine's rules swapped one at a time (a diagnostic, not a model).

Usage::

    python benchmarks/source_queue_probe.py --routing val --traffic tornado --vcs 4 --rates 0.2,0.4,1.0
    python benchmarks/source_queue_probe.py --routing min-adaptive --traffic bitcomp --vcs 3 \\
        --rates 0.38,1.0 --source fifo            # the source queue as a FIFO: its head alone may leave

Every run is ``universal openloop``'s (8-ary 2-cube, bernoulli, age priority, ``--buffer b --vcs
V``) for ``--steps`` steps; what it prints is measured over steps ``--from`` to the end: α* and
α' (packets delivered per sending node and step over the row sum, mean and minimum, as
fractions of capacity; the source-destination lag of the delivered packets, least and most
over the sources, shows whether age arbitration keeps the sources level), the same per block
of 1000 steps (a drift means the run has not settled), the packets in the network and in the
source queues, and the fraction of steps each VC class buffer is full at the end of a step.

The variants (all off by default, which is the engine as it is):

``--source fifo``
    only the oldest packet of each source queue may leave it (the others neither contend nor
    count in the adaptive routings' queue lengths): the source queue of the GOAL paper's
    router and BookSim's, a FIFO whose head alone is injected. In the engine's default source
    queue every packet waits directly for its first link, like a transit packet; the engine's
    ``source_queue="fifo"`` (``openloop --source-queue fifo``, :mod:`universal.engine.source_queue`)
    is this rule built in, and on the oblivious routings it delivers every packet in the same
    step as this probe's swap (VAL on tornado, RLB on bit complement, b = 1, offered 1.0, 400
    steps, 4- and 8-ary 2-cubes). The adaptive routings were not compared: the probe masks an
    adaptive packet behind the head step by step, the engine routes it when it reaches the head.
``--source one``
    any packet of the queue may leave, but at most one per node and step.
``--credit same-step``
    a place freed in a step may be entered in that same step (in the engine only a place free
    at the start of the step may: the credit rule).
``--order transit-first``
    a packet in the network always beats one in a source queue, then the oldest.

``--check-reference STEPS`` compares the engine with its plain reference instead.

Findings (docs/openloop.md, "The cause: the source queue"): with ``--source fifo`` the accepted
rate of VAL on tornado and of MIN AD on bit complement stays flat beyond saturation with b = 1;
the other variants do not cure it.
"""

from __future__ import annotations

import argparse
import sys as _sys
import time
from pathlib import Path as _Path

import numpy as np

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from universal.engine import runs as _runs  # noqa: E402
from universal.networks import build_network  # noqa: E402
from universal.openloop import Measurement, RunSpec, build_injection, build_router, offered_traffic  # noqa: E402
from universal.openloop.workload import capacity_rate  # noqa: E402

BLOCK = 1000


class Probe(_runs._Batch):
    """The engine's batch (one run) with counters and the swappable rules of the module docstring."""

    source = "all"
    credit = "start"
    order = "age"

    def setup(self, start: int, steps: int) -> None:
        self.t0, self.t1 = start, steps
        self.delivered = np.zeros(self.N, np.int64)
        self.lag = np.zeros(self.N)
        self.blocks = np.zeros((steps // BLOCK + 1, self.N), np.int64)
        self.full = np.zeros(self.classes, np.int64)
        self.in_net = self.in_source = self.sampled = 0
        self._masked = None

    # ---------------------------------------------------------------- rules
    def _order(self):
        if self.order != "transit-first":
            return super()._order()
        h, a = self.head, self.a
        # lowest priority first: the dead, then source-queue packets, then transit ones; age
        # within each (the layout is oldest last)
        key = np.where(a["prev"][h:] == self.inject_slot, 1, 2)
        key[a["want"][h:] == self.trash] = 0
        return np.argsort(key, kind="stable")

    def _inject(self, t: int) -> None:
        super()._inject(t)
        if self.source == "fifo":
            self._mask_behind_heads()

    def _mask_behind_heads(self) -> None:
        """Every source-queue packet but the oldest of its node waits for the never-free dummy
        link for this step (and leaves the adaptive queue counts); restored after the move."""
        h, a = self.head, self.a
        live = np.flatnonzero((a["want"][h:] != self.trash) & (a["prev"][h:] == self.inject_slot)) + h
        src, pid = a["src"][live], a["pid"][live]
        o = np.lexsort((pid, src))
        head = np.ones(len(o), bool)
        head[1:] = src[o][1:] != src[o][:-1]
        held = live[o[~head]]
        saved = a["want"][held].copy()
        if self.count_waiting:
            np.subtract.at(self.waiting, saved[(saved >= 0) & (saved < self.trash)], _runs.ONE)
        a["want"][held] = self.held_link
        kinds = None
        if self.adaptive:               # not an adaptive packet this step: no decision
            kinds = a["kind"][held].copy()
            a["kind"][held] = 0
        self._masked = (a["pid"][held].copy(), saved, kinds)

    def _unmask(self) -> None:
        pids, saved, kinds = self._masked
        self._masked = None
        h, a = self.head, self.a
        o = np.argsort(a["pid"][h:])
        pos = o[np.searchsorted(a["pid"][h:], pids, sorter=o)] + h     # the layout may have been compacted
        assert (a["pid"][pos] == pids).all() and (a["want"][pos] == self.held_link).all()
        a["want"][pos] = saved
        if kinds is not None:
            a["kind"][pos] = kinds
        if self.count_waiting:
            np.add.at(self.waiting, saved[(saved >= 0) & (saved < self.trash)], _runs.ONE)

    def _bounded(self, want, order):
        win = super()._bounded(want, order)
        h, a = self.head, self.a
        pick = (lambda x: x) if order is None else (lambda x: x[order])
        if self.source == "one":
            prev, src, masked = pick(a["prev"][h:]), pick(a["src"][h:]), want.copy()
            while True:                 # drop all but the best source-queue winner of a node, again
                wi = np.flatnonzero(win & (prev == self.inject_slot))
                best = np.full(self.N, -1, np.int64)
                np.maximum.at(best, src[wi], wi)
                drop = wi[best[src[wi]] != wi]
                if not len(drop):
                    break
                masked[drop] = self.held_link
                win = super()._bounded(masked, order)
        if self.credit == "same-step":
            win = self._same_step(want, order, win, pick)
        return win

    def _same_step(self, want, order, win, pick):
        """Let packets follow into places vacated in this step, link by link, until none can."""
        h, a = self.head, self.a
        if self.adaptive:
            from universal.engine.adaptive import final_hop
            final = pick(final_hop(self, h))
        else:
            final = pick(a["cur"][h:] + 1 == a["end"][h:])
        w = np.where(want < 0, self.trash, want)
        real = w < self.trash
        prev = pick(a["prev"][h:])
        buf = np.where(real & ~final, pick(a["vc"][h:]).astype(np.int64) * self.links_span
                       + np.minimum(w, self.trash), -1)
        places = np.zeros(len(self.occupancy), np.int64)
        for c in range(self.classes):
            places[c * self.links_span:c * self.links_span + self.L] = self.vc_cap[0, c]
        while True:
            wi = np.flatnonzero(win)
            left = prev[wi]
            freed = np.bincount(left[(left >= 0) & (left < len(places))], minlength=len(places))
            entered = np.bincount(buf[wi][buf[wi] >= 0], minlength=len(places))
            busy = np.bincount(w[wi], minlength=self.trash + 1)[:self.trash + 1] >= self.B
            room = places - self.occupancy + freed - entered
            ok = real & ~win & ~busy[np.minimum(w, self.trash)] & (final | (room[np.maximum(buf, 0)] > 0))
            c = np.flatnonzero(ok)
            if not len(c):
                return win
            best = np.full(self.trash + 1, -1, np.int64)
            np.maximum.at(best, w[c], c)
            win[best[best >= 0]] = True

    # ---------------------------------------------------------------- counters
    def _move(self, t: int) -> None:
        if self.t0 <= t:
            h, a = self.head, self.a
            live = (a["want"][h:] >= 0) & (a["want"][h:] < self.trash)
            queued = live & (a["prev"][h:] == self.inject_slot)
            self.in_source += int(queued.sum())
            self.in_net += int((live & ~queued).sum())
        super()._move(t)
        if self._masked is not None:
            self._unmask()
        if self.t0 <= t:
            occ = self.occupancy[:self.classes * self.links_span].reshape(self.classes, -1)[:, :self.L]
            self.full += (occ >= self.vc_cap[0][:, None]).sum(axis=1)
            self.sampled += 1

    def _deliver(self, t: int, gi: np.ndarray) -> None:
        src = self.a["src"][gi]
        np.add.at(self.blocks[t // BLOCK], src, 1)
        if self.t0 <= t:
            np.add.at(self.delivered, src, 1)
            np.add.at(self.lag, src, t - self.a["created"][gi])
        super()._deliver(t, gi)


def probe(network: str, traffic: str, routing: str, offered: float, buffer: int, vcs: int, steps: int,
          start: int, seed: int = 0, **rules) -> dict:
    """One instrumented run at ``offered`` (a fraction of capacity); ``rules``: source, credit, order."""
    net = build_network(network)
    cap = float(capacity_rate(net))
    tr = offered_traffic(net, traffic)
    spec = RunSpec(tr, build_router(routing, net), build_injection("bernoulli"), offered * cap, seed=seed)
    batch = Probe([spec], 1, buffer, Measurement(steps=steps), vcs)
    for name, value in rules.items():
        setattr(batch, name, value)
    batch.setup(start, steps)
    batch.run()
    span, senders = steps - start, tr.senders
    rate = batch.delivered[senders] / span / tr.rowsum[senders] / cap
    blocks = batch.blocks[:steps // BLOCK, senders] / BLOCK / tr.rowsum[senders] / cap
    lag = batch.lag[senders] / np.maximum(batch.delivered[senders], 1)
    return {"alpha*": rate.mean(), "alpha'": rate.min(), "blocks*": blocks.mean(axis=1),
            "blocks'": blocks.min(axis=1), "lag": (lag.min(), lag.max()), "in_net": batch.in_net / span,
            "in_source": batch.in_source / span, "full": batch.full / batch.sampled / net.num_links}


def check_reference(network: str, traffic: str, routing: str, offered: float, buffer: int, vcs: int, steps: int,
                    seed: int = 0) -> str:
    """The engine against its plain reference (one packet at a time) at ``offered``, every packet's
    delivery step compared: an engine bug would show here."""
    from universal.engine.reference_runs import simulate_reference
    from universal.openloop import simulate_batch

    net = build_network(network)
    spec = RunSpec(offered_traffic(net, traffic), build_router(routing, net), build_injection("bernoulli"),
                   offered * float(capacity_rate(net)), seed=seed)
    fast = simulate_batch([spec], buffer=buffer, vcs=vcs, measurement=Measurement(steps=steps))[0]
    ref = simulate_reference(spec, steps, buffer=buffer, vcs=vcs)
    got = fast.records["delivered"]
    same = got.tolist() == ref["delivered"]
    return (f"{steps} steps at offered {offered:g}: {len(got)} packets created, {(got >= 0).sum()} delivered; "
            f"every delivery step equal to the reference's: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", default="torus:k=8,n=2")
    parser.add_argument("--traffic", default="tornado")
    parser.add_argument("--routing", default="val")
    parser.add_argument("--rates", default="0.2,0.4,1.0", help="offered loads, fractions of capacity")
    parser.add_argument("--buffer", type=int, default=1)
    parser.add_argument("--vcs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--from", dest="start", type=int, default=1500, help="first measured step")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--source", choices=["all", "fifo", "one"], default="all")
    parser.add_argument("--credit", choices=["start", "same-step"], default="start")
    parser.add_argument("--order", choices=["age", "transit-first"], default="age")
    parser.add_argument("--check-reference", type=int, default=0, metavar="STEPS",
                        help="instead: run the engine and its plain reference for STEPS steps at each rate and "
                             "compare every packet's delivery step")
    args = parser.parse_args()
    if args.check_reference:
        for offered in map(float, args.rates.split(",")):
            print(f"{args.network} {args.routing} {args.traffic} b={args.buffer} V={args.vcs}: "
                  + check_reference(args.network, args.traffic, args.routing, offered, args.buffer, args.vcs,
                                    args.check_reference, args.seed), flush=True)
        return
    print(f"{args.network} {args.routing} {args.traffic} b={args.buffer} V={args.vcs}; source {args.source}, "
          f"credit {args.credit}, order {args.order}; steps {args.start}..{args.steps}")
    print(f"{'offered':>7} {'α*':>6} {'α′':>6} {'lag min-max':>11} {'in net':>6} {'queued':>8}  "
          f"{'α* per 1000 steps':<22} {'full per class'}")
    for offered in map(float, args.rates.split(",")):
        t = time.perf_counter()
        r = probe(args.network, args.traffic, args.routing, offered, args.buffer, args.vcs, args.steps,
                  args.start, args.seed, source=args.source, credit=args.credit, order=args.order)
        blocks = " ".join(f"{x:.3f}" for x in r["blocks*"])
        full = " ".join(f"{x:.2f}" for x in r["full"])
        least = r["alpha'"]
        print(f"{offered:7.2f} {r['alpha*']:6.3f} {least:6.3f} {r['lag'][0]:5.0f}-{r['lag'][1]:<5.0f} "
              f"{r['in_net']:6.0f} {r['in_source']:8.0f}  {blocks:<22} {full}  ({time.perf_counter() - t:.0f} s)",
              flush=True)


if __name__ == "__main__":
    main()
