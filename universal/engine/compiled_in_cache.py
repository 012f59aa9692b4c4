"""Small batches of a butterfly's level paths (all in a core's caches) with B = 1 and unbounded
buffers, one word per packet: the usual ``route`` of random rank or longest-in-system on a small
BF(d) (SPEC §2, §6; Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996,
§2.1 and §4.1).

:func:`universal.engine.compiled.route_static` hands such a batch (fewer than
:data:`universal.engine.compiled_levels.IN_CACHE_HOPS` hops, at most
:data:`MAX_NODES_PER_PACKET` nodes per packet) to :func:`route_levels_by_keys` with the
packets' keys: one compiled call sorts the packets by priority (by counting), packs each into
one 64-bit word and runs the steps (:func:`_route_packed`). The rules and the results are those
of :func:`universal.engine.compiled_levels.route_levels`.

A packet's word holds the node it is at (``level * 2**d + row``, the low :func:`here_bits`
bits), then one bit per level of its path (whether its hop from that level takes the cross
link, bit ``here_bits + level``), then its id. Every path climbs from level 0 one level per
hop, and the cross link from level ``L`` flips bit ``L mod d`` of the row
(:func:`universal.networks.butterfly`), so a hop is ``word + 2**d``, that bit flipped if it
crosses, and the in-buffer a packet waits in (which of its node's two, by the kind of link it
came by) is the bit of the level below. Against the two words of
:func:`universal.engine.compiled_levels._run_rows_in_cache` (the node, the target rows of the
passes): one load and one store per visit instead of two each, and no branch for the turn from
one pass to the next. The node words (:func:`node_words`: the out-links' flags and the two
in-buffers' counts, no tag) are few enough to clear every step.

The shift to the count of the in-buffer a packet came by is read from a two-entry table: as a
select LLVM compiled it, and the check of a tag, as branches the processor cannot predict.
BF(10), Valiant 4-relation, the step loop alone (microseconds of CPU time, load about 5, one run
each): one word with tags, the tag check and the shift as selects 927-952, from tables 362-477;
the words cleared every step instead of tags 264-294 against 312-336; fully without branches
(the waiting packets kept by masks, the deliveries listed) 398-457 against 282-348. The two
words' path before (sort, words and the steps of
:func:`~universal.engine.compiled_levels._run_rows_in_cache`) took 444-470, the tagged one-word
loop 364-372 plus 26 for its sort and words (other runs).

Without numba the module imports and its functions run as plain Python
(``tests/engine/test_compiled_in_cache.py`` checks both, against the reference engine).
"""

from __future__ import annotations

import numpy as np

import universal.engine.compiled_levels as compiled_levels
from universal.engine.compiled_levels import DELIVERED, STEP_LIMIT

try:
    from numba import njit
    from universal.kernel_cache import clear_stale
    clear_stale()      # before any kernel's cache loads: numba checks only a kernel's own file
except ImportError:        # plain Python: correct, slow, and never dispatched to

    def njit(**options):
        return lambda function: function

__all__ = ["MAX_NODES_PER_PACKET", "here_bits", "node_words", "route_levels_by_keys"]

#: Bits of a node word below the counts: whether each of the node's two out-links let a packet
#: across in the step.
_FLAG_BITS = 2

#: The node words are cleared every step, so batches run here only on hosts of at most this many
#: nodes per packet (above, the tagged words of :mod:`universal.engine.compiled_levels`, never
#: cleared, cost less): clearing a 2-byte word costs about 0.03 ns, a packet's visit about 3 ns.
MAX_NODES_PER_PACKET = 8


def node_words(nodes: int, congestion: int) -> tuple[np.ndarray, int]:
    """The node words (all zero) and the bits of each of their two counts, which never exceed C:
    3 in 8-bit words while C < 8, 7 in 16-bit words while C < 128, else 15 in 32-bit words.

    Examples
    --------
    >>> [(words.dtype.name, bits) for words, bits in (node_words(4, c) for c in (7, 9, 200))]
    [('uint8', 3), ('uint16', 7), ('uint32', 15)]
    """
    if congestion >= 1 << 15:
        raise ValueError(f"congestion {congestion} does not fit the node words (at most {(1 << 15) - 1})")
    kind, bits = (np.uint8, 3) if congestion < 8 else (np.uint16, 7) if congestion < 128 else (np.uint32, 15)
    return np.zeros(nodes, dtype=kind), bits


