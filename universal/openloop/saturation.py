"""Saturation throughput by search over the offered rate (SPEC §11; Singh, Dally, Gupta &
Towles, "GOAL: a load-balanced adaptive routing algorithm for torus networks", 2003, §2.1).

Θ is the largest offered rate at which a run is stable. The search keeps a bracket
``[lo, hi]`` with ``lo`` stable (0 at first) and ``hi`` unstable or the largest rate that can be
offered, and in each round simulates ``points`` rates spread evenly inside the bracket - all in
one batch of the fast engine, which costs little more than one run - then shrinks the bracket
around the rate that best separates the stable runs from the unstable ones. Bisection is the
case ``points = 1``. It stops when the bracket is narrower than ``tolerance`` times ``lo`` and
reports ``lo``.

Close to saturation a single verdict is noisy (the backlog of a network just below saturation
fluctuates slowly and widely; see :mod:`universal.openloop.measure`), and a rule "below the
lowest unstable rate" turns every false alarm into an answer that is too low. The bracket is
therefore placed at the *threshold* that misclassifies the fewest of all the runs so far (every
stable run should lie below it and every unstable one above it): ``lo`` is the highest stable
rate at or below it, ``hi`` the lowest unstable rate above it. When several thresholds tie, the
bracket spans them all, so that the next round samples the contradictory stretch again (and
``lo``, what is reported, is the conservative end). With consistent verdicts this is the plain
rule. If even the top of the injection process's range is stable, Θ is at least that
and the result says so (``limited``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from universal.errors import UserError
from universal.openloop.creation import RunSpec
from universal.openloop.engine import simulate_batch
from universal.openloop.measure import Measurement, RunResult

__all__ = ["Saturation", "rate_ceiling", "find_saturation", "separate"]


@dataclass
class Saturation:
    """The result of :func:`find_saturation` (rates in packets per node per step).

    Attributes
    ----------
    theta : float
        The largest stable rate found.
    upper : float
        The lowest unstable rate found (or the ceiling).
    limited : bool
        True if the ceiling itself was stable (Θ is at least ``theta``).
    runs : list of RunResult
        Every run of the search, in order.
    at_theta : RunResult or None
        The run at ``theta``.
    """

    theta: float
    upper: float
    limited: bool
    runs: list = field(default_factory=list)
    at_theta: RunResult | None = None


def rate_ceiling(spec: RunSpec, bandwidth: int = 1) -> float:
    """The largest rate worth trying: the injection process's limit, and for every sending node
    the rate at which the packets it sends to other nodes fill all its links.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.openloop.routes import build_router
    >>> from universal.openloop.workload import build_injection, offered_traffic
    >>> net = build_network("torus:k=8,n=2")
    >>> s = RunSpec(offered_traffic(net, "neighbor"), build_router("dor", net), build_injection("poisson"), 1.0)
    >>> rate_ceiling(s)
    4.0
    """
    tr = spec.traffic
    net = spec.router.network
    senders = tr.senders
    degree = np.bincount(net.link_tail, minlength=net.num_nodes)[senders]
    away = tr.rowsum[senders] - tr.matrix[senders, senders]
    with np.errstate(divide="ignore"):
        links = np.where(away > 0, degree * bandwidth / np.maximum(away, 1e-300), np.inf).min()
    inject = 1.0 / tr.rowsum[senders].max() if spec.injection.name != "poisson" else np.inf
    if spec.injection.name == "on-off":
        inject *= 0.999
    top = float(min(links, inject))
    if not np.isfinite(top):
        raise UserError("this traffic never leaves its sources; there is no saturation to find")
    return top


def find_saturation(spec: RunSpec, *, points: int = 8, tolerance: float = 0.01, rounds: int = 12,
                    bandwidth: int = 1, buffer: int | None = None, measurement: Measurement | None = None,
                    seeds=None, progress=None) -> Saturation:
    """Search the saturation rate Θ of ``spec``'s routing and traffic (see the module docstring).

    Parameters
    ----------
    spec : RunSpec
        Template; its ``rate`` is ignored, its seed seeds every run (one child per run).
    points : int
        Rates simulated per round, in one batch.
    tolerance : float
        Relative width of the final bracket.
    rounds : int
        At most this many rounds.
    bandwidth, buffer, measurement
        As for :func:`universal.openloop.engine.simulate_batch`.
    progress : callable, optional
        Called with the number of runs finished after each round.

    Returns
    -------
    Saturation

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.openloop.routes import build_router
    >>> from universal.openloop.workload import build_injection, offered_traffic
    >>> net = build_network("torus:k=8,n=1")
    >>> s = RunSpec(offered_traffic(net, "tornado"), build_router("dor", net), build_injection("bernoulli"), 1.0)
    >>> quick = Measurement(window=3000, latency_limit=300, drain=False, overload="stop")
    >>> sat = find_saturation(s, tolerance=0.03, measurement=quick)
    >>> 0.31 <= sat.theta <= 0.34 and sat.theta < sat.upper   # exact: 1/3 (3 flows on every + link)
    True
    """
    if points < 1 or not 0 < tolerance < 1:
        raise UserError("the saturation search needs points >= 1 and 0 < tolerance < 1")
    measurement = measurement or Measurement(latency_limit=500, drain=False, overload="stop")
    seq = np.random.SeedSequence(spec.seed if isinstance(spec.seed, (int, np.integer)) else None)
    ceiling = rate_ceiling(spec, bandwidth)
    lo, hi = 0.0, ceiling
    hi_tested = False
    runs: list[RunResult] = []
    for _ in range(rounds):
        if hi_tested and hi - lo <= tolerance * max(lo, 1e-12):
            break
        if not hi_tested:
            rates = lo + (hi - lo) * np.arange(1, points + 1) / points       # includes the ceiling
        else:
            rates = lo + (hi - lo) * np.arange(1, points + 1) / (points + 1)
        children = seq.spawn(len(rates))
        batch = [replace(spec, rate=float(r), seed=c) for r, c in zip(rates, children)]
        results = simulate_batch(batch, bandwidth=bandwidth, buffer=buffer, measurement=measurement)
        runs.extend(results)
        if progress is not None:
            progress(len(results))
        hi_tested = True
        lo, hi = separate([r.rate for r in runs], [r.stable for r in runs], ceiling)
        if lo >= ceiling:
            break
    best = max((r for r in runs if r.stable and r.rate == lo), key=lambda r: r.rate, default=None)
    return Saturation(lo, hi, lo >= ceiling, runs, best)


def separate(rates, stable, ceiling: float) -> tuple[float, float]:
    """The bracket ``(lo, hi)`` around the threshold that misclassifies the fewest runs.

    A threshold ``x`` misclassifies the stable runs above it and the unstable runs at or below
    it. ``lo`` is the highest stable rate at or below the lowest best threshold (0 if none),
    ``hi`` the lowest unstable rate above the highest best threshold (``ceiling`` if none).

    Examples
    --------
    >>> separate([0.1, 0.2, 0.3, 0.4], [True, True, False, False], 1.0)
    (0.2, 0.3)
    >>> separate([0.1, 0.2, 0.25, 0.3, 0.35, 0.4], [True, False, True, True, False, False], 1.0)  # one false alarm
    (0.3, 0.35)
    >>> separate([0.1, 0.2, 0.3, 0.4], [True, False, True, False], 1.0)    # a tie: sample 0.1-0.4 again
    (0.1, 0.4)
    """
    rates = np.asarray(rates, dtype=float)
    stable = np.asarray(stable, dtype=bool)
    order = np.argsort(rates, kind="stable")
    r, s = rates[order], stable[order]
    # candidate thresholds: 0 and every rate; errors(x) = unstable <= x + stable > x
    cands = np.concatenate([[0.0], np.unique(r)])
    unstable_le = np.searchsorted(r, cands, side="right") - np.searchsorted(r[s], cands, side="right")
    stable_gt = s.sum() - np.searchsorted(r[s], cands, side="right")
    errors = unstable_le + stable_gt
    best = cands[errors == errors.min()]
    below = r[s & (r <= best.min())]
    above = r[~s & (r > best.max())]
    return (float(below.max()) if len(below) else 0.0, float(above.min()) if len(above) else float(ceiling))
