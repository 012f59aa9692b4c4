"""Oblivious routing algorithms of the k-ary n-cube as exact path distributions (SPEC §5, §7).

These are path systems: each names, for every (source, destination) pair, a distribution over
paths. The packet engine draws concrete paths from them (:func:`sample_paths`), the load
analysis (:mod:`universal.oblivious`) sums their exact probabilities, and the LP design
(:mod:`universal.design`) builds new ones (:class:`FlowRouting`). They sit with the other path
systems so that neither the engine nor the path layer has to reach up into the analysis.

* :mod:`~universal.paths.torus.geometry` - node ids, coordinates, channels, capacity (:class:`Torus`);
* :mod:`~universal.paths.torus.algorithms` - DOR, VAL, ROMM, RLB, RLBth, IVAL, 2TURN (:data:`ROUTINGS`);
* :mod:`~universal.paths.torus.designed` - routings given by flows or mixtures (LP designs);
* :mod:`~universal.paths.torus.routingfile` - saving and reading a designed routing.

References: B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design",
2003; B. Towles, "Finding worst-case permutations for oblivious routing algorithms", 2002;
A. Singh, W. J. Dally, A. K. Gupta and B. Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks", 2003.
"""

from .algorithms import (ROUTING_FACTORIES, ROUTINGS, PathFamily, Routing, get_routing, is_torus_routing,
                         sample_paths)
from .designed import FlowRouting, MixtureRouting
from . import routingfile as _routingfile  # noqa: F401  (registers lp:file=PATH)
from .geometry import Torus

__all__ = ["ROUTINGS", "ROUTING_FACTORIES", "PathFamily", "Routing", "get_routing", "is_torus_routing",
           "sample_paths", "FlowRouting", "MixtureRouting", "Torus"]
