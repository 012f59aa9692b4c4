"""CPU seconds of the whole ``universal design`` command, this tree against another, alternated.

Usage::

    python benchmarks/design_command.py --base /path/to/other/checkout          # k = 8, 10, 12, 14
    python benchmarks/design_command.py --base ../old --rounds 5 12              # chosen radices

Each round runs ``python -m universal design --network torus:k=K,n=2 --json`` once from this
checkout and once from ``--base`` (which one goes first alternates from round to round), each
in a fresh process with its own checkout first on ``PYTHONPATH``, and reads the CPU time (user +
system, the forked LP solver included) from the children's resource usage. The machine is shared,
so the figure to read is the ratio within one run; the load average beside it says how busy the
machine was. The worst-case throughput and locality of both are printed too: the two checkouts
must agree on the optimum.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def run_once(tree: Path, k: int) -> tuple[float, float, dict]:
    """(CPU seconds, wall seconds, JSON answer) of one design command run from ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "universal", "design", "--network", f"torus:k={k},n=2", "--json"],
                         cwd=tree, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, json.loads(out.stdout)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("radix", nargs="*", type=int, default=[8, 10, 12, 14])
    parser.add_argument("--base", required=True, type=Path, help="the other checkout (its repository root)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    trees = {"this": HERE, "base": args.base.resolve()}
    print(f"cores (os.cpu_count): {os.cpu_count()}; this = {HERE}, base = {trees['base']}")
    print(f"{'k':>3} {'tree':>5} {'CPU s (each round)':>30} {'median':>7} {'ratio':>6} "
          f"{'worst case':>11} {'locality':>9} {'load avg':>9}")
    for k in args.radix:
        cpu = {name: [] for name in trees}
        last = {}
        loads = []
        for r in range(args.rounds):
            order = list(trees) if r % 2 == 0 else list(trees)[::-1]
            for name in order:
                seconds, _, answer = run_once(trees[name], k)
                cpu[name].append(seconds)
                last[name] = answer
                loads.append(os.getloadavg()[0])
        base = statistics.median(cpu["base"])
        for name in trees:
            med = statistics.median(cpu[name])
            each = " ".join(f"{c:.2f}" for c in cpu[name])
            print(f"{k:>3} {name:>5} {each:>30} {med:>7.2f} {med / base:>6.2f} "
                  f"{last[name]['throughput_worst']:>11.6f} {last[name]['locality']:>9.4f} "
                  f"{statistics.mean(loads):>9.2f}", flush=True)


if __name__ == "__main__":
    main()
