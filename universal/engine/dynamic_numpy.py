"""The one engine's batch case for priorities that change as packets travel, in numpy: paths
fixed in advance, growing rank, FIFO, farthest-to-go, nearest-to-go, random delay and
``random``, below the compiled kernels' threshold (SPEC §2; Meyer auf der Heide & Scheideler,
"Communication in Parallel Systems", 1996, §2.1 and §4).

This is the vectorised twin of :func:`universal.engine.compiled_dynamic.route_dynamic` (the same
rules, the same results), in the manner of :mod:`universal.engine.static_numpy`: a step decides
every link's winners with one scatter of positions into a per-link scratch array and one gather
over the waiting packets kept lowest priority first.

Keys that change on moves (:func:`_route_on_move`). Only the packets that cross get new keys,
so the waiting packets stay in key order between steps and only the movers are put back. The
order is kept in two arrays, the packets' slots (their rank among the ids, highest id first)
and the links they want; what else a packet carries (its place on its path, the buffer it sits
in) is kept by slot and touched for the movers only.

* Growing rank, farthest-to-go and nearest-to-go add a constant to a mover's key (K, 1, -1), so
  the movers stay in the order they had: the packets that waited and the movers are two sorted
  runs of packed keys ``-key << bits | slot``, which a stable sort (a merge of runs, linear
  time) puts together.
* FIFO and random delay give a mover the step as its key, larger than every waiting packet's:
  the movers go to the low-priority end of the order, among themselves by id, and nothing is
  merged or packed. Random delay's packets join them in the step their delay ends, with their
  delay (that step) as the key.

Fresh keys in every step (``random``, :func:`_route_random`). The waiting packets stay in id
order and draw their keys in one ``Generator.integers`` call a step from the run's generator, as
the general engine and the reference draw them. With one winner a link and unbounded buffers a
link's winner is its smallest packed key ``key << bits | position`` (``numpy.minimum.at``); else
the packed keys are sorted into a priority order for the step, as the retired batch engine did.

:func:`universal.engine.batch.simulate` hands a batch here when its protocol is one of these,
the packed keys fit in 62 bits (:func:`fits`), the links have one virtual channel and no compiled kernel
runs; ``tests/engine/test_dynamic_numpy.py`` checks it field by field and the generator's final
state against the reference engine and the general numpy engine (:mod:`universal.engine.runs`).
"""

from __future__ import annotations

import numpy as np

from universal.engine.contention import _KEEPS_LAST, winners
from universal.engine.result import RoutingResult
from universal.engine.static_numpy import _bounded, _bounded_single
from universal.paths import PathCollection

__all__ = ["RULES", "fits", "route_dynamic_numpy"]

#: The protocol classes this module routes, and how a mover's key changes.
GROWING, FIFO, FARTHEST, NEAREST, DELAY, RANDOM = range(6)
RULES = {"GrowingRank": GROWING, "Fifo": FIFO, "FarthestToGo": FARTHEST, "NearestToGo": NEAREST,
         "RandomDelay": DELAY, "RandomEachStep": RANDOM}
#: Bits the packed keys (a key and a slot or position) may take in an int64.
_KEY_BITS = 62


def _key_bound(rule: int, protocol, collection: PathCollection) -> int:
    """An upper bound on the packed keys' key part for ``rule`` (FIFO and random delay pack
    none: their order is kept by construction)."""
    C, D, n = collection.congestion, max(collection.dilation, 1), collection.size
    K = protocol.rank_range(C, D, n)
    return {GROWING: 2 * K * D, FIFO: 0, FARTHEST: D, NEAREST: D, DELAY: 0, RANDOM: 1 << 30}[rule]


def fits(protocol, collection: PathCollection) -> bool:
    """Whether :func:`route_dynamic_numpy` takes ``protocol`` on ``collection``: a rule of
    :data:`RULES` whose keys, packed with the packet's slot, fit in 62 bits.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.protocols import build_protocol
    >>> paths = PathCollection.from_node_paths(build_network("torus:k=4,n=1"), [[0, 1, 2], [1, 2]])
    >>> fits(build_protocol("fifo"), paths), fits(build_protocol("random-rank"), paths)
    (True, False)
    """
    rule = RULES.get(type(protocol).__name__)
    if rule is None:
        return False
    bits = max(1, (collection.size - 1).bit_length())
    return _key_bound(rule, protocol, collection).bit_length() + bits <= _KEY_BITS


