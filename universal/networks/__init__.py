"""Networks: the registry of SPEC §8 names and the generators behind them.

>>> from universal.networks import build_network
>>> build_network("torus:k=8,n=2").num_nodes
64
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING

from universal.errors import UserError
from universal.networks.base import Network
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

    from universal.networks.datacenter import dragonfly, fat_tree, flattened_butterfly, hyperx
    from universal.networks.multibutterfly import multibutterfly

#: The datacenter generators, loaded with the multibutterfly's on first use (a butterfly route
#: never needs them: start-up); the package still exports them by name (:func:`__getattr__`).
_DATACENTER = {"dragonfly", "fat_tree", "flattened_butterfly", "hyperx"}


def __getattr__(name: str):
    # ``from universal.networks import dragonfly`` loads the datacenter generators then
    if name == "multibutterfly":
        from universal.networks.multibutterfly import multibutterfly as generator
    elif name in _DATACENTER:
        from universal.networks import datacenter

        generator = getattr(datacenter, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = generator
    return generator


class _Package(types.ModuleType):
    """This package, whose ``multibutterfly`` stays the generator function when the submodule of
    the same name is imported (Python sets a package's attribute to each submodule it loads; with
    the eager import the function used to shadow the module, and still does)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "multibutterfly" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

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
    from universal.networks.multibutterfly import multibutterfly

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


@NETWORKS.register("dragonfly", "Kim et al.'s dragonfly: p terminals per router, a routers per group, "
                   "h global links per router, g groups (default a = 2p = 2h, g = a*h + 1)")
def _dragonfly(spec: Spec, base_dir: Path | None) -> Network:
    from universal.networks.datacenter import dragonfly

    check_known_params(spec, {"p", "a", "h", "g"})
    p = take_int(spec, "p", low=1, high=1000)
    a = take_int(spec, "a", default=2 * p, low=1, high=10_000)
    h = take_int(spec, "h", default=p, low=1, high=10_000)
    g = take_int(spec, "g", default=a * h + 1, low=2)
    return dragonfly(p, a, h, g)


@NETWORKS.register("fattree", "the k-ary n-tree: k^n terminals, n levels of k^(n-1) switches")
def _fattree(spec: Spec, base_dir: Path | None) -> Network:
    from universal.networks.datacenter import fat_tree

    check_known_params(spec, {"k", "n"})
    return fat_tree(take_int(spec, "k", low=2, high=1000), take_int(spec, "n", low=1, high=24))


@NETWORKS.register("flatfly", "the flattened butterfly (k-ary n-flat), c terminals per router (default k)")
def _flatfly(spec: Spec, base_dir: Path | None) -> Network:
    from universal.networks.datacenter import flattened_butterfly

    check_known_params(spec, {"k", "n", "c"})
    k = take_int(spec, "k", low=2, high=10_000)
    return flattened_butterfly(k, take_int(spec, "n", low=2, high=24), take_int(spec, "c", default=k, low=1))


@NETWORKS.register("hyperx", "HyperX: dimension sizes S=s1,s2,..., links per router pair K, T terminals per router")
def _hyperx(spec: Spec, base_dir: Path | None) -> Network:
    from universal.networks.datacenter import hyperx

    check_known_params(spec, {"s", "k", "t"})
    sizes = _int_list(spec, "s")
    mult = _int_list(spec, "k") if "k" in spec.params else [1] * len(sizes)
    if len(mult) == 1 and len(sizes) > 1:
        mult = mult * len(sizes)
    return hyperx(sizes, mult, take_int(spec, "t", default=1, low=1), name=spec.text)


def _int_list(spec: Spec, key: str) -> list[int]:
    """``S=4,4,2`` -> ``[4, 4, 2]`` (UserError on a missing or non-integer entry)."""
    raw = spec.params.get(key)
    if raw is None:
        raise UserError(f"{spec.text!r} needs parameter {key.upper()}=...")
    try:
        values = [int(x) for x in raw.split(",")]
    except ValueError:
        raise UserError(f"parameter {key.upper()}={raw!r} in {spec.text!r} is not a list of integers") from None
    if len(values) > 24:
        raise UserError(f"parameter {key.upper()}={raw!r} in {spec.text!r} has more than 24 entries")
    return values


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
    "dragonfly",
    "fat_tree",
    "flattened_butterfly",
    "from_networkx",
    "hyperx",
    "hypercube",
    "mesh",
    "multibutterfly",
    "read_edgelist",
    "resolve_path",
    "torus",
    "wrapped_butterfly",
]
