"""Command line: a thin layer over the Python API (SPEC §8).

    python -m universal scenario NAME_OR_FILE [--seeds N] [--seed S] [--json | --csv] [--plot FILE]
        [--out FILE] [--resume] [--jobs N]
    python -m universal scenarios
    python -m universal route --network SPEC --problem SPEC --paths A,B --protocols X,Y [--seeds N]
        [--bandwidth B[,B2...]] [--buffer b[,b2...]] [--json | --csv] [--plot FILE] [--trace]
    python -m universal load --network NET --routing A,B --traffic X,Y [--seed S] [--samples M]
        [--json | --csv] [--plot FILE]
    python -m universal worstcase --network NET --routing A,B [--show-permutation]
        [--permutation-file PATH] [--samples M] [--json | --csv] [--plot FILE]

User errors print one line, ``error: ...``, on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Iterator, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from universal.errors import UserError
from universal.experiment import Experiment, ExperimentResult, run_experiment, runs_in
from universal.oblivious.graphs import DEFAULT_SAMPLES
from universal.load_analysis import (LoadAnalysis, LoadReport, default_routing, permutation_paths,
                                     progress_total, resolve_target, run_load_analysis, write_permutation_file)
from universal.networks import build_network
from universal.reporting import make_console, print_experiment
from universal.reporting.oblivious import print_load_report
from universal.reporting.csvout import rows_to_csv
from universal.reporting.plots import check_plot_path, plot_experiment, plot_load_report, plot_sweep
from universal.reporting.sweeps import sweep_conclusion, sweep_table
from universal.reporting.trace import print_trace, trace_route, trace_to_json
from universal.scenario import list_scenarios, load_scenario, seeds_from
from universal.sweep import Sweep, run_sweep


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.split()[1:]  # "universal route" -> ["route"]; top level -> []
        raise UserError(f"{message} (see: python -m universal {' '.join([*command, '--help'])})")


def _names(text: str) -> list[str]:
    """Split ``A,B`` on commas that are not inside a ``name:key=value,...`` parameter list."""
    out: list[str] = []
    for part in text.split(","):
        part = part.strip()
        continues = "=" in part and ":" not in part or part[:1].isdigit()
        if out and continues and ":" in out[-1] and "=" in out[-1]:
            # A parameter of the previous name (torus:k=8,n=2) or a label (broadcast:source=3,4).
            out[-1] += "," + part
        elif part:
            out.append(part)
    if not out:
        raise UserError(f"empty list {text!r}")
    return out


def _int_at_least(low: int, what: str):
    """An argparse type: an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {value}")
        return value

    return parse


_positive = _int_at_least(1, "positive")
_nonnegative = _int_at_least(0, "non-negative")


def _buffer_list(text: str) -> list[int | None]:
    """An argparse type: buffer sizes (positive integers or ``unbounded``) separated by commas."""
    return [None if part.strip() == "unbounded" else _positive(part.strip()) for part in text.split(",")]


def _positive_list(text: str) -> list[int]:
    """An argparse type: one positive integer or several separated by commas."""
    return [_positive(part.strip()) for part in text.split(",")]


