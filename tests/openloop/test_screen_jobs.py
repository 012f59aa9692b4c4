"""``jobs`` inside one screened worst case (:func:`universal.openloop.screen.screened_minimum`):
the screening passes and the full searches shared by worker processes give the result of one
process exactly (every verdict and Θ depends on its permutation, rate and own seed alone), and a
study or scenario's screened row is the same with ``--jobs 2``. Small cases, seconds."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import pytest

from universal.engine.creation import RunSpec
from universal.engine.measure import Measurement
from universal.engine.routes import build_router
from universal.engine.workload import OfferedTraffic, build_injection
from universal.networks import build_network
from universal.openloop import screen
from universal.openloop.saturation import find_saturations
from universal.openloop.screen import screened_minimum

M = 20
OPTIONS = dict(tolerance=0.1, buffer=2, vcs=2,
               measurement=Measurement(window=200, warmup_max=400, latency_limit=200, drain=False, overload="stop",
                                       latencies=False))


def _specs(m: int = M, seed: int = 2) -> list[RunSpec]:
    """m random permutations of the 8-node ring under DOR (dateline VCs), each search seeded with
    ``seed`` (a top-level function: a worker builds its own with it)."""
    net = build_network("torus:k=8,n=1")
    router, inj = build_router("dor", net), build_injection("bernoulli")
    rng = np.random.default_rng(seed)
    specs = []
    for i in range(m):
        perm = rng.permutation(net.num_nodes)
        matrix = np.zeros((net.num_nodes, net.num_nodes))
        matrix[np.arange(net.num_nodes), perm] = 1.0
        traffic = OfferedTraffic(f"perm#{i}", np.ones(net.num_nodes), perm, None, matrix)
        specs.append(RunSpec(traffic, router, inj, 1.0, seed=seed))
    return specs


def _summary(got) -> tuple:
    """Everything a screened minimum reports (a Saturation's runs hold arrays: their rates, verdicts)."""
    return (got.theta, got.index, got.runs, got.cleared.tolist(),
            [(s.rate, s.tested, s.unstable) for s in got.steps],
            {i: (s.theta, s.upper, s.limited, [(r.rate, r.stable) for r in s.runs]) for i, s in got.searched.items()})


def _screened(jobs: int):
    # with seed 2: the pilot's 2 searches go to 2 workers, the one pass of M - 2 = 18 runs is cut
    # in two (SPLIT_RUNS 8) and leaves 2 unstable, whose searches go to 2 workers
    return screened_minimum(_specs(), pilot=2, candidates=2, jobs=jobs, source=partial(_specs), **OPTIONS)


@pytest.fixture(scope="module")
def alone():
    return _screened(1)


def test_two_workers_give_the_screened_minimum_of_one_process(alone):
    assert alone.steps[0].tested >= 2 * screen.SPLIT_RUNS     # the first pass is split
    assert _summary(_screened(2)) == _summary(alone)


def _wrong_seed_part(source, part, indices, rates, ks, run_options, batch_runs):
    """A worker that draws its screening runs from the wrong seeds (the next run's)."""
    return part, screen._screen_runs(source(), indices, rates, [k + 1 for k in ks], run_options, batch_runs)


def test_the_comparison_sees_a_worker_that_draws_other_seeds(alone, monkeypatch):
    monkeypatch.setattr(screen, "_screen_part", _wrong_seed_part)
    assert _summary(_screened(2)) != _summary(alone)


def _wrong_seed_search(source, part, indices, search_options):
    """A worker that seeds its full searches with the next seed."""
    specs = [replace(s, seed=s.seed + 1) for s in source()]
    return part, find_saturations([specs[i] for i in indices], **search_options)


def test_the_comparison_sees_a_worker_that_searches_with_another_seed(alone, monkeypatch):
    monkeypatch.setattr(screen, "_search_part", _wrong_seed_search)
    assert _summary(_screened(2)) != _summary(alone)


def test_parts_are_contiguous_near_equal_and_never_below_the_least_share():
    cut = screen._parts
    assert cut(38, 2, 8) == [slice(0, 19), slice(19, 38)]
    assert cut(15, 2, 8) == [slice(0, 15)]                  # 2 x 7 is below 8 a worker: one part
    assert cut(30, 4, 8) == [slice(0, 10), slice(10, 20), slice(20, 30)]
    assert cut(3, 4, 1) == [slice(0, 1), slice(1, 2), slice(2, 3)]


def test_jobs_below_one_is_refused():
    from universal.errors import UserError

    with pytest.raises(UserError, match="jobs must be at least 1"):
        screened_minimum(_specs(4), jobs=0, **OPTIONS)


SCENARIO = """kind = "openloop"
network = "torus:k=4,n=2"
routing = "goal"
traffic = "uniform"
saturation = true
worst_case = true
random_perms = 20
screen_perms = true
tolerance = 0.1
window = 300
"""


def test_a_screened_row_is_the_same_from_the_command_line_in_one_process_and_a_scenario_with_two(tmp_path, capsys,
                                                                                                 monkeypatch):
    """GOAL's 20 permutations of the 4-ary 2-cube: a pilot of 2 searched by 2 workers, then one
    pass of 18 runs cut in two (what the row's screens show)."""
    import json

    from universal.cli import main

    assert main(["openloop", "--network", "torus:k=4,n=2", "--routing", "goal", "--traffic", "uniform",
                 "--saturation", "--worst-case", "--random-perms", "20", "--screen-perms", "--tolerance", "0.1",
                 "--window", "300", "--jobs", "1", "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)["rows"]
    (tmp_path / "s.toml").write_text(SCENARIO)
    monkeypatch.chdir(tmp_path)
    assert main(["scenario", "s.toml", "--jobs", "2", "--json"]) == 0
    shared = json.loads(capsys.readouterr().out)["rows"]
    row, = [r for r in shared if r.get("screen")]
    assert row["screens"][0][1] >= 2 * screen.SPLIT_RUNS
    assert json.dumps(shared) == json.dumps(alone)
