"""Rich tables and one-line conclusions for experiment results.

The names below are loaded on first use, so that a light submodule (the column names the CLI
checks ``--columns`` against) can be imported without rich.
"""

from __future__ import annotations

import importlib

__all__ = ["conclusion", "experiment_table", "experiment_tables", "make_console", "print_experiment"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module("universal.reporting.tables"), name)
    raise AttributeError(f"module 'universal.reporting' has no attribute {name!r}")
