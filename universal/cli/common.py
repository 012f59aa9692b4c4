"""What every command shares: the one-line usage errors, list and number parsing, the output
options, the progress bar and the ``--plot`` check.

This module stays light (argparse and the standard library at import time): the parser of
every command is built on each run, so whatever it imports is paid by every command.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from universal.errors import UserError

if TYPE_CHECKING:
    from rich.progress import Progress


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.split()[1:]  # "universal route" -> ["route"]; top level -> []
        raise UserError(f"{message} (see: python -m universal {' '.join([*command, '--help'])})")

    def _print_message(self, message: str, file=None) -> None:
        # argparse drops a failed write of --help or --version silently (exit status 0 with nothing
        # printed, e.g. to a full disk); let it reach the CLI, which reports it in one line.
        if message:
            (file or sys.stderr).write(message)


def names(text: str) -> list[str]:
    """Split ``A,B`` on commas that are not inside a ``name:key=value,...`` parameter list.

    Parameters
    ----------
    text : str
        A comma-separated list of registered names, as given on the command line.

    Returns
    -------
    list of str

    Examples
    --------
    >>> names("torus:k=8,n=2,hypercube:d=3")
    ['torus:k=8,n=2', 'hypercube:d=3']
    >>> names("random-rank, fifo")
    ['random-rank', 'fifo']
    """
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


#: Seeds and counts on the command line are 64-bit unsigned integers.
MAX_INT = 2**64 - 1


def int_at_least(low: int, what: str):
    """An argparse type: an integer >= ``low`` and at most :data:`MAX_INT`.

    Examples
    --------
    >>> int_at_least(1, "positive")("3")
    3
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {value}")
        if value > MAX_INT:
            raise argparse.ArgumentTypeError(f"expected a {what} integer of at most 64 bits (2**64 - 1), "
                                             f"got {text[:30]}{'...' if len(text) > 30 else ''}")
        return value

    return parse


positive = int_at_least(1, "positive")
nonnegative = int_at_least(0, "non-negative")


def buffer_list(text: str) -> list[int | None]:
    """An argparse type: buffer sizes (positive integers or ``unbounded``) separated by commas.

    Examples
    --------
    >>> buffer_list("1,unbounded")
    [1, None]
    """
    return [None if part.strip() == "unbounded" else positive(part.strip()) for part in text.split(",")]


def source_queue(text: str) -> str:
    """An argparse type: a source-queue model (:mod:`universal.engine.source_queue`).

    Examples
    --------
    >>> source_queue("fifo:w=4")
    'fifo:w=4'
    """
    from universal.engine.source_queue import check_source_queue
    from universal.errors import UserError

    try:
        return check_source_queue(text)
    except UserError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive_list(text: str) -> list[int]:
    """An argparse type: one positive integer or several separated by commas.

    Examples
    --------
    >>> positive_list("1,2,4")
    [1, 2, 4]
    """
    return [positive(part.strip()) for part in text.split(",")]


def time_limit(text: str) -> float:
    """An argparse type: a positive, finite number of seconds.

    Examples
    --------
    >>> time_limit("2.5")
    2.5
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (value > 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def time_limit_option(parser: argparse.ArgumentParser, default: float | None = 10.0) -> None:
    """``--time-limit``: the solver's search limit (CP-SAT deterministic time, about seconds)."""
    parser.add_argument("--time-limit", type=time_limit, default=default, metavar="SECONDS",
                        help="limit of every optimum search in CP-SAT's deterministic time (about seconds; the "
                             "same on any machine); reached, it leaves proven bounds (default 10)")


def opt_options(parser: argparse.ArgumentParser, default_time_limit: float | None = 10.0) -> None:
    """``--opt [free]`` and ``--time-limit``: the offline optimum beside the protocols."""
    parser.add_argument("--opt", nargs="?", const="paths", choices=["paths", "free"],
                        help="also compute OPT, the fewest steps of any schedule on the same paths (columns OPT, "
                             "T/OPT); --opt free also R(G, π) with free paths. Needs OR-Tools (pip install "
                             "'.[opt]')")
    time_limit_option(parser, default_time_limit)


def output_options(parser: argparse.ArgumentParser) -> None:
    """``--json`` and ``--csv``, which exclude each other."""
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    out.add_argument("--csv", action="store_true", help="print the rows as CSV instead of a table")


