"""Open-loop benchmark: simulated link-hops per second on the 8-ary 2-cube, DOR, uniform traffic
(the setting of BookSim2's measured 0.54 million link-hops per second), on the numpy engine and
on the compiled kernel.

Usage::

    python benchmarks/openloop.py                  # offered 0.3 and 0.9, batches of 1, 64 and 256 runs
    python benchmarks/openloop.py --batch 1 --loads 0.3 --window 100000     # one long run
    python benchmarks/openloop.py --engines compiled --batch 64 --window 10000
    python benchmarks/openloop.py --routing goal --loads 0.3 0.55 --batch 1 64   # adaptive routing
    python benchmarks/openloop.py --split --batch 64 256       # where a compiled batch's CPU time goes

A *link-hop* is one packet crossing one link. Each case runs a batch of independent runs (one
seed each) through warm-up, a ``--window``-step measurement window (1000 by default) and the
drain, all in one array state of :mod:`universal.engine.runs`; the time covers everything from
setting up the batch (creating the packets and drawing their paths included) to the results.
Each case runs ``--repeat`` times per engine, the engines alternating so that both see the same
machine load, and the repetition with the least CPU time is reported, its wall-clock time
beside it. ``numpy`` is the one engine's numpy step loop; ``compiled`` the numba kernel of
:mod:`universal.engine.compiled_openloop` (adaptive routings: :mod:`universal.engine.compiled_adaptive`), loaded once before the timings (the load, about half
a second of CPU time once per process, is printed on its own). Everything runs on one core.

The rate and the ratio to BookSim2 are per second of **CPU time** (``time.process_time``): on a
shared machine the wall clock also counts the time other processes hold the core, which would
lower the ratio without the engine doing any less. BookSim2's 0.54 million link-hops per CPU
second was measured on this kind of machine in the same setting (issue 25; issue 13 gave 0.57
million); BookSim2 is a single-threaded process, so that figure is one core's work, as the
CPU-time rate here is. The load average is printed before and after.

BookSim is cycle-accurate, with flits, virtual channels and router pipelines; this model is
store-and-forward with whole packets, one per link per step, so a link-hop here is much less
work than a flit-hop there: the comparison says how long a study takes, not which simulator
is more efficient at the same thing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from universal.networks import build_network  # noqa: E402
from universal.openloop import Measurement, RunSpec, build_injection, build_router, offered_traffic  # noqa: E402
from universal.engine import runs  # noqa: E402
from universal.engine.runs import _Batch  # noqa: E402

#: BookSim2's link-hops per CPU second, 8-ary 2-cube, DOR, uniform, measured on this kind of machine.
BOOKSIM = 0.54e6
ENGINES = {"numpy": False, "compiled": True}


def _specs(load: float, batch: int, first_seed: int = 0, routing: str = "dor") -> list[RunSpec]:
    net = build_network("torus:k=8,n=2")
    traffic, router, inj = offered_traffic(net, "uniform"), build_router(routing, net), build_injection("bernoulli")
    return [RunSpec(traffic, router, inj, load, seed=s) for s in range(first_seed, first_seed + batch)]


def run_once(engine: str, load: float, batch: int, window: int, routing: str = "dor") -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, link-hops) of one batch of ``batch`` seeds on ``engine``."""
    runs.COMPILED = ENGINES[engine]
    try:
        start, cpu = time.perf_counter(), time.process_time()
        b = _Batch(_specs(load, batch, routing=routing), 1, None, Measurement(window=window))
        b.run()
        return time.perf_counter() - start, time.process_time() - cpu, b.link_hops
    finally:
        runs.COMPILED = None


#: The parts of a compiled batch that ``--split`` times: (label, module, attribute) of what is wrapped.
PARTS = [("draws", "universal.engine.compiled_batch_draws", "BatchDraws.draw"),
         ("draws", "universal.engine.compiled_openloop", "draw_chunk_fast"),
         ("draws", "universal.engine.compiled_openloop", "_gather"),
         ("draws", "universal.engine.compiled_adaptive", "draw_chunk"),
         ("draws", "universal.engine.compiled_adaptive", "_gather"),
         ("kernel", "universal.engine.compiled_openloop", "_chunk"),
         ("kernel", "universal.engine.compiled_openloop", "chunk_by_run"),
         ("kernel", "universal.engine.compiled_adaptive", "_chunk"),
         ("records growth", "universal.engine.compiled_openloop", "_Slots.record_room"),
         ("hand-over", "universal.engine.compiled_openloop", "hand_over"),
         ("phases", "universal.engine.runs", "_Batch._advance_phases")]


