"""Small, obviously-correct reference routings: enumerate concrete node walks from the source.

Written directly from the papers' descriptions, independently of universal.oblivious: no relative
routing, no legs, no difference arrays, no closed-form loop erasure. Every function returns a list
of (probability as Fraction, node list) for one (source, destination) pair of a k-ary n-cube
whose node id is sum x_i k^i.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction


def coords(v: int, k: int, n: int) -> list[int]:
    return [(v // k ** i) % k for i in range(n)]


def node(c, k: int) -> int:
    return sum((x % k) * k ** i for i, x in enumerate(c))


def walk(start: int, moves: list[tuple[int, int]], k: int, n: int) -> list[int]:
    """Nodes visited from ``start`` making the unit moves (dim, +1/-1) in turn."""
    c = coords(start, k, n)
    out = [start]
    for dim, sign in moves:
        c[dim] = (c[dim] + sign) % k
        out.append(node(c, k))
    return out


def straight(dim: int, signed: int) -> list[tuple[int, int]]:
    return [(dim, 1 if signed > 0 else -1)] * abs(signed)


def minimal_moves(a: int, b: int, k: int) -> list[tuple[int, Fraction]]:
    """Minimal signed moves from coordinate a to b with probabilities (ties split 1/2-1/2)."""
    fwd = (b - a) % k
    if fwd == 0:
        return [(0, Fraction(1))]
    if 2 * fwd < k:
        return [(fwd, Fraction(1))]
    if 2 * fwd > k:
        return [(fwd - k, Fraction(1))]
    return [(fwd, Fraction(1, 2)), (-fwd, Fraction(1, 2))]


def dor(s: int, d: int, k: int, n: int, order=None) -> list[tuple[Fraction, list[int]]]:
    """Dimension-order routing, dimensions corrected in ``order`` (default 0, 1, ...)."""
    order = list(range(n)) if order is None else list(order)
    cs, cd = coords(s, k, n), coords(d, k, n)
    out = []
    for combo in itertools.product(*[minimal_moves(cs[i], cd[i], k) for i in order]):
        p = math.prod((pr for _, pr in combo), start=Fraction(1))
        moves = [m for dim, (mv, _) in zip(order, combo) for m in straight(dim, mv)]
        out.append((p, walk(s, moves, k, n)))
    return out


def erase_loops(path: list[int]) -> list[int]:
    """Chronological loop erasure: on revisiting a node, cut the walk back to its first visit."""
    out: list[int] = []
    where: dict[int, int] = {}
    for v in path:
        if v in where:
            cut = where[v]
            for u in out[cut + 1:]:
                del where[u]
            out = out[:cut + 1]
        else:
            where[v] = len(out)
            out.append(v)
    return out


def two_phase_dor(s, d, k, n, order2, erase, order1=None):
    N = k ** n
    out = []
    for q in range(N):
        for p1, w1 in dor(s, q, k, n, order1):
            for p2, w2 in dor(q, d, k, n, order2):
                path = w1 + w2[1:]
                out.append((p1 * p2 / N, erase_loops(path) if erase else path))
    return out


def val(s, d, k, n):
    return two_phase_dor(s, d, k, n, list(range(n)), erase=False)


def ival(s, d, k, n):
    """IVAL: a uniformly random first dimension order, the second phase in its reverse."""
    orders = list(itertools.permutations(range(n)))
    return [(p / len(orders), path) for o in orders
            for p, path in two_phase_dor(s, d, k, n, list(o)[::-1], erase=True, order1=list(o))]


def ival_xy(s, d, k, n):
    """The fixed variant ival:order=xy: x first, then the second phase y first."""
    return two_phase_dor(s, d, k, n, list(range(n))[::-1], erase=True)


def _quadrant_routes(s, d, k, n, direction_choices):
    """Routes through a uniform node of the chosen quadrant box, each phase in a uniformly random
    dimension order (independently). ``direction_choices[i]`` lists (sign, distance, prob)."""
    cs = coords(s, k, n)
    orders = list(itertools.permutations(range(n)))
    out = []
    for quad in itertools.product(*direction_choices):
        p_quad = math.prod((pr for _, _, pr in quad), start=Fraction(1))
        if p_quad == 0:
            continue
        box = list(itertools.product(*[range(dist + 1) for _, dist, _ in quad]))
        for q in box:
            for o1 in orders:
                for o2 in orders:
                    moves = []
                    for i in o1:
                        moves += straight(i, quad[i][0] * q[i])
                    for i in o2:
                        moves += straight(i, quad[i][0] * (quad[i][1] - q[i]))
                    p = p_quad / (len(box) * len(orders) ** 2)
                    out.append((p, walk(s, moves, k, n)))
    del cs
    return out


def romm(s, d, k, n):
    """Two-phase ROMM: uniform node of the minimal quadrant (tie: either half, 1/2 each)."""
    cs, cd = coords(s, k, n), coords(d, k, n)
    choices = []
    for i in range(n):
        opts = minimal_moves(cs[i], cd[i], k)
        choices.append([(1 if mv >= 0 else -1, abs(mv), pr) for mv, pr in opts])
    return _quadrant_routes(s, d, k, n, choices)


def rlb(s, d, k, n, threshold=False):
    """RLB / RLBth: short way with probability (k - delta)/k in each dimension."""
    cs, cd = coords(s, k, n), coords(d, k, n)
    choices = []
    for i in range(n):
        fwd = (cd[i] - cs[i]) % k
        delta = min(fwd, k - fwd)
        short = 1 if 2 * fwd <= k else -1
        if threshold and 4 * delta < k:
            p_short = Fraction(1)
        else:
            p_short = Fraction(k - delta, k)
        choices.append([(short, delta, p_short), (-short, k - delta, 1 - p_short)])
    return _quadrant_routes(s, d, k, n, choices)


REFERENCE = {
    "dor": dor,
    "val": val,
    "ival": ival,
    "ival:order=xy": ival_xy,
    "romm": romm,
    "rlb": rlb,
    "rlbth": lambda s, d, k, n: rlb(s, d, k, n, threshold=True),
}


def channel_of(u: int, v: int, k: int, n: int) -> int:
    """Channel index (tail*2n + 2*dim + (0 for +, 1 for -)) of the link u -> v."""
    cu, cv = coords(u, k, n), coords(v, k, n)
    dims = [i for i in range(n) if cu[i] != cv[i]]
    assert len(dims) == 1, (u, v)
    i = dims[0]
    sign = 0 if (cv[i] - cu[i]) % k == 1 else 1
    assert (cv[i] - cu[i]) % k in (1, k - 1)
    return u * 2 * n + 2 * i + sign


def pair_load_row(name: str, s: int, d: int, k: int, n: int) -> dict[int, Fraction]:
    """gamma_c(s, d) for every channel crossed, by walking every route."""
    loads: dict[int, Fraction] = {}
    total = Fraction(0)
    for p, path in REFERENCE[name](s, d, k, n):
        total += p
        assert path[0] == s and path[-1] == d
        for u, v in zip(path, path[1:]):
            c = channel_of(u, v, k, n)
            loads[c] = loads.get(c, Fraction(0)) + p
    assert total == 1, total
    return loads
