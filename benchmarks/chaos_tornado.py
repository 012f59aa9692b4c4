"""Why CHAOS does not beat MIN AD on tornado here: the shared queues never fill, so nothing is
deflected (issue 24; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks", 2003, §5.2, who measure CHAOS at 0.35 and 0.30 of capacity for
k = 8 and 16; Konstantinidou & Snyder, "The Chaos router", IEEE Transactions on Computers, 1994).

Usage::

    python benchmarks/chaos_tornado.py                          # k = 8, offered 0.36 and 0.40
    python benchmarks/chaos_tornado.py --k 16 --loads 0.30,0.34 --steps 4000
    python benchmarks/chaos_tornado.py --variants shipped,age,age+gate-off --queue 16

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
Under the shipped rules source packets take a link only when no through packet wants it, so the
through packets on each +x link never outnumber what it carries, no queue ever fills, and CHAOS,
which deflects only from a full queue, stays minimal: the accepted rate is the minimal bound.

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
from universal.networks import build_network  # noqa: E402
from universal.openloop import Measurement, RunSpec, build_injection, build_router, offered_traffic  # noqa: E402
from universal.engine.runs import simulate_batch  # noqa: E402
from universal.openloop.workload import capacity_rate  # noqa: E402

VARIANTS = ("shipped", "gate-off", "age", "age+gate-off", "sources-as-inputs")


def _patch(variant: str) -> dict:
    """Replace chaos.py's class order or gate for one variant; returns what to restore."""
    saved = {"class_rank": chaos.class_rank, "gate": chaos.gate}
    parts = variant.split("+")
    if "age" in parts:
        chaos.class_rank = lambda batch, h: np.zeros(len(batch.a["prev"]) - h, dtype=np.int64)
    if "sources-as-inputs" in parts:
        rank = saved["class_rank"]
        chaos.class_rank = lambda batch, h: np.maximum(rank(batch, h), 1)
    if "gate-off" in parts:
        chaos.gate = lambda batch, order: np.zeros(len(batch.chaos_gate) if order is None else len(order), dtype=bool)
    return saved


def run(k: int, load: float, steps: int, variant: str, queue: int | None) -> dict:
    """One run of CHAOS on tornado at ``load`` (fraction of capacity) under ``variant``."""
    net = build_network(f"torus:k={k},n=2")
    cap = float(capacity_rate(net))
    routing = "chaos" if queue is None else f"chaos:queue={queue}"
    spec = RunSpec(offered_traffic(net, "tornado"), build_router(routing, net), build_injection("bernoulli"),
                   load * cap, seed=0)
    fullest = [0]
    decide = chaos.decide

    def watched(batch, t):              # the fullest shared queue at the start of any step
        decide(batch, t)
        fullest[0] = max(fullest[0], int(batch.queue_start.max()))

    saved = _patch(variant)
    chaos.decide = watched
    try:
        res = simulate_batch([spec], buffer=8, vcs=6, measurement=Measurement(steps=steps, record_crossings=True))[0]
    finally:
        chaos.decide = decide
        for name, f in saved.items():
            setattr(chaos, name, f)
    delivered, pid = res.records["delivered"], res.records["pid"]
    done = delivered >= 0
    hops = np.bincount(res.records["crossings"][:, 1], minlength=int(pid.max()) + 1)[pid[done]]
    half = steps // 2
    accepted = (delivered >= half).sum() / (steps - half) / net.num_nodes / cap
    return {"accepted": accepted, "delivered": int(done.sum()), "misrouted": int((hops > math.ceil(k / 2) - 1).sum()),
            "fullest": fullest[0], "queue": int(chaos.queue_sizes(spec.router, 8, 6)[0]), "status": res.status}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--loads", default="0.36,0.40", help="offered loads, fractions of capacity")
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--queue", type=int, default=None, help="S, shared-queue places (default: the budget, 160)")
    parser.add_argument("--variants", default="shipped", help=f"comma-separated, of {', '.join(VARIANTS)}")
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    bad = [v for v in variants if v not in VARIANTS]
    try:
        loads = [float(x) for x in args.loads.split(",")]
    except ValueError:
        loads = []
    if bad or not loads or min(loads) <= 0 or args.k < 3 or args.steps < 2 or (args.queue is not None and args.queue < 1):
        what = f"unknown variant {bad[0]!r} (choose from {', '.join(VARIANTS)})" if bad else \
            "--loads must be positive numbers, --k at least 3, --steps at least 2, --queue at least 1"
        print(f"error: {what}", file=sys.stderr)
        return 2
    bound = 1 / (math.ceil(args.k / 2) - 1) / float(capacity_rate(build_network(f"torus:k={args.k},n=2")))
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


if __name__ == "__main__":
    sys.exit(main())
