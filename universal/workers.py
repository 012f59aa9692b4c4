"""Worker processes that never outlive the run and never see Ctrl-C.

A sweep's cells run in local worker processes (``--jobs N``). The parent alone decides when to
stop: the workers ignore SIGINT (a Ctrl-C in the terminal reaches the whole process group, and
only the parent may turn it into "interrupted"), they are killed as soon as the parent stops
waiting for them (a result, an error or an interruption), and on Linux the kernel kills them
when the parent dies for any reason, SIGKILL included (``PR_SET_PDEATHSIG``); elsewhere each
worker polls its parent and leaves when it is gone.

Each worker talks to the parent over its own pipe, one task at a time, so no helper threads or
shared queues are involved: an interruption at any moment leaves nothing half-started to join.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Iterable, Iterator

from universal.errors import UserError
from universal.interrupts import deferred

#: The signals the parent turns into an interruption; blocked while workers are forked so that a
#: worker never runs the parent's handlers.
STOP_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s)


@contextmanager
def _stop_signals_blocked() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back (they take effect on leaving): the signal mask keeps them from
    a forked worker before it ignores them, :func:`universal.interrupts.deferred` keeps the
    parent's handler from raising half-way through a fork."""
    with deferred():
        if not hasattr(signal, "pthread_sigmask"):
            yield
            return
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class WorkerDied(UserError):
    """A worker process ended without answering (killed, out of memory, a crash in C code)."""

    def __init__(self, message: str, exitcode: int | None) -> None:
        super().__init__(message)
        self.exitcode = exitcode


def _die_with_parent(parent: int) -> None:
    """Ask the kernel to kill this process when the parent ends (Linux); poll the parent elsewhere."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            raise OSError
    except (OSError, AttributeError, TypeError):
        def watch() -> None:
            while os.getppid() == parent:
                threading.Event().wait(0.5)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _worker(connection: Connection, parent: int) -> None:
    """Run tasks ``(function, args)`` from ``connection`` until it sends None or closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    _die_with_parent(parent)
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        function, args = task
        try:
            reply = ("ok", function(*args))
        except BaseException as exc:  # sent to the parent, which raises it there
            reply = ("error", exc)
        try:
            connection.send(reply)
        except (OSError, ValueError):
            return
        except Exception as exc:  # an unpicklable result or exception
            connection.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))


def _context() -> multiprocessing.context.BaseContext:
    # fork starts a worker in milliseconds and needs no re-import; spawn where fork does not exist.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def run_in_processes(function: Callable[..., Any], tasks: Iterable[tuple], jobs: int) -> Iterator[Any]:
    """Yield ``function(*args)`` for every ``args`` in ``tasks``, computed by ``jobs`` worker
    processes, in the order they finish.

    The workers ignore Ctrl-C; when the caller stops iterating (it got what it needed, an error
    was raised in a worker, or Ctrl-C / SIGTERM reached the parent) every worker is killed before
    this generator returns, so no process outlives the call.

    Parameters
    ----------
    function : callable
        A top-level function (it is sent to the workers).
    tasks : iterable of tuple
        The arguments of each call.
    jobs : int
        Number of worker processes (at most one per task).

    Yields
    ------
    object
        Each call's result, as it finishes.

    Raises
    ------
    Exception
        The first exception a call raised (re-raised in the parent).

    Examples
    --------
    >>> sorted(run_in_processes(pow, [(2, 3), (3, 2), (5, 1)], jobs=2))
    [5, 8, 9]
    """
    queue = list(tasks)
    queue.reverse()  # pop() from the end hands tasks out in the order given
    workers: dict[Connection, multiprocessing.process.BaseProcess] = {}
    try:
        with _stop_signals_blocked():  # the workers start with these blocked, then ignore SIGINT
            context, parent = _context(), os.getpid()
            for _ in range(min(jobs, len(queue))):
                mine, theirs = context.Pipe()
                process = context.Process(target=_worker, args=(theirs, parent), daemon=True)
                process.start()
                theirs.close()
                workers[mine] = process
        for connection in list(workers):
            connection.send((function, queue.pop()))
        busy = set(workers)
        while busy:
            for connection in wait(list(busy)):
                try:
                    status, value = connection.recv()
                except (EOFError, OSError):
                    code = workers[connection].exitcode
                    raise WorkerDied(f"a worker process ended unexpectedly (exit code {code}); the cells "
                                     f"finished so far are kept, run again with --resume", code) from None
                if status == "error":
                    raise value
                if queue:
                    connection.send((function, queue.pop()))
                else:
                    busy.discard(connection)
                yield value
    finally:
        _stop(workers)


def _stop(workers: dict) -> None:
    """Kill every worker and reap it (the parent decides; a worker holds nothing worth saving)."""
    with _stop_signals_blocked():
        for connection, process in workers.items():
            if process.is_alive():
                process.kill()
            connection.close()
        for process in workers.values():
            process.join(timeout=5)
