"""Path systems whose paths come as node sequences: the user's explicit paths and the torus routings.

* ``explicit:file=PATH``: the user's own paths, one per line as node names, checked against the
  problem's pairs.
* ``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``, ``ival`` and the designed routings (tori only):
  each packet's route drawn from the oblivious routing's path distribution
  (:mod:`universal.paths.torus`), the one whose exact channel loads ``universal load`` reports.

Both make their collection from node paths (:meth:`PathCollection.from_node_paths`). They are
filed in the registry by :mod:`universal.paths.systems`, which also exports every name here.

References: B. Towles, "Finding worst-case permutations for oblivious routing algorithms", 2002;
B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design", 2003.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from universal.datafiles import read_rows
from universal.errors import UserError
from universal.networks import Network
from universal.paths.collection import PathCollection
from universal.workloads import Problem


# --- explicit paths ------------------------------------------------------------------------------


def read_explicit_paths(network: Network, path: Path) -> list[list[int]]:
    """Read one path per line as node names; ``#`` starts a comment."""
    result = []
    for lineno, fields in read_rows(path, "paths"):
        try:
            result.append([network.node(f) for f in fields])
        except UserError as exc:
            raise UserError(f"{path}:{lineno}: {exc}") from None
    if not result:
        raise UserError(f"{path}: no paths")
    return result


def explicit_paths(problem: Problem, network: Network, file: Path) -> PathCollection:
    """The user's paths; path ``i`` must run from the problem's ``i``-th source to its destination."""
    node_paths = read_explicit_paths(network, file)
    coll = PathCollection.from_node_paths(network, node_paths, "explicit")
    if coll.size != problem.size:
        raise UserError(f"{file} has {coll.size} paths but the problem has {problem.size} packets")
    wrong = (coll.sources != problem.sources) | (coll.dests != problem.dests)
    if np.any(wrong):
        i = int(np.flatnonzero(wrong)[0])
        raise UserError(
            f"{file}: path {i + 1} runs {network.label_of(int(coll.sources[i]))} -> "
            f"{network.label_of(int(coll.dests[i]))}, but packet {i + 1} goes "
            f"{network.label_of(int(problem.sources[i]))} -> {network.label_of(int(problem.dests[i]))}"
        )
    return coll


def oblivious_paths(routing: str, problem: Problem, network: Network, rng: np.random.Generator) -> PathCollection:
    """Paths drawn from the oblivious routing ``routing`` of the load analysis (tori only).

    Each packet's path is sampled independently with
    :func:`universal.paths.torus.sample_paths`, so the expected number of paths on a link is the
    channel load that ``universal load`` computes exactly for the same traffic.

    Parameters
    ----------
    routing : str
        ``dor``, ``val``, ``romm``, ``rlb``, ``rlbth`` or ``ival``.
    problem : Problem
    network : Network
        A ``torus:k=,n=`` network with k >= 3.
    rng : numpy.random.Generator

    Returns
    -------
    PathCollection

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.workloads import build_problem
    >>> net = build_network("torus:k=8,n=2")
    >>> prob = build_problem("permutation:tornado", net, np.random.default_rng(0))
    >>> coll = oblivious_paths("romm", prob, net, np.random.default_rng(0))
    >>> coll.congestion, coll.dilation, coll.is_shortest
    (3, 3, True)

    References
    ----------
    B. Towles, "Finding worst-case permutations for oblivious routing algorithms", §5 (ROMM);
    B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design", Table 1.
    """
    if network.kind != "torus":
        raise UserError(f"path system {routing!r} is defined on tori (torus:k=,n=) only, not on {network.name}")
    k, n = network.params["k"], network.params["n"]
    # the torus routings load here, when one is routed (a butterfly route never needs them)
    from universal.paths.torus.algorithms import sample_paths
    from universal.paths.torus.geometry import MAX_NODES as OBLIVIOUS_MAX_NODES

    if network.num_nodes > OBLIVIOUS_MAX_NODES:
        raise UserError(f"path system {routing!r} handles tori of at most {OBLIVIOUS_MAX_NODES} nodes; "
                        f"{network.name} has {network.num_nodes:,}")
    node_paths = sample_paths(routing, k, n, problem.sources, problem.dests, rng)
    return PathCollection.from_node_paths(network, node_paths, routing)
