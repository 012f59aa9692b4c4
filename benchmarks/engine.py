"""Engine benchmark: packet-hops per second for random rank on Valiant h-relations on BF(d).

Usage::

    python benchmarks/engine.py                 # d = 8, 10, 12, 14 and h = 1, 4
    python benchmarks/engine.py --reference     # also time the reference engine on d = 14, h = 4
    python benchmarks/engine.py --d 16 --h 4    # one instance

Engine time includes the engine's own set-up (ranks, link renumbering, sorting) but not the
choice of paths, which is timed separately. Each instance runs ``--repeat`` times; the best
time is reported (the machine may be shared). Runs on one core (numpy does not thread here).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from universal.engine import simulate, simulate_reference
from universal.networks import butterfly
from universal.paths import route_paths
from universal.workloads import build_problem


def instance(d: int, h: int, seed: int = 0):
    net = butterfly(d)
    problem = build_problem(f"h-relation:h={h}", net, np.random.default_rng(seed))
    start = time.perf_counter()
    paths = route_paths("valiant", problem, net, np.random.default_rng(seed + 1))
    paths.congestion  # the link loads are part of choosing paths, not of the engine
    return paths, time.perf_counter() - start


def time_engine(engine, paths, repeat: int, seed: int = 2):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = engine(paths, "random-rank", np.random.default_rng(seed))
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="*", default=[8, 10, 12, 14])
    parser.add_argument("--h", type=int, nargs="*", default=[1, 4])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--reference", action="store_true", help="time the reference engine on the largest instance")
    args = parser.parse_args()

    print(f"cores: {os.cpu_count()}  python {platform.python_version()}  numpy {np.__version__}  "
          f"machine {platform.machine()}")
    print(f"{'d':>3} {'h':>3} {'packets':>9} {'hops':>10} {'C':>4} {'D':>4} {'T':>5} "
          f"{'paths s':>8} {'engine s':>9} {'Mhops/s':>8}")
    last = None
    for d in args.d:
        for h in args.h:
            paths, path_seconds = instance(d, h)
            seconds, res = time_engine(simulate, paths, args.repeat)
            print(f"{d:>3} {h:>3} {paths.size:>9,} {res.hops:>10,} {paths.congestion:>4} {paths.dilation:>4} "
                  f"{res.T:>5} {path_seconds:>8.3f} {seconds:>9.3f} {res.hops / seconds / 1e6:>8.1f}")
            last = (d, h, paths, seconds, res)
    if args.reference and last:
        d, h, paths, fast_seconds, fast = last
        ref_seconds, ref = time_engine(simulate_reference, paths, 1)
        same = np.array_equal(ref.delivery, fast.delivery)
        print(f"reference engine on d={d}, h={h}: {ref_seconds:.1f} s "
              f"({ref.hops / ref_seconds / 1e6:.2f} Mhops/s); fast engine is {ref_seconds / fast_seconds:.0f}x "
              f"faster; identical delivery steps: {same}")


if __name__ == "__main__":
    main()
