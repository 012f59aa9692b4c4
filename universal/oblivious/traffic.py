"""Traffic patterns for the channel-load analysis of the torus.

A traffic pattern is either a permutation (``dest[src]``) or an N x N matrix ``L`` whose entry
``L[s, d]`` is the fraction of ``s``'s injection bandwidth sent to ``d`` (Towles, Dally & Boyd
2003, §2.3). Admissible patterns are doubly stochastic; the hot-spot pattern deliberately is not
(its hot columns sum to more than one, as in Singh et al. 2003, §5.6).

Names (SPEC §8, traffic for the load analysis):

==================  =====================================================================
``uniform``         every destination equally likely (1/N, including the source itself)
``neighbor``        each of the 2n neighbours with probability 1/(2n)
``bitcomp``         ``x_i -> k-1-x_i`` in every dimension (a permutation)
``transpose``       ``(x, y) -> (y, x)``; 2-D tori only
``tornado``         ``ceil(k/2) - 1`` hops in +x
``bitrev``          reverse the bits of the node id (N a power of two)
``shuffle``         rotate the bits of the node id left by one (N a power of two)
``hotspot``         uniform background, but ``count`` hot nodes (the first ``count`` nodes along x
                    from the origin) are ``factor`` times as likely as destinations
                    (``hotspot:count=5,factor=5``; ``background=bitcomp`` mixes the hot nodes into
                    bit-complement instead: row ``s`` is bitcomp plus ``(factor-1)/N`` on each hot
                    node, renormalised)
``diagonal``        ``x_i -> x_i + floor(k/2)`` in every dimension: half way across every ring
                    (GOAL's Π_dia, Singh, Dally, Gupta & Towles 2003, Claim 1)
``booksim-tornado``  BookSim2's ``tornado``: ``x_i -> x_i + ceil(k/2) - 1`` in every dimension
``booksim-neighbor``  BookSim2's ``neighbor``: ``x_i -> x_i + 1`` in every dimension (a permutation)
``matrix:file=P``   whitespace-separated N x N matrix of decimals or fractions (``1/3``), ``#``
                    comments, doubly sub-stochastic (row and column sums at most 1: GOAL's
                    admissible traffic; a zero row is a node that sends nothing)
``permutation:file=P``  one destination per line for every source in id order (SPEC §8), or
                    ``source destination`` lines, where sources left out send nothing (a
                    partial permutation is a doubly sub-stochastic matrix); labels or ids
``random-perms:M``  M random permutations (default 1000), summarised by worst / mean / best
==================  =====================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import numpy as np

from universal.datafiles import read_rows
from universal.errors import UserError
from universal.registry import Spec, check_known_params, parse_spec, pattern_name, take_int

from universal.paths.torus.geometry import Torus

__all__ = ["Traffic", "TRAFFICS", "make_traffic", "rational_traffic", "traffic_names", "Grid"]

_TOL = 1e-6


@dataclass(frozen=True)
class Traffic:
    """One traffic pattern on a torus.

    Exactly one of ``perm`` / ``matrix`` is set, except for ``random-perms`` where ``count``
    permutations are drawn later from the caller's Generator.

    Attributes
    ----------
    name : str
        The name as given (e.g. ``"tornado"``, ``"random-perms:1000"``).
    perm : ndarray or None
        ``perm[s]`` is the destination of source ``s``.
    matrix : ndarray or None
        Dense N x N traffic matrix.
    count : int
        Number of random permutations (``random-perms`` only), else 0.
    exact : (ndarray, int) or None
        The matrix exactly: integer numerators (int64, or Python ints in an object array when
        they do not fit) over one common denominator. Set for every built-in matrix pattern
        and for matrix files (their decimal entries are exact rationals).
    """

    name: str
    perm: np.ndarray | None = None
    matrix: np.ndarray | None = None
    count: int = 0
    exact: tuple[np.ndarray, int] | None = None

    @property
    def is_random(self) -> bool:
        return self.count > 0


def rational_traffic(name: str, num: np.ndarray, den: int) -> Traffic:
    """A traffic matrix given exactly as integer numerators over one common denominator.

    ``matrix`` holds ``num / den`` in floats for the fast sums; ``exact`` keeps ``(num, den)``
    so that loads and throughputs can be stated as fractions.

    Examples
    --------
    >>> t = rational_traffic("half", np.array([[1, 1], [1, 1]]), 2)
    >>> t.matrix.tolist(), t.exact[1]
    ([[0.5, 0.5], [0.5, 0.5]], 2)
    """
    num = np.asarray(num)
    return Traffic(name, matrix=num.astype(np.float64) / den, exact=(num, int(den)))


@dataclass(frozen=True)
class Grid:
    """The coordinates the traffic patterns need, for a network that is not a load-analysis
    :class:`Torus`: a mesh or hypercube (``k``, ``n`` as in its name; ids ``sum x_i k**i``) or
    any graph, seen as one line of ``N`` nodes (``k = N``, ``n = 1``), where ``bitcomp`` is
    ``s -> N-1-s`` and ``hotspot`` makes nodes ``0..count-1`` hot.

    Examples
    --------
    >>> make_traffic(Grid(2, 3, "hypercube:d=3"), "bitcomp").perm.tolist()
    [7, 6, 5, 4, 3, 2, 1, 0]
    """

    k: int
    n: int
    name: str

    @property
    def N(self) -> int:  # noqa: N802 - the papers' name
        return self.k ** self.n

    @property
    def powers(self) -> np.ndarray:
        return self.k ** np.arange(self.n, dtype=np.int64)

    @property
    def coords(self) -> np.ndarray:
        ids = np.arange(self.N, dtype=np.int64)
        return (ids[:, None] // self.powers[None, :]) % self.k

    def node(self, coords) -> int | np.ndarray:
        ids = (np.asarray(coords, dtype=np.int64) % self.k) @ self.powers
        return int(ids) if ids.ndim == 0 else ids


def _perm(name: str, dest: np.ndarray) -> Traffic:
    return Traffic(name, perm=np.asarray(dest, dtype=np.int64))


def _uniform(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, set())
    return rational_traffic(spec.text, np.ones((t.N, t.N), dtype=np.int64), t.N)


def _neighbor(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, set())
    L = np.zeros((t.N, t.N), dtype=np.int64)
    src = np.arange(t.N)
    for dim in range(t.n):
        for sign in (1, -1):
            step = np.zeros(t.n, dtype=np.int64)
            step[dim] = sign
            L[src, t.node(t.coords + step)] += 1
    return rational_traffic(spec.text, L, 2 * t.n)


def _bitcomp(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, set())
    return _perm(spec.text, t.node(t.k - 1 - t.coords))


def _transpose(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, set())
    if t.n != 2:
        raise UserError(f"transpose traffic needs a 2-D torus ((x, y) -> (y, x)); {t.name} has n={t.n}")
    return _perm(spec.text, t.node(t.coords[:, ::-1]))


def _tornado(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, set())
    step = np.zeros(t.n, dtype=np.int64)
    step[0] = math.ceil(t.k / 2) - 1
    return _perm(spec.text, t.node(t.coords + step))


def _bits(t: Torus, what: str) -> int:
    bits = t.N.bit_length() - 1
    if t.N != 1 << bits:
        raise UserError(f"{what} traffic needs N a power of two; {t.name} has N={t.N}")
    return bits


def _bitrev(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, set())
    bits = _bits(t, "bit-reversal")
    ids = np.arange(t.N)
    out = np.zeros(t.N, dtype=np.int64)
    for b in range(bits):
        out |= ((ids >> b) & 1) << (bits - 1 - b)
    return _perm(spec.text, out)


def _shuffle(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, set())
    bits = _bits(t, "perfect-shuffle")
    ids = np.arange(t.N)
    return _perm(spec.text, ((ids << 1) | (ids >> (bits - 1))) & (t.N - 1))


def _hotspot(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, {"count", "factor", "background"})
    count = take_int(spec, "count", default=min(5, t.N), low=1, high=t.N)
    factor = take_int(spec, "factor", default=5, low=1)
    background = spec.params.get("background", "uniform")
    # In units of 1/N: the background row sums to N, every hot node gets factor - 1 more, so
    # every row sums to N + (factor - 1) * count, the common denominator.
    if background == "uniform":
        num = np.ones((t.N, t.N), dtype=np.int64)
    elif pattern_name(background, ["bitcomp"]) == "bitcomp":
        num = np.zeros((t.N, t.N), dtype=np.int64)
        num[np.arange(t.N), _bitcomp(t, parse_spec("bitcomp")).perm] = t.N
    else:
        raise UserError(f"hotspot background must be uniform or bitcomp (got {background!r})")
    hot = t.node(np.outer(np.arange(count), np.eye(t.n, dtype=np.int64)[0]))
    hot = np.unique(np.atleast_1d(hot))
    if len(hot) < count:   # more hot nodes than a row holds: continue in node-id order
        rest = np.setdiff1d(np.arange(t.N), hot)[: count - len(hot)]
        hot = np.concatenate([hot, rest])
    num[:, hot] += factor - 1
    return rational_traffic(spec.text, num, t.N + (factor - 1) * len(hot))


def _matrix(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, {"file"})
    if "file" not in spec.params:
        raise UserError("matrix traffic needs matrix:file=PATH")
    path = Path(spec.params["file"])
    rows = []
    for lineno, fields in read_rows(path, "traffic matrix"):
        try:
            # a decimal (0.125, 1e-3) or a fraction (1/3) is an exact rational
            rows.append([Fraction(x) for x in fields])
        except (ValueError, ZeroDivisionError):
            raise UserError(f"{path}:{lineno}: not a row of numbers (decimals or fractions such as 1/3)") from None
    if len(rows) != t.N or any(len(r) != t.N for r in rows):
        raise UserError(f"{path}: expected a {t.N} x {t.N} matrix for {t.name}")
    L = np.array([[float(x) for x in r] for r in rows])
    if (L < -_TOL).any():
        raise UserError(f"{path}: traffic matrix has negative entries")
    if (L.sum(axis=1) > 1 + _TOL).any() or (L.sum(axis=0) > 1 + _TOL).any():
        raise UserError(f"{path}: traffic matrix is not doubly sub-stochastic (row and column sums must be at most 1)")
    if not L.any():
        raise UserError(f"{path}: traffic matrix is all zeros")
    den = math.lcm(*{x.denominator for r in rows for x in r})
    num = np.array([[x.numerator * (den // x.denominator) for x in r] for r in rows], dtype=object)
    if max(abs(int(v)) for v in num.ravel()) < 2 ** 62:
        num = num.astype(np.int64)
    return Traffic(spec.text, matrix=L, exact=(num, den))


def _diagonal(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, set())
    return _perm(spec.text, t.node(t.coords + t.k // 2))


def _booksim_tornado(t: Torus, spec: Spec) -> Traffic:
    """BookSim2's ``tornado``: every coordinate moves ``ceil(k/2) - 1`` ahead (ours moves x only)."""
    check_known_params(spec, set())
    return _perm(spec.text, t.node(t.coords + (math.ceil(t.k / 2) - 1)))


