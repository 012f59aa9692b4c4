"""Routing problems (workloads): multisets of (source, destination) pairs.

>>> import numpy as np
>>> from universal.networks import build_network
>>> from universal.workloads import build_problem
>>> prob = build_problem("permutation:bit-reversal", build_network("hypercube:d=3"), np.random.default_rng(0))
>>> prob.dests.tolist()
[0, 4, 2, 6, 1, 5, 3, 7]
"""

from universal.workloads.problems import PROBLEMS, Problem, build_problem, endpoints, estimate_packets

__all__ = ["PROBLEMS", "Problem", "build_problem", "endpoints", "estimate_packets"]
