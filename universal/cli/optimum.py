"""``universal optimum``: OPT of one path collection (or R(G, π) with ``--paths free``), proven or
bounded, optionally with the optimal schedule step by step."""

from __future__ import annotations

import argparse

from universal.cli.common import nonnegative, output_options, positive, print_json, time_limit_option

HELP = "the fewest steps of any schedule (OPT) of one problem on its paths, or with free paths"


def add_arguments(op: argparse.ArgumentParser) -> None:
    op.add_argument("--network", required=True, help="e.g. mesh:k=3,n=2, butterfly:d=4")
    op.add_argument("--problem", required=True, help="e.g. permutation:transpose, h-relation:h=2")
    op.add_argument("--paths", default=None,
                    help="the path system (default: the network's usual one, as in route), or 'free' for R(G, π)")
    op.add_argument("--bandwidth", type=positive, default=1, help="B, packets per link per step (default 1)")
    op.add_argument("--seed", type=nonnegative, default=0,
                    help="seed of the problem and the paths (the same instance as route --seed; default 0)")
    time_limit_option(op)
    op.add_argument("--schedule", action="store_true",
                    help="also print the optimal schedule: per step, which packet crosses which link")
    output_options(op)


def run(args: argparse.Namespace) -> None:
    import numpy as np

    from universal.networks import build_network
    from universal.offline import check_opt
    from universal.paths import build_path_system, default_base
    from universal.workloads import build_problem

    network = build_network(args.network)
    if network.kind == "torus":
        import universal.design  # noqa: F401  (installs the designer behind 2turn / 2turna, torus routings)
    problem_ss, paths_ss, _ = np.random.SeedSequence(args.seed).spawn(3)
    free = args.paths == "free"
    system = None if free else build_path_system(args.paths or default_base(network), network)
    problem = build_problem(args.problem, network, np.random.default_rng(problem_ss))
    check_opt("free" if free else "paths", problem.size, args.time_limit)
    header = {"network": network.name, "problem": args.problem, "bandwidth": args.bandwidth, "seed": args.seed,
              "n": problem.size}
    if free:
        from universal.optimum.free_paths import routing_time

        header["paths"] = "free"
        result = routing_time(problem, network, args.bandwidth, time_limit=args.time_limit, seed=args.seed)
    else:
        from universal.optimum import optimum

        paths = system.route(problem, network, np.random.default_rng(paths_ss))
        header.update(paths=args.paths or system.name, C=paths.congestion, D=paths.dilation)
        result = optimum(paths, args.bandwidth, time_limit=args.time_limit, seed=args.seed)
    from universal.reporting.optimum import optimum_json, print_optimum, schedule_steps

    if args.json:
        print_json(optimum_json(result, header, args.schedule), args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv

        if args.schedule:
            rows = [{"step": step, **move} for step, moves in enumerate(schedule_steps(result.schedule), start=1)
                    for move in moves]
        else:
            rows = [optimum_json(result, header, False)]
        print(rows_to_csv(rows), end="")
    else:
        from universal.reporting import make_console

        print_optimum(result, header, make_console(), args.schedule)
