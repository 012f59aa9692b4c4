"""Open-loop studies cell by cell: any grouping of the cells into engine batches, any number of
worker processes and any resumed run give the rows of one uninterrupted run, byte for byte."""

from __future__ import annotations

import json

import pytest

from universal.errors import UserError
from universal.openloop.cells import chunks, run_chunk, study_cells
from universal.openloop.study import OpenLoopStudy, run_study


def load_study(**changes) -> OpenLoopStudy:
    """24 runs on the 8-node ring, stable and unstable ones (DOR saturates at 1/3 on tornado)."""
    settings = dict(network="torus:k=8,n=1", routings=["dor", "goal", "ugal"],
                    traffics=["tornado", "uniform"], loads=[0.2, 0.5], seeds=[0, 1], window=300)
    return OpenLoopStudy(**{**settings, **changes})


def saturation_study() -> OpenLoopStudy:
    return OpenLoopStudy("torus:k=8,n=1", ["dor", "goal"], ["tornado"], saturation=True, injection="poisson",
                         window=500, tolerance=0.2)


def text(report) -> str:
    return json.dumps([report.rows, report.pairs])


def test_a_cell_gives_the_same_row_alone_and_batched_with_others():
    study = load_study()
    cells = study_cells(study)
    together = run_chunk(study, cells)
    alone = [line for c in cells[::5] for line in run_chunk(study, [c])]
    assert json.dumps(alone) == json.dumps(together[::5])
    assert {r["row"]["stable"] for r in together} == {True, False}  # both kinds of run are compared


@pytest.mark.parametrize("make", [load_study, saturation_study])
def test_two_workers_give_byte_identical_rows(make, tmp_path):
    serial = run_study(make(), results_file=tmp_path / "one.jsonl")
    parallel = run_study(make(), results_file=tmp_path / "two.jsonl", jobs=2)
    assert text(parallel) == text(serial)
    # the results files differ only in the command of their header (none given here)
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.jsonl", "two.jsonl"]


def test_workers_get_several_chunks_mixing_low_and_high_loads():
    study = load_study()
    groups = chunks(study, study_cells(study), jobs=2)
    assert len(groups) == 4 and sorted(len(g) for g in groups) == [6, 6, 6, 6]
    assert all({c["offered"] for c in g} == {0.2, 0.5} for g in groups)
    assert len(chunks(saturation_study(), study_cells(saturation_study()), jobs=1)) == 1


def test_a_resumed_study_ends_with_the_rows_of_an_uninterrupted_one(tmp_path):
    path = tmp_path / "r.jsonl"
    whole = run_study(load_study(), results_file=path)  # the uninterrupted rows, as this run returns them
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:1] + lines[3:12]) + "\n")  # as if interrupted, two cells lost
    resumed = run_study(load_study(), results_file=path, resume=True, jobs=2)
    assert (resumed.resumed, resumed.computed) == (9, 15)
    assert text(resumed) == text(whole)
    again = run_study(load_study(), results_file=path, resume=True)
    assert (again.resumed, again.computed) == (24, 0) and text(again) == text(whole)


def test_pair_latencies_are_kept_per_cell(tmp_path):
    study = OpenLoopStudy("torus:k=4,n=2", ["dor", "goal"], ["uniform"], loads=[0.2, 0.3], window=300,
                          pairs=["0,0->1,1", "0,0->2,2"])
    whole = run_study(study)
    assert [(p["routing"], p["offered"], p["pair"]) for p in whole.pairs][:3] == [
        ("dor", 0.2, "0,0->1,1"), ("dor", 0.2, "0,0->2,2"), ("dor", 0.3, "0,0->1,1")]
    path = tmp_path / "r.jsonl"
    run_study(study, results_file=path, jobs=2)
    assert text(run_study(study, results_file=path, resume=True)) == text(whole)


def test_progress_counts_cells():
    seen = []
    run_study(load_study(routings=["dor"]), progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 8) and seen[-1] == (8, 8)
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


def test_resume_refuses_the_results_of_other_settings_and_leaves_the_file(tmp_path):
    path = tmp_path / "r.jsonl"
    run_study(load_study(routings=["dor"], traffics=["tornado"]), results_file=path, command="universal openloop A")
    before = path.read_bytes()
    with pytest.raises(UserError, match=r"other settings than this run \(by: universal openloop A\)"):
        run_study(load_study(routings=["goal"], traffics=["tornado"]), results_file=path, resume=True)
    assert path.read_bytes() == before


@pytest.mark.parametrize("change, message", [
    (lambda line: {**line, "row": {**line["row"], "stable": "yes"}}, "stable = \"yes\" has the wrong type"),
    (lambda line: {**line, "row": {**line["row"], "seed": 7}}, "does not match its cell"),
    (lambda line: {**line, "row": {k: v for k, v in line["row"].items() if k != "accepted"}}, "lacks 'accepted'"),
    (lambda line: {**line, "cell": {**line["cell"], "offered": 0.3}}, "is not a cell of this study"),
    (lambda line: {"cell": line["cell"]}, "not a cell line"),
])
def test_a_damaged_results_file_is_refused_naming_the_line(tmp_path, change, message):
    path = tmp_path / "r.jsonl"
    study = load_study(routings=["dor"], traffics=["tornado"], seeds=[0])
    run_study(study, results_file=path)
    lines = path.read_text().splitlines()
    lines[2] = json.dumps(change(json.loads(lines[2])))
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError, match="line 3: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        run_study(study, results_file=path, resume=True)


def test_bad_input_is_refused_before_the_results_file_is_touched(tmp_path):
    path = tmp_path / "r.jsonl"
    with pytest.raises(UserError, match="at most one packet per node per step"):
        run_study(load_study(loads=[0.2, 1.5]), results_file=path)
    assert not path.exists()
    with pytest.raises(UserError, match="too short to measure anything"):
        run_study(load_study(loads=[0.2, 0.0001], window=100), results_file=path)
    assert not path.exists()
    with pytest.raises(UserError, match="name it with --out"):
        run_study(load_study(), resume=True)


def test_a_traffic_file_changed_between_two_studies_is_read_again(tmp_path):
    flows = tmp_path / "flows.txt"
    study = OpenLoopStudy("torus:k=8,n=1", ["dor"], ["permutation:file=flows.txt"], loads=[0.2], window=300,
                          base_dir=tmp_path)
    flows.write_text("0 3\n")
    assert run_study(study).rows[0]["hops_mean"] == 3.0
    flows.write_text("0 1\n")
    assert run_study(study).rows[0]["hops_mean"] == 1.0


def test_the_analytic_value_follows_the_units():
    """With --units packets the exact value is in packets per node per step too (capacity x the
    fraction): VAL on the 4-ary 2-cube saturates at 1/2 of capacity, one packet per node and step."""
    from universal.openloop.cells import prepare, forget_prepared
    from universal.openloop.study import OpenLoopStudy

    try:
        fraction = prepare(OpenLoopStudy("torus:k=4,n=2", ["val"], ["tornado"], saturation=True)).exact
        forget_prepared()
        packets = prepare(OpenLoopStudy("torus:k=4,n=2", ["val"], ["tornado"], saturation=True,
                                        units="packets")).exact
    finally:
        forget_prepared()
    assert str(fraction[("val", "tornado")]) == "1/2"
    assert str(packets[("val", "tornado")]) == "1"
