"""A command that needs an optional dependency which is missing is refused with one line, before
any work or file, saying what installs it from where the user is (issue 22 §3)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.test_bad_inputs import assert_refused
from universal import extras


@pytest.fixture
def no_ortools(monkeypatch):
    for name in [m for m in sys.modules if m == "ortools" or m.startswith("ortools.")] + ["ortools"]:
        monkeypatch.setitem(sys.modules, name, None)      # import ortools now raises ImportError


@pytest.fixture
def no_matplotlib(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")] + ["matplotlib"]:
        monkeypatch.setitem(sys.modules, name, None)


BF3 = ["--network", "butterfly:d=3", "--problem", "permutation:random"]


@pytest.mark.parametrize("argv", [
    ["optimum", *BF3],
    ["route", *BF3, "--opt"],
    ["route", *BF3, "--opt", "free"],
    ["routing-number", "--network", "hypercube:d=2"],
    ["scenario", "protocols_vs_optimum", "--out", "r.jsonl"],
])
def test_without_ortools_the_optimum_is_refused_in_one_line(argv, no_ortools, tmp_path, capsys):
    line = assert_refused(argv, tmp_path, capsys)           # also: no results file left behind
    # a checkout names its extra; an installed copy (CI's) the requirement itself
    assert "OR-Tools" in line and ("[opt]'" in line or "pip install 'ortools>=" in line), line


def test_without_matplotlib_plot_is_refused_before_the_work(no_matplotlib, tmp_path, capsys):
    line = assert_refused(["scenario", "butterfly_scaling", "--plot", "s.png", "--out", "r.jsonl"], tmp_path, capsys)
    assert "matplotlib" in line and ("[plot]'" in line or "pip install 'matplotlib>=" in line), line


def test_the_hint_names_the_checkout_from_elsewhere_and_dot_from_inside(tmp_path, monkeypatch):
    root = Path(extras.__file__).resolve().parents[1]
    if not (root / "pyproject.toml").is_file():
        pytest.skip("an installed copy, not a checkout: the hint names the package itself")
    assert extras.install_hint("opt", cwd=root) == "pip install '.[opt]'"
    assert extras.install_hint("opt", cwd=tmp_path) == f"pip install '{root}[opt]'"


def test_outside_a_checkout_the_hint_names_the_package(monkeypatch):
    monkeypatch.setattr(extras, "_checkout", lambda: None)
    assert extras.install_hint("opt") == "pip install 'ortools>=9.8'"
    assert extras.install_hint("plot") == "pip install 'matplotlib>=3.8'"


def test_the_extras_named_here_are_the_projects():
    """The requirement strings match pyproject.toml's extras (or the hint would install another)."""
    root = Path(extras.__file__).resolve().parents[1]
    if not (root / "pyproject.toml").is_file():
        pytest.skip("an installed copy: no pyproject.toml to compare with")
    import tomllib
    optional = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, (_, _, requirement) in extras.EXTRAS.items():
        assert optional[extra] == [requirement]
