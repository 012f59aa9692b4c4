"""The offline optimum beside an experiment's rows (``route --opt``, scenarios with ``opt``):
OPT(P) of every path collection and, with free paths, R(G, π) of every problem instance
(SPEC §12; Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1995, §3).

The solvers live in :mod:`universal.optimum`; this module sizes the request, collects the
protocols' schedules as hints and writes the results into the rows.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from universal.errors import UserError

#: What ``opt`` may be: OPT of the fixed paths, or that and R(G, π) with free paths.
OPT_MODES = ("paths", "free")

#: Largest problem (packets) for which OPT of the fixed paths is computed.
OPT_MAX_PACKETS = 1024

#: Largest problem (packets) for which R(G, π) with free paths is computed.
FREE_MAX_PACKETS = 64


def check_opt(mode: str | None, packets: int, time_limit: float) -> None:
    """Refuse an ``opt`` request that is malformed or too large, before anything runs.

    Examples
    --------
    >>> check_opt("paths", 2000, 10.0)
    Traceback (most recent call last):
    ...
    universal.errors.UserError: --opt: OPT is computed for problems of at most 1,024 packets; this one has 2,000
    """
    if mode is None:
        return
    from universal.optimum.fixed_paths import check_time_limit

    if mode not in OPT_MODES:
        raise UserError(f"--opt takes no value (OPT of the paths) or 'free' (also R(G, π)), not {mode!r}")
    from universal.extras import require
    require("opt", "the offline optimum (OPT, R(G, π))")
    check_time_limit(time_limit)
    if packets > OPT_MAX_PACKETS:
        raise UserError(f"--opt: OPT is computed for problems of at most {OPT_MAX_PACKETS:,} packets; "
                        f"this one has {packets:,}")
    if mode == "free" and packets > FREE_MAX_PACKETS:
        raise UserError(f"--opt free: R(G, π) is computed for problems of at most {FREE_MAX_PACKETS} packets; "
                        f"this one has {packets:,}")


def fill_opt(rows: Sequence, paths, bandwidth: int, hints: list, time_limit: float, seed: int) -> None:
    """Compute OPT(P) for ``paths`` with bandwidth B and write it into ``rows`` (those of that B).

    ``hints`` are ``(hop_steps, T, protocol)`` of the runs on these paths; the solver also tries
    its own protocols and starts from the best schedule.

    Examples
    --------
    >>> from types import SimpleNamespace as Row
    >>> from universal.networks import build_network
    >>> from universal.paths import PathCollection
    >>> paths = PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2]] * 2)
    >>> row = Row(T=4, status="delivered")
    >>> fill_opt([row], paths, 1, [], 10.0, 0)
    >>> row.opt, row.opt_status, row.T_over_opt
    (3, 'optimal', 1.3333)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1995, §3.
    """
    from universal.optimum import optimum
    from universal.optimum.fixed_paths import best_protocol_schedule

    candidates = [best_protocol_schedule(paths, bandwidth, seed), *hints]
    hint = min(candidates, key=lambda h: h[1])
    result = optimum(paths, bandwidth, time_limit=time_limit, hint=hint, seed=seed)
    for row in rows:
        row.opt, row.opt_lower, row.opt_upper, row.opt_status = (result.opt, result.lower, result.upper,
                                                                 result.status)
        finished = row.status == "delivered"
        row.T_over_opt = round(row.T / result.opt, 4) if finished and result.opt else None


def fill_free(rows: Sequence, problem, network, bandwidth: int, time_limit: float, seed: int) -> None:
    """Compute R(G, π) of ``problem`` (paths free) and write it into ``rows``.

    Examples
    --------
    >>> from types import SimpleNamespace as Row
    >>> from universal.networks import build_network
    >>> from universal.workloads import Problem
    >>> row = Row()
    >>> fill_free([row], Problem("swap", np.array([0, 2]), np.array([2, 0])), build_network("mesh:k=3,n=1"), 1, 10.0, 0)
    >>> row.R_pi, row.R_pi_status
    (2, 'optimal')
    """
    from universal.optimum.free_paths import routing_time

    result = routing_time(problem, network, bandwidth, time_limit=time_limit, seed=seed)
    for row in rows:
        row.R_pi, row.R_pi_lower, row.R_pi_upper, row.R_pi_status = (result.opt, result.lower, result.upper,
                                                                     result.status)


def offline_summary(rows: Sequence) -> dict:
    """OPT and R(G, π) of rows grouped over seeds: mean values and bounds, ``"optimal"`` only if
    every seed's value is proven (the keys of :func:`universal.experiment.summarize`).

    Examples
    --------
    >>> from types import SimpleNamespace as Row
    >>> rows = [Row(opt=4, opt_lower=4, opt_upper=4, opt_status="optimal", T_over_opt=1.0, R_pi_status=None),
    ...         Row(opt=None, opt_lower=5, opt_upper=7, opt_status="bounds", T_over_opt=None, R_pi_status=None)]
    >>> s = offline_summary(rows)
    >>> s["opt"], s["opt_lower"], s["opt_upper"], s["opt_status"], s["T_over_opt"]
    (None, 4.5, 5.5, 'bounds', None)
    """
    out: dict = {}
    for key in ("opt", "R_pi"):
        statuses = {getattr(r, f"{key}_status") for r in rows}
        if None in statuses:
            out.update({key: None, f"{key}_lower": None, f"{key}_upper": None, f"{key}_status": None})
            continue
        values = [getattr(r, key) for r in rows]
        out[key] = None if None in values else float(np.mean(values))
        out[f"{key}_lower"] = float(np.mean([getattr(r, f"{key}_lower") for r in rows]))
        out[f"{key}_upper"] = float(np.mean([getattr(r, f"{key}_upper") for r in rows]))
        out[f"{key}_status"] = "optimal" if statuses == {"optimal"} else "bounds"
    ratios = [r.T_over_opt for r in rows]
    out["T_over_opt"] = None if None in ratios else float(np.mean(ratios))
    return out


def hint_of(result, protocol: str) -> tuple[np.ndarray, int, str] | None:
    """A run's schedule as a hint, if it is one: a buffered run that delivered every packet.

    Examples
    --------
    >>> from universal.engine import simulate
    >>> from universal.networks import build_network
    >>> from universal.paths import PathCollection
    >>> paths = PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2]] * 2)
    >>> hint_of(simulate(paths, "fifo", np.random.default_rng(0), record_hops=True), "fifo")[1:]
    (3, 'fifo')
    """
    if result.status != "delivered" or result.hop_steps is None:
        return None
    return result.hop_steps, result.T, protocol
