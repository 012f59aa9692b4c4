"""Anchor benchmark: the project's random rank against a plain numba engine on the same paths.

The project's side is :func:`universal.engine.simulate_one`, the one engine's batch front end,
which runs random rank on its compiled kernel (:mod:`universal.engine.compiled`) once numba has
started in the process (a warm-up run before timing) and the batch has at least
``universal.engine.batch.COMPILED_MIN_HOPS_WARM`` packet-hops.

Usage::

    python benchmarks/numba_anchor.py                 # Valiant 4-relations on BF(d), d = 10, 14, 16
    python benchmarks/numba_anchor.py --d 10 --repeat 3
    python benchmarks/numba_anchor.py --anchor light  # only the lighter anchor (default: both)

The anchor is the straightforward compiled engine one would write for this one protocol (issue
25 measures the project against it): a per-step loop over the waiting packets, written from the
model (SPEC §2) and nothing else: synchronous steps, unbounded buffers, bandwidth B = 1, and on
every link the waiting packet with the lowest (rank, packet id) crosses. Its ranks are the ones
the project's engine draws (``RandomRank.setup`` on the same seed), so both must deliver every
packet at the same step; the script checks that (T, every delivery step and the largest buffer)
before it prints packet-hops per second of both, CPU time of this process, best of interleaved
rounds (a round calls each side several times in a row on small instances, :data:`CALL_HOPS`,
and counts the mean), and the ratio project / anchor (at least 1 means the project is as fast
per hop as the anchor).

Two anchors, each with a ratio column (``--anchor both``, the default, times the project and
both in the same rounds). The same-work anchor does the project's work: from the paths and a
seed to every packet's delivery step, T, the hops and the largest buffer. The project draws the ranks (``RandomRank.setup``), sorts the
packets by priority once, keeps every buffer's occupancy for the largest buffer and builds its
result; the anchor draws the same ranks inside its timed call (``project_ranks``), builds its
keys and per-link arrays, and keeps the buffers' occupancy too (before commit 083a36f it did
neither, and so was timed on less work: without the occupancy it ran BF(10) in about half the
time). The lighter anchor (``--anchor light``) is that earlier loop, :func:`random_rank_steps_light`:
its ranks are drawn before the timer starts and it keeps no occupancy, so it reports no largest
buffer (the check compares T, the delivery steps and the hops).

numba is not a dependency of the project (``pip install numba`` to run the anchor); without it
the script says so in one line and stops. The kernel runs as plain Python too, which is how
``tests/engine/test_numba_anchor.py`` checks it against the reference engine on small cases.
Compilation is done on a small instance before anything is timed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

# run from a checkout too (python benchmarks/NAME.py): the repository's package comes first
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from universal.engine import simulate_one as simulate  # noqa: E402
from universal.networks import butterfly  # noqa: E402
from universal.paths import route_paths  # noqa: E402
from universal.protocols import build_protocol  # noqa: E402
from universal.workloads import build_problem  # noqa: E402

#: A round calls each side ``max(1, round(CALL_HOPS / hops))`` times in a row and counts the mean.
CALL_HOPS = 4_000_000


def random_rank_steps(offsets: np.ndarray, links: np.ndarray, keys: np.ndarray,
                      best: np.ndarray, occupancy: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Route fixed paths with random rank, B = 1 and unbounded buffers; plain loops.

    Parameters
    ----------
    offsets : ndarray of int64, shape (n + 1,)
        Path ``i`` is ``links[offsets[i]:offsets[i + 1]]``.
    links : ndarray of int
        Link ids, each below ``len(best)``.
    keys : ndarray of int, shape (n,)
        ``rank * n + i`` for packet ``i`` (distinct; on a link the lowest crosses, which is the
        lowest (rank, id)), in the type of ``best``.
    best : ndarray of int, shape (num_links,)
        Scratch, every entry the largest value of its type: one integer per link, so as small a
        type as holds the keys (a hundred million links on BF(20)).
    occupancy : ndarray of int, shape (num_links,)
        All zero: the packets in every link's buffer (those that crossed the link and wait at
        its head for their next one), kept for the largest buffer, which the project reports too.

    Returns
    -------
    delivery : ndarray of int64
        The step at which every packet arrives (0 for an empty path).
    hops : int
        Links crossed in all.
    max_buffer : int
        The largest number of packets a link's buffer held at the end of a step.

    Examples
    --------
    >>> offsets = np.array([0, 2, 4]); links = np.array([0, 1, 0, 2])   # both paths start on link 0
    >>> keys = np.array([5, 3]) * 2 + np.arange(2)                      # ranks 5 and 3
    >>> delivery, hops, top = random_rank_steps(offsets, links, keys, np.full(3, 2**62), np.zeros(3, np.int64))
    >>> delivery.tolist(), hops, int(top)                               # rank 3 goes first
    ([3, 2], 4, 1)
    """
    n = len(offsets) - 1
    delivery = np.zeros(n, dtype=np.int64)
    empty = best[0]
    # the waiting packets, one slot each, packed at the front in id order: the per-step loops
    # then read the slots in sequence and touch memory at random only for the link's best key
    ids = np.empty(n, dtype=np.int64)
    key = np.empty(n, dtype=keys.dtype)
    at = np.empty(n, dtype=np.int64)                    # position of the next link in `links`
    end = np.empty(n, dtype=np.int64)
    link = np.empty(n, dtype=links.dtype)               # the next link itself
    sits = np.empty(n, dtype=links.dtype)               # the buffer the packet is in (-1: its source)
    entered = np.empty(n, dtype=links.dtype)            # the buffers entered in a step
    count = 0
    for i in range(n):
        if offsets[i + 1] > offsets[i]:
            ids[count], key[count] = i, keys[i]
            at[count], end[count], link[count] = offsets[i], offsets[i + 1], links[offsets[i]]
            sits[count] = -1
            count += 1
    step = 0
    hops = 0
    max_buffer = 0
    while count > 0:
        step += 1
        for w in range(count):                          # every link elects its lowest key
            best[link[w]] = min(best[link[w]], key[w])
        kept = 0
        filled = 0
        for w in range(count):                          # winners cross; the rest keep their slots
            next_link, position = link[w], at[w]
            if best[next_link] == key[w]:
                best[next_link] = empty                 # clean for the next step
                hops += 1
                if sits[w] >= 0:
                    occupancy[sits[w]] -= 1
                position += 1
                if position == end[w]:
                    delivery[ids[w]] = step
                    continue
                occupancy[next_link] += 1
                entered[filled] = next_link
                filled += 1
                ids[kept], key[kept], at[kept], end[kept] = ids[w], key[w], position, end[w]
                link[kept], sits[kept] = links[position], next_link
                kept += 1
                continue
            ids[kept], key[kept], at[kept], end[kept], link[kept], sits[kept] = (
                ids[w], key[w], position, end[w], next_link, sits[w])
            kept += 1
        for i in range(filled):                         # a buffer's size at the end of the step
            max_buffer = max(max_buffer, occupancy[entered[i]])
        count = kept
    return delivery, hops, max_buffer


