"""A compiled step loop for a butterfly's level paths routed where they lie, with B = 1 and
unbounded buffers: the usual ``route`` of random rank or longest-in-system on BF(d) (SPEC §2, §6;
Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.1).

:func:`universal.engine.compiled.route_static` routes such paths on the collection's own rows
(every path climbs from level 0 to the last level, one link per level, the packets visited in
priority order); with one packet per link and step and buffers that never refuse, it hands the
steps to :func:`route_levels` (:func:`_run_levels`): the same rules and the same results as the
general loop (:func:`universal.engine.compiled._run_flat`), on less state.

The state is one small word per node, not a row per link: the step the word belongs to (a tag
of 6 bits, cycling through 1..63), which of the node's two out-links let a packet across in that
step (2 bits), and how many of the waiting packets visited so far in the step sit in each of the
node's two in-buffers (two counts, 4 bits each in a 16-bit word when C < 16, else 12 bits in a
32-bit word). A waiting packet reads and writes only the word of the node it is at: it is counted
there into its in-buffer, and crosses if its out-link is still free. The counts at the end of a
pass are the buffers' occupancy at the end of the previous step, and they only grow during the
pass, so the largest count seen is the largest buffer. Against the general loop, which reads
the rows of the link a packet wants and of the link it came by (a byte or two each): one random
cache line per waiting packet instead of two, and a quarter of the memory (84 MB on BF(20) with
Valiant's trick). Valiant 4-relations, the loop alone: 0.72 of the general loop's time on
BF(10), 0.85 on BF(12), 0.90 on BF(16), 0.65 on BF(20).

Where they fit two 64-bit words per packet, the loop reads no path at all (:func:`_run_rows`): a
path that climbs butterflies back to back is fixed by the rows where it enters and leaves each
one, so a waiting packet carries its node and its target rows with it, in order, and the only
random access of a step is the node's word. Valiant 4-relations, route_levels on BF(20): 2.3-2.5 s
of CPU time against 5.0-5.1 s on the path array (load 7, one run each).

Without prefetching (batches of fewer than :data:`IN_CACHE_HOPS` hops, all in a core's caches)
the steps run on a loop with branches where the one for large batches has selects
(:func:`_run_rows_in_cache`). Such batches usually come with their keys and run on one word
per packet instead (:func:`universal.engine.compiled_in_cache.route_levels_by_keys`); this loop
routes those whose words do not fit one.

The butterfly numbers the link from node ``(i, r)`` climbing to level ``i + 1`` as
``4 * (i * 2**d + r) + 2 * c`` (``c`` = 1 for the cross link; :func:`universal.networks.butterfly`):
``link >> 2`` is its tail node and ``(link >> 1) & 1`` its kind, which at the head tells the two
in-buffers apart.

Without numba the module imports and its loop runs as plain Python (``tests/engine/test_compiled.py``
checks both, against the reference engine). The packets' words for the loop on the rows are built in
:mod:`universal.engine.compiled_level_words`.
"""

from __future__ import annotations

import numpy as np

# the packets' words for the loop on the rows: imported here too, where route_levels looks them up
# (tests and benchmarks/route_phases.py use them from this module)
from universal.engine.compiled_level_words import _packet_words, _row_words
from universal.engine.hints import prefetch as _prefetch
# the conditions on the words (numba-free: the memory estimate asks them before a run)
from universal.engine.node_words import IN_CACHE_HOPS, LEVELS_MAX_CONGESTION, row_words_fit

try:
    from numba import njit
    from universal.kernel_cache import clear_stale
    clear_stale()      # before any kernel's cache loads: numba checks only a kernel's own file
except ImportError:        # the loop runs as plain Python: correct, slow, and never dispatched to

    def njit(**options):
        return lambda function: function

__all__ = ["DEADLOCK", "DELIVERED", "STEP_LIMIT", "IN_CACHE_HOPS", "LEVELS_MAX_CONGESTION", "route_levels"]

#: Status codes of the compiled kernels.
DELIVERED, DEADLOCK, STEP_LIMIT = 0, 1, 2

