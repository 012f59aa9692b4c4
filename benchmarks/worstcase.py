"""Seconds for the exact worst case of ROMM on k-ary 2-cubes (SPEC §9: speed by benchmark).

Usage::

    python benchmarks/worstcase.py            # k = 8, 16, 32, 64
    python benchmarks/worstcase.py 8 16       # chosen radices
    python benchmarks/worstcase.py --routing dor 8 16 32 64

Targets on a 2-core machine: k=32 (N=1024) under 10 s, k=64 (N=4096) under 2 minutes.
Each line times one run of :func:`~universal.oblivious.worstcase.worst_case`, split where its
progress reports show the pair-load tables from node 0 finished: the tables, then the rest
(matchings of the focus channels and the exact load of the permutation found), and the total,
which is their sum (wall clock), with the run's CPU time beside it (the machine may be shared);
then whether the result is exact and how: ``integer`` (integer weights) or ``certified`` (float
matching proved optimal by exact dual potentials, for common denominators too large for float64).
"""

from __future__ import annotations

import argparse
import os
import time

import sys as _sys
from pathlib import Path as _Path

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from universal.paths.torus.geometry import Torus  # noqa: E402
from universal.oblivious.worstcase import worst_case  # noqa: E402


def timed_worst_case(k: int, n: int, routing: str):
    """The worst case of ``routing`` on the k-ary n-cube and (tables s, rest s, CPU s) of that one
    run: its progress callback counts one unit per offset tabulated (N in all) before the
    matchings begin, so the moment the count reaches N splits the run in two."""
    N, done, split = Torus(k, n).N, [0], []

    def progress(amount: int) -> None:
        done[0] += amount
        if not split and done[0] >= N:
            split.append(time.perf_counter())

    start, cpu = time.perf_counter(), time.process_time()
    res = worst_case(k, n, routing, progress=progress)
    end, cpu = time.perf_counter(), time.process_time() - cpu
    middle = split[0] if split else end
    return res, (middle - start, end - middle, cpu)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("radix", nargs="*", type=int, default=[8, 16, 32, 64])
    parser.add_argument("--routing", default="romm")
    parser.add_argument("--n", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"cores (os.cpu_count): {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    print(f"routing: {args.routing}, n = {args.n}")
    print(f"{'k':>4} {'N':>6} {'tables s':>9} {'rest s':>7} {'total s':>8} {'CPU s':>7} {'throughput':>11} "
          f"{'exact':>6} {'method':>9}  max load (exact)")
    for k in args.radix:
        res, (tables, rest, cpu) = timed_worst_case(k, args.n, args.routing)
        print(f"{k:>4} {k ** args.n:>6} {tables:>9.2f} {rest:>7.2f} {tables + rest:>8.2f} {cpu:>7.2f} "
              f"{res.throughput:>11.5f} {'exact' if res.exact else 'NO':>6} {res.method:>9}  "
              f"{res.max_load_exact} on {res.channel[0]}->{res.channel[1]}", flush=True)
    print("total = tables + rest, wall clock of one run; CPU s: that run's CPU time")


if __name__ == "__main__":
    main()
