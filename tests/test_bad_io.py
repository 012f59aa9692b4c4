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
