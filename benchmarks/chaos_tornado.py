"""Why CHAOS does not beat MIN AD on tornado here: the shared queues never fill, so nothing is
deflected (issue 24; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks", 2003, §5.2, who measure CHAOS at 0.35 and 0.30 of capacity for
k = 8 and 16; Konstantinidou & Snyder, "The Chaos router", IEEE Transactions on Computers, 1994).

Usage::

    python benchmarks/chaos_tornado.py                          # k = 8, offered 0.36 and 0.40
    python benchmarks/chaos_tornado.py --k 16 --loads 0.30,0.34 --steps 4000
    python benchmarks/chaos_tornado.py --variants shipped,age,age+gate-off --queue 16
    python benchmarks/chaos_tornado.py --saturation --variants shipped,sources-fill-queue   # Θ of each

Runs CHAOS (``--buffer 8``, and the paper's budget ``--vcs 6``: a shared queue of 160, or
``--queue S``) on the k-ary 2-cube under tornado for ``--steps`` steps at every offered load
(fractions of capacity), seed 0, and prints per run the accepted rate over the second half of
the steps (fraction of capacity), the packets delivered, how many of them took more than their
minimal ``ceil(k/2) - 1`` hops (misrouted at least once), the fullest shared queue at the start
of any step, and the end status. The minimal bound is ``1 / (ceil(k/2) - 1)`` packets per node
and step: 1/3 of capacity for k = 8, 2/7 (0.286) for k = 16.

``--variants`` also runs rules we tried and did not keep (monkeypatched here, not options of the
package): ``gate-off`` drops the injection gate; ``age`` gives the three classes (shared queue,
input buffers, source queue) one priority, age alone; ``sources-as-inputs`` puts source packets
in the input buffers' class (the processor as one more input port, below the shared queue).
Two more let a source packet that did not leave move into its node's shared queue after the
input packets (our reading of the Chaos router: packets may enter its multiqueue without a
productive first move), and add the
original's derouting trigger: when a full queue has input packets waiting to enter, as many
queued packets as there are such input packets, chosen at random (by their tie numbers), take a
non-minimal link with room. ``sources-into-queue`` lets sources take places only while the
queue keeps room for every input packet and one more (the gate's condition: deadlock-free by
chaos.py's argument); ``sources-fill-queue`` lets them take every place left after the step's
departures and input packets (the original relies on its packet exchange instead, which this
model lacks: it can deadlock, and the status column says so).

Under the shipped rules source packets take a link only when no through packet wants it, so the
through packets on each +x link never outnumber what it carries, no queue ever fills, and CHAOS,
which deflects only from a full queue, stays minimal: the accepted rate is the minimal bound.
With a place kept free for each input packet the same holds when sources join the queue: a node
with one loaded input and one loaded output never has more input packets than room.

About 10 s per run at k = 8 and 4000 steps, a minute at k = 16.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import universal.engine.chaos as chaos  # noqa: E402
from universal.engine.adaptive import _tables  # noqa: E402
from universal.engine.contention import ONE  # noqa: E402
from universal.engine.routes import tie_uniform  # noqa: E402
from universal.errors import UserError  # noqa: E402
from universal.networks import build_network  # noqa: E402
from universal.openloop import Measurement, RunSpec, build_injection, build_router, offered_traffic  # noqa: E402
from universal.engine.runs import simulate_batch  # noqa: E402
from universal.openloop.workload import capacity_rate  # noqa: E402

#: The saturation search's measurement, as ``universal openloop --saturation`` uses it.
SEARCH = Measurement(latency_limit=500, drain=False, overload="stop")
VARIANTS = ("shipped", "gate-off", "age", "age+gate-off", "sources-as-inputs", "sources-into-queue",
            "sources-fill-queue")


def _inputs(batch) -> np.ndarray:
    """Packets in the input buffers of every (run, node)."""
    occ = batch.occupancy[:batch.R * batch.L]
    return np.bincount(batch.link_node, weights=occ, minlength=batch.R * batch.N).astype(np.int64)


def _first_per_group(at: np.ndarray) -> np.ndarray:
    """Position of every entry within its run of equal ``at`` values (``at`` sorted)."""
    first = np.concatenate([[True], at[1:] != at[:-1]])
    return np.arange(len(at)) - np.maximum.accumulate(np.where(first, np.arange(len(at)), 0))


def _deroute_on_overflow(batch) -> None:
    """The original's trigger: at a node whose queue is full and which has input packets, that
    many queued packets, the smallest tie numbers first, take a random non-minimal link with room."""
    h, a, N, L = batch.head, batch.a, batch.N, batch.L
    inputs = batch.inputs_start
    over = (batch.queue_start >= batch.queue_cap) & (inputs > 0)
    live = np.flatnonzero((a["want"][h:] != batch.trash) & (a["prev"][h:] >= batch.queue_base)
                          & (a["prev"][h:] != batch.inject_slot)) + h
    at = a["run"][live] * N + a["node"][live]
    live, at = live[over[at]], at[over[at]]
    if not len(live):
        return
    u = tie_uniform(a["tie"][live], a["hops"][live])
    o = np.lexsort((u, at))
    live, at, u = live[o], at[o], u[o]
    victim = _first_per_group(at) < inputs[at]
    g, u = live[victim], u[victim]
    tabs = _tables(batch)
    head, dist = tabs["head"], tabs["distance"]
    run, node, dst = a["run"][g], a["node"][g], a["dst"][g]
    out = batch.out_links[node]
    o = np.maximum(out, 0)
    slots = o + (run * L)[:, None]
    free = (out >= 0) & (dist[head[o], dst[:, None]] != dist[node, dst][:, None] - 1) \
        & (batch.occupancy[slots] < batch.buffer)
    count = free.sum(axis=1)
    pick = np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))
    new = slots[np.arange(len(g)), np.argmax(np.cumsum(free, axis=1) > pick[:, None], axis=1)]
    g, new = g[count > 0], new[count > 0]
    old = a["want"][g]
    np.subtract.at(batch.waiting, old[old >= 0], ONE)
    a["want"][g] = new
    np.add.at(batch.waiting, new, ONE)


def _sources_into_queue(batch, movers: np.ndarray, keep_free: bool) -> np.ndarray:
    """Source packets that did not leave move into their node's queue after the input packets,
    oldest first: while a place stays free for every input packet and one more (``keep_free``),
    or into every place left after the step's departures and input packets."""
    h, a, N = batch.head, batch.a, batch.N
    src = (a["prev"][h:] == batch.inject_slot) & (a["want"][h:] != batch.trash)
    src[movers - h] = False
    g = np.flatnonzero(src) + h
    at = a["run"][g] * N + a["node"][g]
    o = np.lexsort((a["pid"][g], at))
    g, at = g[o], at[o]
    occ = batch.occupancy
    if keep_free:
        room = batch.queue_cap[at] - 1 - batch.queue_start[at] - batch.inputs_start[at]
    else:
        room = batch.queue_cap[at] - occ[batch.queue_base + at]
    take = _first_per_group(at) < room
    g, at = g[take], at[take]
    np.subtract.at(occ, a["prev"][g], ONE)
    a["prev"][g] = batch.queue_base + at
    np.add.at(occ, batch.queue_base + at, ONE)
    return a["run"][g]


