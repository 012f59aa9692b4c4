"""Scenario files of ``kind = "design"`` (the built-in ``tdb_tradeoff`` is one): loading, a small
run through the CLI, and bad files."""

from __future__ import annotations

import json

import pytest

from tests.test_cli import assert_user_error, run
from universal.errors import UserError
from universal.scenario import load_scenario


def test_builtin_tdb_tradeoff_is_the_8ary_2cube_with_both_curves():
    sc = load_scenario("tdb_tradeoff")
    assert sc.design.network == "torus:k=8,n=2"
    assert sc.design.objectives == ["worst-case", "average-case"]
    assert sc.design.samples == 100


def test_small_design_scenario(tmp_path, capsys):
    f = tmp_path / "small.toml"
    f.write_text('kind = "design"\nnetwork = "torus:k=4,n=2"\nobjectives = ["worst-case"]\npoints = 2\nsamples = 5\n')
    status, out, err = run(capsys, "scenario", str(f), "--json")
    assert status == 0, err
    data = json.loads(out)
    curve = data["curves"]["worst-case"]
    assert curve[0]["lp_throughput"] == pytest.approx(1 / 3, abs=1e-6)
    assert curve[-1]["lp_throughput"] == pytest.approx(0.5, abs=1e-6)
    assert data["algorithms"]["2turn"]["throughput_worst"] == pytest.approx(0.5, abs=1e-6)
    assert data["above_curve"]["worst-case"]["dor"] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("text,fragment", [
    ('kind = "design"\nnetwork = "torus:k=4,n=2"\ncolour = 1\n', "unknown key"),
    ('kind = "design"\nnetwork = "torus:k=4,n=2"\nobjectives = ["best"]\n', "unknown objective"),
    ('kind = "design"\nnetwork = "torus:k=4,n=2"\npoints = 1\n', "'points'"),
    ('kind = "design"\nnetwork = "torus:k=4,n=2"\npaths = "some"\n', "'paths'"),
])
def test_bad_design_scenarios(tmp_path, capsys, text, fragment):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(UserError, match=fragment):
        load_scenario(str(f))
    assert_user_error(*run(capsys, "scenario", str(f)), fragment)
