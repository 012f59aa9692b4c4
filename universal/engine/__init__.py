"""The synchronous packet engine (fast, vectorized), the one engine's batch front end and their
pure-Python reference.

>>> import numpy as np
>>> from universal.networks import build_network
>>> from universal.workloads import build_problem
>>> from universal.paths import route_paths
>>> from universal.engine import simulate
>>> net = build_network("butterfly:d=5")
>>> prob = build_problem("h-relation:h=2", net, np.random.default_rng(1))
>>> paths = route_paths("valiant", prob, net, np.random.default_rng(2))
>>> simulate(paths, "growing-rank", np.random.default_rng(3)).delivered == paths.size
True
"""

from universal.engine.batch import simulate as simulate_one
from universal.engine.fast import simulate
from universal.engine.reference import simulate_reference
from universal.engine.result import RoutingResult

ENGINES = {"fast": simulate, "one": simulate_one, "reference": simulate_reference}

__all__ = ["ENGINES", "RoutingResult", "simulate", "simulate_one", "simulate_reference"]
