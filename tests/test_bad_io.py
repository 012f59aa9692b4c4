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

from tests.test_bad_inputs import assert_refused
from tests.cli.test_files_and_streams import fifo_reader
from tests.test_interrupts import session_members

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


# --------------------------------------------------------------------------- output files

#: Every option that names an output file, with a command that would write it (``X`` is the file).
OUTPUTS = {
    "design --save": ["design", "--network", "torus:k=3,n=2", "--save", "X"],
    "design --plot": ["design", "--network", "torus:k=3,n=2", "--tradeoff", "2", "--plot", "X"],
    "route --plot": ["route", "--network", "hypercube:d=3", "--problem", "permutation:random", "--plot", "X"],
    "route --links": ["route", "--network", "hypercube:d=3", "--problem", "permutation:random", "--analyze",
                      "--links", "X"],
    "load --plot": ["load", "--network", "torus:k=4,n=2", "--plot", "X"],
    "load --links": ["load", "--network", "torus:k=4,n=2", "--links", "X"],
    "worstcase --permutation-file": ["worstcase", "--network", "torus:k=3,n=2", "--routing", "dor",
                                     "--permutation-file", "X"],
    "worstcase --plot": ["worstcase", "--network", "torus:k=3,n=2", "--routing", "dor", "--plot", "X"],
    "openloop --out": ["openloop", "--network", "torus:k=4,n=2", "--routing", "dor", "--traffic", "uniform",
                       "--loads", "0.2", "--out", "X"],
    "openloop --plot": ["openloop", "--network", "torus:k=4,n=2", "--routing", "dor", "--traffic", "uniform",
                        "--loads", "0.2", "--plot", "X"],
    "scenario --out": ["scenario", "sw.toml", "--out", "X"],
    "scenario --plot": ["scenario", "sw.toml", "--plot", "X"],
}


def make_entry(path: Path, kind: str) -> socket.socket | None:
    """A FIFO (no process reads it), a folder or a listening Unix socket at ``path``."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        return server
    return None


def kind_of(path: Path) -> str:
    mode = os.lstat(path).st_mode
    return "fifo" if stat.S_ISFIFO(mode) else "folder" if stat.S_ISDIR(mode) else "socket" \
        if stat.S_ISSOCK(mode) else "other"


@pytest.mark.parametrize("kind", ["fifo", "folder", "socket"])
@pytest.mark.parametrize("option", OUTPUTS)
def test_an_output_that_is_no_file_to_write_is_refused_at_once(tmp_path, capsys, option, kind):
    """A FIFO that no process reads (it was read first, or waited on forever), a folder or a
    socket, named by any output option: one line within 2 s, and the entry stays what it was."""
    (tmp_path / "sw.toml").write_text(SWEEP)
    target = tmp_path / "out.svg"  # a plot suffix, so that only the kind of entry is wrong
    server = make_entry(target, kind)
    argv = [str(target) if a == "X" else a for a in OUTPUTS[option]]
    began = time.monotonic()
    try:
        line = assert_refused(argv, tmp_path, capsys)
    finally:
        if server is not None:
            server.close()
    assert time.monotonic() - began < 2, line
    assert kind_of(target) == kind
    if kind == "fifo" and "--out" not in option:
        assert "no process is reading it" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.svg", "sw.toml"]


def test_a_fifo_with_a_reader_receives_the_saved_routing_as_a_stream(tmp_path, capsys):
    """The FIFO case of ``design --save`` that works: the reader gets the routing; nothing is read."""
    import json

    from universal.cli import main

    fifo = tmp_path / "r.fifo"
    os.mkfifo(fifo)
    with fifo_reader(fifo) as received:
        assert main(["design", "--network", "torus:k=3,n=2", "--save", str(fifo), "--json"]) == 0
    assert json.loads(received[0])["network"] == "torus:k=3,n=2"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


# --------------------------------------------------------------------------- lp:file= in scenarios

def scenario_kinds(routing: str) -> dict[str, str]:
    """A load, an open-loop and an experiment scenario routing with ``routing`` (and dor)."""
    return {
        "load": f'kind = "load"\nnetwork = "torus:k=4,n=2"\nrouting = ["dor", "{routing}"]\ntraffic = ["tornado"]\n',
        "openloop": (f'kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = ["dor", "{routing}"]\n'
                     f'traffic = ["tornado"]\nloads = [0.2]\nwindow = 200\n'),
        "experiment": (f'network = "torus:k=4,n=2"\nproblem = "permutation:tornado"\npaths = ["dor", "{routing}"]\n'
                       f'protocols = "fifo"\n'),
    }


def numbers(data: dict) -> list:
    """The rows of a JSON answer without the names (which spell the routing file as given)."""
    rows = data.get("rows") or data.get("runs") or []
    return [[v for k, v in sorted(r.items()) if isinstance(v, (int, float)) and k != "seconds"] for r in rows]


@pytest.mark.parametrize("kind", ["load", "openloop", "experiment"])
def test_lp_file_in_a_scenario_is_read_next_to_the_scenario(tmp_path, capsys, monkeypatch, kind):
    """``lp:file=opt.routing`` in studies/s.toml reads studies/opt.routing wherever the command runs
    (README: relative names in a scenario resolve against its folder); the rows are those of the
    same scenario naming the file by its absolute path."""
    import json

    from universal.cli import main

    studies = tmp_path / "studies"
    studies.mkdir()
    assert main(["design", "--network", "torus:k=4,n=2", "--save", str(studies / "opt.routing"), "--json"]) == 0
    (studies / "rel.toml").write_text(scenario_kinds("lp:file=opt.routing")[kind])
    (studies / "abs.toml").write_text(scenario_kinds(f"lp:file={studies / 'opt.routing'}")[kind])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    assert main(["scenario", str(studies / "rel.toml"), "--json"]) == 0, capsys.readouterr().err
    relative = json.loads(capsys.readouterr().out)
    assert main(["scenario", str(studies / "abs.toml"), "--json"]) == 0
    absolute = json.loads(capsys.readouterr().out)
    assert numbers(relative) and numbers(relative) == numbers(absolute)
    assert list(elsewhere.iterdir()) == []


# --------------------------------------------------------------------------- values that name the same cell twice

OPENLOOP = ["openloop", "--network", "torus:k=4,n=2", "--routing", "dor", "--traffic", "uniform", "--loads", "0.2"]


def replaced(argv: list[str], option: str, value: str) -> list[str]:
    return [value if argv[i - 1] == option else a for i, a in enumerate(argv)]


@pytest.mark.parametrize("argv, files, fragment", [
    (replaced(OPENLOOP, "--loads", "0.2,0.2"), {}, "offered load 0.2 is listed twice"),
    (replaced(OPENLOOP, "--loads", "0.2,0.3,0.20"), {}, "offered load 0.2 is listed twice"),
    (replaced(OPENLOOP, "--routing", "dor,val,dor"), {}, "routing 'dor' is listed twice"),
    (replaced(OPENLOOP, "--traffic", "uniform,uniform"), {}, "traffic 'uniform' is listed twice"),
    (["scenario", "ol.toml"], {"ol.toml": 'kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = ["dor"]\n'
                                          'traffic = ["uniform"]\nloads = [0.2, 0.2]\n'},
     "offered load 0.2 is listed twice"),
    (["scenario", "sw.toml"], {"sw.toml": SWEEP.replace("d = [2, 3]", "d = [2, 3, 2]")},
     "sweep axis 'd' lists 2 twice"),
], ids=["loads", "loads written differently", "routings", "traffics", "scenario loads", "sweep axis"])
def test_a_value_listed_twice_is_refused_before_the_results_file(tmp_path, capsys, argv, files, fragment):
    """The same cell twice went into the results file twice, and --resume then refused the file."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    out = ["--out", "r.jsonl"] if argv[0] == "openloop" else []
    began = time.monotonic()
    line = assert_refused(argv + out, tmp_path, capsys)
    assert time.monotonic() - began < 2 and fragment in line, line


