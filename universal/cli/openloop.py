"""``universal openloop``: packets created at a rate while the network runs (SPEC §11): a load
sweep (latency, accepted α* and α' per offered load) or the saturation throughput of routings
under traffics, beside the exact value of the channel-load analysis."""

from __future__ import annotations

import argparse

from universal.cli.common import (buffer_list, command_line, executor, executor_options, html_path, machine, names,
                                  nonnegative, output_file, output_options, plot_path, plotted, positive, print_json,
                                  progress_bar, protect_run_inputs, table_options, wrote_html, writable)
from universal.cli.common import source_queue
from universal.errors import UserError

HELP = "open-loop runs: latency against offered load, saturation throughput"


def add_arguments(ol: argparse.ArgumentParser) -> None:
    ol.add_argument("--network", required=True, help="e.g. torus:k=8,n=2, mesh:k=8,n=2, hypercube:d=6, dragonfly:p=2, fattree:k=4,n=3")
    ol.add_argument("--routing", default="dor",
                    help="comma-separated: dor, val, romm, rlb, rlbth, ival (tori), any path system (shortest, "
                         "valiant, minimal, ...), or adaptive: min-adaptive, goal (tori), ugal[:threshold=T], "
                         "chaos[:queue=S] (needs --buffer; without queue=S its shared queue takes the rest of "
                         "the --vcs budget), ugal-l, ugal-g (networks with terminals) (default dor)")
    ol.add_argument("--traffic", default="uniform",
                    help="comma-separated: uniform, neighbor, bitcomp, transpose, tornado, bitrev, shuffle, "
                         "hotspot, diagonal, booksim-tornado, booksim-neighbor, matrix:file=P, permutation:file=P, "
                         "wc-group (dragonfly) (default uniform)")
    what = ol.add_mutually_exclusive_group(required=True)
    what.add_argument("--loads", help="offered loads a:b:step (inclusive) or a list, e.g. 0.05:1.0:0.05")
    what.add_argument("--saturation", action="store_true", help="search the saturation throughput of every "
                      "(routing, traffic)")
    ol.add_argument("--injection", default="bernoulli", help="bernoulli (default), poisson, on-off[:burst=B]")
    ol.add_argument("--units", choices=["capacity", "packets"], default="capacity",
                    help="rates as a fraction of capacity (default) or in packets per node per step")
    ol.add_argument("--priority", default="age",
                    help="comma-separated contention rules: age (default), longest-in-system, fifo, random-rank "
                         "(random), growing-rank, farthest-to-go, nearest-to-go, injection-age (GOAL's age since "
                         "injection); several make the priority a "
                         "column of the study")
    ol.add_argument("--bandwidth", type=positive, default=1, help="B, packets per link per step (default 1)")
    ol.add_argument("--buffer", type=buffer_list, default=[None], metavar="b",
                    help="size of every link buffer, with --vcs of every virtual channel (default unbounded)")
    ol.add_argument("--vcs", type=positive, default=1, metavar="V",
                    help="virtual channels per link (default 1); with V >= 2 and --buffer every hop uses its "
                         "route's deadlock-free class (dateline classes: dor needs 2, val 4, romm and rlb 6; "
                         "GOAL's *-channels: min-adaptive and goal 3, ugal 6 on a torus); "
                         "a routing that needs more than V is refused; chaos has no VCs and gives the V x b "
                         "budget of every input link beyond its one buffer of b to its shared queue")
    ol.add_argument("--source-queue", type=source_queue, default="all", metavar="{all,fifo,fifo:w=W}",
                    help="a node's source queue: all (default, the ideal network's): every queued packet may take "
                         "any free place on its node's links, by priority; fifo (the GOAL paper's input-queued "
                         "router): a FIFO whose first B packets alone are routed and leave in order, so with "
                         "B = 1 the head alone, one packet per step; fifo:w=W (a look-ahead window): the first W "
                         "packets are routed and each may leave, up to W per step")
    ol.add_argument("--vc-buffer", choices=["set", "fifo"], default="set",
                    help="a virtual channel's buffer (with --buffer b): set (default): any packet of a VC class "
                         "may leave, by priority; fifo (the GOAL paper's input-queued router): every VC a FIFO "
                         "of b packets whose head alone may leave (head-of-line blocking; B = 1)")
    ol.add_argument("--window", type=positive, default=None,
                    help="measurement window in steps (default max(1000, 200/rate))")
    ol.add_argument("--tolerance", type=float, default=0.01, help="relative width of the saturation bracket (0.01)")
    ol.add_argument("--seeds", type=positive, default=1, help="number of seeds (default 1)")
    ol.add_argument("--seed", type=nonnegative, default=0, help="first seed (default 0)")
    output_options(ol)
    table_options(ol, columns=False)
    ol.add_argument("--histogram", action="store_true",
                    help="with --loads: also the distribution of the labelled packets' latency of every run (and "
                         "of every --pair), as tables, in --json and, with --plot, as a second figure")
    ol.add_argument("--pair", nargs=2, action="append", metavar=("SOURCE", "DEST"), default=None,
                    help="with --loads: also the latency of the packets from SOURCE to DEST, nodes by label or id "
                         "(e.g. --pair 0,0 1,3); repeat for more pairs")
    ol.add_argument("--pool-translates", action="store_true",
                    help="with --pair on a torus or hypercube: pool the packets of every translate of each pair "
                         "((s+t)->(d+t), N pairs), which share its latency distribution when the traffic and the "
                         "routing are translation invariant (checked; refused otherwise)")
    ol.add_argument("--router-delay", type=router_delay, default=0, metavar="T",
                    help="steps added to every packet's latency per hop, as a pipelined router's (default 0); "
                         "throughput is unchanged")
    ol.add_argument("--worst-case", action="store_true",
                    help="with --saturation: also each routing's worst case, the lowest Θ over its patterns, an "
                         "oblivious torus routing's own exact worst-case permutation (Towles & Dally) searched too, "
                         "and --random-perms M random permutations for every other routing (GOAL paper, Figure 6)")
    ol.add_argument("--random-perms", type=nonnegative, default=0, metavar="M",
                    help="with --worst-case: random permutations searched for each routing without an exact worst "
                         "case, e.g. the adaptive ones (default 0: the named patterns only; the paper has 1,000)")
    ol.add_argument("--screen-perms", action="store_true",
                    help="with --worst-case --random-perms M: only the lowest Θ of the M permutations, found by "
                         "running each one once at the lowest Θ found so far and searching only those judged "
                         "unstable there (no mean or histogram of the M: random-perms:M --saturation gives those)")
    ol.add_argument("--plot", type=output_file("plot"), metavar="FILE",
                    help="with --loads: latency and accepted against offered load (.png or .svg), and with "
                         "--histogram the latency histograms in FILE's sibling NAME.histogram.png; with "
                         "--saturation and random-perms:M traffic: the histogram of the permutations' Θ")
    ol.add_argument("--html", type=output_file("HTML view"), metavar="FILE",
                    help="with --loads: also write one run as a self-contained HTML page (packets created for "
                         "--html-steps steps at --html-load, then the network drains), beside the load sweep")
    ol.add_argument("--html-steps", type=positive, default=200, metavar="S",
                    help="steps of packet creation the HTML view shows (default 200, at most 5000)")
    ol.add_argument("--html-load", type=float, default=None, metavar="RATE",
                    help="the offered load the HTML view shows, one of --loads (default: the only one)")
    results_options(ol)