def _output_options(parser: argparse.ArgumentParser) -> None:
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    out.add_argument("--csv", action="store_true", help="print the rows as CSV instead of a table")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="universal", description="Packet-level emulator for universal routing.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sc = sub.add_parser("scenario", help="run a built-in scenario or a scenario file")
    sc.add_argument("name", help="built-in scenario name or path to a .toml file")
    sc.add_argument("--seeds", type=_positive, help="number of seeds (overrides the file)")
    sc.add_argument("--seed", type=_nonnegative, help="first seed (overrides the file)")
    _output_options(sc)
    sc.add_argument("--out", metavar="FILE",
                    help="sweeps: JSON Lines file receiving each finished cell (default NAME.results.jsonl here)")
    sc.add_argument("--resume", action="store_true", help="sweeps: skip the cells already in the results file")
    sc.add_argument("--jobs", type=_positive, default=1, help="sweeps: cells run in parallel processes (default 1)")
    sc.add_argument("--plot", metavar="FILE", help="also draw the result (.png or .svg): T versus size for sweeps, "
                    "packets delivered by step for experiments, channel loads for load scenarios")

    sub.add_parser("scenarios", help="list the built-in scenarios")

    rt = sub.add_parser("route", help="route a problem on a network")
    rt.add_argument("--network", required=True, help="e.g. butterfly:d=8, torus:k=8,n=2, edgelist:FILE")
    rt.add_argument("--problem", required=True, help="e.g. permutation:random, h-relation:h=4 (comma-separated for several)")
    rt.add_argument("--paths", default="dimension-order", help="comma-separated path systems")
    rt.add_argument("--protocols", default="random-rank", help="comma-separated protocols")
    rt.add_argument("--seeds", type=_positive, default=1, help="number of seeds (default 1)")
    rt.add_argument("--seed", type=_nonnegative, default=0, help="first seed (default 0)")
    rt.add_argument("--bandwidth", type=_positive_list, default=[1],
                    help="B, packets per link per step; several (1,2,4) to compare")
    rt.add_argument("--buffer", type=_buffer_list, default=[None], metavar="b",
                    help="size of every link buffer (default unbounded); several (1,2,unbounded) to compare; "
                         "a run that cannot move is reported as a deadlock")
    rt.add_argument("--engine", choices=["fast", "reference"], default="fast", help=argparse.SUPPRESS)
    rt.add_argument("--analyze", action="store_true",
                    help="also report each path collection: n, C, D, simple/shortest/leveled, link loads")
    _output_options(rt)
    rt.add_argument("--plot", metavar="FILE", help="also draw packets delivered by step for every run of the "
                    "first seed (.png or .svg)")
    rt.add_argument("--trace", action="store_true",
                    help="follow one small run step by step (who crossed which link, who lost and why, the "
                         "buffers); with --json as one JSON object")

    network_help = ("torus:k=K,n=N (up to 4096 nodes with the torus routings), or any network of at most "
                    "256 nodes: mesh:k=,n=, hypercube:d=, torus:k=,n=, edgelist:FILE")
    routing_help = ("comma-separated: dor, val, romm, rlb, rlbth, ival (tori), or any path system: shortest, "
                    "random-shortest, dimension-order, valiant[:base=NAME] (default: dor on tori, "
                    "dimension-order on meshes and hypercubes, shortest elsewhere)")
    samples_help = (f"paths per pair when a path system's loads cannot be enumerated exactly "
                    f"(default {DEFAULT_SAMPLES})")
    ld = sub.add_parser("load", help="throughput and locality of oblivious routings under traffic patterns")
    ld.add_argument("--network", required=True, help=network_help)
    ld.add_argument("--routing", help=routing_help)
    ld.add_argument("--traffic", default="uniform",
                    help="comma-separated, e.g. uniform,bitcomp,transpose,tornado,random-perms:10000")
    ld.add_argument("--seed", type=_nonnegative, default=0, help="seed of the random permutations (default 0)")
    ld.add_argument("--samples", type=_positive, default=DEFAULT_SAMPLES, help=samples_help)
    _output_options(ld)
    ld.add_argument("--plot", metavar="FILE", help="also draw (2-D tori) the channel loads of the first routing "
                    "under the first traffic as a heat map (.png or .svg); with random-perms:M, the "
                    "throughput histogram with the exact worst case marked, in FILE's name + .histogram")

    wc = sub.add_parser("worstcase", help="exact worst-case permutation and throughput of oblivious routings")
    wc.add_argument("--network", required=True, help=network_help)
    wc.add_argument("--routing", help=routing_help)
    wc.add_argument("--show-permutation", action="store_true",
                    help="print each worst permutation (a k x k grid of destinations on 2-D tori)")
    wc.add_argument("--permutation-file", metavar="PATH",
                    help="write the worst permutation for --problem permutation:file=PATH "
                         "(several routings: PATH with .ROUTING before the suffix)")
    wc.add_argument("--samples", type=_positive, default=DEFAULT_SAMPLES, help=samples_help)
    _output_options(wc)
    wc.add_argument("--plot", metavar="FILE", help="also draw (2-D tori) the channel loads of the first "
                    "routing under its worst permutation as a heat map (.png or .svg)")
    return parser


class _Bar:
    """A transient rich progress bar on stderr, or nothing (not a terminal, or JSON output)."""

    def __init__(self, bar: Progress | None, task=None) -> None:
        self.bar, self.task = bar, task
        self.begun = False

    def begin(self, label: str) -> None:
        """A new unit of work starts (so the previous one, if any, is done)."""
        if self.begun:
            self.advance()
        self.begun = True
        self.describe(label)

    def advance(self, amount: int = 1) -> None:
        self.bar.advance(self.task, amount)

    def set(self, done: int, _total: int | None = None) -> None:
        self.bar.update(self.task, completed=done)

    def describe(self, label: str) -> None:
        self.bar.update(self.task, description=label)


