"""The screened worst case over many random permutations: their lowest saturation throughput Θ
without a full search of each one (the GOAL paper's worst case over 1,000 random permutations:
Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003, §5.3 and Figure 10).

A full saturation search (:func:`universal.openloop.saturation.find_saturations`) costs some 20
to 40 runs per permutation; the minimum over M permutations needs far fewer. The screen:

1. *Pilot.* The first ``pilot`` permutations are searched in full; ``m`` is their lowest Θ.
2. *Screen.* Every permutation not searched yet is run once at the rate ``(1 + tolerance) m``
   (one run each, by the search's own stability test, all batched in the engine's array state).
   A permutation whose run is stable there is *cleared*: it cannot lower the minimum. The margin
   is the search's own resolution: a full search reports the lower end of a bracket ``[lo, hi]``
   with ``hi`` unstable and at most ``(1 + tolerance) lo``, so with verdicts that turn once, from
   stable to unstable, a permutation stable at ``(1 + tolerance) m`` has ``hi`` above that and
   ``lo``, its Θ, above ``m``. (Cleared at ``m`` alone, a permutation whose verdicts turn just
   above ``m`` may be reported up to the tolerance lower by its full search, below ``m``: the
   oracle test saw it.) The unstable ones are the candidates. While there are more than ``candidates``
   of them, they are run again at a rate ``step`` lower, and so on down, so that the few that
   stay unstable longest are searched first (if a lower rate clears them all, the rate between
   the last two is tried, then the group is searched as it is). Where a pass leaves more than
   half of its group unstable the rate is far above their Θs, and the step doubles.
3. *Refine.* The candidates are searched in full, exactly as ``random-perms:M --saturation``
   searches them (same seed, same tolerance: the same Θ), and ``m`` becomes the lowest Θ
   searched so far. Steps 2 and 3 repeat until every permutation not searched has been judged
   stable at a rate at or above ``(1 + tolerance) m``.

What it guarantees: the reported minimum is a full search's Θ of the permutation named (the
value the full searches of all M would report for it), and every other permutation either was
searched in full and found no lower, or had a run judged stable at ``(1 + tolerance)`` times
the minimum or more. What it does not: a single run's verdict is not a search's. Close to
saturation verdicts are noisy (a window resolves a backlog growth of about half a percent of the
offered packets, see :mod:`universal.engine.measure`), and the search's bracket rule weighs many
runs where the screen has one: a permutation whose one run passed may still have a full-search
Θ a little below the minimum. And only
the minimum comes out: the mean, the spread and the histogram of Figure 9 need every Θ
(``random-perms:M --saturation``); a screen reports which permutations were cleared at which
rate instead. Equal minima name the permutation of the lowest index, as the full table does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable

import numpy as np

from universal.engine.creation import RunSpec
from universal.engine.measure import Measurement
from universal.engine.runs import simulate_batch
from universal.errors import UserError
from universal.openloop.saturation import Saturation, find_saturations, rate_ceiling

__all__ = ["ScreenStep", "ScreenedMinimum", "screened_minimum", "SCREEN_KEY", "SPLIT_RUNS"]

#: The spawn key a screen's runs add to their permutation's seed: the k-th screening run of a
#: permutation has seed ``SeedSequence(entropy, spawn_key + (SCREEN_KEY, k))``, a stream that
#: none of the full search's children (``spawn_key + (j,)``) shares.
SCREEN_KEY = 1 << 20
#: With ``jobs`` > 1, a screening pass is split across worker processes only if every worker gets
#: at least this many runs (fewer workers otherwise, none below twice this): a worker costs a
#: fork and a batch of its own, which a few runs do not pay for (``benchmarks/screen_jobs.py``).
SPLIT_RUNS = 8


@dataclass
class ScreenStep:
    """One screening pass: ``tested`` permutations run once at ``rate`` (packets per node per
    step), ``unstable`` of them judged unstable."""

    rate: float
    tested: int
    unstable: int


@dataclass
class ScreenedMinimum:
    """The result of :func:`screened_minimum`.

    Attributes
    ----------
    theta : float
        The lowest Θ over the permutations (packets per node per step): a full search's.
    index : int
        The permutation that gave it.
    searched : dict
        Permutation index -> its full :class:`~universal.openloop.saturation.Saturation`.
    cleared : ndarray of float
        Per permutation, the highest rate at which a screening run of it was stable (0 if none).
        Every permutation not in ``searched`` has ``cleared >= (1 + tolerance) theta`` or was
        stable at its ceiling (the injection process's limit), above ``theta``.
    steps : list of ScreenStep
        The screening passes, in order.
    runs : int
        Runs simulated in all (searches and screens).
    """

    theta: float
    index: int
    searched: dict = field(default_factory=dict)
    cleared: np.ndarray = field(default_factory=lambda: np.zeros(0))
    steps: list = field(default_factory=list)
    runs: int = 0


def _screen_seed(seed, k: int) -> np.random.SeedSequence:
    """The seed of a permutation's ``k``-th screening run, from its search's seed."""
    base = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    return np.random.SeedSequence(base.entropy, spawn_key=tuple(base.spawn_key) + (SCREEN_KEY, k),
                                  pool_size=base.pool_size)


def _screen_runs(specs: list[RunSpec], indices: list[int], rates: list[float], ks: list[int], run_options: dict,
                 batch_runs: int, progress=None) -> list[tuple[bool, float]]:
    """Run permutation ``indices[j]`` once at ``rates[j]`` with its ``ks[j]``-th screening seed;
    per run, whether it was stable and its rate. The same in this process and in a worker."""
    runs = [replace(specs[i], rate=r, seed=_screen_seed(specs[i].seed, k)) for i, r, k in zip(indices, rates, ks)]
    verdicts = []
    for at in range(0, len(runs), batch_runs):
        results = simulate_batch(runs[at:at + batch_runs], **run_options)
        verdicts += [(bool(res.stable), float(res.rate)) for res in results]
        if progress is not None:
            progress(len(results))
    return verdicts


def _screen_part(source: Callable[[], list[RunSpec]], part: int, indices: list[int], rates: list[float],
                 ks: list[int], run_options: dict, batch_runs: int) -> tuple[int, list[tuple[bool, float]]]:
    """:func:`_screen_runs` in a worker process, on the specs ``source()`` builds there."""
    return part, _screen_runs(source(), indices, rates, ks, run_options, batch_runs)


def _search_part(source: Callable[[], list[RunSpec]], part: int, indices: list[int],
                 search_options: dict) -> tuple[int, list[Saturation]]:
    """The full searches of ``indices`` in a worker process, on the specs ``source()`` builds there."""
    specs = source()
    return part, find_saturations([specs[i] for i in indices], **search_options)


def _given(specs: list[RunSpec]) -> list[RunSpec]:
    """The specs themselves (a worker's source when they pickle)."""
    return specs


def _parts(count: int, jobs: int, least: int) -> list[slice]:
    """``count`` items cut into at most ``jobs`` contiguous parts of at least ``least`` each, as
    equal as they come (one part: not worth a worker)."""
    n = max(1, min(jobs, count // max(1, least)))
    bounds = [round(j * count / n) for j in range(n + 1)]
    return [slice(a, b) for a, b in zip(bounds, bounds[1:])]


def _in_workers(function: Callable, tasks: list[tuple], jobs: int, progress=None) -> list:
    """``function(*task)`` for every task in ``jobs`` worker processes (:func:`universal.workers.run_in_processes`);
    each result is ``(part, values)``, ``progress(len(values))`` is called as each arrives, and the
    values come back in the order of their parts (whichever worker finished first)."""
    from universal.workers import run_in_processes

    got = {}
    for part, values in run_in_processes(function, tasks, jobs):
        got[part] = values
        if progress is not None:
            progress(len(values))
    return [got[j] for j in range(len(tasks))]


class _Screen:
    """The state of one screened minimum: which permutations are searched, cleared, pending."""

    def __init__(self, specs: list[RunSpec], search_options: dict, run_options: dict, batch_runs: int,
                 progress, jobs: int = 1, source: Callable[[], list[RunSpec]] | None = None) -> None:
        self.specs, self.search_options, self.run_options = specs, search_options, run_options
        self.jobs, self.source = jobs, source
        # no run above a permutation's ceiling (the injection process's limit): stable there, it is
        # the full search's Θ (limited)
        self.ceilings = np.array([rate_ceiling(s, run_options["bandwidth"]) for s in specs])
        self.batch_runs, self.progress = batch_runs, progress
        self.searched: dict[int, Saturation] = {}
        self.cleared = np.zeros(len(specs))
        self.screened = np.zeros(len(specs), dtype=np.int64)     # screening runs so far, per permutation
        self.steps: list[ScreenStep] = []
        self.runs = 0

    def pending(self, theta: float, tolerance: float) -> list[int]:
        """The permutations not searched and not cleared against the minimum ``theta``: cleared is
        stable at ``(1 + tolerance) theta`` or at a ceiling at or above ``theta`` (a permutation
        stable at its ceiling has that as its Θ, limited; one whose ceiling is below ``theta``
        cannot be cleared and is searched)."""
        need = np.where(self.ceilings >= theta, np.minimum((1 + tolerance) * theta, self.ceilings), np.inf)
        return [i for i in np.flatnonzero(self.cleared < need).tolist() if i not in self.searched]

    def minimum(self) -> tuple[float, int]:
        """The lowest Θ searched so far and its permutation (the lowest index of equal ones)."""
        return min((sat.theta, i) for i, sat in self.searched.items())

    def search(self, indices: list[int]) -> None:
        parts = _parts(len(indices), self.jobs, 1) if self.jobs > 1 else [slice(0, len(indices))]
        if len(parts) > 1:  # a search's Θ depends on its spec alone: any grouping gives the same
            tasks = [(self.source, j, indices[part], self.search_options) for j, part in enumerate(parts)]
            sats = [sat for got in _in_workers(_search_part, tasks, self.jobs) for sat in got]
        else:
            sats = find_saturations([self.specs[i] for i in indices], **self.search_options)
        self.searched.update(zip(indices, sats))
        done = sum(len(s.runs) for s in sats)
        self.runs += done
        if self.progress is not None:
            self.progress(done)

    def screen(self, indices: list[int], rate: float) -> list[int]:
        """Run each permutation of ``indices`` once at ``rate``; clear the stable ones up to it and
        return the unstable ones."""
        rates = [float(min(rate, self.ceilings[i])) for i in indices]
        ks = [int(self.screened[i]) for i in indices]
        self.screened[indices] += 1
        parts = _parts(len(indices), self.jobs, SPLIT_RUNS) if self.jobs > 1 else [slice(0, len(indices))]
        if len(parts) > 1:  # a run's verdict depends on its permutation, rate and seed alone
            tasks = [(self.source, j, indices[p], rates[p], ks[p], self.run_options, self.batch_runs)
                     for j, p in enumerate(parts)]
            verdicts = [v for got in _in_workers(_screen_part, tasks, self.jobs, self.progress) for v in got]
        else:
            verdicts = _screen_runs(self.specs, indices, rates, ks, self.run_options, self.batch_runs, self.progress)
        unstable = []
        for i, (stable, at_rate) in zip(indices, verdicts):
            if stable:
                self.cleared[i] = max(self.cleared[i], at_rate)
            else:
                unstable.append(i)
        self.runs += len(indices)
        self.steps.append(ScreenStep(float(rate), len(indices), len(unstable)))
        return unstable

    def candidates(self, pending: list[int], rate: float, candidates: int, step: float) -> list[int]:
        """Screen ``pending`` at ``rate`` and the unstable ones lower down, until at most
        ``candidates`` stay unstable; the permutations to search next (none if all were cleared
        at ``rate``)."""
        group, above = pending, None
        while True:
            unstable = self.screen(group, rate)
            if not unstable:
                if above is None:
                    return []                   # all cleared at the minimum itself
                if above / rate - 1 > step / 4:     # every one cleared a step lower: try between
                    rate = (rate + above) / 2
                    continue
                return group                    # no rate between separates them: search them all
            if len(unstable) <= candidates:
                return unstable
            if len(unstable) > len(group) / 2:  # far above the group's Θs: descend faster
                step = min(2 * step, 0.5)
            group, above, rate = unstable, rate, rate * (1 - step)


def screened_minimum(specs: list[RunSpec], *, pilot: int = 8, candidates: int = 8, step: float = 0.03,
                     points: int = 8, tolerance: float = 0.01, rounds: int = 12, bandwidth: int = 1,
                     buffer: int | None = None, measurement: Measurement | None = None, vcs: int = 1,
                     source_queue: str = "all", batch_runs: int = 64, progress=None,
                     vc_buffer: str = "set", jobs: int = 1,
                     source: Callable[[], list[RunSpec]] | None = None) -> ScreenedMinimum:
    """The lowest saturation throughput over ``specs`` (one per permutation), searching in full
    only the permutations a screen at the running minimum cannot clear (see the module docstring).

    Parameters
    ----------
    specs : list of RunSpec
        One template per permutation (sharing one network object and priority rule), as for
        :func:`~universal.openloop.saturation.find_saturations`; its seed seeds the full search
        and, through :data:`SCREEN_KEY`, the screening runs.
    pilot : int
        Permutations searched in full first (the first ones), to set the first screening rate.
    candidates : int
        At most this many unstable permutations are searched after a screen; more are screened
        again ``step`` lower.
    step : float
        Relative drop of the screening rate from one pass to the next.
    points, tolerance, rounds, bandwidth, buffer, measurement, vcs, source_queue, vc_buffer
        As for :func:`~universal.openloop.saturation.find_saturations` (a screening run is
        measured as a search's runs are).
    batch_runs : int
        Screening runs per batch of the engine, at most.
    progress : callable, optional
        Called with the number of runs finished after each batch or search (after each worker's
        share of them with ``jobs`` > 1).
    jobs : int
        Worker processes (:func:`universal.workers.run_in_processes`) that share each screening
        pass of at least ``2 *`` :data:`SPLIT_RUNS` runs, and each group of full searches of two
        or more permutations; the sequence of passes stays in this process. Every run's verdict
        depends only on its permutation, its rate and its own seed, and every search's Θ only on
        its spec, so the result is the same for every ``jobs``.
    source : callable, optional
        With ``jobs`` > 1: a picklable function of no arguments that returns ``specs`` (equal
        ones) in a worker process, e.g. a :func:`functools.partial` of a top-level function.
        Without it the specs are sent to the workers as they are, which needs them to pickle.

    Returns
    -------
    ScreenedMinimum

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> from universal.engine.workload import build_injection
    >>> from universal.openloop.workload import offered_traffic
    >>> net = build_network("torus:k=8,n=1")
    >>> router, inj = build_router("dor", net), build_injection("bernoulli")
    >>> specs = [RunSpec(offered_traffic(net, t), router, inj, 1.0) for t in ("neighbor", "bitcomp", "tornado")]
    >>> quick = Measurement(window=2000, latency_limit=300, drain=False, overload="stop", latencies=False)
    >>> got = screened_minimum(specs, pilot=1, candidates=1, tolerance=0.05, measurement=quick)
    >>> got.index, round(got.theta, 2)                         # tornado: 1/3 (3 flows on a link)
    (2, 0.33)

    References
    ----------
    Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
    networks", 2003, §5.3 (the worst of 1,000 random permutations, Figure 10).
    """
    if not specs:
        raise UserError("a screened worst case needs at least one permutation")
    if pilot < 1 or candidates < 1 or not 0 < step < 1:
        raise UserError("a screened worst case needs pilot >= 1, candidates >= 1 and 0 < step < 1")
    if jobs < 1:
        raise UserError(f"jobs must be at least 1, got {jobs}")
    measurement = measurement or Measurement(latency_limit=500, drain=False, overload="stop", latencies=False)
    run_options = dict(bandwidth=bandwidth, buffer=buffer, measurement=measurement, vcs=vcs,
                       source_queue=source_queue, vc_buffer=vc_buffer)
    search_options = dict(points=points, tolerance=tolerance, rounds=rounds, **run_options)
    nodes = specs[0].router.network.num_nodes
    state = _Screen(specs, search_options, run_options, max(1, min(batch_runs, 4096 // nodes)), progress, jobs,
                    source if source is not None else partial(_given, specs))
    state.search(list(range(min(pilot, len(specs)))))
    while True:
        theta, _ = state.minimum()
        clear = (1 + tolerance) * theta     # stable there: the full search's Θ is above theta
        pending = state.pending(theta, tolerance)
        if not pending:
            break
        if len(pending) <= candidates:
            state.search(pending)
            continue
        chosen = state.candidates(pending, clear, candidates, step)
        if chosen:
            state.search(chosen)
        elif state.pending(theta, tolerance) == pending:
            state.search(pending)   # a screen that clears none of them cannot end the loop: search them
    theta, index = state.minimum()
    return ScreenedMinimum(theta, index, state.searched, state.cleared, state.steps, state.runs)
