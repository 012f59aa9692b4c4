"""Networks: the registry of SPEC §8 names and the generators behind them.

>>> from universal.networks import build_network
>>> build_network("torus:k=8,n=2").num_nodes
64
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from universal.errors import UserError
from universal.networks.base import Network
from universal.networks.multibutterfly import multibutterfly
from universal.networks.generators import (
    butterfly,
    from_networkx,
    hypercube,
    mesh,
    read_edgelist,
    torus,
    wrapped_butterfly,
)
from universal.registry import Registry, Spec, check_known_params, parse_spec, take_int

if TYPE_CHECKING:
    import networkx as nx

NETWORKS: Registry[Network] = Registry("network")


@NETWORKS.register("butterfly", "BF(d): levels 0..d, rows are d-bit strings")
def _butterfly(spec: Spec, base_dir: Path | None) -> Network:
    check_known_params(spec, {"d"})
    return butterfly(take_int(spec, "d", low=1, high=24))


@NETWORKS.register("wrapped-butterfly", "W-BF(d): BF(d) with level d identified with level 0")
def _wrapped(spec: Spec, base_dir: Path | None) -> Network:
    check_known_params(spec, {"d"})
    return wrapped_butterfly(take_int(spec, "d", low=3, high=24))


@NETWORKS.register("multibutterfly", "the s-ary d-dimensional multibutterfly: levels 0..d of sqrt(s)^d rows, "
                   "random splitters (seed=)")
def _multibutterfly(spec: Spec, base_dir: Path | None) -> Network:
    check_known_params(spec, {"s", "d", "seed"})
    return multibutterfly(take_int(spec, "s", low=4, high=1 << 20), take_int(spec, "d", low=1, high=24),
                          take_int(spec, "seed", default=0, low=0, high=2**63 - 1))


@NETWORKS.register("mesh", "M(k,n): the k-ary n-dimensional mesh")
def _mesh(spec: Spec, base_dir: Path | None) -> Network:
    check_known_params(spec, {"k", "n"})
    return mesh(take_int(spec, "k", low=2), take_int(spec, "n", low=1, high=24))


@NETWORKS.register("torus", "T(k,n): the k-ary n-cube")
def _torus(spec: Spec, base_dir: Path | None) -> Network:
    check_known_params(spec, {"k", "n"})
    return torus(take_int(spec, "k", low=2), take_int(spec, "n", low=1, high=24))


@NETWORKS.register("hypercube", "the d-dimensional hypercube M(2,d)")
def _hypercube(spec: Spec, base_dir: Path | None) -> Network:
    check_known_params(spec, {"d"})
    return hypercube(take_int(spec, "d", low=1, high=22))


@NETWORKS.register("edgelist", "any graph from a file with one 'u v' pair per line")
def _edgelist(spec: Spec, base_dir: Path | None) -> Network:
    path = spec.arg or spec.params.get("file")
    if not path:
        raise UserError(f"{spec.text!r}: give the file as edgelist:PATH")
    return read_edgelist(resolve_path(path, base_dir))


def resolve_path(path: str, base_dir: Path | None) -> Path:
    """A relative path resolves against ``base_dir`` (a scenario file's folder) when given."""
    p = Path(path).expanduser()
    if not p.is_absolute() and base_dir is not None:
        p = base_dir / p
    return p


def build_network(network: "str | Network | nx.Graph", base_dir: Path | None = None) -> Network:
    """A :class:`Network` from a registered name, a networkx graph, or a Network (returned as is).

    Parameters
    ----------
    network : str, Network or networkx.Graph
        E.g. ``"butterfly:d=8"``, ``"torus:k=8,n=2"``, ``"edgelist:net.txt"``.
    base_dir : Path, optional
        Folder that relative file names resolve against.

    Returns
    -------
    Network

    Examples
    --------
    >>> build_network("butterfly:d=3").depth
    3
    """
    if isinstance(network, Network):
        return network
    if _is_networkx_graph(network):
        return from_networkx(network, name=str(network.name or "graph"))
    spec = parse_spec(network)
    return NETWORKS.entry(spec.name).factory(spec, base_dir)


def _is_networkx_graph(obj: object) -> bool:
    """True for a networkx graph, without importing networkx when the caller has not (a graph
    object cannot exist unless networkx was imported)."""
    nx = sys.modules.get("networkx")
    return nx is not None and isinstance(obj, nx.Graph)


__all__ = [
    "NETWORKS",
    "Network",
    "build_network",
    "butterfly",
    "from_networkx",
    "hypercube",
    "mesh",
    "multibutterfly",
    "read_edgelist",
    "resolve_path",
    "torus",
    "wrapped_butterfly",
]
