"""The one engine's batch front end against the retired vectorised batch engine, in the same rounds.

Usage::

    python benchmarks/retired_engine.py                  # BF(8) .. BF(14), h = 1, 4, every buffered protocol
    python benchmarks/retired_engine.py --d 14 --h 4 --repeat 5
    python benchmarks/retired_engine.py --min-time 0     # exactly --repeat rounds an instance

The retired engine (``universal/engine/fast.py``, deleted after commit 96407e7, issue 23) is
loaded from git (``git show 96407e7:universal/engine/fast.py``) into a temporary module that
imports against the current package, and timed beside :func:`universal.engine.simulate` on the
same paths and seeds, every protocol of one instance in the same round, round after round
(at least ``--repeat`` rounds, and more until the instance's rounds took ``--min-time`` seconds
of CPU: a small batch routes in half a millisecond, and three rounds of it are at the mercy
of the other processes on a shared machine), each round in a new order of the columns, each
keeping its best CPU time (``time.process_time``). Both must give the
same delivery steps, status, steps, largest buffer and hop count (checked on every run).

Printed per instance: the rates in millions of packet-hops per second of the retired engine
(``old``) and of the one engine (``one``), then each engine's ratios to its own unbounded random
rank, and the issue's acceptance: random rank's absolute rate no lower than the old engine's in
the same run (``rr one/old``), and every protocol's rate relative to random rank no lower than
the old engine's (``ratios``). "No lower" is a paired test over the rounds: in every round each
engine's ratio (random rank's time over the protocol's, both from that round) is taken, and a
protocol fails when the mean of the one engine's ratio minus the old one's is below 0 by more
than its 95% confidence interval (Student's t over the rounds). Longest-in-system in a batch
does random rank's work in both engines (every packet is created at step 0, so the packet ids
decide: a fixed ranking); its two ratios are 1 up to noise, and comparing the best-of-rounds
ratios with a plain ``<`` made the verdict flip from run to run on it alone. In a fresh process these instances run below the compiled
kernels' threshold, so the one engine runs in numpy (:mod:`universal.engine.static_numpy` for
random rank and longest-in-system, :mod:`universal.engine.dynamic_numpy` for the others).

References
----------
Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))         # run from a checkout: the repository's package comes first

from universal.engine import simulate  # noqa: E402
from universal.networks import butterfly  # noqa: E402
from universal.paths import route_paths  # noqa: E402
from universal.workloads import build_problem  # noqa: E402

#: The last commit with the retired engine.
RETIRED = "96407e7"

#: (column, protocol, buffer): unbounded random rank first, since the ratios divide by it.
SETTINGS = [
    ("rr", "random-rank", None),
    ("rr b=2", "random-rank", 2),
    ("grow", "growing-rank", None),
    ("fifo", "fifo", None),
    ("ftg", "farthest-to-go", None),
    ("ntg", "nearest-to-go", None),
    ("lis", "longest-in-system", None),
    ("random", "random", None),
]


def retired_engine() -> types.ModuleType:
    """The retired batch engine's module, from git, imported against the current package."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{RETIRED}:universal/engine/fast.py"],
                            check=True, capture_output=True, text=True).stdout
    module = types.ModuleType("universal.engine._retired_fast")
    module.__file__ = f"{RETIRED}:universal/engine/fast.py"
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def instance(d: int, h: int, seed: int = 0):
    """Valiant paths of an h-relation on BF(d), as ``benchmarks/engine.py`` builds them."""
    net = butterfly(d)
    problem = build_problem(f"h-relation:h={h}", net, np.random.default_rng(seed))
    paths = route_paths("valiant", problem, net, np.random.default_rng(seed + 1))
    paths.congestion  # the link loads are part of choosing paths, not of the engine
    return paths


def same(a, b) -> bool:
    return (np.array_equal(a.delivery, b.delivery) and (a.status, a.steps, a.max_buffer, a.hops) ==
            (b.status, b.steps, b.max_buffer, b.hops))


def time_both(paths, engines: dict, repeat: int, min_time: float = 0.0, seed: int = 2) -> tuple[dict, dict]:
    """Seconds per hop of every (engine, column) in every round, all interleaved round by round,
    in at least ``repeat`` rounds and until the rounds took ``min_time`` seconds: the best of
    each, and the list of each over the rounds."""
    best: dict = {}
    every: dict = {}
    rounds = 0
    spent = 0.0
    shuffle = np.random.default_rng(seed)
    while rounds < repeat or spent < min_time:
        # the columns in a new order every round (seeded): a column always run after the same
        # other one (the same cache and allocator state) read up to 0.03 lower than when run
        # after another, doing the same work
        for k in shuffle.permutation(len(SETTINGS)):
            column, protocol, buffer = SETTINGS[k]
            results = {}
            for which, engine in engines.items():
                start = time.process_time()
                result = engine(paths, protocol, np.random.default_rng(seed), buffer=buffer)
                took = time.process_time() - start
                spent += took
                seconds = took / max(result.hops, 1)
                best[which, column] = min(best.get((which, column), float("inf")), seconds)
                every.setdefault((which, column), []).append(seconds)
                results[which] = result
            if not same(results["old"], results["one"]):
                raise SystemExit(f"error: the engines disagree on {column}")
        rounds += 1
    return best, every


