"""Where a saturation study's time and memory go, round by round (issue 25).

Runs the searches of an open-loop scenario (default ``goal_saturation``) in its groups of
:data:`universal.openloop.cells.SEARCH_GROUP`, in this one process, and times each batch of
the engine split into its phases: the packets' draws, the compiled kernel's steps, and the
measurement bookkeeping between chunks (:meth:`universal.engine.runs._Batch._advance_phases`).
Per batch it prints the runs by status, the steps they ran, the packet-steps the kernel
visited (the sum over steps of the waiting packets: a step's pass costs that) and the largest
number of packets waiting at once. CPU time (``time.process_time``), not wall-clock time: the
machine is shared.

    python benchmarks/saturation_profile.py                    # every search of goal_saturation
    python benchmarks/saturation_profile.py --routing goal ugal --traffic uniform
    python benchmarks/saturation_profile.py --check-window      # and re-run the runs stopped in their window

``--check-window`` runs every run that the backlog limit stopped in its window again with its
full window (``Measurement(stop_in_window=False)``, the same seed) and prints the verdicts the
two give.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections import Counter

import numpy as np


class Tally:
    """CPU seconds and counts by phase, reset per batch."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.t = Counter()
        self.visits = 0
        self.peak_waiting = 0


TALLY = Tally()


def _timed(name: str, fn, waiting_arg: int | None = None):
    def wrapper(*args, **kwargs):
        t0 = time.process_time()
        out = fn(*args, **kwargs)
        TALLY.t[name] += time.process_time() - t0
        return out
    wrapper.__wrapped__ = fn
    return wrapper


