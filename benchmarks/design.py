"""Seconds for the worst-case design LP with the locality objective on k-ary 2-cubes (SPEC §9).

Usage::

    python benchmarks/design.py                 # k = 4, 6, 8, 10, 12
    python benchmarks/design.py 8 10            # chosen radices
    python benchmarks/design.py --paths 2turn   # the 2TURN family
    python benchmarks/design.py --method highs-ds 8   # another HiGHS method, to compare

Each line is one ``universal design --objective worst-case --then locality`` solve (Towles, Dally
& Boyd, "Throughput-centric routing algorithm design", 2003, eq. 8 and the lexicographic
locality stage): the LP's size after the symmetry reduction, the wall seconds and the CPU
seconds (this process and the forked solver; on a shared machine the CPU time is the steadier
figure) of both stages, the optimal worst-case throughput (fraction of capacity) and the shortest
locality that keeps it.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import sys as _sys
from pathlib import Path as _Path

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from universal.design.lp import solve_design  # noqa: E402
from universal.paths.torus.geometry import Torus  # noqa: E402


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the forked LP solves)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("radix", nargs="*", type=int, default=[4, 6, 8, 10, 12])
    parser.add_argument("--paths", default="all", choices=["all", "minimal", "2turn"])
    parser.add_argument("--method", default="highs-ipm", help="HiGHS method of scipy.optimize.linprog")
    parser.add_argument("--n", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"cores (os.cpu_count): {os.cpu_count()}")
    print(f"worst-case LP then locality, {args.paths} paths, {args.method}, n = {args.n}")
    print(f"{'k':>4} {'N':>6} {'rows':>8} {'cols':>8} {'seconds':>8} {'CPU s':>6} {'worst case':>11} {'locality':>9}")
    for k in args.radix:
        torus = Torus(k, args.n)
        t0, c0 = time.perf_counter(), _cpu()
        sol = solve_design(torus, "worst-case", args.paths, then="locality", method=args.method)
        seconds, cpu = time.perf_counter() - t0, _cpu() - c0
        print(f"{k:>4} {torus.N:>6} {sol.lp_rows:>8} {sol.lp_cols:>8} {seconds:>8.1f} {cpu:>6.1f} "
              f"{float(torus.capacity_load) / sol.cost:>11.6f} "
              f"{sol.hops / float(torus.average_min_distance):>9.4f}", flush=True)


if __name__ == "__main__":
    main()
