"""An independent check that a saved routing is a routing over two-turn paths.

Nothing here uses the design code or the routing-file reader: the file is read as plain JSON,
the channels are parsed from their labels, and the paths with at most two turns (Towles, Dally &
Boyd, "Throughput-centric routing algorithm design", 2003, §5.2: at most two changes of dimension,
no change of direction inside a dimension) are enumerated afresh as node sequences. Each offset's
flow is then decomposed by a linear program over those paths that minimises the residual
``|A lam - f|``; a routing over two-turn paths has residual zero for every offset, and a flow that
needs any other route (a spliced or shortened path) leaves a positive residual.

Used by ``tests/design/test_two_turn.py`` and ``benchmarks/two_turn.py``.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np


def _xy(label: str) -> tuple[int, int]:
    x, y = label.split(",")
    return int(x), int(y)


def two_turn_routes(k: int) -> dict[tuple[int, int], list[list[tuple[tuple[int, int], tuple[int, int]]]]]:
    """Every route from (0, 0) with one to three straight segments in alternating dimensions of the
    k-ary 2-cube, as its list of channels ``((x, y), (x', y'))``, grouped by destination."""
    out: dict = {}
    lengths = [s for s in range(-(k - 1), k) if s]
    for count in (1, 2, 3):
        for first in (0, 1):
            dims = [(first + i) % 2 for i in range(count)]
            for steps in itertools.product(lengths, repeat=count):
                pos = [0, 0]
                chans = []
                for d, s in zip(dims, steps):
                    unit = 1 if s > 0 else -1
                    for _ in range(abs(s)):
                        tail = (pos[0] % k, pos[1] % k)
                        pos[d] += unit
                        chans.append((tail, (pos[0] % k, pos[1] % k)))
                nodes = [c[0] for c in chans] + [chans[-1][1]]
                if len(set(nodes)) == len(nodes):
                    out.setdefault(nodes[-1], []).append(chans)
    return out


def residuals(path: str | Path) -> dict[tuple[int, int], float]:
    """The smallest residual ``sum |A lam - f|`` of every offset's flow over two-turn routes."""
    from scipy.optimize import linprog
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    k = int(data["network"].split("k=")[1].split(",")[0])
    den = data["denominator"]
    routes = two_turn_routes(k)
    out = {}
    for off_label, per_channel in data["flows"].items():
        off = _xy(off_label)
        if off == (0, 0):
            continue
        chans = sorted({c for r in routes[off] for c in r} |
                       {tuple(_xy(p) for p in lab.split("->")) for lab in per_channel})
        row = {c: i for i, c in enumerate(chans)}
        A = np.zeros((len(chans), len(routes[off])))
        for j, r in enumerate(routes[off]):
            for c in r:
                A[row[c], j] += 1.0
        f = np.zeros(len(chans))
        for lab, v in per_channel.items():
            f[row[tuple(_xy(p) for p in lab.split("->"))]] = v / den
        m, n = A.shape
        res = linprog(np.concatenate([np.zeros(n), np.ones(2 * m)]),
                      A_eq=np.hstack([A, np.eye(m), -np.eye(m)]), b_eq=f,
                      bounds=[(0, None)] * (n + 2 * m), method="highs")
        out[off] = float(res.fun)
    return out


def locality(path: str | Path) -> Fraction:
    """Mean hop count over all N^2 pairs over the minimal mean, from the file's flows alone."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    k = int(data["network"].split("k=")[1].split(",")[0])
    total = sum(sum(per.values()) for per in data["flows"].values())
    hops = Fraction(total, data["denominator"] * k * k)
    minimal = Fraction(2 * sum(min(c, k - c) for c in range(k)), k)
    return hops / minimal
