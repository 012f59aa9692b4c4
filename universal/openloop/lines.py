"""The lines of an open-loop study's results file, checked before ``--resume`` trusts them
(SPEC §8, §11): each is ``{"cell": {...}, "row": {...}, "pairs": [...]}`` for one cell of the
study (:mod:`universal.openloop.cells`), with the fields and types this version writes.

Lines of a single-priority study written before the priority was an axis of the study have no
``priority`` field; they are read as this version writes them (the study's one rule filled in).
"""

from __future__ import annotations

import json
from typing import Callable

from universal.openloop.cells import cell_key
from universal.openloop.worstcase import WORST_CASE
from universal.results import BadLine, check_field_names

__all__ = ["LOAD_FIELDS", "SATURATION_FIELDS", "PAIR_FIELDS", "RUN_STATUSES", "parse_line"]


# The fields of the rows, for checking a results file before it is resumed.
_INT, _NUM, _STR, _BOOL, _NONE = (int,), (int, float), (str,), (bool,), (type(None),)
_CELL = {"routing": _STR, "traffic": _STR, "priority": _STR, "seed": _INT}
LOAD_FIELDS = {**_CELL, "offered": _NUM, "accepted": _NUM + _NONE, "accepted_min": _NUM + _NONE,
               "latency_mean": _NUM + _NONE, "latency_p50": _NUM + _NONE, "latency_p99": _NUM + _NONE,
               "latency_max": _NUM + _NONE, "hops_mean": _NUM + _NONE, "stable": _BOOL, "status": _STR,
               "analytic_value": _NUM + _NONE}
SATURATION_FIELDS = {**_CELL, "saturation": _NUM, "upper": _NUM, "limited": _BOOL, "analytic": _STR + _NONE,
                     "analytic_value": _NUM + _NONE, "ratio": _NUM + _NONE, "zero_load_latency": _NUM + _NONE,
                     "hops_mean": _NUM + _NONE, "runs": _INT}
#: A saturation row of one of the permutations of ``random-perms:M`` also names it.
_PERMUTATION = {"permutation": _INT}
#: A saturation row of a routing's exact worst-case permutation also has the ideal network's Θ of it.
_WORST_CASE = {"worst_case_exact": _NUM}
#: A screened worst case's row (:mod:`universal.openloop.screen`): M, the permutation of the
#: lowest Θ, the Θ of each one searched in full and the screening passes.
_SCREENED = {"screen": _BOOL, "screened": _INT, "screen_permutation": _INT, "searched": (dict,), "screens": (list,)}
PAIR_FIELDS = {**_CELL, "offered": _NUM, "pair": _STR, "latency_mean": _NUM + _NONE, "hops_mean": _NUM + _NONE,
               "packets": _INT}


def parse_line(study, cells: dict[str, dict]) -> Callable[[object], tuple[str, dict]]:
    """The checker of one results-file line of ``study`` (for
    :func:`universal.results.read_results_file`): its cell is one of ``cells`` (keyed by
    :func:`cell_key`), its row and pairs have the fields and types this version writes, and
    they belong to the cell.

    Parameters
    ----------
    study : universal.openloop.study.OpenLoopStudy
    cells : dict
        :func:`cell_key` -> cell, for every cell of the study.

    Returns
    -------
    callable
        Takes a parsed JSON line and returns ``(key, line)``.

    Raises
    ------
    universal.results.BadLine
        (raised by the returned function) Saying what is wrong.

    Examples
    --------
    >>> from universal.openloop.cells import run_chunk, study_cells
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study = OpenLoopStudy("torus:k=8,n=1", ["dor"], ["tornado"], loads=[0.2], window=300)
    >>> check = parse_line(study, {cell_key(c): c for c in study_cells(study)})
    >>> line, = run_chunk(study, study_cells(study))
    >>> check(line)[0]
    '{"offered": 0.2, "priority": "age", "routing": "dor", "seed": 0, "traffic": "tornado"}'
    >>> check({**line, "row": {**line["row"], "stable": "yes"}})
    Traceback (most recent call last):
    ...
    universal.results.BadLine: the row: stable = "yes" has the wrong type
    """
    histogram = {"histogram": (dict, type(None))} if getattr(study, "histogram", False) else {}
    fields = {**LOAD_FIELDS, **histogram} if study.loads is not None else SATURATION_FIELDS
    pooled = {"translates": _INT} if getattr(study, "pool_translates", False) else {}
    pair_fields = {**PAIR_FIELDS, **pooled, **histogram}
    pairs_per_cell = len(study.pairs) if study.loads is not None else 0

    def check(data: object) -> tuple[str, dict]:
        if not isinstance(data, dict) or set(data) != {"cell", "row", "pairs"}:
            raise BadLine("not a cell line of an open-loop study (an object with cell, row and pairs)")
        data = _with_priority(data, study.priorities)
        cell = data["cell"]
        if not isinstance(cell, dict) or cell_key(cell) not in cells:
            raise BadLine(f"cell {json.dumps(cell)} is not a cell of this study")
        extra = (_PERMUTATION if "permutation" in cell else _WORST_CASE if cell["traffic"] == WORST_CASE
                 else _SCREENED if "screen" in cell else {})
        _check_row(data["row"], {**fields, **extra}, cell, "the row")
        _check_histogram(data["row"], "the row")
        pairs = data["pairs"]
        if not isinstance(pairs, list) or len(pairs) != pairs_per_cell:
            raise BadLine(f"cell {json.dumps(cell)} should hold {pairs_per_cell} pair latencies")
        for number, (pair, text) in enumerate(zip(pairs, study.pairs), 1):
            _check_row(pair, pair_fields, cell, f"pair {number}")
            _check_histogram(pair, f"pair {number}")
            if pair["pair"] != text:
                raise BadLine(f"pair {number} is {json.dumps(pair['pair'])}, not {json.dumps(text)}")
        return cell_key(cell), data

    return check


