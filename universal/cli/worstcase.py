"""``universal worstcase``: the exact worst-case permutation and throughput of oblivious routings
(a max-weight matching per focus channel), optionally written out as permutation files."""

from __future__ import annotations

import argparse

from universal.cli.common import (analysis_arguments, output_file, output_options, plot_path, plotted, print_json,
                                  routings, table_options)
from universal.cli.outputs import analyse_with_bar, check_load_outputs, default_samples

HELP = "exact worst-case permutation and throughput of oblivious routings"


def add_arguments(wc: argparse.ArgumentParser) -> None:
    analysis_arguments(wc)
    wc.add_argument("--show-permutation", action="store_true",
                    help="print each worst permutation (a k x k grid of destinations on 2-D tori)")
    wc.add_argument("--permutation-file", type=output_file("permutation"), metavar="PATH",
                    help="write the worst permutation for --problem permutation:file=PATH "
                         "(several routings: PATH with .ROUTING before the suffix)")
    output_options(wc)
    table_options(wc, columns=False)
    wc.add_argument("--plot", type=output_file("plot"), metavar="FILE", help="also draw (2-D tori) the channel loads of the first "
                    "routing under its worst permutation as a heat map (.png or .svg)")


def run(args: argparse.Namespace) -> None:
    plot = plot_path(args)
    from universal.load_analysis import LoadAnalysis, permutation_paths, resolve_target, write_permutation_file

    analysis = LoadAnalysis(args.network, routings(args), worstcase=True, samples=args.samples or default_samples())
    resolve_target(analysis)                      # a bad network is reported before the file check
    check_load_outputs(analysis, plot is not None)
    files = permutation_paths(args.permutation_file, analysis.routings) if args.permutation_file else {}
    report = analyse_with_bar(analysis, args)
    written = {w.routing: write_permutation_file(files[r], w) for r, w in zip(analysis.routings, report.worst)
               if r in files}
    if args.json:
        data = report.to_json()
        for row in data["rows"]:
            if row["routing"] in written:
                row["permutation_file"] = str(written[row["routing"]])
        print_json(data, args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv

        print(rows_to_csv({**w.as_dict(), "permutation_file": str(written[w.routing]) if w.routing in written
                           else None} for w in report.worst), end="")
    else:
        from universal.reporting import make_console
        from universal.reporting.oblivious import print_load_report

        print_load_report(report, make_console(), show_permutation=args.show_permutation, files=written,
                          wide=args.wide)
    if plot is not None:
        from universal.reporting.plots import plot_load_report

        plotted(plot_load_report(report, plot))
