"""The cells of an open-loop study: the unit of work that ``--jobs`` hands to worker processes,
that the results file holds one line each and that ``--resume`` skips (SPEC §8, §11).

A load sweep's cell is one run, ``(routing, traffic, priority, offered, seed)``; a saturation
table's cell is one search, ``(routing, traffic, priority, seed)``, with its zero-load run. Cells run in *chunks*: the
runs of a chunk with one priority rule share one array state of the engine (batching independent runs is what makes
:mod:`universal.engine.runs` fast on small networks), and a chunk is one task of a worker.
Every random draw of a run comes from the run's own seeded generator, so a cell's rows are the
same whichever chunk, process or order it ran in: ``--jobs N`` and resumed runs give the rows of
one uninterrupted run, byte for byte. A screened worst case is one cell that ``--jobs N``
does not hand to a worker whole: it runs in the main process and shares its screening passes and
searches with the workers instead (:func:`screen_specs`, :mod:`universal.openloop.screen`).

A results-file line is ``{"cell": {...}, "row": {...}, "pairs": [...]}`` with the ``--json`` row
of the cell and, for a load sweep with pairs, the cell's pair latencies
(:mod:`universal.openloop.lines` checks them before a study resumes).

What the cells share is built once per process in :mod:`universal.openloop.cells_prepare`, after
the checks of :mod:`universal.openloop.cells_checks`; the random permutations of ``random-perms:M``
and the worst case are drawn in :mod:`universal.openloop.cells_permutations`. This module imports
their names back (``from universal.openloop.cells import prepare`` still works).
"""

from __future__ import annotations

import json
import math
from functools import partial
from typing import Callable, Iterator

import numpy as np

from universal.engine.creation import RunSpec
from universal.engine.measure import Measurement, RunResult, latency_summary
from universal.engine.runs import simulate_batch
from universal.openloop.cells_checks import (MAX_STUDY_SECONDS, RUNS_PER_BATCH, SECONDS_PER_STEP,  # noqa: F401
                                             ZERO_LOAD, check_distinct_loads, estimate_seconds)
from universal.openloop.cells_permutations import (MAX_RANDOM_PERM_NODES, MAX_RANDOM_PERMS,  # noqa: F401
                                                   permutation_exact, permutation_traffic, permutations_of,
                                                   random_perm_count)
from universal.openloop.cells_prepare import (Prepared, analytic_throughput, forget_prepared,  # noqa: F401
                                              prepare)
from universal.openloop.histograms import delayed_latency, latency_histogram, pair_mask
from universal.openloop.saturation import find_saturations
from universal.openloop.screen import screened_minimum
from universal.openloop.translates import translate_mask
from universal.openloop.worstcase import WORST_CASE, exact_routings, worst_case_cells

__all__ = ["ZERO_LOAD", "CHUNK_RUNS", "analytic_throughput", "prepare", "forget_prepared", "study_cells", "cell_key",
           "chunks", "run_cells", "run_chunk", "random_perm_count", "MAX_RANDOM_PERMS", "MAX_RANDOM_PERM_NODES"]


#: Runs of a load sweep batched in one chunk: the engine's time per run levels off at about 8
#: runs per batch on the 8-ary 2-cube, and a chunk's cells reach the results file together.
CHUNK_RUNS = 16
#: Saturation searches whose rounds share the engine's batches: 8 searches of 8 rates make the
#: batches of about 64 runs at which the engine is fastest (``benchmarks/openloop.py``).
SEARCH_GROUP = 8


def study_cells(study) -> list[dict]:
    """Every cell of the study, in the order of its rows (routing, traffic, priority, offered load, seed).

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study_cells(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform", "tornado"], saturation=True))[0]
    {'routing': 'dor', 'traffic': 'uniform', 'priority': 'age', 'seed': 0}
    >>> [c["priority"] for c in study_cells(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], saturation=True,
    ...                                                   priority=["age", "growing-rank"]))]
    ['age', 'growing-rank']
    """
    if study.loads is not None:
        return [{"routing": r, "traffic": t, "priority": q, "offered": load, "seed": s} for r in study.routings
                for t in study.traffics for q in study.priorities for load in study.loads for s in study.seeds]
    cells = [{"routing": r, "traffic": t, "priority": q, "seed": s, **({"permutation": i} if m else {})}
             for r in study.routings for t in study.traffics for q in study.priorities for s in study.seeds
             for m in [random_perm_count(t)] for i in range(max(m, 1))]
    extra = worst_case_cells(study, exact_routings(study))
    if not extra:
        return cells
    order = {r: i for i, r in enumerate(study.routings)}   # each routing's worst-case cells after its others
    return sorted(cells + extra, key=lambda c: order[c["routing"]])


