"""Compiled step loops for a butterfly's level paths routed where they lie, with B = 1 and
unbounded buffers: the usual ``route`` of random rank or longest-in-system on BF(d) (SPEC §2, §6;
Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.1).

:func:`universal.engine.compiled.route_static` routes such paths on the collection's own rows
(every path climbs from level 0 to the last level, one link per level, the packets visited in
priority order); with one packet per link and step and buffers that never refuse, it hands the
steps to :func:`route_levels`, which runs one of two loops, the same rules and the same results
as the general loop (:func:`universal.engine.compiled._run_flat`):

* :func:`_run_by_link`, for batches whose paths and state fit in the processor's caches: per link
  the step that last let a packet across (a tag: the first packet to try the link in a step
  crosses) and the occupancy of its buffer, which a crossing packet lowers for the buffer it
  leaves and raises for the one it enters. No prefetching: in cache it only costs (BF(10),
  Valiant 4-relation: 0.75 of the general loop's time).
* :func:`_run_by_node`, for larger batches: per node the step of its row, which of its two
  out-links let a packet across in that step, and how many of the waiting packets visited in
  the step sit in each of its two in-buffers. A packet touches only the row of the node it is at,
  where it is counted and contends, instead of the rows of the link it wants and of the link it
  came by, so a step reads one random cache line of state per packet rather than two. The
  counts at the end of a pass are the buffers' occupancy at the end of the previous step, and
  they only grow during the pass, so the largest count seen is the largest buffer (BF(20):
  0.79 of the general loop's time; BF(14) and BF(16) 0.95).

The butterfly numbers the link from node ``(i, r)`` climbing to level ``i + 1`` as
``4 * (i * 2**d + r) + 2 * c`` (``c`` = 1 for the cross link; :func:`universal.networks.butterfly`):
``link >> 2`` is its tail node and ``(link >> 1) & 1`` its kind, which at the head tells the two
in-buffers apart.

Without numba the module imports and its loops run as plain Python (``tests/engine/test_compiled.py``
checks both, against the reference engine).
"""

from __future__ import annotations

import numpy as np

from universal.engine.hints import prefetch as _prefetch

try:
    from numba import njit
except ImportError:        # the loops run as plain Python: correct, slow, and never dispatched to

    def njit(**options):
        return lambda function: function

__all__ = ["DEADLOCK", "DELIVERED", "STEP_LIMIT", "IN_CACHE_HOPS", "route_levels"]

#: Status codes of the compiled kernels.
DELIVERED, DEADLOCK, STEP_LIMIT = 0, 1, 2

#: Batches of fewer packet-hops run on :func:`_run_by_link`, the others on :func:`_run_by_node`:
#: 2^17 int32 link ids are half a megabyte, in a core's second-level cache with the link state.
#: Valiant 4-relations, each loop against the general one: by link 0.75 on BF(10) and 1.12 on
#: BF(12), by node 1.03-1.14 on BF(10), 1.01 on BF(12), 0.96 on BF(14), 0.79 on BF(20).
IN_CACHE_HOPS = 1 << 17

#: How many waiting packets ahead :func:`_run_by_node` prefetches a packet's path, and half as
#: many its node's row.
PREFETCH_AHEAD = 16


