"""The packets of a compiled open-loop batch, drawn as :func:`universal.engine.creation.draw_chunk`
draws them, with the per-packet work around numpy's generator calls compiled (SPEC §11).

Split from :mod:`universal.engine.compiled_openloop`, whose kernel runs the steps.
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import njit
from universal.engine.creation import CHUNK, Creations, InjectionState, RunSpec, draw_chunk
from universal.engine.priorities import RANKED
from universal.engine.routes import _TABLES as _DOR_TABLES, RouteDraw

__all__ = ["draw_chunk_fast"]


def draw_chunk_fast(spec: RunSpec, state: InjectionState, first_step: int, rng: np.random.Generator,
                    steps: int = CHUNK) -> Creations:
    """:func:`universal.engine.creation.draw_chunk` for the runs of the kernel: the same packets
    from the same calls of the same generator, with the per-packet work compiled.

    The generator's calls are numpy's own (``random`` for bernoulli sources and matrix traffic,
    ``poisson``, the routing's draws, DOR's tie variants); what is compiled is what numpy does
    around them in many small passes: listing the packets of the counts, finding every
    destination in its source's cumulative row, and gathering DOR's paths from its table.
    Injection processes and routings without a compiled part go to ``draw_chunk``.

    Parameters
    ----------
    spec, state, first_step, rng, steps
        As :func:`universal.engine.creation.draw_chunk`.

    Returns
    -------
    Creations
        Equal, array for array, to ``draw_chunk``'s, with the generator left in the same state.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=4,n=2")
    >>> spec = RunSpec(offered_traffic(net, "uniform"), build_router("dor", net), build_injection("bernoulli"), 0.5)
    >>> a = draw_chunk_fast(spec, InjectionState(), 0, np.random.default_rng(1))
    >>> b = draw_chunk(spec, InjectionState(), 0, np.random.default_rng(1))
    >>> all(np.array_equal(x, y) for x, y in ((a.src, b.src), (a.dst, b.dst), (a.route.links, b.route.links)))
    True
    """
    name = spec.injection.name
    if name not in ("bernoulli", "poisson") or spec.priority in RANKED or spec.router.adaptive:
        return draw_chunk(spec, state, first_step, rng, steps)
    rates = spec.node_rates()
    if name == "bernoulli":
        t, src = _bernoulli_packets(rng.random((steps, len(rates))), rates)
    else:
        t, src = _count_packets(rng.poisson(rates, size=(steps, len(rates))).astype(np.int64))
    traffic = spec.traffic
    if traffic.perm is not None:
        dst = traffic.perm[src]
    else:
        flat = traffic._flat_cumulative
        if not _sorted(flat):
            return _finish_draw(spec, first_step, rng, t, src, traffic.destinations(src, rng))
        dst = _destinations(flat, src, rng.random(len(src)), len(rates))
    return _finish_draw(spec, first_step, rng, t, src, dst)


def _finish_draw(spec: RunSpec, first_step: int, rng: np.random.Generator, t: np.ndarray, src: np.ndarray,
                 dst: np.ndarray) -> Creations:
    """The routing's draws for the packets ``src -> dst`` created in the steps ``t``."""
    route = _dor_from_table(spec.router, src, dst, rng)
    if route is None:
        route = _torus_legs(spec.router, src, dst, rng)
    if route is None:
        route = spec.router.draw(src, dst, rng)
    return Creations(t + first_step, src, dst.astype(np.int64, copy=False), route)


#: Whether the rows of a traffic's cumulative table, laid end to end, are sorted (by the array's
#: id; the array is kept so that the id is not reused).
_SORTED: dict = {}


def _sorted(flat: np.ndarray) -> bool:
    """Whether ``flat`` never decreases (a row whose cumulative sum ends above 1 by a rounding
    error need not): only then does a search confined to a row find what numpy's does."""
    known = _SORTED.get(id(flat))
    if known is None or known[0] is not flat:
        known = _SORTED[id(flat)] = (flat, bool((np.diff(flat) >= 0).all()))
    return known[1]