@contextmanager
def _progress_bar(total: int, description: str, enabled: bool) -> Iterator[_Bar | None]:
    """Yields a :class:`_Bar` counting to ``total`` with the time left, or None when disabled."""
    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bar:
        yield _Bar(bar, bar.add_task(description, total=total))


def _analyse(analysis: LoadAnalysis, as_json: bool) -> LoadReport:
    target = resolve_target(analysis)
    what = "worst case" if not analysis.traffics else "channel loads"
    with _progress_bar(progress_total(analysis, target), f"{what} on {target.name}", not as_json) as bar:
        return run_load_analysis(analysis, progress=bar.advance if bar else None)


def _run(exp: Experiment, as_json: bool, keep_delivery: bool = False) -> ExperimentResult:
    with _progress_bar(runs_in(exp), "routing", not as_json) as bar:
        return run_experiment(exp, progress=bar.begin if bar else None, keep_delivery=keep_delivery)


def _machine(args: argparse.Namespace) -> bool:
    """Output for scripts (JSON or CSV): no tables, no progress bars."""
    return args.json or args.csv


def _emit(result: ExperimentResult, args: argparse.Namespace) -> None:
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    elif args.csv:
        print(rows_to_csv(result.to_json()["rows"]), end="")
    else:
        print_experiment(result, make_console())


def _emit_report(report: LoadReport, args: argparse.Namespace, **options) -> None:
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    elif args.csv:
        data = report.to_json()
        rows = [{"table": "load", **r} for r in data["rows"]] if report.loads else []
        rows += [{"table": "worstcase", **w.as_dict()} for w in report.worst]
        print(rows_to_csv(rows), end="")
    else:
        print_load_report(report, make_console(), **options)


def _plot_path(args: argparse.Namespace) -> Path | None:
    """The --plot file, checked before any work is done (None without --plot)."""
    return check_plot_path(args.plot) if getattr(args, "plot", None) else None


def _plotted(files: list[Path]) -> None:
    for f in files:
        print(f"plot: {f}", file=sys.stderr)


def cmd_scenario(args: argparse.Namespace) -> None:
    scenario = load_scenario(args.name)
    plot = _plot_path(args)
    if scenario.analysis is not None:
        _run_load_scenario(scenario.analysis, args)
        return
    exp = scenario.experiment
    if args.seeds is not None or args.seed is not None:
        first = args.seed if args.seed is not None else (exp.seeds[0] if exp.seeds else 0)
        count = args.seeds if args.seeds is not None else len(exp.seeds)
        exp.seeds = seeds_from(count, first, "command line")
    if scenario.sweep is not None:
        _run_sweep_scenario(scenario.sweep, args)
        return
    if args.out or args.resume or args.jobs != 1:
        raise UserError(f"scenario {scenario.name!r} is not a sweep: --out, --resume and --jobs apply to sweeps")
    result = _run(exp, _machine(args), keep_delivery=plot is not None)
    _emit(result, args)
    if plot is not None:
        _plotted(plot_experiment(result, plot))


def _run_sweep_scenario(sweep: Sweep, args: argparse.Namespace) -> None:
    out = Path(args.out) if args.out else Path(f"{sweep.name}.results.jsonl")
    with _progress_bar(len(sweep.cells()), f"{sweep.name}: cells", not _machine(args)) as bar:
        result = run_sweep(sweep, results_file=out, resume=args.resume, jobs=args.jobs,
                           progress=bar.set if bar else None)
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    elif args.csv:
        print(rows_to_csv({**c.cell, "network": c.network["name"], **asdict(r)}
                          for c in result.cells for r in c.rows), end="")
    else:
        console = make_console()
        console.print(sweep_table(result))
        console.print(sweep_conclusion(result))
    if args.plot:
        _plotted(plot_sweep(result, check_plot_path(args.plot)))


def _run_load_scenario(analysis: LoadAnalysis, args: argparse.Namespace) -> None:
    if args.seeds is not None:
        raise UserError(f"scenario {analysis.name!r} is a load analysis: it takes --seed, not --seeds")
    if args.seed is not None:
        analysis.seed = args.seed
    if args.out or args.resume or args.jobs != 1:
        raise UserError(f"scenario {analysis.name!r} is not a sweep: --out, --resume and --jobs apply to sweeps")
    report = _analyse(analysis, _machine(args))
    _emit_report(report, args, compare=True)
    if args.plot:
        _plotted(plot_load_report(report, check_plot_path(args.plot)))