def table_options(parser: argparse.ArgumentParser, columns: bool = True) -> None:
    """``--wide`` and (for routing tables) ``--columns``: which columns a table shows.

    Tables fit the terminal by folding cells, leaving out optional columns, then shortening
    names (see :mod:`universal.reporting.layout`); these options choose instead.

    Examples
    --------
    >>> parser = Parser(prog="universal route")
    >>> table_options(parser)
    >>> args = parser.parse_args(["--wide", "--columns", "T,C"])
    >>> args.wide, args.columns
    (True, ['T', 'C'])
    """
    parser.add_argument("--wide", action="store_true",
                        help="never leave a column out to fit the terminal (names are shortened instead)")
    if columns:
        parser.add_argument("--columns", type=column_list, metavar="A,B",
                            help="show only these value columns, e.g. C,D,T,T/(C+D) "
                                 "(C, D, C+D, LB, T, T/(C+D), bound, T/bound, buf, lat, rounds, disc, 'last del', "
                                 "OPT, T/OPT, R(G,pi); N in sweeps)")


def column_list(text: str) -> list[str]:
    """An argparse type: column names separated by commas, each one a known column (as the
    tables print it, or in its ASCII spelling).

    Examples
    --------
    >>> column_list("T, C+D,T/(C+D)")
    ['T', 'C+D', 'T/(C+D)']
    >>> column_list("T,R(G,pi)")
    ['T', 'R(G,π)']
    """
    from universal.ascii import spell_ascii
    from universal.reporting.columns import VALUE_COLUMNS
    known = {name: name for name in VALUE_COLUMNS} | {spell_ascii(name): name for name in VALUE_COLUMNS}
    wanted = _split_columns(text)
    unknown = [w for w in wanted if w not in known]
    if unknown or not wanted:
        raise argparse.ArgumentTypeError(f"unknown column {unknown[0]!r}; the columns are: {', '.join(VALUE_COLUMNS)}"
                                         if unknown else "expected at least one column name")
    return [known[w] for w in wanted]


def _split_columns(text: str) -> list[str]:
    """Split on the commas between names, not those inside a name's parentheses (``R(G,π)``)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    return [p for p in parts if p]


def machine(args: argparse.Namespace) -> bool:
    """Output for scripts (JSON or CSV): no tables, no progress bars."""
    return args.json or args.csv


class Bar:
    """A transient rich progress bar on stderr (see :func:`progress_bar`)."""

    def __init__(self, bar: "Progress", task) -> None:
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
def progress_bar(total: int, description: str, enabled: bool) -> Iterator[Bar | None]:
    """Yields a :class:`Bar` counting to ``total`` with the time left, or None when disabled
    (``enabled`` false, or stderr not a terminal)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield None
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)
    from rich.table import Column

    # the elapsed time ticks even while a long first unit gives no estimate of the time left yet;
    # on a narrow terminal the description and the bar give way, never the counts and times
    with Progress(TextColumn("{task.description}", table_column=Column(ratio=2, no_wrap=True, overflow="ellipsis")),
                  BarColumn(bar_width=None, table_column=Column(ratio=1)), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("left"), TimeRemainingColumn(), console=console, transient=True, expand=True) as bar:
        yield Bar(bar, bar.add_task(description, total=total))


def plot_path(args: argparse.Namespace) -> Path | None:
    """The ``--plot`` file, checked before any work is done (None without ``--plot``): a ``.png`` or
    ``.svg`` name that can be written and is no input of the run (:func:`protect_run_inputs`)."""
    if getattr(args, "plot", None) is None:
        return None
    from universal.extras import require
    from universal.reporting.plots import check_plot_path

    require("plot", "--plot")

    return check_plot_path(writable(args.plot, "plot"))


def html_path(args: argparse.Namespace) -> Path | None:
    """The ``--html`` file, checked before any work (None without ``--html``): a new name or a view
    this tool wrote, never a folder, a FIFO, another existing file or an input of the run
    (:func:`universal.reporting.html.page.check_html_path`).

    Examples
    --------
    >>> html_path(argparse.Namespace(html=None)) is None
    True
    """
    if getattr(args, "html", None) is None:
        return None
    from universal.reporting.html.page import check_html_path

    return check_html_path(args.html)


def wrote_html(path: Path, size: int) -> None:
    """Tell the user (on stderr) which HTML view was written and how large it is.

    Examples
    --------
    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     wrote_html(Path("v.html"), 44_000)
    >>> err.getvalue()
    'html: v.html (43 kB)\\n'
    """
    print(f"html: {path} ({size / 1024:,.0f} kB)", file=sys.stderr)


def protect_run_inputs(texts, base_dir: Path | None = None, files=()) -> None:
    """Declare the files this run reads (``files`` and those named in ``texts``, such as
    ``edgelist:g.edges``) so that no output of the run replaces them (refused with one line)."""
    from universal.datafiles import protect_inputs
    from universal.registry import named_files

    flat = []
    for text in texts:
        try:
            flat.extend(names(text) if isinstance(text, str) else text or [])
        except UserError:
            pass  # an empty list: the command reports it where it reads the option
    protect_inputs([*files, *named_files(flat, base_dir)])