class _Batch:
    """What both loops share: the paths, the per-link state and the result being built."""

    def __init__(self, collection: PathCollection, bandwidth: int, buffer: int | None, record_hops: bool):
        lengths = collection.lengths
        self.ids = np.flatnonzero(lengths > 0)                 # slot -> packet id, increasing
        # per-link state by edge (half the memory) when no edge is used both ways (loads are
        # counts: both directions are used where the smaller is positive; a minimum costs half
        # what a logical and costs on small integers)
        loads = collection.link_loads
        self.shift = 0 if np.count_nonzero(np.minimum(loads[0::2], loads[1::2])) else 1
        self.num = num = collection.network.num_links >> self.shift
        self.links, offsets = collection.links, collection.offsets
        self.start = offsets[self.ids]
        self.is_last = np.zeros(len(self.links) + 1, dtype=bool)   # whether a place is its path's last hop
        self.is_last[offsets[self.ids + 1] - 1] = True
        congestion = collection.congestion
        # the smallest type that holds C keeps the occupancy in cache; the injection buffers'
        # entry (the last) runs negative and is zeroed after every update
        count_type = next(t for t in (np.int8, np.int16, np.int32, np.int64) if congestion < np.iinfo(t).max)
        self.occupancy = np.zeros(num + 1, dtype=count_type)
        self.one = count_type(1)
        position_type = np.uint16 if len(self.ids) <= 2**16 else np.int32
        self.scratch = np.empty(num, dtype=position_type)
        self.arange = np.arange(len(self.ids), dtype=position_type)
        self.bandwidth, self.buffer = bandwidth, buffer
        self.bounded = buffer is not None and buffer < congestion     # b >= C never binds
        self.marks = np.zeros(num, dtype=bool) if self.bounded and bandwidth == 1 else None
        self.single = not self.bounded and bandwidth == 1 and _KEEPS_LAST
        self.delivery = -(lengths > 0).astype(np.int64)       # -1: not yet; no hop to make: step 0
        self.hop_steps = np.full(len(self.links), -1, dtype=np.int64) if record_hops else None
        self.shortest = int(lengths[self.ids].min())
        self.hops = self.max_buffer = 0
        self.top = count_type(0)              # max_buffer, as the occupancy's type

    def first_links(self, places: np.ndarray) -> np.ndarray:
        """The (shifted) links at ``places`` of the flat path array, as int64."""
        return (self.links.take(places) >> self.shift).astype(np.int64)

    def contend(self, want: np.ndarray, final_at) -> np.ndarray:
        """Mask of the waiting packets (lowest priority first, wanting ``want``) that cross;
        ``final_at(positions)`` says which of them cross their last link."""
        if self.single:          # winners(), written out
            ranked = self.arange[:len(want)]
            self.scratch[want] = ranked
            return self.scratch.take(want) == ranked
        if not self.bounded:
            return winners(want, self.bandwidth, self.scratch, self.arange)
        if self.bandwidth == 1:
            return _bounded_single(want, final_at, self.occupancy, self.buffer, self.scratch, self.arange, self.marks)
        return _bounded(want, final_at(self.arange[:len(want)]), self.occupancy, self.bandwidth, self.buffer,
                        self.scratch)

    def cross(self, step: int, position: np.ndarray, crossed: np.ndarray, left: np.ndarray):
        """Book the crossings of a step: packets at ``position`` of the flat path array cross
        the links ``crossed``, leaving the buffers ``left``. Returns the mask of the movers
        that stay in the network (None: all do) and the links they crossed."""
        if self.hop_steps is not None:
            self.hop_steps[position] = step
        self.hops += len(position)
        occupancy, num = self.occupancy, self.num
        np.subtract.at(occupancy, left, self.one)
        # no packet is delivered before it has crossed its whole path: skip the test until then
        staying = None
        if step >= self.shortest:
            done = self.is_last.take(position)
            if np.count_nonzero(done):        # (a C call; ``any`` is a reduction, slower on small arrays)
                staying = ~done
                crossed = crossed[staying]
        occupancy[num] = 0
        if not len(crossed):
            return staying, crossed
        # Every buffer reached its current size when last entered: the largest buffer is the
        # running maximum over the buffers entered.
        if self.bandwidth == 1:
            # one packet a link: the links crossed are distinct, and a gather, an add and a
            # scatter cost less than ``ufunc.at``; comparing with the maximum so far costs less
            # than a reduction on small batches
            entered = occupancy.take(crossed)
            entered += self.one
            occupancy[crossed] = entered
            if np.count_nonzero(entered > self.top):
                self.max_buffer = int(entered.max())
                self.top = occupancy.dtype.type(self.max_buffer)
            return staying, crossed
        np.add.at(occupancy, crossed, self.one)
        # a SIMD max over small integers costs far less per entry than a gather, unless the
        # network dwarfs the movers
        top = occupancy[:num].max() if num < 32 * len(crossed) else occupancy.take(crossed).max()
        if top > self.max_buffer:
            self.max_buffer = int(top)
        return staying, crossed

    def result(self, status: str, step: int, waiting: np.ndarray, places: np.ndarray) -> RoutingResult:
        """The run's result; ``waiting`` (ids) and ``places`` the packets still waiting."""
        blocked = full_links = None
        if status == "deadlock":
            blocked = np.sort(waiting)
            full_links = np.unique(self.links.take(places)).astype(np.int64)
        return RoutingResult(delivery=self.delivery, status=status, steps=int(step), max_buffer=int(self.max_buffer),
                             hops=int(self.hops), hop_steps=self.hop_steps, buffer=self.buffer,
                             deadlock_step=int(step) if status == "deadlock" else None, blocked=blocked,
                             full_links=full_links)


