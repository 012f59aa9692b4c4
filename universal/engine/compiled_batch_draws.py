"""The packets of every run of a compiled open-loop batch in one chunk, drawn together (SPEC §11).

:func:`universal.engine.compiled_draws.draw_chunk_fast` draws one run's chunk in about a dozen
Python and numpy calls; on the 8-ary 2-cube a run creates a few thousand packets per chunk, so
those calls cost more than the packets (about 15 ns per link-hop of a batch, as much as the
step kernel). Here a batch whose runs all have the same traffic, DOR and bernoulli
sources (a load sweep, a saturation search's rounds, seeds), makes per run only its generator's own calls - the same calls, in the same
order, as ``draw_chunk_fast`` makes - into buffers kept for the batch, and everything around
them (listing the packets, finding their destinations, gathering their paths from DOR's table,
laying the runs end to end) is two compiled passes over the whole batch. The arrays it returns
are those of :func:`universal.engine.compiled_openloop._gather` over the runs' ``draw_chunk_fast``
chunks, and every generator ends in the same state (``tests/engine/test_compiled_openloop.py``).
"""

from __future__ import annotations

import numpy as np

from universal.engine.compiled import njit
from universal.engine.compiled_draws import _destinations, _narrow, _sorted
from universal.engine.creation import CHUNK
from universal.engine.priorities import RANKED
from universal.engine.routes import _TABLES as _DOR_TABLES

__all__ = ["BatchDraws"]


class BatchDraws:
    """Draw the chunks of all running runs of ``batch`` at once, where it can (:attr:`ok`).

    Parameters
    ----------
    batch : universal.engine.runs._Batch
        Its specs, generators and phases are read; nothing else is touched.

    Examples
    --------
    >>> from universal.engine.runs import _Batch
    >>> from universal.openloop import Measurement
    >>> from universal.engine.creation import RunSpec
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.networks import build_network
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=4,n=2")
    >>> traffic, router = offered_traffic(net, "uniform"), build_router("dor", net)
    >>> specs = [RunSpec(traffic, router, build_injection("bernoulli"), 0.5, seed=s) for s in range(3)]
    >>> BatchDraws(_Batch(specs, 1, None, Measurement())).ok
    True
    """

    def __init__(self, batch) -> None:
        specs = batch.specs
        first = specs[0]
        router, traffic = first.router, first.traffic
        self.ok = all(s.injection.name == "bernoulli" and s.priority not in RANKED and _dor(s.router) and _same_traffic(s.traffic, traffic)
                      for s in specs) and (traffic.perm is not None or _sorted(traffic._flat_cumulative))
        self.batch, self.router, self.traffic = batch, router, traffic
        self.tried = False                  # whether the router was asked to build DOR's table
        if not self.ok:
            return
        self.rates = np.stack([s.node_rates() for s in specs])
        self.u = np.empty((len(specs), CHUNK, batch.N))     # kept: fresh memory is slow to touch
        self.v = np.empty(0)
        self.off, self.links = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int32)

    def _table(self):
        """DOR's table of every pair's tie variants (:func:`universal.engine.routes._dor_table_paths`),
        or None where DOR draws without one (a large torus)."""
        table = _DOR_TABLES.get(("dor-table", id(self.router.network)))
        if table is None and not self.tried:
            # no packets: the router builds its table (if it keeps one) and draws nothing, from
            # a generator of its own, so the runs' streams are untouched
            self.tried = True
            none = np.zeros(0, dtype=np.int64)
            self.router.draw(none, none, np.random.default_rng(0))
            table = _DOR_TABLES.get(("dor-table", id(self.router.network)))
        if table is None or table[0] is not self.router.network:
            return None
        return table

    def draw(self, t0: int) -> tuple | None:
        """The chunk from step ``t0`` of every run not done: ``(step, src, dst, offsets, links,
        run_first)`` as :func:`universal.engine.compiled_openloop._gather` gives them, or None
        (nothing drawn) where DOR keeps no table."""
        table = self._table() if self.ok else None
        if table is None:
            return None
        from universal.engine.measure import DONE

        b = self.batch
        act = np.flatnonzero(b.phase != DONE)
        u = self.u[:len(act)]
        for i, r in enumerate(act):                 # the sources: one call per run, as draw_chunk_fast
            b.rngs[r].random(out=u[i])
        step, src, run_first = _bernoulli(u, self.rates[act], t0, act, b.R)
        n = len(src)
        if len(self.v) < n:
            self.v = np.empty(max(n, 2 * len(self.v)))
        v = self.v[:n]
        _, rows, lengths, _ = table
        k, dims = self.router.k_n
        V = 2 ** dims
        ties = np.empty(n, dtype=np.int64)
        perm = self.traffic.perm
        for r in act:                               # each run's destinations, then its DOR ties
            lo, hi = run_first[r], run_first[r + 1]
            if perm is None:
                b.rngs[r].random(out=v[lo:hi])
            ties[lo:hi] = b.rngs[r].integers(0, V, size=hi - lo)
        N = b.N
        if perm is not None:
            dst = perm[src]
        else:
            dst = _destinations(self.traffic._flat_cumulative, src, v, N)
        rows = _narrow(rows, self.router.network.num_links)
        if len(self.off) < n + 1 or len(self.links) < n * rows.shape[1]:
            self.off = np.empty(2 * n + 1, dtype=np.int64)
            self.links = np.empty(2 * n * rows.shape[1], dtype=np.int32)
        end = _dor_paths(rows, lengths, src, dst, ties, N, V, self.off, self.links)
        return step, src, dst, self.off[:n + 1], self.links[:end], run_first


