"""Oblivious routing algorithms on the k-ary n-cube, as exact path distributions.

Every algorithm here is *relative* (Towles, "Finding worst-case permutations for oblivious
routing algorithms", §4.2): the distribution of paths from ``s`` to ``d`` is the translate of
the distribution from node 0 to the offset ``d - s``. So an algorithm only describes the routes
from node 0 to each offset ``t``, and it does so in one shape shared by all of them: a route is

    phase 1: move by the signed vector ``a`` from the source, correcting dimensions in ``order1``
    phase 2: move by the signed vector ``b``, correcting dimensions in ``order2``

with ``a + b = t`` (mod k), each dimension moved in one straight *leg* (a signed step count).
A one-phase algorithm (DOR) has ``b = 0``. IVAL then removes the loops of the joined walk.

An algorithm object can

* :meth:`Routing.choices` - enumerate every choice for one offset with an integer weight
  (the probabilities are ``weight / sum(weights)``, exact);
* :meth:`Routing.sample` - draw one choice per pair with a numpy Generator;
* :func:`legs` - turn choices into legs ``(dims, steps)``, identical for both uses,

and :func:`sample_paths` expands sampled legs into node sequences for the packet engine.

The algorithms (names are the public contract, SPEC §8):

``dor``
    Dimension order, lowest dimension first, minimal in each dimension; when both directions
    are equally short (``k`` even, offset ``k/2``) the two are used with probability 1/2 each
    (Towles, Dally & Boyd 2003, Table 1).
``val``
    Valiant's algorithm: DOR to an intermediate node drawn uniformly from all N nodes, then
    DOR to the destination (Towles, Dally & Boyd 2003, Table 1; Singh et al. 2003, Claim 2).
``romm``
    Two-phase ROMM as defined in Towles' worst-case report (§5): the intermediate is uniform
    over the minimal quadrant (the box of nodes on minimal paths), each phase is DOR in a
    uniformly random dimension order, drawn independently for the two phases (loads are linear,
    so drawing one order for both phases would give the same pair loads; only sampled routes
    differ). With a tie (offset ``k/2``) the direction of that dimension is first chosen with
    probability 1/2, and both phases then move in the chosen directions only.
``rlb`` / ``rlbth``
    Randomized local balance (Singh, Dally, Towles & Gupta 2002, as summarised in Singh et al.
    2003 §4 and Table 1, and Towles, Dally & Boyd 2003 Table 1): in each dimension go the short
    way with probability ``(k - Delta)/k`` and the long way with ``Delta/k``; inside the chosen
    quadrant route ROMM-like to a uniform intermediate node of the quadrant and on to the
    destination, each phase in a random dimension order. RLBth always goes the short way in
    a dimension whose distance is below ``k/4``.
``ival``
    Improved Valiant (Towles, Dally & Boyd 2003, §5.2): VAL whose first phase corrects the
    dimensions in a uniformly random order (on a 2-D torus x then y or y then x, 1/2 each) and
    whose second phase corrects them in the reverse of that order, with the loops of the joined
    walk removed. ``ival:order=xy`` is the fixed variant: always x then y, then y then x (it
    keeps the worst case 1/2 and the locality, but not the average-case throughput).

Examples
--------
>>> from universal.paths.torus.geometry import Torus
>>> t = Torus(8, 2)
>>> fam = ROUTINGS["dor"].family(t, t.node((4, 1)))     # tie in x: two paths, weight 1 each
>>> fam.weights.tolist(), fam.steps.tolist()         # legs: x then y, then the empty phase 2
([1, 1], [[-4, 1, 0, 0], [4, 1, 0, 0]])
"""

from __future__ import annotations

import itertools
import math
from typing import Callable

import numpy as np

from universal.errors import UserError
from universal.registry import Spec, check_known_params, parse_spec

from .geometry import Torus
# the shared shape of the algorithms (re-exported: names imported from here elsewhere)
from .legs import (Choices, PathFamily, Routing, _all_orders, _identity_orders, _minimal_options, _random_orders,
                   _tie_product, legs, legs_to_nodes)

__all__ = [
    "Choices",
    "PathFamily",
    "Routing",
    "ROUTINGS",
    "ROUTING_FACTORIES",
    "is_torus_routing",
    "get_routing",
    "legs",
    "sample_paths",
    "legs_to_nodes",
]


