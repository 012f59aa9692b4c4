"""Exact channel-load analysis of oblivious routing on k-ary n-cubes (SPEC §7).

Main entry points (the CLI commands ``universal load`` and ``universal worstcase`` call these):

* :func:`load_table` - throughput (fraction of capacity) and locality of routings under traffics;
* :func:`worst_case` - exact worst-case permutation and throughput of one routing;
* :func:`worst_case_for_channels` - the matching step on any graph, given pair-load matrices;
* :func:`sample_paths` - concrete routes for the packet engine (from :mod:`universal.paths.torus`,
  where the routing algorithms live);
* :func:`pair_loads` - the exact pair-load tables themselves.

References: B. Towles, "Finding worst-case permutations for oblivious routing algorithms";
B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design" (SPAA 2003);
A. Singh, W. J. Dally, A. K. Gupta and B. Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks" (ISCA 2003).
"""

from universal.paths.torus.algorithms import (ROUTING_FACTORIES, ROUTINGS, PathFamily, Routing, get_routing,
                         is_torus_routing, sample_paths)
from universal.paths.torus.designed import FlowRouting, MixtureRouting
from .loads import PairLoads, all_classes, pair_loads
from .throughput import (LoadResult, channel_loads, evaluate_traffic, load_table, locality,
                         max_load, permutation_max_loads)
from universal.paths.torus.geometry import Torus
from .traffic import TRAFFICS, Traffic, make_traffic, traffic_names
from .worstcase import (ChannelMatching, WorstCaseResult, focus_classes,
                        permutation_channel_load, worst_case, worst_case_for_channels)

__all__ = [
    "ROUTINGS", "ROUTING_FACTORIES", "is_torus_routing", "FlowRouting", "MixtureRouting",
    "PathFamily", "Routing", "get_routing", "sample_paths",
    "PairLoads", "all_classes", "pair_loads",
    "LoadResult", "channel_loads", "evaluate_traffic", "load_table", "locality", "max_load",
    "permutation_max_loads",
    "Torus",
    "TRAFFICS", "Traffic", "make_traffic", "traffic_names",
    "ChannelMatching", "WorstCaseResult", "focus_classes", "permutation_channel_load",
    "worst_case", "worst_case_for_channels",
]
