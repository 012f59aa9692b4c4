"""CSV output for scripts (``--csv``): one header line, one line per row (SPEC §8).

Nested values (lists such as a worst-case permutation or the blocked packets of a deadlock,
histograms) are written as JSON inside their cell; missing values are empty cells.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Iterable, Mapping


def rows_to_csv(rows: Iterable[Mapping]) -> str:
    """The rows as CSV text; the columns are every key seen, in first-seen order.

    Examples
    --------
    >>> print(rows_to_csv([{"paths": "valiant", "T": 12, "blocked": None},
    ...                    {"paths": "dor", "T": 9, "full_links": ["0->1"]}]), end="")
    paths,T,blocked,full_links
    valiant,12,,
    dor,9,,"[""0->1""]"
    """
    rows = list(rows)
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _cell(value) for key, value in row.items()})
    return out.getvalue()


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    return value
