"""The experiment runner: progress reporting matches the work it announces."""

from __future__ import annotations

import pytest

from universal.experiment import Experiment, run_experiment, runs_in


@pytest.mark.parametrize("analyze", [False, True])
def test_progress_reports_every_unit_that_runs_in_counts(analyze):
    exp = Experiment(network="hypercube:d=4", problem=["permutation:transpose", "h-relation:h=2"],
                     paths=["dimension-order", "valiant"], protocols=["fifo", "trial-and-failure"],
                     seeds=[0, 1], buffer=[None, 2], analyze=analyze)
    labels: list[str] = []
    result = run_experiment(exp, progress=labels.append)
    assert len(labels) == runs_in(exp)
    # 2 problems x 2 seeds x 2 path systems x (fifo at 2 buffer sizes + trial-and-failure once)
    assert len(result.rows) == 2 * 2 * 2 * 3
    expected = [label for label in labels if label.startswith("expected congestion of ")]
    assert expected == (["expected congestion of dimension-order", "expected congestion of valiant"]
                        if analyze else [])


def _deadlocked_and_finished():
    """Tornado on an 8-ring with b = 1 deadlocks in step 2 (tests/test_cli.py); unbounded buffers finish."""
    exp = Experiment("torus:k=8,n=1", "permutation:tornado", ["dimension-order"], ["fifo"], buffer=[1, None])
    return run_experiment(exp, keep_delivery=True)


def test_a_run_that_did_not_finish_has_no_ratios_and_no_latency_statistics():
    stuck, done = _deadlocked_and_finished().rows
    assert stuck.status == "deadlock" and done.status == "delivered"
    assert (stuck.T_over_CD, stuck.T_over_maxCD, stuck.mean_latency, stuck.latency_p50, stuck.latency_p99) == (
        None, None, None, None, None)
    assert done.T_over_CD == pytest.approx(done.T / (done.C + done.D), abs=1e-4)
    assert done.mean_latency is not None


def test_the_table_shows_unfinished_ratios_as_not_applicable_and_says_why():
    from rich.console import Console

    from universal.reporting.tables import experiment_table
    console = Console(width=200, record=True)
    console.print(experiment_table(_deadlocked_and_finished()))
    text = console.export_text()
    stuck_line = next(line for line in text.splitlines() if "deadlock" in line and "│" in line)
    assert stuck_line.count("n/a") == 2  # T/(C+D) and lat (fifo has no bound: T/bound stays —)
    assert "n/a: some run deadlocked before every packet arrived" in text


def test_latency_percentiles_are_order_statistics_of_the_delivery_steps():
    import math
    exp = Experiment("hypercube:d=6", "h-relation:h=3", ["dimension-order", "valiant"], ["fifo", "random-rank"],
                     seeds=[0, 1])
    result = run_experiment(exp, keep_delivery=True)
    for row, delivery in zip(result.rows, result.deliveries):
        steps = sorted(int(d) for d in delivery)
        for q, value in ((0.5, row.latency_p50), (0.99, row.latency_p99)):
            assert value == steps[math.ceil(q * len(steps)) - 1]  # the smallest step >= q of the packets
        assert row.latency_p50 <= row.latency_p99 <= row.max_latency


def test_a_billion_seeds_are_refused_before_any_list_is_made():
    from universal.errors import UserError
    exp = Experiment("hypercube:d=3", "permutation:random", ["dimension-order"], ["fifo"], seeds=range(10**9))
    with pytest.raises(UserError, match="1,000,000,000 seeds are more than this tool runs"):
        run_experiment(exp)


@pytest.mark.parametrize("network, expected", [("torus:k=4,n=2", "dimension-order"),
                                               ("butterfly:d=3", "dimension-order"),
                                               ("petersen", "shortest")])
def test_without_paths_the_network_usual_path_system_is_used(network, expected):
    import networkx as nx

    from universal.networks import from_networkx
    net = from_networkx(nx.petersen_graph(), "petersen") if network == "petersen" else network
    result = run_experiment(Experiment(net, "permutation:random", None, ["fifo"]))
    named = run_experiment(Experiment(net, "permutation:random", [expected], ["fifo"]))
    (row,), (same,) = result.rows, named.rows
    assert row.paths == expected and (row.C, row.D, row.T) == (same.C, same.D, same.T)


def test_no_adaptive_routing_shares_a_path_systems_name():
    """run_experiment takes a path system's name as a path system without asking the open-loop
    package, which it imports only for other names: that is right only while no name is both."""
    from universal.engine.routes import ADAPTIVE_ROUTINGS
    from universal.paths import PATH_SYSTEMS
    assert set(ADAPTIVE_ROUTINGS.names()) & set(PATH_SYSTEMS.names()) == set()
    assert "goal" in ADAPTIVE_ROUTINGS.names() and "valiant" in PATH_SYSTEMS.names()
