"""Stability beyond saturation: α' at 1.5 Θ against α' at Θ (issue 13's acceptance point;
Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003, §2.2 and §5.5).

Usage::

    python benchmarks/beyond_saturation.py                       # 8-ary 2-cube, bit complement, age
    python benchmarks/beyond_saturation.py --priority farthest-to-go --seeds 1
    python benchmarks/beyond_saturation.py --buffer 1 --vcs 6 --offered 1.0 --traffic tornado \
        --routing dor,val,romm,rlb,ival --seeds 1                  # the router model: b = 1 per VC
    python benchmarks/beyond_saturation.py --routing chaos,goal --buffer 8 --vcs 6 --offered 1.0 \
        --seeds 1                  # Figure 13: CHAOS starves its sources (the VC budget in its shared queue)
    python benchmarks/beyond_saturation.py --buffer 1 --vcs scheme --offered 1.0 --seeds 1 --window 2000 \
        --traffic uniform,bitcomp,transpose,tornado --routing dor,val,romm,rlb   # issue 24's table
    python benchmarks/beyond_saturation.py --buffer 1 --vcs scheme --offered 1.0 --seeds 1 --window 2000 \
        --traffic uniform,bitcomp,transpose,tornado --routing dor,val,romm,rlb,min-adaptive,goal,ugal \
        --source-queue fifo     # the same with the paper's source queue (a FIFO, its head alone leaves)
    python benchmarks/beyond_saturation.py --buffer 8 --vcs 6 --offered 1.0 --seeds 1 --window 2000 \
        --traffic bitcomp,tornado --routing val,rlb,goal --vc-buffer fifo   # FIFO VCs, the paper's depth

With ``--buffer`` and ``--vcs`` the runs (search included) have bounded buffers and virtual
channels (``universal openloop --buffer b --vcs V``); ``--offered X`` runs the second load at X
(a fraction of capacity, e.g. 1.0: GOAL's stability claim at full offered load) instead of 1.5 Θ.
Beside α' the table then gives α* (the mean accepted rate) at both loads and whether any run
deadlocked. ``--vcs scheme`` gives every routing the VCs its deadlock-free scheme needs. Where
the rate falls beyond saturation with b = 1 the cause is the source queue's model (every queued
packet contends for its first link), not the routing: ``benchmarks/source_queue_probe.py`` and the
docs/openloop.md, "One packet per VC, and beyond saturation"; ``--source-queue fifo`` runs the GOAL paper's
source queue instead (:mod:`universal.engine.source_queue`), and ``--vc-buffer fifo`` its FIFO
virtual channels (:mod:`universal.engine.fifo_vcs`; with b = 1 these are the sets of the default).

For every routing it finds the saturation throughput Θ as ``universal openloop --saturation``
does (same search, same measurement, seed ``--seed``), then runs ``--seeds`` seeds at offered Θ
and at 1.5 Θ as ``universal openloop --loads --window 4000`` does (warm-up, a window of
``--window`` steps; a run far beyond saturation never settles, so its window starts when its
backlog passes 2000 steps' worth of offered packets or at the warm-up's maximum of 5000 steps)
and prints the minimum accepted rate α' (GOAL's minimum over the sources; rates as fractions of
capacity) at both loads, averaged over the seeds, with the ratio and its smallest and largest
value over the seeds. A stable routing keeps α' flat beyond saturation (ratio near 1); the
acceptance point asks for at least 0.9 under the age rule, the default contention rule. Under
``farthest-to-go`` the packets nearest their destinations starve and α' collapses.

Why 4000 steps and not ``openloop``'s default window (max(1000, 200/rate), about 2000 steps
here): α' is a minimum over 64 sources of a count of a few hundred packets each, and in the
default window that minimum moves by a few percent from seed to seed. DOR, whose α' is flat
beyond saturation, then shows per-seed ratios from about 0.98 to 1.01, and GOAL's from 0.94 to
1.02 - noise of the measurement, not a property of the routing. In 4000 steps DOR's ratios fall
within 1.00 +- 0.01 and GOAL's between 0.96 and 0.99: GOAL's least served source really does
lose 2-3% beyond saturation (while α* rises), no more.

Takes about a minute of CPU time with the defaults (8 minutes of wall clock on the shared
two-core machine at a load average of 8; longer with another priority: the backlog beyond
saturation grows faster when the rule starves some packets).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import sys as _sys
from pathlib import Path as _Path

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from universal.networks import build_network  # noqa: E402
from universal.openloop import Measurement, RunSpec, build_injection, build_router, offered_traffic  # noqa: E402
from universal.engine.runs import simulate_batch  # noqa: E402
from universal.openloop.saturation import find_saturation  # noqa: E402
from universal.openloop.workload import capacity_rate  # noqa: E402

#: The saturation search's measurement, as ``universal openloop --saturation`` uses it.
SEARCH = Measurement(latency_limit=500, drain=False, overload="stop")


def scheme_vcs(router, buffer: int | None) -> int:
    """The VCs per link of ``router``'s own deadlock-free scheme (dateline classes, *-channels)."""
    from universal.engine.vcs import MAX_VCS, plan_vcs

    return plan_vcs(router, MAX_VCS, buffer).classes