def cell_key(cell: dict) -> str:
    """A cell as a dictionary key (its fields sorted, so that the order they came in does not matter).

    Examples
    --------
    >>> cell_key({"seed": 0, "routing": "dor"})
    '{"routing": "dor", "seed": 0}'
    """
    return json.dumps(cell, sort_keys=True)


def chunks(study, pending: list[dict], jobs: int) -> list[list[dict]]:
    """The pending cells grouped into tasks.

    A load sweep batches up to :data:`CHUNK_RUNS` runs per chunk, and with ``jobs > 1`` makes at
    least two chunks per worker; with the cells ordered by offered load, chunk i takes every n-th
    from the i-th, so that low and high loads (quick and slow runs) mix and the workers finish
    together. A saturation table runs in this process as one chunk (the zero-load runs batched,
    then the searches in groups of :data:`SEARCH_GROUP` whose rounds run together, each group
    handed back as it finishes) and in workers one group per task, groups made smaller so that
    every worker gets at least two. The runs of a batch share one priority rule, so the cells of
    each priority are chunked apart.

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study = OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.1, 0.2, 0.3, 0.4, 0.5])
    >>> [[c["offered"] for c in chunk] for chunk in chunks(study, study_cells(study), jobs=2)]
    [[0.1, 0.5], [0.2], [0.3], [0.4]]
    >>> [[c["offered"] for c in chunk] for chunk in chunks(study, study_cells(study)[::-1], jobs=1)]
    [[0.1, 0.2, 0.3, 0.4, 0.5]]
    """
    if not pending:
        return []
    rules = list(dict.fromkeys(c["priority"] for c in pending))
    if len(rules) > 1:      # each rule's cells apart, the workers shared out among the rules
        share = max(1, math.ceil(jobs / len(rules)))
        return [chunk for rule in rules
                for chunk in chunks(study, [c for c in pending if c["priority"] == rule], share if jobs > 1 else 1)]
    if study.loads is None:
        if jobs == 1:
            return [pending]
        # at least two groups per worker where the searches allow: every worker busy, and the
        # progress bar moves as each group comes back
        size = max(1, min(SEARCH_GROUP, math.ceil(len(pending) / (2 * jobs))))
        return [pending[i:i + size] for i in range(0, len(pending), size)]
    count = math.ceil(len(pending) / CHUNK_RUNS)
    if jobs > 1:
        count = max(count, min(len(pending), 2 * jobs))
    by_load = sorted(pending, key=lambda c: c["offered"])  # stable: the study's order within a load
    return [by_load[i::count] for i in range(count)]


def run_cells(study, cells: list[dict], progress: Callable[[int], None] | None = None,
              jobs: int = 1) -> Iterator[list[dict]]:
    """Run ``cells`` (one chunk) and yield their results-file lines as they finish, in groups.

    Parameters
    ----------
    study : universal.openloop.study.OpenLoopStudy
    cells : list of dict
        Cells of the study (:func:`study_cells`).
    progress : callable, optional
        Called with 1 whenever a run of a load sweep finishes (before its chunk does).
    jobs : int
        Worker processes that share a screened worst case's passes and searches
        (:func:`universal.openloop.screen.screened_minimum`); the other cells run here.

    Yields
    ------
    list of dict
        The lines finished together.

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study = OpenLoopStudy("torus:k=8,n=1", ["dor"], ["tornado"], loads=[0.2, 0.25], window=300)
    >>> [[line["row"]["hops_mean"] for line in group] for group in run_cells(study, study_cells(study))]
    [[3.0, 3.0]]
    """
    p = prepare(study)

    def spec(c: dict, rate: float) -> RunSpec:
        return _cell_spec(p, c, rate)

    rules = list(dict.fromkeys(c["priority"] for c in cells))
    if len(rules) > 1:      # the runs of a batch share one priority rule
        for rule in rules:
            yield from run_cells(study, [c for c in cells if c["priority"] == rule], progress, jobs)
        return
    if study.loads is not None:
        results = simulate_batch([spec(c, c["offered"]) for c in cells], bandwidth=study.bandwidth,
                                 buffer=study.buffer, measurement=Measurement(window=study.window), progress=progress,
                                 vcs=study.vcs, source_queue=study.source_queue,
                                 vc_buffer=study.vc_buffer)
        yield [_load_line(study, p, c, res) for c, res in zip(cells, results)]
        return
    for c in cells:     # a screened worst case: one cell for M permutations (screen.py)
        if "screen" in c:
            yield [_screened_line(study, p, c, jobs)]
    cells = [c for c in cells if "screen" not in c]
    # the zero-load latency of each (routing, traffic); the permutations of random-perms:M have
    # only their saturation throughput (GOAL's Figure 9)
    named = [c for c in cells if "permutation" not in c]
    zero = simulate_batch([spec(c, ZERO_LOAD) for c in named], bandwidth=study.bandwidth, buffer=study.buffer,
                          measurement=Measurement(window=study.window or 3000, drain=True),
                          vcs=study.vcs, source_queue=study.source_queue,
                                 vc_buffer=study.vc_buffer) if named else []
    zero_of = {cell_key(c): z for c, z in zip(named, zero)}
    # Searches run in groups whose rounds share the engine's batches (find_saturations); each
    # group's lines are handed back when it ends. Oblivious and adaptive searches are grouped
    # apart (an adaptive run makes its whole batch carry the adaptive state).
    in_order = sorted(cells, key=lambda c: p.routers[c["routing"]].adaptive)
    for at in range(0, len(in_order), SEARCH_GROUP):
        group = in_order[at:at + SEARCH_GROUP]
        sats = find_saturations([spec(c, 1.0) for c in group], tolerance=study.tolerance,
                                bandwidth=study.bandwidth, buffer=study.buffer, vcs=study.vcs,
                                source_queue=study.source_queue, measurement=search_measurement(study),
                                vc_buffer=study.vc_buffer, starts=[_search_start(study, p, c) for c in group])
        yield [_saturation_line(study, p, c, sat, zero_of.get(cell_key(c))) for c, sat in zip(group, sats)]