def _dor_from_table(router, src: np.ndarray, dst: np.ndarray, rng: np.random.Generator):
    """DOR's paths from the table :func:`universal.engine.routes._dor_table_paths` keeps (the same
    tie variants, drawn by the same call), or None where that function would not use a table or
    has not built it yet."""
    if router.kind != "torus" or router.routing.name != "dor":
        return None
    table = _DOR_TABLES.get(("dor-table", id(router.network)))
    if table is None or table[0] is not router.network:
        return None
    _, rows, lengths, _ = table
    rows = _narrow(rows, router.network.num_links)
    k, n = router.k_n
    N, V = router.network.num_nodes, 2 ** n
    pick = (src * N + dst) * V + rng.integers(0, V, size=len(src))
    offsets, links = _gather_rows(rows, lengths, pick)
    return RouteDraw(offsets=offsets, links=links)


def _torus_legs(router, src: np.ndarray, dst: np.ndarray, rng: np.random.Generator):
    """The paths of a torus routing drawn as legs (VAL, ROMM, RLB, IVAL, ...): the routing's own
    draws, then the legs walked hop by hop in one compiled pass where
    :func:`universal.engine.routes._expand_legs` makes a dozen numpy passes (the same links: the
    walk is deterministic). None where :func:`universal.engine.routes._torus_paths` would not
    expand legs (DOR with its table)."""
    from universal.engine.routes import _DOR_TABLE_ENTRIES
    from universal.paths.torus.algorithms import legs
    from universal.paths.torus.geometry import Torus

    if router.kind != "torus":
        return None
    k, n = router.k_n
    routing = router.routing
    if routing.name == "dor" and k ** (2 * n) * 2 ** n * n * k <= _DOR_TABLE_ENTRIES:
        return None
    torus = router.extra.get("torus")
    if torus is None:
        torus = router.extra["torus"] = Torus(k, n)
    ch = routing.sample(torus, torus.sub(dst, src), rng)
    dims, steps = legs(ch, k, routing.erase_loops)
    dims, steps = np.ascontiguousarray(dims, dtype=np.int64), np.ascontiguousarray(steps, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(np.abs(steps).sum(axis=1))]).astype(np.int64)
    dir_link = router.dir_link.reshape(-1)
    links = np.empty(int(offsets[-1]), dtype=dir_link.dtype)
    _walk_legs(np.ascontiguousarray(torus.coords[src], dtype=np.int64), dims, steps, k,
               np.ascontiguousarray(torus.powers, dtype=np.int64), dir_link, links)
    return RouteDraw(offsets, links)


@njit(cache=True, nogil=True)
def _walk_legs(start, dims, steps, k, powers, dir_link, links):
    """Packet p walks from the coordinates ``start[p]`` along its legs (``steps[p, g]`` hops in
    dimension ``dims[p, g]``, the sign the direction); every hop's link, from the node it
    leaves, is ``dir_link[(node * n + dim) * 2 + (backwards)]``, written to ``links`` in order."""
    P, G = dims.shape
    n = start.shape[1]
    cur = np.empty(n, dtype=np.int64)
    at = 0
    for p in range(P):
        node = 0
        for j in range(n):
            cur[j] = start[p, j]
            node += cur[j] * powers[j]
        for g in range(G):
            d, s = dims[p, g], steps[p, g]
            back = 1 if s < 0 else 0
            step = -1 if s < 0 else 1
            for _ in range(abs(s)):
                links[at] = dir_link[(node * n + d) * 2 + back]
                at += 1
                x = cur[d] + step
                x = x + k if x < 0 else x - k if x >= k else x
                node += (x - cur[d]) * powers[d]
                cur[d] = x
    return at


#: DOR tables narrowed to the smallest integer type that holds a link (by the table's id; the
#: table is kept so that the id is not reused): a quarter of the memory to gather from.
_NARROW: dict = {}


def _narrow(rows: np.ndarray, links: int) -> np.ndarray:
    """``rows`` as int16 or int32 where the link ids fit (the gather widens them back)."""
    known = _NARROW.get(id(rows))
    if known is None or known[0] is not rows:
        dtype = np.int16 if links < 2**15 else np.int32 if links < 2**31 else np.int64
        known = _NARROW[id(rows)] = (rows, rows.astype(dtype))
    return known[1]


