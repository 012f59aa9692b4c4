"""One engine for batch and open loop (issue 23): how far the open-loop engine is from the batch
engine on the batch engine's own work.

Usage::

    python benchmarks/one_engine.py                  # torus:k=64,n=2 and BF(16), h = 16 / 4, Valiant
    python benchmarks/one_engine.py --repeat 5

Both engines route the same fixed paths (a Valiant h-relation) with the same contention rule:
the batch engine (:func:`universal.engine.simulate`) and the open-loop engine with every packet
created in step 0 (:class:`~universal.engine.workload.Injection` ``batch`` with the survey's
ranks drawn as the batch engine draws them, a router that hands it the same paths). The two must
deliver every packet in the same step, which is checked. Rates are millions of
packet-hops per CPU second, best of ``--repeat`` interleaved rounds; the ratio (open loop over
batch) is what to read on a shared machine. The batch engine can go once every ratio is at least 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from universal.engine import simulate  # noqa: E402
from universal.networks import build_network  # noqa: E402
from universal.engine.batch import fixed_paths_spec  # noqa: E402
from universal.engine.runs import simulate as simulate_open  # noqa: E402
from universal.engine.measure import Measurement  # noqa: E402
from universal.paths import PathCollection, route_paths  # noqa: E402
from universal.workloads import build_problem  # noqa: E402

#: (batch protocol, open-loop priority, deterministic: both must deliver alike)
RULES = [("random-rank", "random-rank"), ("growing-rank", "growing-rank"), ("fifo", "fifo"),
         ("longest-in-system", "age"), ("farthest-to-go", "farthest-to-go"), ("nearest-to-go", "nearest-to-go")]

INSTANCES = [("torus:k=64,n=2", 16), ("butterfly:d=16", 4)]


def run_open(paths: PathCollection, protocol: str, priority: str, seed: int) -> tuple[np.ndarray, float]:
    """Delivery step of every packet (batch numbering) and CPU seconds, on the open-loop engine,
    with the survey's ranks drawn from ``seed`` as the batch engine draws them."""
    spec = fixed_paths_spec(paths, protocol, priority, np.random.default_rng(seed))
    limit = int(paths.lengths.sum()) + 1
    start = time.process_time()
    res = simulate_open(spec, measurement=Measurement(steps=limit, until_delivered=True))
    seconds = time.process_time() - start
    delivered = res.records["delivered"]
    # batch numbering: packets first move in step 1; a packet with no hop to make arrives in step 0
    return np.where(paths.lengths == 0, 0, np.where(delivered >= 0, delivered + 1, -1)), seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'network':16} {'rule':18} {'batch M/s':>10} {'open M/s':>10} {'ratio':>6}  same T")
    for name, h in INSTANCES:
        net = build_network(name)
        problem = build_problem(f"h-relation:h={h}", net, np.random.default_rng(0))
        paths = route_paths("valiant", problem, net, np.random.default_rng(1))
        hops = int(paths.lengths.sum())
        for protocol, priority in RULES:
            best_batch = best_open = float("inf")
            for _ in range(args.repeat):
                start = time.process_time()
                res = simulate(paths, protocol, np.random.default_rng(2))
                best_batch = min(best_batch, time.process_time() - start)
                delivered, seconds = run_open(paths, protocol, priority, 2)
                best_open = min(best_open, seconds)
            alike = bool(np.array_equal(res.delivery, delivered))
            batch_rate, open_rate = hops / best_batch / 1e6, hops / best_open / 1e6
            print(f"{name:16} {protocol:18} {batch_rate:10.2f} {open_rate:10.2f} {open_rate / batch_rate:6.2f}  "
                  f"{'yes' if alike else 'NO'}")
            if alike is False:
                raise SystemExit(f"error: the engines disagree on {name} with {protocol}")


if __name__ == "__main__":
    main()