def plotted(files: list[Path]) -> None:
    """Tell the user (on stderr) which figure files were written."""
    for f in files:
        print(f"plot: {f}", file=sys.stderr)


def command_line(args: argparse.Namespace) -> str:
    """The command line that asked for this run, as a shell would read it back.

    Examples
    --------
    >>> command_line(argparse.Namespace(argv=["route", "--network", "torus:k=4,n=2", "--problem", "a b"]))
    "universal route --network torus:k=4,n=2 --problem 'a b'"
    """
    import shlex

    return shlex.join(["universal", *getattr(args, "argv", [])])


def provenance(args: argparse.Namespace) -> dict:
    """``version`` and ``command``: what every JSON output and results file records about its making.

    Examples
    --------
    >>> sorted(provenance(argparse.Namespace(argv=["scenarios"])).items())[0]
    ('command', 'universal scenarios')
    """
    from universal import __version__

    return {"version": __version__, "command": command_line(args)}


def print_json(data: dict, args: argparse.Namespace) -> None:
    """One JSON object on stdout, indented for reading, led by :func:`provenance`."""
    import json

    print(json.dumps({**provenance(args), **data}, indent=1))


def output_file(what: str):
    """An argparse type: a file name that is not empty (checked for writing by :func:`writable`).

    Examples
    --------
    >>> output_file("plot")("a.png")
    'a.png'
    """

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"the {what} file name is empty")
        return text

    return parse


def writable(path: str | None, what: str, streams: bool = True) -> Path | None:
    """``path`` checked for writing before any work (None stays None); see
    :func:`universal.output_files.check_writable`.

    Examples
    --------
    >>> writable(None, "links") is None
    True
    """
    if path is None:
        return None
    from universal.datafiles import check_writable

    return check_writable(path, what, streams=streams)


def analysis_arguments(parser: argparse.ArgumentParser) -> None:
    """``--network``, ``--routing`` and ``--samples``: what ``load`` and ``worstcase`` analyse."""
    parser.add_argument("--network", required=True,
                        help="torus:k=K,n=N (up to 4096 nodes with the torus routings), or any network of at "
                             "most 256 nodes: mesh:k=,n=, hypercube:d=, torus:k=,n=, edgelist:FILE, and with "
                             "terminals dragonfly:p=2, fattree:k=,n=, flatfly:k=,n=, hyperx:S=4,4,T=2")
    parser.add_argument("--routing",
                        help="comma-separated: dor, val, romm, rlb, rlbth, ival, 2turn, 2turna, lp:file=PATH, "
                             "mix:dor=0.25,ival=0.75 (tori), or any path system: "
                             "shortest, random-shortest, dimension-order, valiant[:base=NAME], and with terminals "
                             "minimal, nca (fat tree) (default: dor on tori, dimension-order on meshes and "
                             "hypercubes, minimal with terminals, shortest elsewhere)")
    parser.add_argument("--samples", type=positive, default=None,
                        help="paths per pair when a path system's loads cannot be enumerated exactly "
                             "(default 200)")


def routings(args: argparse.Namespace) -> list[str]:
    """The ``--routing`` names, or the network's default routing."""
    if args.routing is not None:
        return names(args.routing)
    from universal.load_analysis import default_routing
    from universal.networks import build_network

    return [default_routing(build_network(args.network))]


def executor_options(parser: argparse.ArgumentParser, what: str = "") -> None:
    """``--executor local|dask`` and ``--scheduler ADDRESS``: where the cells of a study run."""
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help=f"{what}run cells here (local, default) or as tasks on a Dask cluster (dask)")
    parser.add_argument("--scheduler", metavar="tcp://HOST:8786", type=_scheduler_address,
                        help=f"{what}with --executor dask: a running Dask scheduler (default: a local cluster)")


def _scheduler_address(text: str) -> str:
    """An argparse type: a ``tcp://HOST:PORT`` address (checked, not contacted)."""
    from universal.executors import check_scheduler_address

    try:
        check_scheduler_address(text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def executor(args: argparse.Namespace):
    """The Dask executor that ``--executor dask [--scheduler ADDRESS]`` asks for, or None (run here)."""
    if args.executor != "dask":
        if args.scheduler is not None:
            raise UserError("--scheduler applies to --executor dask")
        return None
    from universal.executors import DaskExecutor

    return DaskExecutor(args.scheduler, workers=args.jobs)
