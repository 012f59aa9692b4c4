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
    """Compute R(G, π) of ``problem`` (paths free) and write it into ``rows``."""
    from universal.optimum.free_paths import routing_time

    result = routing_time(problem, network, bandwidth, time_limit=time_limit, seed=seed)
    for row in rows:
        row.R_pi, row.R_pi_lower, row.R_pi_upper, row.R_pi_status = (result.opt, result.lower, result.upper,
                                                                     result.status)


def hint_of(result, protocol: str) -> tuple[np.ndarray, int, str] | None:
    """A run's schedule as a hint, if it is one: a buffered run that delivered every packet."""
    if result.status != "delivered" or result.hop_steps is None:
        return None
    return result.hop_steps, result.T, protocol
