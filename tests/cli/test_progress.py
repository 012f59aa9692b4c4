"""Progress goes to stderr whenever stderr is a terminal, even with stdout in a file (issue 22 §3:
long runs looked dead when their output was redirected)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time

import pytest

SWEEP = """\
network = "butterfly:d={d}"
problem = "h-relation:h=2"
paths = ["valiant"]
protocols = ["random-rank", "fifo"]
seeds = 2
[sweep]
d = [8, 9, 10, 11, 12]
"""


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_on_a_terminal_stderr_while_stdout_goes_to_a_file(tmp_path):
    import pty
    (tmp_path / "s.toml").write_text(SWEEP)
    master, slave = pty.openpty()
    with open(tmp_path / "table.txt", "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "universal", "scenario", "s.toml", "--out", "r.jsonl"],
                                   cwd=tmp_path, stdout=out, stderr=slave, stdin=subprocess.DEVNULL,
                                   env={**os.environ, "TERM": "xterm", "COLUMNS": "100"})
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:          # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    os.close(master)
    assert process.wait(timeout=30) == 0
    text = seen.decode("utf-8", "replace")
    assert "cells" in text
    assert "/5" in text                                   # the bar counts the sweep's five cells
    table = (tmp_path / "table.txt").read_text()
    assert "sweep over d" in table and "\x1b[" not in table   # the table went to the file, plain
