"""The priority as an axis of an open-loop study (issue 23 §3): cells, rows, results files,
``--resume`` and ``--jobs`` handle several rules; a single-rule results file written before
the axis existed still resumes; and with unbounded buffers an oblivious routing's saturation
throughput does not depend on the rule (priorities move latency, not capacity)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from universal.cli import main
from universal.openloop import Measurement
from universal.openloop.cells import chunks, study_cells
from universal.engine.creation import InjectionState, draw_chunk
from universal.openloop.saturation import find_saturations
from universal.openloop.study import OpenLoopStudy, run_study

from .helpers import spec

RULES = ["age", "random-rank", "growing-rank"]


def sweep(**changes) -> OpenLoopStudy:
    settings = dict(network="torus:k=8,n=1", routings=["dor"], traffics=["tornado"], loads=[0.1, 0.2],
                    seeds=[0], window=300, priority=RULES)
    return OpenLoopStudy(**{**settings, **changes})


def test_rows_carry_their_priority_and_batches_never_mix_rules():
    study = sweep()
    assert study.cell_count() == 6 and study.settings()["priority"] == RULES
    assert [c["priority"] for c in study_cells(study)[:6]] == ["age", "age", "random-rank", "random-rank",
                                                               "growing-rank", "growing-rank"]
    for jobs in (1, 2, 3):
        groups = chunks(study, study_cells(study), jobs)
        assert all(len({c["priority"] for c in g}) == 1 for g in groups)
        assert sorted(json.dumps(c) for g in groups for c in g) == sorted(json.dumps(c) for c in study_cells(study))
    rows = run_study(study).rows
    assert [r["priority"] for r in rows[:6]] == ["age", "age", "random-rank", "random-rank", "growing-rank",
                                                 "growing-rank"]
    one = run_study(sweep(priority="growing-rank")).rows       # a rule alone gives the rows it gives among others
    assert json.dumps(one) == json.dumps([r for r in rows if r["priority"] == "growing-rank"])


def test_several_rules_resume_and_run_in_workers_to_the_same_rows(tmp_path):
    path = tmp_path / "r.jsonl"
    whole = run_study(sweep(), results_file=path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:1] + lines[2:4] + lines[5:]) + "\n")   # as if interrupted
    resumed = run_study(sweep(), results_file=path, resume=True, jobs=2)
    assert (resumed.resumed, resumed.computed) == (4, 2)
    assert json.dumps(resumed.rows) == json.dumps(whole.rows)


def test_a_single_rule_results_file_from_before_the_axis_resumes(tmp_path):
    study = sweep(priority="fifo", pairs=["0->3"])
    path = tmp_path / "old.jsonl"
    whole = run_study(study, results_file=path)
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["settings"]["priority"] == "fifo"       # the header as it always was

    def old(data):
        return {k: v for k, v in data.items() if k != "priority"}
    body = [json.loads(x) for x in lines[1:]]
    body = [{"cell": old(d["cell"]), "row": old(d["row"]), "pairs": [old(p) for p in d["pairs"]]} for d in body]
    path.write_text("\n".join([lines[0]] + [json.dumps(d) for d in body[:1]]) + "\n")
    again = run_study(study, results_file=path, resume=True)
    assert (again.resumed, again.computed) == (1, 1)
    assert json.dumps([again.rows, again.pairs]) == json.dumps([whole.rows, whole.pairs])


def test_every_rule_offers_the_same_packets_on_the_same_paths():
    drawn = [draw_chunk(spec("torus:k=4,n=2", "val", "uniform", 0.7, priority=p, seed=5), InjectionState(), 0,
                        np.random.default_rng(5)) for p in RULES + ["fifo"]]
    for c in drawn[1:]:
        assert c.src.tolist() == drawn[0].src.tolist() and c.dst.tolist() == drawn[0].dst.tolist()
        assert c.route.links.tolist() == drawn[0].route.links.tolist()


def test_unbounded_buffers_priorities_move_latency_not_capacity():
    """DOR and VAL on the 4-ary 2-cube under uniform traffic: Θ under random rank and growing rank
    equals Θ under age within the search's tolerance (and the analysis: capacity 2 packets per
    node and step, DOR 1 of it, VAL 1/2). Short windows keep it quick; the 8-ary 2-cube check is
    in the closing report of issue 23."""
    tolerance = 0.1
    quick = Measurement(window=300, latency_limit=60, drain=False, overload="stop")
    theta = {}
    for rule in RULES:
        specs = [spec("torus:k=4,n=2", r, "uniform", 1.0, injection="poisson", priority=rule) for r in ("dor", "val")]
        sats = find_saturations(specs, tolerance=tolerance, measurement=quick)
        theta[rule] = [s.theta for s in sats]
    for rule in RULES[1:]:
        for got, age in zip(theta[rule], theta["age"]):
            assert abs(got - age) <= tolerance * age, (rule, theta)
    for dor, val in theta.values():
        assert abs(dor - 2.0) <= tolerance * 2.0 and abs(val - 1.0) <= tolerance * 1.0


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_the_cli_takes_a_list_of_priorities(capsys):
    status, out, err = run(capsys, "openloop", "--network", "torus:k=8,n=1", "--routing", "dor", "--traffic",
                           "tornado", "--loads", "0.2", "--window", "300", "--priority", "random-rank,growing-rank",
                           "--json")
    assert status in (0, None), err
    data = json.loads(out)
    assert data["priority"] == ["random-rank", "growing-rank"]
    assert [r["priority"] for r in data["rows"]] == ["random-rank", "growing-rank"]


@pytest.mark.parametrize("rule, message", [
    ("trial-and-failure", "error: priority 'trial-and-failure' has no open-loop form: it is bufferless"),
    ("age,oldest", "error: unknown priority 'oldest'"),
    ("age,age", "error: priority 'age' is listed twice"),
])
def test_bad_priorities_are_one_line_and_status_2(capsys, rule, message):
    status, out, err = run(capsys, "openloop", "--network", "torus:k=8,n=1", "--loads", "0.2", "--priority", rule)
    assert status == 2 and err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err