@njit(cache=True, nogil=True)
def _run_by_link(links, cur, delivery, state, limit, last_from, first_below, width):
    """The step loop on per-link state: row ``link >> 1`` of ``state`` (two columns, all zero) is
    the step that last let a packet across the link (a tag cycling through the type's positive
    values) and the occupancy of its buffer; the last row stands for the injection buffers.

    ``cur`` holds the waiting packets' positions in ``links`` (packet ``position // width``), in
    priority order; it is packed in place. Returns ``(status, step, count, max_buffer, hops)``.
    """
    n = len(cur)
    inject = len(state) - 1
    period = np.iinfo(state.dtype).max
    went = np.empty(n, dtype=links.dtype)        # buffers entered in the step that may be the largest
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
        tag = (step - 1) % period + 1
        if tag == 1 and step > 1:       # the tags start over: forget the old ones
            state[:, 0] = 0
        kept = 0
        moved = 0
        candidates = 0
        for w in range(count):
            position = cur[w]
            raw = links[position]
            link = raw >> 1
            if state[link, 0] == tag:   # another packet crossed it in this step
                cur[kept] = position
                kept += 1
                continue
            state[link, 0] = tag
            moved += 1
            state[(links[position - 1] >> 1) if raw >= first_below else inject, 1] -= 1
            if raw >= last_from:
                delivery[position // width] = step
                continue
            occupancy = state[link, 1] + 1
            state[link, 1] = occupancy
            if occupancy > max_buffer:  # checked at the end of the step: a packet may leave it yet
                went[candidates] = link
                candidates += 1
            cur[kept] = position + 1
            kept += 1
        hops += moved
        if moved == 0:
            status = DEADLOCK
            break
        for i in range(candidates):
            if state[went[i], 1] > max_buffer:
                max_buffer = state[went[i], 1]
        count = kept
    return status, step, count, max_buffer, hops


@njit(cache=True, nogil=True)
def _count_waiting(links, cur, count, state, tag, first_below):
    """Count the ``count`` waiting packets into their nodes' in-buffers (columns 2 and 3 of
    ``state``, rows stamped ``tag``) and return the largest count: the buffers' occupancy now."""
    largest = 0
    for w in range(count):
        position = cur[w]
        raw = links[position]
        if raw < first_below:           # still at its source
            continue
        node = raw >> 2
        if state[node, 0] != tag:
            state[node, 0] = tag
            state[node, 1] = 0
            state[node, 2] = 0
            state[node, 3] = 0
        k = 2 + ((links[position - 1] >> 1) & 1)
        state[node, k] += 1
        if state[node, k] > largest:
            largest = state[node, k]
    return largest


@njit(cache=True, nogil=True)
def _run_by_node(links, cur, delivery, state, limit, last_from, first_below, width):
    """The step loop on per-node state: row ``node`` of ``state`` (four columns, all zero) is the
    step the row belongs to (a tag cycling through the type's positive values), which of the
    node's out-links let a packet across in it (bit ``c`` for kind ``c``) and the waiting packets
    counted in it so far in each of the node's in-buffers (columns 2 and 3, by the kind of the
    link they came by).

    ``cur`` as for :func:`_run_by_link`. Returns ``(status, step, count, max_buffer, hops)``.
    """
    n = len(cur)
    period = np.iinfo(state.dtype).max
    ahead, half = PREFETCH_AHEAD, PREFETCH_AHEAD // 2
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
        tag = (step - 1) % period + 1
        if tag == 1 and step > 1:       # the tags start over: forget the old ones
            state[:, 0] = 0
        kept = 0
        moved = 0
        for w in range(count):
            if w + ahead < count:
                _prefetch(links, cur[w + ahead] - 1)
            if w + half < count:
                _prefetch(state, links[cur[w + half]] >> 2)
            position = cur[w]
            raw = links[position]
            node = raw >> 2
            bit = 1 << ((raw >> 1) & 1)
            counted = raw >= first_below          # not at its source: in a buffer of the node
            k = (2 + ((links[position - 1] >> 1) & 1)) if counted else 2
            if state[node, 0] != tag:
                # the first packet at the node in this step: it crosses, and the counts start
                state[node, 0] = tag
                state[node, 1] = bit
                state[node, 2] = 0
                state[node, 3] = 0
                if counted:
                    state[node, k] = 1
                    if max_buffer < 1:
                        max_buffer = 1
            else:
                if counted:
                    occupancy = state[node, k] + 1
                    state[node, k] = occupancy
                    if occupancy > max_buffer:
                        max_buffer = occupancy
                if state[node, 1] & bit:          # another packet crossed this link in this step
                    cur[kept] = position
                    kept += 1
                    continue
                state[node, 1] |= bit
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
        tag = step % period + 1
        if tag == 1:
            state[:, 0] = 0
        max_buffer = max(max_buffer, _count_waiting(links, cur, count, state, tag, first_below))
    return status, step, count, max_buffer, hops


def route_levels(links: np.ndarray, cur: np.ndarray, delivery: np.ndarray, num_links: int, congestion: int,
                 limit: int, last_from: int, first_below: int, width: int) -> tuple[int, int, int, int, int]:
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
        C, which no buffer's occupancy exceeds.
    limit : int
        The step limit.
    last_from, first_below : int
        The first link id of the last level, and the first not on level 0.
    width : int
        The paths' common length.

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
    # the smallest type that holds C (a buffer's largest occupancy) and the tags
    kind = next(t for t in (np.int8, np.int16, np.int32, np.int64) if congestion < np.iinfo(t).max)
    if len(links) < IN_CACHE_HOPS:
        state = np.zeros(((num_links >> 1) + 1, 2), dtype=kind)
        return _run_by_link(links, cur, delivery, state, limit, last_from, first_below, width)
    state = np.zeros(((num_links >> 2) + 1, 4), dtype=kind)
    return _run_by_node(links, cur, delivery, state, limit, last_from, first_below, width)
