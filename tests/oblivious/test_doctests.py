"""The examples in the docstrings of universal.oblivious run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["torus", "algorithms", "loads", "traffic", "throughput", "worstcase", "matching"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"universal.oblivious.{name}")
    failures, _ = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
