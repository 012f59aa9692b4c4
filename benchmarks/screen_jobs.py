"""What ``--jobs`` saves inside one screened worst case (:mod:`universal.openloop.screen`): one
screening pass of n runs in this process against the same pass cut in two for two worker
processes (:func:`universal.workers.run_in_processes`), on the ``goal_vc_saturation`` settings
(GOAL on the 8-ary 2-cube, bernoulli, 8-deep VCs, 6 of them), at the rate of GOAL's first
screening pass (0.600 of capacity, where most runs are stable and last one window).

Usage::

    python benchmarks/screen_jobs.py                 # n = 2, 4, 8, 16, 32
    python benchmarks/screen_jobs.py --runs 4 16
    python benchmarks/screen_jobs.py --cell 100 --k 4   # one whole screened cell, jobs 1 and 2

Prints, per n, the wall time in one process and with two workers, their ratio, and the CPU time
of the parent and its workers; then the cost of starting two workers for nothing (a fork each and
the specs built again there). Identical verdicts are checked on the way. The machine may be
shared: the load average is printed, and only ratios within one run mean anything.

``--cell M`` runs one screened worst case of M permutations (:func:`screened_minimum`) with
``jobs`` 1 and 2, checks that they agree in everything, and prints wall and CPU time of each and,
for two workers, the *critical path*: the parent's own CPU time plus, for every split pass or
group of searches, the CPU time of its slowest worker. That is the wall time two idle cores
would take, which a loaded machine's wall clock does not show.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys as _sys
import time
from functools import partial
from pathlib import Path as _Path

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from universal.openloop.cells import prepare, screen_specs, search_measurement, study_cells  # noqa: E402
from universal.openloop import screen  # noqa: E402
from universal.openloop.screen import _in_workers, _screen_part, _screen_runs, screened_minimum  # noqa: E402
from universal.openloop.study import OpenLoopStudy  # noqa: E402

#: Per split pass or search group: the CPU time of its slowest worker (``--cell``).
SLOWEST: list[float] = []


def _timed(function, *args):
    """``function(*args)`` in a worker, with the worker's CPU time for it."""
    start = time.process_time()
    part, values = function(*args)
    return part, (values, time.process_time() - start)


def _in_workers_timed(function, tasks, jobs, progress=None):
    """:func:`universal.openloop.screen._in_workers`, recording its slowest worker's CPU time."""
    from universal.workers import run_in_processes

    got, cpus = {}, []
    for part, (values, cpu) in run_in_processes(_timed, [(function, *task) for task in tasks], jobs):
        got[part] = values
        cpus.append(cpu)
    SLOWEST.append(max(cpus))
    return [got[j] for j in range(len(tasks))]


def _summary(got) -> tuple:
    return (got.theta, got.index, got.runs, got.cleared.tolist(), [(s.rate, s.tested, s.unstable) for s in got.steps],
            {i: (s.theta, s.upper, s.limited, [(r.rate, r.stable) for r in s.runs]) for i, s in got.searched.items()})


def cell(perms: int, k: int) -> None:
    """One screened cell with jobs 1 and 2 (see the module docstring)."""
    study = OpenLoopStudy(f"torus:k={k},n=2", ["goal"], [], saturation=True, worst_case=True, random_perms=perms,
                          screen_perms=True, buffer=8, vcs=6, tolerance=0.02)
    c, = study_cells(study)
    p = prepare(study)
    specs = screen_specs(study, c)
    options = dict(pilot=min(8, max(1, perms // 8)), tolerance=0.02, buffer=8, vcs=6,
                   measurement=search_measurement(study), source=partial(screen_specs, study, c))
    print(f"goal on torus:k={k},n=2, b=8, V=6, tolerance 0.02, {perms} random permutations (seed 0), screened; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    results = {}
    for jobs in (1, 2):
        screen._in_workers = _in_workers_timed
        SLOWEST.clear()
        t, c0, own = time.perf_counter(), _cpu(), time.process_time()
        got = screened_minimum(specs, jobs=jobs, **options)
        wall, cpu, own = time.perf_counter() - t, _cpu() - c0, time.process_time() - own
        results[jobs] = _summary(got)
        path = f", critical path {own + sum(SLOWEST):.1f} s ({len(SLOWEST)} split)" if jobs > 1 else ""
        print(f"jobs {jobs}: {wall:.1f} s wall, {cpu:.1f} s CPU{path}; Θ {got.theta / p.scale:.3f} "
              f"(#{got.index}), {len(got.searched)} searched, {got.runs} runs, passes "
              f"{[(round(s.rate / p.scale, 3), s.tested, s.unstable) for s in got.steps]}; "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
    print("identical:", results[1] == results[2])


def _cpu() -> float:
    """CPU time of this process and its reaped workers."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    ap.add_argument("--rate", type=float, default=0.600, help="screening rate, fraction of capacity")
    ap.add_argument("--cell", type=int, metavar="M", help="one whole screened cell of M permutations instead")
    ap.add_argument("--k", type=int, default=8, help="with --cell: the k-ary 2-cube (default 8)")
    args = ap.parse_args()
    if args.cell:
        cell(args.cell, args.k)
        return
    study = OpenLoopStudy("torus:k=8,n=2", ["goal"], [], saturation=True, worst_case=True,
                          random_perms=max(args.runs), screen_perms=True, buffer=8, vcs=6, tolerance=0.02)
    one, = study_cells(study)
    p = prepare(study)
    specs = screen_specs(study, one)
    options = dict(bandwidth=1, buffer=8, measurement=search_measurement(study), vcs=6, source_queue="all",
                   vc_buffer="set")
    batch = max(1, min(64, 4096 // p.network.num_nodes))
    source = partial(screen_specs, study, one)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; goal, torus:k=8,n=2, b=8, V=6, "
          f"one screening pass at {args.rate:.3f}")
    print(f"{'runs':>5} {'1 process s':>12} {'2 workers s':>12} {'ratio':>6} {'CPU 1 s':>8} {'CPU 2 s':>8}")
    for n in args.runs:
        idx, rates, ks = list(range(n)), [args.rate * p.scale] * n, [0] * n
        t, c = time.perf_counter(), _cpu()
        one = _screen_runs(specs, idx, rates, ks, options, batch)
        wall1, cpu1 = time.perf_counter() - t, _cpu() - c
        half = n // 2
        tasks = [(source, 0, idx[:half], rates[:half], ks[:half], options, batch),
                 (source, 1, idx[half:], rates[half:], ks[half:], options, batch)]
        t, c = time.perf_counter(), _cpu()
        two = [v for got in _in_workers(_screen_part, tasks, 2) for v in got]
        wall2, cpu2 = time.perf_counter() - t, _cpu() - c
        assert one == two, "two workers gave other verdicts"
        print(f"{n:>5} {wall1:>12.2f} {wall2:>12.2f} {wall1 / wall2:>6.2f} {cpu1:>8.2f} {cpu2:>8.2f}", flush=True)
    empty = [(source, j, [], [], [], options, batch) for j in range(2)]
    t, c = time.perf_counter(), _cpu()
    _in_workers(_screen_part, empty, 2)
    print(f"two workers for nothing: {time.perf_counter() - t:.3f} s wall, {_cpu() - c:.3f} s CPU; "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