def _booksim_neighbor(t: Torus, spec: Spec) -> Traffic:
    """BookSim2's ``neighbor``: every coordinate moves one ahead, a permutation (ours spreads each
    source evenly over its 2n neighbours)."""
    check_known_params(spec, set())
    return _perm(spec.text, t.node(t.coords + 1))


def _permutation(t: Torus, spec: Spec) -> Traffic:
    """``permutation:file=P`` in either of two layouts, nodes as labels ``x0,x1,...`` or ids:
    one destination per line, a line for every source in id order (SPEC §8, as ``route`` reads
    it), or ``source destination`` lines, where sources left out send nothing."""
    check_known_params(spec, {"file"})
    if "file" not in spec.params:
        raise UserError("permutation traffic needs permutation:file=PATH")
    path = Path(spec.params["file"])
    rows = read_rows(path, "permutation")
    widths = {len(fields) for _, fields in rows}
    if widths == {1}:   # the destinations of sources 0, 1, ..., N-1
        if len(rows) != t.N:
            raise UserError(f"{path}: one destination per line needs a line for each of the {t.N} nodes of "
                            f"{t.name}, the file has {len(rows)} (or write 'source destination' pairs)")
        rows = [(lineno, [str(s), fields[0]]) for s, (lineno, fields) in enumerate(rows)]
    dest = np.full(t.N, -1, dtype=np.int64)
    for lineno, fields in rows:
        if len(fields) != 2:
            raise UserError(f"{path}:{lineno}: expected 'source destination' (or one destination per line, "
                            "for every source in order)")
        s, d = (_node_id(t, f, path, lineno) for f in fields)
        if dest[s] >= 0:
            raise UserError(f"{path}:{lineno}: source {fields[0]} appears twice")
        dest[s] = d
    used = dest[dest >= 0]
    if not len(used):
        raise UserError(f"{path}: no pairs")
    if len(np.unique(used)) != len(used):
        raise UserError(f"{path}: a destination appears twice (not a permutation)")
    if len(used) == t.N:
        return _perm(spec.text, dest)
    num = np.zeros((t.N, t.N), dtype=np.int64)
    num[np.flatnonzero(dest >= 0), used] = 1
    return rational_traffic(spec.text, num, 1)


