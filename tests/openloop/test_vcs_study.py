"""Virtual channels in an open-loop study: the scenario key, the study's settings, refusal before
any run (SPEC §13)."""

from __future__ import annotations

import pytest

from universal.errors import UserError
from universal.openloop.study import OpenLoopStudy, run_study
from universal.scenario import load_scenario


def _scenario(tmp_path, extra: str):
    f = tmp_path / "vc.toml"
    f.write_text('kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\ntraffic = "tornado"\n'
                 'loads = [0.5]\nbuffer = 1\n' + extra)
    return load_scenario(str(f))


def test_the_scenario_key_sets_the_studys_vcs(tmp_path):
    study = _scenario(tmp_path, "vcs = 2\n").openloop
    assert study.vcs == 2 and study.settings()["vcs"] == 2
    assert "vcs" not in _scenario(tmp_path, "").openloop.settings()     # older results files still resume


@pytest.mark.parametrize("value", ['"two"', "true", "2.5"])
def test_a_vcs_that_is_not_an_integer_is_refused(tmp_path, value):
    with pytest.raises(UserError, match="'vcs' must be an integer"):
        _scenario(tmp_path, f"vcs = {value}\n")


def test_a_routing_short_of_classes_is_refused_before_any_run():
    study = OpenLoopStudy("torus:k=4,n=2", ["dor", "val"], ["uniform"], loads=[0.5], buffer=1, vcs=2,
                          window=300)
    with pytest.raises(UserError, match="val needs 4 virtual channels"):
        run_study(study)


def test_unbounded_buffers_make_the_classes_moot():
    """With unbounded buffers the VCs never bind: the rows are those of one buffer per link."""
    def rows(vcs):
        return run_study(OpenLoopStudy("torus:k=4,n=2", ["val"], ["tornado"], loads=[0.4], vcs=vcs,
                                       window=400)).rows[0]
    a, b = rows(1), rows(4)
    assert a["accepted"] == b["accepted"] and a["latency_mean"] == b["latency_mean"]
