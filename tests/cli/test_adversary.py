"""``universal adversary`` and ``kind = "adversary"`` scenarios: the saved problem reads back with
``route --problem pairs:file=F`` and gives the same times; bad input is one ``error:`` line."""

from __future__ import annotations

import json

import pytest

from universal.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_the_saved_problem_replays_in_route(capsys, tmp_path):
    saved = tmp_path / "hard.txt"
    status, out, err = run(capsys, "adversary", "--network", "butterfly:d=5", "--protocol", "fifo",
                           "--congestion", "8", "--seeds", "3", "--save", str(saved), "--json")
    assert status == 0 and "problem:" in err
    row = json.loads(out)["rows"][0]
    assert (row["C"], row["D"], row["packets"], row["T"], row["forced"]) == (8, 5, 512, 28, 28)
    assert row["T"] >= row["C"] * row["D"] / 2 and row["T"] >= 1.5 * row["T_fresh"]
    status, out, _ = run(capsys, "route", "--network", "butterfly:d=5", "--problem", f"pairs:file={saved}",
                         "--paths", "dimension-order", "--protocols", "fifo,random-rank", "--seed", "1",
                         "--seeds", "3", "--json")
    assert status == 0
    rows = json.loads(out)["rows"]
    fifo = [r["T"] for r in rows if r["protocol"] == "fifo"]
    fresh = [r["T"] for r in rows if r["protocol"] == "random-rank"]
    assert fifo == [28, 28, 28] and {r["C"] for r in rows} == {8}
    assert sum(fresh) / 3 == pytest.approx(row["T_fresh"])


def test_the_table_shows_every_cell_and_the_fit(capsys):
    status, out, _ = run(capsys, "adversary", "--network", "butterfly:d=3", "--network", "butterfly:d=4",
                         "--protocol", "fifo", "--congestion", "2,4", "--seeds", "2")
    assert status == 0
    assert out.count("fifo") >= 5 and "T ≈ 0.50·C·D" in out


@pytest.mark.parametrize("argv, message", [
    (["--network", "torus:k=4,n=2", "--protocol", "fifo", "--congestion", "2"], "runs on the butterfly"),
    (["--network", "butterfly:d=3", "--protocol", "random", "--congestion", "2"], "non-predictive"),
    (["--network", "butterfly:d=3", "--protocol", "fifo", "--congestion", "0"], "error:"),
    (["--network", "butterfly:d=3", "--protocol", "fifo,nearest-to-go", "--congestion", "2", "--save", "x.txt"],
     "one network, one congestion and one protocol"),
])
def test_bad_input_is_one_error_line(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "adversary", *argv)
    assert status == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_an_adversary_scenario_runs_and_the_built_in_one_loads(capsys, tmp_path):
    from universal.scenario import load_scenario

    assert load_scenario("adversary_growth").adversary.dims == [4, 6, 8, 10]
    file = tmp_path / "small.toml"
    file.write_text('kind = "adversary"\ndims = [2, 3]\ncongestion = [2, 4]\nprotocols = ["fifo"]\nseeds = 2\n')
    status, out, _ = run(capsys, "scenario", str(file), "--json")
    data = json.loads(out)
    assert status == 0 and len(data["rows"]) == 4 and data["seeds"] == [1, 2]
    assert data["growth"]["fifo"]["T"]["C·D"] == pytest.approx(0.5)
    file.write_text('kind = "adversary"\ndims = [2]\ncongestion = [2]\nprotocols = ["fifo"]\nwindow = 3\n')
    status, _, err = run(capsys, "scenario", str(file))
    assert status == 2 and "unknown key 'window'" in err
