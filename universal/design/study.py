"""A design study: the tradeoff curves of several objectives on one torus with the named
algorithms beside them (the ``kind = "design"`` scenario, e.g. ``tdb_tradeoff``).

It reproduces the comparison of Towles, Dally & Boyd, "Throughput-centric routing algorithm
design" (2003), Figures 1 and 6: for each objective the optimal curve of throughput against
locality, and DOR, ROMM, VAL, RLB, RLBth, IVAL with 2TURN (worst case) or 2TURNA (average case),
each with its worst-case and average-case throughput, locality and distance to the curve.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import DEFAULT_SAMPLES, DesignResult, evaluate_routing, torus_of, tradeoff
from .tradeoffs import NAMED, locality_above_curve

__all__ = ["DesignStudy", "StudyResult", "run_study"]


@dataclass
class DesignStudy:
    """What to compute.

    Attributes
    ----------
    network : str
        ``torus:k=K,n=N``.
    objectives : list of str
        ``worst-case`` and/or ``average-case`` (one curve each).
    paths : str
        Path family of the curves.
    points : int
        Locality bounds per curve.
    samples, seed : int
        The average-case sample (held out: seed + 1).
    name : str
    """

    network: str
    objectives: list[str] = field(default_factory=lambda: ["worst-case", "average-case"])
    paths: str = "all"
    points: int = 8
    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    name: str = ""


@dataclass
class StudyResult:
    """Curves per objective and the named algorithms' exact figures.

    Attributes
    ----------
    study : DesignStudy
    curves : dict
        Objective -> list of DesignResult.
    points : dict
        Algorithm name -> figures (worst, average, held-out average, locality).
    gaps : dict
        Objective -> {algorithm: locality above that curve at the algorithm's throughput}.
    """

    study: DesignStudy
    curves: dict[str, list[DesignResult]]
    points: dict[str, dict]
    gaps: dict[str, dict[str, float | None]]

    def to_json(self) -> dict:
        """JSON-ready: the study's settings, curves, algorithms and gaps."""
        s = self.study
        return {"name": s.name, "network": s.network, "paths": s.paths, "samples": s.samples, "seed": s.seed,
                "curves": {o: [r.as_dict() for r in c] for o, c in self.curves.items()},
                "algorithms": self.points, "above_curve": self.gaps}


def run_study(study: DesignStudy, progress=None) -> StudyResult:
    """Solve every curve and evaluate every named algorithm.

    Parameters
    ----------
    study : DesignStudy
    progress : callable, optional
        Called with a short label as each step starts.

    Returns
    -------
    StudyResult

    Examples
    --------
    >>> r = run_study(DesignStudy("torus:k=4,n=2", ["worst-case"], points=2, samples=4))
    >>> round(r.gaps["worst-case"]["dor"], 6), round(r.points["val"]["throughput_worst"], 6)
    (0.0, 0.5)
    """
    torus = torus_of(study.network)
    curves = {}
    for obj in study.objectives:
        if progress is not None:
            progress(f"{obj} curve")
        curves[obj] = tradeoff(torus, obj, study.paths, study.points, samples=study.samples, seed=study.seed)
    names = list(NAMED) + [{"worst-case": "2turn", "average-case": "2turna"}[o] for o in study.objectives
                           if o in ("worst-case", "average-case")]
    points: dict[str, dict] = {}
    for name in names:
        if progress is not None:
            progress(name)
        points[name] = evaluate_routing(name, torus, study.samples, study.seed)
    gaps = {obj: {name: locality_above_curve(curve, f) for name, f in points.items()}
            for obj, curve in curves.items()}
    return StudyResult(study, curves, points, gaps)
