"""Latency histograms of labelled packets, the per-hop router delay and the summary of saturation
throughput over random permutations (SPEC §11, §13; Singh, Dally, Gupta & Towles, "GOAL: a
load-balanced adaptive routing algorithm for torus networks", 2003, §5.3-§5.4, Figures 9-12).

A latency histogram is stored exactly, as counts of equal integer bins::

    {"start": 4, "width": 1, "counts": [812, 203, 41, 9, 2], "packets": 1067}

bin ``i`` holds the packets whose latency (steps from creation to delivery, the router delay
included) lies in ``[start + i*width, start + (i+1)*width)``. The width is 1 unless the
latencies span more than :data:`MAX_STORED_BINS` steps (a run close to saturation); the table
and the plot merge bins further to fit the screen.

The router delay ``t`` models a pipelined router: every hop costs ``t`` more steps, so a packet
of ``h`` hops and measured latency ``T`` has latency ``T + t*h``. Throughput is unchanged (the
delay is a fixed extra per hop, added after the run), so latencies can be set beside those of a
router with a ``t + 1``-stage pipeline.

Pooling translates (a pair's latencies pooled with those of its ``N`` translates on a torus or
hypercube) is in :mod:`universal.openloop.translates`; its names are imported back here.
"""

from __future__ import annotations

import math

import numpy as np

from universal.errors import UserError
from universal.openloop.translates import (MAX_CHECKED_PAIRS, Translations, check_invariant_routing,  # noqa: F401
                                           check_invariant_traffic, translate_mask, translations_of)

__all__ = ["MAX_STORED_BINS", "MAX_ROUTER_DELAY", "latency_histogram", "display_bins", "delayed_latency",
           "pair_mask", "check_router_delay", "permutation_summary", "theta_bins", "Translations",
           "translations_of", "check_invariant_traffic", "check_invariant_routing", "translate_mask",
           "MAX_CHECKED_PAIRS"]


#: Most bins a stored histogram has (a wider span of latencies gets bins wider than one step).
MAX_STORED_BINS = 2000
#: Largest router delay, in steps per hop (a delay beyond this measures nothing useful).
MAX_ROUTER_DELAY = 10_000


def check_router_delay(delay: object) -> int:
    """``delay`` as a router delay: a whole number of steps per hop, 0 to :data:`MAX_ROUTER_DELAY`.

    Parameters
    ----------
    delay : int, float or str
        What the user gave (``--router-delay``, a scenario's ``router_delay``).

    Returns
    -------
    int

    Raises
    ------
    UserError
        A negative, fractional, non-finite or huge delay, or one that is not a number.

    Examples
    --------
    >>> check_router_delay("2"), check_router_delay(3)
    (2, 3)
    >>> check_router_delay("-1")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: router delay -1: expected a whole number of steps per hop from 0 to 10,000
    """
    text = str(delay).strip()
    if isinstance(delay, bool):
        value = None
    elif isinstance(delay, int):
        value = delay
    else:
        try:
            value = int(text)
        except ValueError:
            value = None
    if value is None or not 0 <= value <= MAX_ROUTER_DELAY:
        shown = text if len(text) <= 30 else text[:30] + "..."
        raise UserError(f"router delay {shown}: expected a whole number of steps per hop from 0 to "
                        f"{MAX_ROUTER_DELAY:,}")
    return value


def delayed_latency(latency: np.ndarray, hops: np.ndarray, delay: int) -> np.ndarray:
    """Latencies with ``delay`` more steps per hop: ``latency + delay * hops``.

    Parameters
    ----------
    latency, hops : ndarray of int
        The labelled packets' measured latencies and hop counts.
    delay : int
        Router delay in steps per hop (0: the ideal router of SPEC §2).

    Returns
    -------
    ndarray of int64

    Examples
    --------
    >>> delayed_latency(np.array([4, 6]), np.array([4, 5]), 2).tolist()
    [12, 16]
    """
    latency = np.asarray(latency, dtype=np.int64)
    return latency + np.int64(delay) * np.asarray(hops, dtype=np.int64) if delay else latency


