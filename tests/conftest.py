"""Session-wide test settings.

The designed routings ``2turn`` and ``2turna`` are cached in the user's cache folder
(``$XDG_CACHE_HOME/universal``); the tests keep that cache in a temporary folder of their own so
that they neither read nor write the user's.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_design_cache(tmp_path_factory):
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old
