"""Every engine test that calls ``universal.engine.simulate`` runs twice: on the one engine's
batch front end in numpy (``numpy``, :func:`universal.engine.batch.simulate` with the compiled
kernel switched off) and with every batch the kernels take on the compiled kernel
(``compiled``, :mod:`universal.engine.compiled`, whatever its size). They must give the same
results, and the ones the tests state (issues 23 and 25)."""

from __future__ import annotations

import importlib.util

import pytest

from universal.engine import batch, simulate

#: Engine under test -> (simulate function, COMPILED_MIN_HOPS_WARM, COMPILED_MIN_HOPS_COLD).
BATCH_ENGINES = {"numpy": (batch.simulate, float("inf"), float("inf")),
                 "compiled": (batch.simulate, 0, 0)}


def pytest_generate_tests(metafunc):
    if getattr(metafunc.module, "simulate", None) is simulate and "batch_engine" in metafunc.fixturenames:
        metafunc.parametrize("batch_engine", list(BATCH_ENGINES), indirect=True, scope="module")


@pytest.fixture(scope="module", autouse=True)
def batch_engine(request):
    """The module's ``simulate`` is the engine under test for the module's tests."""
    name = getattr(request, "param", None)
    if name is None:                      # a module that does not call simulate
        yield None
        return
    if name == "compiled" and importlib.util.find_spec("numba") is None:
        pytest.skip("numba is not installed: the compiled kernel cannot be tested (the numpy engine runs instead)")
    function, warm, cold = BATCH_ENGINES[name]
    saved = batch.COMPILED_MIN_HOPS_WARM, batch.COMPILED_MIN_HOPS_COLD
    if warm is not None:
        batch.COMPILED_MIN_HOPS_WARM, batch.COMPILED_MIN_HOPS_COLD = warm, cold
    module = request.module
    module.simulate = function
    yield name
    module.simulate = simulate
    batch.COMPILED_MIN_HOPS_WARM, batch.COMPILED_MIN_HOPS_COLD = saved
