"""Ctrl-C and SIGTERM: both end a run the same way, through ``KeyboardInterrupt``, so that every
``finally`` runs and no temporary file is left behind (:func:`universal.datafiles.write_atomically`
removes its own on any exception); the CLI turns either into one line and exit status 130 (143
for SIGTERM)."""

from __future__ import annotations

import signal
import threading


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every ``finally`` and temporary-file cleanup runs."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


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
    >>> signal.getsignal(signal.SIGTERM) is _raise_terminated
    True
    >>> restore_handlers(previous)
    """
    if threading.current_thread() is not threading.main_thread():
        return {}
    wanted = {signal.SIGINT: signal.default_int_handler}
    if hasattr(signal, "SIGTERM"):
        wanted[signal.SIGTERM] = _raise_terminated
    return {signum: signal.signal(signum, handler) for signum, handler in wanted.items()}


def restore_handlers(previous: dict) -> None:
    """Put back the handlers :func:`install_stop_handlers` replaced."""
    for signum, handler in previous.items():
        if handler is not None:
            signal.signal(signum, handler)
