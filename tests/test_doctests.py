"""The examples in the docstrings are part of the documentation: every one of them must run.

One test per module of the ``universal`` package (``universal.__main__`` is skipped: importing it
runs the command line).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import universal

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(universal.__path__, prefix="universal.")
    if info.name != "universal.__main__"
)

#: Modules whose examples are known not to run, with the reason (keep empty).
KNOWN_BROKEN: dict[str, str] = {}


def _param(name: str):
    if name in KNOWN_BROKEN:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BROKEN[name]))
    return name


def test_the_walk_finds_the_package():
    assert "universal.networks.generators" in MODULES
    assert "universal.paths.systems" in MODULES
    assert "universal.cli" in MODULES


@pytest.mark.parametrize("name", [_param(m) for m in MODULES])
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {name}"
