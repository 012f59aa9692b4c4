"""Running the API with a progress bar and printing its results as a table, JSON or CSV:
shared by the commands that route (``route``, ``scenario``) and those that analyse loads
(``load``, ``worstcase``, load scenarios). Heavy modules are imported inside the functions."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from universal.cli.common import machine, print_json, progress_bar

if TYPE_CHECKING:
    from universal.experiment import Experiment, ExperimentResult
    from universal.load_analysis import LoadAnalysis, LoadReport


def run_experiment_with_bar(exp: "Experiment", as_json: bool, keep_delivery: bool = False,
                            keep_link_loads: bool = False, keep_runs: bool = False) -> "ExperimentResult":
    """:func:`universal.experiment.run_experiment` with a progress bar counting the runs."""
    from universal.experiment import run_experiment, runs_in

    with progress_bar(runs_in(exp), "routing", not as_json) as bar:
        return run_experiment(exp, progress=bar.begin if bar else None, keep_delivery=keep_delivery,
                              keep_link_loads=keep_link_loads, keep_runs=keep_runs)


def emit_experiment(result: "ExperimentResult", args: argparse.Namespace) -> None:
    """The experiment's rows as JSON, CSV or the rich table with its conclusion."""
    if args.json:
        print_json(result.to_json(), args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv

        print(rows_to_csv(result.to_json()["rows"]), end="")
    else:
        from universal.reporting import make_console, print_experiment

        print_experiment(result, make_console(), columns=getattr(args, "columns", None),
                         wide=getattr(args, "wide", False))


#: Analyses estimated to run longer than this (seconds) are announced on stderr.
LONG_SECONDS = 60


def analyse_with_bar(analysis: "LoadAnalysis", args: argparse.Namespace) -> "LoadReport":
    """:func:`universal.load_analysis.run_load_analysis` with a progress bar."""
    from universal.load_analysis import (MAX_SECONDS, estimate_seconds, progress_total, resolve_target,
                                         run_load_analysis)

    target = resolve_target(analysis)
    seconds = estimate_seconds(analysis, target)
    if LONG_SECONDS < seconds <= MAX_SECONDS:  # beyond, run_load_analysis refuses with one error line
        import sys

        print(f"note: this analysis will take roughly {seconds / 60:.0f} minutes (estimated from the number "
              f"of routes to tabulate)", file=sys.stderr)
    what = "worst case" if not analysis.traffics else "channel loads"
    with progress_bar(progress_total(analysis, target), f"{what} on {target.name}", not machine(args)) as bar:
        return run_load_analysis(analysis, progress=bar.advance if bar else None)


def check_load_outputs(analysis: "LoadAnalysis", plot: bool, links: bool = False) -> None:
    """Refuse, before the computation, a ``--plot`` or ``--links`` that would find nothing to write:
    a heat map needs a 2-D torus or mesh, a histogram ``random-perms:M``, link loads a single
    traffic pattern.

    Examples
    --------
    >>> from universal.load_analysis import LoadAnalysis
    >>> check_load_outputs(LoadAnalysis("hypercube:d=3", ["valiant"], ["uniform"]), plot=True)
    Traceback (most recent call last):
    ...
    universal.errors.UserError: --plot draws channel loads on 2-D tori and meshes (n = 2), not on hypercube:d=3, and throughput histograms of random-perms:M traffic; there is nothing to draw here
    """
    from universal.errors import UserError
    from universal.load_analysis import resolve_target
    from universal.registry import parse_spec

    target = resolve_target(analysis)
    net = target.network
    grid = (target.torus.n == 2 if target.torus is not None
            else net.kind in ("mesh", "torus") and net.params.get("n") == 2)
    sampled = [parse_spec(t).name == "random-perms" for t in analysis.traffics]
    if plot and not grid and not any(sampled):
        raise UserError(f"--plot draws channel loads on 2-D tori and meshes (n = 2), not on {target.name}, and "
                        f"throughput histograms of random-perms:M traffic; there is nothing to draw here")
    if links and all(sampled):
        raise UserError("--links writes the loads of one traffic pattern: give one besides random-perms")


def emit_report(report: "LoadReport", args: argparse.Namespace, **options) -> None:
    """A load report as JSON, CSV (load and worst-case rows, told apart by ``table``) or tables."""
    if args.json:
        print_json(report.to_json(), args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv

        data = report.to_json()
        rows = [{"table": "load", **r} for r in data["rows"]] if report.loads else []
        rows += [{"table": "worstcase", **w.as_dict()} for w in report.worst]
        print(rows_to_csv(rows), end="")
    else:
        from universal.reporting import make_console
        from universal.reporting.oblivious import print_load_report

        print_load_report(report, make_console(), wide=getattr(args, "wide", False), **options)


def default_samples() -> int:
    """Paths per pair when a path system's loads cannot be enumerated (the API's default)."""
    from universal.oblivious.graphs import DEFAULT_SAMPLES

    return DEFAULT_SAMPLES
