"""``universal design`` (issue 15): JSON contract, the saved routing judged by ``worstcase`` and
``load`` (two methods, one answer), ``route`` on a designed routing, and bad input."""

from __future__ import annotations

import json

import pytest

from tests.test_cli import assert_user_error, run


def _json(capsys, *argv: str) -> dict:
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    return json.loads(out)


def test_design_saves_a_routing_that_worstcase_and_load_confirm(capsys, tmp_path):
    saved = tmp_path / "opt6.routing"
    d = _json(capsys, "design", "--network", "torus:k=6,n=2", "--then", "locality", "--save", str(saved), "--json")
    assert {"network", "objective", "paths", "throughput_worst", "throughput_average", "locality",
            "status", "seconds"} <= set(d)
    assert d["lp_throughput"] == pytest.approx(0.5, abs=1e-6)
    wc = _json(capsys, "worstcase", "--network", "torus:k=6,n=2", "--routing", f"lp:file={saved}", "--json")
    assert wc["rows"][0]["throughput"] == pytest.approx(d["lp_throughput"], abs=1e-6)
    ld = _json(capsys, "load", "--network", "torus:k=6,n=2", "--routing", f"lp:file={saved}",
               "--traffic", "uniform", "--json")
    assert ld["rows"][0]["locality"] == pytest.approx(d["locality"], abs=1e-6)


def test_route_draws_paths_from_a_designed_routing(capsys, tmp_path):
    saved = tmp_path / "opt4.routing"
    run(capsys, "design", "--network", "torus:k=4,n=2", "--then", "locality", "--save", str(saved), "--json")
    status, out, err = run(capsys, "route", "--network", "torus:k=4,n=2", "--problem", "permutation:random",
                           "--paths", f"lp:file={saved},mix:dor=0.5,ival=0.5", "--protocols", "fifo", "--json")
    assert status == 0, err
    assert "lp:file=" in out and "mix:dor=0.5,ival=0.5" in out


def test_tradeoff_json_has_a_curve(capsys):
    d = _json(capsys, "design", "--network", "torus:k=4,n=2", "--tradeoff", "3", "--json")
    thr = [p["lp_throughput"] for p in d["curve"]]
    assert thr == sorted(thr) and len(thr) == 3
    assert d["algorithms"]["dor"]["throughput_worst"] == pytest.approx(thr[0], abs=1e-6)


@pytest.mark.parametrize("argv,fragment", [
    (["design", "--network", "mesh:k=4,n=2"], "tori"),
    (["design", "--network", "torus:k=4,n=2", "--locality", "0.5"], "at least 1"),
    (["design", "--network", "torus:k=3,n=4", "--paths", "2turn"], "infeasible"),
    (["design", "--network", "torus:k=4,n=2", "--plot", "x.png"], "--tradeoff"),
    (["worstcase", "--network", "torus:k=4,n=2", "--routing", "mix:dor=0.5,ival=0.6"], "sum to 1"),
    (["worstcase", "--network", "torus:k=4,n=2", "--routing", "lp:file=/nonexistent.routing"], "cannot read"),
])
def test_bad_input_is_one_error_line(capsys, argv, fragment):
    assert_user_error(*run(capsys, *argv), fragment)


def test_broken_file_is_one_error_line(capsys, tmp_path):
    saved = tmp_path / "opt4.routing"
    run(capsys, "design", "--network", "torus:k=4,n=2", "--save", str(saved), "--json")
    assert_user_error(*run(capsys, "worstcase", "--network", "torus:k=6,n=2", "--routing", f"lp:file={saved}"),
                      "designed for torus:k=4,n=2")
    data = json.loads(saved.read_text())
    first = next(iter(data["flows"]["1,0"]))
    data["flows"]["1,0"][first] += 1
    saved.write_text(json.dumps(data))
    assert_user_error(*run(capsys, "worstcase", "--network", "torus:k=4,n=2", "--routing", f"lp:file={saved}"),
                      "not conserved")


def test_save_does_not_replace_a_file_it_does_not_own(capsys, tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n")
    assert_user_error(*run(capsys, "design", "--network", "torus:k=4,n=2", "--save", str(other)),
                      "not a saved routing")
    assert other.read_text() == "my notes\n"


def test_openloop_accepts_designed_and_mixed_routings(capsys):
    d = _json(capsys, "openloop", "--network", "torus:k=4,n=2", "--routing", "2turn,mix:dor=0.5,ival=0.5",
              "--loads", "0.2", "--window", "100", "--json")
    assert {r["routing"] for r in d["rows"]} == {"2turn", "mix:dor=0.5,ival=0.5"}


def test_the_table_says_the_solver_verdict_in_words_and_defines_h_and_l(capsys):
    status, out, err = run(capsys, "design", "--network", "torus:k=4,n=2", "--locality", "1.2")
    assert status == 0, err
    flat = " ".join(out.split())
    assert "HiGHS: optimal" in flat and "Status 7" not in flat
    assert "H_avg / minimal; H_avg: mean path length" in flat
    assert "L: constraint H_avg <= L x minimal" in flat
    data = _json(capsys, "design", "--network", "torus:k=4,n=2", "--locality", "1.2", "--json")
    assert "HiGHS Status 7: Optimal" in data["status"]      # scipy's whole message stays in the JSON
