"""Theorem 25's adversary: a problem with congestion C on the butterfly BF(D) on which a given
deterministic non-predictive protocol Q needs about C·D/2 steps.

Meyer auf der Heide & Scheideler, "Communication in Parallel Systems" (1996), §5, Theorem 25:
for any deterministic non-predictive protocol Q on the D-dimensional butterfly and any C there is
a routing problem with congestion C on which Q takes Ω(C·D) steps. The survey states the theorem
and refers to its source for the proof; what follows is this module's construction, which
realises the theorem's mechanism (packets made to wait for one another level after level).

The construction
----------------
Every input sends 2C packets; every link of BF(D) will carry exactly C of them, so the
congestion is C and the dilation D. The paths are fixed one level at a time while Q is simulated:

* Q is non-predictive (its decisions do not depend on where a packet goes after its current
  link), so everything Q does before the packets reach level k depends only on the paths' first
  k links. The adversary runs Q, reads when each packet arrives at its level-k node, and only then
  chooses the packet's next link.
* Every node at level k holds 2C packets (C over each in-link). The C that arrived last (ties: the
  higher packet id, which loses every tie of the engine) go to the node's child with the smaller
  row, the C first ones to the other child. The two nodes of a butterfly block share their two
  children, so the smaller-row child receives the late half of both parents: C packets arriving
  two per step. It forwards one per step, so its out-links start floor(C/2) + 1 steps after its
  parents' did; the other child's start one step after them.
* Whether a node's packets are late depends only on the row bits fixed at earlier levels, so the
  two parents of every block are equally late and the delays add up: on the row that always got
  the late half the last packet arrives at step (D - 1)(floor(C/2) + 1) + C >= C·(D + 1)/2, for
  every greedy Q (:func:`forced_steps`; the tests check it exactly).

The paths are fixed lazily, but the finished problem is an ordinary batch problem: running Q on
it again reproduces the simulated schedule exactly (checked here), and a protocol that draws fresh
random ranks sees a random mix of early and late packets on every link and finishes in about
C + D + O(log) steps. That is the theorem's point: against a deterministic rule the adversary can
choose the paths after seeing the schedule; against fresh randomness it cannot.

Which protocols qualify: fifo, farthest-to-go, nearest-to-go, longest-in-system (ties to the
lower packet id), and random-rank and growing-rank with their ranks drawn once from ``seed`` and
then FIXED (for fixed ranks they are non-predictive, as the survey notes before Theorem 25); the
ranks are those ``route --seed SEED`` draws, so route replays Q's run on a saved problem.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.protocols import Protocol, RankState, build_protocol

#: The protocols the adversary accepts: deterministic and non-predictive, or so once ranks are fixed.
NON_PREDICTIVE = ("fifo", "farthest-to-go", "nearest-to-go", "longest-in-system", "random-rank", "growing-rank")

#: The protocols that read random ranks: as Q they play with ranks drawn once and fixed.
RANKED = ("random-rank", "growing-rank")

#: Largest number of packets (2 C 2^D) the adversary builds: D + 1 runs of Q on them (about a minute
#: at the limit; 2^20 packets took four minutes and 1.4 GB).
MAX_PACKETS = 1 << 18


@dataclass
class AdversaryProblem:
    """What :func:`theorem25_adversary` built.

    Attributes
    ----------
    network : Network
        The butterfly BF(D).
    protocol : str
        Q's name as given.
    sources, dests : ndarray of int64
        The problem: packet ``i`` goes from input ``sources[i]`` to output ``dests[i]``.
    node_paths : ndarray of int64, shape (n, D + 1)
        The level path of every packet (node ids).
    congestion, dilation : int
        C and D of the paths (C as asked, D the butterfly's dimension).
    T : int
        Steps Q takes on the problem (with the fixed ranks, for the ranked protocols).
    ranks : ndarray of int64
        The ranks Q used (drawn once from the seed; only the ranked protocols read them).
    """

    network: Network
    protocol: str
    sources: np.ndarray
    dests: np.ndarray
    node_paths: np.ndarray
    congestion: int
    dilation: int
    T: int
    ranks: np.ndarray

    @property
    def size(self) -> int:
        """n, the number of packets (2 C 2^D)."""
        return len(self.sources)

    def collection(self):
        """The problem's level paths as a :class:`~universal.paths.PathCollection`."""
        return _collection(self.network, self.node_paths)

    def pairs_text(self, header: str = "") -> str:
        """The problem in the ``pairs:file=`` format: one ``source destination`` line per packet,
        nodes as printed (``level,row``), in packet order (so that ids, and with them every tie,
        stay the same when ``route --problem pairs:file=F`` reads it back)."""
        label = self.network.label_of
        lines = [f"# {line}" for line in header.splitlines()]
        lines += [f"{label(int(s))} {label(int(t))}" for s, t in zip(self.sources, self.dests)]
        return "\n".join(lines) + "\n"


def check_protocol(protocol: str) -> Protocol:
    """Q by name, refused (UserError) unless it is one the adversary can play against.

    Parameters
    ----------
    protocol : str
        A protocol name (``fifo``, ``farthest-to-go``, ``random-rank``, ...).

    Returns
    -------
    Protocol

    Examples
    --------
    >>> check_protocol("fifo").name
    'fifo'
    >>> check_protocol("random")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: the adversary needs a deterministic non-predictive protocol ...
    """
    q = build_protocol(protocol)
    if q.name not in NON_PREDICTIVE:
        raise UserError(f"the adversary needs a deterministic non-predictive protocol (one of "
                        f"{', '.join(NON_PREDICTIVE)}; ranked ones with ranks fixed by --seed), not {protocol!r}")
    return q


def theorem25_adversary(network: Network, protocol: str, congestion: int, seed: int = 0) -> AdversaryProblem:
    """Build Theorem 25's hard problem for ``protocol`` on a butterfly by simulating it.

    Parameters
    ----------
    network : Network
        BF(D), as built by ``build_network("butterfly:d=D")``.
    protocol : str
        Q: fifo, farthest-to-go, nearest-to-go, longest-in-system, or random-rank / growing-rank
        (ranks drawn once from ``seed`` and then fixed).
    congestion : int
        C >= 1; every link carries exactly C packets.
    seed : int
        Seed of Q's fixed ranks (read only by the ranked protocols): the ranks that
        ``route --seed SEED`` draws, so that route replays Q's run on the saved problem.

    Returns
    -------
    AdversaryProblem
        For every protocol listed above ``T`` is :func:`forced_steps` (C, D) >= C·(D + 1)/2.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> hard = theorem25_adversary(build_network("butterfly:d=4"), "fifo", 4)
    >>> hard.size, hard.congestion, hard.dilation, hard.T, forced_steps(4, 4)
    (128, 4, 4, 13, 13)

    References
    ----------
    Meyer auf der Heide & Scheideler, "Communication in Parallel Systems", 1996, §5, Theorem 25
    (the theorem; the construction is this module's, see its docstring).
    """
    from universal.engine import simulate

    if network.kind != "butterfly" or network.params.get("passes", 1) != 1:
        raise UserError(f"Theorem 25's adversary runs on the butterfly BF(D) (butterfly:d=D), not {network.name}")
    if congestion < 1:
        raise UserError(f"--congestion must be at least 1, not {congestion}")
    q = check_protocol(protocol)
    D = int(network.depth)
    inputs = network.inputs
    n = 2 * congestion * len(inputs)
    if n > MAX_PACKETS:
        raise UserError(f"the adversary's problem would have {n:,} packets (2 C 2^D), over the limit of "
                        f"{MAX_PACKETS:,}; use a smaller C or D")
    children = _children(network)
    # The ranks route --seed SEED would draw on the finished problem (C and D are known in advance).
    state = q.setup(protocol_rng(seed), np.full(n, D, dtype=np.int64), congestion, D)
    ranks = state.ranks
    fixed = _with_fixed_ranks(q, ranks, state.K)

    paths = np.empty((n, D + 1), dtype=np.int64)
    paths[:, 0] = np.repeat(inputs, 2 * congestion)
    arrivals = np.zeros((n, D + 1), dtype=np.int64)
    for level in range(D):
        if level > 0:
            arrivals[:, level] = _arrivals(simulate, fixed, network, paths, level, children, congestion)[:, level]
        late = _late_half(paths[:, level], arrivals[:, level], congestion)
        kids = children[paths[:, level]]  # the two children, smaller row first
        paths[:, level + 1] = np.where(late, kids[:, 0], kids[:, 1])
    result = simulate(_collection(network, paths), fixed, protocol_rng(seed), record_hops=True)
    # Q is non-predictive, so the finished problem replays the schedule the choices were made on.
    final = np.concatenate([np.zeros((n, 1), np.int64), result.hop_steps.reshape(n, D)], axis=1)
    if not np.array_equal(final[:, :D], arrivals[:, :D]):
        raise AssertionError(f"{protocol} did not replay its schedule: it is not non-predictive")
    return AdversaryProblem(network, protocol, paths[:, 0].copy(), paths[:, D].copy(), paths, congestion, D,
                            int(result.T), ranks)


def _children(network: Network) -> np.ndarray:
    """``children[v]``: the two nodes one level below ``v``, smaller id (row) first (-1 on the last level)."""
    tail, head = network.link_tail, network.link_head
    down = network.levels[head] == network.levels[tail] + 1
    tail, head = tail[down], head[down]
    order = np.lexsort((head, tail))
    children = np.full((network.num_nodes, 2), -1, dtype=np.int64)
    children[tail[order[0::2]], 0] = head[order[0::2]]
    children[tail[order[1::2]], 1] = head[order[1::2]]
    return children


def _late_half(nodes: np.ndarray, arrival: np.ndarray, congestion: int) -> np.ndarray:
    """Mask of the packets that are among the C last to arrive at their node (ties: higher id later).

    Every node holds exactly 2C packets, so after sorting by (node, arrival, id) each node's
    packets form a run of 2C, the last C of which are late.
    """
    ids = np.arange(len(nodes))
    order = np.lexsort((ids, arrival, nodes))
    late = np.zeros(len(nodes), dtype=bool)
    late[order[(np.arange(len(nodes)) % (2 * congestion)) >= congestion]] = True
    return late


def _arrivals(simulate, protocol: Protocol, network: Network, paths: np.ndarray, level: int,
              children: np.ndarray, congestion: int) -> np.ndarray:
    """Steps at which Q brings every packet to each of its nodes up to ``level``.

    The paths beyond ``level`` are completed arbitrarily, which a non-predictive Q cannot notice
    before the packets get there; the completion splits every node's 2C packets C and C by id,
    so that links keep C packets and the run stays short.
    """
    n, width = paths.shape
    full = paths.copy()
    ids = np.zeros(n, dtype=np.int64)
    for k in range(level, width - 1):
        late = _late_half(full[:, k], ids, congestion)
        full[:, k + 1] = np.where(late, children[full[:, k], 0], children[full[:, k], 1])
    result = simulate(_collection(network, full), protocol, np.random.default_rng(0), record_hops=True)
    steps = np.zeros((n, width), dtype=np.int64)
    steps[:, 1:] = result.hop_steps.reshape(n, width - 1)
    return steps


def _collection(network: Network, node_paths: np.ndarray):
    from universal.paths import PathCollection

    n, width = node_paths.shape
    links = network.links_between(node_paths[:, :-1].ravel(), node_paths[:, 1:].ravel())
    offsets = np.arange(n + 1, dtype=np.int64) * (width - 1)
    return PathCollection(network, offsets, links, node_paths[:, 0].copy(), node_paths[:, -1].copy(),
                          "dimension-order")


def _with_fixed_ranks(protocol: Protocol, ranks: np.ndarray, rank_range: int) -> Protocol:
    """A copy of ``protocol`` whose ranks are ``ranks`` in every run (its ``setup`` draws nothing).

    With fixed ranks random rank and growing rank are deterministic and non-predictive; the other
    rules never read the ranks.
    """
    fixed = copy.copy(protocol)

    def setup(rng, lengths, C, D):
        return RankState(K=rank_range, D=max(D, 1), ranks=ranks, lengths=np.asarray(lengths, dtype=np.int64))

    fixed.setup = setup  # an instance attribute: only this copy is changed
    return fixed


def protocol_rng(seed: int) -> np.random.Generator:
    """The generator a protocol draws from in ``route --seed SEED`` (the third stream of the seed,
    :func:`universal.experiment.run_experiment`), so that route replays the adversary's runs.

    >>> int(protocol_rng(3).integers(100)) == int(protocol_rng(3).integers(100))
    True
    """
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])


