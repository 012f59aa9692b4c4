"""One engine for batch and open loop (issue 23): the one engine against the batch engine on the
batch engine's own work.

Usage::

    python benchmarks/one_engine.py                  # torus:k=64,n=2 and BF(16), h = 16 / 4, Valiant
    python benchmarks/one_engine.py --repeat 5

Both route the same fixed paths (a Valiant h-relation) with the same protocol and seed:
the batch engine (:func:`universal.engine.simulate`, ``universal/engine/fast.py``) and the one
engine's batch front end (:func:`universal.engine.batch.simulate`, a batch on
:mod:`universal.engine.runs`). Both must deliver every packet in the same step, which is checked.
Rates are millions of packet-hops per CPU second, best of ``--repeat`` interleaved rounds; the
ratio (one engine over the batch engine) is what to read on a shared machine. The batch engine
can go once no ratio is below 1.

The last columns give each protocol's rate relative to random rank's on the same network, for
each engine (``batch/rr``, ``one/rr``), and whether the one engine meets issue 25's target
there: its relative rate at least the batch engine's (so its ratio at least random rank's) and
at least half of random rank's rate (``target``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from universal.engine import simulate, simulate_one  # noqa: E402
from universal.networks import build_network  # noqa: E402
from universal.paths import route_paths  # noqa: E402
from universal.workloads import build_problem  # noqa: E402

PROTOCOLS = ["random-rank", "growing-rank", "fifo", "longest-in-system", "farthest-to-go", "nearest-to-go",
             "random", "random-delay"]

def best_time(engine, paths, protocol: str, seed: int) -> tuple[float, object]:
    start = time.process_time()
    result = engine(paths, protocol, np.random.default_rng(seed))
    return time.process_time() - start, result


def warm_up() -> None:
    """Run the compiled kernels once on a tiny batch (every protocol), so that numba's start (paid
    once per process, and only by batches of at least ``COMPILED_MIN_HOPS_COLD`` hops) is not
    timed: the rates below are the steady ones of a process that has routed a large batch before."""
    from universal.engine import batch

    saved = batch.COMPILED_MIN_HOPS_COLD
    batch.COMPILED_MIN_HOPS_COLD = 0
    try:
        net = build_network("butterfly:d=3")
        paths = route_paths("valiant", build_problem("h-relation:h=1", net, np.random.default_rng(0)), net,
                            np.random.default_rng(1))
        for protocol in PROTOCOLS:
            simulate_one(paths, protocol, np.random.default_rng(0))
    finally:
        batch.COMPILED_MIN_HOPS_COLD = saved


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--d", type=int, default=16, help="the butterfly's dimension (default 16)")
    args = parser.parse_args(argv)
    warm_up()
    print(f"{'network':16} {'protocol':18} {'batch M/s':>11} {'one M/s':>8} {'ratio':>6}  same T  "
          f"{'batch/rr':>8} {'one/rr':>6}  target")
    for name, h in [("torus:k=64,n=2", 16), (f"butterfly:d={args.d}", 4)]:
        net = build_network(name)
        problem = build_problem(f"h-relation:h={h}", net, np.random.default_rng(0))
        paths = route_paths("valiant", problem, net, np.random.default_rng(1))
        paths.congestion        # the link loads belong to the paths, not to either engine
        hops = int(paths.lengths.sum())
        rank_rates = None                   # random rank's (the first protocol)
        for protocol in PROTOCOLS:
            best_old = best_new = float("inf")
            for _ in range(args.repeat):
                seconds, old = best_time(simulate, paths, protocol, 2)
                best_old = min(best_old, seconds)
                seconds, new = best_time(simulate_one, paths, protocol, 2)
                best_new = min(best_new, seconds)
            alike = bool(np.array_equal(old.delivery, new.delivery))
            old_rate, new_rate = hops / best_old / 1e6, hops / best_new / 1e6
            rank_rates = rank_rates or (old_rate, new_rate)
            old_rel, new_rel = old_rate / rank_rates[0], new_rate / rank_rates[1]
            met = new_rel >= old_rel and new_rel >= 0.5
            print(f"{name:16} {protocol:18} {old_rate:11.2f} {new_rate:8.2f} {new_rate / old_rate:6.2f}  "
                  f"{'yes' if alike else 'NO':6} {old_rel:8.2f} {new_rel:6.2f}  {'yes' if met else 'NO'}")
            if not alike:
                raise SystemExit(f"error: the engines disagree on {name} with {protocol}")


if __name__ == "__main__":
    main()
