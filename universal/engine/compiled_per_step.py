"""The compiled kernel for keys drawn afresh in every step (``random``, ``dynamic == "per-step"``),
and the prefetch intrinsics both dynamic kernels use (Meyer auf der Heide & Scheideler,
"Communication in Parallel Systems", 1996, §2.1 and §4).

The waiting packets, in increasing id order, draw their keys in one ``Generator.integers`` call a
step from the run's generator; :func:`_best_of` (or :func:`_best_one` for one winner a link and
unbounded buffers) keeps every link's best contenders, and the winners cross (:func:`_cross_one`,
:func:`_book`). :func:`universal.engine.compiled_dynamic.route_dynamic` sets the run up and reads
its result; its docstring describes both kernels. Without numba the kernels run as plain Python.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import DEADLOCK, DELIVERED, NUMBA, STEP_LIMIT, _settle, njit

#: Rows ahead of the pass whose path the pass prefetches
#: (:func:`universal.engine.compiled_dynamic._run_sorted`); twice as far ahead their link state, if
#: the per-link state takes more than ``_CACHED`` bytes.
_PREFETCH = 16
_CACHED = 1 << 20


if NUMBA:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    def _prefetch_code(context, builder, signature, args):
        """``llvm.prefetch`` of the element at ``args[1:]`` of the array ``args[0]``."""
        kind = signature.args[0]
        array = context.make_array(kind)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, kind, array, list(args[1:]))
        byte, word = ir.IntType(8).as_pointer(), ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte, word, word, word]), "llvm.prefetch.p0")
        # a read, kept in every cache level, of data
        builder.call(function, [builder.bitcast(pointer, byte), ir.Constant(word, 0), ir.Constant(word, 3),
                                ir.Constant(word, 1)])
        return context.get_dummy_value()

    @intrinsic
    def _prefetch(typingctx, array, index):
        """Ask the processor to bring ``array[index]`` into its caches, without waiting for it."""
        return types.void(array, index), _prefetch_code

    @intrinsic
    def _prefetch_row(typingctx, array, row):
        """:func:`_prefetch` of ``array[row, 0]``."""
        def code(context, builder, signature, args):
            zero = context.get_constant(types.intp, 0)
            return _prefetch_code(context, builder, types.void(signature.args[0], types.intp, types.intp),
                                  [args[0], context.cast(builder, args[1], signature.args[1], types.intp), zero])
        return types.void(array, row), code
else:
    def _prefetch(array, index):
        """Nothing to do in plain Python."""

    def _prefetch_row(array, row):
        """Nothing to do in plain Python."""


@njit(cache=True, nogil=True, inline="always")
def _book(state, link, buffer, final, bounded, moved, left, went, candidates, max_buffer):
    """Count the ``moved``-th crossing of ``link`` in a step, by a packet from ``buffer`` (the
    crossing delivers it if ``final``): with bounded buffers note where it goes for
    :func:`universal.engine.compiled._settle`, else move it now, noting in ``went`` a link whose
    buffer it fills above ``max_buffer``; returns how many such ``candidates`` there are.

    Only :func:`_run_random`'s general case calls it: the hot loops write it out, as numba's
    inlining of it made them up to half as fast."""
    state[link, 1] += 1
    if bounded:
        left[moved] = buffer
        went[moved] = ~link if final else link
        if not final:
            state[link, 3] += 1
    else:
        state[buffer, 2] -= 1
        if not final:
            state[link, 2] += 1
            if state[link, 2] > max_buffer:
                went[candidates] = link
                candidates += 1
    return candidates


@njit(cache=True, nogil=True)
def _best_of(links, ids, cur, at, count, fresh, bits, best, touched, state, tag, bounded, inject):
    """:func:`_run_random`'s pass: the waiting packets (the delivered squeezed out) offer their fresh
    keys to their links, each of which keeps its best ``width`` in ``best`` (sorted, counted in
    ``state``'s column 1, and with bounded buffers those it would deliver apart, counted in column
    3). Returns the packets still waiting and the links in ``touched``."""
    width = best.shape[1] // 2 if bounded else best.shape[1]
    kept = 0
    links_now = 0
    for w in range(count):
        link = at[w]
        if link < 0:
            continue
        position = cur[w]
        ids[kept] = ids[w]
        cur[kept] = position
        at[kept] = link
        if state[link, 0] != tag:
            state[link, 0] = tag
            state[link, 1] = 0
            if bounded:
                state[link, 3] = 0
            touched[links_now] = link
            links_now += 1
        column, first = 1, 0
        if bounded and links[position + 1] == inject:
            column, first = 3, width
        # insert into the link's sorted list of its best keys, dropping the worst when full
        value = fresh[kept] << bits | kept
        size = state[link, column]
        if size < width:
            state[link, column] += 1
            j = first + size
        elif value < best[link, first + width - 1]:
            j = first + width - 1
        else:
            kept += 1
            continue
        while j > first and best[link, j - 1] > value:
            best[link, j] = best[link, j - 1]
            j -= 1
        best[link, j] = value
        kept += 1
    return kept, links_now


@njit(cache=True, nogil=True)
def _best_one(ids, cur, at, count, fresh, bits, best, touched, mark, large):
    """:func:`_best_of` for one winner a link and unbounded buffers, without a branch on the keys:
    ``best[link, 0]`` holds ``mark << (30 + bits) | key << bits | slot``, ``mark`` falling from step
    to step, so that the smallest is this step's best and a stale entry is never it."""
    low = 30 + bits
    high = mark << low
    kept = 0
    links_now = 0
    for w in range(count):
        link = at[w]
        if link < 0:
            continue
        if large and w + _PREFETCH < count and at[w + _PREFETCH] >= 0:
            _prefetch_row(best, at[w + _PREFETCH])
        ids[kept] = ids[w]
        cur[kept] = cur[w]
        at[kept] = link
        held = best[link, 0]
        touched[links_now] = link
        links_now += (held >> low) != mark
        best[link, 0] = min(held, high | fresh[kept] << bits | kept)
        kept += 1
    return kept, links_now


