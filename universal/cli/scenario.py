"""``universal scenario NAME_OR_FILE``: run a built-in scenario or a scenario file: a routing
experiment, a sweep over sizes (results file, ``--resume``, ``--jobs``), a load analysis, an
open-loop study (the same results-file options) or a design study."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from universal.cli.common import (command_line, executor, executor_options, machine, nonnegative, opt_options,
                                  output_file, output_options, plot_path, plotted, positive, print_json, progress_bar,
                                  protect_run_inputs, table_options, writable)
from universal.cli.outputs import analyse_with_bar, emit_experiment, emit_report, run_experiment_with_bar
from universal.errors import UserError

if TYPE_CHECKING:
    from universal.load_analysis import LoadAnalysis
    from universal.sweep import Sweep

HELP = "run a built-in scenario or a scenario file"


def add_arguments(sc: argparse.ArgumentParser) -> None:
    sc.add_argument("name", help="built-in scenario name or path to a .toml file")
    sc.add_argument("--seeds", type=positive, help="number of seeds (overrides the file)")
    sc.add_argument("--seed", type=nonnegative, help="first seed (overrides the file)")
    opt_options(sc, default_time_limit=None)
    output_options(sc)
    table_options(sc)
    sc.add_argument("--out", type=output_file("results"), metavar="FILE",
                    help="sweeps: JSON Lines file receiving each finished cell (default NAME.results.jsonl here); "
                         "open-loop studies: the same, only when given")
    sc.add_argument("--resume", action="store_true",
                    help="sweeps and open-loop studies: skip the cells already in the results file")
    sc.add_argument("--overwrite", action="store_true",
                    help="sweeps and open-loop studies: replace an existing results file (without --resume or "
                         "--overwrite it is refused)")
    sc.add_argument("--jobs", type=positive, default=None,
                    help="sweeps and open-loop studies: cells run in parallel processes (default 1, or the "
                         "scenario's own jobs key, at most the machine's cores); "
                         "with --executor dask and no --scheduler, the workers of the local Dask cluster")
    executor_options(sc, "sweeps and open-loop studies: ")
    sc.add_argument("--plot", type=output_file("plot"), metavar="FILE", help="also draw the result (.png or .svg): T versus size for sweeps, "
                    "packets delivered by step for experiments, channel loads for load scenarios")


def run(args: argparse.Namespace) -> None:
    from universal.scenario import load_scenario, seeds_from

    scenario = load_scenario(args.name)
    _protect_inputs(scenario)
    args.jobs = args.jobs or _default_jobs(scenario)
    plot = plot_path(args)
    if scenario.analysis is not None:
        _run_load_scenario(scenario.analysis, args)
        return
    if scenario.openloop is not None:
        _run_openloop_scenario(scenario.openloop, args, plot)
        return
    if scenario.design is not None:
        _run_design_scenario(scenario.design, args)
        return
    if scenario.adversary is not None:
        _run_adversary_scenario(scenario.adversary, args)
        return
    exp = scenario.experiment
    if args.seeds is not None or args.seed is not None:
        first = args.seed if args.seed is not None else (exp.seeds[0] if exp.seeds else 0)
        count = args.seeds if args.seeds is not None else len(exp.seeds)
        exp.seeds = seeds_from(count, first, "command line")
    if args.opt is not None:
        exp.opt = args.opt
    if args.time_limit is not None:
        exp.time_limit = args.time_limit
    if scenario.sweep is not None:
        _run_sweep_scenario(scenario.sweep, args)
        return
    _refuse_sweep_options(args, scenario.name, "a routing experiment")
    result = run_experiment_with_bar(exp, machine(args), keep_delivery=plot is not None)
    emit_experiment(result, args)
    if plot is not None:
        from universal.reporting.plots import plot_experiment

        plotted(plot_experiment(result, plot))


def _run_sweep_scenario(sweep: "Sweep", args: argparse.Namespace) -> None:
    from dataclasses import asdict

    from universal.sweep import run_sweep

    from universal.datafiles import protect_inputs

    protect_inputs(sweep.inputs())  # the files the cells name, placeholders filled in
    out = writable(args.out if args.out is not None else f"{sweep.name}.results.jsonl", "results file",
                   streams=False)
    if args.resume and args.overwrite:
        raise UserError("--resume continues the results file and --overwrite replaces it: give one of them")
    plot_path(args)
    with progress_bar(len(sweep.cells()), f"{sweep.name}: cells", not machine(args)) as bar:
        result = run_sweep(sweep, results_file=out, resume=args.resume, overwrite=args.overwrite, jobs=args.jobs,
                           progress=bar.set if bar else None, command=command_line(args), executor=executor(args))
    if args.json:
        print_json(result.to_json(), args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv

        print(rows_to_csv({**c.cell, "network": c.network["name"], **asdict(r)}
                          for c in result.cells for r in c.rows), end="")
    else:
        from universal.reporting import make_console
        from universal.reporting.sweeps import sweep_conclusion, sweep_table

        console = make_console()
        console.print(sweep_table(result, columns=args.columns, wide=args.wide))
        console.print(sweep_conclusion(result))
    if args.plot:
        from universal.reporting.plots import plot_sweep

        plotted(plot_sweep(result, plot_path(args)))


def _protect_inputs(scenario) -> None:
    """The scenario file and every file it names are inputs of this run: no output replaces them."""
    texts, base = [], scenario.path.parent
    if scenario.analysis is not None:
        a = scenario.analysis
        texts, base = [a.network, list(a.routings), list(a.traffics)], a.base_dir
    elif scenario.experiment is not None:
        e = scenario.experiment
        texts, base = [e.network, e.problem, e.paths, e.protocols], e.base_dir
    elif scenario.openloop is not None:
        o = scenario.openloop
        texts, base = [o.network, list(o.routings), list(o.traffics)], o.base_dir
    elif scenario.design is not None:
        texts = [getattr(scenario.design, "network", None)]
    protect_run_inputs([t if isinstance(t, list) else [t] for t in texts], base, files=[scenario.path])


def _default_jobs(scenario) -> int:
    """The scenario's ``jobs`` key (open-loop studies), capped at this machine's cores, or 1."""
    import os

    wanted = scenario.openloop.jobs if scenario.openloop is not None else 1
    return max(1, min(wanted, os.cpu_count() or 1))


def _refuse_sweep_options(args: argparse.Namespace, name: str, kind: str) -> None:
    """One line naming the results-file and worker options given to a scenario that takes none."""
    given = _sweep_options(args)
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise UserError(f"scenario {name!r} is {kind}: {', '.join(given)} {verb} only to sweeps and "
                        "open-loop studies")


def _refuse_opt_options(args: argparse.Namespace, name: str, kind: str) -> None:
    """One line naming the offline-optimum options given to a scenario that routes no problem."""
    given = [option for option, value in (("--opt", args.opt), ("--time-limit", args.time_limit)) if value is not None]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise UserError(f"scenario {name!r} is {kind}: {' and '.join(given)} {verb} only to routing experiments")


def _sweep_options(args: argparse.Namespace) -> list[str]:
    """The options given that only sweeps and open-loop studies take."""
    given = {"--out": args.out is not None, "--resume": args.resume, "--overwrite": args.overwrite,
             "--jobs": args.jobs != 1, "--executor": args.executor != "local", "--scheduler": args.scheduler is not None}
    return [option for option, present in given.items() if present]


def _run_load_scenario(analysis: "LoadAnalysis", args: argparse.Namespace) -> None:
    if args.seeds is not None:
        raise UserError(f"scenario {analysis.name!r} is a load analysis: it takes --seed, not --seeds")
    _refuse_opt_options(args, analysis.name, "a load analysis")
    if args.seed is not None:
        analysis.seed = args.seed
    _refuse_sweep_options(args, analysis.name, "a load analysis")
    report = analyse_with_bar(analysis, args)
    emit_report(report, args, compare=True)
    if args.plot:
        from universal.reporting.plots import plot_load_report

        plotted(plot_load_report(report, plot_path(args)))


def _run_openloop_scenario(study, args: argparse.Namespace, plot) -> None:
    """An open-loop study (``kind = "openloop"``): cells, results file and workers as for
    ``universal openloop``; a results file only with ``--out``."""
    from universal.cli.openloop import draw_histograms, emit, histogram_plot_path, run_with_bar

    _refuse_opt_options(args, study.name, "an open-loop study")
    if plot is not None and study.loads is None:
        raise UserError("--plot draws a load sweep: this scenario searches saturation")
    histogram_plot = histogram_plot_path(plot) if plot is not None and study.histogram else None
    if args.seeds is not None or args.seed is not None:
        from universal.scenario import seeds_from

        first = args.seed if args.seed is not None else study.seeds[0]
        study.seeds = seeds_from(args.seeds if args.seeds is not None else len(study.seeds), first, "command line")
    report = run_with_bar(study, args, executor=executor(args))
    data = report.to_json()
    emit(data, args)
    if plot is not None:
        from universal.reporting.plots.openloop import plot_openloop

        plotted(plot_openloop(report.rows, plot, study.units))
    if histogram_plot is not None:           # with histogram = true, as openloop --histogram --plot
        draw_histograms(data, histogram_plot)


def _run_design_scenario(study, args: argparse.Namespace) -> None:
    """Tradeoff curves and the named algorithms (``kind = "design"``, SPEC §10)."""
    if args.seeds is not None:
        raise UserError(f"scenario {study.name!r} is a design study: it takes --seed, not --seeds")
    if args.seed is not None:
        study.seed = args.seed
    _refuse_sweep_options(args, study.name, "a design study")
    plot = plot_path(args)
    from universal.design.study import run_study

    steps = len(study.objectives) + 6 + len(study.objectives)
    with progress_bar(steps, f"{study.name}", not machine(args)) as bar:
        result = run_study(study, progress=(lambda label: bar.begin(label)) if bar else None)
    if args.json:
        print_json(result.to_json(), args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv

        print(rows_to_csv({"routing": name, **f} for name, f in result.points.items()), end="")
    else:
        from universal.reporting import make_console
        from universal.reporting.design import print_study

        print_study(make_console(), result)
    if plot is not None:
        from universal.reporting.plot_design import plot_study

        plotted(plot_study(result, plot))


def _run_adversary_scenario(study, args: argparse.Namespace) -> None:
    """Theorem 25's adversary over a grid (``kind = "adversary"``), as ``universal adversary`` prints it."""
    if _sweep_options(args):
        raise UserError(f"scenario {study.name!r} is not a sweep: {', '.join(_sweep_options(args))} "
                        f"apply to sweeps")
    if args.seed is not None or args.seeds is not None:
        from universal.experiment import check_seed_count

        seed = args.seed if args.seed is not None else study.seed
        count = args.seeds if args.seeds is not None else len(study.seeds)
        check_seed_count(count, "--seeds")
        study.seed, study.seeds = seed, list(range(seed + 1, seed + 1 + count))
    if plot_path(args) is not None:
        raise UserError(f"scenario {study.name!r} draws no plot (its table and fit lines are the result)")
    from universal.cli.adversary import emit
    from universal.protocols.adversary_study import run_adversary_study

    with progress_bar(len(study.cells), study.name, not machine(args)) as bar:
        rows, _ = run_adversary_study(study, progress=(lambda label: bar.begin(label)) if bar else None)
    emit(study, rows, args)
