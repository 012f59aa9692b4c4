"""The packets' two words for the node-word loop on the rows they pass
(:func:`universal.engine.compiled_levels._run_rows`): each packet's node and its target rows, read
from the path array (:func:`_packet_words`) or from level paths kept as the rows they pass
(:func:`_row_words`). :func:`universal.engine.compiled_levels.route_levels` asks for them; see its
module for the loop (Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996,
§2.1 and §4.1). Without numba the module imports and its kernels run as plain Python.
"""

from __future__ import annotations

import numpy as np

try:
    from numba import njit
    from universal.kernel_cache import clear_stale
    clear_stale()      # before any kernel's cache loads: numba checks only a kernel's own file
except ImportError:        # the loop runs as plain Python: correct, slow, and never dispatched to

    def njit(**options):
        return lambda function: function


@njit(cache=True, nogil=True)
def _fill_words(links, cur, d, width, node, rest):
    """:func:`universal.engine.compiled_levels._run_rows`'s words of the packets whose paths start
    at ``cur``, read from the path array where every pass starts and from the last link."""
    passes = width // d
    rows = (1 << d) - 1
    for w in range(len(cur)):
        start = np.int64(cur[w])
        node[w] = links[start] >> 2                 # level 0: the node is the row
        word = (start // width) << (passes * d)
        for k in range(1, passes + 1):
            if k < passes:      # the row the next pass starts from is this pass's target
                row = np.int64(links[start + k * d] >> 2) & rows
            else:               # the last link's head: its tail's row, bit d - 1 flipped if it crosses
                last = np.int64(links[start + width - 1])
                row = ((last >> 2) & rows) ^ (((last >> 1) & 1) << (d - 1))
            word |= row << ((k - 1) * d)
        rest[w] = word


def _packet_words(links: np.ndarray, cur: np.ndarray, d: int, width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`universal.engine.compiled_levels._run_rows`'s two words per packet, in the order of
    ``cur`` (the paths' starts); None if they do not fit (the paths are not whole passes, or the
    ids leave no room)."""
    passes = width // d
    packets = len(links) // width
    if passes * d != width or passes * d + max(packets - 1, 1).bit_length() > 63:
        return None
    node, rest = np.empty(len(cur), dtype=np.int64), np.empty(len(cur), dtype=np.int64)
    _fill_words(links, cur, d, width, node, rest)
    return node, rest


@njit(cache=True, nogil=True)
def _fill_row_words(cur, width, d, entry, first_exit, second_exit, node, rest):
    """:func:`_fill_words` from the rows the paths pass instead of their links: packet ``p``
    (at ``p * width`` in the path array) enters at row ``entry[p]`` and leaves its first pass at
    ``first_exit[p]`` and its second (if ``second_exit`` is not empty) at ``second_exit[p]``."""
    passes = width // d
    for w in range(len(cur)):
        packet = np.int64(cur[w]) // width
        node[w] = np.int64(entry[packet])             # level 0: the node is the row
        word = (packet << (passes * d)) | np.int64(first_exit[packet])
        if passes > 1:
            word |= np.int64(second_exit[packet]) << d
        rest[w] = word


def _row_words(rows: list[tuple[np.ndarray, np.ndarray]], cur: np.ndarray, d: int,
               width: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_packet_words` of level paths given as rows (``(entry, exit)`` per pass, a pass's
    exits the next one's entries); :func:`universal.engine.node_words.row_words_fit` must hold."""
    node, rest = np.empty(len(cur), dtype=np.int64), np.empty(len(cur), dtype=np.int64)
    second = rows[1][1] if len(rows) > 1 else rows[0][1][:0]
    _fill_row_words(cur, width, d, rows[0][0], rows[0][1], second, node, rest)
    return node, rest
