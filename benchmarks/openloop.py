"""Open-loop benchmark: simulated link-hops per second on the 8-ary 2-cube, DOR, uniform traffic
(the setting of BookSim2's measured 0.57 million link-hops per second).

Usage::

    python benchmarks/openloop.py                  # offered 0.3 and 0.9 of capacity, batches of 1, 64 and 256 runs
    python benchmarks/openloop.py --batch 1 16 128 --loads 0.3

A *link-hop* is one packet crossing one link. Each case runs a batch of independent runs (one
seed each) through warm-up, a 1000-step measurement window and the drain, all in one array
state of :mod:`universal.engine.runs`; the time covers everything from setting up the batch
(creating the packets and drawing their paths included). Each case runs ``--repeat`` times and
the repetition with the least CPU time is reported, its wall-clock time beside it. numpy runs
this on one core.

The rate and the ratio to BookSim2 are per second of **CPU time** (``time.process_time``): on a
shared machine the wall clock also counts the time other processes hold the core (with a load
average of 2 on 2 cores, about half), which would halve the ratio without the engine doing any
less. BookSim2's 0.57 million link-hops per second is the figure this project was given for
the same setting (issue 13); BookSim2 is a single-threaded process, so that figure is one
core's work, as the CPU-time rate here is. The wall-clock rate is printed too, with the load
average before and after.

BookSim is cycle-accurate, with flits, virtual channels and router pipelines; this model is
store-and-forward with whole packets, one per link per step, so a link-hop here is much less
work than a flit-hop there: the comparison says how long a study takes, not which simulator
is more efficient at the same thing.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from universal.networks import build_network  # noqa: E402
from universal.openloop import Measurement, RunSpec, build_injection, build_router, offered_traffic  # noqa: E402
from universal.engine.runs import _Batch  # noqa: E402

BOOKSIM = 0.57e6


def run_case(load: float, batch: int, repeat: int) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, link-hops) of the repetition with the least CPU time, over
    ``repeat`` runs of a batch of ``batch`` seeds."""
    net = build_network("torus:k=8,n=2")
    traffic, router, inj = offered_traffic(net, "uniform"), build_router("dor", net), build_injection("bernoulli")
    best = None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        specs = [RunSpec(traffic, router, inj, load, seed=s) for s in range(batch)]
        engine = _Batch(specs, 1, None, Measurement(window=1000))
        engine.run()
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
        if best is None or cpu < best[1]:
            best = (took, cpu, engine.link_hops)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=float, nargs="+", default=[0.3, 0.9])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 64, 256])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (numpy uses one here), "
          f"load average {os.getloadavg()[0]:.1f}; 8-ary 2-cube, DOR, uniform, bernoulli, age priority, "
          "unbounded buffers")
    print(f"{'offered':>8} {'runs':>5} {'link-hops':>12} {'CPU s':>7} {'wall s':>7} {'M hops/CPU s':>13} "
          f"{'M hops/wall s':>14} {'x BookSim2':>11}")
    for load in args.loads:
        for batch in args.batch:
            took, cpu, hops = run_case(load, batch, args.repeat)
            rate = hops / cpu
            print(f"{load:8.2f} {batch:5d} {hops:12,d} {cpu:7.2f} {took:7.2f} {rate / 1e6:13.2f} "
                  f"{hops / took / 1e6:14.2f} {rate / BOOKSIM:11.1f}")
    print(f"load average after: {os.getloadavg()[0]:.1f}; x BookSim2: link-hops per CPU second over BookSim2's "
          f"{BOOKSIM / 1e6:.2f} million (one core)")


if __name__ == "__main__":
    main()