def test_the_api_refuses_repeated_loads_too_and_distinct_ones_resume(tmp_path):
    from universal.errors import UserError
    from universal.openloop.study import OpenLoopStudy, run_study

    with pytest.raises(UserError, match="listed twice"):
        run_study(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.2, 0.2], window=100),
                  results_file=tmp_path / "r.jsonl")
    assert list(tmp_path.iterdir()) == []
    study = OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.2, 0.3], window=100)
    first = run_study(study, results_file=tmp_path / "r.jsonl")
    again = run_study(study, results_file=tmp_path / "r.jsonl", resume=True)  # its own file is accepted
    assert again.rows == first.rows


# --------------------------------------------------------------------------- signals during a HiGHS solve

def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("signum, to_group, status, line", [
    (signal.SIGINT, True, 130, "interrupted"),      # Ctrl-C: the terminal signals the whole group
    (signal.SIGTERM, False, 143, "terminated"),     # kill PID: the main process only
])
def test_a_signal_during_a_long_lp_solve_ends_the_run_within_seconds(tmp_path, signum, to_group, status, line):
    """The worst-case LP of the 14-ary 2-cube takes HiGHS seconds here (the 12-ary 2-cube's, under
    one second now, could end before the signal), during which it does not return to Python; the
    signal is sent once the solve has begun (its solver process exists) and must end the run
    within 3 s, with one line and no process left behind."""
    process = subprocess.Popen([sys.executable, "-m", "universal", "design", "--network", "torus:k=14,n=2"],
                               cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not children(process.pid):
            assert process.poll() is None and time.monotonic() < deadline, \
                "no solver process appeared: the LP is solved where a signal cannot stop it"
            time.sleep(0.02)
        time.sleep(0.5)  # well inside the solve
        assert process.poll() is None, "the solve ended already: the test needs a longer LP"
        (os.killpg if to_group else os.kill)(process.pid, signum)
        sent = time.monotonic()
        _, err = process.communicate(timeout=30)
        assert time.monotonic() - sent < 3
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    lines = err.splitlines()    # a note of the estimated solve time may come first
    assert process.returncode == status and lines[-1] == line, (process.returncode, err)
    assert all(earlier.startswith("note: ") for earlier in lines[:-1]), err
    deadline = time.monotonic() + 3
    while session_members(process.pid):  # the solver process went with it
        assert time.monotonic() < deadline, session_members(process.pid)
        time.sleep(0.05)


def _worst_case_cost(k: int) -> float:
    from universal.design.lp import solve_design
    from universal.paths.torus.geometry import Torus

    return solve_design(Torus(k, 2), "worst-case").cost


def test_an_lp_inside_a_worker_process_is_solved_there(monkeypatch):
    """Sweep and Dask workers are daemonic processes, which may not start children: a designed
    routing needed by a cell (2turn on a large torus) is solved in the worker itself."""
    import universal.design.lp as lp
    from universal.workers import run_in_processes

    monkeypatch.setattr(lp, "IN_PROCESS_NONZEROS", 0)  # every LP would go to a child process
    in_worker = list(run_in_processes(_worst_case_cost, [(4,)], jobs=1))
    assert in_worker == [_worst_case_cost(4)]
    assert in_worker[0] == pytest.approx(1.0, abs=1e-12)       # the LP's optimum, up to round-off
