"""``route --opt``, ``optimum`` and ``routing-number`` on the command line (SPEC §12): JSON keys,
CSV columns, the schedule printed step by step, and one ``error:`` line for bad input."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from universal.cli import main
from universal.networks import build_network
from universal.optimum import replay
from universal.paths import PathCollection

OPT_KEYS = {"opt", "opt_lower", "opt_upper", "opt_status", "T_over_opt"}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


ROUTE = ["route", "--network", "butterfly:d=4", "--problem", "h-relation:h=2", "--paths", "dimension-order,valiant",
         "--protocols", "random-rank,fifo,random-delay:alpha=1"]


def test_route_opt_adds_opt_to_every_row(capsys):
    """OPT is proven here, lies between LB and every row's T, and T/OPT = T / OPT."""
    status, out, _ = run(capsys, *ROUTE, "--opt", "--json")
    assert status == 0
    rows = json.loads(out)["rows"]
    assert len(rows) == 6
    for row in rows:
        assert OPT_KEYS <= set(row)
        assert row["opt_status"] == "optimal" and row["opt"] == row["opt_lower"] == row["opt_upper"]
        assert row["lower_bound"] <= row["opt"] <= row["T"]
        assert row["T_over_opt"] == round(row["T"] / row["opt"], 4)
        assert row["R_pi"] is None
    # One OPT per path collection: the rows of a path system agree.
    assert len({(r["paths"], r["opt"]) for r in rows}) == 2


def test_route_opt_free_adds_the_routing_time_with_free_paths(capsys):
    status, out, _ = run(capsys, *ROUTE, "--opt", "free", "--json")
    rows = json.loads(out)["rows"]
    assert status == 0
    assert {r["R_pi_status"] for r in rows} == {"optimal"}
    assert all(r["R_pi"] <= r["opt"] for r in rows)


def test_route_opt_csv_has_the_opt_columns(capsys):
    status, out, _ = run(capsys, *ROUTE, "--opt", "--csv")
    assert status == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert OPT_KEYS <= set(rows[0]) and rows[0]["opt_status"] == "optimal"


def test_route_opt_table_shows_OPT_and_T_over_OPT(capsys):
    status, out, _ = run(capsys, *ROUTE, "--opt")
    assert status == 0
    assert "OPT" in out and "T/OPT" in out


def test_a_time_limit_reached_is_a_result(capsys):
    """Bounds instead of a proof: status 0, opt null, the bounds and the gap reported."""
    status, out, _ = run(capsys, "optimum", "--network", "butterfly:d=4", "--problem", "h-relation:h=3",
                         "--paths", "valiant", "--time-limit", "0.0001", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["opt_status"] == "bounds" and data["opt"] is None
    assert data["opt_lower"] < data["opt_upper"] and data["gap"] > 0


def test_optimum_schedule_replays(capsys):
    """The printed schedule of the transpose on the 3x3 mesh is a valid schedule of OPT steps on
    the dimension-order paths (checked again here from the JSON)."""
    status, out, _ = run(capsys, "optimum", "--network", "mesh:k=3,n=2", "--problem", "permutation:transpose",
                         "--schedule", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["opt_status"] == "optimal" and len(data["schedule"]) == data["opt"]
    net = build_network("mesh:k=3,n=2")
    paths = PathCollection.from_node_paths(net, data["paths_used"])
    steps = {}
    for step, moves in enumerate(data["schedule"], start=1):
        for move in moves:
            steps.setdefault(move["packet"], []).append(step)
    hop_steps = np.concatenate([steps.get(i, []) for i in range(paths.size)]).astype(np.int64)
    assert replay(paths, hop_steps, 1).makespan == data["opt"]


def test_optimum_schedule_table(capsys):
    status, out, _ = run(capsys, "optimum", "--network", "mesh:k=3,n=2", "--problem", "permutation:transpose",
                         "--schedule")
    assert status == 0
    assert "step   1:" in out and "optimal" in out


def test_routing_number_command(capsys):
    status, out, _ = run(capsys, "routing-number", "--network", "torus:k=4,n=1", "--json")
    assert status == 0
    data = json.loads(out)
    assert (data["R"], data["status"], data["classes"]) == (2, "optimal", 8)


@pytest.mark.parametrize("argv, message", [
    (["optimum", "--network", "hypercube:d=3"], "--problem"),
    (["optimum", "--network", "hypercube:d=3", "--problem", "permutation:random", "--time-limit", "0"],
     "positive number of seconds"),
    (["route", "--network", "hypercube:d=3", "--problem", "permutation:random", "--opt", "--time-limit", "0"],
     "positive number of seconds"),
    (["route", "--network", "butterfly:d=8", "--problem", "h-relation:h=8", "--opt"], "at most 1,024 packets"),
    (["route", "--network", "hypercube:d=7", "--problem", "permutation:random", "--opt", "free"],
     "at most 64 packets"),
    (["optimum", "--network", "hypercube:d=11", "--problem", "permutation:random"], "at most 1,024 packets"),
    (["routing-number", "--network", "hypercube:d=4"], "at most 8 nodes"),
    (["route", "--network", "hypercube:d=3", "--problem", "permutation:random", "--opt", "--trace"], "--trace"),
    (["scenario", "butterfly_hrelation", "--opt"], "at most 1,024 packets"),
    (["scenario", "torus_worstcase", "--opt"], "load analysis"),
    (["scenario", "protocols_vs_optimum", "--time-limit", "0"], "positive number of seconds"),
])
def test_bad_input_is_one_error_line(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err


def test_optimum_of_designed_two_turn_paths_in_a_fresh_process():
    # 2turn is designed by the LP layer, which a command on a torus must load itself: in a fresh
    # process nothing else has (in this one, other tests have imported it already)
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "universal", "optimum", "--network", "torus:k=4,n=2", "--paths",
                           "2turn", "--problem", "permutation:tornado", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["paths"] == "2turn" and result["opt"] == result["D"] == 3     # the lower bound, met
