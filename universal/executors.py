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
            from universal.extras import install_hint
            raise UserError(f"--executor dask needs Dask distributed, which is not installed: "
                            f"{install_hint('distributed')}") from None
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


#: The address schemes accepted for ``--scheduler``: ``tls://`` needs certificates and ``ucx://``
#: the UCX library, neither of which this tool sets up.
SCHEMES = ("tcp",)


def check_scheduler_address(address: str) -> tuple[str, int]:
    """The host and port of a Dask scheduler address ``tcp://HOST:PORT``, checked without
    contacting it.

    Parameters
    ----------
    address : str
        As given to ``--scheduler``; IPv6 hosts in brackets (``tcp://[::1]:8786``).

    Returns
    -------
    (str, int)
        Host and port.

    Raises
    ------
    UserError
        For an empty address, one without ``://``, a scheme other than :data:`SCHEMES`, or a
        missing or invalid host or port.

    Examples
    --------
    >>> check_scheduler_address("tcp://10.0.0.5:8786")
    ('10.0.0.5', 8786)
    >>> check_scheduler_address("tls://10.0.0.5:8786")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    universal.errors.UserError: Dask scheduler address 'tls://10.0.0.5:8786': the scheme tls:// is not supported; ...

    References
    ----------
    Dask distributed documentation, "Communications: protocol and addresses" (dask.org).
    """
    from urllib.parse import urlsplit

    if not address.strip():
        raise UserError("the Dask scheduler address is empty; give tcp://HOST:8786 (or leave out --scheduler "
                        "to start a local cluster)")
    if "://" not in address:
        raise UserError(f"Dask scheduler address {address!r} should look like tcp://HOST:8786")
    scheme = address.split("://", 1)[0].lower()
    if scheme not in SCHEMES:
        raise UserError(f"Dask scheduler address {address!r}: the scheme {scheme}:// is not supported; give "
                        f"tcp://HOST:PORT (tls:// needs certificates and ucx:// the UCX library, which this tool "
                        f"does not set up)")
    try:
        parts = urlsplit(address)
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None or port == 0 or parts.path not in ("", "/"):
        raise UserError(f"Dask scheduler address {address!r} should look like tcp://HOST:8786 (a host and a port "
                        f"from 1 to 65535)")
    return host, port


#: Largest first message accepted from a scheduler when it is probed (its handshake is a few
#: hundred bytes); anything larger is not a Dask scheduler talking.
_HANDSHAKE_LIMIT = 1 << 24


def probe_scheduler(address: str, timeout: float | None = None) -> None:
    """Check within ``timeout`` seconds that a Dask scheduler answers at ``address``.

    A scheduler sends its handshake as soon as it accepts a connection, before it reads
    anything: a message led by its length, an unsigned 64-bit integer. Dask's client waits for
    that handshake without a time limit and trusts the length, so a server that accepts and
    never answers would hang it, and a web server (whose ``HTTP/1.1`` would be read as a length
    of exabytes) would end in a MemoryError. This probe opens one plain connection, reads the
    first 8 bytes with a deadline, and closes it.

    Parameters
    ----------
    address : str
        ``tcp://HOST:PORT`` (see :func:`check_scheduler_address`).
    timeout : float, optional
        Seconds for the connection and the first bytes together (default :data:`CONNECT_TIMEOUT`).

    Raises
    ------
    UserError
        If nothing listens there, or what listens does not answer like a Dask scheduler in time.

    Examples
    --------
    >>> probe_scheduler("tcp://127.0.0.1:9", timeout=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    universal.errors.UserError: cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 1 s: ...

    References
    ----------
    Dask distributed, ``distributed.comm.core.connect`` and ``distributed.comm.tcp.TCP.read``
    (the handshake and the frame-length header).
    """
    import socket
    import struct
    import time

    host, port = check_scheduler_address(address)
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise UserError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s: {reason}") from None
    first = b""
    with sock:
        try:
            while len(first) < 8:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = sock.recv(8 - len(first))
                if not chunk:
                    break
                first += chunk
        except socket.timeout:
            raise UserError(f"{address} accepted the connection but sent no Dask handshake within {timeout:g} s: "
                            f"is a Dask scheduler listening there (usually port 8786)?") from None
        except OSError:
            pass  # reset by the peer: judged by what arrived before
    if not first:
        raise UserError(f"{address} accepted the connection and closed it without a Dask handshake: is a Dask "
                        f"scheduler listening there (usually port 8786)?")
    (length,) = struct.unpack("Q", first.ljust(8, b"\0"))
    if len(first) < 8 or not 0 < length <= _HANDSHAKE_LIMIT:
        shown = first.decode("ascii", "replace").strip() or "nothing"
        raise UserError(f"{address} answers, but not as a Dask scheduler (its first bytes: {shown!r}); "
                        f"the scheduler usually listens on port 8786, its dashboard (a web page) on 8787")


def _connect(client_class: type, address: str):
    """A client of the scheduler at ``address``, or one ``error:`` line within a few seconds."""
    probe_scheduler(address)
    try:
        return client_class(address, timeout=f"{CONNECT_TIMEOUT}s")
    except (OSError, TimeoutError, ValueError, TypeError, MemoryError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"cannot reach the Dask scheduler at {address} within {CONNECT_TIMEOUT} s: {reason}") from None
