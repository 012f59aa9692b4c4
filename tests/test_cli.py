"""The command line (SPEC §8): bad input gets one line on stderr and exit status 2, never a
traceback; the happy paths print tables or one JSON object.

Most tests call :func:`universal.cli.main` in-process; a few run ``python -m universal`` in a
subprocess to check the whole way from argv to the exit status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
import tracemalloc
from pathlib import Path

import pytest

from universal.cli import main

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"

ROW_KEYS = {"paths", "protocol", "seed", "n", "C", "D", "T", "lower_bound", "bound", "bound_expr",
            "T_over_CD", "delivered", "max_buffer", "mean_latency"}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def run_module(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "universal", *argv], capture_output=True, text=True,
                          env=env, cwd=cwd or REPO, timeout=120)


def assert_user_error(status: int, out: str, err: str, *fragments: str) -> None:
    assert status == 2
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in out + err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- bad input: one line, exit status 2 ------------------------------------------------------------

# Each case builds argv (possibly writing files into tmp_path) and names a fragment of the message.


def _route(network="torus:k=4,n=2", problem="permutation:random", *extra):
    return ["route", "--network", network, "--problem", problem, *extra]


def _malformed_toml(tmp):
    return ["scenario", str(write(tmp / "bad.toml", 'network = "torus:k=4,n=2"\nproblem = [unclosed\n'))]


def _unknown_key(tmp):
    f = write(tmp / "typo.toml", 'network = "torus:k=4,n=2"\nproblem = "permutation:random"\n'
              'paths = "dimension-order"\nprotocols = "fifo"\nsedes = 3\n')
    return ["scenario", str(f)]


def _missing_network_key(tmp):
    f = write(tmp / "nonet.toml", 'problem = "permutation:random"\npaths = "shortest"\nprotocols = "fifo"\n')
    return ["scenario", str(f)]


def _not_a_permutation(tmp):
    f = write(tmp / "perm.txt", "\n".join(["0"] * 16) + "\n")
    return _route(problem=f"permutation:file={f}")


def _not_an_h_relation(tmp):
    f = write(tmp / "pairs.txt", "0 1\n1 2\n2 0\n3 0\n")
    return _route(network="hypercube:d=2", problem=f"h-relation:file={f}")


def _node_not_in_graph(tmp):
    f = write(tmp / "pairs.txt", "0 1\n2 99\n")
    return _route(problem=f"pairs:file={f}")


def _disconnected_pair(tmp):
    edges = write(tmp / "two.edges", "0 1\n1 2\n3 4\n4 5\n")
    pairs = write(tmp / "pairs.txt", "0 2\n0 5\n")
    return _route(f"edgelist:{edges}", f"pairs:file={pairs}", "--paths", "shortest")


def _dimension_order_on_graph(tmp):
    edges = write(tmp / "tri.edges", "0 1\n1 2\n2 0\n")
    return _route(f"edgelist:{edges}", "permutation:random", "--paths", "dimension-order")


def _missing_edgelist(tmp):
    return _route(network=f"edgelist:{tmp / 'absent.edges'}")


BAD_INPUT = {
    "unknown network": (lambda tmp: _route(network="moebius:d=3"), "unknown network"),
    "unknown problem": (lambda tmp: _route(problem="all-to-some"), "unknown problem"),
    "unknown path system": (lambda tmp: _route("torus:k=4,n=2", "permutation:random", "--paths", "zigzag"),
                            "unknown path system"),
    "unknown protocol": (lambda tmp: _route("torus:k=4,n=2", "permutation:random", "--protocols", "fastest"),
                         "unknown protocol"),
    "unknown scenario": (lambda tmp: ["scenario", "no_such_scenario"], "unknown scenario"),
    "unknown command": (lambda tmp: ["frobnicate"], "invalid choice"),
    "malformed scenario TOML": (_malformed_toml, "malformed scenario file"),
    "scenario with an unknown key": (_unknown_key, "unknown key 'sedes'"),
    "scenario without a network": (_missing_network_key, "'network'"),
    "missing scenario file": (lambda tmp: ["scenario", str(tmp / "absent.toml")], "does not exist"),
    "not a permutation": (_not_a_permutation, "not a permutation"),
    "not an h-relation": (_not_an_h_relation, "not an h-relation"),
    "node not in the graph": (_node_not_in_graph, "99"),
    "disconnected pair": (_disconnected_pair, "no path"),
    "dimension-order on a graph": (_dimension_order_on_graph, "dimension-order"),
    "missing edge list": (_missing_edgelist, "cannot read"),
    "butterfly:d=0": (lambda tmp: _route(network="butterfly:d=0"), "out of range"),
    "torus:k=1": (lambda tmp: _route(network="torus:k=1,n=2"), "out of range"),
    "unknown parameter": (lambda tmp: _route(network="butterfly:d=3,q=1"), "unknown parameter 'q'"),
    "bit-reversal without power of two": (lambda tmp: _route(network="torus:k=3,n=2", problem="permutation:bit-reversal"),
                                          "power-of-two"),
    "--seeds 0": (lambda tmp: _route("torus:k=4,n=2", "permutation:random", "--seeds", "0"), "--seeds"),
    "--seeds not a number": (lambda tmp: ["scenario", "butterfly_hrelation", "--seeds", "many"], "--seeds"),
    "--bandwidth 0": (lambda tmp: _route("torus:k=4,n=2", "permutation:random", "--bandwidth", "0"), "--bandwidth"),
    "--buffer 0": (lambda tmp: _route("torus:k=4,n=2", "permutation:random", "--buffer", "0"), "--buffer"),
    "--buffer huge-ish word": (lambda tmp: _route("torus:k=4,n=2", "permutation:random", "--buffer", "1,lots"),
                               "--buffer"),
    "--bandwidth list with 0": (lambda tmp: _route("torus:k=4,n=2", "permutation:random", "--bandwidth", "1,0"),
                                "--bandwidth"),
    "bufferless protocol parameter": (lambda tmp: _route("torus:k=4,n=2", "permutation:random", "--protocols",
                                                         "trial-and-failure:redraw=maybe"), "redraw"),
    "duplication copies 0": (lambda tmp: _route("torus:k=4,n=2", "permutation:random", "--protocols",
                                                "duplication:copies=0"), "copies"),
    "sweep options on a plain scenario": (lambda tmp: ["scenario", "torus_tornado", "--resume"],
                                          "is a routing experiment: --resume applies only to sweeps and open-loop studies"),
    "two sweep options on an experiment": (lambda tmp: ["scenario", "butterfly_hrelation", "--out", "x.jsonl", "--jobs",
                                                        "2"], "--out, --jobs apply only to sweeps and open-loop"),
    "--opt on a load analysis": (lambda tmp: ["scenario", "torus_worstcase", "--time-limit", "5"],
                                 "is a load analysis: --time-limit applies only to routing experiments"),
    "sweep placeholder without an axis": (lambda tmp: ["scenario", str(write(
        tmp / "sw.toml", 'network = "butterfly:d={e}"\nproblem = "h-relation:h=1"\npaths = "valiant"\n'
                         'protocols = "fifo"\n[sweep]\nd = [3, 4]\n'))], "not a sweep axis"),
    "sweep axis not a list": (lambda tmp: ["scenario", str(write(
        tmp / "sw.toml", 'network = "butterfly:d={d}"\nproblem = "h-relation:h=1"\npaths = "valiant"\n'
                         'protocols = "fifo"\n[sweep]\nd = 3\n'))], "sweep axis 'd'"),
    "scenario buffer 0": (lambda tmp: ["scenario", str(write(
        tmp / "b.toml", 'network = "butterfly:d=3"\nproblem = "h-relation:h=1"\npaths = "valiant"\n'
                        'protocols = "fifo"\nbuffer = 0\n'))], "'buffer'"),
    "missing --network": (lambda tmp: ["route", "--problem", "permutation:random"], "--network"),
    "missing --problem": (lambda tmp: ["route", "--network", "torus:k=4,n=2"], "--problem"),
    "missing command": (lambda tmp: [], "required"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_line_and_status_2(case, tmp_path, capsys):
    make_argv, fragment = BAD_INPUT[case]
    status, out, err = run(capsys, *make_argv(tmp_path))
    assert_user_error(status, out, err, fragment)
    assert out == ""


def test_at_least_twelve_kinds_of_bad_input():
    assert len(BAD_INPUT) >= 12


def test_too_large_instance_is_refused_quickly(capsys):
    """BF(22) has 4 * 22 * 2^22 links and an h-relation with h = 64 has 64 * 2^22 packets: the size
    must be estimated and refused before anything of that size is allocated."""
    start = time.perf_counter()
    status, out, err = run(capsys, *_route("butterfly:d=22", "h-relation:h=64"))
    assert time.perf_counter() - start < 5
    assert_user_error(status, out, err, "more than this tool handles")


def test_too_many_packets_are_refused_before_the_packets_are_allocated(capsys):
    """BF(15) itself is small (about 2 million links), but an h-relation with h = 320 has 10.5 million
    packets and Valiant paths of 30 hops: 315 million link crossings, over the limit. Refusing it
    must not first build the 10.5 million packets (hundreds of MB); for h = 1024 on BF(19) the
    same order of work would exhaust memory before the refusal."""
    main(_route("butterfly:d=3", "permutation:random"))  # warm up imports outside the measurement
    capsys.readouterr()
    tracemalloc.start()
    try:
        status, out, err = run(capsys, *_route("butterfly:d=15", "h-relation:h=320", "--paths", "valiant"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_user_error(status, out, err, "more than this tool handles")
    assert peak < 64 * 2**20, f"allocated {peak / 2**20:.0f} MiB before refusing"


def test_user_error_end_to_end():
    proc = run_module("route", "--network", "moebius:d=3", "--problem", "permutation:random")
    assert_user_error(proc.returncode, proc.stdout, proc.stderr, "unknown network 'moebius'", "known: ")


def test_usage_error_end_to_end():
    proc = run_module("route", "--network", "torus:k=4,n=2")
    assert_user_error(proc.returncode, proc.stdout, proc.stderr, "--problem")


@pytest.mark.parametrize(
    "argv",
    [
        ["route", "--network", "torus:k=4,n=2"],
        [],
    ],
)
def test_usage_error_hint_names_a_working_help_command(argv, capsys):
    """A usage error ends with '(see: python -m universal ... --help)'; that command must work."""
    status, out, err = run(capsys, *argv)
    assert_user_error(status, out, err, "(see: python -m universal")
    hint = err.split("(see: python -m universal", 1)[1].rsplit(")", 1)[0].split()
    assert hint[-1] == "--help"
    with pytest.raises(SystemExit) as exit_info:
        main(hint)
    assert exit_info.value.code == 0
    assert "usage:" in capsys.readouterr().out


# --- happy paths ---------------------------------------------------------------------------------


def test_scenarios_lists_the_builtin_scenarios(capsys):
    status, out, err = run(capsys, "scenarios")
    assert status == 0 and err == ""
    names = sorted(p.stem for p in SCENARIOS.glob("*.toml"))
    assert "butterfly_hrelation" in names
    for name in names:
        assert name in out


def test_route_json_is_one_object_with_documented_keys(capsys):
    """Tornado on T(8,2) with dimension order has C = D = 3 (ceil(8/2)-1 hops in +x, three packets
    per +x link); every packet is delivered and T >= max(C, D)."""
    status, out, err = run(capsys, *_route("torus:k=8,n=2", "permutation:tornado",
                                           "--paths", "dimension-order,valiant",
                                           "--protocols", "random-rank,fifo", "--seeds", "2", "--json"))
    assert status == 0
    data = json.loads(out)
    assert {"scenario", "network", "rows"} <= set(data)
    assert data["network"] == {"name": "torus:k=8,n=2", "nodes": 64, "links": 256}
    assert len(data["rows"]) == 2 * 2 * 2
    for row in data["rows"]:
        assert ROW_KEYS <= set(row)
        assert row["n"] == row["delivered"] == 64
        assert row["lower_bound"] == max(row["C"], row["D"])
        assert row["T"] >= row["lower_bound"]
        assert row["T_over_CD"] == pytest.approx(row["T"] / (row["C"] + row["D"]), abs=1e-4)
        assert row["seed"] in (0, 1)
    dor = [r for r in data["rows"] if r["paths"] == "dimension-order"]
    assert {(r["C"], r["D"]) for r in dor} == {(3, 3)}
    assert {r["protocol"] for r in data["rows"]} == {"random-rank", "fifo"}
    assert {r["bound_expr"] for r in data["rows"] if r["protocol"] == "random-rank"} == {"C + D + log n"}


def test_route_table_by_default(capsys):
    status, out, err = run(capsys, *_route("hypercube:d=4", "permutation:transpose", "--protocols", "fifo"))
    assert status == 0
    assert "dimension-order" in out and "fifo" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


def test_same_seed_same_json(capsys):
    argv = _route("butterfly:d=5", "h-relation:h=2", "--paths", "valiant", "--seed", "7", "--json")
    first = json.loads(run(capsys, *argv)[1])
    second = json.loads(run(capsys, *argv)[1])
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
    assert strip(first["rows"]) == strip(second["rows"])
    assert {r["seed"] for r in first["rows"]} == {7}


def test_builtin_scenario_with_one_seed_as_json(capsys):
    spec = tomllib.loads((SCENARIOS / "butterfly_hrelation.toml").read_text())
    problems = spec["problem"] if isinstance(spec["problem"], list) else [spec["problem"]]
    status, out, err = run(capsys, "scenario", "butterfly_hrelation", "--seeds", "1", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["scenario"] == "butterfly_hrelation"
    assert data["network"]["name"] == spec["network"]
    assert len(data["rows"]) == len(problems) * len(spec["paths"]) * len(spec["protocols"])
    d = int(spec["network"].split("d=")[1])
    for row in data["rows"]:
        assert ROW_KEYS <= set(row)
        assert row["seed"] == 0
        assert row["delivered"] == row["n"]
        assert row["D"] == (2 * d if row["paths"] == "valiant" else d)


def test_scenario_file_resolves_relative_paths_against_its_folder(tmp_path, monkeypatch, capsys):
    """A scenario in another folder names its edge list and pairs file relative to itself; it runs
    from any working directory. The pairs are on the path 0-1-2-3 plus a chord 1-3."""
    folder = tmp_path / "experiment"
    folder.mkdir()
    write(folder / "net.edges", "0 1\n1 2\n2 3\n1 3\n")
    write(folder / "pairs.txt", "0 3\n3 0\n2 0\n")
    scenario = write(folder / "mine.toml",
                     'description = "a tiny graph"\n'
                     'network = "edgelist:net.edges"\n'
                     'problem = "pairs:file=pairs.txt"\n'
                     'paths = ["shortest"]\n'
                     'protocols = ["fifo", "random-rank"]\n'
                     'seeds = [3]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    status, out, err = run(capsys, "scenario", str(scenario), "--json")
    assert status == 0, err
    data = json.loads(out)
    assert data["scenario"] == "mine"
    assert data["network"]["nodes"] == 4 and data["network"]["links"] == 8
    assert [r["protocol"] for r in data["rows"]] == ["fifo", "random-rank"]
    for row in data["rows"]:
        # Shortest paths 0-1-3, 3-1-0, 2-1-0: D = 2, and link 1->0 carries two packets.
        assert (row["n"], row["C"], row["D"], row["seed"]) == (3, 2, 2, 3)


def test_route_json_end_to_end(tmp_path):
    proc = run_module("route", "--network", "butterfly:d=4", "--problem", "permutation:bit-reversal",
                      "--paths", "dimension-order", "--protocols", "growing-rank", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    data = json.loads(proc.stdout)
    (row,) = data["rows"]
    # Bit-fixing on bit-reversal on BF(4): C = 2^floor(3/2) = 2, D = 4 (tests/paths/test_closed_forms.py).
    assert (row["C"], row["D"], row["n"], row["delivered"]) == (2, 4, 16, 16)


def test_deadlock_is_a_result_not_an_error(capsys):
    """Tornado on an 8-ring with b = 1: every packet enters its first buffer in step 1, then each
    waits for a full buffer: a deadlock in step 2, reported with exit status 0."""
    status, out, err = run(capsys, "route", "--network", "torus:k=8,n=1", "--problem", "permutation:tornado",
                           "--paths", "dimension-order", "--protocols", "fifo", "--buffer", "1", "--json")
    assert status == 0, err
    data = json.loads(out)
    (row,) = data["rows"]
    assert data["buffer"] == 1
    assert (row["deadlock"], row["deadlock_step"], row["status"], row["delivered"]) == (True, 2, "deadlock", 0)
    assert row["blocked_packets"] == list(range(8)) and len(row["full_links"]) == 8
    status, out, err = run(capsys, "route", "--network", "torus:k=8,n=1", "--problem", "permutation:tornado",
                           "--paths", "dimension-order", "--protocols", "fifo", "--buffer", "1")
    assert status == 0 and "deadlock" in out and "Deadlock: dimension-order / fifo" in out


def test_bufferless_rows_carry_rounds_and_discards(capsys):
    status, out, err = run(capsys, "route", "--network", "butterfly:d=5", "--problem", "h-relation:h=2",
                           "--paths", "valiant", "--protocols", "trial-and-failure,duplication,fifo",
                           "--bandwidth", "1,3", "--json")
    assert status == 0, err
    data = json.loads(out)
    assert data["bandwidth"] == [1, 3]
    by = {(r["protocol"], r["bandwidth"]): r for r in data["rows"]}
    assert len(by) == 6
    for (protocol, bandwidth), row in by.items():
        assert row["status"] == "delivered"
        if protocol == "fifo":
            assert row["rounds"] is None and row["discarded"] is None and row["buffer"] is None
        else:
            # Rounds take 4D steps; the last acknowledgement comes in the last round.
            assert row["buffer"] == 0 and row["rounds"] >= 1 and row["discarded"] >= 0
            assert 4 * row["D"] * (row["rounds"] - 1) < row["T"] <= 4 * row["D"] * row["rounds"]
            assert row["last_delivery"] < row["T"]


def test_buffer_sweep_compares_sizes_on_the_same_collection(capsys):
    status, out, err = run(capsys, "route", "--network", "butterfly:d=6", "--problem", "h-relation:h=4",
                           "--paths", "valiant", "--protocols", "random-rank,trial-and-failure",
                           "--buffer", "1,unbounded", "--json")
    assert status == 0, err
    data = json.loads(out)
    assert data["buffer"] == [1, None]
    rows = data["rows"]
    # The bufferless protocol runs once (buffers do not matter to it); random rank once per size.
    assert [(r["protocol"], r["buffer"]) for r in rows] == [("random-rank", 1), ("trial-and-failure", 0),
                                                           ("random-rank", None)]
    assert len({(r["C"], r["D"]) for r in rows}) == 1
    assert rows[0]["max_buffer"] <= 1 and rows[0]["T"] >= rows[2]["T"]


def test_route_vcs_ends_the_ring_deadlock_of_one_buffer_per_link(capsys):
    """Tornado on an 8-node ring, one packet per link buffer: every packet takes a place in step 1
    and then none can move; two VCs (DOR's dateline classes, counted on the paths) deliver
    every packet, and the run says how many VCs it had."""
    argv = ["route", "--network", "torus:k=8,n=1", "--problem", "permutation:tornado", "--paths", "dimension-order",
            "--protocols", "fifo,random-rank", "--buffer", "1", "--json"]
    status, out, err = run(capsys, *argv)
    one = json.loads(out)
    assert status == 0 and "vcs" not in one and {r["delivered"] for r in one["rows"]} == {0}
    status, out, err = run(capsys, *argv, "--vcs", "2")
    two = json.loads(out)
    assert status == 0 and two["vcs"] == 2
    assert all(r["delivered"] == 8 and r["T"] >= r["D"] for r in two["rows"])
    status, out, err = run(capsys, *argv[:-1], "--vcs", "2")
    assert "V = 2 virtual channels per link" in out


def test_route_vcs_runs_adaptive_batches_on_their_star_channels(capsys):
    """MIN AD and GOAL in the batch model with one packet per VC: every packet of an 8-relation
    arrives (their *-channels, 3 VCs); with two VCs they are refused naming the count."""
    argv = ["route", "--network", "torus:k=6,n=2", "--problem", "h-relation:h=8", "--paths", "min-adaptive,goal",
            "--protocols", "fifo,random-rank", "--buffer", "1", "--json"]
    status, out, err = run(capsys, *argv, "--vcs", "3")
    data = json.loads(out)
    assert status == 0 and data["vcs"] == 3
    assert all(r["delivered"] == r["n"] for r in data["rows"]), [(r["paths"], r["delivered"]) for r in data["rows"]]
    status, out, err = run(capsys, *argv, "--vcs", "2")
    assert_user_error(status, out, err, "needs 3 virtual channels")


def test_a_route_scenario_takes_vcs_as_the_command_line_does(tmp_path, capsys):
    text = ('network = "torus:k=8,n=1"\nproblem = "permutation:tornado"\npaths = "dimension-order"\n'
            'protocols = "fifo"\nbuffer = 1\nvcs = 2\n')
    (tmp_path / "ring.toml").write_text(text)
    status, out, err = run(capsys, "scenario", str(tmp_path / "ring.toml"), "--json")
    data = json.loads(out)
    assert status == 0 and data["vcs"] == 2 and data["rows"][0]["delivered"] == 8
    (tmp_path / "bad.toml").write_text(text.replace("vcs = 2", 'vcs = "two"'))
    status, out, err = run(capsys, "scenario", str(tmp_path / "bad.toml"))
    assert_user_error(status, out, err, "'vcs' must be an integer")


@pytest.mark.parametrize("extra, fragment", [
    (["--vcs", "0"], "positive integer"),
    (["--vcs", "65"], "between 1 and 64"),
    (["--vcs", "1"] + ["--paths", "valiant", "--vcs", "2"], "needs 4 virtual channels"),
    (["--network", "butterfly:d=3", "--vcs", "2"], "not on butterfly"),
    (["--vcs", "2", "--trace", "--protocols", "trial-and-failure"], "use random-rank, growing-rank, fifo"),
])
def test_route_vcs_bad_input(extra, fragment, tmp_path, capsys):
    from tests.test_bad_inputs import assert_refused

    argv = ["route", "--network", "torus:k=4,n=2", "--problem", "h-relation:h=2", "--buffer", "1", *extra]
    line = assert_refused(argv, tmp_path, capsys)
    assert fragment in line, line


PNG = b"\x89PNG\r\n\x1a\n"


def test_route_trace_prints_every_step(capsys):
    status, out, err = run(capsys, "route", "--network", "butterfly:d=3", "--problem", "permutation:bit-reversal",
                           "--paths", "dimension-order", "--protocols", "random-rank", "--trace")
    assert status == 0, err
    # D = 3 and C = 2 on BF(3) bit-reversal: at least 3 steps, at most C + D - 1 = 4 with one contention each.
    assert "step 1" in out and "step 3" in out and "lost to" in out and "T = " in out
    status, out, err = run(capsys, "route", "--network", "butterfly:d=3", "--problem", "permutation:bit-reversal",
                           "--trace", "--json")
    assert status == 0 and json.loads(out)["steps"]


@pytest.mark.parametrize("extra, fragment", [
    (["--protocols", "fifo,random-rank"], "--protocols"),
    (["--seeds", "2"], "--seeds"),
    (["--bandwidth", "1,2"], "--bandwidth"),
])
def test_trace_follows_one_run_only(extra, fragment, capsys):
    status, out, err = run(capsys, "route", "--network", "butterfly:d=3", "--problem", "permutation:random",
                           "--trace", *extra)
    assert status == 2 and fragment in err and "Traceback" not in err


def test_trace_refuses_large_instances(capsys):
    status, out, err = run(capsys, "route", "--network", "butterfly:d=8", "--problem", "permutation:random",
                           "--trace")
    assert status == 2 and "small instances" in err


def test_plots_from_route_scenario_load_and_worstcase(tmp_path, capsys):
    sweep = write(tmp_path / "tiny.toml", 'network = "butterfly:d={d}"\nproblem = "h-relation:h=1"\n'
                                          'paths = ["dimension-order", "valiant"]\nprotocols = "fifo"\n'
                                          '[sweep]\nd = [3, 4, 5]\n')
    commands = {
        "route.png": ["route", "--network", "butterfly:d=4", "--problem", "h-relation:h=2", "--paths", "valiant",
                      "--protocols", "fifo,trial-and-failure"],
        "sweep.png": ["scenario", str(sweep), "--out", str(tmp_path / "tiny.jsonl")],
        "load.png": ["load", "--network", "torus:k=6,n=2", "--routing", "dor,romm",
                     "--traffic", "tornado,random-perms:50"],
        "worst.svg": ["worstcase", "--network", "torus:k=5,n=2", "--routing", "romm"],
        "mesh.png": ["load", "--network", "mesh:k=4,n=2", "--routing", "dimension-order", "--traffic", "transpose"],
    }
    for name, argv in commands.items():
        status, out, err = run(capsys, *argv, "--plot", str(tmp_path / name))
        assert status == 0, err
        assert f"plot: {tmp_path / name}" in err
    for name in ("route.png", "sweep.png", "load.png", "load.histogram.png", "mesh.png"):
        data = (tmp_path / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 10_000
    assert "<svg" in (tmp_path / "worst.svg").read_text()[:2000]


def test_bad_plot_file_is_refused_before_any_work(tmp_path, capsys):
    status, out, err = run(capsys, "route", "--network", "butterfly:d=4", "--problem", "h-relation:h=2",
                           "--plot", str(tmp_path / "figure.jpg"))
    assert status == 2 and "must end in .png or .svg" in err
    assert out == "" and not list(tmp_path.iterdir())


def test_variants_of_one_protocol_or_path_system_stay_apart(capsys):
    status, out, err = run(capsys, "route", "--network", "butterfly:d=5", "--problem", "h-relation:h=2",
                           "--paths", "valiant", "--protocols", "duplication,duplication:copies=1",
                           "--bandwidth", "2", "--json")
    assert status == 0, err
    rows = json.loads(out)["rows"]
    assert [r["protocol"] for r in rows] == ["duplication", "duplication:copies=1"]
    status, out, err = run(capsys, "route", "--network", "butterfly:d=5", "--problem", "h-relation:h=2",
                           "--paths", "valiant,valiant:base=shortest", "--protocols", "fifo")
    assert status == 0 and "valiant:base=shortest" in out


def test_csv_output_has_one_line_per_row(tmp_path, capsys):
    import csv
    import io

    status, out, err = run(capsys, "route", "--network", "butterfly:d=4", "--problem", "h-relation:h=1",
                           "--paths", "dimension-order,valiant", "--protocols", "fifo,trial-and-failure",
                           "--seeds", "2", "--csv")
    assert status == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 * 2 * 2 and ROW_KEYS <= set(rows[0])
    status, out, err = run(capsys, "route", "--network", "butterfly:d=4", "--problem", "h-relation:h=1", "--json")
    as_json = json.loads(out)["rows"][0]
    status, out, err = run(capsys, "route", "--network", "butterfly:d=4", "--problem", "h-relation:h=1", "--csv")
    (as_csv,) = list(csv.DictReader(io.StringIO(out)))
    assert {k: str(v) for k, v in as_json.items() if k not in ("seconds",) and v is not None} == \
        {k: v for k, v in as_csv.items() if k in as_json and k != "seconds" and v != ""}

    sweep = write(tmp_path / "tiny.toml", 'network = "butterfly:d={d}"\nproblem = "h-relation:h=1"\n'
                                          'paths = "valiant"\nprotocols = "fifo"\n[sweep]\nd = [3, 4]\n')
    status, out, err = run(capsys, "scenario", str(sweep), "--out", str(tmp_path / "r.jsonl"), "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert status == 0 and [r["d"] for r in rows] == ["3", "4"] and rows[1]["network"] == "butterfly:d=4"

    status, out, err = run(capsys, "worstcase", "--network", "torus:k=5,n=2", "--routing", "dor,romm", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert status == 0 and [r["routing"] for r in rows] == ["dor", "romm"]
    assert sorted(json.loads(rows[0]["permutation"])) == list(range(25))

    status, out, err = run(capsys, "load", "--network", "torus:k=5,n=2", "--routing", "dor",
                           "--traffic", "uniform,tornado", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert status == 0 and [(r["table"], r["traffic"]) for r in rows] == [("load", "uniform"), ("load", "tornado")]


def test_json_and_csv_exclude_each_other(capsys):
    status, out, err = run(capsys, "route", "--network", "butterfly:d=4", "--problem", "h-relation:h=1",
                           "--json", "--csv")
    assert status == 2 and "not allowed" in err


def test_analyze_reports_the_expected_congestion_of_every_path_system(capsys):
    argv = ("route", "--network", "hypercube:d=4", "--problem", "permutation:transpose",
            "--paths", "dimension-order,valiant,random-shortest", "--protocols", "fifo", "--analyze")
    status, out, _ = run(capsys, *argv, "--json")
    assert status == 0
    systems = {p["paths"]: p for p in json.loads(out)["path_systems"]}
    # Bit-fixing: every link 1/2 of a packet per random function; Valiant: two such passes.
    assert systems["dimension-order"]["exact"] == "1/2"
    assert systems["valiant"]["exact"] == "1"
    assert systems["random-shortest"] == {"paths": "random-shortest", "expected_congestion": 0.5, "exact": "1/2",
                                          "error": 0.0, "link": "0->1", "host": "hypercube:d=4",
                                          "how": "exact, pair loads"}
    status, out, _ = run(capsys, *argv)
    assert status == 0
    assert "expected congestion over random functions" in out and "exact, all 256 pairs of both passes" in out


def test_analyze_explains_why_explicit_paths_have_no_expected_congestion(tmp_path, capsys):
    paths = write(tmp_path / "paths.txt", "0 1\n1 2\n")
    pairs = write(tmp_path / "pairs.txt", "0 1\n1 2\n")
    status, out, _ = run(capsys, "route", "--network", "mesh:k=3,n=1", "--problem", f"pairs:file={pairs}",
                         "--paths", f"explicit:file={paths}", "--protocols", "fifo", "--analyze", "--json")
    assert status == 0
    (entry,) = json.loads(out)["path_systems"]
    assert entry["expected_congestion"] is None and "explicit paths belong to one problem" in entry["how"]