# ---------------------------------------------------------------------------------------------
# algorithms
# ---------------------------------------------------------------------------------------------
class DOR(Routing):
    name = "dor"
    summary = "dimension order (x first), minimal, ties split evenly between both directions"
    minimal = True

    def choices(self, torus: Torus, offset: int) -> Choices:
        moves, w = _tie_product(torus.k, torus.coords[offset])
        P, n = moves.shape
        zeros = np.zeros_like(moves)
        return Choices(moves, zeros, _identity_orders(P, n), _identity_orders(P, n), w)

    def sample(self, torus, offsets, rng) -> Choices:
        c = torus.coords[np.asarray(offsets, dtype=np.int64)]
        lo, hi = _minimal_options(torus.k, c)
        a = np.where(rng.random(c.shape) < 0.5, lo, hi)
        P, n = c.shape
        return Choices(a, np.zeros_like(a), _identity_orders(P, n), _identity_orders(P, n),
                       np.ones(P, dtype=np.int64))


class VAL(Routing):
    name = "val"
    summary = "Valiant: DOR to a uniformly random intermediate node, then DOR to the destination"
    reverse_second = False

    def choices(self, torus: Torus, offset: int) -> Choices:
        k, n = torus.k, torus.n
        q = torus.coords                                  # every intermediate node
        a_lo, a_hi = _minimal_options(k, q)
        b_lo, b_hi = _minimal_options(k, (torus.coords[offset] - q) % k)
        a_ties = (a_lo != a_hi).sum(axis=1)
        b_ties = (b_lo != b_hi).sum(axis=1)
        # weight 2**(n - ties) per tie variant makes every intermediate weigh 4**n in total
        w = (2 ** (n - a_ties)) * (2 ** (n - b_ties))
        a_parts, b_parts, w_parts = [], [], []
        for pa in itertools.product((False, True), repeat=n):
            use_a = np.array(pa)
            ok_a = np.all(~use_a | (a_lo != a_hi), axis=1)   # take "lo" only where it differs
            a = np.where(use_a, a_lo, a_hi)
            for pb in itertools.product((False, True), repeat=n):
                use_b = np.array(pb)
                ok = ok_a & np.all(~use_b | (b_lo != b_hi), axis=1)
                a_parts.append(a[ok])
                b_parts.append(np.where(use_b, b_lo, b_hi)[ok])
                w_parts.append(w[ok])
        a = np.concatenate(a_parts)
        P = len(a)
        return Choices(a, np.concatenate(b_parts), _identity_orders(P, n),
                       _identity_orders(P, n, self.reverse_second), np.concatenate(w_parts))

    def sample(self, torus, offsets, rng) -> Choices:
        k = torus.k
        t = torus.coords[np.asarray(offsets, dtype=np.int64)]
        P, n = t.shape
        q = rng.integers(0, k, size=(P, n))
        lo, hi = _minimal_options(k, q)
        a = np.where(rng.random((P, n)) < 0.5, lo, hi)
        lo, hi = _minimal_options(k, (t - q) % k)
        b = np.where(rng.random((P, n)) < 0.5, lo, hi)
        return Choices(a, b, _identity_orders(P, n), _identity_orders(P, n, self.reverse_second),
                       np.ones(P, dtype=np.int64))


class IVAL(VAL):
    """Improved Valiant: VAL whose second phase reverses the first phase's dimension order,
    with the loops of the joined walk removed (Towles, Dally & Boyd 2003, §5.2).

    Parameters
    ----------
    order : {"random", "xy"}
        ``"random"`` (the paper's algorithm): the first phase's order is uniformly random over
        the n! orders, so on a 2-D torus half the packets go x-first and half y-first; this is
        what gives IVAL its average-case throughput. ``"xy"``: always dimension 0 first (a
        variant, named ``ival:order=xy``).

    Examples
    --------
    >>> t, offset = Torus(8, 2), 9                  # offset 9 = (1, 1)
    >>> len(IVAL().family(t, offset).weights) // len(IVAL("xy").family(t, offset).weights)
    2
    >>> IVAL("xy").name
    'ival:order=xy'
    """

    name = "ival"
    summary = ("improved Valiant: VAL with the second phase in the reverse of a random first "
               "dimension order, loops removed (order=xy: always x first)")
    reverse_second = True
    erase_loops = True

    def __init__(self, order: str = "random") -> None:
        if order not in ("random", "xy"):
            raise UserError(f"ival: order must be random or xy (got {order!r})")
        self.order = order
        self.dimension_symmetric = order == "random"
        if order == "xy":
            self.name = "ival:order=xy"

    def choices(self, torus: Torus, offset: int) -> Choices:
        base = super().choices(torus, offset)
        if self.order == "xy":
            return base
        # every first-phase order with the same weight; the second phase reverses it
        orders = _all_orders(torus.n)
        P, R = len(base.weights), len(orders)
        o1 = np.repeat(orders, P, axis=0)
        return Choices(np.tile(base.a, (R, 1)), np.tile(base.b, (R, 1)), o1, o1[:, ::-1].copy(),
                       np.tile(base.weights, R))

    def sample(self, torus, offsets, rng) -> Choices:
        base = super().sample(torus, offsets, rng)
        if self.order == "xy":
            return base
        o1 = _random_orders(rng, len(base.weights), torus.n)   # drawn after VAL's choices
        return Choices(base.a, base.b, o1, o1[:, ::-1].copy(), base.weights)