def _dor(router) -> bool:
    """Whether ``router`` is DOR on a torus (whose paths :func:`universal.engine.routes._dor_table_paths`
    may take from a table)."""
    return router.kind == "torus" and router.routing.name == "dor" and not router.adaptive


def _same_traffic(a, b) -> bool:
    """Whether the traffics ``a`` and ``b`` pick destinations alike (one object, or equal
    permutations or cumulative rows)."""
    if a is b:
        return True
    if a.perm is not None or b.perm is not None:
        return a.perm is not None and b.perm is not None and np.array_equal(a.perm, b.perm)
    return np.array_equal(a._flat_cumulative, b._flat_cumulative)


@njit(cache=True, nogil=True)
def _bernoulli(u, rates, t0, act, runs):
    """Every packet of ``u[i] < rates[i]`` (run ``act[i]``'s sources), runs end to end, each by
    step then node: steps (from ``t0``), sources and where each of the ``runs`` runs begins."""
    m, steps, nodes = u.shape
    run_first = np.zeros(runs + 1, dtype=np.int64)
    for i in range(m):
        c = 0
        for s in range(steps):
            for x in range(nodes):
                c += 1 if u[i, s, x] < rates[i, x] else 0     # no branch: the comparison is random
        run_first[act[i] + 1] = c
    for r in range(runs):
        run_first[r + 1] += run_first[r]
    step = np.empty(run_first[runs], dtype=np.int64)
    src = np.empty(run_first[runs], dtype=np.int64)
    for i in range(m):
        n = run_first[act[i]]
        top = run_first[act[i] + 1]
        for s in range(steps):
            for x in range(nodes):
                if n < top:                        # the last place is written over, never past
                    step[n], src[n] = t0 + s, x
                n += 1 if u[i, s, x] < rates[i, x] else 0
    return step, src, run_first


@njit(cache=True, nogil=True)
def _dor_paths(rows, lengths, src, dst, ties, nodes, variants, off, links):
    """The DOR paths of ``src -> dst`` with tie variants ``ties`` from the table's ``rows`` into
    ``off[:n + 1]`` and ``links`` (int32, what the kernel reads; room for ``n`` whole rows):
    every row is copied whole and the next path written over its tail, so that the copy's
    length never varies (a varying one mispredicts a branch per packet)."""
    n = len(src)
    width = rows.shape[1]
    off[0] = 0
    at = 0
    for i in range(n):
        row = (src[i] * nodes + dst[i]) * variants + ties[i]
        for j in range(width):
            links[at + j] = rows[row, j]
        at += lengths[row]
        off[i + 1] = at
    return at
