"""The open loop's traffic patterns and rate units, from the load analysis's traffic (SPEC §11;
Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003, §2). The injection processes and the traffic rows the engine draws from are in
:mod:`universal.engine.workload`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from universal.engine.workload import OfferedTraffic
from universal.errors import UserError
from universal.networks import Network
from universal.registry import parse_spec

__all__ = ["offered_traffic", "capacity_rate"]


def offered_traffic(network: Network, text: str) -> OfferedTraffic:
    """The traffic pattern ``text`` (the names of ``universal load``, e.g. ``permutation:file=P``).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> tr = offered_traffic(build_network("torus:k=4,n=1"), "tornado")
    >>> tr.perm.tolist(), tr.rowsum.tolist()
    ([1, 2, 3, 0], [1.0, 1.0, 1.0, 1.0])
    """
    from universal.oblivious.graphs import graph_traffic

    spec = parse_spec(text)
    N = len(network.endpoints)            # the terminals, numbered first, where there are any
    if N > 4096:
        raise UserError(f"open-loop traffic matrices handle at most 4096 nodes; {network.name} has {N:,}")
    if spec.name == "random-perms":
        raise UserError("random-perms is a family of patterns; run one permutation:file=P at a time")
    tr = graph_traffic(network, text)
    if tr.perm is not None:
        matrix = np.zeros((N, N))
        matrix[np.arange(N), tr.perm] = 1.0
        return OfferedTraffic(tr.name, np.ones(N), tr.perm.astype(np.int64), None, matrix)
    matrix = np.asarray(tr.matrix, dtype=float)
    rowsum = matrix.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cum = np.cumsum(matrix, axis=1) / np.where(rowsum > 0, rowsum, 1)[:, None]
    cum[:, -1] = 1.0
    return OfferedTraffic(tr.name, rowsum, None, cum, matrix)


def capacity_rate(network: Network, bandwidth: int = 1) -> Fraction:
    """Packets per node per step at 1.0 of capacity: ``B / capacity_load`` (SPEC §7).

    On the k-ary n-cube that is ``8B/k`` for even k (GOAL §2.1); on a network with terminals
    ``B`` packets per terminal per step (the capacity load is a terminal's own link, 1).

    Examples
    --------
    >>> from universal.networks import build_network
    >>> capacity_rate(build_network("torus:k=8,n=2")), capacity_rate(build_network("torus:k=16,n=2"))
    (Fraction(1, 1), Fraction(1, 2))
    """
    from universal.oblivious.graphs import graph_capacity

    if network.num_nodes > 256 and network.kind != "torus" and network.terminals is None:
        raise UserError(f"the capacity of {network.name} needs the all-pairs analysis (at most 256 nodes); "
                        "give rates with --units packets")
    return Fraction(bandwidth) / graph_capacity(network).load