def fresh_rank_times(hard: AdversaryProblem, seeds: list[int], protocol: str = "random-rank") -> list[int]:
    """T of ``protocol`` with fresh random ranks, one run per seed, on the adversary's problem.

    Parameters
    ----------
    hard : AdversaryProblem
    seeds : list of int
        Seeds as ``route --seed`` takes them (the runs are those of ``route --problem pairs:file=F``).
    protocol : str
        Default random rank (ranks drawn anew from each seed).

    Returns
    -------
    list of int

    Examples
    --------
    >>> from universal.networks import build_network
    >>> hard = theorem25_adversary(build_network("butterfly:d=4"), "fifo", 4)
    >>> max(fresh_rank_times(hard, [1, 2])) < hard.T
    True
    """
    from universal.engine import simulate

    collection = hard.collection()
    return [int(simulate(collection, protocol, protocol_rng(s)).T) for s in seeds]


def forced_steps(congestion: int, depth: int) -> int:
    """(D - 1)(floor(C/2) + 1) + C: the steps this construction forces on every greedy Q above.

    Why: the C packets of a level-0 link cross it in steps 1..C. At a node of level k >= 1 two
    in-links deliver two packets per step; the late half (from the (floor(C/2) + 1)-th step of
    arrivals on) goes to one out-link, which then crosses one packet per step without a break, so
    the late links of successive levels start floor(C/2) + 1 steps apart, and the last of the C
    packets on the level-(D - 1) late link arrives at step 1 + (D - 1)(floor(C/2) + 1) + C - 1.
    This is at least C (D + 1)/2, hence at least C·D/2.

    Parameters
    ----------
    congestion : int
        C.
    depth : int
        D.

    Returns
    -------
    int

    Examples
    --------
    >>> forced_steps(8, 8), 8 * 9 / 2
    (43, 36.0)
    """
    return (depth - 1) * (congestion // 2 + 1) + congestion


__all__ = ["NON_PREDICTIVE", "RANKED", "AdversaryProblem", "check_protocol", "fresh_rank_times", "forced_steps",
           "protocol_rng", "theorem25_adversary"]
