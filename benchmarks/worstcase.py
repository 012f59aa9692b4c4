"""Seconds for the exact worst case of ROMM on k-ary 2-cubes (SPEC §9: speed by benchmark).

Usage::

    python benchmarks/worstcase.py            # k = 8, 16, 32, 64
    python benchmarks/worstcase.py 8 16       # chosen radices
    python benchmarks/worstcase.py --routing dor 8 16 32 64

Targets on a 2-core machine: k=32 (N=1024) under 10 s, k=64 (N=4096) under 2 minutes.
Each line reports the time to tabulate the pair loads from node 0, the time of the whole run
(tables + matchings of the focus channels + exact load of the permutation found), whether the
result is exact and how: ``integer`` (integer weights) or ``certified`` (float matching proved
optimal by exact dual potentials, for common denominators too large for float64).
"""

from __future__ import annotations

import argparse
import os
import time

import sys as _sys
from pathlib import Path as _Path

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from universal.oblivious.loads import pair_loads  # noqa: E402
from universal.paths.torus.geometry import Torus  # noqa: E402
from universal.oblivious.worstcase import focus_classes, worst_case  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("radix", nargs="*", type=int, default=[8, 16, 32, 64])
    parser.add_argument("--routing", default="romm")
    parser.add_argument("--n", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"cores (os.cpu_count): {os.cpu_count()}")
    print(f"routing: {args.routing}, n = {args.n}")
    print(f"{'k':>4} {'N':>6} {'tables s':>9} {'total s':>8} {'throughput':>11} {'exact':>6} "
          f"{'method':>9}  max load (exact)")
    for k in args.radix:
        torus = Torus(k, args.n)
        t0 = time.perf_counter()
        pair_loads(args.routing, torus, focus_classes(args.routing, args.n))
        t1 = time.perf_counter()
        res = worst_case(k, args.n, args.routing)
        t2 = time.perf_counter()
        print(f"{k:>4} {torus.N:>6} {t1 - t0:>9.2f} {t2 - t1:>8.2f} {res.throughput:>11.5f} "
              f"{'exact' if res.exact else 'NO':>6} {res.method:>9}  {res.max_load_exact} on "
              f"{res.channel[0]}->{res.channel[1]}", flush=True)


if __name__ == "__main__":
    main()
