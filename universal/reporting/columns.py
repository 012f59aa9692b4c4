"""The value columns of the routing tables, by name: one list that the tables and the CLI's
``--columns`` option both read (pure data, so the CLI can check names before any work starts).

The core columns are the figures of the survey's protocols (Meyer auf der Heide & Scheideler,
"Communication in parallel systems", 1996): congestion, dilation, the lower bound max(C/B, D),
the routing time T and the theorem's bound.
"""

from __future__ import annotations

__all__ = ["CORE_COLUMNS", "OPTIONAL_COLUMNS", "OPTIMUM_COLUMNS", "VALUE_COLUMNS", "FOLDED_HEADERS"]

#: The columns every experiment table shows (SPEC §6).
CORE_COLUMNS = ["C", "D", "C+D", "LB", "T", "T/(C+D)", "bound", "T/bound"]
#: Optional columns and their ``drop`` order: which are left out first when the terminal is too
#: narrow (``--wide`` keeps them all).
OPTIONAL_COLUMNS = {"buf": 3, "lat": 4, "rounds": 1, "disc": 2, "last del": 5}
#: The offline optimum's columns (``--opt``, ``--free-paths``), never left out when asked for.
OPTIMUM_COLUMNS = ["OPT", "T/OPT", "R(G,π)"]
#: Every value column a routing table can show; ``N`` is the size column of sweeps.
VALUE_COLUMNS = ["N", *CORE_COLUMNS, *OPTIONAL_COLUMNS, *OPTIMUM_COLUMNS]
#: Headers folded onto two lines where the terminal is narrow.
FOLDED_HEADERS = {"T/(C+D)": "T/\n(C+D)", "T/bound": "T/\nbound", "last del": "last\ndel"}
