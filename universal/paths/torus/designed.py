"""Routings given by data rather than a closed form: channel flows, and mixtures of routings.

A *flow routing* describes, relative to the source (SPEC §10), one unit of flow from node 0 to
every offset ``t`` over the channels of the torus, as non-negative integers over one common
denominator ``D`` (so loads, worst cases and locality stay exact rationals). The flow must be
conserved at every node and acyclic (a route never revisits a channel). It is the form in which
:mod:`universal.design` hands over an LP optimum and in which ``lp:file=PATH`` reads a saved one
(:mod:`universal.paths.torus.routingfile`).

* Exact pair loads: the flow of each offset is decomposed into paths with integer weights (any
  decomposition gives the same channel flows, hence the same loads and lengths).
* Routes for the packet engine: each packet walks from its source and, at every node, leaves by a
  channel chosen with probability proportional to that channel's flow for its offset (Towles,
  Dally & Boyd 2003, §4: paths are recovered from the flows). The walk crosses each channel with
  exactly the probability the flow gives it.

A routing designed over a *path family* (2TURN: at most two turns) is kept as its weighted paths
instead (:func:`path_families`, ``FlowRouting(..., paths=...)``): the union of one offset's
two-turn paths may contain a directed cycle, and cancelling it, or walking the summed flow,
splices the paths into others that are not in the family (shorter ones, which is how a 2TURN
routing came out 0.07% more local than 2TURN allows). With paths given, the pair loads and the
locality are those of exactly these paths, each route the engine draws is one of them, and a
route, not the union, must not revisit a node.

A *mixture* ``mix:dor=0.25,ival=0.75`` routes each packet with routing ``i`` with probability
``w_i`` (Towles, Dally & Boyd 2003, eqs. 11-14): loads and locality are the weighted sums.

Registered names (:data:`universal.paths.torus.algorithms.ROUTING_FACTORIES`): ``lp:file=PATH``,
``mix:NAME=W,...``, and ``2turn`` / ``2turna`` (designed once per torus size by
:mod:`universal.design` and cached on disk; the design layer installs the designer in
:data:`DESIGNER` when it is imported, so this layer never imports it).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np

from universal.errors import UserError
from universal.registry import Spec, check_known_params

from .algorithms import ROUTING_FACTORIES, PathFamily, Routing, get_routing
from .geometry import Torus
# the flows' arithmetic (re-exported: names imported from here elsewhere)
from .flows import (DENOMINATOR, _family_flows, _flows_as_families, _minimal_mask, channel_heads, check_flows,
                    family_of_legs, integer_flows, path_families)

__all__ = ["FlowRouting", "MixtureRouting", "DENOMINATOR", "integer_flows", "path_families", "family_of_legs",
           "channel_heads"]


class FlowRouting(Routing):
    """A relative routing on one torus given by integer channel flows over a common denominator.

    Parameters
    ----------
    torus : Torus
    num : ndarray of int64, shape (N, C)
        ``num[t, c] / den``: probability that a packet from 0 to offset ``t`` crosses channel ``c``.
    den : int
    name, summary : str
    meta : dict, optional
        What produced it (objective, path family, the LP's figures), kept in saved files.
    paths : dict of int to PathFamily, optional
        The routing's paths themselves, per offset, weights summing to ``den`` (a design over a
        path family, :func:`path_families`). Then ``num`` must be their flows; the loads, the
        locality and the engine's routes use exactly these paths, and each path (rather than the
        union of an offset's paths) must not revisit a node.

    Examples
    --------
    >>> t = Torus(3, 1)
    >>> r = FlowRouting(t, np.array([[0] * 6, [2, 0, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0]]), 2, "tiny")
    >>> r.family(t, 2).steps.tolist(), r.minimal
    ([[-1]], True)
    """

    reflection_symmetric = False

    def __init__(self, torus: Torus, num: np.ndarray, den: int, name: str, summary: str = "",
                 meta: dict | None = None, paths: dict[int, PathFamily] | None = None) -> None:
        self.torus = torus
        self.num = np.asarray(num, dtype=np.int64)
        self.den = int(den)
        self.name = name
        self.summary = summary or ("designed routing given by its weighted paths" if paths is not None
                                   else "designed routing given by its channel flows")
        self.meta = dict(meta or {})
        self._heads = channel_heads(torus)
        self._families: dict[int, PathFamily] = {}
        self.paths = paths
        self._picks: dict[int, np.ndarray] = {}
        check_flows(torus, self.num, self.den, self._heads, acyclic=paths is None)
        if paths is not None and not getattr(self, "_flows_are_the_paths", False):
            self._check_paths(paths)
        self.minimal = bool(np.all((self.num == 0) | _minimal_mask(torus, self._heads)))

    @classmethod
    def from_paths(cls, torus: Torus, paths: dict[int, PathFamily], den: int, name: str,
                   summary: str = "", meta: dict | None = None) -> "FlowRouting":
        """The routing of per-offset weighted paths (weights summing to ``den``), flows derived.

        Examples
        --------
        >>> t = Torus(3, 1)
        >>> r = FlowRouting.from_paths(t, path_families(t, np.ones(2), [(1, [(0, 1)]), (2, [(0, -1)])], 2), 2, "p")
        >>> r.num.tolist()
        [[0, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0]]
        """
        num = _family_flows(torus, paths)
        if max((int(v) for v in num.ravel()), default=0) > 2 ** 62:
            raise UserError("path weights too large")
        routing = cls.__new__(cls)
        routing._flows_are_the_paths = True                # just derived from them: no second walk
        routing.__init__(torus, num.astype(np.int64), den, name, summary, meta, paths=paths)
        return routing

    def _check_paths(self, paths: dict[int, PathFamily]) -> None:
        t = self.torus
        for off in range(t.N):
            fam = paths.get(off)
            if fam is not None and fam.den != self.den:
                raise UserError(f"the path weights of offset {t.label(off)} sum to {fam.den}, "
                                f"not to the denominator {self.den}")
        if not np.array_equal(_family_flows(t, paths).astype(object), self.num.astype(object)):
            raise UserError("the channel flows are not the flows of the given paths")

    def _check_torus(self, torus: Torus) -> None:
        if (torus.k, torus.n) != (self.torus.k, self.torus.n):
            raise UserError(f"routing {self.name} was designed for {self.torus.name}, not {torus.name}")

    def family(self, torus: Torus, offset: int) -> PathFamily:
        """Integer-weighted paths of offset ``offset`` (a decomposition of its flow)."""
        self._check_torus(torus)
        offset = int(offset)
        if offset not in self._families:
            if self.paths is not None:
                fam = self.paths[offset]
                g = int(np.gcd.reduce(fam.weights))
                self._families[offset] = PathFamily(fam.dims, fam.steps, fam.weights // g)
            else:
                # every offset's family at once: one vectorised decomposition of all the flows
                self._families.update(_flows_as_families(torus, self._heads, self.num, self.den))
        return self._families[offset]

    def sample_routes(self, torus, sources, dests, rng) -> list[np.ndarray]:
        """Routes drawn from the given paths by weight or, for a routing given by its flows, by
        walking the flow, each channel with probability proportional to its flow."""
        self._check_torus(torus)
        if self.paths is not None:
            return self._sample_paths(torus, sources, dests, rng)
        J = 2 * torus.n
        sources = np.asarray(sources, dtype=np.int64)
        offs = np.asarray(torus.sub(dests, sources), dtype=np.int64).reshape(-1)
        pos = np.zeros(len(offs), dtype=np.int64)              # position relative to the source
        walks = [pos.copy()]
        for _ in range(torus.num_channels + 1):
            active = pos != offs
            if not active.any():
                break
            out = self.num[offs[active][:, None], pos[active][:, None] * J + np.arange(J)[None, :]]
            cum = np.cumsum(out, axis=1)
            r = rng.integers(0, cum[:, -1])
            j = (r[:, None] >= cum).sum(axis=1)
            pos = pos.copy()
            pos[active] = self._heads[pos[active] * J + j]
            walks.append(pos)
        rel = np.stack(walks, axis=1)                          # (P, steps + 1)
        routes = []
        for i, s in enumerate(sources):
            steps = rel[i]
            end = int(np.argmax(steps == offs[i])) if offs[i] != 0 else 0
            routes.append(np.asarray(torus.add(steps[:end + 1], np.full(end + 1, s)), dtype=np.int64))
        return routes


    def _sample_paths(self, torus, sources, dests, rng) -> list[np.ndarray]:
        """One of the offset's paths per packet, with probability weight / den."""
        from .algorithms import legs_to_nodes
        sources = np.asarray(sources, dtype=np.int64).ravel()
        offs = np.asarray(torus.sub(dests, sources), dtype=np.int64).reshape(-1)
        draws = rng.integers(0, self.den, size=len(offs))
        routes: list = [None] * len(offs)
        for off in np.unique(offs).tolist():
            idx = np.flatnonzero(offs == off)
            fam = self.paths[off]
            pick = np.searchsorted(np.cumsum(fam.weights), draws[idx], side="right")
            for i, p in zip(idx.tolist(), pick.tolist()):
                routes[i] = legs_to_nodes(torus, int(sources[i]), fam.dims[p], fam.steps[p])
        return routes


