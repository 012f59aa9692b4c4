"""Routing problems of Meyer auf der Heide & Scheideler, "Communication in Parallel Systems",
§2.2: permutations, h-functions, h-relations, broadcasting and gossiping, plus user pairs.

On a leveled network (butterflies) a problem goes from the inputs to the outputs, and named
permutations act on row numbers; on a network with terminals (dragonfly, fat tree, flattened
butterfly, HyperX) it goes between terminals, numbered first; elsewhere they act on node ids. Packet ``i`` of a problem is
the pair ``(sources[i], dests[i])``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from universal.datafiles import read_rows
from universal.errors import UserError
from universal.networks import Network, resolve_path
from universal.registry import Registry, Spec, check_known_params, parse_spec, pattern_name, take_int


@dataclass
class Problem:
    """A multiset of (source, destination) pairs.

    Attributes
    ----------
    name : str
        The name it was built from, e.g. ``"h-relation:h=4"``.
    sources, dests : ndarray of int64
        Node ids; packet ``i`` goes from ``sources[i]`` to ``dests[i]``.
    note : str
        A remark for captions (e.g. that a broadcast is routed as unicast packets).
    """

    name: str
    sources: np.ndarray
    dests: np.ndarray
    note: str = ""

    @property
    def size(self) -> int:
        return len(self.sources)


def endpoints(network: Network) -> tuple[np.ndarray, np.ndarray]:
    """The nodes problems start and end at: inputs and outputs of a leveled network, the terminals
    of a network with concentration (dragonfly, fat tree, ...), else all nodes."""
    if network.inputs is not None and network.outputs is not None:
        return network.inputs, network.outputs
    every = network.endpoints
    return every, every


PROBLEMS: Registry["Problem"] = Registry("problem")

#: Problems with more packets than this are refused before anything is allocated.
MAX_PACKETS = 50_000_000


def _check_packets(count: int, spec: Spec, network: Network) -> None:
    if count > MAX_PACKETS:
        raise UserError(f"{spec.text} on {network.name} would make {count:,} packets, more than this tool "
                        f"handles ({MAX_PACKETS:,})")


# --- named permutations -------------------------------------------------------------------------


def _bits(count: int, what: str) -> int:
    if count < 2 or count & (count - 1):
        raise UserError(f"{what} needs a power-of-two number of endpoints, this network has {count}")
    return count.bit_length() - 1


def _grid_shape(network: Network, what: str) -> tuple[int, int]:
    if network.kind not in ("mesh", "torus", "hypercube"):
        raise UserError(f"{what} is defined on meshes, tori and hypercubes, not on {network.name}")
    return network.params["k"], network.params["n"]


def _is_bit_strings(network: Network) -> bool:
    # Butterfly rows and hypercube addresses are d-bit strings; a multibutterfly's rows are when
    # their number, sqrt(s)^d, is a power of two (the patterns check that).
    return network.kind in ("butterfly", "wrapped-butterfly", "multibutterfly", "hypercube")


def _perm_random(network: Network, m: int, rng: np.random.Generator) -> np.ndarray:
    return rng.permutation(m)


def _perm_bit_reversal(network: Network, m: int, rng: np.random.Generator) -> np.ndarray:
    b = _bits(m, "bit-reversal")
    idx = np.arange(m, dtype=np.int64)
    out = np.zeros(m, dtype=np.int64)
    for j in range(b):
        out |= ((idx >> j) & 1) << (b - 1 - j)
    return out


def _perm_transpose(network: Network, m: int, rng: np.random.Generator) -> np.ndarray:
    idx = np.arange(m, dtype=np.int64)
    if _is_bit_strings(network):
        b = _bits(m, "transpose")
        if b % 2:
            raise UserError(f"transpose swaps the two halves of the address bits: needs an even number, got {b}")
        half = b // 2
        low = idx & ((1 << half) - 1)
        return (low << half) | (idx >> half)
    k, n = _grid_shape(network, "transpose")
    if n != 2:
        raise UserError(f"transpose (x,y) -> (y,x) needs a 2-dimensional mesh or torus, got n={n}")
    return (idx % k) * k + idx // k


def _perm_bit_complement(network: Network, m: int, rng: np.random.Generator) -> np.ndarray:
    idx = np.arange(m, dtype=np.int64)
    if _is_bit_strings(network) or network.kind == "graph" or network.terminals is not None:
        _bits(m, "bit-complement")
        return idx ^ (m - 1)
    k, n = _grid_shape(network, "bit-complement")
    # (x_0, ..., x_{n-1}) -> (k-1-x_0, ..., k-1-x_{n-1}) is id -> (k^n - 1) - id.
    return (k**n - 1) - idx


def _perm_shuffle(network: Network, m: int, rng: np.random.Generator) -> np.ndarray:
    b = _bits(m, "perfect shuffle")
    idx = np.arange(m, dtype=np.int64)
    return ((idx << 1) | (idx >> (b - 1))) & (m - 1)


def _shift_x(network: Network, m: int, hops: int) -> np.ndarray:
    k, _ = _grid_shape(network, "this pattern")
    idx = np.arange(m, dtype=np.int64)
    x = idx % k
    return idx - x + (x + hops) % k


def _perm_tornado(network: Network, m: int, rng: np.random.Generator) -> np.ndarray:
    k, _ = _grid_shape(network, "tornado")
    return _shift_x(network, m, -(-k // 2) - 1)


def _perm_neighbor(network: Network, m: int, rng: np.random.Generator) -> np.ndarray:
    return _shift_x(network, m, 1)


def _shift_every_dimension(network: Network, m: int, hops: int, name: str) -> np.ndarray:
    k, n = _grid_shape(network, name)
    coords = (np.arange(m, dtype=np.int64)[:, None] // k ** np.arange(n)) % k
    return ((coords + hops) % k) @ (k ** np.arange(n))


def _perm_booksim_tornado(network: Network, m: int, rng: np.random.Generator) -> np.ndarray:
    """BookSim2's tornado: ``ceil(k/2) - 1`` hops ahead in every dimension."""
    k, _ = _grid_shape(network, "booksim-tornado")
    return _shift_every_dimension(network, m, -(-k // 2) - 1, "booksim-tornado")


def _perm_booksim_neighbor(network: Network, m: int, rng: np.random.Generator) -> np.ndarray:
    """BookSim2's neighbor: one hop ahead in every dimension."""
    return _shift_every_dimension(network, m, 1, "booksim-neighbor")


NAMED_PERMUTATIONS = {
    "random": _perm_random,
    "bit-reversal": _perm_bit_reversal,
    "transpose": _perm_transpose,
    "bit-complement": _perm_bit_complement,
    "shuffle": _perm_shuffle,
    "tornado": _perm_tornado,
    "neighbor": _perm_neighbor,
    "booksim-tornado": _perm_booksim_tornado,
    "booksim-neighbor": _perm_booksim_neighbor,
}


def _endpoint_index(network: Network, token: str, pool: np.ndarray, where: str) -> int:
    node = network.node(token)
    hit = np.flatnonzero(pool == node)
    if len(hit) == 0:
        raise UserError(f"{where}: node {token} is not an endpoint of this problem on {network.name}")
    return int(hit[0])


def _perm_from_file(network: Network, path: Path) -> np.ndarray:
    srcs, dsts = endpoints(network)
    rows = read_rows(path, "permutation")
    if len(rows) != len(srcs):
        raise UserError(f"{path}: a permutation of this network has {len(srcs)} lines, the file has {len(rows)}")
    perm = np.empty(len(rows), dtype=np.int64)
    for i, (lineno, fields) in enumerate(rows):
        if len(fields) != 1:
            raise UserError(f"{path}:{lineno}: expected one destination per line, got {' '.join(fields)!r}")
        perm[i] = _endpoint_index(network, fields[0], dsts, f"{path}:{lineno}")
    counts = np.bincount(perm, minlength=len(dsts))
    if np.any(counts != 1):
        twice = int(np.flatnonzero(counts > 1)[0])
        raise UserError(f"{path}: not a permutation (destination {network.label_of(int(dsts[twice]))} appears {counts[twice]} times)")
    return perm


@PROBLEMS.register("permutation", "a permutation: random, bit-reversal, transpose, bit-complement, shuffle, "
                                  "tornado, neighbor, booksim-tornado, booksim-neighbor, file=PATH")
def _permutation(spec: Spec, network: Network, rng: np.random.Generator, base_dir: Path | None) -> Problem:
    srcs, dsts = endpoints(network)
    if "file" in spec.params:
        check_known_params(spec, {"file"})
        perm = _perm_from_file(network, resolve_path(spec.params["file"], base_dir))
    else:
        check_known_params(spec, set())
        kind = pattern_name((spec.arg or "random").lower().replace("_", "-"), NAMED_PERMUTATIONS)
        if kind not in NAMED_PERMUTATIONS:
            known = ", ".join([*NAMED_PERMUTATIONS, "file=PATH"])
            raise UserError(f"unknown permutation {kind!r} (known: {known})")
        perm = NAMED_PERMUTATIONS[kind](network, len(srcs), rng)
    return Problem(spec.text, srcs.copy(), dsts[perm])


@PROBLEMS.register("h-function", "every endpoint sends h packets to random destinations")
def _h_function(spec: Spec, network: Network, rng: np.random.Generator, base_dir: Path | None) -> Problem:
    check_known_params(spec, {"h"})
    h = take_int(spec, "h", low=1, high=1024)
    srcs, dsts = endpoints(network)
    m = len(srcs)
    _check_packets(h * m, spec, network)
    return Problem(spec.text, np.tile(srcs, h), dsts[rng.integers(0, len(dsts), size=h * m)])


def check_h_relation(sources: np.ndarray, dests: np.ndarray, network: Network) -> int:
    """The h for which the pairs form an h-relation (every endpoint sends h and receives h).

    Raises
    ------
    UserError
        If the pairs are not an h-relation.
    """
    srcs, dsts = endpoints(network)
    sent = np.bincount(np.searchsorted(np.sort(srcs), sources), minlength=len(srcs))
    got = np.bincount(np.searchsorted(np.sort(dsts), dests), minlength=len(dsts))
    h = int(sent[0]) if len(sent) else 0
    if np.any(sent != h) or np.any(got != h) or h == 0:
        raise UserError(
            f"not an h-relation on {network.name}: endpoints send between {sent.min()} and {sent.max()} "
            f"packets and receive between {got.min()} and {got.max()}"
        )
    return h


@PROBLEMS.register("h-relation", "an exact random h-relation (union of h random permutations), or file=PATH checked")
def _h_relation(spec: Spec, network: Network, rng: np.random.Generator, base_dir: Path | None) -> Problem:
    check_known_params(spec, {"h", "file"})
    if "file" in spec.params:
        pairs = _pairs_from_file(network, resolve_path(spec.params["file"], base_dir))
        h = check_h_relation(pairs.sources, pairs.dests, network)
        if "h" in spec.params and take_int(spec, "h") != h:
            raise UserError(f"{spec.params['file']} is a {h}-relation, not an h={spec.params['h']} relation")
        return Problem(spec.text, pairs.sources, pairs.dests)
    h = take_int(spec, "h", low=1, high=1024)
    srcs, dsts = endpoints(network)
    m = len(srcs)
    _check_packets(h * m, spec, network)
    return Problem(spec.text, np.tile(srcs, h), _permuted_copies(dsts, h, rng))


def _permuted_copies(dsts: np.ndarray, h: int, rng: np.random.Generator) -> np.ndarray:
    """``dsts`` permuted at random ``h`` times, one after the other: ``dsts[perms]`` with ``perms``
    the concatenation of ``h`` calls of ``rng.permutation(len(dsts))``, the same draws.

    Each permutation is shuffled where it ends up (``permutation(m)`` is a shuffled ``arange(m)``),
    and where the endpoints are consecutive node ids (every butterfly's outputs, all nodes
    elsewhere) they are the permutation plus the first id, added in place: a 4-relation on BF(20)
    then allocates one array of its 4 million destinations instead of five more of the same size
    in all (each fresh megabyte costs the system time of its page faults).

    Examples
    --------
    >>> a = _permuted_copies(np.arange(5, 9), 2, np.random.default_rng(1))
    >>> g = np.random.default_rng(1)
    >>> a.tolist() == np.arange(5, 9)[np.concatenate([g.permutation(4), g.permutation(4)])].tolist()
    True
    """
    m = len(dsts)
    perms = np.empty(h * m, dtype=np.int64)
    ids = np.arange(m, dtype=np.int64)
    for k in range(h):
        part = perms[k * m:(k + 1) * m]
        part[:] = ids
        rng.shuffle(part)
    consecutive = dsts.dtype == np.int64 and m and int(dsts[-1]) - int(dsts[0]) == m - 1
    if consecutive and np.array_equal(dsts, ids + int(dsts[0])):
        perms += int(dsts[0])        # consecutive ids: dsts[p] is p plus the first
        return perms
    return dsts[perms]


@PROBLEMS.register("broadcast", "one packet from source= to every other endpoint (as unicast packets)")
def _broadcast(spec: Spec, network: Network, rng: np.random.Generator, base_dir: Path | None) -> Problem:
    check_known_params(spec, {"source"})
    srcs, dsts = endpoints(network)
    if "source" not in spec.params:
        raise UserError(f"{spec.text!r} needs parameter source=NODE")
    source = srcs[_endpoint_index(network, spec.params["source"], srcs, spec.text)]
    targets = dsts[dsts != source]
    return Problem(spec.text, np.full(len(targets), source, dtype=np.int64), targets.copy(),
                   note="broadcast routed as unicast packets")


@PROBLEMS.register("gossip", "every endpoint sends one packet to every other endpoint (as unicast packets)")
def _gossip(spec: Spec, network: Network, rng: np.random.Generator, base_dir: Path | None) -> Problem:
    check_known_params(spec, set())
    srcs, dsts = endpoints(network)
    _check_packets(len(srcs) * len(dsts), spec, network)
    s = np.repeat(srcs, len(dsts))
    d = np.tile(dsts, len(srcs))
    keep = s != d
    return Problem(spec.text, s[keep], d[keep], note="gossip routed as unicast packets")


def _pairs_from_file(network: Network, path: Path) -> Problem:
    rows = read_rows(path, "pairs")
    if not rows:
        raise UserError(f"{path}: no pairs")
    srcs = np.empty(len(rows), dtype=np.int64)
    dsts = np.empty(len(rows), dtype=np.int64)
    for i, (lineno, fields) in enumerate(rows):
        if len(fields) != 2:
            raise UserError(f"{path}:{lineno}: expected 'source destination', got {' '.join(fields)!r}")
        srcs[i] = network.node(fields[0])
        dsts[i] = network.node(fields[1])
        if network.terminals is not None and max(srcs[i], dsts[i]) >= len(network.terminals):
            router = srcs[i] if srcs[i] >= len(network.terminals) else dsts[i]
            raise UserError(f"{path}:{lineno}: node {network.label_of(int(router))} is a router of "
                            f"{network.name}; packets go between terminals")
    return Problem(str(path), srcs, dsts)


@PROBLEMS.register("pairs", "user-given (source, destination) pairs from file=PATH")
def _pairs(spec: Spec, network: Network, rng: np.random.Generator, base_dir: Path | None) -> Problem:
    check_known_params(spec, {"file"})
    path = spec.params.get("file") or spec.arg
    if not path:
        raise UserError(f"{spec.text!r}: give the file as pairs:file=PATH")
    pairs = _pairs_from_file(network, resolve_path(path, base_dir))
    return Problem(spec.text, pairs.sources, pairs.dests)


def estimate_packets(problem: str | Problem, network: Network) -> int:
    """Number of packets a problem will have, computed without building it (for size checks).

    File-based problems are counted by their non-comment lines.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> estimate_packets("h-relation:h=4", build_network("butterfly:d=10"))
    4096
    """
    if isinstance(problem, Problem):
        return problem.size
    spec = parse_spec(problem)
    srcs, dsts = endpoints(network)
    file = spec.params.get("file") or (spec.arg if spec.name in ("pairs",) else None)
    if spec.name in ("h-relation", "h-function") and "file" not in spec.params:
        return take_int(spec, "h", low=1, high=1024) * len(srcs)
    if spec.name == "gossip":
        return len(srcs) * len(dsts)
    if file:
        try:
            with open(file, "rb") as handle:
                return sum(1 for line in handle if line.split(b"#", 1)[0].strip())
        except OSError:
            return 0  # the builder reports the missing file
    return len(srcs)


def build_problem(problem: str | Problem, network: Network, rng: np.random.Generator,
                  base_dir: Path | None = None) -> Problem:
    """Build a problem by name (SPEC §8), drawing any randomness from ``rng``.

    Parameters
    ----------
    problem : str or Problem
        E.g. ``"permutation:random"``, ``"h-relation:h=4"``, ``"broadcast:source=0"``.
    network : Network
    rng : numpy.random.Generator
    base_dir : Path, optional
        Folder that relative file names resolve against.

    Returns
    -------
    Problem

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import build_network
    >>> net = build_network("butterfly:d=3")
    >>> build_problem("h-relation:h=2", net, np.random.default_rng(1)).size
    16
    """
    if isinstance(problem, Problem):
        return problem
    spec = parse_spec(problem)
    return PROBLEMS.entry(spec.name).factory(spec, network, rng, base_dir)
