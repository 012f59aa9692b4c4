"""Rich tables and one-line conclusions for experiment results."""

from universal.reporting.tables import conclusion, experiment_table, experiment_tables, make_console, print_experiment

__all__ = ["conclusion", "experiment_table", "experiment_tables", "make_console", "print_experiment"]
