"""A path system (:class:`PathSystem`: a named rule that routes a problem), the registry of them
(:data:`PATH_SYSTEMS`, filled by :mod:`universal.paths.systems`, which exports these names too)
and the look-up by name: :func:`build_path_system`, :func:`route_paths`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from universal.networks import Network
from universal.paths.collection import PathCollection
from universal.registry import Registry, parse_spec
from universal.workloads import Problem


@dataclass
class PathSystem:
    """A named rule that turns a problem into a :class:`PathCollection`.

    ``route(problem, network, rng)`` does the work; ``caption`` explains the layout in tables;
    ``deterministic`` says the paths do not depend on ``rng`` (one routing of every pair then
    gives exact pair loads, e.g. for the expected congestion).
    """

    name: str
    route: Callable[[Problem, Network, np.random.Generator], PathCollection]
    caption: str = ""
    deterministic: bool = False


PATH_SYSTEMS: Registry[PathSystem] = Registry("path system")


def build_path_system(system: str | PathSystem, network: Network, base_dir: Path | None = None) -> PathSystem:
    """A path system by name (SPEC §8).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> build_path_system("valiant", build_network("butterfly:d=4")).name
    'valiant'
    """
    if isinstance(system, PathSystem):
        return system
    spec = parse_spec(system)
    return PATH_SYSTEMS.entry(spec.name).factory(spec, network, base_dir)


def route_paths(system: str | PathSystem, problem: Problem, network: Network,
                rng: np.random.Generator, base_dir: Path | None = None) -> PathCollection:
    """Choose the paths of ``problem`` on ``network`` with the named path system.

    Parameters
    ----------
    system : str or PathSystem
    problem : Problem
    network : Network
    rng : numpy.random.Generator
        Source of the random choices (intermediates, random next hops).

    Returns
    -------
    PathCollection

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import hypercube
    >>> from universal.workloads import build_problem
    >>> net = hypercube(4)
    >>> prob = build_problem("permutation:transpose", net, np.random.default_rng(0))
    >>> route_paths("dimension-order", prob, net, np.random.default_rng(0)).dilation
    4
    """
    ps = build_path_system(system, network, base_dir)
    return ps.route(problem, network, rng)
