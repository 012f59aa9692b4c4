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
``resume=True`` skips those cells. An existing results file is continued (``resume=True``) or
replaced (``overwrite=True``) only when it is one (recognised by its header line); anything else
at that name is refused and left as it is. A cell's rows depend only on the cell and the seeds, never on
the order cells run in, so ``jobs > 1`` (local processes) and resumed runs give the same final
results as one uninterrupted run.

Results file: the first line is ``{"sweep": NAME, "settings": {...}, "version": V, "command": C}``
(what the results were computed with, by which version of ``universal`` and which command line;
resuming with other settings is refused), then one line per finished cell:
``{"cell": {AXIS: VALUE, ...}, "network": {name, nodes, links}, "captions": [...], "rows": [...]}``
with the rows of :class:`universal.experiment.Row`. Resuming checks every line (field names and
types, cells of this sweep, each once, with all their rows) and refuses a file that fails, naming
the line, without changing it.
"""

from __future__ import annotations

import itertools
import json
import math
import string
import time
import types
import typing
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from universal.errors import UserError
from universal.experiment import (ROW_STATUSES, Experiment, Row, check_experiment, check_seed_count, rows_in,
                                  run_experiment)
from universal.registry import named_files
from universal.results import (BadLine, check_field_names, check_results_path, read_results_file, resumes_itself,
                               remove_stale_temporaries, write_results_file)
from universal.workers import run_in_processes

#: Placeholders may appear in these fields of the experiment.
TEMPLATED = ("network", "problem", "paths", "protocols")

#: Sweeps with more cells than this are refused before any cell is made.
MAX_CELLS = 10_000


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

    def cell_count(self) -> int:
        """Number of cells (the product of the axis lengths), without making them.

        Examples
        --------
        >>> Sweep("big", Experiment("torus:k={k},n={n}", "h-relation:h=1", None, ["fifo"]),
        ...       {"k": list(range(3, 1003)), "n": list(range(1, 1001))}).cell_count()
        1000000
        """
        return math.prod(len(values) for values in self.axes.values())

    def cells(self) -> list[dict]:
        """Every combination of axis values, the first axis varying slowest.

        Raises
        ------
        UserError
            If there are more than :data:`MAX_CELLS` cells.
        """
        count = self.cell_count()
        if count > MAX_CELLS:
            raise UserError(f"sweep {self.name!r} has {count:,} cells, more than this tool runs "
                            f"(at most {MAX_CELLS:,}); use fewer axis values")
        names = list(self.axes)
        return [dict(zip(names, values)) for values in itertools.product(*self.axes.values())]

    def experiment_for(self, cell: dict) -> Experiment:
        """The experiment of one cell: placeholders replaced by the cell's values."""
        changes = {name: _fill(getattr(self.experiment, name), cell) for name in TEMPLATED}
        label = ", ".join(f"{k}={v}" for k, v in cell.items())
        return replace(self.experiment, name=f"{self.name} [{label}]", **changes)

    def inputs(self) -> list[Path]:
        """The files every cell reads (edge lists, permutations, pairs, paths), links not resolved."""
        texts = []
        for cell in self.cells():
            exp = self.experiment_for(cell)
            for name in TEMPLATED:
                value = getattr(exp, name)
                texts.extend(value if isinstance(value, (list, tuple)) else [value])
        return named_files(texts, self.experiment.base_dir)

    def settings(self) -> dict:
        """What the results depend on (stored in the results file and compared on resume)."""
        exp = self.experiment
        return {
            "axes": self.axes,
            **{name: _jsonable(getattr(exp, name)) for name in TEMPLATED},
            "seeds": list(exp.seeds),
            "bandwidth": _jsonable(exp.bandwidth),
            "buffer": _jsonable(exp.buffer),
            # only when not 1: the results files of sweeps before V was a setting still resume
            **({"vcs": _jsonable(exp.vcs)} if exp.vcs != 1 else {}),
            "engine": exp.engine,
            **({"opt": exp.opt, "time_limit": exp.time_limit} if exp.opt is not None else {}),
        }


def _jsonable(value):
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value if value is None or isinstance(value, (int, float, str)) else str(value)