def _check_histogram(row: dict, what: str) -> None:
    """A stored latency histogram (:func:`universal.openloop.histograms.latency_histogram`) as this
    version writes it: integer start, a positive width, counts that sum to its packets."""
    hist = row.get("histogram")
    if hist is None:
        return

    def whole(x) -> bool:
        return isinstance(x, int) and not isinstance(x, bool)

    ok = (set(hist) == {"start", "width", "counts", "packets"} and whole(hist["start"]) and whole(hist["width"])
          and hist["width"] >= 1 and isinstance(hist["counts"], list)
          and all(whole(c) and c >= 0 for c in hist["counts"]) and whole(hist["packets"])
          and sum(hist["counts"]) == hist["packets"])
    if not ok:
        raise BadLine(f"{what}: the latency histogram is not one this version writes")


def _with_priority(data: dict, rules: list[str]) -> dict:
    """A line written before the priority was an axis of the study (its cell, row and pairs have
    no ``priority``) as this version writes it, when the study has one rule: the rule the
    results file's header names (it matched the study's before any line is read)."""
    cell = data["cell"]
    if len(rules) != 1 or not isinstance(cell, dict) or "priority" in cell:
        return data

    def add(row):
        if not isinstance(row, dict) or "priority" in row:
            return row
        items = list(row.items())
        at = next((i + 1 for i, (k, _) in enumerate(items) if k == "traffic"), len(items))
        return dict(items[:at] + [("priority", rules[0])] + items[at:])

    pairs = data["pairs"]
    return {"cell": add(cell), "row": add(data["row"]),
            "pairs": [add(x) for x in pairs] if isinstance(pairs, list) else pairs}


#: The statuses an open-loop run ends with (:class:`universal.engine.measure.RunResult`).
RUN_STATUSES = ("stable", "unstable", "backlog-limit", "drain-limit", "deadlock", "steps")


def _check_row(row: object, fields: dict, cell: dict, what: str) -> None:
    check_field_names(row, fields, what)
    for name, kinds in fields.items():
        value = row[name]
        if not (bool in kinds if isinstance(value, bool) else isinstance(value, kinds)):
            raise BadLine(f"{what}: {name} = {json.dumps(value)} has the wrong type")
    if "status" in fields and row["status"] not in RUN_STATUSES:
        raise BadLine(f"{what}: status {json.dumps(row['status'])} is none of {', '.join(RUN_STATUSES)}")
    if "status" in fields and row["stable"] != (row["status"] == "stable"):
        raise BadLine(f"{what}: stable = {json.dumps(row['stable'])} contradicts status {json.dumps(row['status'])}")
    for name in cell:
        if row[name] != cell[name]:
            raise BadLine(f"{what}: {name} = {json.dumps(row[name])} does not match its cell")
