"""Scale benchmark: ``route`` end to end on BF(16)-BF(20), its start-up on BF(10), and a sweep on
Dask against ``--jobs``.

Usage::

    python benchmarks/scale.py                  # route on BF(16)..BF(20), the start-up, the sweep
    python benchmarks/scale.py --d 18 --no-sweep --no-startup
    python benchmarks/scale.py --no-route --no-sweep --rounds 7    # only the start-up
    python benchmarks/scale.py --d 20 --against ../main --rounds 3 --no-sweep --no-startup

Part 1 runs ``python -m universal route --network butterfly:d=D --problem h-relation:h=4 --paths
valiant --protocols random-rank`` as a user would, one process per size, and reports its wall
time, CPU time (user + system) and peak resident memory, read from the child's resource usage
as ``/usr/bin/time -v`` does (user and system time apart, and the load average before the run).
On a shared machine the CPU time is the steadier figure. With ``--against CHECKOUT`` every size
runs ``--rounds`` times alternated with the same command on another checkout of the project
(a worktree of main, say; one untimed run of each first, so that numba's cache is filled), and
the ratio of the best CPU times, this checkout / the other, closes each size.

Part 3 compares the start-up of a small command with Python's own: ``route`` on BF(10) (the
same command) against a bare ``python -c "import numpy, rich"``, alternating the two for
``--rounds`` rounds, and reports the best CPU and wall time of each and their ratio (issue 25
asks for at most 2).

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


def run_with_usage(argv: list[str], python: list[str] | None = None,
                   root: Path = ROOT) -> tuple[float, float, float, int, str, float]:
    """(wall s, CPU s, peak RSS in GB, exit status, stderr, system CPU s) of ``python -m universal
    ARGV`` (or of ``python PYTHON``), the package imported from the checkout ``root``.

    ``os.wait4`` gives the child's own resource usage, as ``/usr/bin/time -v`` reports it.
    """
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, *(python if python is not None else ["-m", "universal", *argv])]
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        message = err.read()
    return (wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1e6, child.returncode, message,
            usage.ru_stime)


def route_argv(d: int) -> list[str]:
    return ["route", "--network", f"butterfly:d={d}", "--problem", "h-relation:h=4", "--paths", "valiant",
            "--protocols", "random-rank"]


def route_sizes(sizes: list[int]) -> None:
    print(f"{'d':>3} {'packets':>10} {'wall s':>7} {'CPU s':>6} {'user s':>6} {'sys s':>6} {'peak GB':>8} "
          f"{'load':>5}  status")
    for d in sizes:
        load = os.getloadavg()[0]
        wall, cpu, peak, status, err, system = run_with_usage(route_argv(d))
        note = "ok" if status == 0 else err.strip().splitlines()[-1]
        print(f"{d:>3} {4 << d:>10,} {wall:>7.1f} {cpu:>6.1f} {cpu - system:>6.1f} {system:>6.1f} {peak:>8.2f} "
              f"{load:>5.1f}  {note}", flush=True)


def route_against(sizes: list[int], other: Path, rounds: int) -> None:
    """``route`` on every size, this checkout and ``other`` alternated for ``rounds`` rounds."""
    for label, root in (("this", ROOT), ("other", other)):    # fill numba's cache, untimed
        run_with_usage(route_argv(min(sizes)), root=root)
    print(f"this: {ROOT}  other: {other.resolve()}")
    print(f"{'d':>3} {'run':>6} {'wall s':>7} {'CPU s':>6} {'user s':>6} {'sys s':>6} {'peak GB':>8} {'load':>5}  status")
    for d in sizes:
        best = {"this": float("inf"), "other": float("inf")}
        for _ in range(rounds):
            for label, root in (("this", ROOT), ("other", other)):
                load = os.getloadavg()[0]
                wall, cpu, peak, status, err, system = run_with_usage(route_argv(d), root=root)
                note = "ok" if status == 0 else err.strip().splitlines()[-1]
                best[label] = min(best[label], cpu)
                print(f"{d:>3} {label:>6} {wall:>7.1f} {cpu:>6.1f} {cpu - system:>6.1f} {system:>6.1f} {peak:>8.2f} "
                      f"{load:>5.1f}  {note}", flush=True)
        print(f"{d:>3} best CPU this / other: {best['this']:.1f} / {best['other']:.1f} s = "
              f"{best['this'] / best['other']:.2f}", flush=True)


def startup(rounds: int, d: int = 10) -> None:
    """Best CPU and wall time of ``route`` on BF(d) and of a bare ``import numpy, rich``, alternated."""
    bare = ["-c", "import numpy, rich"]
    best = {"route": [float("inf")] * 2, "bare": [float("inf")] * 2}
    load = os.getloadavg()[0]
    for _ in range(rounds):
        for label in best:
            wall, cpu, _, status, err, _ = run_with_usage(route_argv(d), bare if label == "bare" else None)
            if status != 0:
                print(f"{label}: failed: {err.strip()}")
                return
            best[label] = [min(best[label][0], cpu), min(best[label][1], wall)]
    (route_cpu, route_wall), (bare_cpu, bare_wall) = best["route"], best["bare"]
    print(f"start-up, best of {rounds} alternated rounds (load average {load:.1f} before):")
    print(f"  route BF({d}) end to end        CPU {route_cpu:5.2f} s  wall {route_wall:5.2f} s")
    print(f"  python -c 'import numpy, rich' CPU {bare_cpu:5.2f} s  wall {bare_wall:5.2f} s")
    print(f"  ratio                          CPU {route_cpu / bare_cpu:5.2f}    wall {route_wall / bare_wall:5.2f}",
          flush=True)


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
            wall, cpu, peak, status, err, _ = run_with_usage(["scenario", str(scenario), "--json", "--jobs", "2",
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
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up comparison")
    parser.add_argument("--rounds", type=int, default=5,
                        help="alternated rounds of the start-up comparison (and of --against)")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="alternate every route with the same command on this other checkout")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  python {sys.version.split()[0]}")
    if args.against is not None and not (args.against / "universal" / "__init__.py").exists():
        print(f"error: {args.against} is not a checkout of the project (no universal/__init__.py)", file=sys.stderr)
        raise SystemExit(2)
    if not args.no_route:
        if args.against is not None:
            route_against(args.d, args.against, args.rounds)
        else:
            route_sizes(args.d)
    if not args.no_startup:
        startup(args.rounds)
    if not args.no_sweep:
        sweep_comparison()


if __name__ == "__main__":
    main()
