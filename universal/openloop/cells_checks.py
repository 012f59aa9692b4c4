"""What an open-loop study's runs would refuse at their start, refused before any run: names,
sizes, loads that the injection cannot create, pairs that send nothing, routings and traffics
that cannot pool translates, and studies too long to run (SPEC §11).

Split from :mod:`universal.openloop.cells`, which imports these back; ``Prepared`` in the
annotations below is :class:`universal.openloop.cells_prepare.Prepared` (importing it here would
be a cycle: preparing a study makes these checks).
"""

from __future__ import annotations

from dataclasses import replace

from universal.engine.creation import RunSpec
from universal.engine.measure import Measurement
from universal.engine.runs import _check_window
from universal.errors import UserError
from universal.memory import check_link_sizes
from universal.openloop.cells_permutations import random_perm_count
from universal.openloop.saturation import rate_ceiling
from universal.openloop.translates import check_invariant_routing, check_invariant_traffic, translations_of


#: Offered load (fraction of capacity) of the zero-load latency runs of a saturation table.
ZERO_LOAD = 0.02


def check_distinct_loads(loads) -> None:
    """Refuse an offered load listed twice: each load is one cell of a results file, and a file
    holding a cell twice is one that ``--resume`` must refuse.

    Examples
    --------
    >>> check_distinct_loads([0.2, 0.4])
    >>> check_distinct_loads([0.2, 0.4, 0.2])
    Traceback (most recent call last):
    ...
    universal.errors.UserError: offered load 0.2 is listed twice (each load is one cell of the results); give it once
    """
    _check_distinct(loads, lambda load: f"offered load {load:g}", "each load is one cell of the results")


def _check_distinct(values, name, why: str = "each one makes its own cells of the results") -> None:
    """Refuse a value listed twice, named by ``name(value)``."""
    seen = set()
    for value in values:
        if value in seen:
            raise UserError(f"{name(value)} is listed twice ({why}); give it once")
        seen.add(value)


def _check_spec(spec: RunSpec, measurement: Measurement) -> None:
    """The checks :func:`universal.engine.runs.simulate_batch` makes of each run at its start."""
    spec.check()
    _check_window(spec, measurement)


#: A study estimated to take longer than this (seconds) is refused, as long load analyses are.
MAX_STUDY_SECONDS = 3600
#: Floor on the engine's time per step of one batch of runs (about 40 µs measured on this project's
#: 2-core machine; the floor sits well below so that only studies clearly too long are refused).
SECONDS_PER_STEP = 1e-5
#: Runs that share the engine's steps in one batch, at most (:func:`universal.openloop.cells.chunks`).
RUNS_PER_BATCH = 64


def estimate_seconds(study, scale: float = 1.0) -> tuple[float, int]:
    """A lower bound on a load sweep's engine time, and the steps of its longest run.

    Every run lasts at least its shortest warm-up and its measurement window (longer when the
    window doubles or the network drains); a batch runs as long as its longest run, and even a
    full batch costs :data:`SECONDS_PER_STEP` per step. A saturation search counts as the one
    run it makes at least (its zero-load run).

    Parameters
    ----------
    study : OpenLoopStudy
    scale : float
        Packets per node per step of one unit of the study's loads.

    Returns
    -------
    (seconds, steps)

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> estimate_seconds(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.1], window=10**9))
    (10000.003, 1000000300)
    """
    if study.loads is None:
        m = Measurement(window=study.window or 3000)
        steps = [m.warmup_min + m.window_for(ZERO_LOAD * scale)]
    else:
        m = Measurement(window=study.window)
        steps = [m.warmup_min + m.window_for(load * scale) for load in study.loads]
    # a search of one of M random permutations makes at least the 8 runs of its first round
    per_traffic = sum(8 * m if (m := random_perm_count(t)) else 1 for t in study.traffics)
    runs = len(study.routings) * per_traffic * len(study.priorities) * len(study.seeds)
    longest = max(steps)
    seconds = max(longest, runs * sum(steps) / RUNS_PER_BATCH) * SECONDS_PER_STEP
    return seconds, longest


def _big(x: float) -> str:
    """A count for a message: grouped digits, or three significant ones when astronomical."""
    return f"{x:,.1f}".removesuffix(".0") if x < 1e9 else f"{float(x):.2g}"


