"""2TURN and 2TURNA with the default settings on k-ary 2-cubes, checked by the independent oracle.

Usage::

    python benchmarks/two_turn.py              # k = 4..8, both routings (2TURNA k=8 takes minutes)
    python benchmarks/two_turn.py 8            # chosen radices
    python benchmarks/two_turn.py --only 2turn

Each line designs one routing as ``universal design --paths 2turn --then locality --save`` does
(worst case for 2TURN, the average case over 100 sampled permutations for 2TURNA; Towles, Dally
& Boyd, "Throughput-centric routing algorithm design", 2003, §5.2 and §5.4), saves it, and hands
the file to ``tests/design/two_turn_oracle.py``, which shares no code with the design: the largest
residual of decomposing any offset's flow into paths with at most two turns (zero for a two-turn
routing) and the locality computed from the file's flows alone. The test-suite runs the same check
with a 5-permutation sample for 2TURNA; this script covers the default one, too slow for it.
"""

from __future__ import annotations

import argparse
import sys as _sys
import tempfile
import time
from pathlib import Path as _Path

# run from a checkout too (python benchmarks/NAME.py): the repository (package and tests) comes first
_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

from tests.design.two_turn_oracle import locality, residuals  # noqa: E402
from universal.design import design  # noqa: E402
from universal.paths.torus.routingfile import write_routing  # noqa: E402

OBJECTIVES = {"2turn": "worst-case", "2turna": "average-case"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("radix", nargs="*", type=int, default=[4, 5, 6, 7, 8])
    parser.add_argument("--only", choices=list(OBJECTIVES), help="one of the two routings")
    args = parser.parse_args(argv)
    names = [args.only] if args.only else list(OBJECTIVES)
    print(f"{'routing':8} {'k':>3} {'seconds':>8} {'locality':>10} {'oracle locality':>16} {'max residual':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for k in args.radix:
                start = time.perf_counter()
                r = design(f"torus:k={k},n=2", OBJECTIVES[name], "2turn", then="locality",
                           name=name, evaluate=False)
                seconds = time.perf_counter() - start
                saved = write_routing(_Path(tmp) / f"{name}-{k}.routing", r.routing)
                worst = max(residuals(saved).values())
                print(f"{name:8} {k:>3} {seconds:>8.1f} {r.locality:>10.6f} {float(locality(saved)):>16.6f} "
                      f"{worst:>13.1e}", flush=True)


if __name__ == "__main__":
    main()