def _initial_keys(rule: int, drawn, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The keys of the packets ``ids`` before their first move, for the rules whose keys grow by
    a constant (the protocols' ``keys`` with no hop made)."""
    if rule == GROWING:
        return drawn.ranks.astype(np.int64).take(ids) * int(drawn.D)
    if rule == FARTHEST:
        return int(drawn.D) - lengths.take(ids)
    return lengths.take(ids).astype(np.int64)           # nearest-to-go


def _route_on_move(collection: PathCollection, protocol, drawn, rule: int, batch: _Batch, limit: int) -> RoutingResult:
    """The step loop for keys that change only when their packet moves (see the module docstring).

    The slots number the packets by *decreasing* id, so that the lowest priority comes first in
    increasing order of ``-key << bits | slot`` (a larger key, then a larger id): the packed keys
    are kept contiguous in that order (gathers from a reversed view cost twice as much on large
    batches) and their low bits are the slots."""
    links, shift = batch.links, batch.shift
    ids = batch.ids[::-1].copy()                 # slot -> packet id, decreasing
    n = len(ids)
    bits = max(1, (n - 1).bit_length())
    mask = np.int64((1 << bits) - 1)
    release = protocol.release_steps(drawn)
    release = None if release is None else np.asarray(release, dtype=np.int64)
    # by slot: the place of the next hop in the flat path array, the buffer it sits in, the link it wants
    cur = batch.start[::-1].copy()
    sits = np.full(n, batch.num, dtype=np.int64)
    want_of = batch.first_links(cur)
    slots = np.arange(n, dtype=np.int64)
    now = slots if release is None else np.flatnonzero(release.take(ids) == 0)
    fresh = rule in (FIFO, DELAY)
    keys = None
    if fresh:       # every key 0: by slot
        order = now
    else:
        keys = -_initial_keys(rule, drawn, ids, collection.lengths) << bits | slots
        keys.sort()
        order = keys & mask                   # the waiting slots, lowest priority first
    want = want_of.take(order)
    # random delay: the other slots, by the step at the end of which they join (then by slot)
    joining = slots[:0]
    joins = joining
    if release is not None:
        later = np.setdiff1d(slots, now, assume_unique=True)
        joining = later[np.argsort(release.take(ids.take(later)), kind="stable")]
        joins = release.take(ids.take(joining))
    joined = 0
    # numpy scalars of the arrays' types: a Python int in an operation costs more than the
    # operation itself on small arrays
    delta = np.int64({GROWING: int(drawn.K), FARTHEST: 1, NEAREST: -1}.get(rule, 0) << bits)
    one = links.dtype.type(1)
    link_shift = links.dtype.type(shift)
    is_last = batch.is_last
    single, scratch, arange = batch.single, batch.scratch, batch.arange
    marks = np.zeros(n, dtype=bool)

    def final_at(positions: np.ndarray) -> np.ndarray:
        return is_last.take(cur.take(order.take(positions)))

    step = 0
    status = "delivered"
    while len(order) or joined < len(joining):
        if step >= limit:
            status = "step-limit"
            break
        if not len(order):        # only delayed packets left: nothing moves until the next joins
            if joins[joined] > limit:
                step = limit
                status = "step-limit"
                break
            step = int(joins[joined])
            order, joined = _put_first(joining, joins, joined, step, slots[:0], marks, order)
            want = want_of.take(order)
            continue
        step += 1
        if single:          # batch.contend(), written out: on small batches the calls are the cost
            ranked = arange[:len(want)]
            scratch[want] = ranked
            win = scratch.take(want) == ranked
        else:
            win = batch.contend(want, final_at)
        at = win.nonzero()[0]
        if not len(at) and joined == len(joining):
            status = "deadlock"
            break
        movers = order.take(at)
        position = cur.take(movers)
        staying, crossed = batch.cross(step, position, want.take(at), sits.take(movers))
        if not fresh:
            moved_keys = keys.take(at)
        if staying is not None:
            batch.delivery[ids.take(movers[~staying])] = step
            movers, position = movers[staying], position[staying]
            if not fresh:
                moved_keys = moved_keys[staying]
        position += one
        cur[movers] = position
        sits[movers] = crossed
        upcoming = links.take(position)
        if shift:
            upcoming >>= link_shift
        want_of[movers] = upcoming
        stay = (~win).nonzero()[0]         # an index array: gathers beat boolean compression
        if fresh:
            # the movers' key is the step, above every waiting key: they go first (lowest
            # priority), among themselves by slot
            order, joined = _put_first(joining, joins, joined, step, movers, marks, order.take(stay))
            want = want_of.take(order)
        else:
            # a constant added to the movers' keys keeps their order: two sorted runs to merge
            moved_keys -= delta
            keys = np.concatenate((keys.take(stay), moved_keys))
            keys.sort(kind="stable")        # a merge of the two runs, in place
            order = keys & mask
            want = want_of.take(order)
    return batch.result(status, step, ids.take(order), cur.take(order))


def _put_first(joining: np.ndarray, joins: np.ndarray, joined: int, step: int, movers: np.ndarray,
               marks: np.ndarray, order: np.ndarray):
    """FIFO and random delay: the ``order`` (slots, lowest priority first) of the packets that
    waited, with the step's ``movers`` (slots) put first, and for random delay the packets whose
    delay ends with the step (the next of ``joining``, by ``joins``): their key is the step,
    larger than every other's. They are ordered by slot, with one pass over a mark a slot (the
    movers come in any order). Returns the order and the new count of joined packets."""
    marks[movers] = True
    if joined < len(joining) and joins[joined] == step:
        end = joined + int(np.searchsorted(joins[joined:], step, side="right"))
        marks[joining[joined:end]] = True
        joined = end
    first = marks.nonzero()[0]
    marks[first] = False
    return np.concatenate((first, order)), joined


def _route_random(protocol, rng: np.random.Generator, batch: _Batch, limit: int) -> RoutingResult:
    """The step loop for ``random`` (see the module docstring)."""
    ids, links, shift, is_last = batch.ids, batch.links, batch.shift, batch.is_last
    n = len(ids)
    bits = max(1, (n - 1).bit_length())
    mask = np.int64((1 << bits) - 1)
    bits = np.int64(bits)             # numpy scalars: a Python int costs more than the operation on small arrays
    one, link_shift = links.dtype.type(1), links.dtype.type(shift)
    # the waiting packets in id order: ids, the place of the next hop, the link it wants, the buffer it sits in
    waiting = ids.copy()
    cur = batch.start.copy()
    want = batch.first_links(cur)
    sits = np.full(n, batch.num, dtype=np.int64)
    places = np.arange(n, dtype=np.int64)
    best = np.empty(batch.num, dtype=np.int64) if batch.single else None
    worst = np.iinfo(np.int64).max
    step = 0
    status = "delivered"
    while len(cur):
        if step >= limit:
            status = "step-limit"
            break
        step += 1
        fresh = protocol.draw_step_keys(rng, len(cur))
        packed = fresh << bits | places[:len(cur)]       # distinct: ties go to the lower id
        if best is not None:
            # a link's winner is its smallest packed key
            best[want] = worst
            np.minimum.at(best, want, packed)
            at = (best.take(want) == packed).nonzero()[0]
        else:
            packed.sort()                                 # (in place: np.sort would copy)
            rank = packed[::-1] & mask                    # the positions, lowest priority first

            def final_at(positions: np.ndarray) -> np.ndarray:
                return is_last.take(cur.take(rank.take(positions)))

            at = np.sort(rank[batch.contend(want.take(rank), final_at)])
        if not len(at):
            status = "deadlock"
            break
        position = cur.take(at)
        crossed = want.take(at)
        staying, _ = batch.cross(step, position, crossed, sits.take(at))
        position += one
        cur[at] = position
        upcoming = links.take(position, mode="clip")       # a last link's successor is cut off below
        if shift:
            upcoming >>= link_shift
        want[at] = upcoming
        sits[at] = crossed
        if staying is not None:
            finished = at[~staying]
            batch.delivery[waiting.take(finished)] = step
            keep = np.ones(len(cur), dtype=bool)
            keep[finished] = False
            keep = keep.nonzero()[0]
            waiting, cur, want, sits = waiting.take(keep), cur.take(keep), want.take(keep), sits.take(keep)
    return batch.result(status, step, waiting, cur)


def route_dynamic_numpy(collection: PathCollection, protocol, drawn, rng: np.random.Generator, *, bandwidth: int,
                        buffer: int | None, limit: int, record_hops: bool) -> RoutingResult:
    """Route a batch on its fixed paths with keys that change as packets travel, vectorised in numpy.

    Parameters
    ----------
    collection : PathCollection
        The paths; packet ``i`` follows path ``i``. At least one path is not empty.
    protocol : Protocol
        Growing rank, FIFO, farthest-to-go, nearest-to-go, random delay (keys that change when
        their packet moves) or random (fresh keys every step); :func:`fits` holds.
    drawn : RankState
        What ``protocol.setup`` drew (ranks, delays), as the other engines draw it.
    rng : numpy.random.Generator
        The generator ``drawn`` came from: ``random`` draws its keys from it.
    bandwidth : int
        B >= 1.
    buffer : int or None
        The link-buffer size b >= 1 (None: unbounded).
    limit : int
        The step limit (> 0).
    record_hops : bool
        Also return the step of every hop.

    Returns
    -------
    RoutingResult
        As :func:`universal.engine.batch.simulate` returns it.

    Examples
    --------
    FIFO and random on a ring of four nodes whose links buffer one packet each: every packet
    goes three hops clockwise, and the four of them lock.

    >>> from universal.networks import build_network
    >>> from universal.protocols import build_protocol
    >>> paths = PathCollection.from_node_paths(build_network("torus:k=4,n=1"),
    ...                                        [[i, (i + 1) % 4, (i + 2) % 4, (i + 3) % 4] for i in range(4)])
    >>> for name in ("fifo", "random"):
    ...     rng = np.random.default_rng(0)
    ...     p = build_protocol(name)
    ...     drawn = p.setup(rng, paths.lengths, paths.congestion, paths.dilation)
    ...     res = route_dynamic_numpy(paths, p, drawn, rng, bandwidth=1, buffer=1, limit=100, record_hops=False)
    ...     print(name, res.status, res.steps, res.blocked.tolist())
    fifo deadlock 2 [0, 1, 2, 3]
    random deadlock 2 [0, 1, 2, 3]

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §2.1 and §4.
    """
    rule = RULES[type(protocol).__name__]
    batch = _Batch(collection, bandwidth, buffer, record_hops)
    if rule == RANDOM:
        return _route_random(protocol, rng, batch, limit)
    return _route_on_move(collection, protocol, drawn, rule, batch, limit)
