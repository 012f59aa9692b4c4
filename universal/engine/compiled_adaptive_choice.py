"""The adaptive choice of the compiled open-loop kernel for adaptive routings
(:mod:`universal.engine.compiled_adaptive`): an undecided packet takes, among its allowed links, the
one with the fewest packets waiting for it, ties broken by the hash of its tie seed and hop count
(:func:`tie_uniform_one`), UGAL first choosing its target; as :func:`universal.engine.adaptive.decide`
does (SPEC §11; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for
torus networks", 2003, §2 and §5). Without numba the kernels are plain Python.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import njit


@njit(cache=True, nogil=True, inline="always")
def tie_uniform_one(tie, h):
    """:func:`universal.engine.ties.tie_uniform` of one packet: the splitmix64 hash of
    ``tie + (h + 1) * golden`` as a uniform number in [0, 1)."""
    g = np.uint64(0x9E3779B97F4A7C15)
    z = np.uint64(tie) + np.uint64(h) * g + g
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# ---------------------------------------------------------------------------- adaptive choice
@njit(cache=True, nogil=True, inline="always")
def _cheapest(cost, n, u):
    """Index of the cheapest of ``cost[:n]``; among ``c`` tied ones the ``floor(u * c)``-th
    (:func:`universal.engine.adaptive.choose_cost`)."""
    best = cost[0]
    for j in range(1, n):
        if cost[j] < best:
            best = cost[j]
    count = 0
    for j in range(n):
        if cost[j] == best:
            count += 1
    pick = min(np.int64(u * count), count - 1)
    for j in range(n):
        if cost[j] == best:
            if pick == 0:
                return j
            pick -= 1
    return n - 1


@njit(cache=True, nogil=True, inline="always")
def _smallest(productive, node, target, base, count):
    """The fewest packets waiting for a link from ``node`` toward ``target`` (BIG if none)."""
    best = np.int64(1) << 40
    for j in range(productive.shape[2]):
        c = productive[node, target, j]
        if c >= 0 and count[base + c] < best:
            best = count[base + c]
    return best


@njit(cache=True, nogil=True, inline="always")
def _decide(slot, kind, L, productive, distance, dir_link, threshold, count, s_run, s_node, s_target,
            s_dst, s_via, s_tie, s_hops, s_rem, s_sign, cost, cand):
    """The next link (global id) of the adaptive packet in ``slot``, from the queues' lengths
    ``count`` (:func:`universal.engine.adaptive.decide`); UGAL's first decision sets its target."""
    r = s_run[slot]
    base = r * L
    node = s_node[slot]
    if kind == 3 and s_via[slot] >= 0:          # UGAL at creation: the intermediate or not
        via, dst = s_via[slot], s_dst[slot]
        h_min = np.int64(distance[node, dst])
        h_val = np.int64(distance[node, via]) + np.int64(distance[via, dst])
        q_min = _smallest(productive, node, dst, base, count)
        q_val = _smallest(productive, node, via, base, count)
        s_target[slot] = via if q_min * h_min > q_val * h_val + threshold[r] else dst
        s_via[slot] = -1
    n = 0
    if kind == 2:                               # GOAL: the productive dimensions, in order
        for d in range(s_rem.shape[1]):
            if s_rem[slot, d] > 0:
                link = dir_link[node, d, 1 if s_sign[slot, d] < 0 else 0]
                cand[n] = link
                cost[n] = count[base + link]
                n += 1
    else:                                       # MIN AD, UGAL: the productive links, by id
        target = s_target[slot]
        for j in range(productive.shape[2]):
            link = productive[node, target, j]
            if link >= 0:
                cand[n] = link
                cost[n] = count[base + link]
                n += 1
    j = _cheapest(cost, n, tie_uniform_one(s_tie[slot], s_hops[slot]))
    return base + cand[j]
