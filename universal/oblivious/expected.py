"""Expected congestion of a path system over random functions (SPEC §5).

Meyer auf der Heide and Scheideler ("Communication in Parallel Systems", §2.3) define the
expected congestion of link ``e`` under a path system as the expected number of packets that
cross ``e`` when every source sends one packet to a destination drawn uniformly and
independently (a random function), and the expected congestion of the system as the largest of
these, ``C̄ = max_e C̄_e``. Theorem 12 bounds the congestion of Valiant's trick over a system
by ``2h·C̄`` of that system plus a deviation term, and Theorem 16 bounds growing rank by
``O(C̄ + D + log n)``.

Since the destinations are independent, ``C̄_e = (1/|destinations|) · sum over all (s, d) of
gamma_e(s, d)``, where ``gamma_e(s, d)`` is the expected number of crossings of ``e`` by the
path from ``s`` to ``d``. Sources and destinations are all nodes, or the inputs and the
outputs of a leveled network. The value is computed in the first way that applies:

* ``exact, all pairs``: a deterministic path system (``shortest``, ``dimension-order``) routed
  once on every (source, destination) pair; ``C̄`` is a fraction with denominator
  ``|destinations|``;
* ``exact, all pairs of both passes``: Valiant's trick over a deterministic base. With N
  sources, intermediates and destinations alike, ``C̄_e = (1/N)·(crossings of e by the first
  passes s -> w of all pairs + by the second passes w -> d of all pairs)``, and N^2 packets
  routed via chosen intermediates (packet (i, j) from source i via intermediate j to
  destination (i + j) mod N) make every first and every second pass exactly once;
* ``exact, pair loads``: a randomized system whose pair loads
  :func:`universal.oblivious.graphs.graph_pair_loads` enumerates exactly (``random-shortest``,
  ``valiant`` over an exact base, the torus routings) on a small network without levels;
* ``sampled, M passes over all pairs``: every pair routed ``M`` times with fresh random
  choices;
* ``sampled, M random functions``: when all pairs are too many.

When sampling, the largest of many noisy link means would overshoot ``C̄`` (on BF(12), where
every link has ``C̄_e = 1/2``, the largest of 64-sample means is about 0.9). So the first half of
the samples only chooses the link with the largest mean, and the value and its standard error
come from the other half, at that link: an unbiased estimate of that link's ``C̄_e``, which is
at most ``C̄`` (the chosen link may fall short of the true maximum by about the noise).

Examples
--------
>>> from universal.networks import build_network
>>> result = expected_congestion("dimension-order", build_network("hypercube:d=4"))
>>> result.exact, result.how
(Fraction(1, 2), 'exact, all 256 pairs')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from universal.errors import UserError
from universal.networks import Network
from universal.oblivious.graphs import PAIR_LOADS, check_graph
from universal.paths import (PATH_SYSTEMS, PathSystem, build_path_system, default_base, longest_path_bound, route_paths,
                             valiant_paths)
from universal.registry import parse_spec
from universal.workloads import Problem, build_problem, endpoints

__all__ = ["ExpectedCongestion", "expected_congestion", "DEFAULT_SAMPLES"]

#: Default number of sampled passes (or random functions) for randomized path systems.
DEFAULT_SAMPLES = 64
#: Largest estimated number of link crossings routed for the all-pairs computations.
MAX_ALL_PAIRS_HOPS = 24_000_000
#: Largest estimated number of link crossings routed in all when sampling random functions.
MAX_SAMPLED_HOPS = 200_000_000


@dataclass(frozen=True)
class ExpectedCongestion:
    """The expected congestion ``C̄`` of one path system on one network.

    Attributes
    ----------
    paths : str
        The path system, as named.
    value : float
        ``C̄`` (exact, or the largest sampled mean).
    exact : Fraction or None
        ``C̄`` as a fraction when it was computed exactly.
    error : float
        Standard error of ``value`` (0.0 when exact).
    link : int
        A link with the largest expected load, in ``host`` (the paths' network: for Valiant's
        trick on BF(d), two butterflies back to back).
    link_name : str
        That link as ``tail->head`` labels.
    host : str
        The name of the network the paths run on.
    how : str
        How it was computed (see the module docstring).
    loads : numpy.ndarray
        ``C̄_e`` (exact or estimated) for every link of ``host``.
    """

    paths: str
    value: float
    exact: Fraction | None
    error: float
    link: int
    link_name: str
    host: str
    how: str
    loads: np.ndarray

    def to_dict(self) -> dict:
        """Plain values for JSON (``exact`` as ``"p/q"`` or None; no per-link loads)."""
        return {"paths": self.paths, "expected_congestion": self.value,
                "exact": None if self.exact is None else str(self.exact), "error": self.error,
                "link": self.link_name, "host": self.host, "how": self.how}


def _all_pairs(network: Network) -> Problem:
    sources, dests = endpoints(network)
    return Problem("all pairs", np.repeat(sources, len(dests)), np.tile(dests, len(sources)))


def _result(paths: str, host: Network, loads: np.ndarray, how: str, exact: Fraction,
            link: int) -> ExpectedCongestion:
    return ExpectedCongestion(paths, float(exact), exact, 0.0, link, host.link_label(link), host.name, how, loads)


def _exact_all_pairs(paths: str, network: Network, base_dir: Path | None) -> ExpectedCongestion:
    problem = _all_pairs(network)
    coll = route_paths(paths, problem, network, np.random.default_rng(0), base_dir)
    counts = coll.link_loads
    per_dest = len(endpoints(network)[1])
    link = int(np.argmax(counts))
    return _result(paths, coll.network, counts / per_dest, f"exact, all {problem.size:,} pairs",
                   exact=Fraction(int(counts[link]), per_dest), link=link)


def _exact_pair_loads(paths: str, network: Network, base_dir: Path | None) -> ExpectedCongestion | None:
    """From exact pair loads on a small network without levels, or None if there are none."""
    spec = parse_spec(paths)
    provider = PAIR_LOADS.get(spec.name)
    if network.leveled or provider is None:
        return None
    try:
        check_graph(network)  # small enough and connected
    except UserError:  # the sampled way reports a real problem (e.g. a disconnected pair) itself
        return None
    exact = provider(spec, network, base_dir)
    if exact is None:  # its integers would overflow
        return None
    num, den = exact
    N = network.num_nodes
    loads = (num / den[:, :, None]).sum(axis=(0, 1)) / N
    # Floats pick the candidates; exact sums decide among them. The pairs are grouped by their
    # denominator (few distinct values) so each candidate needs a handful of Fraction additions.
    top = float(loads.max())
    candidates = np.flatnonzero(loads >= top * (1 - 1e-9))
    totals = {link: Fraction(0) for link in candidates.tolist()}
    for value in np.unique(den).tolist():
        chosen = num[den == value][:, candidates]
        sums = chosen.sum(axis=0) if len(chosen) * value * 4 < 2**62 else chosen.astype(object).sum(axis=0)
        for link, total in zip(candidates.tolist(), sums.tolist()):
            totals[link] += Fraction(int(total), int(value))
    link = max(totals, key=lambda e: (totals[e], -e))
    return _result(paths, network, loads, "exact, pair loads", exact=totals[link] / N, link=link)


def _exact_valiant(paths: str, network: Network, base: PathSystem) -> ExpectedCongestion:
    sources, dests = endpoints(network)
    N = len(sources)
    first, through = np.divmod(np.arange(N * N, dtype=np.int64), N)
    problem = Problem("all passes", sources[first], dests[(first + through) % N])
    coll = valiant_paths(problem, network, np.random.default_rng(0), base, middle=through)
    counts = coll.link_loads
    link = int(np.argmax(counts))
    return _result(paths, coll.network, counts / N, f"exact, all {N * N:,} pairs of both passes",
                   exact=Fraction(int(counts[link]), N), link=link)


def _deterministic_valiant_base(paths: str, network: Network, base_dir: Path | None) -> PathSystem | None:
    """The base of ``valiant[:base=...]`` if its paths do not depend on the rng, else None."""
    spec = parse_spec(paths)
    if spec.name != "valiant":
        return None
    base = build_path_system(spec.params.get("base", default_base(network)), network, base_dir)
    # On BF(d) all three bases give the unique level path (see valiant_paths).
    fixed = base.deterministic or (network.kind == "butterfly" and base.name == "random-shortest")
    return base if fixed else None


def _sampled_all_pairs(paths: str, network: Network, samples: int, rng: np.random.Generator,
                       base_dir: Path | None) -> ExpectedCongestion:
    problem = _all_pairs(network)
    per_dest = len(endpoints(network)[1])

    def draw() -> tuple[Network, np.ndarray]:
        coll = route_paths(paths, problem, network, rng, base_dir)
        return coll.network, coll.link_loads / per_dest

    return _split_estimate(paths, draw, samples, f"sampled, {samples} passes over all {problem.size:,} pairs")


def _sampled_functions(paths: str, network: Network, samples: int, rng: np.random.Generator,
                       base_dir: Path | None) -> ExpectedCongestion:
    def draw() -> tuple[Network, np.ndarray]:
        coll = route_paths(paths, build_problem("h-function:h=1", network, rng), network, rng, base_dir)
        return coll.network, coll.link_loads.astype(np.float64)

    return _split_estimate(paths, draw, samples, f"sampled, {samples} random functions")


def _split_estimate(paths: str, draw, samples: int, how: str) -> ExpectedCongestion:
    """The first half of the draws chooses the link, the second half measures it (see the module)."""
    choose = (samples + 1) // 2
    total = None
    for _ in range(choose):
        host, loads = draw()
        total = loads.copy() if total is None else total + loads
    link = int(np.argmax(total))
    measured = []
    for _ in range(samples - choose):
        host, loads = draw()
        measured.append(float(loads[link]))
        total += loads
    value = float(np.mean(measured))
    error = float(np.std(measured, ddof=1) / math.sqrt(len(measured))) if len(measured) > 1 else math.inf
    return ExpectedCongestion(paths, value, None, error, link, host.link_label(link), host.name, how,
                              total / samples)


def expected_congestion(paths: str, network: Network, *, samples: int = DEFAULT_SAMPLES,
                        rng: np.random.Generator | None = None,
                        base_dir: Path | None = None) -> ExpectedCongestion:
    """The expected congestion ``C̄`` of the path system ``paths`` over random functions.

    Parameters
    ----------
    paths : str
        A path-system name (``shortest``, ``random-shortest``, ``dimension-order``,
        ``valiant[:base=NAME]``, the torus routings); not ``explicit``, whose paths belong to
        one problem.
    network : Network
    samples : int
        Passes over all pairs, or random functions, when ``C̄`` is sampled.
    rng : numpy.random.Generator, optional
        Source of the sampled choices (default: seed 0).
    base_dir : Path, optional
        Folder that relative file names in ``paths`` are resolved against.

    Returns
    -------
    ExpectedCongestion

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("butterfly:d=3")
    >>> expected_congestion("dimension-order", net).exact   # every link: 1/2 of a packet
    Fraction(1, 2)
    >>> expected_congestion("random-shortest", build_network("torus:k=4,n=1")).exact
    Fraction(1, 2)

    References
    ----------
    F. Meyer auf der Heide and C. Scheideler, "Communication in Parallel Systems", §2.3
    (definition), Theorems 8-12 and 16.
    """
    spec = parse_spec(paths)
    if spec.name == "explicit":
        raise UserError("explicit paths belong to one problem; expected congestion needs a path system "
                        "that can route every pair")
    if spec.name not in PATH_SYSTEMS:
        raise UserError(f"unknown path system {spec.name!r} (known: {', '.join(PATH_SYSTEMS.names())})")
    if samples < 2:
        raise UserError("expected congestion: samples must be >= 2 (half choose the link, half measure it)")
    system = build_path_system(paths, network, base_dir)
    rng = rng if rng is not None else np.random.default_rng(0)
    sources, dests = endpoints(network)
    pairs = len(sources) * len(dests)
    hops = pairs * longest_path_bound(network, paths)
    if system.deterministic and hops <= MAX_ALL_PAIRS_HOPS:
        return _exact_all_pairs(paths, network, base_dir)
    base = _deterministic_valiant_base(paths, network, base_dir)
    if base is not None and hops <= MAX_ALL_PAIRS_HOPS:
        return _exact_valiant(paths, network, base)
    if not system.deterministic:
        exact = _exact_pair_loads(paths, network, base_dir)
        if exact is not None:
            return exact
    if hops * samples <= MAX_ALL_PAIRS_HOPS:
        return _sampled_all_pairs(paths, network, samples, rng, base_dir)
    needed = len(sources) * longest_path_bound(network, paths) * samples
    if needed > MAX_SAMPLED_HOPS:
        raise UserError(f"expected congestion of {paths} on {network.name} with {samples} random functions could "
                        f"need {needed:,} link crossings, more than this tool handles ({MAX_SAMPLED_HOPS:,})")
    return _sampled_functions(paths, network, samples, rng, base_dir)