class MixtureRouting(Routing):
    """Route each packet with routing ``i`` with probability ``w_i`` (TDB eq. 11).

    Examples
    --------
    >>> m = get_routing("mix:dor=0.25,ival=0.75")
    >>> [(r.name, str(w)) for r, w in m.parts]
    [('dor', '1/4'), ('ival', '3/4')]
    """

    def __init__(self, parts: list[tuple[Routing, Fraction]], name: str) -> None:
        self.parts = parts
        self.name = name
        self.summary = "mixture: " + ", ".join(f"{r.name} with probability {w}" for r, w in parts)
        self.minimal = all(r.minimal for r, _ in parts)
        self.dimension_symmetric = all(r.dimension_symmetric for r, _ in parts)
        self.reflection_symmetric = all(r.reflection_symmetric for r, _ in parts)

    def family(self, torus: Torus, offset: int) -> PathFamily:
        fams = [(r.family(torus, offset), w) for r, w in self.parts]
        scale = [w / f.den for f, w in fams]
        common = np.lcm.reduce([s.denominator for s in scale])
        L = max(f.dims.shape[1] for f, _ in fams)
        pad = lambda a: np.pad(a, ((0, 0), (0, L - a.shape[1])))  # noqa: E731
        weights = np.concatenate([f.weights * int(s * common) for (f, _), s in zip(fams, scale)])
        keep = weights > 0
        dims = np.concatenate([pad(f.dims) for f, _ in fams])[keep]
        steps = np.concatenate([pad(f.steps) for f, _ in fams])[keep]
        w = weights[keep]
        return PathFamily(dims, steps, w // int(np.gcd.reduce(w)))

    def sample_routes(self, torus, sources, dests, rng) -> list[np.ndarray]:
        """Draw the routing of each packet, then its route from that routing."""
        sources = np.asarray(sources, dtype=np.int64)
        dests = np.asarray(dests, dtype=np.int64)
        probs = np.array([float(w) for _, w in self.parts])
        pick = rng.choice(len(self.parts), size=len(sources), p=probs / probs.sum())
        routes: list = [None] * len(sources)
        for i, (r, _) in enumerate(self.parts):
            idx = np.flatnonzero(pick == i)
            if len(idx):
                for j, route in zip(idx, r.sample_routes(torus, sources[idx], dests[idx], rng)):
                    routes[j] = route
        return routes


def _mixture(spec: Spec) -> Routing:
    if spec.arg is not None or not spec.params:
        raise UserError(f"{spec.text!r}: give the mixture as mix:ROUTING=WEIGHT,... (e.g. mix:dor=0.25,ival=0.75)")
    parts = []
    for name, text in spec.params.items():
        if len(text) > 40 or "e" in text.lower():
            # Fraction("1e999999") builds a million-digit integer: weights are plain decimals or a/b
            raise UserError(f"{spec.text[:60]!r}: weight {text[:20]!r} of {name} must be a plain decimal or "
                            f"a fraction such as 1/3 (at most 40 characters)")
        try:
            w = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise UserError(f"{spec.text!r}: weight {text!r} of {name} is not a number") from None
        if w < 0:
            raise UserError(f"{spec.text!r}: weight of {name} is negative")
        if name in ("mix", "lp"):
            raise UserError(f"{spec.text!r}: a mixture takes routings by plain name ({name} is not one)")
        parts.append((get_routing(name), w))
    total = sum(w for _, w in parts)
    if total != 1:
        raise UserError(f"{spec.text!r}: the weights of a mixture must sum to 1 (they sum to {total})")
    return MixtureRouting(parts, spec.text)


def _designed(name: str, objective: str):
    def factory(spec: Spec) -> Routing:
        check_known_params(spec, set())
        if spec.arg is not None:
            raise UserError(f"routing {name!r} takes no argument (got {spec.arg!r})")
        return DesignedByName(name, objective)
    return factory


#: The function that designs (or reads from its cache) a routing by name:
#: ``DESIGNER(torus, objective, paths, name) -> FlowRouting``. The design layer
#: (:mod:`universal.design.cache`) installs it when imported; this layer never imports that one.
DESIGNER: Callable[[Torus, str, str, str], FlowRouting] | None = None


class DesignedByName(Routing):
    """``2turn`` / ``2turna``: the LP-designed 2TURN routing of whatever torus it is used on.

    The torus is only known when the routing is used, so the flows are designed (or read from the
    cache) on first use per torus, by :data:`DESIGNER` (:func:`universal.design.cache.cached_design`).
    """

    reflection_symmetric = False

    def __init__(self, name: str, objective: str) -> None:
        self.name = name
        self.objective = objective
        self.summary = (f"2TURN optimised for the {objective} throughput, then locality "
                        "(Towles, Dally & Boyd 2003), designed by LP and cached")
        self._by_torus: dict[tuple[int, int], FlowRouting] = {}

    def on(self, torus: Torus) -> FlowRouting:
        """The designed routing of ``torus`` (solved once, then read from the disk cache)."""
        key = (torus.k, torus.n)
        if key not in self._by_torus:
            if DESIGNER is None:
                raise UserError(f"routing {self.name!r} needs the LP designer: import universal.design first")
            self._by_torus[key] = DESIGNER(torus, self.objective, "2turn", self.name)
        return self._by_torus[key]

    def family(self, torus, offset):
        return self.on(torus).family(torus, offset)

    def sample_routes(self, torus, sources, dests, rng):
        return self.on(torus).sample_routes(torus, sources, dests, rng)


ROUTING_FACTORIES["mix"] = ("interpolated routing: mix:dor=0.25,ival=0.75 (weights sum to 1)", _mixture)
ROUTING_FACTORIES["2turn"] = ("2TURN: at most two turns, worst-case optimal then shortest (LP, cached)",
                              _designed("2turn", "worst-case"))
ROUTING_FACTORIES["2turna"] = ("2TURNA: at most two turns, average-case optimal then shortest (LP, cached)",
                               _designed("2turna", "average-case"))