def _fill(value, cell: dict):
    """``value`` with every ``{axis}`` replaced by the cell's value (lists item by item).

    Only bare axis names may stand in braces (an optional format such as ``{d:02d}`` aside):
    ``{d[0]}``, ``{d.real}`` or ``{0}`` would reach into Python objects, not name an axis.
    """
    if isinstance(value, (list, tuple)):
        return [_fill(v, cell) for v in value]
    if not isinstance(value, str):
        return value
    axes = f"axes: {', '.join(cell) or 'none'}"
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(value) if name is not None]
    except ValueError:
        raise UserError(f"{value!r}: unmatched brace; placeholders look like {{d}} ({axes})") from None
    for name in fields:
        if name not in cell:
            if name.isidentifier():
                raise UserError(f"{value!r} names {{{name}}}, which is not a sweep axis ({axes})")
            raise UserError(f"{value!r}: {{{name}}} is not a placeholder; braces must hold a sweep axis "
                            f"name alone, e.g. {{d}} ({axes})")
    try:
        return value.format_map(cell)
    except (ValueError, TypeError) as exc:
        raise UserError(f"{value!r}: cannot fill the placeholders of cell {cell} ({exc})") from None


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
    """The finished cells in a results file written for the same settings (keyed by cell).

    Every line is checked before anything is used: the header (line 1), then each cell line's
    fields and their types, that its cell belongs to ``sweep`` and appears once, and that it
    holds all the rows of that cell (:func:`universal.results.read_results_file`).

    Raises
    ------
    UserError
        Naming the first line that fails.
    """
    cells = {_key(c): c for c in sweep.cells()}

    def parse(data: object) -> tuple[str, CellResult]:
        cell = _cell_line(data, sweep, cells)
        return _key(cell.cell), cell

    return read_results_file(path, sweep.settings(), parse)


_ROW_TYPES = typing.get_type_hints(Row)


def _cell_line(data: object, sweep: Sweep, cells: dict[str, dict]) -> CellResult:
    """A cell line, checked field by field (raises :class:`universal.results.BadLine` saying what is wrong)."""
    if not isinstance(data, dict) or set(data) != {"cell", "network", "captions", "rows"}:
        raise BadLine("not a cell line (an object with cell, network, captions and rows)")
    cell = data["cell"]
    if not isinstance(cell, dict) or _key(cell) not in cells:
        raise BadLine(f"cell {json.dumps(cell)} is not a cell of this sweep (axes: {', '.join(sweep.axes)})")
    network = data["network"]
    if not (isinstance(network, dict) and set(network) == {"name", "nodes", "links"}
            and isinstance(network["name"], str)
            and all(_fits(network[k], int) for k in ("nodes", "links"))):
        raise BadLine("'network' must be an object with name, nodes and links")
    if not _fits(data["captions"], list[str]):
        raise BadLine("'captions' must be a list of strings")
    rows = data["rows"]
    expected = rows_in(sweep.experiment_for(cell))
    if not isinstance(rows, list) or len(rows) != expected:
        got = len(rows) if isinstance(rows, list) else "no list of"
        raise BadLine(f"cell {json.dumps(cell)} holds {got} rows, not the {expected} it runs")
    for number, row in enumerate(rows, 1):
        if isinstance(row, dict) and "vcs" not in row:    # written before rows had V: they ran with V = 1
            row["vcs"] = 0 if row.get("buffer") == 0 else 1
        _check_row(row, number)
    _check_seeds(rows, sweep.experiment_for(cell).seeds, cell)
    return CellResult(cell, network, [Row(**r) for r in rows], data["captions"])


def _check_seeds(rows: list[dict], seeds: list[int], cell: dict) -> None:
    """Every seed of the cell's experiment holds the same share of its rows, and no other seed any."""
    from collections import Counter
    got = Counter(row["seed"] for row in rows)
    per_seed = len(rows) // max(1, len(seeds))
    for seed in got:
        if seed not in seeds:
            raise BadLine(f"cell {json.dumps(cell)} holds a row of seed {seed}, which this sweep does not run")
    for seed in seeds:
        if got[seed] != per_seed:
            raise BadLine(f"cell {json.dumps(cell)} holds {got[seed]} rows of seed {seed}, not {per_seed}")


def _check_row(row: object, number: int) -> None:
    check_field_names(row, _ROW_TYPES, f"row {number}")
    for name, hint in _ROW_TYPES.items():
        if not _fits(row[name], hint):
            raise BadLine(f"row {number}: {name} = {json.dumps(row[name])} is not {_type_name(hint)}")
    if row["status"] not in ROW_STATUSES:
        raise BadLine(f"row {number}: status {json.dumps(row['status'])} is none of {', '.join(ROW_STATUSES)}")


def _fits(value: object, hint: object) -> bool:
    """Whether a JSON value has the type of a :class:`Row` field annotation."""
    if isinstance(hint, types.UnionType):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if typing.get_origin(hint) is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, hint)