def random_rank_steps_light(offsets: np.ndarray, links: np.ndarray, keys: np.ndarray,
                            best: np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`random_rank_steps` without the buffers' occupancy: the lighter anchor.

    The same loop with less work (no largest buffer), as the script timed it up to commit
    65e7583: its ranks are given (drawn outside the timed call, see :func:`light_route`).

    Parameters
    ----------
    offsets, links, keys, best : ndarray
        As for :func:`random_rank_steps`.

    Returns
    -------
    delivery : ndarray of int64
        The step at which every packet arrives (0 for an empty path).
    hops : int
        Links crossed in all.

    Examples
    --------
    >>> offsets = np.array([0, 2, 4]); links = np.array([0, 1, 0, 2])   # both paths start on link 0
    >>> keys = np.array([5, 3]) * 2 + np.arange(2)                      # ranks 5 and 3
    >>> delivery, hops = random_rank_steps_light(offsets, links, keys, np.full(3, 2**62))
    >>> delivery.tolist(), hops                                         # rank 3 goes first
    ([3, 2], 4)
    """
    n = len(offsets) - 1
    delivery = np.zeros(n, dtype=np.int64)
    empty = best[0]
    ids = np.empty(n, dtype=np.int64)
    key = np.empty(n, dtype=keys.dtype)
    at = np.empty(n, dtype=np.int64)                    # position of the next link in `links`
    end = np.empty(n, dtype=np.int64)
    link = np.empty(n, dtype=links.dtype)               # the next link itself
    count = 0
    for i in range(n):
        if offsets[i + 1] > offsets[i]:
            ids[count], key[count] = i, keys[i]
            at[count], end[count], link[count] = offsets[i], offsets[i + 1], links[offsets[i]]
            count += 1
    step = 0
    hops = 0
    while count > 0:
        step += 1
        for w in range(count):                          # every link elects its lowest key
            best[link[w]] = min(best[link[w]], key[w])
        kept = 0
        for w in range(count):                          # winners cross; the rest keep their slots
            next_link, position = link[w], at[w]
            if best[next_link] == key[w]:
                best[next_link] = empty                 # clean for the next step
                hops += 1
                position += 1
                if position == end[w]:
                    delivery[ids[w]] = step
                    continue
                next_link = links[position]
            ids[kept], key[kept], at[kept], end[kept], link[kept] = ids[w], key[w], position, end[w], next_link
            kept += 1
        count = kept
    return delivery, hops


def _keys(ranks: np.ndarray, n: int) -> tuple[np.ndarray, type]:
    """``rank * n + id`` per packet, in the smallest of int32 and int64 that holds them."""
    wide = np.int32 if (int(ranks.max(initial=0)) + 1) * max(n, 1) <= np.iinfo(np.int32).max else np.int64
    return (ranks.astype(np.int64) * n + np.arange(n)).astype(wide), wide


def light_route(kernel, paths, ranks: np.ndarray) -> tuple[np.ndarray, int]:
    """Run ``kernel`` (:func:`random_rank_steps_light`, compiled or not) on a path collection
    with the given ``ranks`` (those random rank draws, :func:`project_ranks`, drawn beforehand).

    Returns
    -------
    delivery : ndarray of int64
    hops : int
    """
    keys, wide = _keys(ranks, paths.size)
    best = np.full(paths.network.num_links, np.iinfo(wide).max, dtype=wide)
    return kernel(paths.offsets, paths.links, keys, best)


def anchor_route(kernel, paths, seed: int) -> tuple[np.ndarray, int, int]:
    """Run ``kernel`` (:func:`random_rank_steps`, compiled or not) on a path collection with the
    ranks random rank draws from ``default_rng(seed)``: from the same input to the same output
    as the project's ``simulate(paths, "random-rank", default_rng(seed))``.

    Returns
    -------
    delivery : ndarray of int64
    hops : int
    max_buffer : int
    """
    keys, wide = _keys(project_ranks(paths, seed), paths.size)
    best = np.full(paths.network.num_links, np.iinfo(wide).max, dtype=wide)
    # a buffer holds at most the C packets that cross its link
    occupancy = np.zeros(paths.network.num_links, dtype=np.int8 if paths.congestion < 127 else np.int32)
    return kernel(paths.offsets, paths.links, keys, best, occupancy)


def compiled():
    """The kernels compiled by numba (:func:`random_rank_steps` and :func:`random_rank_steps_light`),
    or None when numba is not installed."""
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(random_rank_steps), numba.njit(random_rank_steps_light)


def instance(d: int, h: int, seed: int = 0):
    """Valiant paths of an h-relation on BF(d), seeded as in ``benchmarks/engine.py``."""
    net = butterfly(d)
    problem = build_problem(f"h-relation:h={h}", net, np.random.default_rng(seed))
    paths = route_paths("valiant", problem, net, np.random.default_rng(seed + 1))
    paths.congestion  # link loads belong to choosing the paths, not to either engine
    return paths


def warm_up_project(paths) -> None:
    """Route once on the project's compiled kernel, so that numba's start in this process (which
    the project pays only for batches of ``COMPILED_MIN_HOPS_COLD`` hops or more) is not timed,
    as the anchor's compilation is not: both are compared at their steady speed."""
    from universal.engine import batch

    saved = batch.COMPILED_MIN_HOPS_COLD
    batch.COMPILED_MIN_HOPS_COLD = 0
    try:
        simulate(paths, "random-rank", np.random.default_rng(0))
    finally:
        batch.COMPILED_MIN_HOPS_COLD = saved


def project_ranks(paths, seed: int) -> np.ndarray:
    """The ranks ``universal.engine.simulate`` draws for random rank from ``default_rng(seed)``."""
    state = build_protocol("random-rank").setup(np.random.default_rng(seed), paths.lengths, paths.congestion,
                                                paths.dilation)
    return state.ranks


#: ``--anchor``: which anchors a run times.
ANCHORS = {"same-work": ("same-work",), "light": ("light",), "both": ("same-work", "light")}


def time_calls(call, calls: int) -> float:
    """CPU seconds per call of ``call()``, over ``calls`` calls in a row."""
    start = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="*", default=[10, 14, 16])
    parser.add_argument("--h", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--anchor", choices=sorted(ANCHORS), default="both",
                        help="same-work: the anchor draws the ranks and keeps the buffers' occupancy; "
                             "light: ranks given, no occupancy (the anchor up to commit 65e7583); both (default)")
    args = parser.parse_args()
    if min(args.d, default=1) < 1 or args.h < 1 or args.repeat < 1:
        print("error: --d, --h and --repeat must be at least 1", file=sys.stderr)
        raise SystemExit(2)
    kernels = compiled()
    if kernels is None:
        print("numba is not installed: the anchor is skipped (pip install numba to run it)")
        return
    kernel, light = kernels
    anchors = ANCHORS[args.anchor]
    import numba
    print(f"python {platform.python_version()}  numpy {np.__version__}  numba {numba.__version__}  "
          f"machine {platform.machine()}  load average {os.getloadavg()[0]:.1f}")
    small = instance(4, 1)
    anchor_route(kernel, small, 0)  # compile now, not while timing
    light_route(light, small, project_ranks(small, 0))
    warm_up_project(small)
    print(f"Valiant {args.h}-relation, random rank, B = 1: Mhops/s (CPU time, best of {args.repeat} "
          "interleaved rounds); ratio = project / anchor")
    header = f"{'d':>3} {'packets':>10} {'hops':>12} {'T':>4} {'project':>8}"
    for name in anchors:
        header += f" {name:>9} {'ratio':>6}"
    print(header + "  same T")
    for d in args.d:
        paths = instance(d, args.h)
        ranks = project_ranks(paths, args.seed)     # the light anchor's, drawn before timing
        out: dict = {}
        sides = {"project": lambda: out.__setitem__("project", simulate(paths, "random-rank",
                                                                        np.random.default_rng(args.seed))),
                 "same-work": lambda: out.__setitem__("same-work", anchor_route(kernel, paths, args.seed)),
                 "light": lambda: out.__setitem__("light", light_route(light, paths, ranks))}
        best = {name: float("inf") for name in ("project", *anchors)}
        # a round times each side over enough calls for a few milliseconds of CPU time (one call of
        # BF(10) is under one): the timer's and the machine's noise then weigh little
        calls = max(1, round(CALL_HOPS / int(paths.lengths.sum())))
        for _ in range(args.repeat):
            for name in best:
                best[name] = min(best[name], time_calls(sides[name], calls))
        result = out["project"]
        hops = int(paths.lengths.sum())
        same = result.status == "delivered" and result.hops == hops
        for name in anchors:
            delivery, anchor_hops, *top = out[name]
            same = same and anchor_hops == hops and np.array_equal(result.delivery, delivery)
            same = same and all(result.max_buffer == t for t in top)
        T = int(result.delivery.max()) if len(result.delivery) else 0
        line = f"{d:>3} {paths.size:>10,} {hops:>12,} {T:>4} {hops / best['project'] / 1e6:>8.1f}"
        for name in anchors:
            line += f" {hops / best[name] / 1e6:>9.1f} {best[name] / best['project']:>6.2f}"
        print(f"{line}  {'yes' if same and T == result.T else 'NO'}")
        if not same:
            raise SystemExit(f"the engines disagree on BF({d})")


if __name__ == "__main__":
    main()
