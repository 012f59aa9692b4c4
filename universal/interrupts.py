"""Ctrl-C and SIGTERM: both end a run the same way, through ``KeyboardInterrupt``, so that every
``finally`` runs and no temporary file is left behind (:func:`universal.output_files.write_atomically`
removes its own on any exception); the CLI turns either into one line and exit status 130 (143
for SIGTERM).

The exception is never raised where it would leave Python half-done: while a module is being
imported (a module interrupted half-way can swallow the exception or make the interpreter exit
by signal instead of with the status the CLI chose) or inside :func:`deferred` (e.g. while
worker processes are forked). There the signal is noted and sent again 20 ms later, until it
lands at a safe point, which is within a few milliseconds of the import or section ending.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Iterator

_deferring = 0


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every ``finally`` and temporary-file cleanup runs."""


def _stop(signum, frame) -> None:
    """The handler of SIGINT and SIGTERM in the main process."""
    if _deferring or _importing(frame):
        timer = threading.Timer(0.02, os.kill, (os.getpid(), signum))
        timer.daemon = True
        timer.start()
        return
    raise Terminated() if signum == getattr(signal, "SIGTERM", None) else KeyboardInterrupt()


def _importing(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


@contextmanager
def deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back while the block runs; they take effect right after it.

    Examples
    --------
    >>> with deferred():
    ...     pass
    """
    global _deferring
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1


def install_stop_handlers() -> dict:
    """Make Ctrl-C raise ``KeyboardInterrupt`` and SIGTERM raise :class:`Terminated`; does nothing
    outside the main thread (only it can install handlers).

    Returns
    -------
    dict
        The previous handlers, for :func:`restore_handlers`.

    Examples
    --------
    >>> previous = install_stop_handlers()
    >>> signal.getsignal(signal.SIGTERM) is _stop
    True
    >>> restore_handlers(previous)
    """
    if threading.current_thread() is not threading.main_thread():
        return {}
    wanted = {signal.SIGINT: _stop}
    if hasattr(signal, "SIGTERM"):
        wanted[signal.SIGTERM] = _stop
    return {signum: signal.signal(signum, handler) for signum, handler in wanted.items()}


def restore_handlers(previous: dict) -> None:
    """Put back the handlers :func:`install_stop_handlers` replaced."""
    for signum, handler in previous.items():
        if handler is not None:
            signal.signal(signum, handler)