def here_bits(depth: int, d: int) -> int:
    """The bits of a packet word's node: every node ``level * 2**d + row`` a path starts a hop from.

    Examples
    --------
    >>> here_bits(20, 10)       # BF(10) with Valiant's trick: nodes below 20 * 1024
    15
    """
    return ((depth << d) - 1).bit_length()


@njit(cache=True, nogil=True)
def _order_packed(links, keys, d, width, here, packed):
    """Every packet's word (packet ``i``'s path at ``i * width``), highest priority first: the
    lowest key, ties to the lower id, sorted by counting. Returns False (and fills nothing) when
    the keys span more values than ``max(len(keys), 1024)``, as
    :func:`universal.engine.compiled.priority_order` sorts by counting only then."""
    n = len(keys)
    low = keys[0]
    high = keys[0]
    for i in range(n):
        low = min(low, keys[i])
        high = max(high, keys[i])
    span = high - low + 1
    if span > max(n, 1024):
        return False
    start = np.zeros(span + 1, dtype=np.int64)
    for i in range(n):
        start[keys[i] - low + 1] += 1
    for k in range(span):
        start[k + 1] += start[k]
    for i in range(n):
        k = keys[i] - low
        w = start[k]
        start[k] += 1
        first = i * width
        word = np.int64(links[first] >> 2) | (np.int64(i) << (here + width))     # level 0: the node is the row
        for j in range(width):
            word |= ((np.int64(links[first + j]) >> 1) & 1) << (here + j)      # the link's kind: cross or not
        packed[w] = word
    return True


@njit(cache=True, nogil=True)
def _run_packed(packed, delivery, state, limit, d, depth, bits, here_width):
    """The steps on the packets' words (``packed``, in priority order, packed in place) and the
    node words (``state``; counts of ``bits`` bits each, :func:`node_words`).
    Returns ``(status, step, count, max_buffer, hops)``.

    The rules of :func:`universal.engine.compiled_levels._run_rows_in_cache`: a waiting packet is
    counted into its in-buffer in its node's word (the counts at the end of a pass are the
    buffers at the end of the previous step, and only grow in a pass) and crosses if its out-link
    is still free in the step. No step can move nothing, and the hops are counted from where the
    packets are at the end.
    """
    n = len(packed)
    mask = (1 << bits) - 1
    first = np.int64(1) << d            # nodes from here on are past level 0: they have in-buffers
    last = (depth - 1) * first          # nodes from here on are on the last level: the next hop delivers
    here_mask = (np.int64(1) << here_width) - 1
    id_shift = here_width + depth
    flip = np.empty(depth, dtype=np.int64)      # the row's bit a cross link flips, by level
    for level in range(depth):
        flip[level] = level % d
    # the shift of the count of the in-buffer a packet came by, read from a table: LLVM makes a
    # select of it a branch, which the processor cannot predict
    count_shift = np.array([_FLAG_BITS, _FLAG_BITS + bits], dtype=np.int64)
    count = n
    step = 0
    max_buffer = 0
    status = DELIVERED
    while count > 0:
        if step >= limit:
            status = STEP_LIMIT
            break
        step += 1
        state[:] = 0                    # a few kilobytes, in cache
        kept = np.uint64(0)             # unsigned: its stores need no check for negative indices
        for w in range(count):
            packet = packed[w]
            here = packet & here_mask
            level = here >> d
            # bit 0: the kind of link it came by (meaningless at level 0, where nothing is
            # counted), bit 1: the kind of link it takes now
            pair = packet >> (here_width - 1 + level)
            cross = (pair >> 1) & 1
            word = np.int64(state[here])
            shift = count_shift[pair & 1]
            word += np.int64(here >= first) << shift
            occupancy = (word >> shift) & mask
            max_buffer = max(max_buffer, occupancy)
            out = np.int64(1) << cross
            if word & out:                  # another packet crossed this link in this step
                state[here] = word
                packed[kept] = packet
                kept += np.uint64(1)
                continue
            state[here] = word | out
            if here >= last:
                delivery[packet >> id_shift] = step
                continue
            packed[kept] = (packet + first) ^ (cross << flip[level])
            kept += np.uint64(1)
        count = np.int64(kept)
    hops = depth * (n - count)
    for w in range(count):
        hops += (packed[w] & here_mask) >> d
    if status == STEP_LIMIT:
        # the buffers at the end of the last step, which no further pass counted
        state[:] = 0
        for w in range(count):
            here = packed[w] & here_mask
            level = here >> d
            if level == 0:              # still at its source
                continue
            shift = count_shift[(packed[w] >> (here_width - 1 + level)) & 1]
            word = np.int64(state[here]) + (np.int64(1) << shift)
            state[here] = word
            max_buffer = max(max_buffer, (word >> shift) & mask)
    return status, step, count, max_buffer, hops


