"""Path systems (how paths are chosen) and path collections (the chosen paths, with C and D).

>>> import numpy as np
>>> from universal.networks import build_network
>>> from universal.workloads import build_problem
>>> from universal.paths import route_paths
>>> net = build_network("butterfly:d=4")
>>> prob = build_problem("permutation:bit-reversal", net, np.random.default_rng(0))
>>> coll = route_paths("valiant", prob, net, np.random.default_rng(0))
>>> coll.dilation, coll.network.depth
(8, 8)
"""

from universal.paths.collection import PathCollection
from universal.paths.systems import (
    PATH_SYSTEMS,
    PathSystem,
    build_path_system,
    default_base,
    dimension_order_paths,
    longest_path_bound,
    route_paths,
    shortest_paths,
    valiant_paths,
)

__all__ = [
    "PATH_SYSTEMS",
    "PathCollection",
    "PathSystem",
    "build_path_system",
    "default_base",
    "dimension_order_paths",
    "longest_path_bound",
    "route_paths",
    "shortest_paths",
    "valiant_paths",
]
