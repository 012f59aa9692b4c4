"""The step loops of the static-priority kernel (:func:`universal.engine.compiled.route_static`) and
the flat path layout they run on: :func:`_lay_out` copies the paths in priority order, :func:`_run_packed`
(a heavy load) and :func:`_run_flat` (a light one, or a butterfly's level paths on their own rows) route
the waiting packets step by step, :func:`_settle` ends a step, :func:`_scatter_back` returns the hop
steps to the collection's order. :mod:`universal.engine.compiled` sets them up and reads their results;
see its docstring for the rules (Meyer auf der Heide & Scheideler, "Communication in Parallel Systems",
1996, §2.1 and §4.1). Without numba the module still imports and its kernels run as plain Python.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled_levels import DEADLOCK, DELIVERED, STEP_LIMIT
from universal.engine.hints import prefetch as _prefetch

try:
    from numba import njit
    from universal.kernel_cache import clear_stale
    clear_stale()      # before any kernel's cache loads: numba checks only a kernel's own file
    NUMBA = True
except ImportError:        # the kernels run as plain Python: correct, slow, and never dispatched to
    NUMBA = False

    def njit(**options):
        return lambda function: function

#: How many waiting packets ahead :func:`_run_flat` prefetches a packet's path (and half as many
#: ahead its links' state): on BF(19), 16 to 64 ran alike, three times as fast as none.
PREFETCH_AHEAD = 16


@njit(cache=True, nogil=True)
def _lay_out(links, offsets, ids, shift, mark):
    """The paths of ``ids`` one after the other in that order, each link shifted right by
    ``shift``, each path between two entries ``mark``; and where each path starts there.

    A packet at position ``p`` of the result then finds its next link at ``p + 1`` (``mark``:
    none, the packet is delivered by this crossing) and the link it came from at ``p - 1``
    (``mark``: it is still in its injection buffer).
    """
    n = len(ids)
    start = np.empty(n + 1, dtype=np.int64)
    start[0] = 1
    for w in range(n):
        start[w + 1] = start[w] + offsets[ids[w] + 1] - offsets[ids[w]] + 1
    at = np.full(len(offsets) - 1, -1, dtype=np.int64)    # by packet id: where its path goes
    for w in range(n):
        at[ids[w]] = start[w]
    flat = np.empty(start[n], dtype=links.dtype)
    flat[0] = mark
    # read the paths in their order and write each to its place: stores to scattered places
    # do not hold the loop up as loads from them would
    for i in range(len(at)):
        target = at[i]
        if target < 0:
            continue
        for j in range(offsets[i + 1] - offsets[i]):
            flat[target + j] = links[offsets[i] + j] >> shift
        flat[target + offsets[i + 1] - offsets[i]] = mark
    return flat, start


@njit(cache=True, nogil=True)
def _scatter_back(values, start, offsets, ids, out):
    """``out`` at the collection's positions of what ``values`` holds at :func:`_lay_out`'s."""
    for w in range(len(ids)):
        target = offsets[ids[w]]
        for j in range(start[w + 1] - start[w] - 1):
            out[target + j] = values[start[w] + j]


@njit(cache=True, nogil=True)
def _settle(state, moved, left, went, candidates, bounded, max_buffer, occupancy=2):
    """The end of a step: with bounded buffers the ``moved`` crossings change the buffers' contents
    now (their room was counted at the start of the step); returns the largest buffer so far
    (the buffers' occupancy in column ``occupancy`` of ``state``)."""
    if bounded:
        for i in range(moved):
            state[left[i], 2] -= 1
            if went[i] >= 0:
                state[went[i], 2] += 1
        for i in range(moved):
            if went[i] >= 0 and state[went[i], 2] > max_buffer:
                max_buffer = state[went[i], 2]
    else:
        # a buffer that ends the step above the maximum so far was above it when last entered
        for i in range(candidates):
            if state[went[i], occupancy] > max_buffer:
                max_buffer = state[went[i], occupancy]
    return max_buffer


@njit(cache=True, nogil=True)
def _run_packed(links, pack, delivery, hop_steps, record, state, bandwidth, room, bounded, limit):
    """The step loop: route the waiting packets of ``pack`` (highest priority first) along the
    flat path array ``links`` laid out by :func:`_lay_out` (whose mark is the last row of
    ``state``).

    ``pack`` has a row per waiting packet: its id, its position in ``links``, its next link and
    the buffer it sits in (the last row of ``state`` stands for the injection buffers). What a
    waiting packet needs in every step so travels with it, in one stream; only the packets that
    cross read the path array (for their next link). The rows are packed in place: on return
    the first ``count`` are the packets still waiting, in priority order. ``state`` has a row per
    link and one more for the injection buffers, all zero: the step that last touched the link
    (column 0, as a tag that cycles through the type's positive values), that step's crossings
    (column 1) and, with bounded buffers, entries into the link's buffer (column 3), and the
    buffer's occupancy (column 2). One row keeps what a step reads of a link in one cache line.

    Returns ``(status, step, count, max_buffer, hops)``.
    """
    n = len(pack)
    inject = len(state) - 1
    period = np.iinfo(state.dtype).max
    went = np.empty(n, dtype=links.dtype)    # the link each mover crossed (~link: delivered)
    left = np.empty(n if bounded else 0, dtype=links.dtype)   # bounded: the buffer each mover left
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
            link = pack[w, 2]
            if state[link, 0] != tag:
                state[link, 0] = tag
                state[link, 1] = 0
                if bounded:
                    state[link, 3] = 0
            crossing = state[link, 1] < bandwidth
            if crossing and bounded and links[pack[w, 1] + 1] != inject:
                crossing = state[link, 3] < room - state[link, 2]
            if not crossing:
                if kept != w:
                    pack[kept, 0] = pack[w, 0]
                    pack[kept, 1] = pack[w, 1]
                    pack[kept, 2] = link
                    pack[kept, 3] = pack[w, 3]
                kept += 1
                continue
            position = pack[w, 1]
            following = links[position + 1]
            final = following == inject
            # written out: numba's inlining of a function doing this made the loop half as fast
            state[link, 1] += 1
            moved += 1
            if record:
                hop_steps[position] = step
            if bounded:
                left[moved - 1] = pack[w, 3]
                went[moved - 1] = ~link if final else link
                if not final:
                    state[link, 3] += 1
            else:
                state[pack[w, 3], 2] -= 1
                if not final:
                    state[link, 2] += 1
                    if state[link, 2] > max_buffer:
                        went[candidates] = link
                        candidates += 1
            if final:
                delivery[pack[w, 0]] = step
                continue
            pack[kept, 0] = pack[w, 0]
            pack[kept, 1] = position + 1
            pack[kept, 2] = following
            pack[kept, 3] = link
            kept += 1
        hops += moved
        if moved == 0:
            status = DEADLOCK
            break
        max_buffer = _settle(state, moved, left, went, candidates, bounded, max_buffer)
        count = kept
    return status, step, count, max_buffer, hops


@njit(cache=True, nogil=True)
def _run_flat(links, ids, cur, delivery, hop_steps, record, state, bandwidth, room, bounded,
              limit, rows=False, shift=0, last_from=0, first_below=0, width=1):
    """:func:`_run_packed` for a light load: every waiting packet reads its next link from the
    path array, and carries only its id and position (``ids`` and ``cur``).

    Where most waiting packets cross in every step (leveled networks, C below D), reading the
    link next to the one just crossed costs less than carrying the next link and the buffer
    along (BF(16), random rank: 0.23 s against 0.32 s); where most wait (C above D), less reading
    pays (torus:k=64,n=2, h = 16: 0.32 s against 0.13 s).

    ``ids`` and ``cur`` are packed in place: on return their first ``count`` entries are the
    packets still waiting, in priority order. ``state`` has a row per link and one more for the
    injection buffers, all zero: the step that last touched the link (column 0, as a tag that
    cycles through the type's positive values), that step's crossings (column 1) and, with
    bounded buffers, entries into the link's buffer (column 3), and the buffer's occupancy
    (column 2). One row keeps what a step reads of a link in one cache line.

    A ``state`` of two columns is for B = 1 and unbounded buffers: the tag alone says whether a
    link was crossed in the step (the first packet to try it crosses), and column 1 holds the
    occupancy; a third less memory (84 MB on BF(20) with Valiant's trick).

    With ``rows`` the paths are not :func:`_lay_out`'s but the collection's own, rows of one
    length in a butterfly's link ids, from level 0 up (:func:`universal.engine.compiled._level_rows`): a link is
    ``links[position] >> shift``, the hop is the last when the link id is at least ``last_from``
    (the last level's links) and the first when it is below ``first_below`` (level 0's); the
    packets are the positions alone (packet ``position // width``), ``ids`` is not read. The
    packets then read their paths in id order, not in priority order, at random: the loop asks
    for the path of the packet :data:`PREFETCH_AHEAD` places ahead, and for the state of the
    links of the one half as far ahead, so that the reads overlap instead of waiting in turn.
    On :func:`_lay_out`'s copy the paths stream in order and only the state is asked for ahead
    (BF(14) and BF(16), Valiant 4-relations: the run in 0.79 and 0.77 of the time).

    Returns ``(status, step, count, max_buffer, hops)``.
    """
    n = len(cur)
    inject = len(state) - 1
    period = np.iinfo(state.dtype).max
    went = np.empty(n, dtype=links.dtype)    # bounded: the link each mover crossed (~link: delivered)
    left = np.empty(n if bounded else 0, dtype=links.dtype)   # bounded: the buffer each mover left
    single = state.shape[1] == 2
    occupancy = 1 if single else 2
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
        candidates = 0
        for w in range(count):
            position = cur[w]
            if rows:
                if w + ahead < count:
                    _prefetch(links, cur[w + ahead] - 1)
                if w + half < count:
                    soon = cur[w + half]
                    _prefetch(state, links[soon] >> shift)
                    if links[soon] >= first_below:
                        _prefetch(state, links[soon - 1] >> shift)
                raw = links[position]
                link = raw >> shift
                final = raw >= last_from
                came = (links[position - 1] >> shift) if raw >= first_below else inject
            else:
                if w + half < count:
                    soon = cur[w + half]
                    _prefetch(state, links[soon])
                    _prefetch(state, links[soon - 1])
                link = links[position]
                final = links[position + 1] == inject
                came = links[position - 1]
            fresh = state[link, 0] != tag
            if fresh:
                state[link, 0] = tag
                if not single:
                    state[link, 1] = 0
                    if bounded:
                        state[link, 3] = 0
            crossing = fresh if single else state[link, 1] < bandwidth
            if crossing and bounded and not final:
                crossing = state[link, 3] < room - state[link, 2]
            if not crossing:
                if not rows:
                    ids[kept] = ids[w]
                cur[kept] = position
                kept += 1
                continue
            if not single:
                state[link, 1] += 1
            moved += 1
            if record:
                hop_steps[position] = step
            if bounded:
                left[moved - 1] = came
                went[moved - 1] = ~link if final else link
                if not final:
                    state[link, 3] += 1
            else:
                state[came, occupancy] -= 1
                if not final:
                    state[link, occupancy] += 1
                    if state[link, occupancy] > max_buffer:
                        went[candidates] = link
                        candidates += 1
            if final:
                # rows: the position says whose path it is (a stream less to carry)
                delivery[position // width if rows else ids[w]] = step
                continue
            if not rows:
                ids[kept] = ids[w]
            cur[kept] = position + 1
            kept += 1
        hops += moved
        if moved == 0:
            status = DEADLOCK
            break
        max_buffer = _settle(state, moved, left, went, candidates, bounded, max_buffer, occupancy)
        count = kept
    return status, step, count, max_buffer, hops
