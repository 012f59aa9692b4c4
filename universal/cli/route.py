"""``universal route``: route one or more problems on a network with several path systems and
protocols, over seeds; or (``--trace``) follow one small run step by step."""

from __future__ import annotations

import argparse
import sys

from universal.cli.common import (buffer_list, command_line, html_path, machine, names, nonnegative, opt_options,
                                  output_file, output_options, plot_path, plotted, positive, positive_list, print_json,
                                  protect_run_inputs, table_options, wrote_html, writable)
from universal.cli.outputs import emit_experiment, run_experiment_with_bar
from universal.cli.common import source_queue
from universal.errors import UserError

HELP = "route a problem on a network"


def add_arguments(rt: argparse.ArgumentParser) -> None:
    rt.add_argument("--network", required=True, help="e.g. butterfly:d=8, torus:k=8,n=2, edgelist:FILE, dragonfly:p=2, fattree:k=4,n=3")
    rt.add_argument("--problem", required=True,
                    help="e.g. permutation:random, h-relation:h=4 (comma-separated for several)")
    rt.add_argument("--paths", help="comma-separated path systems (default: dimension-order where the network has "
                    "dimensions, shortest elsewhere, e.g. edge lists)")
    rt.add_argument("--protocols", default="random-rank", help="comma-separated protocols")
    rt.add_argument("--seeds", type=positive, default=1, help="number of seeds (default 1)")
    rt.add_argument("--seed", type=nonnegative, default=0, help="first seed (default 0)")
    rt.add_argument("--bandwidth", type=positive_list, default=[1],
                    help="B, packets per link per step; several (1,2,4) to compare")
    rt.add_argument("--buffer", type=buffer_list, default=[None], metavar="b",
                    help="size of every link buffer (default unbounded); several (1,2,unbounded) to compare; "
                         "a run that cannot move is reported as a deadlock")
    rt.add_argument("--vcs", type=positive_list, default=[1], metavar="V",
                    help="virtual channels per link (default 1; tori, meshes, hypercubes): with V >= 2 and --buffer "
                         "every hop enters the dateline class of its place on its path, each class a buffer of "
                         "its VCs x b, so that no deadlock occurs; the classes are counted on the paths and more "
                         "than V are refused; several (1,2) to compare")
    rt.add_argument("--source-queue", type=source_queue, default="all", metavar="{all,fifo,fifo:w=W}",
                    help="a node's packets: all (default): every one waits for its first link from step 1; fifo "
                         "(an input-queued router's source queue): they leave in packet order, the first B alone "
                         "routed, so with B = 1 one per node and step; fifo:w=W: the first W routed, each may leave")
    rt.add_argument("--vc-buffer", choices=["set", "fifo"], default="set",
                    help="a virtual channel's buffer (with --buffer b): set (default): any packet of a VC class "
                         "may leave, by priority; fifo (the GOAL paper's input-queued router): every VC (with "
                         "--vcs 1 the link's one buffer) a FIFO of b packets whose head alone may leave "
                         "(head-of-line blocking; B = 1)")
    rt.add_argument("--engine", choices=["one", "fast", "reference"], default="one", help=argparse.SUPPRESS)
    rt.add_argument("--analyze", action="store_true",
                    help="also report each path collection: n, C, D, simple/shortest/leveled, link loads")
    opt_options(rt)
    output_options(rt)
    table_options(rt)
    rt.add_argument("--plot", type=output_file("plot"), metavar="FILE", help="also draw packets delivered by step for every run of the "
                    "first seed (.png or .svg)")
    rt.add_argument("--links", type=output_file("links"), metavar="FILE",
                    help="write the number of paths on every link of every path collection, one line per "
                         "link: tail head load (a block per collection; use with --analyze)")
    rt.add_argument("--trace", action="store_true",
                    help="follow one small run step by step (who crossed which link, who lost and why, the "
                         "buffers; with an adaptive routing every choice, UGAL's q·H comparison with its numbers, "
                         "and CHAOS's shared queues; with --vcs every packet's VC class); with --json as one JSON "
                         "object")
    rt.add_argument("--html", type=output_file("HTML view"), metavar="FILE",
                    help="also write one run as a self-contained HTML page: the network, packets moving step by "
                         "step, link queues, the delivery curve and the table row (one problem, paths, protocol, "
                         "B, b and seed, with the run's --vcs, --source-queue and --vc-buffer; at most 4,096 nodes "
                         "and 200,000 packet-hops)")


