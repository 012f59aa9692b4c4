"""The named algorithms beside the optimal tradeoff curve (TDB Figures 1 and 6).

Towles, Dally & Boyd, "Throughput-centric routing algorithm design" (2003), plot DOR, ROMM, VAL,
RLB, RLBth, IVAL and their 2TURN (2TURNA for the average case) as points beside the optimal
curve of throughput against locality; :func:`named_points` computes those points exactly and
:func:`locality_above_curve` says how far above the curve each one lies.
"""

from __future__ import annotations

import numpy as np

from universal.paths.torus.geometry import Torus

from . import DEFAULT_SAMPLES, evaluate_routing

__all__ = ["NAMED", "named_points", "locality_above_curve", "curve_key"]

#: The algorithms plotted beside the curve, in TDB's order.
NAMED = ("dor", "romm", "val", "rlb", "rlbth", "ival")


def curve_key(objective: str) -> str:
    """The figure a curve of ``objective`` is drawn against (``throughput_worst`` ...)."""
    return {"worst-case": "throughput_worst", "average-case": "throughput_average",
            "capacity": "throughput_capacity"}[objective]


def named_points(torus: Torus, objective: str, samples: int = DEFAULT_SAMPLES, seed: int = 0,
                 include_designed: bool = True, progress=None) -> dict[str, dict]:
    """Exact figures of the named algorithms (and 2TURN or 2TURNA) on ``torus``.

    Parameters
    ----------
    torus : Torus
    objective : str
        ``worst-case`` adds 2TURN, ``average-case`` 2TURNA.
    samples, seed : int
        The average-case sample (and the held-out one from ``seed + 1``).
    include_designed : bool
        Also the LP-designed 2TURN/2TURNA (designed once, then cached).
    progress : callable, optional
        Called with the name of each algorithm as it starts.

    Returns
    -------
    dict
        Name -> figures of :func:`universal.design.evaluate_routing`.

    Examples
    --------
    >>> p = named_points(Torus(4, 2), "worst-case", samples=5, include_designed=False)
    >>> round(p["dor"]["throughput_worst"], 4), p["val"]["locality"]
    (0.3333, 2.0)
    """
    names = list(NAMED)
    if include_designed:
        names.append("2turna" if objective == "average-case" else "2turn")
    out = {}
    for name in names:
        if progress is not None:
            progress(name)
        out[name] = evaluate_routing(name, torus, samples, seed)
    return out


def locality_above_curve(curve: list, figures: dict) -> float | None:
    """How far (relative) a routing's locality lies above the curve at its own throughput.

    The curve's optimal locality at throughput ``x`` is read by linear interpolation between
    the solved points (the exact curve is piecewise linear between LP breakpoints, so this is an
    estimate between points and exact at them).

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> c = [R(objective="worst-case", lp_throughput=0.3, locality=1.0),
    ...      R(objective="worst-case", lp_throughput=0.5, locality=1.5)]
    >>> round(locality_above_curve(c, {"throughput_worst": 0.4, "locality": 1.5}), 4)
    0.2
    """
    x = figures.get(curve_key(curve[0].objective))
    if x is None:
        return None
    th = np.array([r.lp_throughput for r in curve])
    loc = np.array([r.locality for r in curve])
    order = np.argsort(th)
    best = float(np.interp(min(x, th.max()), th[order], loc[order]))
    return figures["locality"] / best - 1.0
