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
