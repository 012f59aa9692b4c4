"""Session-wide test settings.

The designed routings ``2turn`` and ``2turna`` are cached in the user's cache folder
(``$XDG_CACHE_HOME/universal``); the tests keep that cache in a temporary folder of their own so
that they neither read nor write the user's.

Every test sees the output of a command piped into a file: no ``COLUMNS`` or ``LINES``, so that
the CLI's tables are 120 columns wide (``universal.reporting.tables.make_console``) whatever
terminal, runner or earlier test the run has. Tests that want a width set ``COLUMNS`` themselves.
The variables have to go from the C environment too: GNU readline, once imported, exports
``COLUMNS`` and ``LINES`` there (80 and 24 off a terminal) without ``os.environ`` showing them, and
pytest imports it at start-up (``_pytest.capture._readline_workaround``). Child processes inherit
them: pytest-xdist's workers start with an 80-column ``COLUMNS`` in ``os.environ`` that a serial
run does not have, and a subprocess that a test starts with the inherited environment gets it in
either run.
"""

from __future__ import annotations

import os

import pytest


_TERMINAL_SIZE = ("COLUMNS", "LINES")


def _forget_the_terminal_size() -> None:
    for name in _TERMINAL_SIZE:
        os.environ.pop(name, None)
        os.unsetenv(name)                      # also where os.environ does not see it (readline)


@pytest.fixture(autouse=True, scope="session")
def _no_terminal_size_for_the_session():
    """Before any module-scoped fixture prints a table."""
    _forget_the_terminal_size()


@pytest.fixture(autouse=True)
def _no_terminal_size():
    """Again before each test: a test before it may have set them."""
    _forget_the_terminal_size()


@pytest.fixture(autouse=True, scope="session")
def _private_design_cache(tmp_path_factory):
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old
