"""The random permutations of an open-loop study: the ``random-perms:M`` traffics of a saturation
table (GOAL's Figure 9: Θ over many random permutations) and the exact worst-case permutation of
each routing that has one (:mod:`universal.openloop.worstcase`), with their exact Θ.

Split from :mod:`universal.openloop.cells`, which imports these back; ``Prepared`` in the
annotations below is :class:`universal.openloop.cells_prepare.Prepared` (importing it here would
be a cycle: preparing a study draws these).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from universal.engine.workload import OfferedTraffic
from universal.errors import UserError
from universal.openloop.workload import capacity_rate
from universal.openloop.worstcase import WORST_CASE, exact_worst_case, has_exact_worst_case, perm_traffic_name


def _worst_case_perms(study, net) -> dict[str, int]:
    """The ``random-perms:M`` traffic of ``worst_case`` (for the routings without an exact worst
    case; :mod:`universal.openloop.worstcase`), checked as a listed one is."""
    if not getattr(study, "worst_case", False) or not study.random_perms:
        return {}
    if study.random_perms > MAX_RANDOM_PERMS:
        raise UserError(f"at most {MAX_RANDOM_PERMS:,} random permutations for the worst case "
                        f"(each one is a saturation search; got {study.random_perms:,})")
    if len(net.endpoints) > MAX_RANDOM_PERM_NODES:
        raise UserError(f"random permutations for the worst case on {net.name} ({len(net.endpoints):,} nodes): "
                        f"open-loop random permutations run on networks of at most {MAX_RANDOM_PERM_NODES:,} nodes")
    return {perm_traffic_name(study.random_perms): study.random_perms}


def _worst_case_traffics(study, net, resolved: dict) -> dict:
    """Each routing's exact worst-case permutation (as traffic) and the ideal network's Θ of it (a
    fraction of capacity, and in the study's units), for the routings that have one (``worst_case``)."""
    if not getattr(study, "worst_case", False):
        return {}
    unit = Fraction(1) if study.units == "capacity" else capacity_rate(net, study.bandwidth)
    out = {}
    for r in study.routings:
        if has_exact_worst_case(net, resolved[r]):
            perm, theta = exact_worst_case(net, resolved[r])
            matrix = np.zeros((len(perm), len(perm)))
            matrix[np.arange(len(perm)), perm] = 1.0
            out[r] = (OfferedTraffic(WORST_CASE, np.ones(len(perm)), perm, None, matrix), theta, theta * unit)
    return out


#: Most permutations of one ``random-perms:M`` traffic in an open-loop study (GOAL's Figure 9 has 1,000).
MAX_RANDOM_PERMS = 10_000
#: Largest network for ``random-perms:M`` in an open-loop study (each permutation's search holds
#: an N x N traffic matrix while it runs).
MAX_RANDOM_PERM_NODES = 1024


def random_perm_count(traffic: str) -> int:
    """M of a ``random-perms:M`` traffic name (its default 1000 without a count), 0 for any other.

    Parameters
    ----------
    traffic : str
        A traffic name as the study lists it.

    Returns
    -------
    int

    Raises
    ------
    UserError
        A ``random-perms`` name with a bad count, or one above :data:`MAX_RANDOM_PERMS`.

    Examples
    --------
    >>> random_perm_count("random-perms:20"), random_perm_count("random-perms"), random_perm_count("tornado")
    (20, 1000, 0)
    """
    from universal.oblivious.traffic import Grid, make_traffic
    from universal.registry import parse_spec

    try:
        name = parse_spec(traffic).name
    except UserError:
        return 0                 # reported where the traffic is built
    if name != "random-perms":
        return 0
    count = make_traffic(Grid(2, 1, "any"), traffic).count
    if count > MAX_RANDOM_PERMS:
        raise UserError(f"{traffic}: at most {MAX_RANDOM_PERMS:,} permutations in an open-loop study "
                        f"(each one is a saturation search; got {count:,})")
    return count


def _random_perm_traffics(study, net) -> dict[str, int]:
    """The study's ``random-perms:M`` traffics and their M, checked (saturation only, small networks)."""
    found = {t: m for t in study.traffics if (m := random_perm_count(t))}
    if not found:
        return found
    name = next(iter(found))
    if study.loads is not None:
        raise UserError(f"{name} gives each permutation's saturation throughput: use it with --saturation "
                        "(a load sweep takes one permutation:file=P)")
    nodes = len(net.endpoints)
    if nodes > MAX_RANDOM_PERM_NODES:
        raise UserError(f"{name} on {net.name} ({nodes:,} nodes): open-loop random permutations run on networks "
                        f"of at most {MAX_RANDOM_PERM_NODES:,} nodes")
    return found


def permutations_of(p: Prepared, traffic: str, seed: int) -> np.ndarray:
    """The M permutations of ``random-perms:M`` for ``seed``: permutation i is the i-th
    ``permutation(N)`` of ``numpy.random.default_rng(seed)``, the draws ``universal load
    --traffic random-perms:M --seed S`` makes for one routing (so both analyse the same ones).

    Parameters
    ----------
    p : Prepared
    traffic : str
    seed : int

    Returns
    -------
    ndarray of int32, shape (M, N)

    Examples
    --------
    >>> from universal.openloop.cells import prepare
    >>> from universal.openloop.study import OpenLoopStudy
    >>> p = prepare(OpenLoopStudy("torus:k=4,n=1", ["dor"], ["random-perms:2"], saturation=True))
    >>> permutations_of(p, "random-perms:2", 0).tolist()
    [[2, 0, 1, 3], [3, 2, 1, 0]]
    """
    key = (traffic, seed)
    if key not in p.perms:
        rng = np.random.default_rng(seed)
        N = len(p.network.endpoints)
        p.perms[key] = np.stack([rng.permutation(N) for _ in range(p.random_perms[traffic])]).astype(np.int32)
    return p.perms[key]


def permutation_traffic(p: Prepared, traffic: str, seed: int, index: int) -> OfferedTraffic:
    """Permutation ``index`` of ``random-perms:M`` for ``seed`` as open-loop traffic."""
    perm = permutations_of(p, traffic, seed)[index].astype(np.int64)
    N = len(perm)
    matrix = np.zeros((N, N))
    matrix[np.arange(N), perm] = 1.0
    return OfferedTraffic(f"{traffic}#{index}", np.ones(N), perm, None, matrix)


def permutation_exact(p: Prepared, routing: str, traffic: str, seed: int) -> list | None:
    """Exact Θ (capacity over the largest channel load, :mod:`universal.oblivious`) of each
    permutation of ``random-perms:M`` for ``seed``, in the study's units; None for routings the
    torus analysis does not cover (as :func:`universal.openloop.cells_prepare.analytic_throughput`)."""
    key = (routing, traffic, seed)
    if key not in p.perm_exact:
        p.perm_exact[key] = _permutation_exact(p, routing, traffic, seed)
    return p.perm_exact[key]


def _permutation_exact(p: Prepared, routing: str, traffic: str, seed: int) -> list | None:
    from universal.oblivious import ROUTINGS
    from universal.oblivious.throughput import exact_max_load
    from universal.oblivious.traffic import Traffic
    from universal.paths.torus.geometry import Torus
    from universal.registry import parse_spec

    net = p.network
    name = p.resolved.get(routing, routing)
    if (p.unit_factor is None or net.terminals is not None or net.kind != "torus" or parse_spec(name).name not in ROUTINGS
            or net.params["k"] < 3):
        return None
    from universal.oblivious.loads import pair_loads

    torus = Torus(net.params["k"], net.params["n"])
    pl = pair_loads(name, torus)
    return [torus.capacity_load / exact_max_load(pl, Traffic(f"{traffic}#{i}", perm=perm.astype(np.int64)))
            * p.unit_factor for i, perm in enumerate(permutations_of(p, traffic, seed))]
