"""Sweeps: cells, the streamed results file, resuming after an interruption, parallel cells."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from universal.errors import UserError
from universal.experiment import Experiment
from universal.scenario import load_scenario
from universal.sweep import Sweep, read_results, run_sweep


def small_sweep(seeds=(0, 1)) -> Sweep:
    exp = Experiment("butterfly:d={d}", ["permutation:bit-reversal", "h-relation:h=2"],
                     ["dimension-order", "valiant"], ["random-rank", "fifo"], seeds=list(seeds))
    return Sweep("small", exp, {"d": [3, 4, 5, 6]})


def rows_of(result) -> list[dict]:
    """Everything but the timing of every row, cell by cell."""
    out = []
    for cell in result.cells:
        for row in cell.rows:
            data = asdict(row)
            data.pop("seconds")
            out.append({"cell": cell.cell, **data})
    return out


class Interrupt(Exception):
    pass


def test_cells_follow_the_axes_and_fill_the_placeholders():
    sweep = small_sweep()
    assert sweep.cells() == [{"d": 3}, {"d": 4}, {"d": 5}, {"d": 6}]
    result = run_sweep(sweep)
    assert [c.network["name"] for c in result.cells] == [f"butterfly:d={d}" for d in (3, 4, 5, 6)]
    for cell in result.cells:
        d = cell.cell["d"]
        # 2 problems x 2 path systems x 2 protocols x 2 seeds; direct paths have D = d, Valiant's 2d.
        assert len(cell.rows) == 16
        assert {r.D for r in cell.rows if r.paths == "dimension-order"} == {d}
        assert {r.D for r in cell.rows if r.paths == "valiant"} == {2 * d}


def test_two_axes_make_a_grid():
    exp = Experiment("torus:k={k},n=2", "h-relation:h={h}", ["dimension-order"], ["fifo"])
    sweep = Sweep("grid", exp, {"k": [3, 4], "h": [1, 2]})
    result = run_sweep(sweep)
    assert [c.cell for c in result.cells] == [{"k": 3, "h": 1}, {"k": 3, "h": 2}, {"k": 4, "h": 1}, {"k": 4, "h": 2}]
    assert [c.rows[0].n for c in result.cells] == [9, 18, 16, 32]


def test_interrupted_sweep_resumes_without_recomputing_and_ends_identical(tmp_path):
    path = tmp_path / "results.jsonl"
    whole = run_sweep(small_sweep())

    def stop_after_two(done, total):
        if done == 2:
            raise Interrupt

    with pytest.raises(Interrupt):
        run_sweep(small_sweep(), results_file=path, progress=stop_after_two)
    kept = read_results(path, small_sweep())
    assert sorted(json.loads(k)["d"] for k in kept) == [3, 4]  # the finished cells survived

    resumed = run_sweep(small_sweep(), results_file=path, resume=True)
    assert (resumed.resumed, resumed.computed) == (2, 2)
    assert rows_of(resumed) == rows_of(whole)
    # The results file now holds every cell, in cell order, after its header line.
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["sweep"] == "small"
    assert [json.loads(line)["cell"]["d"] for line in lines[1:]] == [3, 4, 5, 6]

    again = run_sweep(small_sweep(), results_file=path, resume=True)
    assert (again.resumed, again.computed) == (4, 0)
    assert rows_of(again) == rows_of(whole)


def test_overwrite_starts_the_results_file_over(tmp_path):
    path = tmp_path / "results.jsonl"
    run_sweep(small_sweep(), results_file=path)
    fresh = run_sweep(small_sweep(), results_file=path, overwrite=True)
    assert (fresh.resumed, fresh.computed) == (0, 4)


def test_running_the_same_sweep_again_shows_its_stored_results(tmp_path):
    """Exercises 2 and 11 ask students to run a finished sweep again: the same settings resume."""
    path = tmp_path / "results.jsonl"
    first = run_sweep(small_sweep(seeds=(0,)), results_file=path)
    before = path.read_bytes()
    again = run_sweep(small_sweep(seeds=(0,)), results_file=path)
    assert (again.resumed, again.computed) == (len(first.cells), 0)
    assert rows_of(again) == rows_of(first) and path.read_bytes() == before


def test_an_existing_results_file_of_other_settings_needs_overwrite(tmp_path):
    path = tmp_path / "results.jsonl"
    run_sweep(small_sweep(seeds=(0,)), results_file=path)
    before = path.read_bytes()
    with pytest.raises(UserError, match="other settings.*--overwrite"):
        run_sweep(small_sweep(seeds=(0, 1)), results_file=path)
    assert path.read_bytes() == before


def test_resume_refuses_results_of_other_settings(tmp_path):
    path = tmp_path / "results.jsonl"
    run_sweep(small_sweep(seeds=(0,)), results_file=path)
    with pytest.raises(UserError, match="other settings"):
        run_sweep(small_sweep(seeds=(0, 1)), results_file=path, resume=True)


def test_resume_refuses_a_file_that_is_not_a_results_file(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text("hello\n")
    with pytest.raises(UserError, match="not a sweep results file"):
        run_sweep(small_sweep(), results_file=path, resume=True)


def test_parallel_cells_give_the_same_rows(tmp_path):
    serial = run_sweep(small_sweep())
    parallel = run_sweep(small_sweep(), results_file=tmp_path / "r.jsonl", jobs=2)
    assert rows_of(parallel) == rows_of(serial)
    assert not [p for p in tmp_path.iterdir() if p.name != "r.jsonl"]  # no temporary files left


def test_every_cell_is_checked_before_the_first_runs(tmp_path):
    exp = Experiment("butterfly:d={d}", "h-relation:h=1", ["valiant"], ["fifo"])
    sweep = Sweep("too-big", exp, {"d": [3, 40]})
    path = tmp_path / "r.jsonl"
    with pytest.raises(UserError):
        run_sweep(sweep, results_file=path)
    assert not path.exists()


@pytest.mark.parametrize("name", ["butterfly_scaling", "hypercube_valiant_scaling"])
def test_builtin_sweep_scenarios_load_with_their_axes(name):
    scenario = load_scenario(name)
    assert scenario.sweep is not None and scenario.experiment is not None
    cells = scenario.sweep.cells()
    assert len(cells) >= 5
    assert "{d}" in scenario.experiment.network
    assert scenario.sweep.experiment_for(cells[-1]).network.endswith(f"d={cells[-1]['d']}")
