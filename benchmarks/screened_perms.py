"""CPU time of the screened worst case over M random permutations (issue 24, the GOAL paper's
worst of 1,000 random permutations; :mod:`universal.openloop.screen`) with the settings of the
``goal_vc_saturation`` scenario: the 8-ary 2-cube, bernoulli sources, 8-deep VCs, 6 of them,
tolerance 0.02, seed 0, and the permutations ``random-perms:M --seed 0`` draws (the scenario's
first 8 are the first 8 of any M).

Usage::

    python benchmarks/screened_perms.py --routing goal --perms 200
    python benchmarks/screened_perms.py --routing min-adaptive --perms 1000 --out minad.json

Prints the pilot's minimum (the worst of the first ``--pilot`` permutations, the scenario's 8),
each screening pass (rate, permutations run, unstable), the permutations searched in full with
their Θ, the screened minimum and the CPU time of this process (the machine may be shared:
CPU time, not wall clock, is the cost). One run at a time: it uses one core.
"""

from __future__ import annotations

import argparse
import json
import sys as _sys
import time
from pathlib import Path as _Path

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from universal.engine.creation import RunSpec  # noqa: E402
from universal.openloop.cells import permutation_traffic, prepare, search_measurement  # noqa: E402
from universal.openloop.screen import screened_minimum  # noqa: E402
from universal.openloop.study import OpenLoopStudy  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--routing", default="goal")
    ap.add_argument("--perms", type=int, default=200)
    ap.add_argument("--pilot", type=int, default=8)
    ap.add_argument("--candidates", type=int, default=8)
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--buffer", type=int, default=8)
    ap.add_argument("--vcs", type=int, default=6)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--out", help="write the result as JSON here")
    args = ap.parse_args()
    traffic = f"random-perms:{args.perms}"
    study = OpenLoopStudy(f"torus:k={args.k},n=2", [args.routing], [traffic], saturation=True, buffer=args.buffer,
                          vcs=args.vcs, tolerance=args.tolerance, injection="bernoulli")
    p = prepare(study)
    specs = [RunSpec(permutation_traffic(p, traffic, 0, i), p.routers[args.routing], p.injection, 1.0, seed=0,
                     priority="age") for i in range(args.perms)]
    done, start = [0], time.process_time()

    def progress(n: int) -> None:
        done[0] += n
        print(f"  {done[0]} runs, {time.process_time() - start:.0f} s CPU", file=_sys.stderr, flush=True)

    got = screened_minimum(specs, pilot=args.pilot, candidates=args.candidates, tolerance=args.tolerance,
                           buffer=args.buffer, vcs=args.vcs, measurement=search_measurement(study), progress=progress)
    cpu = time.process_time() - start
    scale = p.scale
    pilot = min(range(min(args.pilot, args.perms)), key=lambda i: got.searched[i].theta)
    print(f"{args.routing} on torus:k={args.k},n=2, b={args.buffer}, V={args.vcs}, tolerance {args.tolerance}, "
          f"{args.perms} random permutations (seed 0), screened")
    print(f"pilot: worst of the first {args.pilot}: {got.searched[pilot].theta / scale:.3f} (perm #{pilot})")
    for s in got.steps:
        print(f"screen at {s.rate / scale:.3f}: {s.tested} run, {s.unstable} unstable")
    print("searched in full: " + ", ".join(f"#{i} {sat.theta / scale:.3f}" for i, sat in sorted(got.searched.items())))
    print(f"screened worst: {got.theta / scale:.3f} (perm #{got.index} of {args.perms}); "
          f"{len(got.searched)} searched, {args.perms - len(got.searched)} cleared; {got.runs} runs; "
          f"{cpu:.0f} s CPU")
    if args.out:
        _Path(args.out).write_text(json.dumps({
            "routing": args.routing, "perms": args.perms, "tolerance": args.tolerance, "buffer": args.buffer,
            "vcs": args.vcs, "theta": got.theta / scale, "index": got.index, "runs": got.runs, "cpu_seconds": cpu,
            "searched": {i: s.theta / scale for i, s in sorted(got.searched.items())},
            "steps": [[s.rate / scale, s.tested, s.unstable] for s in got.steps]}, indent=1))


if __name__ == "__main__":
    main()