def _type_name(hint: object) -> str:
    if isinstance(hint, types.UnionType):
        return " or ".join(_type_name(h) for h in typing.get_args(hint))
    if typing.get_origin(hint) is list:
        return f"a list of {_type_name(typing.get_args(hint)[0])}"
    return {type(None): "null", bool: "true/false", int: "an integer", float: "a number", str: "a string"}.get(
        hint, str(hint))


def _write_results(path: Path, sweep: Sweep, done: dict[str, CellResult], command: str | None) -> None:
    order = [_key(c) for c in sweep.cells()]
    write_results_file(path, sweep.name, sweep.settings(), [done[k].to_json() for k in order if k in done], command)


def _check_distinct_cells(sweep: Sweep, cells: list[dict]) -> None:
    """Refuse an axis value listed twice: it makes the same cell twice, and a results file
    holding a cell twice is one that ``--resume`` must refuse."""
    if len({_key(c) for c in cells}) == len(cells):
        return
    for name, values in sweep.axes.items():
        keys = [json.dumps(v, sort_keys=True) for v in values]
        for i, key in enumerate(keys):
            if key in keys[:i]:
                raise UserError(f"sweep axis {name!r} lists {values[i]!r} twice (each value makes its own cells "
                                f"of the results file); give it once")
    raise UserError(f"sweep {sweep.name!r} makes the same cell twice; give every axis value once")


def run_sweep(sweep: Sweep, *, results_file: str | Path | None = None, resume: bool = False,
              overwrite: bool = False, jobs: int = 1, progress: Callable[[int, int], None] | None = None,
              command: str | None = None, executor=None) -> SweepResult:
    """Run every cell of ``sweep`` (skipping finished ones when resuming) and collect the rows.

    Parameters
    ----------
    sweep : Sweep
    results_file : str or Path, optional
        JSON Lines file that receives every finished cell as soon as it finishes (atomically).
    resume : bool
        Read ``results_file`` first and skip the cells it already holds.
    overwrite : bool
        Replace an existing ``results_file`` (without ``resume`` or ``overwrite`` an existing
        results file is refused; a file that is not one is always refused: see
        :func:`check_results_path`).
    jobs : int
        Worker processes (1: run in this process). They ignore Ctrl-C and never outlive the call
        (:func:`universal.workers.run_in_processes`).
    progress : callable, optional
        Called as ``progress(done, total)`` whenever a cell finishes (and once at the start).
    command : str, optional
        The command line that ran the sweep, recorded in the results file's header.
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
    check_seed_count(len(sweep.experiment.seeds), f"sweep {sweep.name!r}")
    cells = sweep.cells()
    if not cells:
        raise UserError(f"sweep {sweep.name!r} has no cells: every axis needs at least one value")
    _check_distinct_cells(sweep, cells)
    experiments = {_key(c): sweep.experiment_for(c) for c in cells}
    for exp in experiments.values():
        check_experiment(exp)  # every cell's names and sizes, before the first run
    if results_file is not None:   # the same sweep run again shows its stored results
        resume = resumes_itself(results_file, sweep.settings(), resume=resume, overwrite=overwrite)
    path = None if results_file is None else check_results_path(results_file, resume=resume, overwrite=overwrite)
    done: dict[str, CellResult] = {}
    if path is not None:
        remove_stale_temporaries(path)
    if resume and path is not None and path.exists():
        done = read_results(path, sweep)
    resumed = len(done)
    pending = [c for c in cells if _key(c) not in done]
    start = time.perf_counter()

    def finished(result: CellResult) -> None:
        done[_key(result.cell)] = result
        if path is not None:
            _write_results(path, sweep, done, command)
        if progress:
            progress(len(done), len(cells))

    if progress:
        progress(len(done), len(cells))
    if executor is not None and pending:
        executor.connect()  # an unreachable scheduler is reported before the results file is touched
    if path is not None and not done:
        _write_results(path, sweep, done, command)  # a fresh run starts a fresh file
    if executor is not None and pending:
        executor.run(run_cell, [(experiments[_key(c)], c) for c in pending], finished)
    elif jobs == 1 or len(pending) <= 1:
        for cell in pending:
            finished(run_cell(experiments[_key(cell)], cell))
    else:
        for result in run_in_processes(run_cell, [(experiments[_key(c)], c) for c in pending], jobs):
            finished(result)
    ordered = [done[_key(c)] for c in cells]
    return SweepResult(sweep, ordered, resumed, len(pending), path, time.perf_counter() - start)
