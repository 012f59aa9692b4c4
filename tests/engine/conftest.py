"""Every engine test that calls ``universal.engine.simulate`` runs twice: on the batch engine
(``fast``, today's default) and on the one engine's batch front end (``one``,
:func:`universal.engine.batch.simulate`), which must give the same results (issue 23)."""

from __future__ import annotations

import pytest

from universal.engine import ENGINES, simulate


def pytest_generate_tests(metafunc):
    if getattr(metafunc.module, "simulate", None) is simulate and "batch_engine" in metafunc.fixturenames:
        metafunc.parametrize("batch_engine", ["fast", "one"], indirect=True, scope="module")


@pytest.fixture(scope="module", autouse=True)
def batch_engine(request):
    """The module's ``simulate`` is the engine under test for the module's tests."""
    name = getattr(request, "param", None)
    if name is None:                      # a module that does not call simulate
        yield None
        return
    module = request.module
    module.simulate = ENGINES[name]
    yield name
    module.simulate = simulate
