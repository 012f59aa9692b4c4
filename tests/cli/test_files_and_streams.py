"""Nothing lost: outputs never replace what the tool does not own, links and FIFOs stay what they
are, standard output that cannot be written and ASCII-only terminals are handled, deep nesting,
long names, unreadable folders and huge seeds are one ``error:`` line.

Every refusal is checked the same way: exit status 2, exactly one stderr line starting
``error:``, no traceback, and the folder byte for byte as it was (file types and link targets
included).
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import stat
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from universal.cli import main
from universal.datafiles import write_atomically
from universal.interrupts import install_stop_handlers, restore_handlers, Terminated

REPO = Path(__file__).resolve().parents[2]

SWEEP = """\
network = "edgelist:g{d}.edges"
problem = "permutation:random"
paths = ["shortest"]
protocols = ["fifo"]
[sweep]
d = [1, 2]
"""


def snapshot(folder: Path) -> dict:
    """Every entry of ``folder``: its kind, and its bytes (files) or target (links)."""
    state = {}
    for entry in sorted(folder.iterdir()):
        mode = os.lstat(entry).st_mode
        if stat.S_ISLNK(mode):
            state[entry.name] = ("link", os.readlink(entry))
        elif stat.S_ISFIFO(mode):
            state[entry.name] = ("fifo",)
        elif stat.S_ISDIR(mode):
            state[entry.name] = ("folder", snapshot(entry) if os.access(entry, os.R_OK | os.X_OK) else None)
        else:
            state[entry.name] = ("file", entry.read_bytes())
    return state


def assert_one_error(status: int, err: str, *fragments: str, out: str = "") -> None:
    assert status == 2, err
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in out + err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def refused(capsys, folder: Path, argv: list[str], *fragments: str) -> None:
    """``argv`` run in ``folder`` is refused with one line and changes nothing there."""
    before = snapshot(folder)
    status = main(argv)
    out, err = capsys.readouterr()
    assert_one_error(status, err, *fragments, out=out)
    assert snapshot(folder) == before


@pytest.fixture
def sweep_folder(tmp_path, monkeypatch):
    """A sweep over two edge lists, the user's notes, and a link to one edge list."""
    (tmp_path / "sw.toml").write_text(SWEEP)
    (tmp_path / "g1.edges").write_text("0 1\n1 2\n2 3\n3 0\n")
    (tmp_path / "g2.edges").write_text("0 1\n1 2\n2 0\n")
    (tmp_path / "notes.txt").write_text("my notes, not a results file\n")
    (tmp_path / "link.edges").symlink_to("g2.edges")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(tmp_path: Path, *argv: str, stdout=subprocess.PIPE, env: dict | None = None,
        user: int | None = None) -> subprocess.CompletedProcess:
    """``python -m universal ARGV`` in ``tmp_path`` (as ``user`` when given)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "universal", *argv], cwd=tmp_path, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=120,
                          user=user)


# --- 1. --out, --plot and --permutation-file never replace an input or a file that is not theirs ---

@pytest.mark.parametrize("out, fragment", [
    ("notes.txt", "is not a sweep results file"),      # the user's notes
    ("sw.toml", "input of this run"),                  # the scenario itself
    ("g1.edges", "input of this run"),                 # an edge list the sweep reads
    ("link.edges", "input of this run"),               # the same, through a symbolic link
])
def test_out_never_replaces_what_is_not_a_results_file(sweep_folder, capsys, out, fragment):
    refused(capsys, sweep_folder, ["scenario", "sw.toml", "--out", out], fragment)
    refused(capsys, sweep_folder, ["scenario", "sw.toml", "--out", out, "--overwrite"], fragment)


def test_hard_link_to_an_input_is_the_input(sweep_folder, capsys):
    os.link(sweep_folder / "g1.edges", sweep_folder / "hard.jsonl")
    refused(capsys, sweep_folder, ["scenario", "sw.toml", "--out", "hard.jsonl"], "input of this run")


def test_an_existing_results_file_of_the_same_sweep_is_shown_again(sweep_folder, capsys):
    """Running a finished sweep again (exercises 2 and 11) shows its stored results: exit 0, the
    same rows, nothing computed; a results file of other settings needs --overwrite."""
    assert main(["scenario", "sw.toml", "--out", "r.jsonl", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    before = (sweep_folder / "r.jsonl").read_bytes()
    assert main(["scenario", "sw.toml", "--out", "r.jsonl", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["resumed_cells"] == len(again["cells"]) and (sweep_folder / "r.jsonl").read_bytes() == before
    def strip(d: dict) -> list:
        return [[{k: v for k, v in r.items() if k != "seconds"} for r in c["rows"]] for c in d["cells"]]
    assert strip(again) == strip(first)
    (sweep_folder / "sw.toml").write_text(SWEEP.replace('protocols = ["fifo"]', 'protocols = ["fifo", "random-rank"]'))
    refused(capsys, sweep_folder, ["scenario", "sw.toml", "--out", "r.jsonl"], "other settings", "--overwrite")
    refused(capsys, sweep_folder, ["scenario", "sw.toml", "--out", "r.jsonl", "--resume", "--overwrite"],
            "give one of them")
    assert main(["scenario", "sw.toml", "--out", "r.jsonl", "--overwrite", "--json"]) == 0
    assert main(["scenario", "sw.toml", "--out", "r.jsonl", "--resume", "--json"]) == 0


def test_plot_and_permutation_file_over_an_input_are_refused(sweep_folder, capsys):
    (sweep_folder / "g.svg").write_text("0 1\n1 2\n2 3\n3 0\n")   # an edge list that happens to end in .svg
    refused(capsys, sweep_folder, ["route", "--network", "edgelist:g.svg", "--problem", "permutation:random",
                                   "--paths", "shortest", "--plot", "g.svg"], "input of this run")
    refused(capsys, sweep_folder, ["scenario", "sw.toml", "--plot", "sw.toml"], "input of this run")
    refused(capsys, sweep_folder, ["worstcase", "--network", "edgelist:g2.edges", "--routing", "shortest",
                                   "--permutation-file", "link.edges"], "input of this run")   # g2 via the link
    (sweep_folder / "perm.txt").write_text("1\n2\n3\n0\n")
    refused(capsys, sweep_folder, ["route", "--network", "edgelist:g1.edges", "--problem", "permutation:file=perm.txt",
                                   "--paths", "shortest", "--plot", "perm.txt"], "input of this run")


# --- 2. links stay links, FIFOs stay FIFOs, devices are written in place -------------------------

def test_a_link_given_as_output_writes_its_target_and_stays_a_link(sweep_folder, capsys):
    target_folder = sweep_folder / "elsewhere"
    target_folder.mkdir()
    (sweep_folder / "worst.txt").symlink_to(target_folder / "worst.txt")   # a dangling link for now
    assert main(["worstcase", "--network", "torus:k=3,n=2", "--routing", "dor",
                 "--permutation-file", "worst.txt", "--json"]) == 0
    assert (sweep_folder / "worst.txt").is_symlink()
    assert (target_folder / "worst.txt").read_text().startswith("# worst-case permutation of dor")
    assert sorted(p.name for p in target_folder.iterdir()) == ["worst.txt"]   # no temporary left
    # Again, now that the target exists: replaced atomically in its own folder, the link kept.
    assert main(["worstcase", "--network", "torus:k=3,n=2", "--routing", "dor",
                 "--permutation-file", "worst.txt", "--json"]) == 0
    assert (sweep_folder / "worst.txt").is_symlink() and os.readlink(sweep_folder / "worst.txt") == str(
        target_folder / "worst.txt")
    # A link to a results file is the results file: --resume continues it through the link.
    assert main(["scenario", "sw.toml", "--out", "r.jsonl", "--json"]) == 0
    (sweep_folder / "r-link.jsonl").symlink_to("r.jsonl")
    assert main(["scenario", "sw.toml", "--out", "r-link.jsonl", "--resume", "--json"]) == 0
    assert (sweep_folder / "r-link.jsonl").is_symlink()


@contextmanager
def fifo_reader(fifo: Path) -> Iterator[list[str]]:
    """A thread reading ``fifo`` to its end while the block runs; yields the list that receives
    the text once the block is over.

    The reader must be there when the command starts (a FIFO without one is refused): the block
    begins once its open() is under way (a non-blocking write end opens only then), and that
    write end stays open until the block ends, so that the reader sees the end of the stream only
    after the command wrote and closed its own."""
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    while True:
        try:
            holder = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            time.sleep(0.01)
    try:
        yield received
    finally:
        os.close(holder)
        reader.join(timeout=30)


def test_a_fifo_is_written_as_a_stream_and_stays_a_fifo(sweep_folder, capsys):
    fifo = sweep_folder / "worst.fifo"
    os.mkfifo(fifo)
    with fifo_reader(fifo) as received:
        assert main(["worstcase", "--network", "torus:k=3,n=2", "--routing", "dor",
                     "--permutation-file", str(fifo), "--json"]) == 0
    assert received and received[0].startswith("# worst-case permutation of dor")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in sweep_folder.iterdir() if p.name.endswith(".tmp")) == []


def test_a_fifo_or_device_is_no_results_file(sweep_folder, capsys):
    os.mkfifo(sweep_folder / "r.fifo")
    refused(capsys, sweep_folder, ["scenario", "sw.toml", "--out", "r.fifo"], "must be a regular file")
    before = os.stat("/dev/null")
    status = main(["scenario", "sw.toml", "--out", "/dev/null"])
    assert_one_error(status, capsys.readouterr().err, "must be a regular file")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and os.stat("/dev/null").st_ino == before.st_ino


def test_dev_null_as_permutation_file_is_written_in_place(sweep_folder, capsys):
    before = os.stat("/dev/null")
    assert main(["worstcase", "--network", "torus:k=3,n=2", "--routing", "dor",
                 "--permutation-file", "/dev/null", "--json"]) == 0
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


# --- 3. standard output -------------------------------------------------------------------------

ANALYZE = ["route", "--network", "hypercube:d=3", "--problem", "permutation:random",
           "--paths", "valiant,dimension-order", "--analyze"]


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_full_standard_output_is_one_error_line(tmp_path, extra):
    with open("/dev/full", "w") as full:
        done = cli(tmp_path, *ANALYZE, *extra, stdout=full)
    lines = done.stderr.strip("\n").splitlines()
    assert done.returncode == 1
    assert lines == ["error: cannot write to standard output: No space left on device"], done.stderr


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}])
def test_an_ascii_only_standard_output_gets_the_whole_table(tmp_path, env):
    done = cli(tmp_path, *ANALYZE, env=env)
    assert done.returncode == 0 and done.stderr == ""
    out = done.stdout
    assert "Cbar" in out or "C̄" in out               # spelled in ASCII when the encoding needs it
    for part in ("Path collections", "expected congestion", "valiant", "dimension-order", "Fastest:"):
        assert part in out
    if env.get("PYTHONIOENCODING") == "ascii":
        assert out.isascii() and "Cbar" in out and "+/-" in out and "?" not in out
        # Spelled before the columns were measured: every line of each table box is equally wide.
        boxes, box = [], []
        for line in out.splitlines():
            if line[:1] in "+|" and line:
                box.append(len(line.rstrip()))
            elif box:
                boxes, box = boxes + [box], []
        assert len(boxes) == 3 and all(len(set(b)) == 1 for b in boxes), boxes


def test_a_closed_pipe_stays_quiet(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = f"{sys.executable} -m universal {' '.join(ANALYZE)} --json | head -c 10"
    done = subprocess.run(["sh", "-c", command], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.stdout == '{\n "versio' and done.stderr == ""


# --- 4. deep nesting, long names, unreadable folders --------------------------------------------

@pytest.mark.parametrize("value", ["[" * 20_000 + "]" * 20_000, "{a = " * 5_000 + "1" + "}" * 5_000])
def test_deeply_nested_toml_is_one_error_line(tmp_path, capsys, value):
    (tmp_path / "deep.toml").write_text(f'network = "butterfly:d=3"\ndeep = {value}\n')
    refused(capsys, tmp_path, ["scenario", str(tmp_path / "deep.toml")], "nested deeper than 64 levels")


def test_deeply_nested_json_in_a_results_file_is_one_error_line(sweep_folder, capsys):
    assert main(["scenario", "sw.toml", "--out", "r.jsonl", "--json"]) == 0
    capsys.readouterr()
    with open(sweep_folder / "r.jsonl", "a") as handle:
        handle.write("[" * 100_000 + "]" * 100_000 + "\n")
    refused(capsys, sweep_folder, ["scenario", "sw.toml", "--out", "r.jsonl", "--resume"],
            "nested deeper than 64 levels")


LONG = "a" * 300


@pytest.mark.parametrize("argv", [
    ["route", "--network", "butterfly:d=3", "--problem", "permutation:random", "--plot", LONG + ".svg"],
    ["scenario", "sw.toml", "--out", LONG + ".jsonl"],
    ["worstcase", "--network", "torus:k=3,n=2", "--routing", "dor", "--permutation-file", LONG + ".txt"],
    ["scenario", LONG + ".toml"],
    ["scenario", LONG],
    ["route", "--network", f"edgelist:{LONG}.edges", "--problem", "permutation:random", "--paths", "shortest"],
])
def test_names_beyond_the_file_system_limit_are_one_error_line(sweep_folder, capsys, argv):
    refused(capsys, sweep_folder, argv)


def test_a_scenario_in_an_unreadable_folder_is_one_error_line(tmp_path, capsys, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "sw.toml").write_text(SWEEP)
    locked.chmod(0o000)
    if os.geteuid() == 0:
        # The superuser passes permission bits: make the kernel's answer to an ordinary user explicit.
        real_stat = os.stat

        def stat_as_a_user(path, *args, **kwargs):
            if str(path).startswith(str(locked) + os.sep):
                raise PermissionError(13, "Permission denied", str(path))
            return real_stat(path, *args, **kwargs)

        monkeypatch.setattr(os, "stat", stat_as_a_user)
    try:
        refused(capsys, tmp_path, ["scenario", str(locked / "sw.toml")], "Permission denied")
    finally:
        locked.chmod(0o755)


# --- 5/6. signals: SIGTERM and Ctrl-C clean up --------------------------------------------------

def test_sigterm_while_a_file_is_written_leaves_no_temporary_file(tmp_path):
    previous = install_stop_handlers()
    try:
        def write_then_get_killed(handle):
            handle.write(b"<svg>half a figure")
            os.kill(os.getpid(), signal.SIGTERM)  # arrives while the temporary file is open
            handle.write(b"never written")

        with pytest.raises(Terminated):
            write_atomically(tmp_path / "x.svg", write_then_get_killed)
    finally:
        restore_handlers(previous)
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_while_the_modules_load_is_one_line(monkeypatch, capsys):
    """``python -m universal`` interrupted while it imports the CLI (the first second)."""

    class Interrupting:
        def find_spec(self, name, path=None, target=None):
            if name == "universal.cli":
                raise KeyboardInterrupt
            return None

    for name in [m for m in sys.modules if m == "universal.cli" or m.startswith("universal.cli.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # keep this test process's handlers
    with pytest.raises(SystemExit) as exit_:
        runpy.run_module("universal", run_name="__main__")
    assert exit_.value.code == 130
    assert capsys.readouterr().err == "interrupted\n"


# --- 7. seeds and counts beyond 64 bits ---------------------------------------------------------

@pytest.mark.parametrize("argv, fragment", [
    (["route", "--network", "butterfly:d=3", "--problem", "permutation:random", "--seeds", str(10**100)],
     "at most 64 bits"),
    (["route", "--network", "butterfly:d=3", "--problem", "permutation:random", "--seed", str(2**64)],
     "at most 64 bits"),
])
def test_numbers_beyond_64_bits_are_one_error_line(tmp_path, capsys, argv, fragment):
    refused(capsys, tmp_path, argv, fragment)


@pytest.mark.parametrize("line", ["seeds = 18446744073709551616", "seed = 18446744073709551616",
                                  "seeds = [1, 18446744073709551616]"])
def test_scenario_seeds_beyond_64_bits_are_one_error_line(tmp_path, capsys, line):
    (tmp_path / "s.toml").write_text(f'network = "butterfly:d=3"\nproblem = "permutation:random"\n'
                                     f'paths = ["valiant"]\nprotocols = ["fifo"]\n{line}\n')
    refused(capsys, tmp_path, ["scenario", str(tmp_path / "s.toml")])
