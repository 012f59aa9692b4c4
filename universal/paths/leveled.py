"""Level paths on leveled networks: the arithmetic of a butterfly's links, and a multibutterfly's paths.

The pieces of :mod:`universal.paths.systems`' level paths (which also exports every name here)
that need no threshold: the check that packets go from inputs to outputs, the links of the
level paths computed column by column (:func:`_level_links`, in cache-sized row blocks), the
rows the packets pass kept for counting and routing from them (:func:`_row_passes`), a path
matrix made into a collection, and the splitter paths of a multibutterfly. Where the paths are
kept as rows, filled compiled or counted from the rows (:data:`universal.paths.systems.CLOSED_MIN_HOPS`)
is decided in :mod:`universal.paths.systems`.

Reference: Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.3, §5.1.
"""

from __future__ import annotations

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.paths.collection import PathCollection
from universal.workloads import Problem


def _check_leveled_problem(problem: Problem, network: Network) -> None:
    levels = network.levels
    bad = (levels[problem.sources] != 0) | (levels[problem.dests] != levels[network.outputs[0]])
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise UserError(
            f"on {network.name} packets go from inputs (level 0) to outputs; pair "
            f"{network.label_of(int(problem.sources[i]))} -> {network.label_of(int(problem.dests[i]))} does not"
        )


def _level_links(d: int, start_level: int, rows: np.ndarray, target_rows: np.ndarray,
                 out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Links of the level paths over levels ``start_level .. start_level + d`` fixing bits 0..d-1.

    Uses the link numbering of :func:`universal.networks.generators.butterfly`: the forward link
    from ``(i, r)`` of kind ``c`` is ``4 * (i * 2**d + r) + 2 * c``. Returns ``(links, final rows)``
    with ``links`` of shape (len(rows), d), written into ``out`` if given (e.g. int32 columns of
    a larger matrix, so that no int64 copy of the paths is ever made).

    Before step ``i`` the row holds the target's bits below ``i`` and its own from ``i`` up, and
    the link crosses exactly when bit ``i`` differs: each column is a few in-place operations in
    the type of ``out`` (int32 on every butterfly up to BF(20) with Valiant's trick), with no
    row updated step after step.

    Examples
    --------
    >>> links, final = _level_links(2, 0, np.array([0, 3]), np.array([3, 3]))
    >>> links.tolist(), final.tolist()     # row 0 crosses at both levels, row 3 at neither
    ([[2, 22], [12, 28]], [3, 3])
    """
    if out is None:
        out = np.empty((len(rows), d), dtype=np.int64)
    kind = out.dtype.type
    start = np.asarray(rows).astype(out.dtype)
    differ = start ^ np.asarray(target_rows).astype(out.dtype)   # the bits the path fixes
    start4, differ4 = start << 2, differ << 2
    part, cross = np.empty_like(start), np.empty_like(start)
    for step in range(d):
        np.bitwise_and(differ4, kind(((1 << step) - 1) << 2), out=part)
        np.bitwise_xor(part, start4, out=part)                      # 4 * row before the step
        np.add(part, kind(4 * (start_level + step) << d), out=part)
        if step:                                                    # 2 * (bit `step` of differ)
            np.right_shift(differ, step - 1, out=cross)
        else:
            np.left_shift(differ, 1, out=cross)
        np.bitwise_and(cross, kind(2), out=cross)
        np.bitwise_or(part, cross, out=out[:, step])
    return out, start ^ differ


def _row_blocks(rows: int, columns: int, cache_bytes: int = 1 << 20) -> list[slice]:
    """Slices of about ``cache_bytes`` of a (rows, columns) int32 matrix filled column by column.

    Filling a whole column of a million-row path matrix touches a cache line per row; a block
    that fits in cache is filled column by column at the speed of sequential writes.
    """
    step = max(1, cache_bytes // (4 * max(columns, 1)))
    return [slice(i, min(i + step, rows)) for i in range(0, rows, step)]


def _collection_from_matrix(network: Network, link_matrix: np.ndarray, sources: np.ndarray,
                            dests: np.ndarray, system: str, note: str = "") -> PathCollection:
    n, length = link_matrix.shape
    offsets = np.arange(n + 1, dtype=np.int64) * length
    return PathCollection(network, offsets, link_matrix.reshape(-1), sources, dests, system, note)


def _row_passes(d: int, nodes: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The passes ``(rows[k], rows[k + 1])`` of level paths through the rows of the given nodes
    (a node's row is its id mod 2^d), each kept once in the smallest type the counting and routing
    kernels take (int32 up to BF(29): 16 MB per row array on BF(20) with a 4-relation, where int64
    takes 32 MB), written there directly (no int64 rows in between)."""
    kind = np.int32 if d < 30 else np.int64
    rows = [np.bitwise_and(n, (1 << d) - 1, out=np.empty(len(n), dtype=kind), casting="unsafe") for n in nodes]
    return list(zip(rows[:-1], rows[1:]))


def multibutterfly_paths(problem: Problem, network: Network, rng: np.random.Generator | None = None) -> PathCollection:
    """Level paths on a multibutterfly: at every level one of the links into the output set that
    leads to the destination (the splitter rule's allowed set), the lowest-numbered one
    (``dimension-order``) or, with ``rng``, a uniformly random one drawn now (``random-splitter``).

    Parameters
    ----------
    problem : Problem
        From inputs to outputs.
    network : Network
        A multibutterfly.
    rng : numpy.random.Generator, optional

    Returns
    -------
    PathCollection

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.workloads import build_problem
    >>> net = build_network("multibutterfly:s=16,d=3")
    >>> prob = build_problem("permutation:random", net, np.random.default_rng(0))
    >>> paths = multibutterfly_paths(prob, net, np.random.default_rng(1))
    >>> paths.dilation, bool(np.all(paths.dests == prob.dests))
    (3, True)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §5.1.
    """
    from universal.networks.multibutterfly import splitter_paths

    _check_leveled_problem(problem, network)
    rows = len(network.inputs)
    links = splitter_paths(network, problem.sources, problem.dests - network.depth * rows, rng)
    name = "dimension-order" if rng is None else "random-splitter"
    return _collection_from_matrix(network, links, problem.sources, problem.dests, name)