@njit(cache=True, nogil=True)
def _route_packed(links, keys, delivery, state, limit, d, width, bits, here_width, packed):
    """:func:`_order_packed` and :func:`_run_packed` in one call; status -1 when the keys span
    too many values to sort by counting (nothing routed)."""
    if not _order_packed(links, keys, d, width, here_width, packed):
        return -1, 0, 0, 0, 0
    return _run_packed(packed, delivery, state, limit, d, width, bits, here_width)


def route_levels_by_keys(links: np.ndarray, keys: np.ndarray, delivery: np.ndarray, congestion: int, limit: int,
                         first_below: int, width: int) -> tuple[tuple[int, int, int, int, int],
                                                                            np.ndarray] | None:
    """:func:`universal.engine.compiled_levels.route_levels` for a batch whose paths and node words
    sit in a core's caches, from the packets' keys instead of their order: one compiled call
    sorts the packets by priority, packs each into one word and routes them.

    Parameters
    ----------
    links : ndarray of int32 or int64
        The paths, ``width`` link ids each, packet ``i``'s at ``i * width`` (the butterfly's
        numbering, every link climbing from level 0 to the last level); fewer than
        :data:`universal.engine.compiled_levels.IN_CACHE_HOPS`.
    keys : ndarray of int64
        Every packet's key: the lowest goes first, ties to the lower id.
    delivery : ndarray of int64
        Every packet's delivery step, written as packets arrive.
    congestion : int
        C, which no buffer's occupancy exceeds.
    limit : int
        The step limit.
    first_below : int
        The first link id not on level 0 (``4 * 2**d``).
    width : int
        The paths' common length.

    Returns
    -------
    tuple or None
        ``(result, cur)``: ``result`` is ``(status, step, count, max_buffer, hops)`` as
        :func:`~universal.engine.compiled_levels.route_levels` returns it, and the first
        ``count`` entries of ``cur`` are the waiting packets' places in the path array, in
        priority order; None (nothing routed) when a word cannot hold a packet, the keys span
        too many values to sort by counting, or the batch is not small enough.

    Examples
    --------
    >>> # BF(2): packets 0 and 1 from rows 0 and 1 to row 3, both over link 22 at level 1
    >>> links, delivery = np.array([2, 22, 4, 22], dtype=np.int32), np.full(2, -1, dtype=np.int64)
    >>> route_levels_by_keys(links, np.array([0, 0]), delivery, 2, 10, 16, 2)[0], delivery.tolist()
    ((0, 3, 0, 1, 4), [2, 3])
    """
    n = len(keys)
    d = (first_below >> 2).bit_length() - 1
    here = here_bits(width, d)
    nodes = width << d                  # every node a hop starts from
    if (not compiled_levels.FROM_ROWS or len(links) >= compiled_levels.IN_CACHE_HOPS
            or here + width + max(n - 1, 1).bit_length() > 63 or nodes > MAX_NODES_PER_PACKET * n):
        return None
    state, bits = node_words(nodes, congestion)
    packed = np.empty(n, dtype=np.int64)
    status, step, count, max_buffer, hops = _route_packed(links, keys, delivery, state, limit, d, width, bits, here,
                                                          packed)
    if status < 0:
        return None
    # plain ints whether the loop ran compiled or (without numba) as Python on numpy scalars
    result = int(status), int(step), int(count), int(max_buffer), int(hops)
    if not count:                       # all delivered (the usual case): no places to compute
        return result, packed[:0]
    words = packed[:count]
    return result, (words >> (here + width)) * width + ((words & ((1 << here) - 1)) >> d)
