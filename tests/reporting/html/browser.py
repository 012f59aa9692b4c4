"""Opening an HTML view in headless Chromium (Debian's ``chromium`` package) from a test.

The page runs its own check when its address ends in ``#selftest``: it steps to the last step
and writes a JSON verdict (nodes and links drawn, packets, packets delivered, errors caught)
into ``<pre id="selftest">``, which ``--dump-dom`` prints. The console is read from Chromium's
log (``--enable-logging=stderr``): every console message appears there as a ``:CONSOLE`` line.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--window-size=1400,900", "--virtual-time-budget=5000"]


def chromium() -> str:
    """The Chromium binary, or the test is skipped saying why."""
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium); the HTML view's "
                    "browser checks need it")
    return found


def _run(page: Path, fragment: str, *extra: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                               *extra, f"{page.resolve().as_uri()}#{fragment}"],
                              capture_output=True, text=True, timeout=60)


def console_lines(stderr: str) -> list[str]:
    """The console messages in Chromium's log."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def self_test(page: Path) -> tuple[dict, list[str]]:
    """Open ``page#selftest``: its verdict and the console messages."""
    run = _run(page, "selftest", "--dump-dom")
    found = re.search(r'<pre id="selftest">([^<]*)</pre>', run.stdout)
    assert found and found.group(1), f"no self-test verdict in the page:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&")), console_lines(run.stderr)


def screenshot(page: Path, png: Path, step: int) -> list[str]:
    """Save a screenshot of ``page`` at ``step``; the console messages."""
    run = _run(page, f"step={step}", f"--screenshot={png}")
    assert png.exists() and png.stat().st_size > 10_000, run.stderr[-2000:]
    return console_lines(run.stderr)
