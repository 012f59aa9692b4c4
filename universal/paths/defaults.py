"""What is known of a network's paths before any is routed: the default path system, a length bound.

:func:`default_base` names the path system used when none is named (by ``route`` without
``--paths`` and as the base of Valiant's trick), :data:`TERMINAL_KINDS` the networks with
terminals whose default is their ``minimal`` routing, and :func:`longest_path_bound` bounds the
path lengths to size work before routing. :mod:`universal.paths.systems` exports every name here.
"""

from __future__ import annotations

from universal.networks import Network
from universal.registry import parse_spec


#: Network kinds with terminals, and their ``minimal`` routing.
TERMINAL_KINDS = ("dragonfly", "fattree", "flatfly", "hyperx")


def longest_path_bound(network: Network, system: str) -> int:
    """A rough upper bound on path lengths under ``system``, to size work before routing anything.

    The depth of a leveled network, n(k - 1) on a mesh or torus, N - 1 elsewhere; twice that
    for Valiant's trick.

    >>> from universal.networks import build_network
    >>> longest_path_bound(build_network("butterfly:d=8"), "valiant")
    16
    """
    if network.leveled:
        longest = network.depth
    elif network.kind in ("mesh", "torus", "hypercube"):
        longest = network.params["n"] * (network.params["k"] - 1)
    else:
        longest = network.num_nodes - 1
    return longest * (2 if parse_spec(system).name == "valiant" else 1)


def default_base(network: Network) -> str:
    """The path system used when none is named: by Valiant's trick and by ``route`` without ``--paths``.

    Dimension order where the network has dimensions, ``minimal`` on the networks with terminals
    (dragonfly, fat tree, flattened butterfly, HyperX), shortest paths elsewhere (edge lists,
    networkx graphs), where dimension order does not exist.

    Parameters
    ----------
    network : Network

    Returns
    -------
    str

    Examples
    --------
    >>> import networkx as nx
    >>> from universal.networks import build_network, from_networkx
    >>> default_base(build_network("torus:k=4,n=2")), default_base(from_networkx(nx.petersen_graph()))
    ('dimension-order', 'shortest')
    """
    if network.kind in ("butterfly", "wrapped-butterfly", "multibutterfly", "mesh", "torus", "hypercube"):
        return "dimension-order"
    if network.kind in TERMINAL_KINDS:
        return "minimal"
    return "shortest"
