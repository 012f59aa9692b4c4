"""``kind = "openloop"`` scenario files: the built-in ones load, and bad keys are one clear error."""

from __future__ import annotations

import pytest

from universal.errors import UserError
from universal.scenario import load_scenario


def test_the_builtin_openloop_scenarios_load():
    sat = load_scenario("goal_saturation").openloop
    assert sat.saturation and sat.injection == "poisson" and "diagonal" in sat.traffics
    lat = load_scenario("goal_latency").openloop
    assert lat.loads == [0.2] and lat.pairs == ["0,0->1,1", "0,0->1,3", "0,0->4,4"]
    flows = load_scenario("goal_three_flows").openloop
    assert flows.base_dir.name == "scenarios" and flows.loads == [0.4, 1.0]


def test_loads_may_be_a_range(tmp_path):
    f = tmp_path / "sweep.toml"
    f.write_text('kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\ntraffic = "uniform"\n'
                 'loads = "0.1:0.3:0.1"\n')
    assert load_scenario(str(f)).openloop.loads == [0.1, 0.2, 0.3]


@pytest.mark.parametrize("extra, message", [
    ('speed = 3', "unknown key 'speed'"),
    ('loads = "fast"', "a:b:step"),
    ('saturation = "yes"', "true or false"),
    ('window = "long"', "'window' must be an integer"),
    ('jobs = 0', "'jobs' must be a positive integer"),
    ('jobs = true', "'jobs' must be a positive integer"),
])
def test_bad_keys_are_refused(tmp_path, extra, message):
    f = tmp_path / "bad.toml"
    f.write_text(f'kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\ntraffic = "uniform"\n{extra}\n')
    with pytest.raises(UserError, match=message):
        load_scenario(str(f))


def test_a_scenario_names_its_default_workers_capped_at_the_cores(tmp_path, monkeypatch):
    from universal.cli.scenario import _default_jobs

    f = tmp_path / "many.toml"
    f.write_text('kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\ntraffic = "uniform"\n'
                 'saturation = true\njobs = 64\n')
    sc = load_scenario(str(f))
    assert sc.openloop.jobs == 64
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert _default_jobs(sc) == 2
    assert _default_jobs(load_scenario("goal_saturation")) == 2
    assert _default_jobs(load_scenario("goal_latency")) == 1