def results_options(parser: argparse.ArgumentParser) -> None:
    """``--out``, ``--resume``, ``--overwrite``, ``--jobs``, ``--executor`` and ``--scheduler`` of an
    open-loop study."""
    parser.add_argument("--out", type=output_file("results"), metavar="FILE",
                        help="JSON Lines results file receiving each finished cell (a run of --loads, a search of "
                             "--saturation); none unless given")
    parser.add_argument("--resume", action="store_true", help="skip the cells already in the --out file")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing --out file (without --resume or --overwrite it is refused)")
    parser.add_argument("--jobs", type=positive, default=1,
                        help="worker processes running cells (default 1); with --executor dask and no "
                             "--scheduler, the workers of the local Dask cluster")
    executor_options(parser)


def run(args: argparse.Namespace) -> None:
    protect_run_inputs([args.network, args.routing, args.traffic])  # no output replaces a file the run reads
    plot = plot_path(args)
    if args.saturation and (args.histogram or args.pair or args.pool_translates):
        option = "--histogram" if args.histogram else "--pair" if args.pair else "--pool-translates"
        raise UserError(f"{option} measures the latency of a load sweep: use it with --loads")
    if args.pool_translates and not args.pair:
        raise UserError("--pool-translates pools the translates of each --pair: name a pair (--pair SOURCE DEST)")
    from universal.openloop.cells import random_perm_count

    if plot is not None and args.saturation and not any(random_perm_count(t) for t in names(args.traffic)):
        raise UserError("--plot draws a load sweep (--loads) or, with --saturation, the histogram of the "
                        "saturation throughput of random-perms:M traffic")
    histogram_plot = histogram_plot_path(plot) if plot is not None and args.histogram else None
    if len(args.buffer) != 1:
        raise UserError("openloop takes one --buffer size")
    html = html_path(args)
    from universal.openloop.study import OpenLoopStudy, parse_loads
    from universal.scenario import seeds_from

    study = OpenLoopStudy(args.network, names(args.routing), names(args.traffic),
                          loads=parse_loads(args.loads) if args.loads else None, saturation=args.saturation,
                          injection=args.injection, units=args.units,
                          seeds=seeds_from(args.seeds, args.seed, "command line"), priority=_priorities(args.priority),
                          bandwidth=args.bandwidth, buffer=args.buffer[0], vcs=args.vcs,
                          source_queue=args.source_queue, vc_buffer=args.vc_buffer, window=args.window,
                          tolerance=args.tolerance, histogram=args.histogram, router_delay=args.router_delay,
                          pairs=[f"{a}->{b}" for a, b in args.pair or []], pool_translates=args.pool_translates,
                          worst_case=args.worst_case, random_perms=args.random_perms,
                          screen_perms=args.screen_perms)
    view = None
    if html is not None:  # the view's run first: one too large to draw is refused before the study
        from universal.reporting.html.data import openloop_view

        view = openloop_view(study, study.routings[0], study.traffics[0], _html_load(study, args), study.seeds[0],
                             args.html_steps, command=command_line(args))
    report = run_with_bar(study, args, executor=executor(args))
    data = report.to_json()
    if view is not None:
        from universal.reporting.html.data import add_sweep
        from universal.reporting.html.page import write_view

        wrote_html(*write_view(html, add_sweep(view, data["rows"])))
    emit(data, args)
    if plot is not None and study.loads is not None:
        from universal.reporting.plots.openloop import plot_openloop

        plotted(plot_openloop(report.rows, plot, study.units))
    if histogram_plot is not None:
        draw_histograms(data, histogram_plot)
    if plot is not None and study.loads is None:
        from universal.reporting.plots.openloop import plot_permutation_thetas

        plotted(plot_permutation_thetas(data, plot))


