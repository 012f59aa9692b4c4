"""Disk cache of the routings designed by name (``2turn``, ``2turna``).

They are designed once per torus size and kept in the user's cache folder:
``$XDG_CACHE_HOME/universal`` when that variable is set, else ``~/.cache/universal``. The file
name holds everything the result depends on: the routing, the torus, the LP's settings and the
solver version, so a new SciPy/HiGHS build designs afresh rather than reusing an old answer.
A cached file is read back through the same validation as ``lp:file=PATH``; a damaged one is
designed again and replaced.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

from universal.errors import UserError
from universal.paths.torus.designed import FlowRouting
from universal.paths.torus.routingfile import read_routing, write_routing
from universal.paths.torus.geometry import Torus

from .lp import DEFAULT_SAMPLES, solver_version

__all__ = ["cache_folder", "cache_path", "cached_design"]

#: Seed of the permutation sample that 2TURNA is optimised for.
DESIGN_SEED = 0


def cache_folder() -> Path:
    """``$XDG_CACHE_HOME/universal``, or ``~/.cache/universal`` when the variable is unset.

    Examples
    --------
    >>> cache_folder().name
    'universal'
    """
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "universal"


def cache_path(torus: Torus, objective: str, paths: str, name: str) -> Path:
    """File of one designed routing: ``NAME-k8-n2-<key>.routing`` in :func:`cache_folder`.

    Examples
    --------
    >>> cache_path(Torus(8, 2), "worst-case", "2turn", "2turn").name.startswith("2turn-k8-n2-")
    True
    """
    key = f"{name}|{objective}|{paths}|then=locality|M={DEFAULT_SAMPLES}|seed={DESIGN_SEED}|{solver_version()}|v2"
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return cache_folder() / f"{name}-k{torus.k}-n{torus.n}-{digest}.routing"


def cached_design(torus: Torus, objective: str, paths: str, name: str, solve: Callable) -> FlowRouting:
    """The routing of ``objective`` over ``paths`` then shortest, designed once and cached.

    Parameters
    ----------
    torus : Torus
    objective : str
        ``worst-case`` (2TURN) or ``average-case`` (2TURNA).
    paths : str
        Path family (``2turn``).
    name : str
        Routing name (also the file name's stem).
    solve : callable
        :func:`universal.design.design`, called when the cache has no valid copy.

    Returns
    -------
    FlowRouting
    """
    path = cache_path(torus, objective, paths, name)
    if path.is_file():
        try:
            routing = read_routing(path, name=name)
            if (routing.torus.k, routing.torus.n) == (torus.k, torus.n):
                return routing
        except UserError:
            pass                                      # damaged: design again and replace it
    result = solve(torus, objective, paths, then="locality", samples=DEFAULT_SAMPLES,
                    seed=DESIGN_SEED, name=name, evaluate=False)
    routing = result.routing
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_routing(path, routing)
    except (OSError, UserError):
        pass                                          # no writable cache: use it uncached
    return routing