@njit(cache=True, nogil=True)
def _cross_one(links, ids, cur, at, links_now, touched, best, delivery, hop_steps, record, step, went, max_buffer,
               mask, inject):
    """The crossings of a step after :func:`_best_one`: every touched link's best packet crosses,
    its buffers' occupancy kept beside the keys (``best[., 1]``), one cache line a link. The
    winners' paths and buffers are prefetched ahead of them. Returns the crossings, how many
    entries of ``went`` hold links that may hold the largest buffer (see
    :func:`universal.engine.compiled._run_packed`) and how many movers stay in the network."""
    candidates = 0
    staying = 0
    for a in range(links_now):
        if a + 2 * _PREFETCH < links_now:
            _prefetch_row(best, touched[a + 2 * _PREFETCH])
        if a + _PREFETCH < links_now:
            _prefetch(links, cur[best[touched[a + _PREFETCH], 0] & mask] + 1)
        if a + _PREFETCH // 2 < links_now:
            _prefetch_row(best, links[cur[best[touched[a + _PREFETCH // 2], 0] & mask] - 1])
        link = touched[a]
        slot = best[link, 0] & mask
        position = cur[slot]
        if record:
            hop_steps[position] = step
        best[links[position - 1], 1] -= 1
        following = links[position + 1]
        if following == inject:
            delivery[ids[slot]] = step
            at[slot] = -1
            continue
        staying += 1
        cur[slot] = position + 1
        at[slot] = following
        best[link, 1] += 1
        if best[link, 1] > max_buffer:
            went[candidates] = link
            candidates += 1
    return links_now, candidates, staying


@njit(cache=True, nogil=True)
def _run_random(links, ids, cur, delivery, hop_steps, record, state, best, single, bandwidth, room, bounded, limit,
                bits, rng, marks):
    """The step loop for ``random``: the packets ``ids`` (increasing) at positions ``cur`` of the
    flat path array ``links`` (laid out in id order, :func:`universal.engine.compiled._lay_out`)
    draw fresh keys from ``rng`` in every step, in that order, in one call; ``best`` keeps every
    link's best ``min(B, C)`` packed keys ``key << bits | slot`` (a slot's order is its id's), and
    with bounded buffers as many more of the packets the link delivers. ``state`` is the static
    kernel's per-link state, columns 1 and 3 counting the two lists. ``marks`` is how many steps
    the marks of :func:`_best_one` last before they start over (0: as many as fit).

    Returns ``(status, step, count, max_buffer, hops)``, the first ``count`` of ``ids`` and
    ``cur`` the packets still waiting.
    """
    n = len(ids)
    inject = len(state) - 1
    period = np.iinfo(state.dtype).max
    mask = (np.int64(1) << bits) - 1
    width = 1 if single else (best.shape[1] // 2 if bounded else best.shape[1])
    span = np.int64(1) << max(0, 62 - 30 - bits) if marks <= 0 else np.int64(marks)
    large = best.nbytes > _CACHED
    touched = np.empty(min(n, inject), dtype=np.int64)
    at = np.empty(n, dtype=links.dtype)               # the link each waiting packet wants (-1: delivered)
    for w in range(n):
        at[w] = links[cur[w]]
    went = np.empty(n, dtype=np.int64)
    left = np.empty(n if bounded else 0, dtype=np.int64)
    count = n
    waiting = n
    step = 0
    hops = 0
    max_buffer = 0
    status = DELIVERED
    while waiting > 0:
        if step >= limit:
            status = STEP_LIMIT
            break
        step += 1
        tag = (step - 1) % period + 1
        if tag == 1 and step > 1:
            state[:, 0] = 0
        fresh = rng.integers(0, 1 << 30, size=waiting, dtype=np.int64)
        if single:
            if (step - 1) % span == 0 and step > 1:     # the step marks start over
                best[:, 0] = np.iinfo(np.int64).max
            kept, links_now = _best_one(ids, cur, at, count, fresh, bits, best, touched,
                                        np.int64(span - (step - 1) % span), large)
        else:
            kept, links_now = _best_of(links, ids, cur, at, count, fresh, bits, best, touched, state, tag, bounded,
                                       inject)
        count = kept
        if single:
            moved, entered, staying = _cross_one(links, ids, cur, at, links_now, touched, best, delivery, hop_steps,
                                                 record, step, went, max_buffer, mask, inject)
            waiting -= moved - staying
            for i in range(entered):
                if best[went[i], 1] > max_buffer:
                    max_buffer = best[went[i], 1]
            hops += moved
            continue
        moved = 0
        candidates = 0
        for a in range(links_now):
            link = touched[a]
            stay = state[link, 1]
            leave = state[link, 3] if bounded else 0
            free = room - state[link, 2] if bounded else bandwidth
            i = j = crossed = 0
            while crossed < bandwidth:
                take_stay = i < stay and i < free
                take_leave = j < leave
                if take_stay and take_leave:
                    if best[link, i] < best[link, width + j]:
                        take_leave = False
                    else:
                        take_stay = False
                if take_stay:
                    slot = best[link, i] & mask
                    i += 1
                elif take_leave:
                    slot = best[link, width + j] & mask
                    j += 1
                else:
                    break
                crossed += 1
                position = cur[slot]
                final = links[position + 1] == inject
                if record:
                    hop_steps[position] = step
                candidates = _book(state, link, links[position - 1], final, bounded, moved, left, went, candidates,
                                   max_buffer)
                moved += 1
                if final:
                    delivery[ids[slot]] = step
                    waiting -= 1
                    at[slot] = -1
                else:
                    cur[slot] = position + 1
                    at[slot] = links[position + 1]
        hops += moved
        if moved == 0:
            status = DEADLOCK
            break
        max_buffer = _settle(state, moved, left, went, candidates, bounded, max_buffer)
    if status != DELIVERED:
        kept = 0
        for w in range(count):
            if at[w] >= 0:
                ids[kept] = ids[w]
                cur[kept] = cur[w]
                kept += 1
        count = kept
    return status, step, count, max_buffer, hops
