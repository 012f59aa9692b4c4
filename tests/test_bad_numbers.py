"""Huge, non-finite and absurd numbers, work far too large, and results that are wrong although
well-formed: each class gets one ``error:`` line, exit status 2, no traceback, the folder
unchanged, and (nothing being computed) the refusal within two seconds (issue 22 §2).

The contract is :func:`tests.test_bad_inputs.assert_refused`; the cases are grouped by class, each
class with several of its members, so a new member of a class is one more line.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.test_bad_inputs import assert_refused
from universal.cli import main

TORUS = ["--network", "torus:k=4,n=2"]
OPENLOOP = ["openloop", *TORUS, "--routing", "dor", "--traffic", "uniform"]
LOAD = ["load", *TORUS, "--traffic", "uniform"]
FORTY_DIGITS = "1234567890123456789012345678901234567890"


def _routing_file(denominator: str, numerator: str) -> str:
    return ('{"format": "universal-routing", "version": 1, "network": "torus:k=3,n=1", '
            f'"denominator": {denominator}, "flows": {{"1": {{"0->1": {numerator}}}}}}}')


#: Class A: numbers too large or not finite. Case -> (argv, files).
HUGE_OR_NOT_FINITE = {
    "hot-spot factor of 40 digits": ([*LOAD[:-1], f"hotspot:factor={FORTY_DIGITS}", "--routing", "dor"], {}),
    "hot-spot factor of 5,000 digits": ([*LOAD[:-1], "hotspot:factor=" + "9" * 5000, "--routing", "dor"], {}),
    "matrix entries of 40 digits": ([*LOAD[:-1], "matrix:file=m.txt", "--routing", "dor"],
                                    {"m.txt": "\n".join(" ".join([FORTY_DIGITS] * 16) for _ in range(16))}),
    "a load range to infinity": ([*OPENLOOP, "--loads", "0.1:inf:0.1"], {}),
    "a NaN load": ([*OPENLOOP, "--loads", "nan"], {}),
    "a load of 1e308 from poisson sources": ([*OPENLOOP, "--loads", "1e308", "--injection", "poisson"], {}),
    "a load of 1000 from poisson sources": ([*OPENLOOP, "--loads", "1000", "--injection", "poisson"], {}),
    "an open-loop buffer of 2**63": ([*OPENLOOP, "--loads", "0.1", "--buffer", str(2**63)], {}),
    "a routing buffer of 2**63": (["route", *TORUS, "--problem", "permutation:random", "--buffer", str(2**63)], {}),
    "a bandwidth of 2**63 - 1": (["route", *TORUS, "--problem", "permutation:random",
                                  "--bandwidth", str(2**63 - 1)], {}),
    "an infinite locality bound": (["design", *TORUS, "--locality", "inf"], {}),
    "a NaN locality bound": (["design", *TORUS, "--locality", "nan"], {}),
    "2**64 tradeoff points": (["design", *TORUS, "--tradeoff", str(2**64)], {}),
    "a routing file with a 400-digit denominator": ([*LOAD[:-1], "uniform", "--network", "torus:k=3,n=1",
                                                     "--routing", "lp:file=r.json"],
                                                    {"r.json": _routing_file("9" * 400, "1")}),
    "a routing file with a 5,000-digit numerator": ([*LOAD, "--network", "torus:k=3,n=1",
                                                     "--routing", "lp:file=r.json"],
                                                    {"r.json": _routing_file("1", "9" * 5000)}),
    "a routing file nested 100,000 deep": ([*LOAD, "--network", "torus:k=3,n=1", "--routing", "lp:file=r.json"],
                                           {"r.json": '{"meta": ' + "[" * 100_000 + "]" * 100_000 + "}"}),
    "mix: weights with a huge exponent": ([*LOAD, "--routing", "mix:dor=1e999999,ival=0"], {}),
    "mix: weights with a huge negative exponent": ([*LOAD, "--routing", "mix:dor=1e-999999,ival=1"], {}),
    "a UGAL threshold of NaN": ([*OPENLOOP[:-4], "--routing", "ugal:threshold=nan", "--traffic", "uniform",
                                 "--loads", "0.1"], {}),
    "a UGAL threshold of infinity": ([*OPENLOOP[:-4], "--routing", "ugal:threshold=inf", "--traffic", "uniform",
                                      "--loads", "0.1"], {}),
}

#: Class B: work far too large, refused with an estimate before it starts.
TOO_MUCH_WORK = {
    "a load of 1e-300 (its default window)": ([*OPENLOOP, "--loads", "1e-300"], "hours"),
    "30,000 loads in a range": ([*OPENLOOP, "--loads", "0.0001:3:0.0001"], "at most 1,000"),
    "1,001 loads in a list": ([*OPENLOOP, "--loads", ",".join(f"{i / 2000:.4f}" for i in range(1, 1002))],
                              "at most 1,000"),
    "a window of 10**9 steps": ([*OPENLOOP, "--loads", "0.1", "--window", str(10**9)], "hours"),
    "a window of 10**9 steps in a saturation search": ([*OPENLOOP, "--saturation", "--window", str(10**9)], "hours"),
    "10**6 tradeoff points": (["design", *TORUS, "--tradeoff", str(10**6)], "hours"),
    "10**9 sampled permutations": (["design", *TORUS, "--objective", "average-case", "--samples", str(10**9)],
                                   "permutations"),
    "the 64-ary 2-cube's design LP": (["design", "--network", "torus:k=64,n=2"], "13 hours"),
    "the 48-ary 2-cube's design LP": (["design", "--network", "torus:k=48,n=2"], "2 hours"),
    "the 16-ary 2-cube's average-case LP": (["design", "--network", "torus:k=16,n=2", "--objective",
                                             "average-case"], "more than this tool runs"),
}


def _timed_refusal(argv: list[str], folder: Path, capsys) -> str:
    start = time.perf_counter()
    line = assert_refused(argv, folder, capsys)
    assert time.perf_counter() - start < 2.0, f"refused only after {time.perf_counter() - start:.1f} s"
    return line


@pytest.mark.parametrize("case", HUGE_OR_NOT_FINITE)
def test_huge_or_non_finite_numbers_are_refused(case, tmp_path, capsys):
    argv, files = HUGE_OR_NOT_FINITE[case]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    _timed_refusal(argv, tmp_path, capsys)


@pytest.mark.parametrize("case", TOO_MUCH_WORK)
def test_work_far_too_large_is_refused_with_an_estimate(case, tmp_path, capsys):
    argv, says = TOO_MUCH_WORK[case]
    assert says in _timed_refusal(argv, tmp_path, capsys)


def test_the_same_window_in_a_scenario_is_refused(tmp_path, capsys):
    (tmp_path / "s.toml").write_text('kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\n'
                                     'traffic = "uniform"\nloads = [0.1]\nwindow = 1000000000\n')
    assert "hours" in _timed_refusal(["scenario", "s.toml"], tmp_path, capsys)


def test_a_long_but_feasible_study_is_not_refused():
    """The estimates refuse only what is clearly too long: a 200,000-step window is fine."""
    from universal.openloop.cells import MAX_STUDY_SECONDS, estimate_seconds
    from universal.openloop.study import OpenLoopStudy
    seconds, _ = estimate_seconds(OpenLoopStudy("torus:k=8,n=2", ["dor"], ["uniform"], loads=[0.3],
                                                window=200_000))
    assert seconds < MAX_STUDY_SECONDS
    from universal.design import estimate_seconds as design_seconds
    from universal.design.lp import MAX_SECONDS
    from universal.paths.torus.geometry import Torus
    assert design_seconds(Torus(12, 2), "worst-case") < MAX_SECONDS


# --------------------------------------------------------------------------- accepted although wrong


def _run(argv: list[str], folder: Path) -> int:
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        return main(argv)
    finally:
        os.chdir(cwd)


SEEDS2 = ('network = "hypercube:d={d}"\nproblem = "permutation:random"\npaths = "dimension-order"\n'
          'protocols = "fifo"\nseeds = 2\n[sweep]\nd = [2, 3]\n')


def _sweep_lines(folder: Path, capsys) -> list[str]:
    (folder / "s.toml").write_text(SEEDS2)
    assert _run(["scenario", "s.toml", "--out", "r.jsonl", "--json"], folder) == 0
    capsys.readouterr()
    return (folder / "r.jsonl").read_text().splitlines()


def test_resume_refuses_a_cell_missing_a_seeds_row(tmp_path, capsys):
    header, first, second = _sweep_lines(tmp_path, capsys)
    cell = json.loads(first)
    cell["rows"][1] = dict(cell["rows"][0])          # seed 0 twice, seed 1 missing: the count still fits
    (tmp_path / "r.jsonl").write_text("\n".join([header, json.dumps(cell), second]) + "\n")
    line = assert_refused(["scenario", "s.toml", "--out", "r.jsonl", "--resume"], tmp_path, capsys)
    assert "seed" in line and "line 2" in line


OPENLOOP_TOML = ('kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\ntraffic = "uniform"\n'
                 'loads = [0.1]\nwindow = 300\n')


@pytest.mark.parametrize("edit,says", [
    (lambda row: row.update(status="finished"), "status"),
    (lambda row: row.update(stable=not row["stable"]), "contradicts"),
    (lambda row: row.update(seed=7), "not a cell of this study"),
])
def test_open_loop_resume_refuses_wrong_rows(tmp_path, capsys, edit, says):
    (tmp_path / "s.toml").write_text(OPENLOOP_TOML)
    assert _run(["scenario", "s.toml", "--out", "r.jsonl", "--json"], tmp_path) == 0
    capsys.readouterr()
    header, line = (tmp_path / "r.jsonl").read_text().splitlines()
    data = json.loads(line)
    edit(data["row"])
    if "seed" in says or "cell" in says:
        data["cell"]["seed"] = data["row"]["seed"]
    (tmp_path / "r.jsonl").write_text(header + "\n" + json.dumps(data) + "\n")
    assert says in assert_refused(["scenario", "s.toml", "--out", "r.jsonl", "--resume"], tmp_path, capsys)


def test_open_loop_resume_refuses_a_nan_latency(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(OPENLOOP_TOML)
    assert _run(["scenario", "s.toml", "--out", "r.jsonl", "--json"], tmp_path) == 0
    capsys.readouterr()
    header, line = (tmp_path / "r.jsonl").read_text().splitlines()
    data = json.loads(line)
    data["row"]["latency_mean"] = float("nan")
    (tmp_path / "r.jsonl").write_text(header + "\n" + json.dumps(data) + "\n")   # json.dumps writes NaN
    assert "NaN" in assert_refused(["scenario", "s.toml", "--out", "r.jsonl", "--resume"], tmp_path, capsys)


def test_a_routing_file_with_a_key_given_twice_is_refused(tmp_path, capsys):
    (tmp_path / "r.json").write_text('{"format": "universal-routing", "version": 1, "network": "torus:k=3,n=1", '
                                     '"denominator": 1, "denominator": 2, "flows": {}}')
    line = assert_refused([*LOAD, "--network", "torus:k=3,n=1", "--routing", "lp:file=r.json"], tmp_path, capsys)
    assert "twice" in line
