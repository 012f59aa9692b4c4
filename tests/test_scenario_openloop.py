"""``kind = "openloop"`` scenario files: the built-in ones load, and bad keys are one clear error."""

from __future__ import annotations

from pathlib import Path

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


@pytest.mark.parametrize("name", ["goal_vc_saturation", "goal_hotspot"])
def test_the_router_scenarios_have_a_vc_scheme_for_every_routing(name):
    """GOAL's router scenarios: 8-deep VCs, one budget of 48 places per link, and every routing
    with the classes it needs within the 6 VCs (dateline classes, *-channels); CHAOS, with no
    VCs, spends the same budget on its input buffers and its shared queue."""
    from universal.engine.chaos import queue_sizes
    from universal.engine.routes import build_router
    from universal.engine.vcs import plan_vcs
    from universal.networks import build_network

    study = load_scenario(name).openloop
    assert (study.buffer, study.vcs) == (8, 6) and study.saturation
    net = build_network(study.network)
    assert "chaos" in study.routings                    # the paper's seventh (and Figure 14's fifth)
    for routing in study.routings:
        router = build_router(routing, net)
        if router.kind == "chaos":
            assert set(queue_sizes(router, study.buffer, study.vcs) // 4 + study.buffer) == {48}
            continue
        plan = plan_vcs(router, study.vcs, study.buffer)
        assert plan.capacity.sum() == 48 and plan.classes <= 6


def test_goal_vc_saturation_has_the_worst_case_column_and_ugal():
    """The paper's WC bar (Figure 6(b)): exact worst-case permutations for the oblivious routings,
    random permutations for the adaptive ones; UGAL beside the paper's seven."""
    study = load_scenario("goal_vc_saturation").openloop
    assert study.worst_case and study.random_perms >= 1 and "ugal" in study.routings


def test_goal_stability_is_figure_13s_experiment():
    """GOAL §5.5, Figure 13: GOAL and CHAOS on bit complement from below to about twice their
    saturation (about 0.5), on the paper's router (8-deep VCs, the 48-place budget) with FIFO
    source queues, under which the figure's contrast shows (docs/openloop.md, "The FIFO source queue")."""
    study = load_scenario("goal_stability").openloop
    assert study.routings == ["goal", "chaos"] and study.traffics == ["bitcomp"]
    assert (study.buffer, study.vcs, study.source_queue) == (8, 6, "fifo") and not study.saturation
    assert min(study.loads) <= 0.3 and max(study.loads) >= 1.0


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


# ------------------------------------ histogram, router_delay, pool_translates: the CLI's options as keys

HEAD = 'kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\ntraffic = "uniform"\n'


def test_the_latency_keys_load_as_the_options_of_the_command_line(tmp_path):
    f = tmp_path / "h.toml"
    f.write_text(HEAD + 'loads = [0.3]\npairs = ["0,0->1,3"]\nhistogram = true\nrouter_delay = 2\n'
                 'pool_translates = true\n')
    study = load_scenario(str(f)).openloop
    assert (study.histogram, study.router_delay, study.pool_translates) == (True, 2, True)
    plain = load_scenario("goal_latency").openloop
    assert (plain.histogram, plain.router_delay, plain.pool_translates) == (False, 0, False)
    # by its path: an installed copy's built-in scenarios may be another checkout's
    figure = load_scenario(str(Path(__file__).parent.parent / "scenarios" / "goal_latency_histogram.toml")).openloop
    assert figure.histogram and figure.pool_translates and figure.pairs == ["0,0->1,3"]


def test_a_scenario_gives_the_rows_of_the_same_command_line(tmp_path, capsys):
    import json

    from universal.cli import main

    f = tmp_path / "h.toml"
    f.write_text(HEAD + 'loads = [0.3]\nwindow = 400\npairs = ["0,0->1,3"]\nhistogram = true\nrouter_delay = 2\n'
                 'pool_translates = true\n')
    assert main(["scenario", str(f), "--json"]) == 0
    scenario = json.loads(capsys.readouterr().out)
    assert main(["openloop", "--network", "torus:k=4,n=2", "--routing", "dor", "--traffic", "uniform", "--loads",
                 "0.3", "--window", "400", "--pair", "0,0", "1,3", "--histogram", "--router-delay", "2",
                 "--pool-translates", "--json"]) == 0
    command = json.loads(capsys.readouterr().out)
    assert scenario["rows"] == command["rows"] and scenario["pairs"] == command["pairs"]
    assert scenario["router_delay"] == 2 and scenario["pool_translates"] is True
    pair, = scenario["pairs"]
    assert pair["translates"] == 16 and pair["histogram"]["packets"] == pair["packets"] > 0


@pytest.mark.parametrize("extra, message", [
    ('loads = [0.3]\nhistogram = "yes"', "'histogram' must be true or false"),
    ('loads = [0.3]\npool_translates = 1', "'pool_translates' must be true or false"),
    ('loads = [0.3]\nrouter_delay = -1', "router delay -1: expected a whole number"),
    ('loads = [0.3]\nrouter_delay = 1.5', "router delay 1.5: expected a whole number"),
    ('loads = [0.3]\nrouter_delay = true', "router delay True: expected a whole number"),
    ('loads = [0.3]\nrouter_delay = "2x"', "router delay 2x: expected a whole number"),
])
def test_bad_latency_keys_are_refused_as_the_file_loads(tmp_path, extra, message):
    f = tmp_path / "bad.toml"
    f.write_text(HEAD + extra + "\n")
    with pytest.raises(UserError, match=message):
        load_scenario(str(f))


@pytest.mark.parametrize("extra, message", [
    ('saturation = true\nhistogram = true', "latency histograms come from a load sweep (loads)"),
    ('saturation = true\npairs = ["0,0->1,1"]', "pair latencies come from a load sweep (loads)"),
    ('loads = [0.3]\ntraffic = "tornado"\npairs = ["0,0->1,1"]', "pair 0,0->1,1 sends nothing under tornado"),
    ('loads = [0.3]\npool_translates = true', "pooling translates pools the translates of named pairs"),
    ('saturation = true\npool_translates = true', "pooling translates pools the latencies of pairs in a load sweep"),
    ('loads = [0.3]\ntraffic = "transpose"\npairs = ["0,1->1,0"]\npool_translates = true',
     "traffic transpose is not translation invariant"),
])
def test_what_a_latency_key_needs_is_one_error_line(tmp_path, extra, message, capsys):
    from tests.test_bad_inputs import assert_refused

    f = tmp_path / "bad.toml"
    f.write_text(HEAD.replace('traffic = "uniform"\n', "") + extra + "\n"
                 + ("" if "traffic" in extra else 'traffic = "uniform"\n'))
    line = assert_refused(["scenario", str(f)], tmp_path, capsys)
    assert message in line, line


def test_a_histogram_scenario_plots_its_histograms_beside_the_sweep(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from universal.cli import main

    f = tmp_path / "h.toml"
    f.write_text(HEAD + 'loads = [0.3]\nwindow = 300\npairs = ["0,0->1,3"]\nhistogram = true\n')
    assert main(["scenario", str(f), "--plot", str(tmp_path / "h.png")]) == 0
    assert (tmp_path / "h.png").exists() and (tmp_path / "h.histogram.png").stat().st_size > 5000
