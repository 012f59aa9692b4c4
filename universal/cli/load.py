"""``universal load``: throughput (as a fraction of capacity) and locality of oblivious routings
under traffic patterns, computed exactly from the pair loads."""

from __future__ import annotations

import argparse

from universal.cli.common import (analysis_arguments, machine, names, nonnegative, output_file, output_options,
                                  plot_path, plotted, routings, table_options)
from universal.cli.outputs import analyse_with_bar, default_samples, emit_report

HELP = "throughput and locality of oblivious routings under traffic patterns"


def add_arguments(ld: argparse.ArgumentParser) -> None:
    analysis_arguments(ld)
    ld.add_argument("--traffic", default="uniform",
                    help="comma-separated, e.g. uniform,bitcomp,transpose,tornado,random-perms:10000")
    ld.add_argument("--seed", type=nonnegative, default=0, help="seed of the random permutations (default 0)")
    output_options(ld)
    table_options(ld, columns=False)
    ld.add_argument("--plot", type=output_file("plot"), metavar="FILE", help="also draw (2-D tori) the channel loads of the first routing "
                    "under the first traffic as a heat map (.png or .svg); with random-perms:M, the "
                    "throughput histogram with the exact worst case marked, in FILE's name + .histogram")


def run(args: argparse.Namespace) -> None:
    plot = plot_path(args)
    from universal.load_analysis import LoadAnalysis

    analysis = LoadAnalysis(args.network, routings(args), names(args.traffic), seed=args.seed,
                            samples=args.samples or default_samples())
    report = analyse_with_bar(analysis, args)
    emit_report(report, args)
    if plot is not None:
        from universal.reporting.plots import plot_load_report

        plotted(plot_load_report(report, plot))
