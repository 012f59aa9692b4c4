"""``universal load`` and ``universal worstcase`` (issue 4, SPEC §7-§8): tables, JSON, the
permutation file and its round trip through ``route``, bad input.

Expected numbers are Towles' published Table 1 ("Finding worst-case permutations for oblivious
routing algorithms"; 9-ary 2-cube, fraction of capacity) or follow from the definitions.
"""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from universal.cli import main
from universal.errors import UserError
from universal.load_analysis import (LoadAnalysis, permutation_paths, progress_total, run_load_analysis,
                                     write_permutation_file)
from universal.oblivious import Torus, worst_case

from .test_cli import assert_user_error, run, run_module

T92 = "torus:k=9,n=2"
TABLE1 = {"uniform": (1.0, 1.0), "bitcomp": (0.556, 0.362), "transpose": (0.278, 0.556),
          "tornado": (0.278, 0.278)}


def _json(capsys, *argv: str) -> dict:
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    return json.loads(out)


# --- load ------------------------------------------------------------------------------------------


def test_load_json_reproduces_table1_named_patterns(capsys):
    data = _json(capsys, "load", "--network", T92, "--routing", "dor,romm",
                 "--traffic", ",".join(TABLE1) + ",random-perms:200", "--seed", "3", "--json")
    assert data["network"] == {"name": T92, "nodes": 81, "links": 324}
    assert data["capacity_load"] == pytest.approx(10 / 9)       # (k^2 - 1) / (8k) for k = 9
    assert data["capacity_load_exact"] == "10/9"
    assert data["seed"] == 3
    rows = {(r["routing"], r["traffic"]): r for r in data["rows"]}
    assert len(rows) == len(data["rows"]) == 2 * 5
    for row in data["rows"]:
        assert {"routing", "traffic", "throughput", "max_load", "locality"} <= set(row)
        assert row["locality"] == pytest.approx(1.0)             # DOR and ROMM are minimal
        assert row["throughput"] == pytest.approx(data["capacity_load"] / row["max_load"])
    for traffic, (dor, romm) in TABLE1.items():
        assert round(rows[("dor", traffic)]["throughput"], 3) == dor
        assert round(rows[("romm", traffic)]["throughput"], 3) == romm
    for routing in ("dor", "romm"):
        rp = rows[(routing, "random-perms:200")]
        assert rp["throughput"] <= rp["mean"] <= rp["best"]
        assert sum(rp["histogram"]["counts"]) == 200
        assert "mean" not in rows[(routing, "tornado")]


def test_load_table_shows_three_digits_locality_and_histogram(capsys):
    status, out, err = run(capsys, "load", "--network", "torus:k=8,n=2", "--routing", "val,dor",
                           "--traffic", "tornado,random-perms:50")
    assert status == 0, err
    lines = [line for line in out.splitlines() if line.startswith("│")]
    assert len(lines) == 4
    val_tornado = next(line for line in lines if "val" in line and "tornado" in line)
    cells = [c.strip() for c in val_tornado.strip("│").split("│")]
    # VAL: exactly half of capacity on every permutation, paths twice minimal (issue 4)
    assert cells[2] == "0.500" and cells[4] == "2.000"
    dor_tornado = next(line for line in lines if "dor" in line and "tornado" in line)
    # minimal routing on tornado on the 8-ary 2-cube gives 1/3 of capacity
    assert [c.strip() for c in dor_tornado.strip("│").split("│")][2] == "0.333"
    dor_random = next(line for line in lines if "dor" in line and "random-perms" in line)
    assert re.search(r"[▁▂▃▄▅▆▇█]", dor_random)
    assert "capacity load = 1 = k/8 (k even)" in " ".join(out.split())


def test_same_seed_same_random_permutations(capsys):
    argv = ["load", "--network", "torus:k=5,n=2", "--routing", "romm", "--traffic", "random-perms:30", "--json"]
    first = _json(capsys, *argv, "--seed", "11")
    assert first == _json(capsys, *argv, "--seed", "11")
    other = _json(capsys, *argv, "--seed", "12")
    assert first["rows"][0]["histogram"] != other["rows"][0]["histogram"]


