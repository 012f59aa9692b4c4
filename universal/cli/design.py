"""``universal design``: the optimal oblivious routing of a torus by linear programming (SPEC §10;
Towles, Dally & Boyd, "Throughput-centric routing algorithm design", 2003), one routing or the
whole tradeoff curve against locality with the named algorithms beside it."""

from __future__ import annotations

import argparse
import sys

from universal.cli.common import (machine, nonnegative, output_options, plot_path, plotted, positive, print_json,
                                  progress_bar, writable)

HELP = "optimal oblivious routing of a torus by LP (worst-case, average-case or capacity)"


def _locality(text: str) -> float:
    import math
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r} (leave --locality out for "
                                         "no bound)")
    return value


def add_arguments(ds: argparse.ArgumentParser) -> None:
    ds.add_argument("--network", required=True, help="torus:k=K,n=N")
    ds.add_argument("--objective", default="worst-case", choices=["capacity", "worst-case", "average-case"],
                    help="what to optimise: uniform traffic (capacity), the worst permutation (TDB eq. 8) "
                         "or the mean over --samples random permutations (eq. 9); default worst-case")
    ds.add_argument("--then", choices=["locality"], default=None,
                    help="second objective: among the optima, the routing with the shortest paths")
    ds.add_argument("--paths", default="all", choices=["all", "minimal", "2turn"],
                    help="path family: any route, shortest routes, or at most two turns (default all)")
    ds.add_argument("--locality", type=_locality, default=None, metavar="L",
                    help="constraint: mean path length at most L times the minimal one (L >= 1)")
    ds.add_argument("--save", metavar="FILE", help="save the designed routing (JSON) for --routing lp:file=FILE")
    ds.add_argument("--tradeoff", type=positive, default=None, metavar="N",
                    help="sweep N locality bounds: the optimal curve and the named algorithms beside it")
    ds.add_argument("--plot", metavar="FILE", help="with --tradeoff: draw the curve (.png or .svg)")
    ds.add_argument("--samples", type=positive, default=100, metavar="M",
                    help="random permutations of the average case (default 100)")
    ds.add_argument("--seed", type=nonnegative, default=0,
                    help="seed of the permutation sample; the held-out sample uses seed + 1 (default 0)")
    output_options(ds)


def run(args: argparse.Namespace) -> None:
    from universal.errors import UserError
    plot = plot_path(args)
    if plot is not None and args.tradeoff is None:
        raise UserError("--plot draws the tradeoff curve: give --tradeoff N as well")
    if args.tradeoff is not None and args.tradeoff < 2:
        raise UserError("--tradeoff needs at least 2 points")
    from universal.design import design, torus_of, tradeoff
    from universal.paths.torus.routingfile import check_replaceable, write_routing

    torus = torus_of(args.network)
    if args.locality is not None and not args.locality >= 1:
        raise UserError(f"--locality must be at least 1 (the minimal mean path length), got {args.locality}")
    from universal.design import check_design_size
    solves = 1 + (args.tradeoff or 0)
    seconds = check_design_size(torus, args.objective, args.paths, args.samples, solves)
    save = writable(args.save, "routing")
    if save is not None:
        check_replaceable(save)
    if seconds > 60 and not machine(args):
        minutes = max(1, round(seconds / 60))
        print(f"note: the LP solve{'s' if solves > 1 else ''} may take about {minutes} minute"
              f"{'s' if minutes > 1 else ''} here (a rough estimate; Ctrl-C stops it)", file=sys.stderr)
    result = design(torus, args.objective, args.paths, locality=args.locality, then=args.then,
                    samples=args.samples, seed=args.seed, name=f"lp:{args.objective}/{args.paths}")
    if save is not None:
        write_routing(save, result.routing)
        print(f"saved: {save}", file=sys.stderr)
    curve = points = None
    if args.tradeoff is not None:
        from universal.design.tradeoffs import NAMED, named_points
        with progress_bar(args.tradeoff + len(NAMED) + 1, "tradeoff: LPs", not machine(args)) as bar:
            curve = tradeoff(torus, args.objective, args.paths, args.tradeoff, samples=args.samples,
                             seed=args.seed, progress=bar.advance if bar else None)
            points = named_points(torus, args.objective, args.samples, args.seed,
                                  progress=(lambda name: bar.begin(f"evaluating {name}")) if bar else None)
    if args.json:
        data = result.as_dict()
        if curve is not None:
            data["curve"] = [r.as_dict() for r in curve]
            data["algorithms"] = points
        print_json(data, args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv
        rows = [r.as_dict() for r in curve] if curve is not None else [result.as_dict()]
        print(rows_to_csv(rows), end="")
    else:
        from universal.reporting import make_console
        from universal.reporting.design import print_design
        print_design(make_console(), result, curve, points)
    if plot is not None:
        from universal.design.tradeoffs import curve_key
        from universal.reporting.plot_design import plot_tradeoff
        title = f"{torus.name}: optimal locality against {args.objective} throughput ({args.paths} paths)"
        plotted([plot_tradeoff(curve, points, plot, key=curve_key(args.objective), title=title)])
