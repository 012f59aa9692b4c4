"""What ``pip install .`` ships: every subpackage of ``universal`` and every built-in scenario file.

The package list in pyproject.toml is written out (the scenarios folder is mapped into the
package), so a new subpackage that is not added there would be missing from an installed copy
while every test run from a checkout still passes. These tests make that a failure here.
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_subpackage_is_listed():
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "universal").rglob("__init__.py")}
    listed = set(_setuptools()["packages"])
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert "universal.scenarios" in listed


def test_every_scenario_file_is_package_data():
    patterns = _setuptools()["package-data"]["universal.scenarios"]
    files = [p.name for p in (ROOT / "scenarios").iterdir() if p.is_file() and p.name != "__init__.py"]
    unshipped = [f for f in files if not any(fnmatch.fnmatch(f, pat) for pat in patterns)]
    assert unshipped == []
