"""Sweeps: the same experiment over a grid of sizes (or other parameters), cell by cell.

A scenario with a ``[sweep]`` table names axes and their values; the network, problem, path
system and protocol names may hold ``{axis}`` placeholders::

    network = "butterfly:d={d}"
    problem = "h-relation:h=1"
    [sweep]
    d = [4, 6, 8, 10]

Every *cell* (one value per axis) runs the experiment with every seed. Finished cells are
written to a JSON Lines results file as they complete, atomically (the whole file is rewritten
to a temporary file that replaces it), so a sweep that is interrupted keeps what it finished and
``resume=True`` skips those cells. A cell's rows depend only on the cell and the seeds, never on
the order cells run in, so ``jobs > 1`` (local processes) and resumed runs give the same final
results as one uninterrupted run.

Results file: the first line is ``{"sweep": NAME, "settings": {...}}`` (what the results were
computed with; resuming with other settings is refused), then one line per finished cell:
``{"cell": {AXIS: VALUE, ...}, "network": {name, nodes, links}, "captions": [...], "rows": [...]}``
with the rows of :class:`universal.experiment.Row`.
"""

from __future__ import annotations

import itertools
import json
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from universal.datafiles import write_atomically
from universal.errors import UserError
from universal.experiment import Experiment, Row, check_experiment, run_experiment

#: Placeholders may appear in these fields of the experiment.
TEMPLATED = ("network", "problem", "paths", "protocols")


@dataclass
class Sweep:
    """An experiment template and the axes it is swept over.

    Attributes
    ----------
    name : str
    experiment : Experiment
        Its string fields may hold ``{axis}`` placeholders.
    axes : dict
        Axis name -> list of values, in the order the cells run.

    Examples
    --------
    >>> sw = Sweep("demo", Experiment("butterfly:d={d}", "h-relation:h=1", ["valiant"], ["fifo"]), {"d": [3, 4]})
    >>> [c for c in sw.cells()]
    [{'d': 3}, {'d': 4}]
    >>> sw.experiment_for({"d": 4}).network
    'butterfly:d=4'
    """

    name: str
    experiment: Experiment
    axes: dict[str, list]

    def cells(self) -> list[dict]:
        """Every combination of axis values, the first axis varying slowest."""
        names = list(self.axes)
        return [dict(zip(names, values)) for values in itertools.product(*self.axes.values())]

    def experiment_for(self, cell: dict) -> Experiment:
        """The experiment of one cell: placeholders replaced by the cell's values."""
        changes = {name: _fill(getattr(self.experiment, name), cell) for name in TEMPLATED}
        label = ", ".join(f"{k}={v}" for k, v in cell.items())
        return replace(self.experiment, name=f"{self.name} [{label}]", **changes)

    def settings(self) -> dict:
        """What the results depend on (stored in the results file and compared on resume)."""
        exp = self.experiment
        return {
            "axes": self.axes,
            **{name: _jsonable(getattr(exp, name)) for name in TEMPLATED},
            "seeds": list(exp.seeds),
            "bandwidth": _jsonable(exp.bandwidth),
            "buffer": _jsonable(exp.buffer),
            "engine": exp.engine,
        }


def _jsonable(value):
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value if value is None or isinstance(value, (int, float, str)) else str(value)


def _fill(value, cell: dict):
    if isinstance(value, (list, tuple)):
        return [_fill(v, cell) for v in value]
    if not isinstance(value, str):
        return value
    try:
        return value.format_map(cell)
    except KeyError as exc:
        raise UserError(f"{value!r} names {{{exc.args[0]}}}, which is not a sweep axis "
                        f"(axes: {', '.join(cell) or 'none'})") from None
    except (ValueError, IndexError):
        raise UserError(f"{value!r}: braces must hold a sweep axis name, e.g. {{d}}") from None


@dataclass
class CellResult:
    """The rows of one finished cell."""

    cell: dict
    network: dict
    rows: list[Row]
    captions: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"cell": self.cell, "network": self.network, "captions": self.captions,
                "rows": [asdict(r) for r in self.rows]}

    @classmethod
    def from_json(cls, data: dict) -> "CellResult":
        return cls(data["cell"], data["network"], [Row(**r) for r in data["rows"]], data.get("captions", []))


@dataclass
class SweepResult:
    """All cells of a sweep, in cell order, and how many were read back from the results file."""

    sweep: Sweep
    cells: list[CellResult]
    resumed: int = 0
    computed: int = 0
    results_file: Path | None = None
    seconds: float = 0.0

    def to_json(self) -> dict:
        """The CLI's ``--json`` object: ``scenario``, ``sweep`` (axes), ``results_file`` and ``cells``."""
        return {"scenario": self.sweep.name, "sweep": self.sweep.axes,
                "results_file": None if self.results_file is None else str(self.results_file),
                "resumed_cells": self.resumed, "cells": [c.to_json() for c in self.cells]}