#: How many waiting packets ahead :func:`_run_levels` prefetches a packet's path, and half as
#: many its node's word. Valiant 4-relations, the loop against the general one with 8, 16, 24,
#: 32, 48 on BF(20): 1.03, 0.73, 0.65-0.68, 0.77, 0.85; 16 and 24 on BF(12) 0.86 and 0.82, on
#: BF(16) 0.92 and 0.77.
PREFETCH_AHEAD = 24

#: Bits of the node word below the counts: the tag (6) and the out-links' flags (2).
_TAG_BITS, _COUNTS_FROM = 6, 8
_PERIOD = (1 << _TAG_BITS) - 1


@njit(cache=True, nogil=True)
def _run_levels(links, cur, delivery, state, limit, last_from, first_below, width, bits, ahead):
    """The step loop on node words (``state``, one per node and all zero; counts of ``bits``
    bits each).

    ``cur`` holds the waiting packets' positions in ``links`` (packet ``position // width``), in
    priority order; it is packed in place. ``ahead``: prefetch distance (0: none).
    Returns ``(status, step, count, max_buffer, hops)``.
    """
    n = len(cur)
    half = ahead // 2
    mask = (1 << bits) - 1
    count = n
    step = 0
    hops = 0
    max_buffer = 0
    status = DELIVERED
    while count > 0:
        if step >= limit:
            status = STEP_LIMIT
            break
        step += 1
        tag = (step - 1) % _PERIOD + 1
        if tag == 1 and step > 1:       # the tags start over: forget the old ones
            state[:] = 0
        kept = 0
        moved = 0
        for w in range(count):
            if ahead:
                if w + ahead < count:
                    _prefetch(links, cur[w + ahead] - 1)
                if w + half < count:
                    _prefetch(state, links[cur[w + half]] >> 2)
            position = cur[w]
            raw = links[position]
            node = raw >> 2
            word = np.int64(state[node])
            if (word & _PERIOD) != tag:     # the node's first packet in this step: all clear
                word = np.int64(tag)
            if raw >= first_below:          # not at its source: in an in-buffer of the node
                shift = _COUNTS_FROM + bits * ((links[position - 1] >> 1) & 1)
                word += 1 << shift
                occupancy = (word >> shift) & mask
                if occupancy > max_buffer:
                    max_buffer = occupancy
            out = 1 << (_TAG_BITS + ((raw >> 1) & 1))
            if word & out:                  # another packet crossed this link in this step
                state[node] = word
                cur[kept] = position
                kept += 1
                continue
            state[node] = word | out
            moved += 1
            if raw >= last_from:
                delivery[position // width] = step
                continue
            cur[kept] = position + 1
            kept += 1
        hops += moved
        if moved == 0:
            status = DEADLOCK
            break
        count = kept
    if status == STEP_LIMIT:
        # the buffers at the end of the last step, which no further pass counted
        tag = step % _PERIOD + 1
        if tag == 1:
            state[:] = 0
        max_buffer = max(max_buffer, _count_waiting(links, cur, count, state, tag, first_below, bits))
    return status, step, count, max_buffer, hops


@njit(cache=True, nogil=True)
def _count_waiting(links, cur, count, state, tag, first_below, bits):
    """Count the ``count`` waiting packets into their nodes' words as a pass stamped ``tag``
    would, and return the largest count: the buffers' occupancy now."""
    mask = (1 << bits) - 1
    largest = 0
    for w in range(count):
        position = cur[w]
        raw = links[position]
        if raw < first_below:           # still at its source
            continue
        node = raw >> 2
        word = np.int64(state[node])
        if (word & _PERIOD) != tag:
            word = np.int64(tag)
        shift = _COUNTS_FROM + bits * ((links[position - 1] >> 1) & 1)
        word += 1 << shift
        state[node] = word
        largest = max(largest, (word >> shift) & mask)
    return largest


#: Whether :func:`route_levels` routes on the rows the packets pass (:func:`_run_rows`) where they
#: fit its words; False: always on the path array (:func:`_run_levels`; the tests run both).
FROM_ROWS = True

#: :func:`_run_rows`'s packet word: the node (bits 0-39), the level within the pass (6 bits from
#: :data:`_STAGE_SHIFT`) and whether the packet came by a cross link (bit :data:`_CAME_SHIFT`).
_NODE_MASK, _STAGE_SHIFT, _CAME_SHIFT = (1 << 40) - 1, 40, 46


@njit(cache=True, nogil=True)
def _run_rows(node, rest, delivery, state, limit, d, depth, bits, ahead):
    """:func:`_run_levels` on the rows the packets pass instead of their links.

    A climbing path on butterflies of dimension ``d`` back to back is fixed by the rows it enters
    and leaves every butterfly at (at level ``i`` of a pass it takes the cross link exactly when
    bit ``i`` of its row and of its target row differ), so a waiting packet carries what it
    needs in two words read in order: ``node`` (its node, its level within the pass and how it
    came, :data:`_NODE_MASK`) and ``rest`` (the target rows of this pass and the next, ``d`` bits
    each, then its id). The only random access of a step is the node's word in ``state``: the
    path array is not read at all. Both are packed in place, in priority order.
    Returns ``(status, step, count, max_buffer, hops)``.

    Without prefetching (``ahead`` 0: everything in cache) the steps run on
    :func:`_run_rows_in_cache` instead.
    """
    if ahead == 0:
        return _run_rows_in_cache(node, rest, delivery, state, limit, d, depth, bits)
    n = len(node)
    half = ahead // 2
    mask = (1 << bits) - 1
    row_mask = (1 << d) - 1
    count = n
    step = 0
    hops = 0
    max_buffer = 0
    status = DELIVERED
    while count > 0:
        if step >= limit:
            status = STEP_LIMIT
            break
        step += 1
        tag = (step - 1) % _PERIOD + 1
        if tag == 1 and step > 1:       # the tags start over: forget the old ones
            state[:] = 0
        kept = 0
        moved = 0
        for w in range(count):
            if ahead and w + half < count:
                _prefetch(state, node[w + half] & _NODE_MASK)
            packet = node[w]
            here = packet & _NODE_MASK      # level * 2^d + row
            stage = (packet >> _STAGE_SHIFT) & 63
            target = rest[w]
            cross = ((here ^ target) >> stage) & 1
            word = np.int64(state[here])
            if (word & _PERIOD) != tag:     # the node's first packet in this step: all clear
                word = np.int64(tag)
            # not at its source: counted into the in-buffer it came by (at a source nothing is
            # counted, and the count read is a level-0 node's, always 0); without branches,
            # which the processor could not predict
            shift = _COUNTS_FROM + bits * (packet >> _CAME_SHIFT)
            word += np.int64(here > row_mask) << shift
            max_buffer = max(max_buffer, (word >> shift) & mask)
            out = np.int64(1) << (_TAG_BITS + cross)
            free = (word & out) == 0        # no other packet crossed this link in this step
            state[here] = word | (out if free else 0)
            moved += free
            if free and (here >> d) + 1 == depth:
                delivery[target >> d] = step
                continue
            following = ((here + (1 << d)) ^ (cross << stage)) | (cross << _CAME_SHIFT)
            turn = stage + 1 == d           # the next pass: its target comes down
            node[kept] = (following | ((0 if turn else stage + 1) << _STAGE_SHIFT)) if free else packet
            rest[kept] = (target >> d) if free and turn else target
            kept += 1
        hops += moved
        if moved == 0:
            status = DEADLOCK
            break
        count = kept
    if status == STEP_LIMIT:
        # the buffers at the end of the last step, which no further pass counted
        tag = step % _PERIOD + 1
        if tag == 1:
            state[:] = 0
        for w in range(count):
            here = node[w] & _NODE_MASK
            if here <= row_mask:
                continue
            word = np.int64(state[here])
            if (word & _PERIOD) != tag:
                word = np.int64(tag)
            shift = _COUNTS_FROM + bits * (node[w] >> _CAME_SHIFT)
            word += 1 << shift
            state[here] = word
            max_buffer = max(max_buffer, (word >> shift) & mask)
    return status, step, count, max_buffer, hops


@njit(cache=True, nogil=True)
def _run_rows_in_cache(node, rest, delivery, state, limit, d, depth, bits):
    """:func:`_run_rows`'s steps for a batch whose words and node words sit in a core's caches.

    The same rules and results, with branches where :func:`_run_rows` has selects: in cache a
    packet that waits (about one visit in seven on a Valiant 4-relation) costs a mispredicted
    branch but skips computing its next node, and the turn to the next pass (one hop in ``d``) is
    a branch too. The hops are not counted in the loop (a counter that the compiled loop kept in
    memory, read and written by every mover) but from where the packets are at the end: every
    delivered packet made ``depth`` hops, a waiting one as many as its node's level. No step can
    move nothing (B = 1, buffers that never refuse: the first packet visited in a step finds its
    node's word of an earlier step and crosses), so there is no deadlock to look for.
    Returns ``(status, step, count, max_buffer, hops)``.

    BF(10), Valiant 4-relation, the loop alone: 0.80-0.85 of :func:`_run_rows`'s time.
    """
    n = len(node)
    mask = (1 << bits) - 1
    first = np.int64(1) << d            # nodes from here on are past level 0: they have in-buffers
    last = (depth - 1) * first          # nodes from here on are on the last level: the next hop delivers
    count = n
    step = 0
    max_buffer = 0
    status = DELIVERED
    while count > 0:
        if step >= limit:
            status = STEP_LIMIT
            break
        step += 1
        tag = (step - 1) % _PERIOD + 1
        if tag == 1 and step > 1:       # the tags start over: forget the old ones
            state[:] = 0
        kept = np.uint64(0)             # unsigned: its stores need no check for negative indices
        for w in range(count):
            packet = node[w]
            here = packet & _NODE_MASK
            stage = (packet >> _STAGE_SHIFT) & 63
            target = rest[w]
            cross = ((here ^ target) >> stage) & 1
            word = np.int64(state[here])
            if (word & _PERIOD) != tag:     # the node's first packet in this step: all clear
                word = np.int64(tag)
            shift = _COUNTS_FROM + bits * (packet >> _CAME_SHIFT)
            word += np.int64(here >= first) << shift
            occupancy = (word >> shift) & mask
            if occupancy > max_buffer:
                max_buffer = occupancy
            out = np.int64(1) << (_TAG_BITS + cross)
            if word & out:                  # another packet crossed this link in this step
                state[here] = word
                node[kept] = packet
                rest[kept] = target
                kept += np.uint64(1)
                continue
            state[here] = word | out
            if here >= last:
                delivery[target >> d] = step
                continue
            following = ((here + first) ^ (cross << stage)) | (cross << _CAME_SHIFT)
            if stage + 1 == d:              # the next pass: its target comes down
                node[kept] = following
                rest[kept] = target >> d
            else:
                node[kept] = following | ((stage + 1) << _STAGE_SHIFT)
                rest[kept] = target
            kept += np.uint64(1)
        count = np.int64(kept)
    hops = depth * (n - count)
    for w in range(count):
        hops += (node[w] & _NODE_MASK) >> d
    if status == STEP_LIMIT:
        max_buffer = max(max_buffer, _count_rows(node, count, state, step, d, bits))
    return status, step, count, max_buffer, hops


@njit(cache=True, nogil=True)
def _count_rows(node, count, state, step, d, bits):
    """The largest buffer after ``step`` steps, counted from the ``count`` waiting packets' words
    as a pass of the next step would count them (:func:`_count_waiting` on the rows)."""
    mask = (1 << bits) - 1
    row_mask = (1 << d) - 1
    tag = step % _PERIOD + 1
    if tag == 1:
        state[:] = 0
    largest = 0
    for w in range(count):
        here = node[w] & _NODE_MASK
        if here <= row_mask:            # still at its source
            continue
        word = np.int64(state[here])
        if (word & _PERIOD) != tag:
            word = np.int64(tag)
        shift = _COUNTS_FROM + bits * (node[w] >> _CAME_SHIFT)
        word += 1 << shift
        state[here] = word
        largest = max(largest, (word >> shift) & mask)
    return largest


def route_levels(links: np.ndarray | None, cur: np.ndarray, delivery: np.ndarray, num_links: int, congestion: int,
                 limit: int, last_from: int, first_below: int, width: int,
                 rows: list[tuple[np.ndarray, np.ndarray]] | None = None) -> tuple[int, int, int, int, int]:
    """Route a butterfly's level paths on their own rows with B = 1 and unbounded buffers.

    Parameters
    ----------
    links : ndarray of int32 or int64
        The paths, ``width`` link ids each, packet ``i``'s at ``i * width`` (the butterfly's
        numbering, every link climbing).
    cur : ndarray of int
        Where the packets' paths start, highest priority first; packed in place: on return the
        first ``count`` are the positions of the packets still waiting, in priority order.
    delivery : ndarray of int64
        Every packet's delivery step, written as packets arrive.
    num_links : int
        The host's number of link ids.
    congestion : int
        C, which no buffer's occupancy exceeds; at most :data:`LEVELS_MAX_CONGESTION`.
    limit : int
        The step limit.
    last_from, first_below : int
        The first link id of the last level, and the first not on level 0.
    width : int
        The paths' common length.
    rows : list of (ndarray, ndarray), optional
        The paths as the rows they pass (``(entry, exit)`` per pass, as
        :class:`universal.paths.level_rows.LevelRowsCollection` keeps them): the loop starts from
        them instead of from ``links``, which may then be None. Only where :data:`FROM_ROWS` and
        :func:`row_words_fit` hold.

    Returns
    -------
    tuple
        ``(status, step, count, max_buffer, hops)``: status :data:`DELIVERED` or
        :data:`STEP_LIMIT`, the steps run, the packets still waiting, the largest buffer and the
        link crossings.

    Examples
    --------
    >>> # BF(2): packets 0 and 1 from rows 0 and 1 to row 3, both over link 22 at level 1
    >>> links, delivery = np.array([2, 22, 4, 22], dtype=np.int32), np.full(2, -1, dtype=np.int64)
    >>> route_levels(links, np.array([0, 2]), delivery, 32, 2, 10, 16, 16, 2), delivery.tolist()
    ((0, 3, 0, 1, 4), [2, 3])
    """
    state, bits = _node_words(num_links, congestion)
    hops = len(links) if links is not None else len(delivery) * width      # (every path `width` hops)
    ahead = 0 if hops < IN_CACHE_HOPS else PREFETCH_AHEAD
    d = (first_below >> 2).bit_length() - 1
    if rows is not None:
        if not (FROM_ROWS and row_words_fit(len(rows), d, width, len(delivery))):
            raise ValueError("the loop on the path array needs the links, not the rows")
        words = _row_words(rows, cur, d, width)
    else:
        words = _packet_words(links, cur, d, width) if FROM_ROWS else None
    if words is not None:
        return _on_rows(words, cur, delivery, state, limit, d, width, bits, ahead)
    # plain ints whether the loop ran compiled or (without numba) as Python on numpy scalars
    return tuple(int(x) for x in _run_levels(links, cur, delivery, state, limit, last_from, first_below,
                                             width, bits, ahead))


def _node_words(num_links: int, congestion: int) -> tuple[np.ndarray, int]:
    """The node words, all zero, and the bits of each count in them."""
    if congestion > LEVELS_MAX_CONGESTION:
        raise ValueError(f"congestion {congestion} does not fit the node words (at most {LEVELS_MAX_CONGESTION})")
    # a count never exceeds C: 4 bits each in 16-bit words while C < 16
    kind, bits = (np.uint16, 4) if congestion < 16 else (np.uint32, 12)
    return np.zeros((num_links >> 2) + 1, dtype=kind), bits


def _on_rows(words, cur, delivery, state, limit, d, width, bits, ahead) -> tuple[int, int, int, int, int]:
    """:func:`_run_rows` on the packets' words; the waiting packets' places in the path array
    then go to ``cur``, as the loop on the path array leaves them."""
    node, rest = words
    result = _run_rows(node, rest, delivery, state, limit, d, width, bits, ahead)
    count = result[2]
    if not count:
        return tuple(int(x) for x in result)
    level = (node[:count] & _NODE_MASK) >> d
    passes_left = width // d - level // d
    cur[:count] = (rest[:count] >> (passes_left * d)) * width + level
    return tuple(int(x) for x in result)
