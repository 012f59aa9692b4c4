"""When the node-word loop of :mod:`universal.engine.compiled_levels` routes a butterfly's level
paths, and when it starts from the rows the packets pass instead of their path array: the
conditions alone, without numba, so that the memory estimate made before a run
(:mod:`universal.experiment`) asks the same questions the engine asks during it.

A level path on BF(d) climbs one level per hop (Meyer auf der Heide & Scheideler, "Communication
in Parallel Systems", 1996, §3), so with one packet per link and step (B = 1) and buffers that
never refuse, a node's state is one small word: the step, the out-links taken and the counts of
its two in-buffers (:data:`LEVELS_MAX_CONGESTION` bounds the counts).
"""

from __future__ import annotations

__all__ = ["IN_CACHE_HOPS", "LEVELS_MAX_CONGESTION", "node_words_take", "row_words_fit"]

#: Batches of fewer packet-hops run without prefetching (2^17 int32 link ids are half a
#: megabyte, in a core's second-level cache with the node words, where prefetching only costs:
#: BF(10) 0.72 of the general loop's time without, 0.75 with; BF(12) 1.03 without, 0.85 with).
#: Smaller batches of level paths kept as rows are routed on one word per packet
#: (:mod:`universal.engine.compiled_in_cache`) from their path array.
IN_CACHE_HOPS = 1 << 17

#: The largest congestion whose counts fit the 32-bit word (12 bits each); above it the general
#: loop routes.
LEVELS_MAX_CONGESTION = (1 << 12) - 1


def node_words_take(bandwidth: int, buffer: int | None, congestion: int) -> bool:
    """Whether butterfly level paths of congestion C run on the node words: B = 1, buffers that
    never refuse (unbounded, or b >= C) and C small enough for the words.

    Examples
    --------
    >>> node_words_take(1, None, 14), node_words_take(2, None, 14), node_words_take(1, 8, 14)
    (True, False, False)
    """
    return bandwidth == 1 and (buffer is None or buffer >= congestion) and congestion <= LEVELS_MAX_CONGESTION


def row_words_fit(passes: int, d: int, width: int, packets: int) -> bool:
    """Whether :func:`universal.engine.compiled_levels.route_levels` can make its words from the
    rows of ``passes`` level path passes on BF(d) (one or two, ``width = passes * d`` hops each)
    for ``packets`` packets (the packet id and the exit rows share 63 bits).

    Examples
    --------
    >>> row_words_fit(2, 20, 40, 4 << 20), row_words_fit(2, 21, 42, 4 << 21)   # Valiant, h = 4
    (True, False)
    """
    return passes in (1, 2) and passes * d == width and width + max(packets - 1, 1).bit_length() <= 63
