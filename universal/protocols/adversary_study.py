"""Theorem 25's adversary over a grid of butterfly dimensions D and congestions C: Q's T beside
random rank's with fresh ranks, and how each grows with C and D (``universal adversary`` and
``kind = "adversary"`` scenarios).

Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §5, Theorem 25;
the construction is :func:`universal.protocols.adversary.theorem25_adversary`.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from universal.errors import UserError
from universal.protocols.adversary import (MAX_PACKETS, check_protocol, forced_steps, fresh_rank_times,
                                           theorem25_adversary)

#: Largest butterfly dimension the adversary is offered (2 C 2^D packets, D + 1 runs of Q).
MAX_DIMENSION = 16


@dataclass
class AdversaryStudy:
    """What to build: every (D, C, Q) of the grid, and the seeds of the fresh-rank runs.

    Attributes
    ----------
    dims : list of int
        Butterfly dimensions D (the networks ``butterfly:d=D``).
    congestions : list of int
        Congestions C.
    protocols : list of str
        The deterministic non-predictive protocols Q played against.
    seeds : list of int
        Seeds of random rank's fresh ranks (as ``route --seed`` takes them).
    seed : int
        Seed of Q's fixed ranks (random-rank and growing-rank as Q only).
    name : str
    """

    dims: list[int]
    congestions: list[int]
    protocols: list[str]
    seeds: list[int] = field(default_factory=lambda: [1, 2, 3, 4, 5])
    seed: int = 0
    name: str = "adversary"

    def check(self) -> None:
        """Refuse (UserError) an empty axis, a size out of range or a protocol the adversary cannot
        play against, before anything is built."""
        if not self.dims or not self.congestions or not self.protocols or not self.seeds:
            raise UserError("the adversary needs at least one dimension, congestion, protocol and seed")
        for d in self.dims:
            if not 1 <= d <= MAX_DIMENSION:
                raise UserError(f"butterfly dimension d={d} is out of range for the adversary (1..{MAX_DIMENSION})")
        for c in self.congestions:
            if c < 1:
                raise UserError(f"congestion {c} must be at least 1")
            for d in self.dims:
                if 2 * c * 2 ** d > MAX_PACKETS:
                    raise UserError(f"C = {c} on BF({d}) would make {2 * c * 2 ** d:,} packets (2 C 2^D), over "
                                    f"the limit of {MAX_PACKETS:,}")
        for q in self.protocols:
            check_protocol(q)

    @property
    def cells(self) -> list[tuple[int, int, str]]:
        """(D, C, Q) in the order they run."""
        return list(itertools.product(self.dims, self.congestions, self.protocols))


@dataclass
class AdversaryRow:
    """One (D, C, Q): the problem's size and the two protocols' times on it.

    Attributes
    ----------
    network : str
    protocol : str
        Q.
    D, C : int
        Dilation and congestion of the problem's paths.
    packets : int
        2 C 2^D.
    T : int
        Q's steps on the problem.
    forced : int
        (D - 1)(floor(C/2) + 1) + C, what the construction forces on every greedy Q (at least C (D + 1)/2).
    T_fresh : float
        Random rank's mean T over ``seeds``, fresh ranks, same problem.
    T_fresh_min, T_fresh_max : int
    seeds : list of int
    """

    network: str
    protocol: str
    D: int
    C: int
    packets: int
    T: int
    forced: int
    T_fresh: float
    T_fresh_min: int
    T_fresh_max: int
    seeds: list[int]

    @property
    def ratio(self) -> float:
        """Q's T over random rank's mean T with fresh ranks."""
        return self.T / self.T_fresh

    @property
    def T_over_CD(self) -> float:
        """T / (C·D): the constant in Theorem 25's Ω(C·D)."""
        return self.T / (self.C * self.D)

    def to_json(self) -> dict:
        """The ``--json`` row: every field, with ``T_over_fresh`` and ``T_over_CD``."""
        return {**asdict(self), "T_over_fresh": round(self.ratio, 4), "T_over_CD": round(self.T_over_CD, 4)}


