"""Engine benchmark: packet-hops per second of every protocol on Valiant h-relations on BF(d).

Usage::

    python benchmarks/engine.py                 # d = 8, 10, 12, 14 and h = 1, 4; every protocol
    python benchmarks/engine.py --d 14 --h 4    # one instance
    python benchmarks/engine.py --reference     # also time the reference engine on the last instance

One column per protocol and buffer setting, in millions of packet-hops per second (for
duplication and trial-and-failure, every link crossed by a copy or attempt, also by those
discarded later), then the same figures as ratios to unbounded random rank, which is what to
compare on a shared machine: every protocol of one instance runs in the same round, round after
round (``--repeat``), and each keeps its best time, so a busy moment slows all of them alike.
Times are CPU time of this process (``time.process_time``): on a machine shared by many, wall
time mostly measures the wait for a core. ``B/hop`` is the peak memory (numpy allocations,
traced) of choosing the paths and routing them with random rank, per packet-hop.

The engine is the one engine's batch front end (:func:`universal.engine.simulate`): in numpy
below the compiled kernels' threshold in a fresh process (these instances), as a ``route`` of
the same size runs. ``benchmarks/retired_engine.py`` times it beside the retired vectorised
batch engine (loaded from git at commit 96407e7) in the same rounds.

Engine time includes the engine's own set-up (ranks, sorting) but not the choice of paths,
which is timed separately (``paths s``). Runs on one core (numpy does not thread here).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import tracemalloc

import numpy as np

import sys as _sys
from pathlib import Path as _Path

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from universal.engine import simulate, simulate_reference  # noqa: E402
from universal.networks import butterfly  # noqa: E402
from universal.paths import route_paths  # noqa: E402
from universal.workloads import build_problem  # noqa: E402

#: (column, protocol, buffer): unbounded random rank first, since the ratios divide by it.
SETTINGS = [
    ("rr", "random-rank", None),
    ("rr b=2", "random-rank", 2),
    ("grow", "growing-rank", None),
    ("fifo", "fifo", None),
    ("ftg", "farthest-to-go", None),
    ("ntg", "nearest-to-go", None),
    ("lis", "longest-in-system", None),
    ("random", "random", None),
    ("t&f", "trial-and-failure", None),
    ("dup", "duplication", None),
]


def instance(d: int, h: int, seed: int = 0):
    net = butterfly(d)
    problem = build_problem(f"h-relation:h={h}", net, np.random.default_rng(seed))
    start = time.perf_counter()
    paths = route_paths("valiant", problem, net, np.random.default_rng(seed + 1))
    paths.congestion  # the link loads are part of choosing paths, not of the engine
    return paths, time.perf_counter() - start


def bytes_per_hop(d: int, h: int) -> float:
    """Peak traced memory of building the paths and routing them with random rank, per hop."""
    tracemalloc.start()
    try:
        paths, _ = instance(d, h)
        result = simulate(paths, "random-rank", np.random.default_rng(2))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / max(result.hops, 1)


def time_settings(paths, settings, repeat: int, seed: int = 2) -> dict:
    """Best seconds per hop of every setting, the settings interleaved round by round."""
    best: dict = {}
    results: dict = {}
    for _ in range(repeat):
        for column, protocol, buffer in settings:
            start = time.process_time()
            result = simulate(paths, protocol, np.random.default_rng(seed), buffer=buffer)
            seconds = (time.process_time() - start) / max(result.hops, 1)
            best[column] = min(best.get(column, float("inf")), seconds)
            results[column] = result
    return {key: (best[key], results[key]) for key in best}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="*", default=[8, 10, 12, 14])
    parser.add_argument("--h", type=int, nargs="*", default=[1, 4])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--only", nargs="*", metavar="COLUMN", help="time only these columns (rr is always kept)")
    parser.add_argument("--reference", action="store_true", help="time the reference engine on the last instance")
    args = parser.parse_args()
    settings = [s for s in SETTINGS if not args.only or s[0] in args.only or s[0] == "rr"]

    print(f"cores: {os.cpu_count()}  python {platform.python_version()}  numpy {np.__version__}  "
          f"machine {platform.machine()}")
    head = f"{'d':>3} {'h':>2} {'packets':>9} {'hops':>11} {'C':>3} {'D':>3} {'paths s':>7} {'B/hop':>5}"
    columns = " ".join(f"{column:>6}" for column, _, _ in settings)
    print("Mhops/s (best of", args.repeat, "rounds), then the ratio to rr in the same rounds")
    print(f"{head} {columns}")
    last = None
    for d in args.d:
        for h in args.h:
            memory = bytes_per_hop(d, h)
            paths, path_seconds = instance(d, h)
            timed = time_settings(paths, settings, args.repeat)
            hops = timed["rr"][1].hops
            rates = " ".join(f"{1 / timed[c][0] / 1e6:>6.1f}" for c, _, _ in settings)
            ratios = " ".join(f"{timed['rr'][0] / timed[c][0]:>6.2f}" for c, _, _ in settings)
            print(f"{d:>3} {h:>2} {paths.size:>9,} {hops:>11,} {paths.congestion:>3} {paths.dilation:>3} "
                  f"{path_seconds:>7.3f} {memory:>5.1f} {rates}")
            print(f"{'':>{len(head)}} {ratios}")
            last = (d, h, paths, timed["rr"])
    if args.reference and last:
        d, h, paths, (fast_per_hop, fast) = last
        start = time.perf_counter()
        ref = simulate_reference(paths, "random-rank", np.random.default_rng(2))
        ref_seconds = time.perf_counter() - start
        same = np.array_equal(ref.delivery, fast.delivery)
        print(f"reference engine on d={d}, h={h}: {ref_seconds:.1f} s ({ref.hops / ref_seconds / 1e6:.2f} Mhops/s); "
              f"fast engine is {ref_seconds / (fast_per_hop * fast.hops):.0f}x faster; "
              f"identical delivery steps: {same}")


if __name__ == "__main__":
    main()
