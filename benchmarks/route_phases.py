"""Where ``route`` spends its CPU time and memory, phase by phase, on one run of the real command.

Usage::

    python benchmarks/route_phases.py                 # BF(20), Valiant 4-relation, random rank
    python benchmarks/route_phases.py --d 18

The command ``route --network butterfly:d=D --problem h-relation:h=4 --paths valiant --protocols
random-rank`` runs in this process through the command-line entry point; the functions that make
up its phases are wrapped so that each reports the user and system CPU time it took
(``resource.getrusage``, the figures ``/usr/bin/time -v`` adds up), the minor page faults (fresh
memory handed to the process) and the peak resident memory when it ended. Nested phases are
indented and included in their parent's figures; "imports and start-up" is everything before the
command runs, "rest" what no phase covers (argument parsing, reporting). The machine is shared, so
compare runs made close together.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import io
import resource
import sys
import time
from contextlib import redirect_stdout

START = resource.getrusage(resource.RUSAGE_SELF)
START_WALL = time.perf_counter()

#: (module, function, label, depth): the phases, outer ones first.
PHASES = [
    ("universal.experiment", "build_problem", "problem (h-relation)", 0),
    ("universal.paths.systems", "valiant_butterfly_paths", "valiant paths", 0),
    ("universal.paths.systems", "_fill_compiled", "fill the path array", 1),
    ("universal.paths.systems", "_row_passes", "rows kept", 1),
    ("universal.paths.systems", "_count_level_loads", "count C from the rows", 1),
    ("universal.engine.batch", "simulate", "engine run", 0),
    ("universal.engine.compiled_levels", "_packet_words", "packet words (paths)", 1),
    ("universal.engine.compiled_levels", "_row_words", "packet words (rows)", 1),
    ("universal.engine.compiled_levels", "_run_rows", "step loop", 1),
    ("universal.experiment", "make_row", "row", 0),
]

records: list[tuple[str, int, float, float, int, float]] = []


def usage() -> tuple[float, float, int, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime, r.ru_minflt, r.ru_maxrss / 1e6


def wrap(module, name: str, label: str, depth: int) -> None:
    function = getattr(module, name)

    @functools.wraps(function)
    def timed(*args, **kwargs):
        user, system, faults, _ = usage()
        index = len(records)
        records.append((label, depth, 0.0, 0.0, 0, 0.0))
        try:
            return function(*args, **kwargs)
        finally:
            u, s, f, peak = usage()
            records[index] = (label, depth, u - user, s - system, f - faults, peak)

    setattr(module, name, timed)
    from universal.engine import ENGINES        # the experiment looks its engine up here
    for key, engine in list(ENGINES.items()):
        if engine is function:
            ENGINES[key] = timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=20)
    args = parser.parse_args()
    from universal.cli import main as cli_main
    for module_name, name, label, depth in PHASES:
        module = importlib.import_module(module_name)
        wrap(module, name, label, depth)
    user, system, faults, peak = usage()
    records.insert(0, ("imports and start-up", 0, user - START.ru_utime, system - START.ru_stime,
                       faults - START.ru_minflt, peak))
    argv = ["route", "--network", f"butterfly:d={args.d}", "--problem", "h-relation:h=4", "--paths", "valiant",
            "--protocols", "random-rank"]
    out = io.StringIO()
    with redirect_stdout(out):
        status = cli_main(argv)
    total_user, total_system, total_faults, peak = usage()
    wall = time.perf_counter() - START_WALL
    print(out.getvalue())
    print(f"exit status {status}; phases of BF({args.d}), CPU seconds (user, system), minor page faults, "
          f"peak RSS when the phase ended")
    print(f"{'phase':<28} {'user s':>7} {'sys s':>6} {'faults':>8} {'peak GB':>8}")
    covered_user = covered_system = covered_faults = 0.0
    for label, depth, u, s, f, p in records:
        print(f"{'  ' * depth + label:<28} {u:>7.2f} {s:>6.2f} {f:>8,} {p:>8.2f}")
        if depth == 0:
            covered_user, covered_system, covered_faults = covered_user + u, covered_system + s, covered_faults + f
    total_user -= START.ru_utime
    total_system -= START.ru_stime
    total_faults -= START.ru_minflt
    print(f"{'rest':<28} {total_user - covered_user:>7.2f} {total_system - covered_system:>6.2f} "
          f"{int(total_faults - covered_faults):>8,}")
    print(f"{'total':<28} {total_user:>7.2f} {total_system:>6.2f} {int(total_faults):>8,} {peak:>8.2f}"
          f"   wall {wall:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