def instrument() -> None:
    """Wrap the kernels, the draws and the phase bookkeeping with timers."""
    from universal.engine import compiled_adaptive, compiled_openloop, runs

    for mod in (compiled_openloop, compiled_adaptive):
        kernel = mod._chunk

        def chunk(*args, _kernel=kernel, _mod=mod):
            t0 = time.process_time()
            out = _kernel(*args)
            TALLY.t["kernel"] += time.process_time() - t0
            # the backlog after every step of the chunk (history is CHUNK x runs): visits ~ its sum
            history = args[-4] if _mod is compiled_openloop else args[-3]
            TALLY.visits += int(np.asarray(history, dtype=np.int64).sum())
            n_live = out[0] if _mod is compiled_openloop else out[1]
            TALLY.peak_waiting = max(TALLY.peak_waiting, int(n_live))
            return out
        mod._chunk = chunk
    compiled_openloop.draw_chunk_fast = _timed("draw", compiled_openloop.draw_chunk_fast)
    compiled_openloop.draw_chunk = _timed("draw", compiled_openloop.draw_chunk)
    compiled_adaptive.draw_chunk = _timed("draw", compiled_adaptive.draw_chunk)
    runs._Batch._advance_phases = _timed("phases", runs._Batch._advance_phases)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="goal_saturation")
    ap.add_argument("--routing", nargs="*", help="only these routings")
    ap.add_argument("--traffic", nargs="*", help="only these traffics")
    ap.add_argument("--groups", nargs="*", type=int, help="only these groups (0, 1, ...)")
    ap.add_argument("--check-window", action="store_true",
                    help="re-run the runs stopped in their window with the full window")
    args = ap.parse_args(argv)

    from universal.engine.measure import Measurement
    from universal.openloop import saturation
    from universal.openloop.cells import SEARCH_GROUP, prepare, study_cells
    from universal.engine.creation import RunSpec
    from universal.scenario import load_scenario

    instrument()
    study = load_scenario(args.scenario).openloop
    p = prepare(study)
    try:                # the searches' start and measurement (absent before issue 25's change)
        from universal.openloop.cells import _search_start, search_measurement
        measurement = search_measurement(study)
    except ImportError:
        _search_start = None
        measurement = Measurement(window=study.window, latency_limit=500, drain=False, overload="stop")
    cells = [c for c in study_cells(study)
             if (not args.routing or c["routing"] in args.routing) and (not args.traffic or c["traffic"] in args.traffic)]
    in_order = sorted(cells, key=lambda c: p.routers[c["routing"]].adaptive)
    groups = [in_order[i:i + SEARCH_GROUP] for i in range(0, len(in_order), SEARCH_GROUP)]
    real_simulate = saturation.simulate_batch
    round_no = Counter()
    stopped = []            # (spec, result) of the runs the backlog limit stopped in their window

    def simulate_batch(specs, **kwargs):
        TALLY.reset()
        t0 = time.process_time()
        out = real_simulate(specs, **kwargs)
        cpu = time.process_time() - t0
        stopped.extend((s, r) for s, r in zip(specs, out) if r.status == "backlog-limit" and r.warmup > 0)
        key = id(specs[0].router) if specs else 0
        round_no["n"] += 1
        status = Counter(r.status for r in out)
        steps = sum(r.steps for r in out)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  batch {round_no['n']:3d}  runs {len(out):3d}  cpu {cpu:6.2f}  draw {TALLY.t['draw']:5.2f}  "
              f"kernel {TALLY.t['kernel']:6.2f}  phases {TALLY.t['phases']:5.2f}  steps {steps:8,d}  "
              f"visits {TALLY.visits / 1e6:8.1f}M  peak-wait {TALLY.peak_waiting / 1e6:5.2f}M  rss {rss:6.0f}MB  "
              + " ".join(f"{k}:{v}" for k, v in sorted(status.items())), flush=True)
        return out

    saturation.simulate_batch = simulate_batch
    total = time.process_time()
    for g, group in enumerate(groups):
        if args.groups and g not in args.groups:
            continue
        print(f"group {g}: " + ", ".join(f"{c['routing']}/{c['traffic']}" for c in group), flush=True)
        t0 = time.process_time()
        specs = [RunSpec(p.traffics[c["traffic"]], p.routers[c["routing"]], p.injection, 1.0 * p.scale,
                         seed=c["seed"], priority=c["priority"]) for c in group]
        sats = saturation.find_saturations(
            specs, tolerance=study.tolerance, bandwidth=study.bandwidth, buffer=study.buffer, vcs=study.vcs,
            source_queue=study.source_queue,
            measurement=measurement,
            **({"starts": [_search_start(study, p, c) for c in group]} if _search_start else {}))
        for c, s in zip(group, sats):
            print(f"    {c['routing']:>12s} {c['traffic']:>10s}  theta {s.theta / p.scale:.4f}  runs {len(s.runs)}")
        print(f"  group {g} cpu {time.process_time() - t0:.1f} s", flush=True)
    if args.check_window:
        check_window(stopped, study, real_simulate)
    print(f"total cpu {time.process_time() - total:.1f} s, peak rss "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB", file=sys.stderr)


def check_window(stopped: list, study, simulate) -> None:
    """Run the runs stopped in their window again with the full window; print both verdicts."""
    from dataclasses import replace

    from universal.engine.measure import Measurement

    full = Measurement(window=study.window, latency_limit=500, drain=False, overload="stop", stop_in_window=False)
    print(f"{len(stopped)} runs stopped in their window; again with the full window:")
    agree = 0
    for i in range(0, len(stopped), 64):
        part = stopped[i:i + 64]
        again = simulate([s for s, _ in part], bandwidth=study.bandwidth, buffer=study.buffer, vcs=study.vcs,
                         source_queue=study.source_queue, measurement=full)
        for (s, r), f in zip(part, again):
            agree += not f.stable
            print(f"  {s.router.name:>12s} {s.traffic.name:>10s} rate {s.rate:.4f}  stopped at step {r.steps:6d}  full run: {f.status:>13s} "
                  f"after {f.steps:6d} steps, slope {f.slope:.3g}")
    print(f"  the full run is unstable for {agree} of {len(stopped)}")


if __name__ == "__main__":
    main()