def beyond(network: str, traffic: str, routing: str, seeds: list[int], priority: str,
           tolerance: float = 0.01, factor: float = 1.5, window: int | None = 4000, buffer: int | None = None,
           vcs: int | str = 1, offered: float | None = None, latency_limit: int = 2000,
           source_queue: str = "all", vc_buffer: str = "set") -> dict:
    """Θ of ``routing`` and α' at Θ and ``factor`` Θ (or at ``offered``) for every seed (rates in
    fractions of capacity); ``vcs="scheme"`` gives the routing the VCs its scheme needs;
    ``source_queue`` the sources' model (``fifo``: the input-queued router's, search included);
    ``vc_buffer`` the VC buffers' (``fifo``: each VC a FIFO whose head alone leaves)."""
    net = build_network(network)
    cap = float(capacity_rate(net))
    tr, router, inj = offered_traffic(net, traffic), build_router(routing, net), build_injection("bernoulli")
    if vcs == "scheme":
        vcs = scheme_vcs(router, buffer)
    sat = find_saturation(RunSpec(tr, router, inj, 1.0, seed=seeds[0], priority=priority),
                          tolerance=tolerance, measurement=SEARCH, buffer=buffer, vcs=vcs, source_queue=source_queue,
                         vc_buffer=vc_buffer)
    second = offered * cap if offered is not None else sat.theta * factor
    specs = [RunSpec(tr, router, inj, rate, seed=s, priority=priority)
             for s in seeds for rate in (sat.theta, second)]
    res = simulate_batch(specs, measurement=Measurement(window=window, latency_limit=latency_limit),
                         buffer=buffer, vcs=vcs, source_queue=source_queue,
                         vc_buffer=vc_buffer)
    at = np.array([r.accepted_min for r in res[0::2]]) / cap
    over = np.array([r.accepted_min for r in res[1::2]]) / cap
    mean_at = np.array([r.accepted for r in res[0::2]]) / cap
    mean_over = np.array([r.accepted for r in res[1::2]]) / cap
    return {"routing": routing, "theta": sat.theta / cap, "at": at, "over": over, "mean_at": mean_at,
            "mean_over": mean_over, "status": [r.status for r in res], "vcs": vcs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", default="torus:k=8,n=2")
    parser.add_argument("--traffic", default="bitcomp", help="a traffic, or several comma-separated (one table row each)")
    parser.add_argument("--routing", default="dor,val,min-adaptive,goal")
    parser.add_argument("--priority", default="age")
    parser.add_argument("--seed", type=int, default=0, help="first seed (the search uses it)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--window", type=int, default=4000,
                        help="measurement window of the runs at Θ and 1.5 Θ (0: openloop's default)")
    parser.add_argument("--buffer", type=int, default=None, help="b, packets per buffer (default unbounded)")
    parser.add_argument("--vcs", default="1", help="V, virtual channels per link (default 1), or 'scheme': "
                        "each routing the VCs its deadlock-free scheme needs (DOR 2, VAL 4, ROMM and RLB 6, "
                        "MIN AD and GOAL 3, UGAL 6 on a torus)")
    parser.add_argument("--offered", type=float, default=None,
                        help="run the second load at this fraction of capacity instead of 1.5 Θ")
    parser.add_argument("--latency-limit", type=int, default=2000,
                        help="a run far beyond saturation opens its window once its backlog holds this many steps' "
                             "worth of offered packets (default 2000, openloop's; less is faster: with b = 1 the "
                             "accepted rate settles within 1000 steps, see benchmarks/source_queue_probe.py)")
    parser.add_argument("--vc-buffer", choices=["set", "fifo"], default="set",
                        help="each VC a set (default) or a FIFO whose head alone leaves")
    parser.add_argument("--source-queue", default="all", metavar="{all,fifo,fifo:w=W}",
                        help="the sources' model: all (default, every queued packet contends for its first link) "
                             "or fifo (the GOAL paper's input-queued router: the head alone leaves, B per step), "
                             "or fifo:w=W (the first W packets contend, each may leave)")
    parser.add_argument("--tolerance", type=float, default=0.01, help="the saturation search's tolerance (0.01)")
    args = parser.parse_args()
    if args.vcs != "scheme":
        args.vcs = int(args.vcs)
    seeds = list(range(args.seed, args.seed + args.seeds))
    window = args.window or None
    buffers = "unbounded buffers" if args.buffer is None else f"b = {args.buffer}, V = {args.vcs}"
    buffers += f", {args.source_queue} source queue, {args.vc_buffer} VCs"
    print(f"{args.network}, {', '.join(args.traffic.split(','))}, bernoulli, {args.priority} priority, {buffers}; "
          f"seeds {seeds[0]}..{seeds[-1]}; window {window or 'max(1000, 200/rate)'} steps"
          f"{'' if args.latency_limit == 2000 else f' (opened at a backlog of {args.latency_limit} steps of load)'}; "
          "rates as fractions of capacity")
    there = "1.5Θ" if args.offered is None else f"{args.offered:g}"
    traffics = args.traffic.split(",")
    print(f"{'routing':<14} {'traffic':<8} {'V':>2} {'Θ':>6} {'α′ at Θ':>8} {'α′ at ' + there:>10} {'ratio':>6} {'min ratio':>9} "
          f"{'α* at Θ':>8} {'α* at ' + there:>10} {'ratio':>6} {'deadlock':>8} {'seconds':>7}")
    for routing, traffic in ((r, t) for r in args.routing.split(",") for t in traffics):
        start = time.perf_counter()
        r = beyond(args.network, traffic, routing, seeds, args.priority, tolerance=args.tolerance, window=window,
                   buffer=args.buffer, vcs=args.vcs, offered=args.offered, latency_limit=args.latency_limit,
                   source_queue=args.source_queue, vc_buffer=args.vc_buffer)
        ratios = r["over"] / r["at"]
        dead = "yes" if "deadlock" in r["status"] else "no"
        print(f"{routing:<14} {traffic:<8} {r['vcs']:>2} {r['theta']:6.3f} {r['at'].mean():8.3f} {r['over'].mean():10.3f} "
              f"{r['over'].mean() / r['at'].mean():6.3f} {ratios.min():9.3f} {r['mean_at'].mean():8.3f} "
              f"{r['mean_over'].mean():10.3f} {r['mean_over'].mean() / r['mean_at'].mean():6.3f} {dead:>8} "
              f"{time.perf_counter() - start:7.0f}", flush=True)
    print(f"α′: minimum over the sending nodes of the packets delivered in the window per step, over the row sum; "
          f"α*: their mean (means over the seeds); ratio = value at {there} / value at Θ")


if __name__ == "__main__":
    main()
