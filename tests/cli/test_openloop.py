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


@pytest.mark.parametrize("argv, message", [
    (["--loads", "0"], "positive"),
    (["--loads", "1.5"], "at most one packet"),
    (["--routing", "goal", "--network", "mesh:k=4,n=2", "--loads", "0.2"], "k-ary n-cube"),
    (["--traffic", "sideways", "--loads", "0.2"], "unknown traffic"),
    (["--loads", "-0.1"], "positive"),
    (["--loads", "0.6", "--network", "torus:k=4,n=2"], "1.2 packets"),     # capacity is 2 packets there
    (["--routing", "goal", "--network", "hypercube:d=4", "--loads", "0.2"], "k-ary n-cube"),
    (["--loads", "0.2", "--window", "5"], "too short"),
    (["--loads", "0.0001", "--window", "100"], "too short"),    # 0.01 packets per node in the window
    (["--loads", "0.2", "--injection", "bursty"], "unknown injection"),
    (["--saturation", "--plot", "x.png"], "--loads"),
])
def test_bad_input_is_one_error_line(capsys, argv, message):
    base = ["openloop", "--network", "torus:k=8,n=2"]
    assert main(base + argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0]