@njit(cache=True, nogil=True)
def _bernoulli_packets(u, rates):
    """``np.nonzero(u < rates)``: the (step, node) of every packet, in creation order. Every
    place is written and the count advanced by the comparison, without a branch (which a
    random comparison mispredicts often)."""
    steps, nodes = u.shape
    t = np.empty(steps * nodes, dtype=np.int64)
    src = np.empty(steps * nodes, dtype=np.int64)
    n = 0
    for i in range(steps):
        for v in range(nodes):
            t[n], src[n] = i, v
            n += 1 if u[i, v] < rates[v] else 0
    return t[:n].copy(), src[:n].copy()


@njit(cache=True, nogil=True)
def _count_packets(counts):
    """``counts[i, v]`` packets created by node v in step i, listed by step, then node."""
    steps, nodes = counts.shape
    n = 0
    for i in range(steps):
        for v in range(nodes):
            n += counts[i, v]
    t = np.empty(n, dtype=np.int64)
    src = np.empty(n, dtype=np.int64)
    n = 0
    for i in range(steps):
        for v in range(nodes):
            for _ in range(counts[i, v]):
                t[n], src[n] = i, v
                n += 1
    return t, src


@njit(cache=True, nogil=True)
def _upper_bound(flat, lo, hi, x):
    """The first index in ``[lo, hi)`` whose entry of the sorted ``flat`` is greater than ``x``
    (``hi`` if none). Branch-free: the comparisons of random keys are unpredictable, and a
    mispredicted branch per level cost five times the search itself."""
    n = hi - lo
    if n <= 0:
        return lo
    base = lo
    while n > 1:
        half = n >> 1
        base = base + half if flat[base + half - 1] <= x else base
        n -= half
    return base + (1 if flat[base] <= x else 0)


@njit(cache=True, nogil=True)
def _destinations(flat, src, u, nodes):
    """:meth:`universal.engine.workload.OfferedTraffic.destinations` for matrix traffic, given
    its uniform numbers ``u``: ``searchsorted(flat, src + u, side="right") - src * nodes``,
    clipped to the nodes, for a sorted ``flat``. The search stays in the source's row unless an
    entry next to the row says that the answer lies outside it, and starts where a uniform row
    would put the answer: a short walk from there finds it in a near-uniform row with branches
    the processor predicts (a binary search mispredicts one per level on random keys), and
    after a few steps a binary search takes over."""
    out = np.empty(len(src), dtype=np.int64)
    size = len(flat)
    for i in range(len(src)):
        x = src[i] + u[i]
        lo = src[i] * nodes
        hi = lo + nodes
        at = lo + min(int(u[i] * nodes), nodes)
        walked = 0
        while at > lo and flat[at - 1] > x and walked < 4:
            at -= 1
            walked += 1
        while at < hi and flat[at] <= x and walked < 4:
            at += 1
            walked += 1
        if walked == 4:
            at = _upper_bound(flat, lo, hi, x)
        if (lo > 0 and flat[lo - 1] > x) or (hi < size and flat[hi] <= x):
            at = _upper_bound(flat, 0, size, x)
        d = at - lo
        out[i] = 0 if d < 0 else nodes - 1 if d > nodes - 1 else d
    return out


@njit(cache=True, nogil=True)
def _gather_rows(rows, lengths, pick):
    """The paths ``rows[pick[i], :lengths[pick[i]]]`` one after the other, and their offsets."""
    offsets = np.empty(len(pick) + 1, dtype=np.int64)
    offsets[0] = 0
    for i in range(len(pick)):
        offsets[i + 1] = offsets[i] + lengths[pick[i]]
    links = np.empty(offsets[-1], dtype=np.int64)
    for i in range(len(pick)):
        at = offsets[i]
        row = pick[i]
        for j in range(offsets[i + 1] - at):
            links[at + j] = rows[row, j]
    return offsets, links
