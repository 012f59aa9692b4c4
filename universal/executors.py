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

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from universal.errors import UserError

#: Seconds to wait for a scheduler to answer before giving up with an error.
CONNECT_TIMEOUT = 5


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

    def describe(self) -> str:
        """How the executor reads in messages."""
        if self.scheduler:
            return f"Dask scheduler {self.scheduler}"
        return f"local Dask cluster of {self.workers} worker{'s' if self.workers != 1 else ''}"

    def run(self, function: Callable, arguments: Sequence[tuple], finished: Callable[[Any], None]) -> None:
        """Call ``function(*args)`` for every tuple of ``arguments`` on the cluster.

        ``finished`` receives each result in this process as soon as its task completes (in
        completion order). An exception in a task, or an interruption here, cancels the rest.

        Raises
        ------
        UserError
            If Dask is not installed or the scheduler cannot be reached.
        """
        try:
            from distributed import Client, LocalCluster, as_completed
        except ImportError:
            raise UserError("--executor dask needs Dask distributed: pip install 'universal[distributed]'") from None
        cluster = None
        try:
            if self.scheduler:
                client = _connect(Client, self.scheduler)
            else:
                cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=self.processes,
                                       dashboard_address=None)
                client = Client(cluster)
            with client:
                futures = [client.submit(function, *args, pure=False) for args in arguments]
                try:
                    for future in as_completed(futures):
                        finished(future.result())
                except BaseException:
                    client.cancel(futures)
                    raise
        finally:
            if cluster is not None:
                cluster.close()


def _connect(client_class: type, address: str):
    """A client of the scheduler at ``address``, or one ``error:`` line within a few seconds."""
    if "://" not in address:
        raise UserError(f"Dask scheduler address {address!r} should look like tcp://HOST:8786")
    try:
        return client_class(address, timeout=f"{CONNECT_TIMEOUT}s")
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"cannot reach the Dask scheduler at {address} within {CONNECT_TIMEOUT} s: {reason}") from None
