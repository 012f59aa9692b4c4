"""``universal openloop`` from the command line: JSON rows, the saturation table beside the exact
analysis, and bad input as one ``error:`` line with exit status 2."""

from __future__ import annotations

import json

import pytest

from universal.cli import main


def run_json(capsys, *argv) -> dict:
    assert main(["openloop", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_load_sweep_gives_the_issue_keys(capsys):
    data = run_json(capsys, "--network", "torus:k=8,n=1", "--routing", "dor,min-adaptive", "--traffic", "tornado",
                    "--loads", "0.2,0.5", "--window", "600")
    keys = {"routing", "traffic", "offered", "accepted", "accepted_min", "latency_mean", "latency_p50",
            "latency_p99", "hops_mean", "stable"}
    assert len(data["rows"]) == 4 and all(keys <= set(r) for r in data["rows"])
    by = {(r["routing"], r["offered"]): r for r in data["rows"]}
    # DOR sends all tornado traffic 3 hops the same way: 0.5 is beyond its 1/3, 0.2 is not
    assert by[("dor", 0.2)]["stable"] and by[("dor", 0.2)]["hops_mean"] == 3.0
    assert not by[("dor", 0.5)]["stable"] and by[("dor", 0.5)]["latency_mean"] is None
    assert by[("dor", 0.5)]["accepted"] == pytest.approx(1 / 3, rel=0.05)


def test_saturation_rows_carry_the_exact_value_and_the_ratio(capsys):
    data = run_json(capsys, "--network", "torus:k=8,n=1", "--routing", "dor,goal", "--traffic", "tornado",
                    "--saturation", "--injection", "poisson", "--window", "1500", "--tolerance", "0.1")
    dor, goal = data["rows"]
    assert dor["analytic"] == "1/3" and goal["analytic"] is None and goal["ratio"] is None
    assert 0.85 <= dor["ratio"] <= 1.02
    # at offered 0.02 a tornado packet rarely waits: latency just above its 3 hops
    assert dor["hops_mean"] == 3.0 and 3.0 <= dor["zero_load_latency"] <= 3.1


def test_saturation_of_file_traffic_has_the_analytic_value_as_load_computes_it(capsys, tmp_path, monkeypatch):
    # Tornado on the 8-ring written out as a permutation file (source destination pairs) and as a
    # matrix file: DOR's exact Θ is 1/3 (every packet crosses 3 of the + channels), as for the name.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tornado.perm").write_text("".join(f"{s} {(s + 3) % 8}\n" for s in range(8)))
    (tmp_path / "tornado.matrix").write_text("".join(" ".join("1" if d == (s + 3) % 8 else "0" for d in range(8))
                                                     + "\n" for s in range(8)))
    traffics = "permutation:file=tornado.perm,matrix:file=tornado.matrix,booksim-tornado"
    data = run_json(capsys, "--network", "torus:k=8,n=1", "--traffic", traffics, "--saturation",
                    "--injection", "poisson", "--window", "300", "--tolerance", "0.2")
    assert [r["analytic"] for r in data["rows"]] == ["1/3", "1/3", "1/3"]
    assert main(["load", "--network", "torus:k=8,n=1", "--routing", "dor", "--traffic", traffics, "--json"]) == 0
    assert [r["throughput_exact"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["1/3"] * 3


@pytest.mark.parametrize("argv, message", [
    (["--loads", "0"], "positive"),
    (["--loads", "1.5"], "at most one packet"),
    (["--routing", "goal", "--network", "mesh:k=4,n=2", "--loads", "0.2"], "k-ary n-cube"),
    (["--traffic", "sideways", "--loads", "0.2"], "unknown traffic"),
    (["--loads", "-0.1"], "positive"),
    # capacity is 2 packets per node per step there: the user's 0.6, the packets, and the way out
    (["--loads", "0.6", "--network", "torus:k=4,n=2"], "offered load 0.6 (of capacity) is 1.2 packets"),
    (["--loads", "0.6", "--network", "torus:k=4,n=2"], "or a load of at most 0.5)"),
    (["--loads", "0.5", "--network", "torus:k=4,n=2", "--injection", "on-off"], "a load below 0.5"),
    (["--loads", "1.5", "--units", "packets"], "offered load 1.5 packets per node per step; bernoulli"),
    (["--loads", "0.2", "--network", "butterfly:d=3"], "open-loop runs need traffic between all nodes"),
    (["--routing", "goal", "--network", "hypercube:d=4", "--loads", "0.2"], "k-ary n-cube"),
    (["--loads", "0.2", "--window", "5"], "too short"),
    (["--loads", "0.0001", "--window", "100"], "too short"),    # 0.01 packets per node in the window
    (["--loads", "0.2", "--injection", "bursty"], "unknown injection"),
    (["--saturation", "--plot", "x.png"], "--loads"),
    # virtual channels: none, fewer than the routing's classes, a routing without a scheme
    (["--loads", "0.2", "--buffer", "1", "--vcs", "0"], "positive integer"),
    (["--loads", "0.2", "--buffer", "1", "--routing", "val", "--vcs", "3"], "val needs 4 virtual channels"),
    (["--loads", "0.2", "--buffer", "1", "--routing", "rlb", "--vcs", "4"], "rlb needs 6 virtual channels"),
    (["--loads", "0.2", "--buffer", "1", "--routing", "goal", "--vcs", "2"], "goal needs 3 virtual channels"),
    (["--loads", "0.2", "--buffer", "1", "--routing", "ugal", "--vcs", "4"], "ugal needs 6 virtual channels"),
    (["--loads", "0.2", "--buffer", "1", "--vcs", "65"], "between 1 and 64"),
])
def test_bad_input_is_one_error_line(capsys, argv, message):
    base = ["openloop", "--network", "torus:k=8,n=2"]
    assert main(base + argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0]


RING = ["openloop", "--network", "torus:k=8,n=1", "--routing", "dor,goal", "--traffic", "tornado,uniform",
        "--loads", "0.2,0.5", "--seeds", "2", "--window", "300"]


def test_a_scenario_file_with_two_workers_gives_the_rows_of_the_command(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ring.toml").write_text('kind = "openloop"\nnetwork = "torus:k=8,n=1"\nrouting = ["dor", "goal"]\n'
                                        'traffic = ["tornado", "uniform"]\nloads = [0.2, 0.5]\nseeds = 2\n'
                                        'window = 300\n')
    assert main([*RING, "--json", "--out", "one.jsonl"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["scenario", "ring.toml", "--json", "--jobs", "2", "--out", "two.jsonl"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert json.dumps(two["rows"]) == json.dumps(one["rows"]) and len(one["rows"]) == 16
    lines = [(tmp_path / name).read_text().splitlines() for name in ("one.jsonl", "two.jsonl")]
    assert lines[0][1:] == lines[1][1:]  # the same cell lines; the headers name their commands
    assert one["results_file"] == "one.jsonl" and one["resumed_cells"] == 0
    # a second look at finished results runs nothing
    assert main(["scenario", "ring.toml", "--json", "--out", "two.jsonl", "--resume"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["resumed_cells"] == 16 and json.dumps(again["rows"]) == json.dumps(one["rows"])
    assert main(["scenario", "ring.toml", "--out", "two.jsonl", "--resume"]) == 0
    assert "results: two.jsonl (16 cells read back, 0 computed)" in capsys.readouterr().out


@pytest.mark.parametrize("other", [
    ["openloop", "--network", "torus:k=8,n=1", "--routing", "dor", "--traffic", "tornado", "--loads", "0.2",
     "--window", "300"],
    ["scenario", "sweep.toml"],
])
def test_resume_on_a_file_from_another_command_is_one_error_line(tmp_path, monkeypatch, capsys, other):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sweep.toml").write_text('network = "butterfly:d={d}"\nproblem = "h-relation:h=1"\n'
                                         'paths = ["valiant"]\nprotocols = ["fifo"]\n[sweep]\nd = [3]\n')
    assert main([*other, "--out", "r.jsonl", "--json"]) == 0
    capsys.readouterr()
    before = (tmp_path / "r.jsonl").read_bytes()
    assert main([*RING, "--out", "r.jsonl", "--resume"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: results file 'r.jsonl' was computed with other settings")
    assert f"(by: universal {other[0]}" in err[0] and captured.out == ""
    assert (tmp_path / "r.jsonl").read_bytes() == before


@pytest.mark.parametrize("argv, message", [
    (["--resume"], "name it with --out FILE"),
    (["--out", "r.jsonl", "--resume", "--overwrite"], "give one of them"),
    (["--jobs", "0"], "positive integer"),
])
def test_results_options_misused_are_one_error_line(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main([*RING, *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0]
    assert list(tmp_path.iterdir()) == []


def test_too_many_seeds_are_refused_before_any_list_is_made(capsys):
    assert main(["openloop", "--network", "torus:k=8,n=1", "--loads", "0.2", "--seeds", "100000000000"]) == 2
    assert "seeds are more than this tool runs" in capsys.readouterr().err


def test_the_limited_mark_names_what_limited_the_search(capsys):
    """'+' under bernoulli: the injection process's limit (try poisson); under poisson: the links."""
    from universal.cli import main

    argv = ["openloop", "--network", "torus:k=8,n=1", "--routing", "dor", "--traffic", "neighbor", "--saturation",
            "--tolerance", "0.05"]
    assert main(argv) == 0
    assert "try --injection poisson" in " ".join(capsys.readouterr().out.split())
    assert main(argv + ["--injection", "poisson"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "fills all of a node's links" in out and "try --injection poisson" not in out


# ------------------------------------------------------- histograms, pairs, router delay (issue 24)

def test_histogram_and_pair_in_json(capsys):
    data = run_json(capsys, "--network", "torus:k=4,n=2", "--loads", "0.3", "--window", "300", "--histogram",
                    "--pair", "0,0", "1,1", "--router-delay", "1")
    row, = data["rows"]
    pair, = data["pairs"]
    assert row["histogram"]["packets"] > 0 and pair["pair"] == "0,0->1,1"
    assert pair["histogram"]["start"] >= 2 + 2            # two hops, one step of router delay each
    assert data["router_delay"] == 1


def test_histogram_tables_fit_80_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["openloop", "--network", "torus:k=4,n=2", "--routing", "min-adaptive", "--loads", "0.3",
                 "--window", "300", "--histogram", "--pair", "0,0", "1,3"]) == 0
    out = capsys.readouterr().out
    assert "Latency, min-adaptive on uniform at 0.3: all labelled packets" in out
    assert "pair 0,0->1,3" in out and "█" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_random_perms_saturation_table_and_plot(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    pytest.importorskip("matplotlib")
    plot = tmp_path / "perms.png"
    assert main(["openloop", "--network", "torus:k=4,n=2", "--traffic", "random-perms:3", "--saturation",
                 "--window", "400", "--tolerance", "0.05", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "Saturation throughput Θ of random-perms:3" in out and "Θ of 3 permutations: dor, random-perms:3" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert plot.stat().st_size > 5000


def test_histogram_plot_is_a_second_file(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "sweep.png"
    assert main(["openloop", "--network", "torus:k=4,n=2", "--loads", "0.3", "--window", "300", "--histogram",
                 "--plot", str(plot)]) == 0
    assert plot.exists() and (tmp_path / "sweep.histogram.png").stat().st_size > 5000


@pytest.mark.parametrize("argv, message", [
    (["--loads", "0.2", "--router-delay", "-1"], "router delay -1"),
    (["--loads", "0.2", "--router-delay", "1.5"], "whole number"),
    (["--loads", "0.2", "--router-delay", "nan"], "whole number"),
    (["--loads", "0.2", "--router-delay", "1e9"], "whole number"),
    (["--loads", "0.2", "--router-delay", "99999999999999999999999"], "from 0 to 10,000"),
    (["--loads", "0.2", "--traffic", "tornado", "--histogram", "--pair", "0,0", "2,2"], "sends nothing"),
    (["--loads", "0.2", "--pair", "0,0", "9,9"], "not in"),
    (["--saturation", "--histogram"], "load sweep"),
    (["--saturation", "--pair", "0,0", "1,1"], "load sweep"),
    (["--loads", "0.2", "--traffic", "random-perms:3"], "use it with --saturation"),
    (["--saturation", "--traffic", "random-perms:0"], "at least one permutation"),
    (["--saturation", "--traffic", "random-perms:x"], "takes a count"),
    (["--saturation", "--traffic", "random-perms:100000"], "at most 10,000"),
    (["--saturation", "--plot", "x.png"], "random-perms:M"),
])
def test_bad_histogram_pair_delay_and_perms_input(argv, message, tmp_path, capsys):
    from tests.test_bad_inputs import assert_refused

    line = assert_refused(["openloop", "--network", "torus:k=4,n=2", *argv], tmp_path, capsys)
    assert message in line, line


def test_virtual_channels_end_the_deadlock_of_one_buffer_per_link(capsys):
    """DOR on tornado with one packet per buffer deadlocks; with its two dateline classes it
    does not, and the run's settings say how many VCs it had."""
    base = ["--network", "torus:k=8,n=1", "--routing", "dor", "--traffic", "tornado", "--loads", "0.9",
            "--buffer", "1", "--window", "500"]
    one = run_json(capsys, *base)
    two = run_json(capsys, *base, "--vcs", "2")
    assert one["rows"][0]["status"] == "deadlock" and "vcs" not in one
    assert two["rows"][0]["status"] != "deadlock" and two["vcs"] == 2
    assert two["rows"][0]["accepted"] > 0.15