def _patch(variant: str) -> dict:
    """Replace chaos.py's class order, gate or queue rules for one variant; returns what to restore."""
    saved = {"class_rank": chaos.class_rank, "gate": chaos.gate, "decide": chaos.decide, "into_queue": chaos.into_queue}
    parts = variant.split("+")
    if "age" in parts:
        chaos.class_rank = lambda batch, h: np.zeros(len(batch.a["prev"]) - h, dtype=np.int64)
    if "sources-as-inputs" in parts:
        rank = saved["class_rank"]
        chaos.class_rank = lambda batch, h: np.maximum(rank(batch, h), 1)
    if "gate-off" in parts:
        chaos.gate = lambda batch, order: np.zeros(len(batch.chaos_gate) if order is None else len(order), dtype=bool)
    if variant in ("sources-into-queue", "sources-fill-queue"):
        decide, into_queue = saved["decide"], saved["into_queue"]

        def decide_and_deroute(batch, t):
            decide(batch, t)
            batch.inputs_start = _inputs(batch)
            _deroute_on_overflow(batch)

        def queue_sources_too(batch, movers, order):
            moved = into_queue(batch, movers, order)
            return np.concatenate([moved, _sources_into_queue(batch, movers, variant == "sources-into-queue")])

        chaos.decide, chaos.into_queue = decide_and_deroute, queue_sources_too
    return saved


def run(k: int, load: float, steps: int, variant: str, queue: int | None) -> dict:
    """One run of CHAOS on tornado at ``load`` (fraction of capacity) under ``variant``."""
    net = build_network(f"torus:k={k},n=2")
    cap = float(capacity_rate(net))
    routing = "chaos" if queue is None else f"chaos:queue={queue}"
    spec = RunSpec(offered_traffic(net, "tornado"), build_router(routing, net), build_injection("bernoulli"),
                   load * cap, seed=0)
    fullest = [0]
    saved = _patch(variant)
    decide = chaos.decide

    def watched(batch, t):              # the fullest shared queue at the start of any step
        decide(batch, t)
        fullest[0] = max(fullest[0], int(batch.queue_start.max()))

    chaos.decide = watched
    try:
        res = simulate_batch([spec], buffer=8, vcs=6, measurement=Measurement(steps=steps, record_crossings=True))[0]
    finally:
        for name, f in saved.items():
            setattr(chaos, name, f)
    delivered, pid = res.records["delivered"], res.records["pid"]
    done = delivered >= 0
    hops = np.bincount(res.records["crossings"][:, 1], minlength=int(pid.max()) + 1)[pid[done]]
    half = steps // 2
    accepted = (delivered >= half).sum() / (steps - half) / net.num_nodes / cap
    return {"accepted": accepted, "delivered": int(done.sum()), "misrouted": int((hops > math.ceil(k / 2) - 1).sum()),
            "fullest": fullest[0], "queue": int(chaos.queue_sizes(spec.router, 8, 6)[0]), "status": res.status}


