"""Ctrl-C, SIGTERM and SIGKILL against a ``--jobs 2`` sweep, at many moments: the run ends within
5 s with one line and no traceback, no worker process survives, the results file stays valid and
``--resume`` then ends with exactly the rows of an uninterrupted run.

The process runs in its own session, so that "no worker left" can be checked by session id and
Ctrl-C can be sent the way a terminal sends it: to the whole process group.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from universal.scenario import load_scenario
from universal.sweep import read_results

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists() or not hasattr(os, "killpg"),
                                reason="needs Linux /proc and process groups")

# A sweep of cells of a few tenths of a second each (h-relations on BF(11), h = 1..N): long enough
# that the interruptions below land while it runs, short enough to run 20 times. N is calibrated
# on the machine (see ``reference``) so that the whole sweep takes about 3 s.
def sweep_text(cells: int) -> str:
    return ('network = "butterfly:d=11"\nproblem = "h-relation:h={h}"\npaths = ["valiant"]\n'
            f'protocols = ["random-rank"]\nseeds = 1\n[sweep]\nh = {list(range(1, cells + 1))}\n')


def start(folder: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "universal", "scenario", "sw.toml", "--out", "sw.jsonl",
                             "--jobs", "2", "--json", *extra], cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def handles_sigterm(pid: int) -> bool:
    """Whether the tool's own code runs (its main() installs a SIGTERM handler; Python has none)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt")), 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def wait_until_running(process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while not handles_sigterm(process.pid):
        assert process.poll() is None and time.monotonic() < deadline, "the tool never started"
        time.sleep(0.002)


