"""Tables a newcomer meets at 80 columns and on ASCII-only terminals (issue 22 §3): one table, no
number cut, no header cut, no 27-digit fraction."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from universal.reporting.layout import Col, FitTable


def _cli(tmp_path, *argv: str, ascii_only: bool = False) -> str:
    env = {**os.environ, "COLUMNS": "80", "PYTHONIOENCODING": "ascii" if ascii_only else "utf-8"}
    done = subprocess.run([sys.executable, "-m", "universal", *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_sweep_with_opt_is_one_table_at_80_columns(tmp_path):
    pytest.importorskip("ortools")
    (tmp_path / "s.toml").write_text('network = "hypercube:d={d}"\nproblem = "h-relation:h=2"\n'
                                     'paths = ["dimension-order"]\nprotocols = ["random-rank", "fifo"]\n'
                                     'seeds = 2\nopt = true\n[sweep]\nd = [2, 3]\n')
    out = _cli(tmp_path, "scenario", "s.toml")
    assert "(continued)" not in out
    assert "OPT" in out and "T/OPT" in out and "left out at this width" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_ascii_headers_are_measured_as_printed(tmp_path):
    """PYTHONIOENCODING=ascii spells C̄ and ± as Cbar and +/-; the table is laid out with those."""
    out = _cli(tmp_path, "route", "--network", "butterfly:d=6", "--problem", "permutation:bit-reversal",
               "--analyze", ascii_only=True)
    header = next(line for line in out.splitlines() if "Cbar" in line)
    assert "+/-" in header and "busiest" in header
    assert "busiest lin " not in header and "+/ " not in header
    assert max(len(line) for line in out.splitlines()) <= 80
    spelled = FitTable([Col("C̄"), Col("±")], [(["0.5", "—"], None)]).spelled_ascii()
    assert spelled.headers == ["Cbar", "+/-"] and spelled.rows[0][0] == ["0.5", "-"]


def test_designed_routings_show_decimals_in_tables_and_exact_values_in_json(tmp_path):
    _cli(tmp_path, "design", "--network", "torus:k=4,n=2", "--then", "locality", "--save", "r.json", "--json")
    out = _cli(tmp_path, "worstcase", "--network", "torus:k=4,n=2", "--routing", "lp:file=r.json")
    assert not any(len(tok) > 14 and "/" in tok and "->" not in tok for tok in out.split()), out
    data = json.loads(_cli(tmp_path, "worstcase", "--network", "torus:k=4,n=2", "--routing", "lp:file=r.json",
                           "--json"))
    row = data["rows"][0]
    assert row["throughput"] == pytest.approx(0.5, abs=1e-6)
    exact = [v for v in row.values() if isinstance(v, str) and "/" in v and "->" not in v]
    assert exact and len(exact[0]) > 14          # JSON keeps the long exact fraction