def saturation(k: int, variant: str, queue: int | None, tolerance: float) -> tuple[float, str]:
    """Θ of CHAOS on tornado under ``variant`` (fraction of capacity), searched as
    ``universal openloop --saturation`` does (seed 0), and whether a run of the search deadlocked."""
    import universal.openloop.saturation as search

    net = build_network(f"torus:k={k},n=2")
    cap = float(capacity_rate(net))
    routing = "chaos" if queue is None else f"chaos:queue={queue}"
    spec = RunSpec(offered_traffic(net, "tornado"), build_router(routing, net), build_injection("bernoulli"), 1.0,
                   seed=0)
    saved = _patch(variant)
    statuses: list[str] = []
    simulate = search.simulate_batch

    def watched(*args, **kwargs):
        res = simulate(*args, **kwargs)
        statuses.extend(r.status for r in res)
        return res

    try:
        search.simulate_batch = watched
        sat = search.find_saturation(spec, tolerance=tolerance, measurement=SEARCH, buffer=8, vcs=6)
    finally:
        search.simulate_batch = simulate
        for name, f in saved.items():
            setattr(chaos, name, f)
    return sat.theta / cap, "deadlock" if "deadlock" in statuses else "no"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--loads", default="0.36,0.40", help="offered loads, fractions of capacity")
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--queue", type=int, default=None, help="S, shared-queue places (default: the budget, 160)")
    parser.add_argument("--variants", default="shipped", help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--saturation", action="store_true",
                        help="search every variant's Θ instead (as openloop --saturation, --tolerance)")
    parser.add_argument("--tolerance", type=float, default=0.01)
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    bad = [v for v in variants if v not in VARIANTS]
    try:
        loads = [float(x) for x in args.loads.split(",")]
    except ValueError:
        loads = []
    wrong = not loads or min(loads) <= 0 or args.k < 3 or args.steps < 2 or (args.queue is not None and args.queue < 1)
    if bad or wrong:
        what = f"unknown variant {bad[0]!r} (choose from {', '.join(VARIANTS)})" if bad else \
            "--loads must be positive numbers, --k at least 3, --steps at least 2, --queue at least 1"
        print(f"error: {what}", file=sys.stderr)
        return 2
    cap = float(capacity_rate(build_network(f"torus:k={args.k},n=2")))
    if max(loads) * cap > 1:
        print(f"error: bernoulli sources offer at most one packet per node and step: loads up to {1 / cap:.3f} "
              f"of capacity at k = {args.k}", file=sys.stderr)
        return 2
    bound = 1 / (math.ceil(args.k / 2) - 1) / cap
    if args.saturation:
        print(f"CHAOS, torus:k={args.k},n=2, tornado, bernoulli, seed 0, b = 8, tolerance {args.tolerance}; "
              f"minimal bound {bound:.3f} of capacity")
        print(f"{'variant':<18} {'Θ':>6} {'deadlock':>8} {'seconds':>7}")
        for variant in variants:
            start = time.perf_counter()
            theta, dead = saturation(args.k, variant, args.queue, args.tolerance)
            print(f"{variant:<18} {theta:>6.3f} {dead:>8} {time.perf_counter() - start:>7.1f}", flush=True)
        return 0
    print(f"CHAOS, torus:k={args.k},n=2, tornado, bernoulli, seed 0, b = 8, {args.steps} steps "
          f"(accepted over the last {args.steps - args.steps // 2}); minimal bound {bound:.3f} of capacity")
    print(f"{'variant':<18} {'S':>4} {'offered':>7} {'accepted':>8} {'delivered':>9} {'misrouted':>9} "
          f"{'fullest queue':>13} {'status':>8} {'seconds':>7}")
    for variant in variants:
        for load in loads:
            start = time.perf_counter()
            r = run(args.k, load, args.steps, variant, args.queue)
            print(f"{variant:<18} {r['queue']:>4} {load:>7.3f} {r['accepted']:>8.4f} {r['delivered']:>9} "
                  f"{r['misrouted']:>9} {r['fullest']:>13} {r['status']:>8} {time.perf_counter() - start:>7.1f}",
                  flush=True)
    return 0


def _main() -> int:
    try:
        return main()
    except UserError as err:        # a load the injection cannot offer, and the like: one line
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(_main())
