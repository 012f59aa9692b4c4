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
fluctuates slowly and widely; see :mod:`universal.engine.measure`), and a rule "below the
lowest unstable rate" turns every false alarm into an answer that is too low. The bracket is
therefore placed at the *threshold* that misclassifies the fewest of all the runs so far (every
stable run should lie below it and every unstable one above it): ``lo`` is the highest stable
rate at or below it, ``hi`` the lowest unstable rate above it. When several thresholds tie, the
bracket spans them all, so that the next round samples the contradictory stretch again (and
``lo``, what is reported, is the conservative end). With consistent verdicts this is the plain
rule. If even the top of the injection process's range is stable, Θ is at least that
and the result says so (``limited``). Where the traffic's *hop bound* is lower (:func:`hop_bound`:
the rate at which even shortest paths would keep every link busy, beyond which no run is
stable), the bracket's upper end is that bound, unstable without a run: the first round spreads
over ``[0, bound]`` (on the 8-ary 2-cube a quarter of the node ceiling for uniform traffic)
instead of sampling rates that are certainly beyond saturation.

A search may be given a *start*, a rate near which Θ is expected (the exact Θ of an oblivious
routing in the ideal network, :mod:`universal.oblivious`, for which the simulation and the
analysis are two methods for one model). Its first round then samples a grid around the start,
neighbouring rates ``1 + 0.45 tolerance`` apart (from 0.95 to 1.01 times the start for 8 points
and tolerance 0.02), instead of spreading over ``[0, ceiling]``; the bracket rule above goes on
from those runs unchanged, so the simulation still decides Θ: if every run of the grid is stable
the next round searches from its top to the ceiling, if none is, from 0 to its bottom. The grid
is offset by half a step, so that the start itself is never one of its rates. Where the
simulated Θ lies inside the grid, one round of runs near Θ decides it, instead of three or more
rounds, the first mostly of runs far beyond saturation.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from universal.errors import UserError
from universal.engine.creation import RunSpec
from universal.engine.runs import simulate_batch
from universal.engine.measure import Measurement, RunResult, deliverable_per_step

__all__ = ["Saturation", "rate_ceiling", "hop_bound", "start_grid", "find_saturation", "find_saturations",
           "separate"]


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
        Every run of the search, in order. A run's labelled packets (``labelled_packets``) are
        kept only while its rate is the bracket's lower end (a search's stable runs near Θ hold
        up to millions of them; their summaries stay).
    at_theta : RunResult or None
        The run at ``theta`` (with its labelled packets, unless the bracket's lower end left its
        rate and came back to it).
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
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
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


def hop_bound(spec: RunSpec, bandwidth: int = 1) -> float:
    """The rate (packets per node per step) at which ``spec``'s traffic would keep every link
    of the network busy even on shortest paths (:func:`universal.engine.measure.deliverable_per_step`
    over the packets offered per step at rate 1). No run is stable at or above it: with random
    arrivals a network whose every link is fully loaded has no steady state, so Θ lies below it.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=8,n=2")
    >>> s = RunSpec(offered_traffic(net, "uniform"), build_router("goal", net), build_injection("poisson"), 1.0)
    >>> hop_bound(s), rate_ceiling(s)       # 4 hops on average over 256 links; 4 links per node
    (1.0, 4.063492063492063)
    """
    return deliverable_per_step(spec.traffic, spec.router.network, bandwidth) / float(spec.traffic.rowsum.sum())


