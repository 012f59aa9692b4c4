"""Sweeps on a Dask cluster: the same rows as the serial run, resumable across executors."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("distributed")

from universal.cli import main  # noqa: E402
from universal.errors import UserError  # noqa: E402
from universal.executors import DaskExecutor  # noqa: E402
from universal.sweep import read_results, run_sweep  # noqa: E402

from tests.test_cli import assert_user_error  # noqa: E402
from tests.test_sweep import Interrupt, rows_of, small_sweep  # noqa: E402


def threads() -> DaskExecutor:
    """A LocalCluster of two workers in this process: starts in well under a second."""
    return DaskExecutor(workers=2, processes=False)


def test_a_dask_sweep_equals_the_serial_sweep_row_for_row(tmp_path):
    serial = run_sweep(small_sweep())
    path = tmp_path / "r.jsonl"
    on_dask = run_sweep(small_sweep(), results_file=path, executor=threads())
    assert rows_of(on_dask) == rows_of(serial)
    # The results file is the one local runs write: header, then the cells in cell order.
    lines = path.read_text().splitlines()
    assert [json.loads(line)["cell"]["d"] for line in lines[1:]] == [3, 4, 5, 6]
    assert not [p for p in tmp_path.iterdir() if p.name != "r.jsonl"]  # no temporary files left


def test_an_interrupted_dask_sweep_resumes_locally_and_a_local_one_on_dask(tmp_path):
    whole = run_sweep(small_sweep())

    def stop_after_two(done, total):
        if done == 2:
            raise Interrupt

    first = tmp_path / "dask-then-local.jsonl"
    with pytest.raises(Interrupt):
        run_sweep(small_sweep(), results_file=first, progress=stop_after_two, executor=threads())
    assert len(read_results(first, small_sweep())) == 2  # the two finished cells survived
    resumed = run_sweep(small_sweep(), results_file=first, resume=True)
    assert (resumed.resumed, resumed.computed) == (2, 2)
    assert rows_of(resumed) == rows_of(whole)

    second = tmp_path / "local-then-dask.jsonl"
    with pytest.raises(Interrupt):
        run_sweep(small_sweep(), results_file=second, progress=stop_after_two)
    resumed = run_sweep(small_sweep(), results_file=second, resume=True, executor=threads())
    assert (resumed.resumed, resumed.computed) == (2, 2)
    assert rows_of(resumed) == rows_of(whole)
    # Both files end up with every cell in cell order, whichever executor wrote which cell.
    for path in (first, second):
        assert [json.loads(line)["cell"]["d"] for line in path.read_text().splitlines()[1:]] == [3, 4, 5, 6]


def test_a_scheduler_address_without_a_protocol_is_refused():
    with pytest.raises(UserError, match="tcp://HOST:8786"):
        run_sweep(small_sweep(), executor=DaskExecutor("localhost"))


def test_an_unreachable_scheduler_is_one_error_line_within_seconds(tmp_path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text('network = "butterfly:d={d}"\nproblem = "h-relation:h=1"\npaths = ["valiant"]\n'
                        'protocols = ["fifo"]\n[sweep]\nd = [3, 4]\n')
    start = time.perf_counter()
    status = main(["scenario", str(scenario), "--out", str(tmp_path / "r.jsonl"), "--executor", "dask",
                   "--scheduler", "tcp://127.0.0.1:9"])
    out, err = capsys.readouterr()
    assert time.perf_counter() - start < 15
    assert_user_error(status, out, err, "cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert not (tmp_path / "r.jsonl").exists()  # reported before the results file was started


def test_scheduler_without_the_dask_executor_is_refused(tmp_path, capsys):
    status = main(["scenario", "butterfly_scaling", "--scheduler", "tcp://127.0.0.1:9"])
    assert_user_error(status, *capsys.readouterr(), "--scheduler applies to --executor dask")


def test_an_openloop_study_on_dask_gives_the_rows_of_the_serial_run(tmp_path):
    from universal.openloop.study import OpenLoopStudy, run_study

    study = OpenLoopStudy("torus:k=8,n=1", ["dor", "goal"], ["tornado"], loads=[0.2, 0.5], seeds=[0, 1], window=300)
    serial = run_study(study)
    path = tmp_path / "r.jsonl"
    on_dask = run_study(study, results_file=path, jobs=2, executor=threads())  # 4 chunks of 2 runs
    assert json.dumps(on_dask.rows) == json.dumps(serial.rows)
    assert [json.loads(line)["cell"]["offered"] for line in path.read_text().splitlines()[1:3]] == [0.2, 0.2]


def test_the_openloop_command_takes_the_executor_options(tmp_path, capsys):
    base = ["openloop", "--network", "torus:k=8,n=1", "--loads", "0.2", "--window", "300"]
    status = main([*base, "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"])
    assert_user_error(status, *capsys.readouterr(), "cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    status = main([*base, "--scheduler", "tcp://127.0.0.1:9"])
    assert_user_error(status, *capsys.readouterr(), "--scheduler applies to --executor dask")
