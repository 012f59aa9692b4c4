"""The worst-case column (``worst_case``; GOAL paper §5.2, Figure 6(b)): the WC of a routing is
the lowest Θ over the rows it reports, an oblivious routing's exact worst-case permutation
(Towles & Dally's matching) is searched too and its simulated Θ meets the exact value of the
ideal network, and no random permutation does worse than it. Small tori, short windows."""

from __future__ import annotations

from fractions import Fraction

import pytest

from universal.cli import main
from universal.oblivious.worstcase import worst_case
from universal.openloop.cells import study_cells
from universal.openloop.study import OpenLoopStudy, run_study
from universal.openloop.worstcase import WORST_CASE

TOLERANCE = 0.05
QUICK = dict(saturation=True, tolerance=TOLERANCE, window=1000, injection="poisson")


def _study(**kwargs) -> OpenLoopStudy:
    # One named traffic: with the exact worst case (DOR) or a random permutation (MIN AD) each
    # routing still has two patterns to take the lowest of (MIN AD's searches cost the most).
    return OpenLoopStudy("torus:k=4,n=2", ["dor", "min-adaptive"], ["tornado"],
                         **{**QUICK, "worst_case": True, "random_perms": 1, **kwargs})


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The small study, run once into a results file: (its report as JSON, the file)."""
    path = tmp_path_factory.mktemp("wc") / "wc.jsonl"
    return run_study(_study(), results_file=path).to_json(), path


def test_the_cells_add_the_exact_worst_case_or_the_random_permutations():
    study = _study()
    cells = study_cells(study)
    assert study.cell_count() == len(cells) == 2 * 1 + 1 + 1
    extra = [(c["routing"], c["traffic"], c.get("permutation")) for c in cells[1:2] + cells[3:]]
    assert extra == [("dor", WORST_CASE, None), ("min-adaptive", "random-perms:1", 0)]
    assert study_cells(_study(worst_case=False, random_perms=0)) == cells[:1] + cells[2:3]


def test_the_worst_case_is_the_lowest_theta_reported_and_names_its_pattern(saved):
    data, _ = saved
    by_routing = {s["routing"]: s for s in data["worst_case"]}
    for routing, summary in by_routing.items():
        mine = [r for r in data["rows"] if r["routing"] == routing]
        low = min(r["saturation"] for r in mine)
        assert summary["theta"] == low and summary["patterns"] == len(mine)
        named = [r for r in mine if r["saturation"] == low][0]
        assert summary["pattern"] == named["traffic"] + (f"#{named['permutation']}" if "permutation" in named else "")
    assert by_routing["dor"]["random_perms"] == 0 and by_routing["min-adaptive"]["random_perms"] == 1
    assert by_routing["min-adaptive"]["exact_theta"] is None


def test_the_exact_worst_case_permutation_saturates_where_the_analysis_says(saved):
    """Two methods for one number: the simulated Θ of DOR's worst-case permutation (unbounded
    buffers) and capacity over its max channel load, which is the matching's value."""
    data, _ = saved
    exact = worst_case(4, 2, "dor").throughput_exact
    row, = [r for r in data["rows"] if r["traffic"] == WORST_CASE]
    assert row["routing"] == "dor" and Fraction(row["analytic"]) == exact == Fraction(1, 3)
    assert row["worst_case_exact"] == float(exact)
    assert (1 - TOLERANCE) * float(exact) <= row["saturation"] <= (1 + TOLERANCE) * float(exact)


def test_no_random_permutation_is_worse_than_the_exact_worst_case():
    data = run_study(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["random-perms:2"], worst_case=True, **QUICK)).to_json()
    summary, = data["worst_case"]
    perms = [r for r in data["rows"] if "permutation" in r]
    assert len(perms) == 2
    for r in perms:           # exactly in the ideal network, and within the search's tolerance simulated
        assert r["analytic_value"] >= summary["exact_theta"]
        assert r["saturation"] >= (1 - TOLERANCE) * summary["exact_theta"]


def test_a_worst_case_results_file_resumes_with_nothing_to_run(saved):
    data, path = saved
    again = run_study(_study(), results_file=path, resume=True)
    assert again.resumed == len(data["rows"]) and again.computed == 0
    assert again.to_json()["worst_case"] == data["worst_case"]


def test_the_table_prints_the_worst_case_column(saved, capsys):
    from universal.reporting import make_console
    from universal.reporting.openloop import print_openloop

    data, _ = saved
    print_openloop(data, make_console())
    out = capsys.readouterr().out
    assert "Worst case on torus:k=4,n=2" in out and "WC perm" in out and "exact WC" in out


@pytest.mark.parametrize("argv, message", [
    (["--saturation", "--random-perms", "3"], "add --worst-case"),
    (["--loads", "0.2", "--worst-case"], "use --worst-case with --saturation"),
    (["--saturation", "--worst-case", "--random-perms", "-1"], "non-negative"),
    (["--saturation", "--worst-case", "--random-perms", "20000"], "at most 10,000"),
])
def test_bad_worst_case_input_is_one_error_line(argv, message, tmp_path, capsys):
    from tests.test_bad_inputs import assert_refused

    line = assert_refused(["openloop", "--network", "torus:k=4,n=2", *argv], tmp_path, capsys)
    assert message in line, line


def test_a_scenario_takes_the_worst_case_keys(tmp_path):
    from universal.errors import UserError
    from universal.scenario import load_scenario

    f = tmp_path / "wc.toml"
    head = 'kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "goal"\ntraffic = "uniform"\nsaturation = true\n'
    f.write_text(head + "worst_case = true\nrandom_perms = 5\n")
    study = load_scenario(str(f)).openloop
    assert study.worst_case and study.random_perms == 5
    for bad, message in (("random_perms = -1", "'random_perms' must be"), ("worst_case = 1", "true or false")):
        f.write_text(head + bad + "\n")
        with pytest.raises(UserError, match=message):
            load_scenario(str(f))


def test_main_runs_the_worst_case_from_the_command_line(capsys):
    assert main(["openloop", "--network", "torus:k=4,n=2", "--routing", "dor", "--traffic", "tornado",
                 "--saturation", "--worst-case", "--window", "1000", "--tolerance", "0.05"]) == 0
    assert "WC pattern" in capsys.readouterr().out
