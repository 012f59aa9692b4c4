"""The hypotheses of the protocols' theorems, checked run by run.

A protocol's bound (its ``bound_expr``) is what a theorem of the survey (Meyer auf der Heide &
Scheideler, "Communication in Parallel Systems", §4.1-4.4) promises under that theorem's
hypotheses: a kind of path collection (leveled, shortcut-free, simple), a kind of buffer
(unbounded, at least C), a bandwidth range, a rank range large enough, the protocol exactly as
the survey defines it. Each protocol lists its hypotheses in its registry entry; a run shows the
bound only when all of them hold, and otherwise says which failed (:func:`check_bound`).

Readings fixed here, as everywhere in the tool: logarithms are base 2 and a hidden constant is 1,
so "K = O(C + D + log n) chosen sufficiently large" means K >= C + D + ceil(log2 n), and a
bandwidth "Θ(log(C·D)/loglog(C·D))" means L <= B <= 2L with L = log2(C·D)/log2(log2(C·D)).
The survey assumes bandwidth 1 wherever it does not say otherwise (its §1), which covers random
rank and growing rank.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from universal.paths import PathCollection


@dataclass(frozen=True)
class Setting:
    """What one run gives a theorem to check: the collection, B, b and the protocol as run.

    Attributes
    ----------
    paths : PathCollection
    bandwidth : int
    buffer : int or None
        Link-buffer size b; None for unbounded, 0 for the bufferless protocols.
    protocol : Protocol
    copies_capped : bool or None
        Duplication only: whether the copy cap changed the protocol in this run.
    """

    paths: PathCollection
    bandwidth: int
    buffer: int | None
    protocol: object
    copies_capped: bool | None = None


@dataclass(frozen=True)
class Hypothesis:
    """One hypothesis of a theorem: what it needs and a check returning why it fails (or None)."""

    needs: str
    check: Callable[[Setting], str | None]


def _flag(value: bool | None, what: str, unknown: str) -> str | None:
    if value is None:
        return unknown
    return None if value else what


LEVELED = Hypothesis("a leveled path collection", lambda s: _flag(
    s.paths.is_leveled, "these paths are not leveled", "leveledness not checked (too many links)"))
SHORTCUT_FREE = Hypothesis("a shortcut-free path collection", lambda s: _flag(
    s.paths.is_shortcut_free, "these paths are not shortcut-free",
    "the paths are not shortest and too many to check for shortcuts"))
SIMPLE = Hypothesis("simple paths", lambda s: _flag(s.paths.is_simple, "a path uses an edge twice", ""))
UNBOUNDED_BUFFERS = Hypothesis("unbounded link buffers", lambda s: (
    None if s.buffer is None else f"b = {s.buffer}"))
BUFFERS_OF_SIZE_C = Hypothesis("link buffers of size at least C", lambda s: (
    None if s.buffer is None or s.buffer >= s.paths.congestion else f"b = {s.buffer} < C = {s.paths.congestion}"))
UNIT_BANDWIDTH = Hypothesis("bandwidth 1", lambda s: None if s.bandwidth == 1 else f"B = {s.bandwidth}")


def _log2(x: float) -> float:
    return math.log2(max(x, 2.0))


def _at_most_log_n(s: Setting) -> str | None:
    limit = _log2(s.paths.size)
    return None if s.bandwidth <= limit else f"B = {s.bandwidth} > log n = {limit:.1f}"


BANDWIDTH_AT_MOST_LOG_N = Hypothesis("B <= log n", _at_most_log_n)


def duplication_bandwidth(C: int, D: int) -> float:
    """L = log2(C·D)/log2(log2(C·D)), the order of bandwidth duplication's theorem asks for.

    Examples
    --------
    >>> round(duplication_bandwidth(33, 16), 2)
    2.85
    """
    x = _log2(max(C, 1) * max(D, 1))
    return x / max(math.log2(x), 1.0)


def _of_order_log_cd(s: Setting) -> str | None:
    low = duplication_bandwidth(s.paths.congestion, s.paths.dilation)
    if s.bandwidth < low:
        return f"B = {s.bandwidth} < L = {low:.1f}"
    return None if s.bandwidth <= 2 * low else f"B = {s.bandwidth} > 2L = {2 * low:.1f}"


BANDWIDTH_OF_ORDER_LOG_CD = Hypothesis("B of order L = log(C·D)/loglog(C·D), read as L <= B <= 2L", _of_order_log_cd)


def _rank_range(s: Setting) -> str | None:
    p, P = s.protocol, s.paths
    if p.K is None:
        return None
    default = p.default_rank_range(P.congestion, P.dilation, P.size, s.bandwidth)
    return None if p.K >= default else f"K = {p.K} < {default}"


RANKS_LARGE_ENOUGH = Hypothesis("a rank range K at least the default order", _rank_range)
DRAWS_ONCE = Hypothesis("ranks and delays drawn once", lambda s: (
    "redraw=yes draws them every round (a variant)" if getattr(s.protocol, "redraw", False) else None))
UNCAPPED = Hypothesis("2^(j-1) copies in round j", lambda s: (
    f"the cap copies={s.protocol.max_copies} cut them (a variant)" if s.copies_capped else None))


def check_bound(setting: Setting) -> tuple[float | None, str | None]:
    """The protocol's bound for this run, or None and a note naming the failed hypotheses.

    Returns ``(None, None)`` for protocols without a bound (the greedy rules).

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import build_network
    >>> from universal.workloads import build_problem
    >>> from universal.paths import route_paths
    >>> from universal.protocols import build_protocol
    >>> net = build_network("mesh:k=4,n=2")
    >>> prob = build_problem("permutation:transpose", net, np.random.default_rng(0))
    >>> paths = route_paths("dimension-order", prob, net, np.random.default_rng(0))
    >>> check_bound(Setting(paths, 1, None, build_protocol("random-rank")))
    (None, 'survey §4.1 needs a leveled path collection: these paths are not leveled')
    >>> round(check_bound(Setting(paths, 1, None, build_protocol("growing-rank")))[0], 1)
    13.0
    """
    p = setting.protocol
    P = setting.paths
    bound = p.bound(P.congestion, P.dilation, P.size, setting.bandwidth)
    if bound is None:
        return None, None
    failed = [(h, why) for h in p.hypotheses if (why := h.check(setting)) is not None]
    if not failed:
        return bound, None
    return None, "; ".join(f"{p.theorem} needs {h.needs}: {why}" for h, why in failed)