def test_progress_total_counts_every_unit_reported():
    """The progress bar's total is the number of units the analysis really reports."""
    for analysis in [LoadAnalysis("torus:k=6,n=2", ["dor", "romm"], ["tornado", "random-perms:7"]),
                     LoadAnalysis("torus:k=5,n=3", ["dor", "val", "rlb"], worstcase=True),
                     LoadAnalysis("torus:k=5,n=2", ["ival"], ["uniform"], worstcase=True),
                     LoadAnalysis("mesh:k=3,n=2", ["shortest", "valiant"], ["random-perms:5"], worstcase=True)]:
        done = []
        run_load_analysis(analysis, progress=done.append)
        assert sum(done) == progress_total(analysis)


# --- worstcase -------------------------------------------------------------------------------------


def test_worstcase_json_rows(capsys):
    data = _json(capsys, "worstcase", "--network", T92, "--routing", "dor,romm", "--json")
    assert data["network"]["name"] == T92 and data["capacity_load_exact"] == "10/9"
    rows = {r["routing"]: r for r in data["rows"]}
    assert list(rows) == ["dor", "romm"]
    for row in rows.values():
        assert {"routing", "throughput", "max_load", "max_load_exact", "channel", "permutation"} <= set(row)
        assert sorted(row["permutation"]) == list(range(81))
        assert row["exact"] is True
        assert row["throughput"] == pytest.approx(float(Fraction(10, 9) / Fraction(row["max_load_exact"])))
    # Table 1: DOR's worst case 0.278; ROMM's printed as 0.173, exactly (10/9)/(32/5) = 25/144
    assert round(rows["dor"]["throughput"], 3) == 0.278
    assert rows["romm"]["max_load_exact"] == "32/5"
    assert abs(rows["romm"]["throughput"] - 0.173) < 0.001


def test_show_permutation_prints_the_grid_of_the_json_permutation(capsys):
    argv = ["worstcase", "--network", "torus:k=5,n=2", "--routing", "romm"]
    perm = _json(capsys, *argv, "--json")["rows"][0]["permutation"]
    status, out, err = run(capsys, *argv, "--show-permutation")
    assert status == 0, err
    t = Torus(5, 2)
    grid = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) == 6 and cells[0].isdigit():
            grid[int(cells[0])] = cells[1:]
    assert sorted(grid) == list(range(5))
    for x in range(5):
        assert grid[x] == [t.label(perm[t.node((x, y))]) for y in range(5)]


def test_permutation_file_round_trip_through_route(tmp_path, capsys):
    """The worst permutation written by `worstcase` is routed by `route` as permutation:file=PATH.

    On an odd torus DOR is deterministic and `dimension-order` is the same routing, so the
    congestion of the routed paths is exactly the worst-case load DOR's permutation reaches."""
    target = tmp_path / "worst.txt"
    data = _json(capsys, "worstcase", "--network", T92, "--routing", "dor",
                 "--permutation-file", str(target), "--json")
    row = data["rows"][0]
    assert row["permutation_file"] == str(target)
    ids = [int(line) for line in target.read_text().splitlines() if not line.startswith("#")]
    assert ids == row["permutation"]
    routed = _json(capsys, "route", "--network", T92, "--problem", f"permutation:file={target}",
                   "--paths", "dimension-order", "--protocols", "fifo", "--json")
    (rrow,) = routed["rows"]
    assert rrow["n"] == rrow["delivered"] == 81
    assert Fraction(rrow["C"]) == Fraction(row["max_load_exact"]) == 4
    assert [p.name for p in tmp_path.iterdir()] == ["worst.txt"]     # no temporary file left


def test_permutation_files_for_several_routings(tmp_path, capsys):
    target = tmp_path / "w.txt"
    status, out, err = run(capsys, "worstcase", "--network", "torus:k=5,n=2", "--routing", "dor,romm",
                           "--permutation-file", str(target))
    assert status == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.dor.txt", "w.romm.txt"]
    assert "w.romm.txt" in out
    romm = worst_case(5, 2, "romm")
    ids = [int(x) for x in (tmp_path / "w.romm.txt").read_text().split("\n") if x and not x.startswith("#")]
    assert ids == romm.permutation.tolist()


def test_permutation_file_write_is_atomic(tmp_path, monkeypatch):
    """A failed write leaves the old file untouched and no temporary file behind."""
    target = tmp_path / "perm.txt"
    target.write_text("old\n")
    result = worst_case(5, 2, "dor")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(UserError, match="cannot write"):
        write_permutation_file(target, result)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["perm.txt"]
    monkeypatch.undo()
    write_permutation_file(target, result)
    assert [int(x) for x in target.read_text().split("\n") if x and not x.startswith("#")] == \
        result.permutation.tolist()


