"""Scale benchmark: ``route`` end to end on BF(16)-BF(20), and a sweep on Dask against ``--jobs``.

Usage::

    python benchmarks/scale.py                  # route on BF(16)..BF(20), then the sweep
    python benchmarks/scale.py --d 18 --no-sweep
    python benchmarks/scale.py --no-route       # only the sweep comparison

Part 1 runs ``python -m universal route --network butterfly:d=D --problem h-relation:h=4 --paths
valiant --protocols random-rank`` as a user would, one process per size, and reports its wall
time, CPU time (user + system) and peak resident memory, read from the child's resource usage
as ``/usr/bin/time -v`` does. On a shared machine the CPU time is the steadier figure.

Part 2 runs one sweep scenario (random and growing rank on Valiant 4-relations, BF(8)-BF(13),
two seeds) twice into fresh results files: with ``--jobs 2`` (a local process pool) and with
``--executor dask --jobs 2`` (a LocalCluster of two worker processes, started and stopped by the
command), and checks that both give the same rows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SWEEP = """description = "scale benchmark: random and growing rank on Valiant 4-relations"
network = "butterfly:d={d}"
problem = "h-relation:h=4"
paths = ["valiant"]
protocols = ["random-rank", "growing-rank"]
seeds = 2

[sweep]
d = [8, 9, 10, 11, 12, 13]
"""


def run_with_usage(argv: list[str]) -> tuple[float, float, float, int, str]:
    """(wall s, CPU s, peak RSS in GB, exit status, stderr) of ``python -m universal ARGV``.

    ``os.wait4`` gives the child's own resource usage, as ``/usr/bin/time -v`` reports it.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "universal", *argv], cwd=ROOT, env=env,
                                 stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        message = err.read()
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1e6, child.returncode, message


def route_sizes(sizes: list[int]) -> None:
    print(f"{'d':>3} {'packets':>10} {'wall s':>7} {'CPU s':>6} {'peak GB':>8}  status")
    for d in sizes:
        argv = ["route", "--network", f"butterfly:d={d}", "--problem", "h-relation:h=4", "--paths", "valiant",
                "--protocols", "random-rank"]
        wall, cpu, peak, status, err = run_with_usage(argv)
        note = "ok" if status == 0 else err.strip().splitlines()[-1]
        print(f"{d:>3} {4 << d:>10,} {wall:>7.1f} {cpu:>6.1f} {peak:>8.2f}  {note}", flush=True)


def rows_of(path: Path) -> list[dict]:
    """Every row of a results file without its timing field, cell by cell."""
    rows = []
    for line in path.read_text().splitlines()[1:]:
        cell = json.loads(line)
        for row in cell["rows"]:
            row.pop("seconds")
            rows.append({"cell": cell["cell"], **row})
    return rows


def sweep_comparison() -> None:
    with tempfile.TemporaryDirectory() as folder:
        scenario = Path(folder) / "scale_sweep.toml"
        scenario.write_text(SWEEP)
        results = {}
        for label, extra in (("--jobs 2", []), ("--executor dask --jobs 2", ["--executor", "dask"])):
            out = Path(folder) / f"{len(results)}.jsonl"
            wall, cpu, peak, status, err = run_with_usage(["scenario", str(scenario), "--json", "--jobs", "2",
                                                           "--out", str(out), *extra])
            if status != 0:
                print(f"{label}: failed: {err.strip()}")
                return
            results[label] = rows_of(out)
            print(f"sweep BF(8)-BF(13), 4 runs per cell, {label:<26} {wall:6.1f} s wall", flush=True)
        same = len({json.dumps(r, sort_keys=True) for r in results.values()}) == 1
        print(f"identical rows (timing aside): {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="*", default=[16, 17, 18, 19, 20])
    parser.add_argument("--no-route", action="store_true", help="skip the route timings")
    parser.add_argument("--no-sweep", action="store_true", help="skip the sweep comparison")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  python {sys.version.split()[0]}")
    if not args.no_route:
        route_sizes(args.d)
    if not args.no_sweep:
        sweep_comparison()


if __name__ == "__main__":
    main()