def run_adversary_study(study: AdversaryStudy, progress: Callable[[str], None] | None = None,
                        keep: bool = False) -> tuple[list[AdversaryRow], list]:
    """Build the adversary's problem for every (D, C, Q) and time Q and fresh random rank on it.

    Parameters
    ----------
    study : AdversaryStudy
    progress : callable, optional
        Called with a label before each cell.
    keep : bool
        Also return the :class:`~universal.protocols.adversary.AdversaryProblem` of every cell.

    Returns
    -------
    rows : list of AdversaryRow
    problems : list of AdversaryProblem (empty unless ``keep``)

    Examples
    --------
    >>> rows, _ = run_adversary_study(AdversaryStudy([3, 4], [4], ["fifo"], seeds=[1, 2]))
    >>> [(r.D, r.C, r.T, r.forced, r.T > r.T_fresh) for r in rows]
    [(3, 4, 10, 10, True), (4, 4, 13, 13, True)]

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §5, Theorem 25.
    """
    from universal.networks import butterfly

    study.check()
    rows, problems = [], []
    networks = {d: butterfly(d) for d in study.dims}
    for d, c, q in study.cells:
        if progress:
            progress(f"BF({d}), C = {c}, {q}")
        hard = theorem25_adversary(networks[d], q, c, seed=study.seed)
        fresh = fresh_rank_times(hard, study.seeds)
        rows.append(AdversaryRow(networks[d].name, q, d, c, hard.size, hard.T, forced_steps(c, d),
                                 float(np.mean(fresh)), min(fresh), max(fresh), list(study.seeds)))
        if keep:
            problems.append(hard)
    return rows, problems


def fit_growth(rows: list[AdversaryRow], protocol: str, fresh: bool = False) -> dict | None:
    """Least-squares fit of ``T = a·C·D + b·C + c·D + e`` over the rows of one protocol.

    The model holds the construction's exact time ((D - 1)(C/2 + 1) + C = C·D/2 + C/2 + D - 1
    for even C), so the coefficient of C·D separates the two behaviours: 1/2 for a
    deterministic Q, near 0 for random rank with fresh ranks (about C + D + log n).

    Parameters
    ----------
    rows : list of AdversaryRow
    protocol : str
        Q, whose rows are fitted.
    fresh : bool
        Fit random rank's mean T with fresh ranks instead of Q's T.

    Returns
    -------
    dict or None
        Coefficients by term (``"C·D"``, ``"C"``, ``"D"``, ``"1"``); the C·D term only when C and
        D both take two values or more, a term in C (D) only when C (D) varies; None when neither
        varies.

    Examples
    --------
    >>> rows = [AdversaryRow("b", "fifo", d, c, 0, c * d // 2 + c // 2 + d - 1, 0, 1, 1, 1, [])
    ...         for d in (2, 4, 6) for c in (2, 8)]
    >>> {k: round(v, 3) + 0.0 for k, v in fit_growth(rows, "fifo").items()}
    {'C·D': 0.5, 'C': 0.5, 'D': 1.0, '1': -1.0}
    """
    mine = [r for r in rows if r.protocol == protocol]
    varies = {name: len({getattr(r, name) for r in mine}) > 1 for name in ("C", "D")}
    if not any(varies.values()):
        return None
    terms = {"C·D": lambda r: r.C * r.D} if all(varies.values()) else {}
    terms.update({name: (lambda r, name=name: getattr(r, name)) for name in ("C", "D") if varies[name]})
    terms["1"] = lambda r: 1.0
    x = np.array([[float(f(r)) for f in terms.values()] for r in mine])
    y = np.array([r.T_fresh if fresh else r.T for r in mine], dtype=float)
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    return {name: float(v) for name, v in zip(terms, coef)}


__all__ = ["MAX_DIMENSION", "AdversaryRow", "AdversaryStudy", "fit_growth", "run_adversary_study"]
