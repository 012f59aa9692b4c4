"""Open-loop studies: load sweeps and saturation tables over routings, traffics and seeds, the
API behind ``universal openloop`` and ``kind = "openloop"`` scenarios (SPEC §8, §11).

Rates are fractions of capacity by default (SPEC §7: 1.0 loads the busiest channel of uniform
traffic under minimal balanced routing to B; on the 8-ary 2-cube that is one packet per node
per step), or packets per node per step with ``units="packets"``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from universal.errors import UserError
from universal.openloop.cells import (ZERO_LOAD, analytic_throughput, cell_key, check_distinct_loads, chunks,
                                      forget_prepared, prepare, run_cells, run_chunk, study_cells)
from universal.openloop.histograms import check_router_delay, permutation_summary
from universal.openloop.lines import parse_line
from universal.openloop.worstcase import check_worst_case_options, exact_routings, worst_case_cells, worst_case_summary
from universal.results import (check_results_path, read_results_file, remove_stale_temporaries, resumes_itself,
                               write_results_file)

__all__ = ["OpenLoopStudy", "OpenLoopReport", "run_study", "parse_loads", "analytic_throughput", "ZERO_LOAD",
           "MAX_CELLS"]

#: Studies with more cells (runs of a load sweep, searches of a saturation table) are refused.
MAX_CELLS = 100_000


#: Most offered loads one study takes (an a:b:step range or a list).
MAX_LOADS = 1000


def parse_loads(text: str) -> list[float]:
    """``a:b:step`` (inclusive) or a comma-separated list of loads.

    Examples
    --------
    >>> parse_loads("0.1:0.5:0.1")
    [0.1, 0.2, 0.3, 0.4, 0.5]
    >>> parse_loads("0.2,0.9")
    [0.2, 0.9]
    """
    parts = text.split(":") if ":" in text else [x for x in text.split(",") if x.strip()]
    if ":" in text and len(parts) != 3:
        raise UserError(f"--loads {text!r}: expected a:b:step or numbers separated by commas")
    if len(parts) > MAX_LOADS:
        raise UserError(f"--loads lists {len(parts):,} loads (at most {MAX_LOADS:,})")
    try:
        numbers = [float(x) for x in parts]
    except ValueError:
        raise UserError(f"--loads {text!r}: expected a:b:step or numbers separated by commas") from None
    if not all(math.isfinite(v) for v in numbers):
        raise UserError(f"--loads {text!r}: loads and steps must be finite numbers")
    if ":" in text:
        a, b, step = numbers
        if step <= 0 or b < a:
            raise UserError(f"--loads {text!r}: need a <= b and a positive step")
        count = math.floor((b - a) / step + 1e-9) + 1
        if count > MAX_LOADS:
            raise UserError(f"--loads {text!r} asks for {count:,} loads (at most {MAX_LOADS:,})")
        values = [round(a + i * step, 12) for i in range(count)]
    else:
        values = numbers
    if not values:
        raise UserError("--loads is empty")
    bad = [v for v in values if not v > 0]
    if bad:
        raise UserError(f"offered loads must be positive (got {bad[0]:g})")
    check_distinct_loads(values)
    return values


@dataclass
class OpenLoopStudy:
    """What to simulate (see :func:`run_study`)."""

    network: str
    routings: list[str]
    traffics: list[str]
    loads: list[float] | None = None
    saturation: bool = False
    injection: str = "bernoulli"
    units: str = "capacity"
    seeds: list[int] = field(default_factory=lambda: [0])
    #: One contention rule (a name) or several (a list: the priority becomes an axis of the study).
    priority: str | list[str] = "age"
    bandwidth: int = 1
    buffer: int | None = None
    #: Virtual channels per link (:mod:`universal.engine.vcs`); 1 is one buffer per link.
    vcs: int = 1
    #: The source queue's model (:mod:`universal.engine.source_queue`): ``all`` or ``fifo``.
    source_queue: str = "all"
    #: The VC buffer's model (:mod:`universal.engine.fifo_vcs`): ``set`` or ``fifo``.
    vc_buffer: str = "set"
    window: int | None = None
    tolerance: float = 0.01
    name: str = "openloop"
    base_dir: Path | None = None
    pairs: list[str] = field(default_factory=list)
    #: Worker processes a scenario asks for by default (``--jobs`` overrides); rows never depend on it.
    jobs: int = 1
    #: With loads: every row (and pair) also carries the histogram of its labelled packets' latency.
    histogram: bool = False
    #: Steps added to latency per hop (a pipelined router; :mod:`universal.openloop.histograms`).
    router_delay: int = 0
    #: Every pair's row pools the packets of all its translates (tori and hypercubes under
    #: translation-invariant traffic and routing; :mod:`universal.openloop.translates`).
    pool_translates: bool = False
    #: With saturation: each routing's lowest Θ over its patterns, its exact worst-case permutation
    #: searched too where it has one (:mod:`universal.openloop.worstcase`)
    worst_case: bool = False
    #: With ``worst_case``: random permutations searched for each routing without an exact worst case
    random_perms: int = 0
    #: With ``random_perms``: only their lowest Θ, screened instead of searching each one
    #: (:mod:`universal.openloop.screen`; one cell per routing)
    screen_perms: bool = False

    @property
    def priorities(self) -> list[str]:
        """The contention rules, as a list (one for a study of one rule).

        Examples
        --------
        >>> OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.5], priority="fifo").priorities
        ['fifo']
        """
        return [self.priority] if isinstance(self.priority, str) else list(self.priority)

    def priority_setting(self) -> str | list[str]:
        """The priority as results files and ``--json`` name it: the name of a study's one rule (as
        before priorities could be an axis, so older results files still resume), else the list.

        Returns
        -------
        str or list of str

        Examples
        --------
        >>> OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.5], priority=["age"]).priority_setting()
        'age'
        >>> OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.5],
        ...               priority=["age", "growing-rank"]).priority_setting()
        ['age', 'growing-rank']
        """
        rules = self.priorities
        return rules[0] if len(rules) == 1 else rules

    def settings(self) -> dict:
        """What the rows depend on: the header of a results file, compared on ``--resume``.

        Examples
        --------
        >>> OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.5]).settings()["kind"]
        'openloop'
        """
        return {"kind": "openloop", "network": self.network, "routings": list(self.routings),
                "traffics": list(self.traffics), "loads": None if self.loads is None else list(self.loads),
                "saturation": self.saturation, "injection": self.injection, "units": self.units,
                "seeds": list(self.seeds), "priority": self.priority_setting(), "bandwidth": self.bandwidth,
                "buffer": self.buffer, "window": self.window, "tolerance": self.tolerance, "pairs": list(self.pairs),
                # named only when used, so that results files written before them still resume
                **({"histogram": True} if self.histogram else {}),
                **({"router_delay": self.router_delay} if self.router_delay else {}),
                **({"vcs": self.vcs} if self.vcs != 1 else {}),
                **({"source_queue": self.source_queue} if self.source_queue != "all" else {}),
                **({"vc_buffer": self.vc_buffer} if self.vc_buffer != "set" else {}),
                **({"pool_translates": True} if self.pool_translates else {}),
                **({"worst_case": True, "random_perms": self.random_perms,
                     **({"screen_perms": True} if self.screen_perms else {})} if self.worst_case else {})}

    def cell_count(self) -> int:
        """Runs of a load sweep, or searches of a saturation table (without making the cells).

        Examples
        --------
        >>> OpenLoopStudy("torus:k=4,n=2", ["dor", "val"], ["uniform"], loads=[0.1, 0.2], seeds=[0, 1]).cell_count()
        8
        """
        if self.loads is not None:
            return len(self.routings) * len(self.traffics) * len(self.priorities) * len(self.seeds) * len(self.loads)
        from universal.openloop.cells import random_perm_count   # random-perms:M: one search per permutation

        traffics = sum(max(1, random_perm_count(t)) for t in self.traffics)
        return (len(self.routings) * traffics * len(self.priorities) * len(self.seeds)
                + len(worst_case_cells(self, exact_routings(self))))


@dataclass
class OpenLoopReport:
    """Rows of a study (dicts, the ``--json`` rows) and what they were measured on."""

    study: OpenLoopStudy
    network: dict
    capacity_rate: float | None
    rows: list[dict]
    pairs: list[dict] = field(default_factory=list)
    results_file: Path | None = None
    resumed: int = 0
    computed: int = 0
    seconds: float = 0.0
    #: CHAOS routings (no VCs) -> the places of every node's shared queue, for the title
    shared_queues: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        s = self.study
        out = {"name": s.name, "network": self.network, "units": s.units, "injection": s.injection,
               "priority": s.priority_setting(), "bandwidth": s.bandwidth, "buffer": s.buffer,
               "capacity_rate": self.capacity_rate,
               "results_file": None if self.results_file is None else str(self.results_file),
               "resumed_cells": self.resumed, "rows": self.rows}
        if self.pairs:
            out["pairs"] = self.pairs
        if s.router_delay:
            out["router_delay"] = s.router_delay
        if s.vcs != 1:
            out["vcs"] = s.vcs
        out["source_queue"] = s.source_queue
        if s.vc_buffer != "set":
            out["vc_buffer"] = s.vc_buffer
        if s.pool_translates:
            out["pool_translates"] = True
        if self.shared_queues:
            out["shared_queues"] = self.shared_queues
        summary = permutation_summary(self.rows) if s.loads is None else []
        if summary:
            out["random_perms"] = summary
        if s.worst_case:
            out["worst_case"] = worst_case_summary(self.rows)
        return out


def run_study(study: OpenLoopStudy, progress: Callable[[float, int], None] | None = None, *,
              results_file: str | Path | None = None, resume: bool = False, overwrite: bool = False,
              jobs: int = 1, command: str | None = None, executor=None) -> OpenLoopReport:
    """Run a load sweep (``loads``) or a saturation table (``saturation``), cell by cell.

    A load sweep's cell is one run (routing, traffic, priority, offered load, seed), a saturation
    table's one search (routing, traffic, priority, seed); cells are batched into chunks for the engine and run in
    this process or in ``jobs`` worker processes (:mod:`universal.openloop.cells`). A cell's rows
    depend only on the cell, so any ``jobs`` and any resumed run give the same rows, in the same
    order, as one uninterrupted run.

    Parameters
    ----------
    study : OpenLoopStudy
    progress : callable, optional
        Called as ``progress(done, total)`` in cells (once at the start, then as runs finish;
        ``done`` may be fractional while a chunk runs here).
    results_file : str or Path, optional
        JSON Lines file that receives every finished cell as soon as its chunk finishes, written
        atomically (:mod:`universal.results`; the same rules as a scenario sweep's).
    resume : bool
        Read ``results_file`` first and skip the cells it holds (needs ``results_file``).
    overwrite : bool
        Replace an existing ``results_file``.
    jobs : int
        Worker processes (1: this process; :func:`universal.workers.run_in_processes`). A
        screened worst case is one cell whose screening passes and full searches the workers
        share (:func:`universal.openloop.screen.screened_minimum`), after the other cells.
    command : str, optional
        The command line, recorded in the results file's header.
    executor : universal.executors.DaskExecutor, optional
        Run the chunks as tasks on a Dask cluster instead (``jobs`` then only shapes the chunks).

    Returns
    -------
    OpenLoopReport

    Examples
    --------
    >>> rep = run_study(OpenLoopStudy("torus:k=8,n=1", ["dor"], ["tornado"], loads=[0.2], window=500))
    >>> row = rep.rows[0]
    >>> row["offered"], row["hops_mean"], row["stable"]
    (0.2, 3.0, True)
    """
    if jobs < 1:
        raise UserError(f"jobs must be at least 1, got {jobs}")
    if resume and overwrite:
        raise UserError("--resume continues the results file and --overwrite replaces it: give one of them")
    if (resume or overwrite) and results_file is None:
        raise UserError(f"--{'resume' if resume else 'overwrite'} applies to a results file: name it with --out FILE")
    check_router_delay(study.router_delay)
    check_worst_case_options(study.worst_case, study.random_perms, study.saturation, study.screen_perms)
    if study.histogram and study.loads is None:
        raise UserError("latency histograms come from a load sweep (loads), not from a saturation search")
    if study.cell_count() > MAX_CELLS:
        raise UserError(f"study {study.name!r} has {study.cell_count():,} runs or searches, more than this tool "
                        f"runs (at most {MAX_CELLS:,}); ask for fewer loads, seeds, routings, traffics or priorities")
    try:
        return _run(study, progress, results_file, resume, overwrite, jobs, command, executor)
    finally:
        forget_prepared()


def _run(study: OpenLoopStudy, progress, results_file, resume: bool, overwrite: bool, jobs: int, command,
         executor) -> OpenLoopReport:
    """:func:`run_study` once its options are checked."""
    prepared = prepare(study)  # every name and size checked before any file is touched
    cells = study_cells(study)
    keys = [cell_key(c) for c in cells]
    if results_file is not None:   # the same study run again shows its stored results
        resume = resumes_itself(results_file, study.settings(), resume=resume, overwrite=overwrite)
    path = None if results_file is None else check_results_path(results_file, resume=resume, overwrite=overwrite)
    done: dict[str, dict] = {}
    if path is not None:
        remove_stale_temporaries(path)
        if resume and path.exists():
            done = read_results_file(path, study.settings(), parse_line(study, dict(zip(keys, cells))))
    resumed = len(done)
    pending = [c for c, k in zip(cells, keys) if k not in done]
    start = time.perf_counter()

    def save() -> None:  # the whole file, in cell order, atomically
        if path is not None:
            write_results_file(path, study.name, study.settings(), [done[k] for k in keys if k in done], command)

    def finished(lines: list[dict]) -> None:
        for line in lines:
            done[cell_key(line["cell"])] = line
        save()
        if progress:
            progress(len(done), len(cells))

    if progress:
        progress(len(done), len(cells))
    # a screened worst case runs here, one at a time, its passes and searches shared by the
    # workers (screen.py): in a worker it would have one process for up to hours
    screened = [c for c in pending if "screen" in c] if jobs > 1 and executor is None else []
    tasks = chunks(study, [c for c in pending if c not in screened], jobs)
    if executor is not None and tasks:
        executor.connect()  # an unreachable scheduler is reported before the results file is touched
    if not done:
        save()  # a fresh run starts a fresh file
    if executor is not None and tasks:
        executor.run(run_chunk, [(study, chunk) for chunk in tasks], finished)
    elif jobs == 1 or len(tasks) <= 1:
        running = 0  # runs of the current chunk finished but not yet handed back

        def one_run(count: int) -> None:
            nonlocal running
            running += count
            if progress:
                progress(len(done) + running, len(cells))

        for chunk in tasks:
            for lines in run_cells(study, chunk, progress=one_run):
                running = max(0, running - len(lines))
                finished(lines)
    else:
        from universal.workers import run_in_processes

        for lines in run_in_processes(run_chunk, [(study, chunk) for chunk in tasks], jobs):
            finished(lines)
    for c in screened:
        for lines in run_cells(study, [c], jobs=jobs):
            finished(lines)
    ordered = [done[k] for k in keys]
    return OpenLoopReport(study, prepared.network.summary(), prepared.capacity, [line["row"] for line in ordered],
                          [pair for line in ordered for pair in line["pairs"]], path, resumed, len(pending),
                          time.perf_counter() - start, _shared_queues(study, prepared))


def _shared_queues(study: OpenLoopStudy, prepared) -> dict[str, int]:
    """The shared queue of each CHAOS routing (places per node; all nodes alike on a torus, the
    largest otherwise), which a title names instead of VCs CHAOS does not have."""
    from universal.engine.chaos import queue_sizes

    return {r: int(queue_sizes(router, study.buffer, study.vcs).max()) for r, router in prepared.routers.items()
            if router.kind == "chaos"}