def _cell_spec(p: Prepared, c: dict, rate: float) -> RunSpec:
    """The run template of cell ``c`` at ``rate`` (in the study's units)."""
    traffic = (permutation_traffic(p, c["traffic"], c["seed"], c["permutation"]) if "permutation" in c
               else p.worst[c["routing"]][0] if c["traffic"] == WORST_CASE else p.traffics[c["traffic"]])
    return RunSpec(traffic, p.routers[c["routing"]], p.injection, rate * p.scale,
                   seed=c["seed"], priority=c["priority"])


def screen_specs(study, c: dict) -> list[RunSpec]:
    """The run templates of a screened cell's M permutations, built in the calling process (a
    worker's too: :func:`prepare` is cached there, and a forked worker inherits the parent's).

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study = OpenLoopStudy("torus:k=4,n=2", ["goal"], ["uniform"], saturation=True, worst_case=True,
    ...                       random_perms=3, screen_perms=True)
    >>> [s.traffic.name for s in screen_specs(study, study_cells(study)[-1])]
    ['random-perms:3#0', 'random-perms:3#1', 'random-perms:3#2']
    """
    p = prepare(study)
    return [_cell_spec(p, {**c, "permutation": i}, 1.0) for i in range(p.random_perms[c["traffic"]])]


def _screened_line(study, p: Prepared, c: dict, jobs: int = 1) -> dict:
    """The results-file line of a screened worst case (:mod:`universal.openloop.screen`): the
    lowest Θ over the cell's M permutations, the permutation that gave it, every permutation
    searched in full with its Θ, and the screening passes (rate, permutations run, unstable)."""
    count = p.random_perms[c["traffic"]]
    specs = screen_specs(study, c)
    # a pilot of at most 8 (the scenario's first 8 of 1,000), fewer for small M so that some are
    # screened; with jobs > 1 the workers build the specs themselves (a network does not pickle)
    got = screened_minimum(specs, pilot=min(8, max(1, count // 8)), tolerance=study.tolerance,
                           bandwidth=study.bandwidth, buffer=study.buffer, vcs=study.vcs,
                           source_queue=study.source_queue, measurement=search_measurement(study),
                           vc_buffer=study.vc_buffer, jobs=jobs, source=partial(screen_specs, study, c))
    low = got.searched[got.index]
    row = {**_base(c), "saturation": got.theta / p.scale, "upper": low.upper / p.scale, "limited": low.limited,
           "analytic": None, "analytic_value": None, "ratio": None, "zero_load_latency": None, "hops_mean": None,
           "runs": got.runs, "screened": count, "screen_permutation": got.index,
           "searched": {str(i): s.theta / p.scale for i, s in sorted(got.searched.items())},
           "screens": [[s.rate / p.scale, s.tested, s.unstable] for s in got.steps]}
    return {"cell": c, "row": row, "pairs": []}


def search_measurement(study) -> Measurement:
    """How a saturation table's searches measure their runs: BookSim's latency threshold of 500
    steps, no drain and no latencies kept (the verdicts are all a search needs)."""
    return Measurement(window=study.window, latency_limit=500, drain=False, overload="stop", latencies=False)


def _search_start(study, p: Prepared, c: dict) -> float | None:
    """Where the search of cell ``c`` starts (packets per node per step): the exact Θ of an
    oblivious routing where the analysis has one for the model simulated (unbounded buffers,
    SPEC §11's source queue), else None (:func:`universal.openloop.saturation.find_saturations`)."""
    if study.buffer is not None or study.source_queue != "all":
        return None
    if "permutation" in c:
        values = permutation_exact(p, c["routing"], c["traffic"], c["seed"])
        exact = None if values is None else values[c["permutation"]]
    else:
        exact = p.exact.get((c["routing"], c["traffic"]))
    return None if exact is None else float(exact) * p.scale


def run_chunk(study, cells: list[dict]) -> list[dict]:
    """:func:`run_cells` as one call (a top-level function: what a worker process runs).

    Parameters
    ----------
    study : universal.openloop.study.OpenLoopStudy
    cells : list of dict

    Returns
    -------
    list of dict
        The results-file lines of ``cells``, in their order.

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study = OpenLoopStudy("torus:k=8,n=1", ["dor"], ["tornado"], loads=[0.2], window=300)
    >>> [sorted(line) for line in run_chunk(study, study_cells(study))]
    [['cell', 'pairs', 'row']]
    """
    return [line for group in run_cells(study, cells) for line in group]


def _base(c: dict) -> dict:
    return {"routing": c["routing"], "traffic": c["traffic"], "priority": c["priority"], "seed": c["seed"],
            **({"permutation": c["permutation"]} if "permutation" in c else {}),
            **({"screen": True} if "screen" in c else {})}


def _load_line(study, p: Prepared, c: dict, res: RunResult) -> dict:
    def sc(x):
        return None if x is None else x / p.scale

    delay = getattr(study, "router_delay", 0)
    histogram = getattr(study, "histogram", False)
    packets = res.labelled_packets
    latency = None if packets is None else delayed_latency(packets[2], packets[3], delay)
    summary = {k: getattr(res, k) for k in ("latency_mean", "latency_p50", "latency_p99", "latency_max",
                                            "hops_mean")}
    if delay and latency is not None:        # every latency statistic of the delayed latencies
        summary = latency_summary(latency, packets[3])
    value = p.exact.get((c["routing"], c["traffic"]))
    row = {**_base(c), "offered": c["offered"], "accepted": sc(res.accepted), "accepted_min": sc(res.accepted_min),
           **summary, "stable": res.stable, "status": res.status,
           "analytic_value": None if value is None else float(value)}
    if histogram:
        row["histogram"] = None if latency is None else latency_histogram(latency)
    group = p.translations
    pairs = []
    for text, (s, d) in zip(study.pairs, p.pairs):
        mask = None if latency is None else (pair_mask(packets, s, d) if group is None
                                             else translate_mask(packets, group, s, d))
        got = res.pair_latency(s, d) if group is None else _pooled_latency(latency, packets, mask)
        if got is not None and delay and group is None:
            got = (got[0] + delay * got[1], got[1], got[2])
        pair = {**_base(c), "offered": c["offered"], "pair": text,
                **({} if group is None else {"translates": group.size}),
                "latency_mean": got[0] if got else None, "hops_mean": got[1] if got else None,
                "packets": got[2] if got else 0}
        if histogram:
            pair["histogram"] = None if latency is None else latency_histogram(latency[mask])
        pairs.append(pair)
    return {"cell": c, "row": row, "pairs": pairs}


def _pooled_latency(latency, packets, mask) -> tuple[float, float, int] | None:
    """Mean latency (router delay included), mean hops and count of the packets of ``mask``, as
    :meth:`RunResult.pair_latency` gives them for one pair (None without packets)."""
    if latency is None or not mask.any():
        return None
    return float(latency[mask].mean()), float(np.asarray(packets[3])[mask].mean()), int(mask.sum())


def _saturation_line(study, p: Prepared, c: dict, sat, z: RunResult | None) -> dict:
    theta = sat.theta / p.scale
    if "permutation" in c:
        values = permutation_exact(p, c["routing"], c["traffic"], c["seed"])
        exact = None if values is None else values[c["permutation"]]
    else:
        exact = p.exact.get((c["routing"], c["traffic"]))
    delay = getattr(study, "router_delay", 0)
    zero = None if z is None or z.latency_mean is None else z.latency_mean + delay * z.hops_mean
    row = {**_base(c), "saturation": theta, "upper": sat.upper / p.scale, "limited": sat.limited,
           "analytic": None if exact is None else str(exact),
           "analytic_value": None if exact is None else float(exact),
           "ratio": None if exact is None or exact == 0 else theta / float(exact),
           "zero_load_latency": zero, "hops_mean": None if z is None else z.hops_mean, "runs": len(sat.runs)}
    if c["traffic"] == WORST_CASE:    # the ideal network's Θ of it, with bounded buffers too
        row["worst_case_exact"] = float(p.worst[c["routing"]][2])
    return {"cell": c, "row": row, "pairs": []}