class QuadrantRouting(Routing):
    """Two phases inside a quadrant: first pick a direction per dimension, then a uniform
    intermediate node of the quadrant's box, each phase in a random dimension order.

    Subclasses give the direction options per dimension by :meth:`_options`: arrays
    ``sign, dist, weight`` of shape (P, n, 2) (second option may have weight 0).
    """

    def _options(self, k: int, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def choices(self, torus: Torus, offset: int) -> Choices:
        k, n = torus.k, torus.n
        sign, dist, weight = (x[0] for x in self._options(k, torus.coords[offset][None, :]))
        per_dim = [[j for j in range(2) if weight[i, j] > 0] for i in range(n)]
        quadrants = list(itertools.product(*per_dim))
        boxes = [math.prod(int(dist[i, j]) + 1 for i, j in enumerate(qd)) for qd in quadrants]
        common = math.lcm(*boxes)
        orders = _all_orders(n)
        i1, i2 = np.meshgrid(np.arange(len(orders)), np.arange(len(orders)), indexing="ij")
        o1, o2 = orders[i1.ravel()], orders[i2.ravel()]
        a_parts, b_parts, w_parts, n1, n2 = [], [], [], [], []
        for qd, box in zip(quadrants, boxes):
            s = np.array([sign[i, j] for i, j in enumerate(qd)], dtype=np.int64)
            D = np.array([dist[i, j] for i, j in enumerate(qd)], dtype=np.int64)
            wq = math.prod(int(weight[i, j]) for i, j in enumerate(qd)) * (common // box)
            q = np.indices(tuple(D + 1)).reshape(n, -1).T        # every node of the box
            rep = len(o1)
            a_parts.append(np.repeat(s * q, rep, axis=0))
            b_parts.append(np.repeat(s * (D - q), rep, axis=0))
            n1.append(np.tile(o1, (len(q), 1)))
            n2.append(np.tile(o2, (len(q), 1)))
            w_parts.append(np.full(len(q) * rep, wq, dtype=np.int64))
        return Choices(np.concatenate(a_parts), np.concatenate(b_parts),
                       np.concatenate(n1), np.concatenate(n2), np.concatenate(w_parts))

    def sample(self, torus, offsets, rng) -> Choices:
        k = torus.k
        c = torus.coords[np.asarray(offsets, dtype=np.int64)]
        P, n = c.shape
        sign, dist, weight = self._options(k, c)
        total = weight.sum(axis=2)
        pick = (rng.random((P, n)) * total >= weight[:, :, 0]).astype(np.int64)
        s = np.take_along_axis(sign, pick[:, :, None], axis=2)[:, :, 0]
        D = np.take_along_axis(dist, pick[:, :, None], axis=2)[:, :, 0]
        q = rng.integers(0, D + 1)
        return Choices(s * q, s * (D - q), _random_orders(rng, P, n), _random_orders(rng, P, n),
                       np.ones(P, dtype=np.int64))


class ROMM(QuadrantRouting):
    name = "romm"
    summary = "two-phase ROMM: uniform intermediate in the minimal quadrant, random dimension orders"
    dimension_symmetric = True
    minimal = True

    def _options(self, k, c):
        c = np.asarray(c, dtype=np.int64)
        lo, hi = _minimal_options(k, c)
        tie = lo != hi
        sign = np.stack([np.where(hi < 0, -1, 1), -np.ones_like(c)], axis=-1)
        dist = np.stack([np.abs(hi), np.abs(lo)], axis=-1)
        weight = np.stack([np.ones_like(c), tie.astype(np.int64)], axis=-1)
        return sign, dist, weight


class RLB(QuadrantRouting):
    name = "rlb"
    summary = "randomized local balance: short way with prob (k-D)/k per dimension, ROMM in the quadrant"
    dimension_symmetric = True
    threshold = False

    def _options(self, k, c):
        c = np.asarray(c, dtype=np.int64)
        delta = np.minimum(c, k - c)
        short = np.where(2 * c <= k, 1, -1)
        w_short = k - delta
        w_long = delta.copy()
        if self.threshold:
            local = 4 * delta < k
            w_short = np.where(local, k, w_short)
            w_long = np.where(local, 0, w_long)
        sign = np.stack([short, -short], axis=-1)
        dist = np.stack([delta, k - delta], axis=-1)
        weight = np.stack([w_short, w_long], axis=-1)
        return sign, dist, weight


class RLBth(RLB):
    name = "rlbth"
    summary = "RLB threshold: like RLB, but always the short way where the distance is below k/4"
    threshold = True


#: The registry of load-analysis routings: public name -> algorithm object.
ROUTINGS: dict[str, Routing] = {r.name: r for r in (DOR(), VAL(), ROMM(), RLB(), RLBth(), IVAL())}

#: Parameters a routing name may carry (``ival:order=random|xy``); the others take none.
ROUTING_PARAMS: dict[str, tuple[str, ...]] = {"ival": ("order",)}

#: Routings built from parameters or data rather than a closed form (designed by the LP of
#: :mod:`universal.design`, read from a file, mixed): public name -> (summary, factory). The
#: factory turns the parsed name into a :class:`Routing`; :mod:`universal.paths.torus.designed`
#: fills the table.
ROUTING_FACTORIES: dict[str, tuple[str, Callable[[Spec], Routing]]] = {}


def is_torus_routing(name: str) -> bool:
    """Whether ``name`` (parameters allowed) names a routing of the torus load analysis.

    Examples
    --------
    >>> is_torus_routing("ival"), is_torus_routing("mix:dor=0.5,ival=0.5"), is_torus_routing("shortest")
    (True, True, False)
    """
    if isinstance(name, Routing):
        return True
    spec = parse_spec(name)
    return spec.name in ROUTINGS or spec.name in ROUTING_FACTORIES


def get_routing(name: str | Routing) -> Routing:
    """The routing algorithm registered as ``name`` (``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``, ``ival``).

    Raises
    ------
    UserError
        For an unknown name or parameter (only ``ival`` takes one: ``order=random|xy``).

    Examples
    --------
    >>> get_routing("ival").dimension_symmetric, get_routing("ival:order=xy").dimension_symmetric
    (True, False)
    """
    if isinstance(name, Routing):
        return name
    spec = parse_spec(name)
    if spec.name in ROUTING_FACTORIES:
        return ROUTING_FACTORIES[spec.name][1](spec)
    if spec.name not in ROUTINGS:
        raise UserError(f"unknown oblivious routing {name!r} for the torus load analysis "
                        f"(known: {', '.join([*ROUTINGS, *ROUTING_FACTORIES])})")
    if spec.arg is not None:
        raise UserError(f"routing {spec.name!r} takes no argument (got {spec.arg!r})")
    check_known_params(spec, set(ROUTING_PARAMS.get(spec.name, ())))
    if spec.name == "ival" and "order" in spec.params:
        return IVAL(spec.params["order"].lower())
    return ROUTINGS[spec.name]


def sample_paths(name: str | Routing, k: int, n: int, sources, dests,
                 rng: np.random.Generator) -> list[np.ndarray]:
    """Draw one route per (source, destination) pair from routing ``name`` on ``torus:k=K,n=N``.

    The route is a node-id sequence whose first entry is the source and last the destination
    (a single node when they coincide). This is the path system the packet engine uses.

    Parameters
    ----------
    name : str or Routing
    k, n : int
    sources, dests : array-like of int
        Node ids, same length.
    rng : numpy.random.Generator

    Returns
    -------
    list of ndarray

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> [p.tolist() for p in sample_paths("dor", 5, 2, [0], [7], rng)]
    [[0, 1, 2, 7]]
    """
    routing = get_routing(name)
    torus = Torus(k, n)
    sources = np.asarray(sources, dtype=np.int64).ravel()
    dests = np.asarray(dests, dtype=np.int64).ravel()
    if sources.shape != dests.shape:
        raise UserError("sources and destinations differ in length")
    if len(sources) and (min(sources.min(), dests.min()) < 0 or max(sources.max(), dests.max()) >= torus.N):
        raise UserError(f"node id out of range for {torus.name}")
    return routing.sample_routes(torus, sources, dests, rng)
