"""Contention-resolution rules for store-and-forward routing with link buffers.

Every rule is a priority: when more than B packets want one link in a step, the B packets
with the smallest key cross, ties going to the lowest packet id (Meyer auf der Heide &
Scheideler, "Communication in Parallel Systems", §4.1-4.2). A key is an integer computed from
what a packet knows at the start of the step: its random rank, the hops it has made, the step
it arrived at its current buffer, its path length.

Each protocol gives the key twice: vectorized (``keys``, for the fast engine) and one packet
at a time in plain Python (``reference_key``, for the reference engine). ``dynamic`` says when
keys change: ``"static"`` never, ``"on-move"`` only for packets that just crossed a link,
``"per-step"`` every step (fresh random keys).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import universal.protocols.hypotheses as H
from universal.errors import UserError
from universal.registry import Registry, Spec, check_known_params, take_int


@dataclass
class RankState:
    """What a protocol draws or fixes before the first step.

    Attributes
    ----------
    K : int
        Size of the rank range [K] (0 for rules without ranks).
    D : int
        Dilation of the collection (the growing-rank increment is K/D; keys are scaled by D).
    ranks : ndarray of int64
        The initial rank of every packet.
    lengths : ndarray of int64
        Path lengths.
    """

    K: int
    D: int
    ranks: np.ndarray
    lengths: np.ndarray


def log2(x: float) -> float:
    """log base 2, clamped so that bound expressions stay defined for tiny instances."""
    return math.log2(max(x, 2.0))


@dataclass
class Protocol:
    """A buffered protocol: a priority key, when it changes, and its theorem's bound.

    Subclasses override :meth:`keys` and :meth:`reference_key`.

    Attributes
    ----------
    name : str
    summary : str
    bound_expr : str or None
        The survey's bound, as printed in tables.
    dynamic : str
        ``"static"``, ``"on-move"`` or ``"per-step"``.
    K : int or None
        Rank range; None means the default ``C + D + ceil(log2 n)``.
    theorem : str or None
        Where the bound is proved (e.g. ``"survey §4.1"``).
    hypotheses : tuple of Hypothesis
        What that theorem assumes (:mod:`universal.protocols.hypotheses`); a run shows the bound
        only where all of them hold.
    """

    name: str = ""
    summary: str = ""
    bound_expr: str | None = None
    dynamic: str = "static"
    K: int | None = None
    extra: dict = field(default_factory=dict)
    theorem: str | None = None
    hypotheses: tuple = ()

    #: Bufferless protocols (trial-and-failure, duplication) run on their own engine.
    bufferless = False

    def bound(self, C: int, D: int, n: int, B: int = 1) -> float | None:
        """The value of ``bound_expr`` for a collection (None for the greedy baselines)."""
        return None

    def rank_range(self, C: int, D: int, n: int) -> int:
        """K: as given, else :meth:`default_rank_range`."""
        if self.K is not None:
            return self.K
        return self.default_rank_range(C, D, n)

    def default_rank_range(self, C: int, D: int, n: int, B: int = 1) -> int:
        """K of order C + D + log n (the survey's "sufficiently large" constant is 1 here)."""
        return C + D + math.ceil(log2(n))

    def setup(self, rng: np.random.Generator, lengths: np.ndarray, C: int, D: int) -> RankState:
        """Draw the initial ranks. Every protocol draws them, so all consume the same randomness."""
        n = len(lengths)
        K = self.rank_range(C, D, n)
        ranks = rng.integers(0, max(K, 1), size=n, dtype=np.int64)
        return RankState(K=K, D=max(D, 1), ranks=ranks, lengths=np.asarray(lengths, dtype=np.int64))

    def max_key(self, state: RankState) -> int:
        """An upper bound on every key this protocol can produce (to rule out int64 overflow)."""
        return int(state.lengths.sum()) + state.K * state.D * 2 + RANDOM_KEY_RANGE

    def release_steps(self, state: RankState) -> np.ndarray | None:
        """The step after which each packet may first move (None: all move from step 1 on)."""
        return None

    def keys(self, state: RankState, packets: np.ndarray, hops: np.ndarray, arrival: np.ndarray) -> np.ndarray:
        """Non-negative int64 keys of ``packets`` given their hops made and arrival steps."""
        raise NotImplementedError

    def reference_key(self, state: RankState, packet: int, hops: int, arrival: int) -> int:
        """The same key for one packet, written plainly."""
        raise NotImplementedError


class RandomRank(Protocol):
    """Random rank: a rank drawn uniformly from [K] once; the lowest rank wins.

    Bound ``C + D + log n`` (Theorem 15 context, §4.1; O(C + D + log n) w.h.p. on leveled
    collections).
    """

    def bound(self, C, D, n, B=1):
        return C + D + log2(n)

    def keys(self, state, packets, hops, arrival):
        return state.ranks[packets]

    def reference_key(self, state, packet, hops, arrival):
        return int(state.ranks[packet])


class GrowingRank(Protocol):
    """Growing rank: as random rank, but a packet's rank grows by K/D every time it crosses a link.

    Keys are scaled by D to stay integer: ``rank * D + hops * K`` (§4.2, Theorem 16).
    """

    def bound(self, C, D, n, B=1):
        return C + D + log2(n)

    def keys(self, state, packets, hops, arrival):
        return state.ranks[packets] * state.D + hops * state.K

    def reference_key(self, state, packet, hops, arrival):
        # rank + hops * K / D, compared exactly after multiplying by D.
        return int(state.ranks[packet]) * state.D + hops * state.K


class Fifo(Protocol):
    """First in, first out: the packet that arrived at its buffer earliest (all start at step 0)."""

    def keys(self, state, packets, hops, arrival):
        return arrival

    def reference_key(self, state, packet, hops, arrival):
        return arrival


class FarthestToGo(Protocol):
    """Farthest to go: the packet with the most hops still ahead."""

    def keys(self, state, packets, hops, arrival):
        return state.D - (state.lengths[packets] - hops)

    def reference_key(self, state, packet, hops, arrival):
        return state.D - (int(state.lengths[packet]) - hops)


class NearestToGo(Protocol):
    """Nearest to go: the packet with the fewest hops still ahead."""

    def keys(self, state, packets, hops, arrival):
        return state.lengths[packets] - hops

    def reference_key(self, state, packet, hops, arrival):
        return int(state.lengths[packet]) - hops


class LongestInSystem(Protocol):
    """Longest in system: the oldest packet. All packets are injected at step 0 here, so the
    rule reduces to a fixed priority by packet id; it differs once injection times differ."""

    def keys(self, state, packets, hops, arrival):
        return np.zeros(len(packets), dtype=np.int64)

    def reference_key(self, state, packet, hops, arrival):
        return 0


#: Range of the fresh keys of the ``random`` rule.
RANDOM_KEY_RANGE = 1 << 30


class RandomEachStep(Protocol):
    """Random: every step each waiting packet draws a fresh key from [2^30]; the lowest wins.

    The keys of a step are drawn in one call, in increasing packet id order of the waiting
    packets, so that both engines consume the generator identically.
    """

    def draw_step_keys(self, rng: np.random.Generator, count: int) -> np.ndarray:
        return rng.integers(0, RANDOM_KEY_RANGE, size=count, dtype=np.int64)

    def keys(self, state, packets, hops, arrival):
        raise TypeError("the random rule draws its keys with draw_step_keys")

    def reference_key(self, state, packet, hops, arrival):
        raise TypeError("the random rule draws its keys with draw_step_keys")


class RandomDelay(Protocol):
    """Random delay: every packet waits a delay drawn uniformly from [0, alpha * C) and then moves
    greedily, first in first out on conflicts (a packet's arrival at its injection buffer is the
    end of its delay).

    This is the first step of Leighton, Maggs & Rao's O(C + D) schedule ("Packet routing and
    job-shop scheduling in O(congestion + dilation) steps", 1994), behind Theorem 14 of Meyer auf
    der Heide & Scheideler, "Communication in Parallel Systems", 1995: the delays spread every
    link's C packets over about alpha * C + D steps. The delays are the ranks of the
    :class:`RankState` (K = ceil(alpha * C) values); the greedy FIFO phase carries no bound of
    its own, so none is printed.

    Examples
    --------
    >>> p = RandomDelay(alpha=0.5)
    >>> state = p.setup(np.random.default_rng(0), np.array([3, 3, 3]), C=6, D=3)
    >>> state.K, p.release_steps(state).tolist()
    (3, [2, 1, 1])
    """

    def __init__(self, alpha: float = 1.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.alpha = alpha

    def rank_range(self, C, D, n):
        return max(1, math.ceil(self.alpha * C))

    def release_steps(self, state):
        return state.ranks

    def keys(self, state, packets, hops, arrival):
        # FIFO; a packet that has not moved yet arrived at its injection buffer when its delay ended.
        return np.where(hops == 0, state.ranks[packets], arrival)

    def reference_key(self, state, packet, hops, arrival):
        return int(state.ranks[packet]) if hops == 0 else arrival


PROTOCOLS: Registry[Protocol] = Registry("protocol")

#: Largest rank range K a user may ask for.
MAX_RANK_RANGE = 1 << 24


def _register(name: str, cls: type[Protocol], summary: str, bound_expr: str | None, dynamic: str,
              takes_k: bool = False, theorem: str | None = None, hypotheses: tuple = ()) -> None:
    @PROTOCOLS.register(name, summary)
    def factory(spec: Spec) -> Protocol:
        check_known_params(spec, {"k"} if takes_k else set())
        # K is capped so that engine sort keys (key * n + id, in int64) cannot overflow.
        K = take_int(spec, "k", low=1, high=MAX_RANK_RANGE) if "k" in spec.params else None
        return cls(name=name, summary=summary, bound_expr=bound_expr, dynamic=dynamic, K=K, theorem=theorem,
                   hypotheses=hypotheses)


# Survey §4.1: O(C + D + log n) w.h.p. for leveled path collections; the protocol (and the
# bound here) is the one for unbounded buffers, with bandwidth 1 (the survey's default).
_register("random-rank", RandomRank, "lowest random rank from [K] wins (K = C + D + log n unless K= is given)",
          "C + D + log n", "static", takes_k=True, theorem="survey §4.1",
          hypotheses=(H.LEVELED, H.UNBOUNDED_BUFFERS, H.UNIT_BANDWIDTH, H.RANKS_LARGE_ENOUGH))
# Survey §4.2 (Theorem 16 for path systems): O(C + D + log n) w.h.p. for shortcut-free path
# collections, with buffers of size C.
_register("growing-rank", GrowingRank, "random rank that grows by K/D at every hop",
          "C + D + log n", "on-move", takes_k=True, theorem="survey §4.2",
          hypotheses=(H.SHORTCUT_FREE, H.BUFFERS_OF_SIZE_C, H.UNIT_BANDWIDTH, H.RANKS_LARGE_ENOUGH))
_register("fifo", Fifo, "first to arrive at the buffer wins", None, "on-move")
_register("farthest-to-go", FarthestToGo, "most hops left wins", None, "on-move")
_register("nearest-to-go", NearestToGo, "fewest hops left wins", None, "on-move")
_register("longest-in-system", LongestInSystem, "oldest packet wins (all injected at step 0: by id)", None, "static")
_register("random", RandomEachStep, "a fresh random key every step", None, "per-step")


#: Largest alpha of random-delay (delays beyond 64 C only add idle steps).
MAX_ALPHA = 64.0


@PROTOCOLS.register("random-delay", "wait a random delay from [0, alpha*C), then greedy FIFO (alpha=1 unless given)")
def _random_delay(spec: Spec) -> Protocol:
    check_known_params(spec, {"alpha"})
    raw = spec.params.get("alpha", "1")
    try:
        alpha = float(raw)
    except ValueError:
        raise UserError(f"parameter alpha={raw!r} in {spec.text!r} is not a number") from None
    if not 0 < alpha <= MAX_ALPHA:
        raise UserError(f"parameter alpha={raw} in {spec.text!r} is out of range (0 < alpha <= {MAX_ALPHA:g})")
    return RandomDelay(alpha=alpha, name="random-delay", summary=PROTOCOLS.entry("random-delay").summary,
                       dynamic="on-move")
