"""``universal adversary``: Theorem 25's adversary (survey §5) against a deterministic
non-predictive protocol on the butterfly, beside random rank with fresh ranks."""

from __future__ import annotations

import argparse
import sys

from universal.cli.common import (machine, names, nonnegative, output_options, positive, positive_list, print_json,
                                  progress_bar, protect_run_inputs, table_options, writable)
from universal.errors import UserError

HELP = "Theorem 25's adversary: a problem of congestion C on BF(D) that a deterministic protocol needs ~C·D/2 steps for"


def add_arguments(ad: argparse.ArgumentParser) -> None:
    ad.add_argument("--network", required=True, action="append",
                    help="butterfly:d=D (repeat the option for several dimensions)")
    ad.add_argument("--protocol", required=True,
                    help="Q, comma-separated for several: fifo, farthest-to-go, nearest-to-go, longest-in-system, "
                         "random-rank or growing-rank (ranks fixed by --seed)")
    ad.add_argument("--congestion", required=True, type=positive_list, help="C (several: 2,4,8)")
    ad.add_argument("--seeds", type=positive, default=5,
                    help="runs of random rank with fresh ranks, seeds --seed + 1 onwards (default 5)")
    ad.add_argument("--seed", type=nonnegative, default=0, help="seed of Q's fixed ranks (default 0)")
    ad.add_argument("--save", metavar="FILE",
                    help="write the problem as a pairs file (route --problem pairs:file=FILE); one D, C and Q only")
    output_options(ad)
    table_options(ad, columns=False)


def study_from(args: argparse.Namespace):
    """The :class:`AdversaryStudy` the options ask for (checked)."""
    from universal.experiment import check_seed_count
    from universal.networks import build_network
    from universal.protocols.adversary_study import AdversaryStudy

    check_seed_count(args.seeds, "--seeds")
    dims = []
    for text in args.network:
        net = build_network(text)
        if net.kind != "butterfly":
            raise UserError(f"Theorem 25's adversary runs on the butterfly BF(D) (butterfly:d=D), not {net.name}")
        dims.append(int(net.depth))
    study = AdversaryStudy(dims, list(args.congestion), names(args.protocol),
                           seeds=list(range(args.seed + 1, args.seed + 1 + args.seeds)), seed=args.seed)
    study.check()
    return study


def run(args: argparse.Namespace) -> None:
    protect_run_inputs([args.network])
    study = study_from(args)
    save = writable(args.save, "problem")
    if save is not None and len(study.cells) > 1:
        raise UserError("--save writes one problem: give one network, one congestion and one protocol")
    from universal.protocols.adversary_study import run_adversary_study

    with progress_bar(len(study.cells), "adversary", not machine(args)) as bar:
        rows, problems = run_adversary_study(study, progress=(lambda label: bar.begin(label)) if bar else None,
                                             keep=save is not None)
    if save is not None:
        from universal.datafiles import write_atomically

        hard, row = problems[0], rows[0]
        header = (f"Theorem 25's adversary against {row.protocol} on {row.network}: C = {row.C}, D = {row.D}, "
                  f"{row.protocol} takes T = {row.T} (seed {study.seed})\n"
                  f"python -m universal route --network {row.network} --problem pairs:file=FILE "
                  f"--paths dimension-order --protocols {row.protocol}")
        print(f"problem: {write_atomically(save, hard.pairs_text(header))}", file=sys.stderr)
    emit(study, rows, args)


def emit(study, rows, args: argparse.Namespace) -> None:
    """Print the rows as a table with the fit lines, or as ``--json`` / ``--csv``."""
    from universal.reporting.adversary import adversary_json, print_adversary

    if args.json:
        print_json(adversary_json(study, rows), args)
    elif args.csv:
        from universal.reporting.csvout import rows_to_csv

        print(rows_to_csv([{k: v for k, v in r.to_json().items() if k != "seeds"} for r in rows]), end="")
    else:
        from universal.reporting import make_console

        print_adversary(make_console(), rows, f"Theorem 25's adversary ({study.name})" if study.name != "adversary"
                        else "Theorem 25's adversary", wide=getattr(args, "wide", False))
