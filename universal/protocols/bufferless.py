"""Bufferless protocols: trial-and-failure and duplication (SPEC §6; Meyer auf der Heide &
Scheideler, "Communication in Parallel Systems", §4.3 and §4.4, after Cypher, Meyer auf der
Heide, Scheideler and Vöcking).

A packet that has left its source never waits: it crosses one link per step until it arrives or
is discarded. The protocols run in rounds; this module fixes their exact timing and random draws,
which both engines (:mod:`universal.engine.bufferless` and the reference engine) follow.

Timing. Let D >= 1 be the collection's dilation. Round ``j`` (``j = 1, 2, ...``) takes the
``4D`` steps ``t0 + 1 .. t0 + 4D`` with ``t0 = (j - 1) * 4D``: a forward pass of ``2D`` steps
and a backward pass of ``2D`` steps.

* Forward pass: an active packet (or copy) with delay ``delta`` in ``{0, ..., D - 1}`` crosses the
  ``k``-th link of its path (``k = 0, 1, ...``) in step ``t0 + delta + k + 1``, unless it was
  discarded earlier in the round. It is delivered in the step it crosses its last link.
* Contention, per link and step, among the packets (copies) that want to cross it: trial-and-
  failure uses the *B-priority rule* (the B of lowest (rank, packet id) cross, the others are
  discarded); duplication uses the *B-collision rule* (if more than B copies want the link, all of
  them are discarded).
* Backward pass: the acknowledgements retrace the forward pass in reverse (backward step ``tau``
  mirrors forward step ``4D + 1 - tau`` on the reversed links), so they never collide and every
  delivered packet (copy) is acknowledged. The acknowledgement of a packet (copy) that left its
  source in step ``t0 + delta + 1`` reaches the source in step ``t0 + 4D - delta``. A packet is
  done (inactive) at the end of the first round in which it (one of its copies) was delivered.
* The routing time T is the step in which the last acknowledgement arrives; the last delivery is
  reported beside it. Packets with empty paths are delivered (and done) at step 0.

Random draws (from the run's generator, in this order):

* trial-and-failure: in round 1 (and, in the variant ``redraw=yes``, again in every round) ranks
  for all ``n`` packets ``rng.integers(0, K, size=n)`` and then delays
  ``rng.integers(0, D, size=n)``, indexed by packet id (inactive packets' draws are simply
  unused). By default they are drawn once, before the first round, as the survey defines it.
* duplication: in round ``j``, with ``c = 2**(j-1)`` copies per active packet (or
  ``min(2**(j-1), cap)`` in the variant ``copies=cap``), ``rng.integers(0, D, size=(a, c))`` where
  ``a`` is the number of active packets, rows in increasing packet id; row ``i`` holds the delays
  of the copies of the ``i``-th active packet.

Stopping. A round starts only if it ends within the step limit (else status ``"step-limit"``)
and, for duplication, only if its ``a * c`` copies are at most ``max_round_copies`` (else status
``"copy-limit"``: doubling has outgrown what the engines hold; the packets still active then are
in practice lost, since a packet's copies with equal delays collide with each other).

Counts reported: ``rounds`` (rounds run), ``discarded`` (discarded packet attempts for trial-and-
failure, discarded copies for duplication) and, for duplication, whether the copy cap was reached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import universal.protocols.hypotheses as H
from universal.protocols.buffered import PROTOCOLS, Protocol, log2
from universal.registry import Spec, check_known_params, take_int

#: Rounds a bufferless run may take by default (the step limit is ``4D`` times this).
DEFAULT_MAX_ROUNDS = 1000
#: Copies one duplication round may send in all before the run stops with ``"copy-limit"``.
DEFAULT_ROUND_COPIES = 1 << 21


def loglog2(x: float) -> float:
    """log2(log2 x), clamped to at least 1 so that the bound expressions stay defined."""
    return max(math.log2(log2(x)), 1.0)


@dataclass
class BufferlessProtocol(Protocol):
    """A protocol without link buffers, run in rounds of ``4D`` steps (see the module docstring).

    Attributes
    ----------
    max_rounds : int
        Default step limit is ``4D * max_rounds``.
    """

    max_rounds: int = DEFAULT_MAX_ROUNDS
    bufferless = True

    def round_length(self, D: int) -> int:
        """Steps per round: a forward and a backward pass of 2D steps each."""
        return 4 * max(D, 1)

    def default_step_limit(self, D: int) -> int:
        return self.round_length(D) * self.max_rounds


@dataclass
class TrialAndFailure(BufferlessProtocol):
    """Trial-and-failure: random rank and delay; the B-priority rule; retry until acknowledged.

    Survey §4.3: O((C·D^(1/B) + D·log n)/B) steps w.h.p. on simple path collections.

    Attributes
    ----------
    redraw : bool
        ``False`` (the default, the survey's protocol): every packet draws its rank and delay
        once, before the first round ("Initially, each packet ... chooses"), and keeps them; the
        lowest-ranked active packet then always gets through. ``True`` (``redraw=yes``) is a
        variant drawing fresh ranks and delays every round; the survey's bound is not claimed
        for it.
    K : int or None
        Rank range; None means ``ceil(C·D^(1/B - 1) + log2 n)`` (the survey's order, constant 1).
    """

    redraw: bool = False

    def rank_range(self, C: int, D: int, n: int, B: int = 1) -> int:  # type: ignore[override]
        if self.K is not None:
            return self.K
        return self.default_rank_range(C, D, n, B)

    def default_rank_range(self, C: int, D: int, n: int, B: int = 1) -> int:
        """K of order C·D^(1/B - 1) + log n (constant 1)."""
        return max(1, math.ceil(C * max(D, 1) ** (1 / B - 1) + log2(n)))

    def bound(self, C, D, n, B=1):
        return (C * max(D, 1) ** (1 / B) + D * log2(n)) / B


@dataclass
class Duplication(BufferlessProtocol):
    """Duplication: ``2^(j-1)`` copies per active packet in round ``j``; the B-collision rule.

    Survey §4.4: O(D·loglog n + C + log n·loglog n / loglog(C·D)) steps w.h.p. when the
    bandwidth is Θ(log(C·D)/loglog(C·D)).

    Attributes
    ----------
    max_copies : int or None
        None (the default, the survey's protocol): ``2^(j-1)`` copies in round ``j``, without
        limit. An integer caps the copies a packet sends in one round (``duplication:copies=N``),
        a variant outside the survey's theorem. Why one might: the copies of one packet follow
        the same path, so copies with the same delay cross every link in the same step and
        collide with each other; a packet has D delays and a link lets B copies through per
        step, so once a packet sends much more than B·D copies, its own copies destroy one
        another, and a packet still undelivered after about log2(B·D) + 1 rounds is almost
        certainly lost while its copies keep doubling. A cap of at most B·D keeps every round
        of a straggler a fair trial. (Collisions with other packets' copies are certain sooner:
        a link crossed by C packets' paths is crossed in at most 2D - 1 steps of a forward pass,
        so more than B·(2D - 1)/C copies per packet must collide somewhere on it.) The result
        says whether the cap was reached (``copies_capped``).
    max_round_copies : int
        A round that would send more copies in all is not started and the run ends with status
        ``"copy-limit"`` (doubling would otherwise outgrow memory).
    """

    max_copies: int | None = None
    max_round_copies: int = DEFAULT_ROUND_COPIES

    def copy_cap(self, C: int, D: int, B: int) -> int | None:
        """The cap on copies per packet and round (None: the survey's unlimited doubling)."""
        return self.max_copies

    def copies(self, round_number: int, cap: int | None) -> int:
        """Copies each active packet sends in round ``round_number`` (1-based), after the cap."""
        doubled = 2 ** min(round_number - 1, 62)
        return doubled if cap is None else min(doubled, cap)

    def bound(self, C, D, n, B=1):
        return D * loglog2(n) + C + log2(n) * loglog2(n) / loglog2(C * D)


#: Upper limits on the protocols' parameters (keep per-round arrays of a sane size).
MAX_COPIES = 1 << 12
MAX_RANK_RANGE = 1 << 24


def _yes_no(spec: Spec, key: str, default: bool) -> bool:
    from universal.errors import UserError

    if key not in spec.params:
        return default
    value = spec.params[key].lower()
    if value in ("yes", "true", "1", "on"):
        return True
    if value in ("no", "false", "0", "off"):
        return False
    raise UserError(f"{spec.name}: {key} must be yes or no, got {spec.params[key]!r}")


@PROTOCOLS.register("trial-and-failure", "bufferless: random rank and delay drawn once, lowest ranks win, losers "
                                         "retry (redraw=yes draws them every round, a variant; K=, rounds=)")
def _trial_and_failure(spec: Spec) -> Protocol:
    check_known_params(spec, {"redraw", "k", "rounds"})
    K = take_int(spec, "k", low=1, high=MAX_RANK_RANGE) if "k" in spec.params else None
    rounds = take_int(spec, "rounds", low=1, high=10**6) if "rounds" in spec.params else DEFAULT_MAX_ROUNDS
    # Survey §4.3: O((C·D^(1/B) + D·log n)/B) w.h.p. for simple path collections with B <= log n.
    return TrialAndFailure(name="trial-and-failure", summary="bufferless, B-priority rule",
                           bound_expr="(C·D^(1/B) + D·log n)/B", dynamic="rounds", K=K,
                           redraw=_yes_no(spec, "redraw", False), max_rounds=rounds, theorem="survey §4.3",
                           hypotheses=(H.SIMPLE, H.BANDWIDTH_AT_MOST_LOG_N, H.RANKS_LARGE_ENOUGH, H.DRAWS_ONCE))


@PROTOCOLS.register("duplication", "bufferless: 2^(j-1) copies per packet in round j, colliding copies die "
                                   "(copies=N caps them, a variant; rounds=)")
def _duplication(spec: Spec) -> Protocol:
    check_known_params(spec, {"copies", "rounds"})
    cap = take_int(spec, "copies", low=1, high=MAX_COPIES) if "copies" in spec.params else None
    rounds = take_int(spec, "rounds", low=1, high=10**6) if "rounds" in spec.params else DEFAULT_MAX_ROUNDS
    # Survey §4.4: O(D·loglog n + C + log n·loglog n/loglog(C·D)) w.h.p. for simple path
    # collections with bandwidth of order log(C·D)/loglog(C·D).
    return Duplication(name="duplication", summary="bufferless, B-collision rule",
                       bound_expr="D·loglog n + C + log n·loglog n/loglog(C·D)", dynamic="rounds",
                       max_copies=cap, max_rounds=rounds, theorem="survey §4.4",
                       hypotheses=(H.SIMPLE, H.BANDWIDTH_OF_ORDER_LOG_CD, H.UNCAPPED))
