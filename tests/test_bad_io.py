"""Bad input that is not in the arguments (issue 22, section 2): standard output that is closed,
full or a closed pipe; Dask schedulers that do not answer or answer the wrong protocol; outputs
that are FIFOs, folders or devices; routing files named inside scenarios; repeated loads; and
Ctrl-C or SIGTERM during a long HiGHS solve.

One test per class. Each refusal is checked the same way (:func:`tests.test_bad_inputs.assert_refused`
in-process, :func:`assert_one_line` for a subprocess): exactly one ``error:`` line on stderr, no
traceback, the expected status, the folder unchanged, and within 2 s where no work is needed.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.test_bad_inputs import assert_refused, snapshot

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

SCENARIO = ('network = "hypercube:d=2"\nproblem = "permutation:random"\npaths = "dimension-order"\n'
            'protocols = "fifo"\n')

#: One small run of every command (each a second or less), and the two that only print.
EVERY_COMMAND = {
    "route": ["route", "--network", "hypercube:d=3", "--problem", "permutation:random"],
    "load": ["load", "--network", "torus:k=4,n=2"],
    "worstcase": ["worstcase", "--network", "torus:k=3,n=2", "--routing", "dor"],
    "openloop": ["openloop", "--network", "torus:k=4,n=2", "--routing", "dor", "--traffic", "uniform",
                 "--loads", "0.2"],
    "design": ["design", "--network", "torus:k=3,n=2"],
    "scenario": ["scenario", "s.toml"],
    "scenarios": ["scenarios"],
    "version": ["--version"],
    "help": ["route", "--help"],
}


def start(folder: Path, argv: list[str], stdout) -> subprocess.Popen:
    """``python -m universal ARGV`` in ``folder`` with the given standard output (None: closed)."""
    close = stdout is None
    return subprocess.Popen([sys.executable, "-m", "universal", *argv], cwd=folder, env=ENV, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL if close else stdout,
                            stderr=subprocess.PIPE, preexec_fn=(lambda: os.close(1)) if close else None)


def assert_one_line(process: subprocess.Popen, status: int, fragment: str = "", seconds: float = 60) -> str:
    """The process ends with ``status`` and at most one stderr line, which has ``fragment`` (or,
    for ``fragment == ""``, with nothing on stderr at all)."""
    _, err = process.communicate(timeout=seconds)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert process.returncode == status, (process.returncode, err)
    lines = err.splitlines()
    if fragment:
        assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], err
    else:
        assert lines == [], err
    return err


# --------------------------------------------------------------------------- standard output


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO)
    return tmp_path


def run_every_command(folder: Path, stdout) -> dict[str, subprocess.Popen]:
    """Every command at once (they are small), each with the standard output ``stdout()`` gives."""
    return {name: start(folder, argv, stdout()) for name, argv in EVERY_COMMAND.items()}


def test_a_closed_standard_output_is_refused_before_any_work(folder):
    """``>&-``: Python has no sys.stdout; one line and status 1, before the work (a second or two)."""
    began = time.monotonic()
    for name, process in run_every_command(folder, lambda: None).items():
        assert_one_line(process, 1, "cannot write to standard output: it is closed")
    assert time.monotonic() - began < 2 * len(EVERY_COMMAND)
    assert sorted(p.name for p in folder.iterdir()) == ["s.toml"]


def test_a_full_standard_output_is_one_line_and_status_1(folder):
    """``> /dev/full``: the write or the final flush fails with ENOSPC, --version and --help too."""
    with open("/dev/full", "w") as full:
        processes = run_every_command(folder, lambda: full)
        for process in processes.values():
            assert_one_line(process, 1, "cannot write to standard output: No space left on device")


def test_a_closed_pipe_ends_quietly_with_the_status_of_sigpipe(folder):
    """A reader that went away before the first byte: no line at all, status 141 (128 + SIGPIPE),
    as a shell reports for ``yes | head -1``."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        processes = run_every_command(folder, lambda: write_end)
    finally:
        os.close(write_end)
    for process in processes.values():
        assert_one_line(process, 141)


# --------------------------------------------------------------------------- Dask schedulers

SWEEP = ('network = "hypercube:d={d}"\nproblem = "permutation:random"\npaths = "dimension-order"\n'
         'protocols = "fifo"\nseeds = 1\n[sweep]\nd = [2, 3]\n')


def serve(answer: bytes | None, after_request: bool = False) -> tuple[str, socket.socket]:
    """A TCP server in a thread that accepts every connection and then says nothing (``answer``
    None) or sends ``answer``, at once or after reading the client's first bytes."""
    server = socket.create_server(("127.0.0.1", 0))
    held = []

    def loop() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return  # the test closed the server
            held.append(conn)
            try:
                if after_request:
                    conn.recv(65536)
                if answer is not None:
                    conn.sendall(answer)
            except OSError:
                pass

    threading.Thread(target=loop, daemon=True).start()
    return f"tcp://127.0.0.1:{server.getsockname()[1]}", server


HTTP = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello"


@pytest.mark.parametrize("answer, after_request", [(None, False), (HTTP, False), (HTTP, True), (b"x", False)],
                         ids=["silent", "web server", "web server after a request", "one byte"])
def test_a_scheduler_that_does_not_answer_like_dask_is_one_line_within_the_timeout(
        tmp_path, capsys, monkeypatch, answer, after_request):
    pytest.importorskip("distributed")
    import universal.executors

    monkeypatch.setattr(universal.executors, "CONNECT_TIMEOUT", 1)
    (tmp_path / "sw.toml").write_text(SWEEP)
    address, server = serve(answer, after_request)
    began = time.monotonic()
    try:
        line = assert_refused(["scenario", "sw.toml", "--executor", "dask", "--scheduler", address], tmp_path, capsys)
    finally:
        server.close()
    assert time.monotonic() - began < 5  # the 1 s deadline, Dask's import and the parsing
    assert address in line and ("no Dask handshake" in line or "not as a Dask scheduler" in line), line


@pytest.mark.parametrize("address, fragment", [
    ("", "address is empty"),
    ("   ", "address is empty"),
    ("tls://127.0.0.1:8786", "tls:// is not supported"),
    ("ucx://127.0.0.1:8786", "ucx:// is not supported"),
    ("tcp://127.0.0.1", "a host and a port"),
    ("tcp://127.0.0.1:65536", "a host and a port"),
    ("tcp://:8786", "a host and a port"),
    ("localhost:8786", "should look like tcp://HOST:8786"),
])
def test_a_scheduler_address_that_cannot_work_is_refused_before_anything_starts(tmp_path, capsys, address,
                                                                                fragment):
    (tmp_path / "sw.toml").write_text(SWEEP)
    began = time.monotonic()
    line = assert_refused(["scenario", "sw.toml", "--executor", "dask", "--scheduler", address], tmp_path, capsys)
    assert time.monotonic() - began < 2 and fragment in line, line
    if address.startswith(("tls", "ucx")):
        assert "give tcp://HOST:PORT" in line  # names the scheme that works