def run(args: argparse.Namespace) -> None:
    protect_run_inputs([args.network, args.problem, args.paths, args.protocols])
    plot = plot_path(args)
    links = writable(args.links, "links")
    html = html_path(args)
    if args.trace:
        if html is not None:
            raise UserError("--trace prints the run step by step; --html draws it: give one of the two")
        _trace(args)
        return
    if html is not None:
        _check_one_run(args, "--html draws one run")
        from universal.networks import build_network
        from universal.reporting.html.data import check_nodes

        net = build_network(args.network)    # before the run (the host network is checked again after it)
        check_nodes(net.num_nodes, net.name)
    from universal.experiment import Experiment, check_seed_count

    check_seed_count(args.seeds, "--seeds")
    exp = Experiment(
        network=args.network,
        problem=names(args.problem),
        paths=None if args.paths is None else names(args.paths),
        protocols=names(args.protocols),
        seeds=list(range(args.seed, args.seed + args.seeds)),
        bandwidth=args.bandwidth[0] if len(args.bandwidth) == 1 else args.bandwidth,
        buffer=args.buffer[0] if len(args.buffer) == 1 else args.buffer,
        vcs=args.vcs[0] if len(args.vcs) == 1 else args.vcs,
        source_queue=args.source_queue,
        vc_buffer=args.vc_buffer,
        engine=args.engine,
        name="route",
        analyze=args.analyze,
        opt=args.opt,
        time_limit=args.time_limit,
    )
    result = run_experiment_with_bar(exp, machine(args), keep_delivery=plot is not None,
                                     keep_link_loads=links is not None, keep_runs=html is not None)
    if html is not None:  # before the table: a run too large to draw is refused with nothing printed
        from dataclasses import asdict

        from universal.reporting.html.data import batch_view
        from universal.reporting.html.page import write_view

        (collection, run_result), = result.runs
        chaos = _chaos_queues(exp, collection, run_result)
        wrote_html(*write_view(html, batch_view(collection, run_result, asdict(result.rows[0]),
                                                protocol=exp.protocols[0], captions=result.captions,
                                                command=command_line(args), vcs=exp.vcs,
                                                source_queue=exp.source_queue, vc_buffer=exp.vc_buffer, **chaos)))
    emit_experiment(result, args)
    if links is not None:
        from universal.reporting.links import experiment_link_lines, write_links

        print(f"links: {write_links(links, experiment_link_lines(result))}", file=sys.stderr)
    if plot is not None:
        from universal.reporting.plots import plot_experiment

        plotted(plot_experiment(result, plot))


def _chaos_queues(exp, collection, run_result) -> dict:
    """For a CHAOS run drawn by ``--html``: when its packets moved into their nodes' shared queues
    and the queues' places per node (:func:`universal.reporting.html.data.batch_view`'s
    ``queued`` and ``shared_queue``); nothing for another routing. The one engine does not record
    the moves into the queues, so they come from the reference engine's run of the same batch,
    which delivers every packet in the same step and crosses the same links (checked here)."""
    import numpy as np

    from universal.engine.batch import is_adaptive_routing, route_batch
    from universal.engine.routes import build_router
    from universal.registry import parse_spec

    name = exp.paths[0] if exp.paths else None
    if name is None or not is_adaptive_routing(name) or parse_spec(name).name != "chaos":
        return {}
    protocol_ss = np.random.SeedSequence(exp.seeds[0]).spawn(3)[2]       # the experiment's protocol stream
    ref = route_batch(collection.network, collection.sources, collection.dests, name, exp.protocols[0],
                      seed=protocol_ss, bandwidth=exp.bandwidth, buffer=exp.buffer, vcs=exp.vcs,
                      source_queue=exp.source_queue, vc_buffer=exp.vc_buffer, engine="reference")
    if not (np.array_equal(ref.result.delivery, run_result.delivery)
            and np.array_equal(ref.result.crossings, run_result.crossings)):
        raise RuntimeError("CHAOS: the reference engine's run differs from the one engine's")
    from universal.reporting.html.data import shared_queue_text

    return {"queued": ref.queued, "shared_queue": shared_queue_text(build_router(name, collection.network), exp.buffer,
                                                                exp.vcs)}


def _default_paths(args: argparse.Namespace) -> str:
    from universal.networks import build_network
    from universal.paths import default_base

    return default_base(build_network(args.network))


def _check_one_run(args: argparse.Namespace, what: str) -> dict:
    """The one value of every option that may list several (refused with one line otherwise)."""
    choices = {"--problem": names(args.problem), "--paths": names(args.paths) if args.paths else [None],
               "--protocols": names(args.protocols), "--bandwidth": args.bandwidth, "--buffer": args.buffer,
               "--vcs": args.vcs}
    several = [option for option, values in choices.items() if len(values) > 1]
    if args.seeds > 1:
        several.append("--seeds")
    if several:
        raise UserError(f"{what}: give one value for {', '.join(several)}")
    return choices


def _trace(args: argparse.Namespace) -> None:
    """``route --trace``: one small run, step by step, from the reference engine."""
    choices = _check_one_run(args, "--trace follows one run")
    if choices["--paths"] == [None]:
        choices["--paths"] = [_default_paths(args)]
    if args.plot or args.analyze or args.csv or args.links or args.opt:
        raise UserError("--trace prints the run step by step (or as --json); it does not combine with "
                        "--plot, --analyze, --links, --opt or --csv")
    from universal.engine.batch import is_adaptive_routing
    from universal.reporting import make_console

    adaptive = is_adaptive_routing(choices["--paths"][0])
    if adaptive or args.vcs[0] != 1 or args.source_queue != "all" or args.vc_buffer != "set":
        from universal.reporting.trace_adaptive import adaptive_trace_to_json
        from universal.reporting.trace_adaptive_text import print_adaptive_trace

        if adaptive:
            from universal.reporting.trace_adaptive import trace_adaptive_route as follow
        else:   # the batch reference has one set buffer per link: the open-loop reference follows these
            from universal.reporting.trace_channels import trace_channels_route as follow
        trace = follow(args.network, choices["--problem"][0], choices["--paths"][0], choices["--protocols"][0],
                       seed=args.seed, bandwidth=args.bandwidth[0], buffer=args.buffer[0], vcs=args.vcs[0],
                       source_queue=args.source_queue, vc_buffer=args.vc_buffer)
        if args.json:
            print_json(adaptive_trace_to_json(trace), args)
        else:
            print_adaptive_trace(trace, make_console())
        return
    from universal.reporting.trace import print_trace, trace_route, trace_to_json

    trace = trace_route(args.network, choices["--problem"][0], choices["--paths"][0], choices["--protocols"][0],
                        seed=args.seed, bandwidth=args.bandwidth[0], buffer=args.buffer[0])
    if args.json:
        print_json(trace_to_json(trace), args)
    else:
        print_trace(trace, make_console())