def latency_histogram(latency: np.ndarray) -> dict:
    """The exact histogram of integer latencies (see the module docstring for its format).

    Parameters
    ----------
    latency : ndarray of int
        One latency per packet, in steps.

    Returns
    -------
    dict
        ``start``, ``width``, ``counts`` and ``packets`` (``counts`` empty for no packets).

    Examples
    --------
    >>> latency_histogram(np.array([4, 4, 5, 7]))
    {'start': 4, 'width': 1, 'counts': [2, 1, 0, 1], 'packets': 4}
    >>> h = latency_histogram(np.arange(10_000))
    >>> h["width"], len(h["counts"]), sum(h["counts"])
    (5, 2000, 10000)

    References
    ----------
    Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
    networks", 2003, §5.4 (latency histograms of labelled packets, Figure 11).
    """
    latency = np.asarray(latency, dtype=np.int64)
    if not len(latency):
        return {"start": 0, "width": 1, "counts": [], "packets": 0}
    low, high = int(latency.min()), int(latency.max())
    width = max(1, math.ceil((high - low + 1) / MAX_STORED_BINS))
    counts = np.bincount((latency - low) // width)
    return {"start": low, "width": width, "counts": [int(c) for c in counts], "packets": int(len(latency))}


def display_bins(hist: dict, max_bins: int = 20, tail: float = 0.999) -> list[tuple[int, int | None, int]]:
    """The bins of a stored histogram merged to at most ``max_bins`` for a table or a plot.

    The bins cover the latencies up to the ``tail`` quantile; the packets beyond, if any, are one
    last bin ``(low, None, count)`` ("low or more"), so a long tail does not squeeze the body.

    Parameters
    ----------
    hist : dict
        From :func:`latency_histogram`.
    max_bins : int
        Most bins of the body (the tail bin comes on top).
    tail : float
        Fraction of the packets the body holds at least.

    Returns
    -------
    list of (low, high, count)
        Latency ranges ``low..high`` inclusive (``high`` None for the tail bin).

    Examples
    --------
    >>> display_bins({"start": 4, "width": 1, "counts": [5, 3, 1], "packets": 9})
    [(4, 4, 5), (5, 5, 3), (6, 6, 1)]
    >>> display_bins({"start": 0, "width": 1, "counts": [1] * 10, "packets": 10}, max_bins=3, tail=0.7)
    [(0, 2, 3), (3, 5, 3), (6, 6, 1), (7, None, 3)]
    """
    counts = np.asarray(hist["counts"], dtype=np.int64)
    if not len(counts):
        return []
    start, width = int(hist["start"]), int(hist["width"])
    total = int(counts.sum())
    last = int(np.searchsorted(np.cumsum(counts), math.ceil(tail * total)))   # stored bin ending the body
    last = min(last, len(counts) - 1)
    merge = max(1, math.ceil((last + 1) / max_bins))
    out = []
    for i in range(0, last + 1, merge):
        j = min(i + merge, last + 1)
        out.append((start + i * width, start + j * width - 1, int(counts[i:j].sum())))
    rest = int(counts[last + 1:].sum())
    if rest:
        out.append((start + (last + 1) * width, None, rest))
    return out


def pair_mask(labelled: tuple, source: int, dest: int) -> np.ndarray:
    """Which labelled packets go from ``source`` to ``dest``.

    Parameters
    ----------
    labelled : tuple
        ``RunResult.labelled_packets``: ``(src, dst, latency, hops)`` arrays.
    source, dest : int
        Node ids.

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> pair_mask((np.array([0, 0, 1]), np.array([3, 2, 3]), None, None), 0, 3).tolist()
    [True, False, False]
    """
    src, dst = labelled[0], labelled[1]
    return (np.asarray(src) == source) & (np.asarray(dst) == dest)


def theta_bins(values, max_bins: int = 20) -> list[tuple[float, float, int]]:
    """Equal-width bins of saturation throughputs (the histogram of GOAL's Figure 9).

    Parameters
    ----------
    values : sequence of float
    max_bins : int

    Returns
    -------
    list of (low, high, count)
        ``high`` exclusive except in the last bin.

    Examples
    --------
    >>> theta_bins([0.3, 0.4, 0.5], max_bins=2)
    [(0.3, 0.4, 1), (0.4, 0.5, 2)]
    >>> theta_bins([0.25, 0.25])
    [(0.25, 0.25, 2)]
    """
    x = np.asarray(values, dtype=float)
    if not len(x):
        return []
    low, high = float(x.min()), float(x.max())
    if high - low <= 1e-12 * max(1.0, abs(high)):
        return [(low, high, int(len(x)))]
    bins = max(1, min(max_bins, math.ceil(math.sqrt(len(x))) + 1))
    counts, edges = np.histogram(x, bins=bins, range=(low, high))
    return [(float(edges[i]), float(edges[i + 1]), int(c)) for i, c in enumerate(counts)]


def permutation_summary(rows: list[dict]) -> list[dict]:
    """Θ over the random permutations of a saturation study, per routing, traffic, priority and seed.

    Parameters
    ----------
    rows : list of dict
        Saturation rows; those with a ``permutation`` field are summarised.

    Returns
    -------
    list of dict
        ``routing``, ``traffic``, ``priority``, ``seed``, ``permutations`` (how many), ``min``,
        ``mean``, ``max`` of the simulated Θ, ``limited`` (how many Θ are lower bounds only),
        and ``analytic_min`` / ``analytic_mean`` (exact analysis of the same permutations,
        None where there is none).

    Examples
    --------
    >>> rows = [dict(routing="dor", traffic="random-perms:2", priority="age", seed=0, permutation=i,
    ...              saturation=s, limited=False, analytic_value=None) for i, s in enumerate([0.3, 0.5])]
    >>> s, = permutation_summary(rows)
    >>> s["permutations"], s["min"], s["mean"], s["max"]
    (2, 0.3, 0.4, 0.5)

    References
    ----------
    Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
    networks", 2003, §5.3 (Figures 9 and 10: histogram, best, mean and worst over 1,000
    permutations).
    """
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if "permutation" in r:
            groups.setdefault((r["routing"], r["traffic"], r["priority"], r["seed"]), []).append(r)
    out = []
    for (routing, traffic, priority, seed), mine in groups.items():
        theta = np.array([r["saturation"] for r in mine])
        exact = [r["analytic_value"] for r in mine]
        known = None not in exact
        out.append({"routing": routing, "traffic": traffic, "priority": priority, "seed": seed,
                    "permutations": len(mine), "min": float(theta.min()), "mean": float(theta.mean()),
                    "max": float(theta.max()), "limited": sum(bool(r["limited"]) for r in mine),
                    "analytic_min": float(min(exact)) if known else None,
                    "analytic_mean": float(np.mean(exact)) if known else None})
    return out
