"""One engine for batch and open loop (issue 23): the one engine against the retired batch engine
on the batch engine's own work.

Usage::

    python benchmarks/one_engine.py                  # torus:k=64,n=2 and BF(16), h = 16 / 4, Valiant
    python benchmarks/one_engine.py --repeat 5

Both route the same fixed paths (a Valiant h-relation) with the same protocol and seed:
:func:`universal.engine.simulate`, which runs a batch on the one engine (:mod:`universal.engine.runs`),
and the batch engine it replaced (``benchmarks/legacy_batch_engine.py``, kept as a yardstick).
Both must deliver every packet in the same step, which is checked. Rates are millions of
packet-hops per CPU second, best of ``--repeat`` interleaved rounds; the ratio (one engine over
the retired one) is what to read on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import legacy_batch_engine  # noqa: E402  (benchmarks/ is on the path when run as a script)
from universal.engine import simulate  # noqa: E402
from universal.networks import build_network  # noqa: E402
from universal.paths import route_paths  # noqa: E402
from universal.workloads import build_problem  # noqa: E402

PROTOCOLS = ["random-rank", "growing-rank", "fifo", "longest-in-system", "farthest-to-go", "nearest-to-go",
             "random", "random-delay"]

INSTANCES = [("torus:k=64,n=2", 16), ("butterfly:d=16", 4)]


def best_time(engine, paths, protocol: str, seed: int) -> tuple[float, object]:
    start = time.process_time()
    result = engine(paths, protocol, np.random.default_rng(seed))
    return time.process_time() - start, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'network':16} {'protocol':18} {'retired M/s':>11} {'one M/s':>8} {'ratio':>6}  same T")
    for name, h in INSTANCES:
        net = build_network(name)
        problem = build_problem(f"h-relation:h={h}", net, np.random.default_rng(0))
        paths = route_paths("valiant", problem, net, np.random.default_rng(1))
        paths.congestion        # the link loads belong to the paths, not to either engine
        hops = int(paths.lengths.sum())
        for protocol in PROTOCOLS:
            best_old = best_new = float("inf")
            for _ in range(args.repeat):
                seconds, old = best_time(legacy_batch_engine.simulate, paths, protocol, 2)
                best_old = min(best_old, seconds)
                seconds, new = best_time(simulate, paths, protocol, 2)
                best_new = min(best_new, seconds)
            alike = bool(np.array_equal(old.delivery, new.delivery))
            old_rate, new_rate = hops / best_old / 1e6, hops / best_new / 1e6
            print(f"{name:16} {protocol:18} {old_rate:11.2f} {new_rate:8.2f} {new_rate / old_rate:6.2f}  "
                  f"{'yes' if alike else 'NO'}")
            if not alike:
                raise SystemExit(f"error: the engines disagree on {name} with {protocol}")


if __name__ == "__main__":
    main()
