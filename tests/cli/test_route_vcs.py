"""``route --vcs V[,V...]``: several VC counts compared in one run, as ``--buffer`` compares sizes.

The oracle for the rows is the single-value runs: every row of ``--vcs 1,2`` is the row that
``--vcs 1`` or ``--vcs 2`` alone makes (the engine time aside). The ring case is Exercise 17's:
tornado on the 8-node ring with one packet per link buffer deadlocks with one VC and drains in
T = 10 with DOR's two dateline classes.
"""

from __future__ import annotations

import json

import pytest

from universal.cli import main
from tests.test_bad_inputs import assert_refused

RING = ["route", "--network", "torus:k=8,n=1", "--problem", "permutation:tornado", "--paths", "dimension-order",
        "--buffer", "1"]


def _rows(capsys, *argv: str) -> tuple[dict, list[dict]]:
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    data = json.loads(out)
    return data, [{k: v for k, v in r.items() if k != "seconds"} for r in data["rows"]]


def _headers(table: str) -> list[str]:
    """The column headers of a printed table (its third line: title, top border, headers)."""
    return table.splitlines()[2].replace("┃", " ").split()


def _key(row: dict) -> tuple:
    return row["problem"], row["paths"], row["protocol"], row["seed"], row["bandwidth"], row["buffer"], row["vcs"]


@pytest.mark.parametrize("argv, values", [
    # fixed paths on a torus: no classes with V = 1, DOR's dateline classes with V = 2; a bufferless
    # protocol runs once (V = 0, as its b = 0)
    (["--network", "torus:k=4,n=2", "--problem", "h-relation:h=6", "--paths", "dimension-order",
      "--protocols", "fifo,random-rank,trial-and-failure", "--buffer", "1,2", "--seeds", "2"], ["1", "2"]),
    # FIFO VCs (with V = 1 every link buffer a FIFO): Exercise 19's head-of-line blocking
    (["--network", "mesh:k=4,n=2", "--problem", "permutation:bit-reversal", "--paths", "dimension-order",
      "--protocols", "fifo", "--buffer", "1,2", "--vc-buffer", "fifo"], ["1", "2"]),
    # adaptive routings on GOAL's *-channels (3 VCs) and one more VC
    (["--network", "torus:k=4,n=2", "--problem", "h-relation:h=4", "--paths", "min-adaptive,goal",
      "--protocols", "fifo", "--buffer", "1", "--bandwidth", "1,2"], ["3", "4"]),
])
def test_the_rows_of_a_list_are_the_rows_of_its_single_values(argv, values, capsys):
    data, rows = _rows(capsys, "route", *argv, "--vcs", ",".join(values))
    assert data["vcs"] == [int(v) for v in values]
    single = []
    for value in values:
        one, mine = _rows(capsys, "route", *argv, "--vcs", value)
        assert one.get("vcs", 1) == int(value)          # the top level names V only when not 1
        assert {r["vcs"] for r in mine} <= {int(value), 0}
        single += [r for r in mine if r["vcs"] != 0 or value == values[0]]   # a bufferless row once
    assert len(rows) == len(single) and len({_key(r) for r in rows}) == len(rows)
    by_key = {_key(r): r for r in single}
    for row in rows:
        assert row == by_key[_key(row)], _key(row)
    assert {r["vcs"] for r in rows} >= {int(v) for v in values}


def test_the_ring_deadlocks_with_one_vc_and_drains_with_two(capsys):
    data, rows = _rows(capsys, *RING, "--protocols", "fifo", "--vcs", "1,2")
    assert [(r["vcs"], r["status"]) for r in rows] == [(1, "deadlock"), (2, "delivered")]
    assert rows[0]["delivered"] == 0 and rows[0]["deadlock_step"] == 2
    assert rows[1]["T"] == 10 and rows[1]["delivered"] == 8
    assert main([*RING, "--protocols", "fifo", "--vcs", "1,2"]) == 0
    out = capsys.readouterr().out
    assert "V" in _headers(out)
    assert "virtual channels per link in column V" in out
    assert "T = 2*, 10 for V = 1, 2" in out
    assert "B = 1, b = 1, V = 1, seed 0: no packet could move in step 2" in out


