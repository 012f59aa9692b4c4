"""The offline optimum beside every protocol (SPEC §12; Meyer auf der Heide & Scheideler,
"Communication in Parallel Systems", 1995, §3): OPT(P) of a fixed path collection, R(G, π) when
the paths are free too, and the routing number R(G) of small networks. Every schedule a solver
returns is replayed by :func:`universal.optimum.schedule.replay` before it is reported.

>>> from universal.networks import build_network
>>> from universal.paths import PathCollection
>>> net = build_network("mesh:k=3,n=1")
>>> optimum(PathCollection.from_node_paths(net, [[0, 1, 2], [0, 1, 2]]), bandwidth=2).upper
2
"""

from universal.optimum.fixed_paths import (
    MAX_HOPS,
    OptimumResult,
    best_protocol_schedule,
    optimum,
    trivial_lower_bound,
)
from universal.optimum.schedule import Schedule, ScheduleError, replay

__all__ = ["MAX_HOPS", "OptimumResult", "Schedule", "ScheduleError", "best_protocol_schedule", "optimum",
           "replay", "trivial_lower_bound"]
