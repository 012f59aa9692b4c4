"""Where a sweep's cells run: on a Dask cluster, one task per cell (SPEC §8: sweeps).

:func:`universal.sweep.run_sweep` runs cells in this process or in a local process pool; given a
:class:`DaskExecutor` it submits every pending cell as one task to a Dask ``distributed``
scheduler (a cluster of other machines, or a ``LocalCluster`` started here) and hands each result
back as it finishes, so the results file, progress bar and ``--resume`` behave exactly as with
local processes. A cell's rows depend only on the cell and its seeds, so they are identical
whichever executor ran them.

Dask is an optional dependency (``pip install '.[distributed]'``), imported only when a Dask
executor runs.
"""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from universal.errors import UserError

#: Seconds to wait for a scheduler to answer before giving up with an error.
CONNECT_TIMEOUT = 3


@dataclass
class DaskExecutor:
    """Run tasks on a Dask cluster.

    Attributes
    ----------
    scheduler : str or None
        Address of a running scheduler (``tcp://HOST:8786``); None starts a ``LocalCluster``.
    workers : int
        Workers of the local cluster (one thread each; ignored with ``scheduler``).
    processes : bool
        Local cluster workers as processes (True, the default: cells run in parallel) or as
        threads of this process (fast to start; what the tests use).

    Examples
    --------
    >>> DaskExecutor("tcp://127.0.0.1:8786").describe()
    'Dask scheduler tcp://127.0.0.1:8786'

    References
    ----------
    Dask distributed documentation, "Quickstart" and "LocalCluster" (dask.org).
    """

    scheduler: str | None = None
    workers: int = 1
    processes: bool = True
    _client: Any = field(default=None, init=False, repr=False)
    _cluster: Any = field(default=None, init=False, repr=False)

    def describe(self) -> str:
        """How the executor reads in messages."""
        if self.scheduler:
            return f"Dask scheduler {self.scheduler}"
        return f"local Dask cluster of {self.workers} worker{'s' if self.workers != 1 else ''}"

    def connect(self) -> None:
        """Reach the scheduler (or start the local cluster) now, before any work is handed out.

        Raises
        ------
        UserError
            If Dask is not installed or the scheduler cannot be reached.
        """
        if self._client is not None:
            return
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UserError("--executor dask needs Dask distributed: pip install 'universal[distributed]'") from None
        if self.scheduler:
            self._client = _connect(Client, self.scheduler)
        else:
            self._cluster = self._local_cluster(LocalCluster)
            self._client = Client(self._cluster)

    def close(self) -> None:
        """Disconnect, and stop the local cluster if this executor started one."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()

    def run(self, function: Callable, arguments: Sequence[tuple], finished: Callable[[Any], None]) -> None:
        """Call ``function(*args)`` for every tuple of ``arguments`` on the cluster, then disconnect.

        ``finished`` receives each result in this process as soon as its task completes (in
        completion order). An exception in a task, or an interruption here, cancels the rest.

        Raises
        ------
        UserError
            If Dask is not installed or the scheduler cannot be reached.
        """
        from distributed import as_completed

        try:
            self.connect()
            futures = [self._client.submit(function, *args, pure=False) for args in arguments]
            try:
                for future in as_completed(futures):
                    finished(future.result())
            except BaseException:
                self._client.cancel(futures)
                raise
        finally:
            self.close()

    def _local_cluster(self, cluster_class: type):
        """A LocalCluster whose worker processes leave Ctrl-C to this process.

        Ctrl-C reaches the whole process group; workers that took it too would die printing
        tracebacks while this process stops them in order (and keeps the finished cells). An
        ignored SIGINT is inherited by the worker processes started here; Dask's own log lines
        are kept to errors for the same reason.
        """
        import logging

        options = dict(n_workers=self.workers, threads_per_worker=1, processes=self.processes,
                       dashboard_address=None, silence_logs=logging.ERROR)
        if not self.processes or threading.current_thread() is not threading.main_thread():
            return cluster_class(**options)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return cluster_class(**options)
        finally:
            signal.signal(signal.SIGINT, previous)


def _connect(client_class: type, address: str):
    """A client of the scheduler at ``address``, or one ``error:`` line within a few seconds."""
    if "://" not in address:
        raise UserError(f"Dask scheduler address {address!r} should look like tcp://HOST:8786")
    try:
        return client_class(address, timeout=f"{CONNECT_TIMEOUT}s")
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"cannot reach the Dask scheduler at {address} within {CONNECT_TIMEOUT} s: {reason}") from None