def find_saturation(spec: RunSpec, *, points: int = 8, tolerance: float = 0.01, rounds: int = 12,
                    bandwidth: int = 1, buffer: int | None = None, measurement: Measurement | None = None,
                    seeds=None, progress=None, vcs: int = 1, source_queue: str = "all",
                    vc_buffer: str = "set") -> Saturation:
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
    bandwidth, buffer, measurement, vcs, source_queue, vc_buffer
        As for :func:`universal.engine.runs.simulate_batch`.
    progress : callable, optional
        Called with the number of runs finished after each round.

    Returns
    -------
    Saturation

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=8,n=1")
    >>> s = RunSpec(offered_traffic(net, "tornado"), build_router("dor", net), build_injection("bernoulli"), 1.0)
    >>> quick = Measurement(window=3000, latency_limit=300, drain=False, overload="stop")
    >>> sat = find_saturation(s, tolerance=0.03, measurement=quick)
    >>> 0.31 <= sat.theta <= 0.34 and sat.theta < sat.upper   # exact: 1/3 (3 flows on every + link)
    True
    """
    return find_saturations([spec], points=points, tolerance=tolerance, rounds=rounds, bandwidth=bandwidth,
                            buffer=buffer, measurement=measurement, progress=progress, vcs=vcs,
                            source_queue=source_queue, vc_buffer=vc_buffer)[0]


def _own_sequence(seed) -> np.random.SeedSequence:
    """A search's own copy of its spec's seed, whose children are the same however often the
    caller's SeedSequence has spawned before (a SeedSequence counts its spawns).

    Examples
    --------
    >>> parent = np.random.SeedSequence(7)
    >>> first = _own_sequence(parent).spawn(1)[0].generate_state(1)
    >>> _ = parent.spawn(3)
    >>> bool((_own_sequence(parent).spawn(1)[0].generate_state(1) == first).all())
    True
    """
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.SeedSequence(int(seed))
    raise ValueError(f"a run's seed is an integer or a numpy SeedSequence, not {type(seed).__name__}")


class _Search:
    """The bracket of one search between rounds (see the module docstring)."""

    def __init__(self, spec: RunSpec, points: int, tolerance: float, bandwidth: int,
                 start: float | None = None) -> None:
        self.spec, self.points, self.tolerance = spec, points, tolerance
        self.seq = _own_sequence(spec.seed)
        self.lo, self.hi = 0.0, rate_ceiling(spec, bandwidth)
        self.ceiling = self.hi
        self.hi_tested = False
        bound = hop_bound(spec, bandwidth)
        if bound < self.ceiling:    # unstable without a run: the bracket's known upper end
            self.ceiling = self.hi = bound
            self.hi_tested = True
        self.runs: list[RunResult] = []
        self.result: Saturation | None = None
        self.rates = np.empty(0)
        self.grid = start_grid(start, points, tolerance) if start is not None and start > 0 else None
        if self.grid is not None and self.grid[-1] >= self.ceiling:
            self.grid = None        # Θ at or near the ceiling: the ceiling is tested as usual

    def next_round(self) -> list[RunSpec]:
        """The runs of the next round (none when the bracket is narrow enough)."""
        lo, hi, points = self.lo, self.hi, self.points
        if self.hi_tested and hi - lo <= self.tolerance * max(lo, 1e-12):
            self.finish()
            return []
        if self.grid is not None and not self.runs:
            self.rates = self.grid
        elif not self.hi_tested:
            self.rates = lo + (hi - lo) * np.arange(1, points + 1) / points       # includes the ceiling
        else:
            self.rates = lo + (hi - lo) * np.arange(1, points + 1) / (points + 1)
        children = self.seq.spawn(len(self.rates))
        return [replace(self.spec, rate=float(r), seed=c) for r, c in zip(self.rates, children)]

    def take(self, results: list[RunResult]) -> None:
        """Place the bracket around the threshold that best separates all runs so far."""
        self.runs.extend(results)
        self.lo, self.hi = separate([r.rate for r in self.runs], [r.stable for r in self.runs], self.ceiling)
        # the ceiling is tested unless an unstable run (or the hop bound) already bounds the bracket
        self.hi_tested = self.hi_tested or self.hi < self.ceiling or any(r.rate >= self.ceiling for r in self.runs)
        for r in self.runs:     # only a run at the lower end can become at_theta
            if r.rate != self.lo:
                r.labelled_packets = None
        if self.lo >= self.ceiling:
            self.finish()

    def finish(self) -> None:
        if self.result is None:
            best = max((r for r in self.runs if r.stable and r.rate == self.lo), key=lambda r: r.rate, default=None)
            self.result = Saturation(self.lo, self.hi, self.lo >= self.ceiling, self.runs, best)


def start_grid(start: float, points: int, tolerance: float) -> np.ndarray:
    """The first round's rates of a search started near ``start`` (see the module docstring):
    ``points`` rates ``1 + 0.45 tolerance`` apart, from ``points - 2.5`` steps below ``start``
    to 1.5 steps above it (a simulated Θ may pass the exact one by a little: the stability
    test resolves a growth of the backlog down to ``Measurement.tolerance`` of the offered
    packets). The steps are half the tolerance: Θ is the bracket's lower end, on average half
    a step below where the verdicts turn, and a search whose last bracket is as wide as the
    tolerance would report a Θ about one percent lower than the rounds of the plain search,
    whose last bracket is mostly much narrower than the tolerance.

    Examples
    --------
    >>> [round(float(r), 4) for r in start_grid(1.0, 8, 0.02)]
    [0.9519, 0.9605, 0.9691, 0.9778, 0.9867, 0.9955, 1.0045, 1.0135]
    """
    ratio = 1 + 0.45 * tolerance
    return start * ratio ** (np.arange(points) - (points - 2.5))


def find_saturations(specs: list[RunSpec], *, points: int = 8, tolerance: float = 0.01, rounds: int = 12,
                     bandwidth: int = 1, buffer: int | None = None, measurement: Measurement | None = None,
                     batch_runs: int = 64, progress=None, vcs: int = 1,
                     source_queue: str = "all", starts: list | None = None,
                     vc_buffer: str = "set") -> list[Saturation]:
    """:func:`find_saturation` for several specs at once, their rounds run together.

    Round by round, the runs of every search still open go through the fast engine in batches
    of about ``batch_runs`` runs (whole searches per batch), so that a step's fixed cost is
    shared by many runs; each search draws its seeds as it would alone, and a run does not
    depend on the runs batched with it, so every search ends exactly as alone.

    Parameters
    ----------
    specs : list of RunSpec
        One template per search (sharing one network object and priority rule).
    points, tolerance, rounds, bandwidth, buffer, measurement, progress, vcs, source_queue, vc_buffer
        As for :func:`find_saturation`.
    batch_runs : int
        Runs per batch of the engine, at most (whole searches per batch, fewer on networks of
        more than 64 nodes); bounds the memory.
    starts : list of float or None, optional
        Per spec, a rate near which Θ is expected (the exact Θ of an oblivious routing), or
        None: the first round samples a grid around it (:func:`start_grid`) instead of
        ``[0, ceiling]``; the simulation still decides Θ (see the module docstring).

    Returns
    -------
    list of Saturation, one per spec.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=8,n=1")
    >>> s = [RunSpec(offered_traffic(net, t), build_router("dor", net), build_injection("bernoulli"), 1.0)
    ...      for t in ("tornado", "neighbor")]
    >>> quick = Measurement(window=2000, latency_limit=300, drain=False, overload="stop")
    >>> tornado, neighbor = find_saturations(s, tolerance=0.05, measurement=quick)
    >>> tornado.theta == find_saturation(s[0], tolerance=0.05, measurement=quick).theta
    True
    >>> neighbor.limited, neighbor.theta         # bernoulli offers at most one packet per node and step
    (True, 1.0)
    """
    if points < 1 or not 0 < tolerance < 1:
        raise UserError("the saturation search needs points >= 1 and 0 < tolerance < 1")
    measurement = measurement or Measurement(latency_limit=500, drain=False, overload="stop")
    starts = starts if starts is not None else [None] * len(specs)
    searches = [_Search(spec, points, tolerance, bandwidth, start) for spec, start in zip(specs, starts)]
    # a run far beyond saturation holds up to latency_limit steps of offered packets before it
    # stops, so larger networks batch fewer searches (8 on 64 nodes, 1 from 512 nodes up)
    nodes = specs[0].router.network.num_nodes if specs else 1
    per_batch = max(1, min(batch_runs // points, 512 // nodes))
    for _ in range(rounds):
        todo = [(s, s.next_round()) for s in searches if s.result is None]
        todo = [(s, runs) for s, runs in todo if runs]
        if not todo:
            break
        # oblivious and adaptive searches never share a batch (the adaptive kernel's pass over
        # the waiting packets costs about three times the oblivious one's per packet)
        kinds = [[(s, runs) for s, runs in todo if s.spec.router.adaptive == flag] for flag in (False, True)]
        groups = [part[i:i + per_batch] for part in kinds for i in range(0, len(part), per_batch)]
        for group in groups:
            batch = [run for _, runs in group for run in runs]
            results = simulate_batch(batch, bandwidth=bandwidth, buffer=buffer, measurement=measurement, vcs=vcs,
                                     source_queue=source_queue, vc_buffer=vc_buffer)
            at = 0
            for search, runs in group:
                search.take(results[at:at + len(runs)])
                at += len(runs)
            if progress is not None:
                progress(len(results))
    for s in searches:
        s.finish()
    return [s.result for s in searches]


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