def histogram_plot_path(plot):
    """Where the latency histograms of a load sweep plotted to ``plot`` go: its sibling
    ``NAME.histogram.SUFFIX``, checked as ``--plot`` is."""
    from universal.reporting.plots.common import sibling

    return plot_path(argparse.Namespace(plot=str(sibling(plot, "histogram"))))


def draw_histograms(data: dict, path) -> None:
    """Plot the latency histograms of a study's JSON (seeds pooled) to ``path``."""
    from universal.reporting.openloop import latency_histograms
    from universal.reporting.plots.openloop import plot_latency_histograms

    plotted(plot_latency_histograms(latency_histograms(data), path, data.get("router_delay", 0)))


def router_delay(text: str) -> int:
    """An argparse type: ``--router-delay``, whole steps per hop from 0 to 10,000.

    Examples
    --------
    >>> router_delay("2")
    2
    """
    from universal.openloop.histograms import check_router_delay

    try:
        return check_router_delay(text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _priorities(text: str) -> str | list[str]:
    """``--priority``: one rule (a name) or several (comma-separated)."""
    rules = names(text)
    if not rules:
        raise UserError("--priority is empty (give age, growing-rank, ...)")
    return rules[0] if len(rules) == 1 else rules


def _html_load(study, args: argparse.Namespace) -> float:
    """The one run ``--html`` draws (its load), checked before the study runs."""
    from universal.reporting.html.data import MAX_HTML_STEPS

    if study.loads is None:
        raise UserError("--html draws one run of a load sweep: use it with --loads")
    several = [o for o, v in [("--routing", study.routings), ("--traffic", study.traffics),
                              ("--priority", study.priorities)] if len(v) > 1]
    if several:
        raise UserError(f"--html draws one run: give one value for {' and '.join(several)}")
    if args.html_steps > MAX_HTML_STEPS:
        raise UserError(f"--html-steps is at most {MAX_HTML_STEPS:,} (got {args.html_steps:,})")
    if args.html_load is None:
        if len(study.loads) > 1:
            raise UserError("--html draws one run: say which load with --html-load (one of --loads)")
        load = study.loads[0]
    else:
        load = next((x for x in study.loads if abs(x - args.html_load) <= 1e-9 * max(1.0, abs(x))), None)
        if load is None:
            raise UserError(f"--html-load {args.html_load:g} is not one of --loads")
    return load


def run_with_bar(study, args: argparse.Namespace, executor=None):
    """:func:`universal.openloop.study.run_study` with a progress bar counting finished cells (runs
    of a load sweep, searches of a saturation table) and the results-file options of ``args``."""
    from universal.openloop.study import run_study

    out = writable(args.out, "results file", streams=False)
    what = "runs" if study.loads is not None else "saturation searches"
    with progress_bar(study.cell_count(), f"{study.name}: {what}", not machine(args)) as bar:
        return run_study(study, progress=bar.set if bar else None, results_file=out, resume=args.resume,
                         overwrite=args.overwrite, jobs=args.jobs, command=command_line(args), executor=executor)


def emit(data: dict, args: argparse.Namespace) -> None:
    """The rows as JSON, CSV or the table."""
    if args.json:
        print_json(data, args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv

        print(rows_to_csv(data["rows"]), end="")
    else:
        from universal.reporting import make_console
        from universal.reporting.openloop import print_openloop

        print_openloop(data, make_console(), wide=args.wide)
