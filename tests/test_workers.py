"""Worker processes of a parallel sweep: every result once, errors re-raised in
the parent, Ctrl-C ignored by the workers, and no worker left once the caller stops."""

from __future__ import annotations

import os
import signal
import time

import pytest

from universal.errors import UserError
from universal.workers import run_in_processes


def square_after(seconds: float, x: int) -> int:
    time.sleep(seconds)
    return x * x


def worker_pid(x: int) -> int:
    return os.getpid()


def refuse(x: int) -> int:
    raise UserError(f"cell {x} is impossible")


def survive_ctrl_c(x: int) -> int:
    os.kill(os.getpid(), signal.SIGINT)  # a terminal's Ctrl-C reaches the workers too
    time.sleep(0.05)
    return x


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not reaped yet counts as gone
        return open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except OSError:
        return True


def test_every_result_arrives_once():
    results = list(run_in_processes(square_after, [(0.1, 2), (0.0, 3), (0.0, 4), (0.0, 5)], jobs=2))
    assert sorted(results) == [4, 9, 16, 25]


def test_a_worker_error_is_raised_in_the_parent():
    with pytest.raises(UserError, match="cell [12] is impossible"):  # both fail: the first to answer is raised
        list(run_in_processes(refuse, [(1,), (2,)], jobs=2))


def test_workers_ignore_ctrl_c():
    assert sorted(run_in_processes(survive_ctrl_c, [(1,), (2,), (3,)], jobs=2)) == [1, 2, 3]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")
def test_no_worker_outlives_the_caller_stopping_early():
    tasks = [(i,) for i in range(2)]
    results = run_in_processes(worker_pid, tasks, jobs=2)
    pid = next(results)
    results.close()  # the caller stops iterating (as on Ctrl-C in the parent)
    deadline = time.monotonic() + 5
    while alive(pid):
        assert time.monotonic() < deadline, "a worker survived"
        time.sleep(0.02)
    assert pid != os.getpid()