def run_cell(experiment: Experiment, cell: dict) -> CellResult:
    """Run one cell's experiment (a top-level function, so that worker processes can run it)."""
    result = run_experiment(experiment)
    return CellResult(cell, result.network.summary(), result.rows, result.captions)


def _key(cell: dict) -> str:
    return json.dumps(cell, sort_keys=True)


def read_results(path: Path, sweep: Sweep) -> dict[str, CellResult]:
    """The finished cells in a results file written for the same settings (keyed by cell)."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise UserError(f"cannot read results file {str(path)!r}: {exc.strerror}") from None
    try:
        header = json.loads(lines[0]) if lines else None
        if not header or header.get("sweep") is None:
            raise ValueError("no header line")
        if header.get("settings") != json.loads(json.dumps(sweep.settings())):
            raise UserError(f"results file {str(path)!r} was computed with other settings than this sweep; "
                            f"remove it or run without --resume")
        cells = [CellResult.from_json(json.loads(line)) for line in lines[1:] if line.strip()]
    except UserError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"results file {str(path)!r} is not a sweep results file ({exc})") from None
    return {_key(c.cell): c for c in cells}


def _write_results(path: Path, sweep: Sweep, done: dict[str, CellResult]) -> None:
    order = [_key(c) for c in sweep.cells()]
    lines = [json.dumps({"sweep": sweep.name, "settings": sweep.settings()})]
    lines += [json.dumps(done[k].to_json()) for k in order if k in done]
    write_atomically(path, "\n".join(lines) + "\n")


def run_sweep(sweep: Sweep, *, results_file: str | Path | None = None, resume: bool = False, jobs: int = 1,
              progress: Callable[[int, int], None] | None = None, executor=None) -> SweepResult:
    """Run every cell of ``sweep`` (skipping finished ones when resuming) and collect the rows.

    Parameters
    ----------
    sweep : Sweep
    results_file : str or Path, optional
        JSON Lines file that receives every finished cell as soon as it finishes (atomically).
    resume : bool
        Read ``results_file`` first and skip the cells it already holds.
    jobs : int
        Worker processes (1: run in this process).
    progress : callable, optional
        Called as ``progress(done, total)`` whenever a cell finishes (and once at the start).
    executor : universal.executors.DaskExecutor, optional
        Run the pending cells as tasks on a Dask cluster instead (``jobs`` is then ignored).

    Returns
    -------
    SweepResult

    Examples
    --------
    >>> sw = Sweep("demo", Experiment("butterfly:d={d}", "h-relation:h=1", ["valiant"], ["fifo"]), {"d": [3, 4]})
    >>> res = run_sweep(sw)
    >>> [c.cell["d"] for c in res.cells], [c.rows[0].D for c in res.cells]
    ([3, 4], [6, 8])
    """
    if jobs < 1:
        raise UserError(f"jobs must be at least 1, got {jobs}")
    cells = sweep.cells()
    if not cells:
        raise UserError(f"sweep {sweep.name!r} has no cells: every axis needs at least one value")
    experiments = {_key(c): sweep.experiment_for(c) for c in cells}
    for exp in experiments.values():
        check_experiment(exp)  # every cell's names and sizes, before the first run
    path = None if results_file is None else Path(results_file).expanduser()
    done: dict[str, CellResult] = {}
    if resume and path is not None and path.exists():
        done = {k: c for k, c in read_results(path, sweep).items() if k in experiments}
    resumed = len(done)
    pending = [c for c in cells if _key(c) not in done]
    start = time.perf_counter()

    def finished(result: CellResult) -> None:
        done[_key(result.cell)] = result
        if path is not None:
            _write_results(path, sweep, done)
        if progress:
            progress(len(done), len(cells))

    if progress:
        progress(len(done), len(cells))
    if path is not None and not done:
        _write_results(path, sweep, done)  # a fresh run starts a fresh file
    if executor is not None and pending:
        executor.run(run_cell, [(experiments[_key(c)], c) for c in pending], finished)
    elif jobs == 1 or len(pending) <= 1:
        for cell in pending:
            finished(run_cell(experiments[_key(cell)], cell))
    else:
        with ProcessPoolExecutor(max_workers=min(jobs, len(pending))) as pool:
            futures = [pool.submit(run_cell, experiments[_key(c)], c) for c in pending]
            try:
                for future in as_completed(futures):
                    finished(future.result())
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    ordered = [done[_key(c)] for c in cells]
    return SweepResult(sweep, ordered, resumed, len(pending), path, time.perf_counter() - start)
