"""The congestion of a butterfly's level paths counted from the rows the packets pass, not from
their links (Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.3
and §3: C on the butterfly, level paths and Valiant's trick).

A level path on BF(d) from row ``a`` to row ``b`` fixes the row's bits one level at a time: at
level ``i`` it sits in the row made of ``b``'s bits below ``i`` and ``a``'s from ``i`` up, and
leaves by the cross link exactly when bit ``i`` of ``a`` and ``b`` differ. So the link it takes
at level ``i`` is named by ``b``'s bits ``0..i`` and ``a``'s bits ``i..d-1`` together, the key
``(a >> i) << (i + 1) | b mod 2^(i+1)`` of ``d + 1`` bits, one key per up link of the level.
The load of every link of level ``i`` is how often its key occurs: a count into ``2^(d+1)``
counters (4 MB of 16-bit counters on BF(20), in the processor's cache) from the packets' two
rows, instead of a count into the whole network's links from the path array (168 million link
ids read and counted on BF(20) with Valiant's trick, 84 MB of counters). With the packets
ordered by ``a`` (sorted once, by counting) the keys of a level grow with the packets, so the
counters are written almost in order.

:func:`level_loads` is what the path systems call on large butterflies when numba is
installed (:data:`universal.paths.systems.CLOSED_MIN_HOPS`);
:func:`universal.paths.collection.count_links` over the path array is the slow, obvious count it
must equal (``tests/paths/test_level_loads.py``). They fill such collections' path matrices
here too, row by row (:func:`fill_level_links`, the numpy fill's links). Without numba the module
imports and its kernels run as plain Python (the tests do so on small cases); the path systems
then do not call it.
"""

from __future__ import annotations

import numpy as np

try:
    from numba import njit
    from universal.kernel_cache import clear_stale
    clear_stale()      # before any kernel's cache loads: numba checks only a kernel's own file
    NUMBA = True
except ImportError:        # the kernels run as plain Python: correct, slow, and never dispatched to
    NUMBA = False

    def njit(**options):
        return lambda function: function

__all__ = ["NUMBA", "fill_level_links", "level_loads"]


@njit(cache=True, nogil=True)
def _order_by(a, b, rows):
    """``(a, b)`` reordered so that ``a`` does not decrease (a counting sort, stable)."""
    start = np.zeros(rows + 1, dtype=np.int64)
    for p in range(len(a)):
        start[a[p] + 1] += 1
    for r in range(rows):
        start[r + 1] += start[r]
    sorted_a = np.empty_like(a)
    sorted_b = np.empty_like(b)
    for p in range(len(a)):
        q = start[a[p]]
        start[a[p]] = q + 1
        sorted_a[q] = a[p]
        sorted_b[q] = b[p]
    return sorted_a, sorted_b


@njit(cache=True, nogil=True)
def _pass_loads(a, b, d, first_level, counts, loads):
    """The largest load of a level path pass from rows ``a`` to rows ``b`` over levels
    ``first_level..first_level + d - 1`` of the host, counted level by level in ``counts``
    (``2^(d+1)`` counters); -1 if a count would wrap. With a non-empty ``loads`` (a counter per
    link of the host) every link's load is written there too."""
    top = 0
    largest = np.iinfo(counts.dtype).max
    for i in range(d):
        counts[:] = 0
        low = (2 << i) - 1
        for p in range(len(a)):
            key = ((a[p] >> i) << (i + 1)) | (b[p] & low)
            count = int(counts[key]) + 1
            if count > top:
                if count > largest:
                    return -1     # the counter would wrap
                top = count
            counts[key] = count
        if len(loads):
            below = (1 << i) - 1
            for key in range(len(counts)):
                if counts[key]:
                    # the row before level i: b's bits below i, a's from i up; cross if they differ at i
                    row = (key & below) | ((key >> (i + 1)) << i)
                    cross = ((key >> i) ^ (key >> (i + 1))) & 1
                    loads[4 * (((first_level + i) << d) + row) + 2 * cross] = counts[key]
    return top