def ratio_lower(every: dict, column: str, confidence: float = 0.95) -> float | None:
    """By how much the one engine's ratio to random rank is lower than the old engine's, paired
    round by round, when that is beyond the ``confidence`` interval of the mean; else None.

    Each round gives each engine's ratio, random rank's seconds over ``column``'s (the same work
    timed in the same round); the differences one - old are averaged, and the column is lower
    when the mean plus the half-width of its Student's t interval is still below 0.
    """
    from scipy.stats import t as student
    diff = (np.asarray(every["one", "rr"]) / np.asarray(every["one", column])
            - np.asarray(every["old", "rr"]) / np.asarray(every["old", column]))
    half = student.ppf(0.5 + confidence / 2, len(diff) - 1) * diff.std(ddof=1) / np.sqrt(len(diff))
    mean = float(diff.mean())
    return mean if mean + half < 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="*", default=[8, 10, 12, 14])
    parser.add_argument("--h", type=int, nargs="*", default=[1, 4])
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds an instance, at least (default 3; the paired test needs 2)")
    parser.add_argument("--min-time", type=float, default=2.0,
                        help="CPU seconds an instance's rounds take, at least (default 2)")
    args = parser.parse_args()
    engines = {"old": retired_engine().simulate, "one": simulate}
    warm = instance(4, 1)              # imports and first calls, not timed
    for engine in engines.values():
        for _, protocol, buffer in SETTINGS:
            engine(warm, protocol, np.random.default_rng(0), buffer=buffer)

    print(f"cores: {os.cpu_count()}  python {platform.python_version()}  numpy {np.__version__}  "
          f"machine {platform.machine()}")
    print(f"Mhops/s (best of at least {args.repeat} rounds and {args.min_time:g} s of CPU an instance),")
    print("then each engine's ratio to its own rr in the same rounds")
    head = f"{'d':>3} {'h':>2} {'hops':>10} {'rounds':>6} {'':>3}"
    print(head + " " + " ".join(f"{c:>6}" for c, _, _ in SETTINGS) + "  rr one/old  ratios")
    verdicts = []
    for d in args.d:
        for h in args.h:
            paths = instance(d, h)
            best, every = time_both(paths, engines, args.repeat, args.min_time)
            rounds = len(every["one", "rr"])
            hops = int(paths.lengths.sum())
            rate = {key: 1 / seconds / 1e6 for key, seconds in best.items()}
            ratio = {(w, c): best[w, "rr"] / best[w, c] for w, c in best}
            absolute = rate["one", "rr"] >= rate["old", "rr"]
            lower = {c: ratio_lower(every, c) for c, _, _ in SETTINGS[1:]}
            relative = [c for c, by in lower.items() if by is not None]
            verdicts.append(absolute and not relative)
            labels = (("old", f"{d:>3} {h:>2} {hops:>10,} {rounds:>6} old"), ("one", f"{'one':>{len(head)}}"))
            for which, label in labels:
                print(label + " " + " ".join(f"{rate[which, c]:>6.1f}" for c, _, _ in SETTINGS))
            for which in ("old", "one"):
                cells = " ".join(f"{ratio[which, c]:>6.2f}" for c, _, _ in SETTINGS)
                line = f"{which + ' ratio':>{len(head)}} {cells}"
                if which == "one":
                    # a failing column with its shortfall: the mean over the rounds of the one
                    # engine's ratio minus the old one's
                    short = [f"{c} {lower[c]:+.3f}" for c in relative]
                    line += (f"  {rate['one', 'rr'] / rate['old', 'rr']:>6.2f} {'yes' if absolute else 'no':>3}  "
                             + ("yes" if not relative else "no: " + ", ".join(short)))
                print(line)
    print("acceptance (rr no slower than the old engine; no ratio to rr lower, paired over the rounds, 95%):",
          "yes" if all(verdicts) else f"no ({verdicts.count(False)} of {len(verdicts)} instances fail)")


if __name__ == "__main__":
    main()
