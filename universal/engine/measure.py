"""Measurement of an open-loop run: warm-up, labelled window, drain, stability (SPEC §11;
Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003, §2.2 and §5.1).

Every run goes through four phases, decided at the end of every period of 100 steps:

1. *warm-up*: packets are created and routed but not measured. Every 100 steps (a *period*;
   every phase starts and ends on a period boundary, and windows are whole periods)
   the mean backlog (packets in the network, source queues included) of the last period is
   compared with the one before; the warm-up ends at the first comparison, after
   ``warmup_min`` steps, where it grew by at most ``change`` (1%) plus one packet, and at
   ``warmup_max`` at the latest. (GOAL waits until no queue changes by more than 1% over 100
   cycles. A network filling up from empty grows period after period; once it stops growing
   it is in its steady state, whose step-to-step noise is far above 1% for small backlogs, so
   only growth is tested, on period means.)
2. *window*: ``window`` steps; the packets created in it are labelled. The run's accepted
   rate of a sending node is the number of its packets delivered during the window per step
   (divided by its row sum, so that it compares with the offered rate); ``accepted`` (GOAL's
   α*) is their mean and ``accepted_min`` (α') their minimum. The backlog is sampled every
   step for the stability test.
3. *drain*: creation goes on (the labelled packets see the same load) until every labelled
   packet is delivered; latency and hops are the labelled packets'. The drain is capped at
   ``drain_limit`` steps (status ``drain-limit``, unstable).
4. *done*.

Stability: a least-squares line through the window's backlog samples; the run is *stable*
when its slope is at most an allowance: ``tolerance`` times the packets offered per step (in a
stable network the backlog does not grow; beyond saturation it grows by the offered rate minus
the accepted one), or less when the backlog is steady enough to resolve less; before the last
extension a run is stable only with two standard errors to spare. An overload confined to a
few channels grows the backlog by only the excess of those channels, a small fraction of
everything offered (RLBth under hot-spot traffic on the 8-ary 2-cube has two bottleneck
channels: at 5% beyond saturation the backlog grows by 0.11 packets per step, below 0.5% of
the 25 offered), while the backlog of such a run fluctuates little. So the allowance is at
most ``noise`` times the slope's standard error (from the per-period backlog means of the
stretch, widened for their lag-1 autocorrelation, :func:`slope_standard_error`), and at least
``tolerance`` times B. A slope above the allowance but below ``unclear`` times it is what a
stable run close to saturation shows while its queues still fill (near saturation the queues relax over
thousands of steps, and the backlog's slow fluctuations make a short window's slope noisy:
on the 8-ary 2-cube at 97% of saturation a 1000-step slope scatters by more than the
tolerance): the window is then doubled, up to ``extensions`` times, and judged on the new
stretch alone - everything before it serves as further warm-up, so a settling run is judged
when it has settled, and the longer stretch averages the fluctuations out. After the last
extension the slope decides alone (see :func:`stability_verdict`). An unstable run skips the
drain (its latency has no steady state); ``drain=False`` skips it always.

Overload: a run whose backlog passes ``latency_limit`` steps' worth of offered packets (or,
when less, of the packets any stable run could deliver, :func:`deliverable_per_step`: a run
offered more than that is beyond saturation anyway, and the cap bounds the memory of the
searches' runs far beyond it) during the warm-up is far beyond saturation. Its window starts at once (``overload="measure"``, the
default: α* and α' are still measured), or it stops as unstable (``overload="stop"``, status
``backlog-limit``: the saturation search needs only the verdict). With ``overload="stop"`` the
limit ends a run in its window too (``stop_in_window``, checked every period): by Little's law
such a backlog means that the packets in the network spend ``latency_limit`` steps in it on
average, where a stable run's mean latency is finite and beyond saturation it grows without
bound (Singh et al. §2.2), so the run is declared beyond saturation at once, as BookSim stops
a simulation whose mean latency passes its latency threshold (Jiang et al., "A detailed and
flexible cycle-accurate network-on-chip simulator", 2013), instead of running its window (and
up to ``extensions`` doublings of it) while its backlog, and the pass over it every step,
keeps growing. ``benchmarks/saturation_profile.py --check-window`` runs the runs it stopped
again with the full window and compares the verdicts: in the GOAL comparison's 48 searches it
stopped 3 runs in their window, and all 3 full runs are unstable as well (docs/performance.md).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field

import numpy as np

from universal.errors import UserError

__all__ = ["Measurement", "RunResult", "WARMUP", "WINDOW", "DRAIN", "DONE", "stability_verdict",
           "slope_standard_error", "deliverable_per_step"]

WARMUP, WINDOW, DRAIN, DONE = 0, 1, 2, 3

#: Phases change only every PERIOD steps (the creation chunk of :mod:`universal.engine.creation`).
PERIOD = 100


@dataclass(frozen=True)
class Measurement:
    """How long an open-loop run warms up, measures and drains (see the module docstring).

    ``steps``, if given, replaces all of it: exactly that many steps, every packet recorded
    (the equivalence tests' mode); with ``until_delivered`` (the batch model) a run ends, status
    ``drained``, as soon as every packet it created is delivered, and with ``record_crossings``
    its result holds every link crossing, ``(step, packet, link)``. ``stop_in_window=False``
    applies ``overload="stop"`` to the warm-up only (the full window: what the tests compare with).
    ``latencies=False`` keeps no labelled packet's latency (a stable run's latency statistics
    and ``labelled_packets`` are None; everything else is measured as always): a saturation
    search needs only the verdicts, and near saturation the records of millions of labelled
    packets, most of them in runs that turn out unstable, were most of its memory.
    ``window=None`` takes ``max(1000, ceil(200 / rate))`` steps,
    about 200 labelled packets per node at least (GOAL labels 100/load cycles).
    """

    warmup_min: int = 300
    warmup_max: int = 5000
    change: float = 0.01
    window: int | None = None
    drain_limit: int | None = None
    tolerance: float = 0.005
    latency_limit: int = 2000
    unclear: float = 6.0
    extensions: int = 3
    noise: float = 4.0
    drain: bool = True
    overload: str = "measure"
    stop_in_window: bool = True
    latencies: bool = True
    steps: int | None = None
    until_delivered: bool = False
    record_crossings: bool = False

    def window_for(self, rate: float) -> int:
        """The measurement window in steps at ``rate`` packets per node per step (a multiple of the
        phase period, 100 steps)."""
        steps = self.window if self.window is not None else max(1000, math.ceil(200 / rate))
        return -(-steps // PERIOD) * PERIOD

    def drain_for(self, rate: float) -> int:
        return self.drain_limit if self.drain_limit is not None else 4 * self.window_for(rate) + 1000

    def check(self) -> None:
        if self.steps is not None:
            if self.steps < 1:
                raise UserError("a fixed-length run needs at least one step")
            return
        if self.window is not None and self.window < 10:
            raise UserError(f"a measurement window of {self.window} steps is too short to measure anything "
                            "(at least 10 steps; the default is 1000 or more)")
        if not 0 <= self.warmup_min <= self.warmup_max:
            raise UserError("warm-up needs 0 <= minimum <= maximum")
        if self.tolerance <= 0 or self.latency_limit < 1:
            raise UserError("stability tolerance and latency limit must be positive")


@dataclass
class RunResult:
    """The measured outcome of one open-loop run (rates in packets per node per step).

    Attributes
    ----------
    rate : float
        Offered rate.
    accepted, accepted_min : float
        GOAL's α* and α' over the sending nodes (see :mod:`universal.engine.measure`).
    latency_mean, latency_p50, latency_p99, latency_max, hops_mean : float or None
        Over the labelled packets (None when the run was unstable or nothing was labelled).
    stable : bool
    status : str
        ``stable``, ``unstable``, ``backlog-limit``, ``drain-limit`` or ``deadlock``.
    warmup, window, drain : int
        Steps spent in each phase.
    slope : float
        Backlog growth per step over the window (least squares).
    labelled : int
        Packets created in the window.
    """

    rate: float
    accepted: float = 0.0
    accepted_min: float = 0.0
    latency_mean: float | None = None
    latency_p50: float | None = None
    latency_p99: float | None = None
    latency_max: float | None = None
    hops_mean: float | None = None
    stable: bool = False
    status: str = ""
    warmup: int = 0
    window: int = 0
    drain: int = 0
    slope: float = 0.0
    labelled: int = 0
    steps: int = 0
    labelled_packets: tuple | None = field(default=None, repr=False)
    records: dict | None = field(default=None, repr=False)

    def pair_latency(self, source: int, dest: int) -> tuple[float, float, int] | None:
        """Mean latency, mean hops and count of the labelled packets ``source -> dest`` (None if none)."""
        if self.labelled_packets is None:
            return None
        src, dst, lat, hops = self.labelled_packets
        mine = (src == source) & (dst == dest)
        if not mine.any():
            return None
        return float(lat[mine].mean()), float(hops[mine].mean()), int(mine.sum())


def regression_slope(n: float, sx: float, sy: float, sxy: float, sxx: float) -> float:
    """Least-squares slope from the sums of x, y, xy, x^2 over n points (0 if undefined).

    Examples
    --------
    >>> regression_slope(3, 3, 6, 8, 5)     # points (0,1) (1,2) (2,3)
    1.0
    """
    den = n * sxx - sx * sx
    return (n * sxy - sx * sy) / den if den > 0 else 0.0


def slope_standard_error(means, period: int) -> float | None:
    """Standard error of the least-squares slope through per-period means ``means`` (one per
    ``period`` steps), widened for the residuals' lag-1 autocorrelation r by sqrt((1+r)/(1-r))
    (r corrected for its small-sample bias, clipped to [0, 0.95]). None for fewer than 4 means.

    A backlog near saturation relaxes over thousands of steps, so neighbouring means are far
    from independent; even so, this estimate is about half the slope's real scatter there
    (measured on the 8-ary 2-cube), which ``Measurement.noise`` allows for.

    Examples
    --------
    >>> slope_standard_error([10.0, 11.0, 12.0, 13.0, 14.0], 100)    # on a line: no scatter
    0.0
    >>> round(slope_standard_error([10.0, 12.0, 10.0, 12.0, 10.0, 12.0], 100), 5)   # r < 0: plain OLS
    0.0028
    """
    y = np.asarray(means, dtype=float)
    M = len(y)
    if M < 4:
        return None
    x = (np.arange(M) + 0.5) * period
    xc = x - x.mean()
    b = (xc @ (y - y.mean())) / (xc @ xc)
    e = y - y.mean() - b * xc
    ee = float(e @ e)
    if ee <= 1e-12 * max(1.0, float(y @ y)):
        return 0.0
    r = float(e[1:] @ e[:-1]) / ee
    r = min(max(r + (1 + 4 * r) / M, 0.0), 0.95)
    return float(np.sqrt(ee / (M - 2) / (xc @ xc) * (1 + r) / (1 - r)))


def stability_verdict(slope: float, offered_per_step: float, extensions_done: int, m: Measurement,
                      noise: float | None = None, bandwidth: int = 1) -> str:
    """The stability test at the end of a window stretch (see the module docstring).

    Parameters
    ----------
    slope : float
        Least-squares growth of the backlog per step over the stretch.
    offered_per_step : float
        Packets the run offers per step (all nodes).
    extensions_done : int
        How many times the window was doubled already.
    m : Measurement
    noise : float, optional
        The slope's standard error (:func:`slope_standard_error`); None leaves the allowance at
        ``tolerance`` x offered.
    bandwidth : int
        B, the floor of the allowance being ``tolerance`` x B.

    Returns
    -------
    str
        ``"stable"`` (slope at most the allowance, by two standard errors while the window can
        still be doubled: a short stretch of a run just beyond saturation can show no growth),
        ``"unstable"`` (above ``unclear`` times the allowance, or above it once the extensions
        are used up) or ``"extend"``.

    Examples
    --------
    >>> m = Measurement()                     # tolerance 0.5%, unclear x6, 3 extensions
    >>> [stability_verdict(s, 100.0, 0, m) for s in (0.4, 2.0, 4.0)]
    ['stable', 'extend', 'unstable']
    >>> stability_verdict(2.0, 100.0, 3, m)
    'unstable'
    >>> stability_verdict(0.1, 100.0, 0, m, noise=0.01)   # a steady backlog: allowance 4 x 0.01
    'extend'
    >>> stability_verdict(0.03, 100.0, 0, m, noise=0.01), stability_verdict(0.01, 100.0, 0, m, noise=0.01)
    ('extend', 'stable')
    """
    allowed = m.tolerance * offered_per_step
    margin = 0.0
    if noise is not None:
        allowed = min(allowed, max(m.noise * noise, m.tolerance * bandwidth))
        margin = 2 * noise
    last = extensions_done >= m.extensions
    if slope + (0.0 if last else margin) <= allowed:
        return "stable"
    if slope <= m.unclear * allowed and not last:
        return "extend"
    return "unstable"


_DELIVERABLE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def deliverable_per_step(traffic, network, bandwidth: int = 1) -> float:
    """The most packets per step that any run of ``traffic`` can deliver on ``network`` in a
    steady state: every packet crosses at least as many links as its source is from its
    destination, and the links cross at most ``bandwidth`` packets each per step, so the
    delivered packets per step are at most ``L B / H``, ``H`` the traffic's mean distance
    (infinite when ``H`` is 0, or when the network has no cheap distances).

    By Little's law a stable run's mean backlog is its throughput times its mean latency, so a
    run with a mean latency of at most ``T`` steps holds at most ``T`` times this many packets,
    however much is offered: the cap of the backlog limit (see the module docstring).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=8,n=2")
    >>> deliverable_per_step(offered_traffic(net, "uniform"), net)    # 256 links, 4 hops on average
    64.0
    """
    # Keyed by the objects themselves, weakly: an ``id`` could be reused by a later network
    # while the traffic lives on.
    known = _DELIVERABLE.setdefault(traffic, weakref.WeakKeyDictionary()).setdefault(network, {})
    key = bandwidth
    if key not in known:
        m = np.asarray(traffic.matrix, dtype=float)
        src, dst = np.nonzero(m)
        dist = network.distances(src, dst) if len(src) else None
        hops = float((m[src, dst] * dist).sum() / m[src, dst].sum()) if dist is not None else 0.0
        known[key] = network.num_links * bandwidth / hops if hops > 0 else math.inf
    return known[key]


def latency_summary(latency: np.ndarray, hops: np.ndarray) -> dict:
    """Mean, median, 99th percentile and max latency and mean hops (None for no packets)."""
    if not len(latency):
        return dict(latency_mean=None, latency_p50=None, latency_p99=None, latency_max=None, hops_mean=None)
    return dict(latency_mean=float(latency.mean()), latency_p50=float(np.percentile(latency, 50)),
                latency_p99=float(np.percentile(latency, 99)), latency_max=float(latency.max()),
                hops_mean=float(hops.mean()))