def _node_id(t: Torus, text: str, path: Path, lineno: int) -> int:
    """A node given as ``x0,x1,...`` coordinates or as an id."""
    try:
        parts = [int(x) for x in text.strip("()").split(",")]
    except ValueError:
        raise UserError(f"{path}:{lineno}: {text!r} is not a node") from None
    if len(parts) == 1 and 0 <= parts[0] < t.N:
        return parts[0]
    if len(parts) == t.n and all(0 <= x < t.k for x in parts):
        return int(t.node(parts))
    raise UserError(f"{path}:{lineno}: {text!r} is not a node of {t.name}")


def _random_perms(t: Torus, spec: Spec) -> Traffic:
    check_known_params(spec, {"m"})
    if spec.arg is not None:
        try:
            count = int(spec.arg)
        except ValueError:
            raise UserError(f"random-perms takes a count, e.g. random-perms:1000 (got {spec.arg!r})") from None
    else:
        count = take_int(spec, "m", default=1000)
    if count < 1:
        raise UserError(f"random-perms needs at least one permutation (got {count})")
    return Traffic(spec.text, count=count)


#: Traffic registry: public name -> factory(torus, spec).
TRAFFICS = {
    "uniform": _uniform,
    "neighbor": _neighbor,
    "bitcomp": _bitcomp,
    "transpose": _transpose,
    "tornado": _tornado,
    "bitrev": _bitrev,
    "shuffle": _shuffle,
    "hotspot": _hotspot,
    "diagonal": _diagonal,
    "booksim-tornado": _booksim_tornado,
    "booksim-neighbor": _booksim_neighbor,
    "matrix": _matrix,
    "permutation": _permutation,
    "random-perms": _random_perms,
}


def traffic_names() -> list[str]:
    """Registered traffic names."""
    return list(TRAFFICS)


def make_traffic(torus: Torus | Grid, text: str) -> Traffic:
    """Build the traffic pattern named ``text`` (``name`` or ``name:key=value,...``) on ``torus``.

    Examples
    --------
    >>> make_traffic(Torus(5, 1), "tornado").perm.tolist()
    [2, 3, 4, 0, 1]
    >>> make_traffic(Torus(5, 1), "random-perms:10").count
    10
    """
    spec = parse_spec(text)
    spec = replace(spec, name=pattern_name(spec.name, TRAFFICS))
    if spec.name not in TRAFFICS:
        raise UserError(f"unknown traffic {spec.name!r} (known: {', '.join(TRAFFICS)})")
    if spec.arg is not None and spec.name != "random-perms":
        raise UserError(f"traffic {spec.name!r} takes key=value parameters, not {spec.arg!r}")
    return TRAFFICS[spec.name](torus, spec)