def split_once(load: float, batch: int, window: int, routing: str = "dor") -> tuple[dict, float, int]:
    """CPU seconds of one compiled batch by part (:data:`PARTS`; "rest": Python between them), its
    total and its link-hops. Each part's function is wrapped by a timer for the run."""
    import importlib

    spent: dict = {}
    undo = []
    for label, module, name in PARTS:
        owner = importlib.import_module(module)
        *path, attr = name.split(".")
        for part in path:
            owner = getattr(owner, part)
        inner = getattr(owner, attr)

        def timed(*args, _inner=inner, _label=label, **kwargs):
            start = time.process_time()
            try:
                return _inner(*args, **kwargs)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.process_time() - start
        setattr(owner, attr, timed)
        undo.append((owner, attr, inner))
    try:
        _, cpu, hops = run_once("compiled", load, batch, window, routing)
    finally:
        for owner, attr, inner in reversed(undo):
            setattr(owner, attr, inner)
    spent["rest"] = cpu - sum(spent.values())
    return spent, cpu, hops


def print_split(args) -> None:
    """``--split``: ns per link-hop of every part of a compiled batch (the repetition with the least CPU time)."""
    labels = list(dict.fromkeys(label for label, _, _ in PARTS)) + ["rest"]
    print(f"{'offered':>8} {'runs':>5} {'M hops/CPU s':>13} " + " ".join(f"{x:>14}" for x in labels))
    print(f"{'':>8} {'':>5} {'':>13} " + " ".join(f"{'ns/link-hop':>14}" for _ in labels))
    for load in args.loads:
        for batch in args.batch:
            spent, cpu, hops = min((split_once(load, batch, args.window, args.routing) for _ in range(args.repeat)),
                                   key=lambda x: x[1])
            print(f"{load:8.2f} {batch:5d} {hops / cpu / 1e6:13.2f} "
                  + " ".join(f"{spent.get(x, 0.0) / hops * 1e9:14.2f}" for x in labels))


def load_kernel(routing: str = "dor") -> float:
    """CPU seconds to import numba and load the compiled kernels (one small run)."""
    cpu = time.process_time()
    runs.COMPILED = True
    try:
        _Batch(_specs(0.3, 1, 10**6, routing), 1, None, Measurement(window=100)).run()
    finally:
        runs.COMPILED = None
    return time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=float, nargs="+", default=[0.3, 0.9])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 64, 256])
    parser.add_argument("--window", type=int, default=1000, help="measurement window in steps (default 1000)")
    parser.add_argument("--engines", nargs="+", choices=list(ENGINES), default=list(ENGINES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--routing", default="dor", help="dor (default) or another routing of the 8-ary 2-cube: "
                        "min-adaptive, goal and ugal run on the compiled adaptive kernel")
    parser.add_argument("--split", action="store_true", help="the compiled engine's CPU time per link-hop by part: "
                        "drawing the packets and paths, the step kernel, growing its record block, handing the "
                        "records over and the results, the measurement phases, the rest")
    args = parser.parse_args()
    if args.split:
        args.engines = ["compiled"]
    if "compiled" in args.engines and importlib.util.find_spec("numba") is None:
        print("error: numba is not installed: the compiled engine cannot run (use --engines numpy)")
        raise SystemExit(2)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (one used), load average "
          f"{os.getloadavg()[0]:.1f}; 8-ary 2-cube, {args.routing}, uniform, bernoulli, age priority, unbounded buffers, "
          f"{args.window}-step window")
    if "compiled" in args.engines:
        print(f"loading the compiled kernels (numba import + cached machine code): {load_kernel(args.routing):.2f} CPU s, once")
    if args.split:
        print_split(args)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        return
    print(f"{'engine':>9} {'offered':>8} {'runs':>5} {'link-hops':>12} {'CPU s':>7} {'wall s':>7} "
          f"{'M hops/CPU s':>13} {'M hops/wall s':>14} {'x BookSim2':>11}")
    for load in args.loads:
        for batch in args.batch:
            best: dict = {}
            for _ in range(args.repeat):
                for engine in args.engines:         # alternating: both see the same load
                    took, cpu, hops = run_once(engine, load, batch, args.window, args.routing)
                    if engine not in best or cpu < best[engine][1]:
                        best[engine] = (took, cpu, hops)
            for engine in args.engines:
                took, cpu, hops = best[engine]
                rate = hops / cpu
                print(f"{engine:>9} {load:8.2f} {batch:5d} {hops:12,d} {cpu:7.2f} {took:7.2f} {rate / 1e6:13.2f} "
                      f"{hops / took / 1e6:14.2f} {rate / BOOKSIM:11.1f}")
            if len(best) == 2:
                print(f"{'':>9} compiled / numpy, CPU time: {best['numpy'][1] / best['compiled'][1]:.1f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}; x BookSim2: link-hops per CPU second over BookSim2's "
          f"{BOOKSIM / 1e6:.2f} million (one core, measured on this kind of machine)")


if __name__ == "__main__":
    main()
