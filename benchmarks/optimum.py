"""Optimum benchmark: CP-SAT's solve time and proven gap for OPT(P) as the instance grows.

Usage::

    python benchmarks/optimum.py                      # Valiant h-relations on BF(d), d = 3..7, h = 1, 2, 4
    python benchmarks/optimum.py --d 5 6 --h 8        # other sizes
    python benchmarks/optimum.py --time-limit 30      # a longer search per instance

Every row is one path collection (Valiant's trick on BF(d), seeded). "greedy T" is the best
protocol's schedule, the solver's start; [lower, upper] are the proven bounds when the time limit
(CP-SAT deterministic time, about seconds; one worker, fixed seed) ends the search; gap is
(upper - lower) / upper. Time is wall-clock and includes building the model and replaying the
schedule.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import sys as _sys
from pathlib import Path as _Path

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from universal.networks import butterfly  # noqa: E402
from universal.optimum import optimum  # noqa: E402
from universal.paths import route_paths  # noqa: E402
from universal.workloads import build_problem  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="*", default=[3, 4, 5, 6, 7])
    parser.add_argument("--h", type=int, nargs="*", default=[1, 2, 4])
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--bandwidth", type=int, default=1)
    args = parser.parse_args()

    import ortools

    print(f"cores: {os.cpu_count()}  python {platform.python_version()}  ortools {ortools.__version__}  "
          f"time limit {args.time_limit:g}  B = {args.bandwidth}")
    print(f"{'d':>3} {'h':>3} {'packets':>8} {'hops':>7} {'C':>3} {'D':>3} {'LB':>4} {'greedy T':>9} "
          f"{'OPT':>10} {'status':>8} {'gap':>6} {'seconds':>8}")
    for d in args.d:
        for h in args.h:
            net = butterfly(d)
            problem = build_problem(f"h-relation:h={h}", net, np.random.default_rng(0))
            paths = route_paths("valiant", problem, net, np.random.default_rng(1))
            start = time.perf_counter()
            res = optimum(paths, args.bandwidth, time_limit=args.time_limit)
            seconds = time.perf_counter() - start
            value = str(res.upper) if res.status == "optimal" else f"[{res.lower}, {res.upper}]"
            print(f"{d:>3} {h:>3} {paths.size:>8,} {int(paths.lengths.sum()):>7,} {paths.congestion:>3} "
                  f"{paths.dilation:>3} {res.lower_bound:>4} {res.hint:>9} {value:>10} {res.status:>8} "
                  f"{100 * res.gap:>5.1f}% {seconds:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