def session_members(sid: int) -> list[int]:
    """The live processes of session ``sid`` (a zombie is dead, only not yet reaped by init)."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid and Path(f"/proc/{entry}/stat").read_text().split()[2] != "Z":
                    members.append(int(entry))
            except OSError:
                pass
    return members


def assert_no_process_left(sid: int) -> None:
    deadline = time.monotonic() + 5
    while session_members(sid):
        assert time.monotonic() < deadline, f"processes still alive: {session_members(sid)}"
        time.sleep(0.05)


def rows(path: Path, sweep) -> dict[str, list]:
    """Every cell's rows, without the timings."""
    cells = read_results(path, sweep)
    return {key: [{k: v for k, v in vars(r).items() if k != "seconds"} for r in c.rows]
            for key, c in cells.items()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The sweep and its rows from an uninterrupted run, sized to last about 3 s here."""
    folder = tmp_path_factory.mktemp("reference")
    cells = 14
    for _ in range(2):  # a calibration run, then the reference run
        (folder / "sw.toml").write_text(sweep_text(cells))
        (folder / "sw.jsonl").unlink(missing_ok=True)
        began = time.monotonic()
        done = start(folder)
        out, err = done.communicate(timeout=300)
        took = time.monotonic() - began
        assert done.returncode == 0, err
        # A cell's cost grows with h, the sweep's with the square of the number of cells.
        cells = max(cells, min(60, round(cells * (3.0 / took) ** 0.5)))
    sweep = load_scenario(folder / "sw.toml").sweep
    return sweep, rows(folder / "sw.jsonl", sweep), (folder / "sw.toml").read_text()


def check_stopped(process: subprocess.Popen, sent: float, status: int, line: str, finished_ok: bool = False) -> int:
    """The process ends within 5 s with ``status`` and the one ``line`` on stderr (or, with
    ``finished_ok``, with status 0 and nothing on stderr: the signal came as the sweep ended)."""
    try:
        _, err = process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("the sweep did not stop within 5 s")
    assert time.monotonic() - sent < 5
    if finished_ok and process.returncode == 0:
        assert err == ""
    else:
        assert process.returncode == status, err
        assert err == line + "\n"  # one line, no traceback
    assert_no_process_left(process.pid)
    return process.returncode


def resume_in_process(folder: Path, monkeypatch, capsys) -> dict:
    """``scenario sw.toml --resume`` in this process (no interpreter start-up to pay 20 times)."""
    from universal.cli import main

    monkeypatch.chdir(folder)
    assert main(["scenario", "sw.toml", "--out", "sw.jsonl", "--jobs", "2", "--json", "--resume"]) == 0
    return json.loads(capsys.readouterr().out)


def test_ctrl_c_at_any_moment_of_a_parallel_sweep_loses_nothing(tmp_path, reference, monkeypatch, capsys):
    sweep, expected, text = reference
    (tmp_path / "sw.toml").write_text(text)
    results = tmp_path / "sw.jsonl"
    interrupted = []
    # 4 moments over the first two seconds (each costs a start and a resume of about the whole
    # sweep: 6 moments cost 3 s more of CI for two more of the same kind)
    for delay in [0.1 + i * 1.8 / 3 for i in range(4)]:
        results.unlink(missing_ok=True)
        began = time.monotonic()
        run = start(tmp_path)
        wait_until_running(run)  # Python's own start-up (before the tool's first line) is not the tool's
        time.sleep(max(0.0, began + delay - time.monotonic()))
        if run.poll() is not None:  # already finished: a Ctrl-C now would come after the end
            assert run.wait() == 0 and rows(results, sweep) == expected
            continue
        sent = time.monotonic()
        os.killpg(run.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        if check_stopped(run, sent, 130, "interrupted", finished_ok=True) == 0:
            assert rows(results, sweep) == expected  # it ended just before the Ctrl-C
            continue
        kept = rows(results, sweep) if results.exists() else {}
        assert all(kept[key] == expected[key] for key in kept)  # finished cells kept, unchanged
        left = {p.name for p in tmp_path.iterdir()}
        assert left <= {"sw.toml", "sw.jsonl"}, (delay, left)  # no temporary file
        interrupted.append(len(kept))
        assert resume_in_process(tmp_path, monkeypatch, capsys)["resumed_cells"] == len(kept)
        assert rows(results, sweep) == expected
    # The sweep is sized to outlast the two seconds, but the machine's load can fall after the
    # calibration; half of the moments must still land mid-run (``interrupted`` holds the
    # cells each run had finished; the runs that ended first were checked as complete runs).
    assert len(interrupted) >= 2, interrupted


def test_sigterm_stops_workers_and_leaves_no_temporary_file(tmp_path, reference):
    sweep, expected, text = reference
    (tmp_path / "sw.toml").write_text(text)
    run = start(tmp_path)
    wait_until_running(run)
    # Mid-run: once the first (quickest) cell is in; a fixed delay missed the run when a calibration
    # on a busy machine had sized the sweep for a slower one.
    while len((tmp_path / "sw.jsonl").read_text().splitlines() if (tmp_path / "sw.jsonl").exists() else []) < 2:
        assert run.poll() is None, "the sweep ended before its first cell was seen"
        time.sleep(0.005)
    sent = time.monotonic()
    run.send_signal(signal.SIGTERM)  # to the main process only, as `kill PID` does
    check_stopped(run, sent, 143, "terminated")
    assert {p.name for p in tmp_path.iterdir()} <= {"sw.toml", "sw.jsonl"}


def test_sigkill_leaves_no_worker_and_resume_removes_the_stale_temporary_file(tmp_path, reference):
    sweep, expected, text = reference
    (tmp_path / "sw.toml").write_text(text)
    run = start(tmp_path)
    wait_until_running(run)
    time.sleep(0.8)
    run.kill()
    run.communicate()
    assert_no_process_left(run.pid)  # the kernel ends the workers with their parent
    stale = tmp_path / ".sw.jsonl.k1ll3d_x.tmp"  # what a SIGKILL in the middle of a write leaves
    stale.write_text('{"sweep"')
    resumed = start(tmp_path, "--resume")
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sw.jsonl", "sw.toml"]
    assert rows(tmp_path / "sw.jsonl", sweep) == expected


# An open-loop study under --jobs 2 (60 runs in 4 chunks of 15, about 3 s): interrupted once its
# first chunk is in the results file, it keeps what it finished, and --resume ends with exactly
# the rows of an uninterrupted --jobs 1 run.
OPENLOOP = ["openloop", "--network", "torus:k=4,n=2", "--routing", "dor,goal", "--traffic", "uniform,tornado",
            "--loads", "0.1:0.5:0.1", "--seeds", "3", "--window", "1000", "--out", "ol.jsonl", "--json"]


def start_openloop(folder: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "universal", *OPENLOOP, *extra], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def cell_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()[1:] if path.exists() else []


@pytest.fixture(scope="module")
def openloop_reference(tmp_path_factory):
    """The results-file lines of an uninterrupted run with one process."""
    folder = tmp_path_factory.mktemp("openloop")
    done = start_openloop(folder, "--jobs", "1")
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    return cell_lines(folder / "ol.jsonl")


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "sigkill"])
def test_an_interrupted_openloop_study_resumes_to_the_rows_of_an_uninterrupted_one(tmp_path, openloop_reference,
                                                                                   monkeypatch, capsys, how):
    results = tmp_path / "ol.jsonl"
    run = start_openloop(tmp_path, "--jobs", "2")
    wait_until_running(run)
    while not cell_lines(results):  # the first chunk is in
        assert run.poll() is None, "the study ended before its first chunk was seen"
        time.sleep(0.005)
    sent = time.monotonic()
    if how in ("ctrl-c", "sigterm"):
        if how == "ctrl-c":
            os.killpg(run.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        else:
            run.send_signal(signal.SIGTERM)  # to the main process only, as `kill PID` does
        status, line = (130, "interrupted") if how == "ctrl-c" else (143, "terminated")
        if check_stopped(run, sent, status, line, finished_ok=True) == 0:
            pytest.skip("the study finished before the signal landed (a much faster machine)")
    else:
        run.kill()
        run.communicate()
        assert_no_process_left(run.pid)  # the kernel ends the workers with their parent
    kept = cell_lines(results)
    assert 0 < len(kept) < len(openloop_reference)
    assert set(kept) <= set(openloop_reference)  # finished cells kept, unchanged
    left = {p.name for p in tmp_path.iterdir()} - {"ol.jsonl"}
    assert not left if how != "sigkill" else all(name.startswith(".ol.jsonl.") for name in left)

    from universal.cli import main

    monkeypatch.chdir(tmp_path)
    assert main([*OPENLOOP, "--jobs", "2", "--resume"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["resumed_cells"] == len(kept)
    assert cell_lines(results) == openloop_reference  # the same rows, in the same order
    assert [p.name for p in tmp_path.iterdir()] == ["ol.jsonl"]  # a SIGKILL's temporary file is gone too