def cmd_scenarios(args: argparse.Namespace) -> None:
    table = Table(title="Built-in scenarios (python -m universal scenario NAME)", header_style="bold")
    table.add_column("name")
    table.add_column("what it shows")
    for sc in list_scenarios():
        table.add_row(sc.name, sc.description)
    make_console().print(table)


def cmd_route(args: argparse.Namespace) -> None:
    plot = _plot_path(args)
    if args.trace:
        _trace(args)
        return
    exp = Experiment(
        network=args.network,
        problem=_names(args.problem),
        paths=_names(args.paths),
        protocols=_names(args.protocols),
        seeds=list(range(args.seed, args.seed + args.seeds)),
        bandwidth=args.bandwidth[0] if len(args.bandwidth) == 1 else args.bandwidth,
        buffer=args.buffer[0] if len(args.buffer) == 1 else args.buffer,
        engine=args.engine,
        name="route",
        analyze=args.analyze,
    )
    result = _run(exp, _machine(args), keep_delivery=plot is not None)
    _emit(result, args)
    if plot is not None:
        _plotted(plot_experiment(result, plot))


def _trace(args: argparse.Namespace) -> None:
    """``route --trace``: one small run, step by step, from the reference engine."""
    choices = {"--problem": _names(args.problem), "--paths": _names(args.paths),
               "--protocols": _names(args.protocols), "--bandwidth": args.bandwidth, "--buffer": args.buffer}
    several = [option for option, values in choices.items() if len(values) > 1]
    if args.seeds > 1:
        several.append("--seeds")
    if several:
        raise UserError(f"--trace follows one run: give one value for {', '.join(several)}")
    if args.plot or args.analyze or args.csv:
        raise UserError("--trace prints the run step by step (or as --json); it does not combine with "
                        "--plot, --analyze or --csv")
    trace = trace_route(args.network, choices["--problem"][0], choices["--paths"][0], choices["--protocols"][0],
                        seed=args.seed, bandwidth=args.bandwidth[0], buffer=args.buffer[0])
    if args.json:
        print(json.dumps(trace_to_json(trace), indent=1))
    else:
        print_trace(trace, make_console())


def _routings(args: argparse.Namespace) -> list[str]:
    """The --routing names, or the network's default routing."""
    if args.routing is not None:
        return _names(args.routing)
    return [default_routing(build_network(args.network))]


def cmd_load(args: argparse.Namespace) -> None:
    """``universal load``: throughput (fraction of capacity) and locality of routings under traffics."""
    plot = _plot_path(args)
    analysis = LoadAnalysis(args.network, _routings(args), _names(args.traffic), seed=args.seed,
                            samples=args.samples)
    report = _analyse(analysis, _machine(args))
    _emit_report(report, args)
    if plot is not None:
        _plotted(plot_load_report(report, plot))


def cmd_worstcase(args: argparse.Namespace) -> None:
    """``universal worstcase``: the exact worst-case permutation of each routing, optionally written out."""
    plot = _plot_path(args)
    analysis = LoadAnalysis(args.network, _routings(args), worstcase=True, samples=args.samples)
    resolve_target(analysis)                      # a bad network is reported before the file check
    files = permutation_paths(args.permutation_file, analysis.routings) if args.permutation_file else {}
    report = _analyse(analysis, _machine(args))
    written = {w.routing: write_permutation_file(files[r], w) for r, w in zip(analysis.routings, report.worst)
               if r in files}
    if args.json:
        data = report.to_json()
        for row in data["rows"]:
            if row["routing"] in written:
                row["permutation_file"] = str(written[row["routing"]])
        print(json.dumps(data, indent=1))
    elif args.csv:
        print(rows_to_csv({**w.as_dict(), "permutation_file": str(written[w.routing]) if w.routing in written
                           else None} for w in report.worst), end="")
    else:
        print_load_report(report, make_console(), show_permutation=args.show_permutation, files=written)
    if plot is not None:
        _plotted(plot_load_report(report, plot))


COMMANDS = {"scenario": cmd_scenario, "scenarios": cmd_scenarios, "route": cmd_route,
            "load": cmd_load, "worstcase": cmd_worstcase}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 2 user error)."""
    try:
        args = build_parser().parse_args(argv)
        COMMANDS[args.command](args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0