def test_the_caption_says_what_a_fifo_is_with_each_value(capsys):
    assert main(["route", "--network", "mesh:k=4,n=2", "--problem", "permutation:bit-reversal", "--protocols", "fifo",
                 "--buffer", "1", "--vcs", "1,2", "--vc-buffer", "fifo"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "FIFO VCs (every VC, with V = 1 every link buffer, a FIFO of b packets whose head alone may leave)" in out


def test_one_value_keeps_the_table_without_a_v_column(capsys):
    assert main([*RING, "--protocols", "fifo", "--vcs", "2"]) == 0
    out = capsys.readouterr().out
    assert "V = 2 virtual channels per link" in out and "column V" not in out
    assert "V" not in _headers(out) and "b" not in _headers(out)


@pytest.mark.parametrize("extra, fragment", [
    (["--vcs", "0,2"], "positive integer, got 0"),
    (["--vcs", "2,0"], "positive integer, got 0"),
    (["--vcs", "1,x"], "positive integer, got 'x'"),
    (["--vcs", "1,"], "positive integer, got ''"),
    (["--vcs", "2,65"], "between 1 and 64 (got 65)"),
    (["--paths", "valiant", "--vcs", "4,2"], "needs 4 virtual channels"),
    (["--network", "butterfly:d=3", "--vcs", "1,2"], "not on butterfly"),
    (["--vcs", "1,2", "--trace"], "--trace follows one run: give one value for --vcs"),
    (["--vcs", "1,2", "--html", "view.html"], "--html draws one run: give one value for --vcs"),
])
def test_bad_values_are_one_error_line(extra, fragment, tmp_path, capsys):
    argv = ["route", "--network", "torus:k=4,n=2", "--problem", "h-relation:h=2", "--buffer", "1", *extra]
    line = assert_refused(argv, tmp_path, capsys)
    assert fragment in line, line


SCENARIO = ('network = "torus:k=8,n=1"\nproblem = "permutation:tornado"\npaths = "dimension-order"\n'
            'protocols = "fifo"\nbuffer = 1\nvcs = [1, 2]\n')


def test_a_scenario_takes_a_list_of_vcs_as_the_command_line_does(tmp_path, capsys):
    (tmp_path / "ring.toml").write_text(SCENARIO)
    _, rows = _rows(capsys, "scenario", str(tmp_path / "ring.toml"))
    _, expected = _rows(capsys, *RING, "--protocols", "fifo", "--vcs", "1,2")
    assert rows == expected
    for bad in ("vcs = [1, 0]", "vcs = []", 'vcs = [1, "two"]', "vcs = [true]"):
        (tmp_path / "bad.toml").write_text(SCENARIO.replace("vcs = [1, 2]", bad))
        line = assert_refused(["scenario", str(tmp_path / "bad.toml")], tmp_path, capsys)
        assert "'vcs' must be an integer >= 1" in line, (bad, line)


def test_a_sweep_results_file_from_before_rows_had_vcs_resumes(tmp_path, capsys):
    """Rows written before ``vcs`` was a row key ran with V = 1 (V = 0 for a bufferless protocol):
    a results file of such a sweep is read back, not refused as another version's."""
    (tmp_path / "sw.toml").write_text('network = "torus:k={k},n=1"\nproblem = "permutation:tornado"\n'
                                      'paths = "dimension-order"\nprotocols = ["fifo", "trial-and-failure"]\n'
                                      'buffer = 1\n[sweep]\nk = [6, 8]\n')
    out = tmp_path / "sw.jsonl"
    argv = ["scenario", str(tmp_path / "sw.toml"), "--out", str(out)]
    assert main([*argv, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    lines = out.read_text().splitlines()
    old = [lines[0]]
    for line in lines[1:]:
        cell = json.loads(line)
        assert {r["vcs"] for r in cell["rows"]} == {0, 1}
        for row in cell["rows"]:
            del row["vcs"]
        old.append(json.dumps(cell))
    out.write_text("\n".join(old) + "\n")
    assert main([*argv, "--resume", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["resumed_cells"] == 2
    strip = [[{k: v for k, v in r.items() if k != "seconds"} for r in c["rows"]] for c in first["cells"]]
    assert [[{k: v for k, v in r.items() if k != "seconds"} for r in c["rows"]] for c in again["cells"]] == strip