def test_permutation_paths_checks_the_folder_first(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        permutation_paths(tmp_path / "absent" / "p.txt", ["dor"])
    assert permutation_paths(tmp_path / "p.txt", ["dor"]) == {"dor": tmp_path / "p.txt"}


# --- bad input -------------------------------------------------------------------------------------


BAD_INPUT = {
    "unknown routing": (["load", "--network", T92, "--routing", "dor,zigzag"], "unknown routing 'zigzag'"),
    "unknown traffic": (["load", "--network", T92, "--traffic", "uniform,sideways"], "unknown traffic 'sideways'"),
    "network too big for all pairs": (["load", "--network", "mesh:k=32,n=2"], "at most 256 nodes"),
    "leveled network": (["worstcase", "--network", "butterfly:d=3"], "inputs to outputs"),
    "explicit paths are not all-pairs": (["load", "--network", "mesh:k=3,n=2", "--routing", "explicit:file=x"],
                                         "unknown routing 'explicit'"),
    "transpose on a 3-D torus": (["load", "--network", "torus:k=4,n=3", "--traffic", "transpose"], "2-D torus"),
    "unknown network": (["load", "--network", "moebius:d=3"], "unknown network"),
    "torus with k = 2": (["worstcase", "--network", "torus:k=2,n=4", "--routing", "dor"], "k >= 3"),
    "torus too large": (["worstcase", "--network", "torus:k=65,n=2"], "at most 4096"),
    "torus routing on a mesh": (["worstcase", "--network", "mesh:k=4,n=2", "--routing", "romm"], "defined on tori"),
    "random-perms without a count": (["load", "--network", T92, "--traffic", "random-perms:many"], "random-perms"),
    "too many random permutations": (["load", "--network", "torus:k=64,n=2", "--traffic", "random-perms:100000"],
                                     "more than this tool handles"),
    "missing --network": (["worstcase", "--routing", "dor"], "--network"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_line_and_status_2(case, capsys):
    argv, fragment = BAD_INPUT[case]
    status, out, err = run(capsys, *argv)
    assert_user_error(status, out, err, fragment)
    assert out == ""


def test_permutation_file_in_missing_folder_fails_before_the_work(tmp_path, capsys):
    status, out, err = run(capsys, "worstcase", "--network", "torus:k=5,n=2",
                           "--permutation-file", str(tmp_path / "no" / "p.txt"))
    assert_user_error(status, out, err, "does not exist")


def test_load_json_end_to_end(tmp_path):
    proc = run_module("load", "--network", "torus:k=6,n=2", "--routing", "ival", "--traffic", "bitcomp",
                      "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (row,) = data["rows"]
    assert row["routing"] == "ival" and row["traffic"] == "bitcomp"
    assert row["locality"] > 1


def test_uniform_throughputs_are_exact_fractions(capsys):
    """DOR balances uniform traffic exactly (throughput 1, no 0.9999999999999998); the fixed-order
    IVAL gets 15/28 on the 5-ary 2-cube."""
    out = _json(capsys, "load", "--network", "torus:k=5,n=2", "--routing", "dor,ival:order=xy", "--traffic",
                "uniform", "--json")
    dor, ival = out["rows"]
    assert (dor["throughput_exact"], dor["throughput"], dor["max_load_exact"]) == ("1", 1.0, "3/5")
    assert (ival["throughput_exact"], ival["throughput"]) == ("15/28", 15 / 28)


def test_the_worst_permutation_file_is_traffic_for_load_too(tmp_path, capsys):
    """`worstcase --permutation-file` writes one destination per line (SPEC §8); `load` reads the
    file as permutation:file= traffic and finds the same throughput: two methods, one answer."""
    target = tmp_path / "worst.txt"
    worst = _json(capsys, "worstcase", "--network", T92, "--routing", "dor", "--permutation-file", str(target),
                  "--json")["rows"][0]
    load = _json(capsys, "load", "--network", T92, "--routing", "dor", "--traffic", f"permutation:file={target}",
                 "--json")["rows"][0]
    assert load["max_load_exact"] == worst["max_load_exact"] and load["throughput"] == worst["throughput"]
