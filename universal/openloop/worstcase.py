"""The worst-case column of a saturation table: each routing's lowest Θ over the patterns it was
simulated on (Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for
torus networks", 2003, §5.2 and Figure 6(b), §5.3 and Figure 10).

The GOAL paper's WC bar is exact for the oblivious routings (DOR, VAL, ROMM, RLB): their worst
case over all admissible traffic is reached by a permutation that Towles & Dally's method finds by
max-weight matching (B. Towles & W. J. Dally, "Worst-case traffic for oblivious routing
functions", 2002; :mod:`universal.oblivious.worstcase`). No such method is known for adaptive
routings, so for CHAOS, MIN AD and GOAL the paper shows the lowest throughput over every pattern it
simulated, 1,000 random permutations included. With ``worst_case`` a study does the same:

* a routing with an exact worst case (an oblivious routing of :mod:`universal.oblivious` on a
  torus) gets one more search, on its own worst-case permutation (traffic :data:`WORST_CASE`);
  its exact Θ there (capacity over the permutation's max channel load, the ideal network's) is
  kept beside the simulated one;
* every other routing gets ``random_perms`` more searches, on the permutations of
  ``random-perms:M`` (the same draws as ``universal load --traffic random-perms:M``);
* the WC of a routing is the minimum simulated Θ over all its rows, named patterns included,
  and the summary names the pattern that gave it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from universal.errors import UserError

__all__ = ["WORST_CASE", "exact_worst_case", "has_exact_worst_case", "exact_routings", "worst_case_cells",
           "worst_case_summary", "perm_traffic_name", "check_worst_case_options"]

#: The traffic name of a row measured on its routing's own exact worst-case permutation.
WORST_CASE = "worst-case"


def perm_traffic_name(count: int) -> str:
    """The ``random-perms:M`` traffic whose permutations the routings without an exact worst case
    are searched on.

    Examples
    --------
    >>> perm_traffic_name(40)
    'random-perms:40'
    """
    return f"random-perms:{count}"


def check_worst_case_options(worst_case: bool, random_perms: int, saturation: bool, screen: bool = False) -> None:
    """Refuse ``random_perms`` without ``worst_case``, a negative count, a worst case of a
    load sweep (the column is of saturation throughput) and a screen without permutations.

    Examples
    --------
    >>> check_worst_case_options(True, 8, True)
    >>> check_worst_case_options(False, 8, True)
    Traceback (most recent call last):
    ...
    universal.errors.UserError: random permutations for the worst case (8) need the worst-case column: add --worst-case
    """
    if isinstance(random_perms, bool) or not isinstance(random_perms, int) or random_perms < 0:
        raise UserError(f"the number of random permutations for the worst case must be a whole number >= 0 "
                        f"(got {random_perms!r})")
    if random_perms and not worst_case:
        raise UserError(f"random permutations for the worst case ({random_perms}) need the worst-case column: "
                        "add --worst-case")
    if worst_case and not saturation:
        raise UserError("the worst-case column is of saturation throughput: use --worst-case with --saturation")
    if screen and not random_perms:
        raise UserError("screening (--screen-perms) finds the lowest Θ of the random permutations of the worst case: "
                        "give their number with --worst-case --random-perms M")


def has_exact_worst_case(network, routing: str) -> bool:
    """Whether ``routing`` (its files resolved) has an exact worst-case permutation on ``network``:
    an oblivious torus routing (``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``, ``ival``) on a
    k-ary n-cube with k >= 3, the cases :func:`universal.oblivious.worstcase.worst_case` covers.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("torus:k=4,n=2")
    >>> has_exact_worst_case(net, "dor"), has_exact_worst_case(net, "goal")
    (True, False)
    """
    from universal.oblivious import ROUTINGS
    from universal.registry import parse_spec

    return (network.kind == "torus" and network.terminals is None and network.params["k"] >= 3
            and parse_spec(routing).name in ROUTINGS)


def exact_routings(study) -> set[str]:
    """The routings of ``study`` that have an exact worst case on its network (none without
    ``worst_case``).

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> exact_routings(OpenLoopStudy("torus:k=4,n=2", ["dor", "goal"], ["uniform"], saturation=True,
    ...                              worst_case=True))
    {'dor'}
    """
    if not getattr(study, "worst_case", False):
        return set()
    from universal.networks import build_network

    net = build_network(study.network, study.base_dir)
    return {r for r in study.routings if has_exact_worst_case(net, r)}


def exact_worst_case(network, routing: str) -> tuple[np.ndarray, Fraction]:
    """The exact worst-case permutation of an oblivious torus routing and its Θ in the ideal
    network (a fraction of capacity).

    Parameters
    ----------
    network : universal.networks.Network
        A k-ary n-cube (:func:`has_exact_worst_case`).
    routing : str

    Returns
    -------
    (ndarray of int64, Fraction)
        ``permutation[s]``, the destination of node ``s`` (the network's numbering), and
        capacity over the largest channel load it causes.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> perm, theta = exact_worst_case(build_network("torus:k=8,n=2"), "romm")
    >>> theta, sorted(perm.tolist()) == list(range(64))
    (Fraction(5, 24), True)

    References
    ----------
    B. Towles & W. J. Dally, "Worst-case traffic for oblivious routing functions", 2002.
    """
    from universal.oblivious.worstcase import worst_case

    result = worst_case(network.params["k"], network.params["n"], routing)
    return np.asarray(result.permutation, dtype=np.int64), result.throughput_exact


def worst_case_cells(study, exact: set[str]) -> list[dict]:
    """The cells ``worst_case`` adds to a saturation study: one on :data:`WORST_CASE` for each
    routing in ``exact``, ``random_perms`` permutations of ``random-perms:M`` for each other one.

    Parameters
    ----------
    study : universal.openloop.study.OpenLoopStudy
    exact : set of str
        The study's routings that have an exact worst case (:func:`has_exact_worst_case`).

    Returns
    -------
    list of dict
        Cells in routing, priority, seed order (empty without ``worst_case``).

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> s = OpenLoopStudy("torus:k=4,n=2", ["dor", "goal"], ["uniform"], saturation=True, worst_case=True,
    ...                   random_perms=2)
    >>> [(c["routing"], c["traffic"], c.get("permutation")) for c in worst_case_cells(s, {"dor"})]
    [('dor', 'worst-case', None), ('goal', 'random-perms:2', 0), ('goal', 'random-perms:2', 1)]
    """
    if not getattr(study, "worst_case", False):
        return []
    perms = perm_traffic_name(study.random_perms)
    cells = []
    for r in study.routings:
        for q in study.priorities:
            for s in study.seeds:
                if r in exact:
                    cells.append({"routing": r, "traffic": WORST_CASE, "priority": q, "seed": s})
                elif study.screen_perms:     # one screen of all M (screen.py)
                    cells.append({"routing": r, "traffic": perms, "priority": q, "seed": s, "screen": True})
                elif perms not in study.traffics:   # listed as a traffic: its cells are there already
                    cells += [{"routing": r, "traffic": perms, "priority": q, "seed": s, "permutation": i}
                              for i in range(study.random_perms)]
    return cells


def _pattern(row: dict) -> str:
    """The pattern a row was measured on: its traffic, or ``random-perms:M#i`` for permutation i
    (the one a screened row names as the lowest)."""
    index = row.get("permutation", row.get("screen_permutation"))
    return row["traffic"] + ("" if index is None else f"#{index}")


def _perm_count(row: dict) -> int:
    """Random permutations a row stands for: 1 for a searched one, M for a screened row."""
    return row["screened"] if "screened" in row else int("permutation" in row)


def worst_case_summary(rows: list[dict]) -> list[dict]:
    """The worst case of every routing (per priority and seed): its lowest simulated Θ over all
    its rows and the pattern that gave it.

    Parameters
    ----------
    rows : list of dict
        Saturation rows (those of random permutations included).

    Returns
    -------
    list of dict
        ``routing``, ``priority``, ``seed``, ``theta`` (the lowest Θ), ``pattern`` (its traffic,
        ``random-perms:M#i`` for a permutation), ``limited`` (that Θ is a lower bound only),
        ``patterns`` (how many were simulated), ``random_perms`` (how many of them were random
        permutations), ``screened`` (they were screened: only their lowest Θ is known), and from a :data:`WORST_CASE` row ``exact_theta`` (the ideal network's Θ
        of the routing's exact worst-case permutation) and ``worst_case_theta`` (its simulated
        Θ); both None for a routing without one.

    Examples
    --------
    >>> rows = [dict(routing="dor", traffic=t, priority="age", seed=0, saturation=s, limited=False)
    ...         for t, s in [("uniform", 0.96), ("tornado", 0.33)]]
    >>> rows.append(dict(routing="dor", traffic="worst-case", priority="age", seed=0, saturation=0.28,
    ...                  limited=False, worst_case_exact=2 / 7))
    >>> s, = worst_case_summary(rows)
    >>> s["theta"], s["pattern"], s["patterns"], round(s["exact_theta"], 3)
    (0.28, 'worst-case', 3, 0.286)

    References
    ----------
    Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
    networks", 2003, §5.2 (the WC bars of Figure 6(b)).
    """
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["routing"], r.get("priority", "age"), r["seed"]), []).append(r)
    out = []
    for (routing, priority, seed), mine in groups.items():
        low = min(mine, key=lambda r: r["saturation"])      # the first of equal ones: the study's order
        own = next((r for r in mine if r["traffic"] == WORST_CASE), None)
        out.append({"routing": routing, "priority": priority, "seed": seed, "theta": low["saturation"],
                    "pattern": _pattern(low), "limited": bool(low.get("limited")), "patterns": sum(max(1, _perm_count(r)) for r in mine),
                    "random_perms": sum(_perm_count(r) for r in mine),
                    "screened": any("screened" in r for r in mine),
                    "exact_theta": None if own is None else own["worst_case_exact"],
                    "worst_case_theta": None if own is None else own["saturation"]})
    return out
