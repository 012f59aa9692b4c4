"""Command line: a thin layer over the Python API (SPEC §8), one small module per command.

    python -m universal scenario NAME_OR_FILE [--seeds N] [--seed S] [--json | --csv] [--plot FILE]
        [--out FILE] [--resume | --overwrite] [--jobs N] [--executor local|dask] [--scheduler tcp://HOST:8786]
    python -m universal scenarios
    python -m universal route --network SPEC --problem SPEC --paths A,B --protocols X,Y [--seeds N]
        [--bandwidth B[,B2...]] [--buffer b[,b2...]] [--analyze] [--json | --csv] [--plot FILE] [--trace]
    python -m universal load --network NET --routing A,B --traffic X,Y [--seed S] [--samples M]
        [--json | --csv] [--plot FILE]
    python -m universal worstcase --network NET --routing A,B [--show-permutation]
        [--permutation-file PATH] [--samples M] [--json | --csv] [--plot FILE]
    python -m universal design --network torus:k=K,n=N [--objective capacity|worst-case|average-case]
        [--then locality] [--paths all|minimal|2turn] [--locality L] [--save FILE] [--tradeoff N]
        [--plot FILE] [--samples M] [--seed S] [--json | --csv]
    python -m universal optimum --network SPEC --problem SPEC [--paths NAME | --paths free] [--bandwidth B]
        [--seed S] [--time-limit SECONDS] [--schedule] [--json | --csv]
    python -m universal routing-number --network SPEC [--bandwidth B] [--time-limit SECONDS] [--schedule]
        [--json | --csv]

``route`` also takes ``--opt [free]`` and ``--time-limit SECONDS``.

Every command is a module of this package with ``HELP``, ``add_arguments(parser)`` and
``run(args)``, listed once in :data:`COMMANDS`: adding a command is one module and one entry.
Command modules import the heavy parts of the library (scipy, networkx, matplotlib) inside
``run``, so that building the parser costs nothing and each command loads only what it uses
(``tests/cli/test_imports.py`` checks this).

    python -m universal openloop --network NET --routing A,B --traffic X,Y (--loads a:b:step | --saturation)
        [--injection bernoulli|poisson|on-off] [--units capacity|packets] [--priority age,growing-rank] [--seeds N]
        [--json | --csv] [--plot FILE] [--out FILE] [--resume | --overwrite] [--jobs N]

    python -m universal adversary --network butterfly:d=D --protocol Q --congestion C[,C2...] [--seeds N]
        [--seed S] [--save FILE] [--json | --csv]

    python -m universal --version

User errors print one line, ``error: ...``, on stderr and exit with status 2; a standard output
that cannot be written (a full disk) is one ``error:`` line and status 1 (a closed one, ``>&-``,
is refused so before any work); a reader that goes away (``| head``) ends the run quietly with
status 141 (128 + SIGPIPE); Ctrl-C is one line, ``interrupted``, and status 130 (SIGTERM:
``terminated``, 143), with every temporary file removed.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import io
import os
import sys
from typing import Sequence

from universal.cli.common import Parser
from universal.datafiles import forget_inputs, release_streams
from universal.errors import UserError
from universal.interrupts import Terminated, install_stop_handlers, restore_handlers
from universal.ascii import install_ascii_fallback

#: The commands, in the order ``--help`` lists them: name -> module of this package.
COMMANDS: dict[str, str] = {
    "scenario": "scenario",
    "scenarios": "scenarios",
    "route": "route",
    "load": "load",
    "worstcase": "worstcase",
    "design": "design",
    "openloop": "openloop",
    "optimum": "optimum",
    "routing-number": "routing_number",
    "adversary": "adversary",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command.

    Returns
    -------
    argparse.ArgumentParser
        Parsed arguments carry ``command`` (the name) and ``run`` (the command's function).

    Examples
    --------
    >>> args = build_parser().parse_args(["route", "--network", "hypercube:d=3", "--problem", "permutation:random"])
    >>> args.command, args.protocols
    ('route', 'random-rank')
    """
    from universal import __version__

    parser = Parser(prog="universal", description="Packet-level emulator for universal routing.")
    parser.add_argument("--version", action="version", version=f"universal {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"universal.cli.{module_name}")
        command = sub.add_parser(name, help=module.HELP)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 1 standard output could not be written, 2 user
    error, 130 interrupted by Ctrl-C, 141 the reader of standard output went away, 143 SIGTERM).

    Examples
    --------
    >>> main(["route", "--network", "nowhere:d=3", "--problem", "permutation:random"])
    2
    """
    previous = install_stop_handlers()  # before any work: SIGTERM then cleans up like Ctrl-C
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _run(argv)
    finally:
        forget_inputs()
        release_streams()
        restore_handlers(previous)


def _run(argv: Sequence[str] | None) -> int:
    try:
        _check_stdout_open()  # every command's answer goes there: refuse before any work
        install_ascii_fallback()  # an ASCII-only stdout gets Cbar for C-bar instead of a traceback
        try:
            args = build_parser().parse_args(argv)
        except SystemExit:  # --help or --version printed its text and asks to leave, as argparse does
            sys.stdout.flush()  # ... once the text is out: a full disk is reported below instead
            raise
        args.argv = argv                      # recorded in JSON outputs and results files
        args.run(args)
        sys.stdout.flush()  # a full disk is reported here, not as a traceback at exit
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print("terminated" if isinstance(exc, Terminated) else "interrupted", file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, with the status a shell reports for a
        # Unix tool that a closed pipe stopped (128 + SIGPIPE), so that `set -o pipefail` sees it.
        _discard_stdout()
        return BROKEN_PIPE
    except OSError as exc:
        if not _stdout_failed(exc):
            raise
        _discard_stdout()
        print(f"error: cannot write to standard output: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


#: Exit status after the reader of standard output went away: 128 + SIGPIPE (13), as a shell
#: reports ``yes | head -1``.
BROKEN_PIPE = 141


def _check_stdout_open() -> None:
    """Refuse to start when standard output is closed (``>&-``): Python then has no ``sys.stdout``
    and every answer would be lost. Raised as an OSError with no file name, so it becomes the
    usual one line about standard output and status 1."""
    stream = sys.stdout
    try:
        if stream is None:
            raise OSError(errno.EBADF, "it is closed")
        os.fstat(stream.fileno())
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return  # not a real file (a test's capture): nothing to check
    except OSError as exc:
        sys.stdout = open(os.devnull, "w")  # nothing will be written; keep print() and the exit quiet
        raise OSError(errno.EBADF, "it is closed" if exc.errno == errno.EBADF else exc.strerror) from None


def _stdout_failed(exc: OSError) -> bool:
    """Whether ``exc`` is a failed write to standard output (a full or failing device): the library
    turns every failure on a named file into a UserError, so an unnamed one is a stream's."""
    return exc.filename is None and exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG,
                                                  errno.ENXIO, errno.EROFS, errno.EBADF, errno.EINVAL)


def _discard_stdout() -> None:
    """Point standard output at the null device, so the unwritten rest is dropped silently at exit."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (captured by a test)
        pass


__all__ = ["COMMANDS", "build_parser", "main"]
