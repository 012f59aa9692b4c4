"""The screened worst case over random permutations (:mod:`universal.openloop.screen`): its
minimum is the full searches' minimum, same seed and tolerance, and names the same permutation;
the permutations it does not search were judged stable at a rate at least that minimum. A small
torus with dateline VCs and short windows (seconds)."""

from __future__ import annotations

import numpy as np
import pytest

from universal.engine.creation import RunSpec
from universal.engine.measure import Measurement
from universal.engine.routes import build_router
from universal.engine.workload import OfferedTraffic, build_injection
from universal.networks import build_network
from universal.openloop.saturation import find_saturations
from universal.openloop.screen import screened_minimum

M = 8
# a coarse tolerance and short warm-ups keep the 8 full searches of the oracle to seconds
OPTIONS = dict(tolerance=0.1, buffer=2, vcs=2,
               measurement=Measurement(window=300, warmup_max=600, latency_limit=200, drain=False, overload="stop",
                                       latencies=False))


def _specs(m: int = M, seed: int = 2) -> list[RunSpec]:
    """m random permutations of the 4-ary 2-cube under DOR (dateline VCs), drawn as
    ``random-perms:M`` draws them, each search seeded with ``seed``."""
    net = build_network("torus:k=4,n=2")
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


@pytest.fixture(scope="module")
def full():
    """Every permutation's full search (the oracle)."""
    return [s.theta for s in find_saturations(_specs(), **OPTIONS)]


@pytest.fixture(scope="module")
def screened():
    return screened_minimum(_specs(), pilot=2, candidates=2, **OPTIONS)


def test_the_screened_minimum_is_the_full_searches_minimum_and_names_the_same_permutation(full, screened):
    # with seed 2 the lowest Θ is permutation 5's, below the pilot's by 4%: the screen must find it
    assert screened.theta == min(full)
    assert screened.index == int(np.argmin(full))      # the first of equal minima, as the table names it


def test_it_searches_fewer_and_each_search_is_the_full_one(full, screened):
    assert len(screened.searched) < M
    for i, sat in screened.searched.items():    # same seed, same tolerance: the same Θ
        assert sat.theta == full[i]


def test_every_permutation_not_searched_was_cleared_at_or_above_the_minimum(full, screened):
    rest = [i for i in range(M) if i not in screened.searched]
    assert rest and all(screened.cleared[i] >= 1.1 * screened.theta for i in rest)
    assert screened.steps and screened.steps[0].rate == 1.1 * min(full[:2])    # the pilot's minimum, plus the tolerance


def _study(**kwargs):
    from universal.openloop.study import OpenLoopStudy

    # a mesh: dimension order has no exact worst case there, so it gets the random permutations
    return OpenLoopStudy("mesh:k=3,n=2", ["dimension-order"], ["uniform"], saturation=True, tolerance=0.1, window=300,
                         worst_case=True, random_perms=12, **kwargs)


@pytest.fixture(scope="module")
def screened_study(tmp_path_factory):
    from universal.openloop.study import run_study

    path = tmp_path_factory.mktemp("screen") / "s.jsonl"
    return run_study(_study(screen_perms=True), results_file=path).to_json(), path


def test_a_study_screens_the_worst_case_permutations_in_one_cell_and_finds_the_full_tables_worst(screened_study):
    from universal.openloop.cells import study_cells
    from universal.openloop.study import run_study

    data, _ = screened_study
    assert [c.get("screen") for c in study_cells(_study(screen_perms=True))] == [None, True]
    row, = [r for r in data["rows"] if "screened" in r]
    # one pilot, one screen of the other 11, then a search of the 8 it left (the 3 it cleared are not)
    assert row["screened"] == 12 and row["screens"] and len(row["searched"]) < 12
    full = run_study(_study()).to_json()
    got, want = data["worst_case"][0], full["worst_case"][0]
    assert (got["theta"], got["pattern"], got["random_perms"], got["patterns"]) == \
        (want["theta"], want["pattern"], want["random_perms"], want["patterns"])
    assert got["screened"] and not want["screened"]


def test_a_screened_results_file_resumes_with_nothing_to_run_and_prints_the_screen(screened_study, capsys):
    from universal.openloop.study import run_study
    from universal.reporting import make_console
    from universal.reporting.openloop import print_openloop

    data, path = screened_study
    again = run_study(_study(screen_perms=True), results_file=path, resume=True)
    assert again.computed == 0 and again.to_json()["worst_case"] == data["worst_case"]
    print_openloop(data, make_console())
    out = capsys.readouterr().out
    assert "Screened worst case of random permutations" in out and "screened: their lowest Θ only" in out


def test_screening_without_random_permutations_is_one_error_line(tmp_path, capsys):
    from tests.test_bad_inputs import assert_refused

    line = assert_refused(["openloop", "--network", "torus:k=4,n=2", "--saturation", "--worst-case",
                           "--screen-perms"], tmp_path, capsys)
    assert "give their number with --worst-case --random-perms M" in line, line


def test_a_scenario_takes_the_screen_key(tmp_path):
    from universal.errors import UserError
    from universal.scenario import load_scenario

    f = tmp_path / "s.toml"
    head = ('kind = "openloop"\nnetwork = "torus:k=4,n=2"\nrouting = "goal"\ntraffic = "uniform"\nsaturation = true\n'
            'worst_case = true\nrandom_perms = 20\n')
    f.write_text(head + "screen_perms = true\n")
    assert load_scenario(str(f)).openloop.screen_perms
    f.write_text(head + "screen_perms = 1\n")
    with pytest.raises(UserError, match="'screen_perms' must be true or false"):
        load_scenario(str(f))


def test_permutations_that_all_saturate_at_the_injection_ceiling_end_the_screen():
    """On the 3-ary 2-cube every permutation's Θ under DOR is bernoulli's ceiling of one packet per
    node and step, so no screening run can show one to be above the minimum: the screen must still
    end (it looped for ever when a permutation stable at a ceiling equal to the minimum was not
    cleared), with the full searches' minimum."""
    import signal

    net = build_network("torus:k=3,n=2")
    router, inj = build_router("dor", net), build_injection("bernoulli")
    rng = np.random.default_rng(0)
    specs = []
    for i in range(12):
        perm = rng.permutation(net.num_nodes)
        matrix = np.zeros((net.num_nodes, net.num_nodes))
        matrix[np.arange(net.num_nodes), perm] = 1.0
        specs.append(RunSpec(OfferedTraffic(f"perm#{i}", np.ones(net.num_nodes), perm, None, matrix), router, inj, 1.0))

    def stuck(*_):
        raise AssertionError("the screen did not end within 30 s")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(30)
    try:
        got = screened_minimum(specs, pilot=2, candidates=2, **OPTIONS)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    full = [s.theta for s in find_saturations(specs, **OPTIONS)]
    assert got.theta == min(full) == 1.0 and len(got.searched) < len(specs)
