"""The built-in scenario ``protocols_vs_optimum`` (issue 12): on every instance of its family
max(ceil(C/B), D) <= OPT <= T of every protocol, and OPT is proven wherever n <= 64 and D <= 8."""

from __future__ import annotations

import json
import time

from universal.cli import main


def test_protocols_vs_optimum(capsys, tmp_path):
    started = time.perf_counter()
    status = main(["scenario", "protocols_vs_optimum", "--out", str(tmp_path / "r.jsonl"), "--json"])
    seconds = time.perf_counter() - started
    out = capsys.readouterr().out
    assert status == 0
    assert seconds < 180
    rows = [r for cell in json.loads(out)["cells"] for r in cell["rows"]]
    assert {r["protocol"] for r in rows} >= {"random-rank", "fifo", "random-delay"}
    small = 0
    for r in rows:
        assert r["lower_bound"] <= r["opt_lower"] <= r["opt_upper"] <= r["T"]
        if r["n"] <= 64 and r["D"] <= 8:
            small += 1
            assert r["opt_status"] == "optimal" and r["T_over_opt"] == round(r["T"] / r["opt"], 4)
    assert small >= len(rows) // 2
    # The family has instances where OPT exceeds the trivial lower bound, and where it meets it.
    assert any(r["opt"] > r["lower_bound"] for r in rows if r["opt"])
    assert any(r["opt"] == r["lower_bound"] for r in rows if r["opt"])


def test_scenario_opt_settings(tmp_path):
    """``opt = true`` / ``"free"`` and ``time_limit`` reach the experiment; bad values are refused."""
    import pytest

    from universal.errors import UserError
    from universal.scenario import load_scenario

    base = 'network = "hypercube:d=3"\nproblem = "permutation:random"\npaths = ["dimension-order"]\n' \
           'protocols = ["fifo"]\n'
    good = tmp_path / "good.toml"
    good.write_text(base + 'opt = "free"\ntime_limit = 2.5\n')
    exp = load_scenario(str(good)).experiment
    assert (exp.opt, exp.time_limit) == ("free", 2.5)
    for extra, message in [('opt = "maybe"\n', "'opt'"), ("time_limit = 0\n", "'time_limit'"),
                           ('time_limit = "10"\n', "'time_limit'")]:
        bad = tmp_path / "bad.toml"
        bad.write_text(base + extra)
        with pytest.raises(UserError, match=message):
            load_scenario(str(bad))