def _check_runs(study, p: Prepared) -> None:
    """What the engine and the search would refuse at their start, refused now, before any run."""
    if study.bandwidth < 1:
        raise UserError("bandwidth B must be at least 1")
    if study.buffer is not None and study.buffer < 1:
        raise UserError("buffer size b must be at least 1 (or unbounded)")
    check_link_sizes(study.bandwidth, study.buffer)
    from universal.engine.vcs import plan_vcs

    for router in p.routers.values():       # a routing without the classes it needs is refused now
        plan_vcs(router, study.vcs, study.buffer)
    from universal.engine.source_queue import check_source_queue

    check_source_queue(study.source_queue)
    from universal.engine.fifo_vcs import check_vc_buffer

    for routing in study.routings:
        check_vc_buffer(study.vc_buffer, study.buffer, study.bandwidth, routing)
    seconds, longest = estimate_seconds(study, p.scale)
    if seconds > MAX_STUDY_SECONDS:
        hours = seconds / 3600
        raise UserError(f"this study would take at least {_big(hours)} hours (its longest run has {_big(longest)} "
                        f"steps of warm-up and measurement window), more than this tool runs (one hour): "
                        f"give a shorter --window, higher loads or fewer of them")
    for r in study.routings:
        for t in study.traffics:
            template = RunSpec(p.traffics[t], p.routers[r], p.injection, 1.0, priority=study.priorities[0])
            if study.loads is not None:
                for load in study.loads:
                    _check_injection_limit(study, p, t, load)
                    _check_spec(replace(template, rate=load * p.scale), Measurement(window=study.window))
            else:
                _check_spec(replace(template, rate=ZERO_LOAD * p.scale),
                            Measurement(window=study.window or 3000, drain=True))
                rate_ceiling(template, study.bandwidth)
    if study.saturation and not 0 < study.tolerance < 1:
        raise UserError(f"the saturation search needs 0 < tolerance < 1 (got {study.tolerance:g})")


def _check_injection_limit(study, p: Prepared, traffic: str, load: float) -> None:
    """Refuse an offered load that bernoulli or on-off sources cannot create, in the user's units.

    Both create at most one packet per node per step (on-off strictly fewer); a load given as a
    fraction of capacity can ask for more (0.6 of capacity on torus:k=4,n=2 is 1.2 packets).
    """
    name = p.injection.name
    if name == "poisson":
        return
    busiest = float(p.traffics[traffic].rowsum.max())   # the row of the node that sends most
    packets = load * p.scale * busiest
    if packets <= 1 + 1e-12 and not (name == "on-off" and packets >= 1 - 1e-12):
        return
    if study.units == "capacity":
        asked = (f"offered load {load:g} (of capacity) is {packets:.4g} packet{'' if packets == 1 else 's'} "
                 f"per node per step on {p.network.name}")
    else:
        asked = f"offered load {load:g} packets per node per step"
    fix = f"a load {'below' if name == 'on-off' else 'of at most'} {1 / (p.scale * busiest):.4g}"
    if busiest != 1:
        asked += f" at the busiest source of {traffic} (its row sums to {busiest:.4g})"
    creates = ("creates fewer than one packet per node per step" if name == "on-off"
               else "creates at most one packet per node per step")
    raise UserError(f"{asked}; {name} injection {creates} (use --injection poisson, or {fix})")


def _check_pairs_send(study, net, pairs: list[tuple[int, int]], traffics: dict) -> None:
    """Refuse a pair whose source never sends to its destination under one of the traffics: it
    would have no packets, so no latency or histogram to measure."""
    for text, (s, d) in zip(study.pairs, pairs):
        for name, tr in traffics.items():
            size = len(tr.rowsum)
            if s >= size or d >= size:
                raise UserError(f"pair {text}: traffic on {net.name} goes between its {size:,} terminals, and "
                                f"node {net.label_of(s if s >= size else d)} is a router")
            if not tr.matrix[s, d] > 0:
                raise UserError(f"pair {text} sends nothing under {name} (node {net.label_of(s)} never sends to "
                                f"{net.label_of(d)}): there is no latency to measure; name a pair the traffic uses")


def _check_translates(study, net, traffics: dict, routers: dict):
    """The network's translations, once the network, every traffic and every routing of the study
    are checked to treat the translates of a pair alike (:mod:`universal.openloop.translates`)."""
    if study.loads is None:
        raise UserError("pooling translates pools the latencies of pairs in a load sweep (loads), not a saturation "
                        "search")
    if not study.pairs:
        raise UserError("pooling translates pools the translates of named pairs: name one (--pair SOURCE DEST, "
                        "or pairs in a scenario)")
    group = translations_of(net)
    for name, tr in traffics.items():
        check_invariant_traffic(group, tr.matrix, name, net.label_of)
    for router in routers.values():
        check_invariant_routing(group, router, net.label_of)
    return group


def _parse_pair(net, text: str) -> tuple[int, int]:
    """``"0,0->1,3"``: a source and a destination by their labels."""
    if "->" not in text:
        raise UserError(f"pair {text!r}: expected SOURCE->DESTINATION, e.g. 0,0->1,3")
    a, b = text.split("->", 1)
    return net.node(a), net.node(b)
