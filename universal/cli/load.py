"""``universal load``: throughput (as a fraction of capacity) and locality of oblivious routings
under traffic patterns, computed exactly from the pair loads."""

from __future__ import annotations

import argparse
import sys

from universal.cli.common import (analysis_arguments, names, nonnegative, output_file, output_options, plot_path,
                                  plotted, protect_run_inputs, routings, table_options, writable)
from universal.cli.outputs import analyse_with_bar, check_load_outputs, default_samples, emit_report

HELP = "throughput and locality of oblivious routings under traffic patterns"


def add_arguments(ld: argparse.ArgumentParser) -> None:
    analysis_arguments(ld)
    ld.add_argument("--traffic", default="uniform",
                    help="comma-separated, e.g. uniform,bitcomp,transpose,tornado,random-perms:10000; "
                         "wc-group on a dragonfly (group i to group i+1)")
    ld.add_argument("--seed", type=nonnegative, default=0, help="seed of the random permutations (default 0)")
    ld.add_argument("--links", type=output_file("links"), metavar="FILE",
                    help="write the expected load of every link under the first routing and the first traffic "
                         "pattern (not random-perms), one line per link: tail head load")
    output_options(ld)
    table_options(ld, columns=False)
    ld.add_argument("--plot", type=output_file("plot"), metavar="FILE", help="also draw (2-D tori) the channel loads of the first routing "
                    "under the first traffic as a heat map (.png or .svg); with random-perms:M, the "
                    "throughput histogram with the exact worst case marked, in FILE's name + .histogram")


def run(args: argparse.Namespace) -> None:
    protect_run_inputs([args.network, args.routing, args.traffic])
    plot = plot_path(args)
    from universal.load_analysis import LoadAnalysis

    links = writable(args.links, "links")
    analysis = LoadAnalysis(args.network, routings(args), names(args.traffic), seed=args.seed,
                            samples=args.samples or default_samples())
    check_load_outputs(analysis, plot is not None, links is not None)
    report = analyse_with_bar(analysis, args)
    emit_report(report, args)
    if links is not None:
        from universal.reporting.links import report_link_lines, write_links

        print(f"links: {write_links(links, report_link_lines(report))}", file=sys.stderr)
    if plot is not None:
        from universal.reporting.plots import plot_load_report

        plotted(plot_load_report(report, plot))