@njit(cache=True, nogil=True)
def _fill_pass(a, b, d, first_level, out):
    """Write the level paths from rows ``a`` to rows ``b`` into columns ``first_level ..
    first_level + d - 1`` of ``out``, one path per row, as
    :func:`universal.paths.leveled._level_links` numbers their links (levels of the host)."""
    for p in range(len(a)):
        row = np.int64(a[p])
        differ = row ^ np.int64(b[p])
        for i in range(d):
            cross = (differ >> i) & 1
            out[p, first_level + i] = 4 * (((first_level + i) << d) + row) + 2 * cross
            row ^= cross << i


def fill_level_links(passes: list[tuple[np.ndarray, np.ndarray]], d: int, out: np.ndarray) -> None:
    """Fill ``out`` (one row per packet, ``d`` columns per pass) with the links of level paths on
    butterflies of dimension ``d`` back to back, pass ``k`` from rows ``a`` to rows ``b`` on
    levels ``k d .. (k + 1) d - 1``: compiled, row by row (one pass over the array in order).

    Examples
    --------
    >>> out = np.empty((2, 2), dtype=np.int32)
    >>> fill_level_links([(np.array([0, 3]), np.array([3, 3]))], 2, out)
    >>> out.tolist()     # row 0 crosses at both levels, row 3 at neither
    [[2, 22], [12, 28]]
    """
    for k, (a, b) in enumerate(passes):
        _fill_pass(a, b, d, k * d, out)


def _nondecreasing(a: np.ndarray) -> bool:
    return bool(np.all(a[1:] >= a[:-1])) if len(a) > 1 else True


def level_loads(d: int, passes: list[tuple[np.ndarray, np.ndarray]],
                num_links: int | None = None) -> tuple[int, np.ndarray | None] | None:
    """C of level paths on butterflies of dimension ``d`` back to back, counted from their rows,
    and with ``num_links`` the load of every link.

    Parameters
    ----------
    d : int
        The butterflies' dimension.
    passes : list of (ndarray, ndarray)
        Per butterfly (pass), from level 0 of the host up, the rows every packet enters it at
        and leaves it at (``0..2^d - 1``).
    num_links : int, optional
        The host's number of links: also count every link's load.

    Returns
    -------
    (int, ndarray or None) or None
        C, the largest number of paths over one link, and the loads (as
        :func:`universal.paths.collection.count_links` gives them) or None; None when a load
        does not fit the 16-bit counters (more than 65,535 paths over one link: count the path
        array then).

    Examples
    --------
    >>> # BF(2): rows 0 -> 3 and 1 -> 3 share the cross link out of row 1 at level 1 (link 22)
    >>> C, loads = level_loads(2, [(np.array([0, 1]), np.array([3, 3]))], num_links=32)
    >>> C, np.flatnonzero(loads).tolist(), int(loads[22])
    (2, [2, 4, 22], 2)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.3 (C) and §3.
    """
    counts = np.zeros(2 << d, dtype=np.uint16)
    loads = np.zeros(num_links if num_links is not None else 0, dtype=np.uint16)
    top = 0
    kind = np.int32 if d < 30 else np.int64
    for level, (a, b) in zip(range(0, d * len(passes), d), passes):
        a, b = np.asarray(a).astype(kind, copy=False), np.asarray(b).astype(kind, copy=False)
        if not _nondecreasing(a):
            a, b = _order_by(a, b, 1 << d)     # the keys then grow with the packets
        load = int(_pass_loads(a, b, d, level, counts, loads))
        if load < 0:
            return None
        top = max(top, load)
    if num_links is None:
        return top, None
    small = next(t for t in (np.int8, np.int16, np.int32) if top <= np.iinfo(t).max)
    return top, loads.astype(small)
