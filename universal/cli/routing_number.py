"""``universal routing-number``: R(G), the most steps any permutation needs with free paths and
an optimal schedule, exactly, for networks of at most 8 nodes."""

from __future__ import annotations

import argparse

from universal.cli.common import machine, output_options, positive, print_json, progress_bar, time_limit_option

HELP = "the routing number R(G) of a network of at most 8 nodes, with a permutation attaining it"


def add_arguments(rn: argparse.ArgumentParser) -> None:
    rn.add_argument("--network", required=True, help="e.g. hypercube:d=3, torus:k=4,n=1, edgelist:FILE")
    rn.add_argument("--bandwidth", type=positive, default=1, help="B, packets per link per step (default 1)")
    time_limit_option(rn)
    rn.add_argument("--schedule", action="store_true", help="also print an optimal schedule of that permutation")
    output_options(rn)


def run(args: argparse.Namespace) -> None:
    from universal.networks import build_network
    from universal.optimum.routing_number import routing_number
    from universal.reporting.optimum import print_routing_number, routing_number_json

    from universal.extras import require
    require("opt", "the routing number R(G)")
    network = build_network(args.network)
    with progress_bar(0, f"R({network.name}): permutation classes", not machine(args)) as bar:
        def advance(done: int, total: int) -> None:
            bar.bar.update(bar.task, completed=done, total=total)

        result = routing_number(network, args.bandwidth, time_limit=args.time_limit,
                                progress=advance if bar else None)
    data = routing_number_json(result, network, args.bandwidth, args.schedule)
    if args.json:
        print_json(data, args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv

        print(rows_to_csv([{k: v for k, v in data.items() if k != "schedule"}]), end="")
    else:
        from universal.reporting import make_console

        print_routing_number(result, network, args.bandwidth, make_console(), args.schedule)
