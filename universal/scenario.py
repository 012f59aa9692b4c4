"""Scenario files: a TOML file that names an experiment (SPEC §8).

Keys (all but ``network``, ``problem``, ``paths`` and ``protocols`` optional)::

    description = "one line shown by `python -m universal scenarios`"
    network   = "butterfly:d=10"
    problem   = "h-relation:h=4"   # or a list of problems, each with its own rows
    paths     = ["dimension-order", "valiant"]
    protocols = ["random-rank", "growing-rank", "fifo"]
    seeds     = 5          # seeds 0..4 (from `seed`), or a list of seeds
    seed      = 0          # first seed when `seeds` is a count
    bandwidth = 1          # B, or a list of values to compare (bandwidth = [1, 2, 4])
    buffer    = 4          # size b of every link buffer (default unbounded), or a list such
                           # as [1, 2, "unbounded"] to compare
    vcs       = 2          # V virtual channels per link (default 1), or a list such as [1, 2]
    note      = "..."      # a line printed under the table (what the scenario leaves out, and why)
    opt       = true       # also OPT of every path collection ("free": and R(G, π)); SPEC §12
    time_limit = 10        # the optimum searches' limit (CP-SAT deterministic time, about seconds)

A scenario with ``kind = "load"`` runs the channel-load analysis (SPEC §7) instead of an
experiment; its keys mirror ``universal load`` and ``universal worstcase``::

    kind      = "load"
    network   = "torus:k=9,n=2"
    routing   = ["dor", "romm"]
    traffic   = ["uniform", "tornado", "random-perms:10000"]   # optional when worstcase = true
    worstcase = true       # also the exact worst-case permutation of every routing
    seed      = 0          # seed of the random permutations

A scenario with ``kind = "openloop"`` runs open-loop studies (SPEC §11), its keys those of
``universal openloop``::

    kind       = "openloop"
    network    = "torus:k=8,n=2"
    routing    = ["dor", "val", "goal"]
    traffic    = ["uniform", "tornado"]
    saturation = true      # or: loads = "0.05:1.0:0.05" (or a list of numbers)
    injection  = "poisson" # bernoulli (default), poisson, on-off
    pairs      = ["0,0->1,1"]   # with loads: also the latency of these source->destination pairs
    histogram  = true      # with loads: latency histograms of every run and pair (--histogram)
    router_delay = 1       # steps added per hop (--router-delay)
    pool_translates = true # each pair pooled with its translates (--pool-translates)
    worst_case = true      # with saturation: each routing's worst case (--worst-case)
    random_perms = 8       # with worst_case: random permutations for the adaptive routings (--random-perms)
    screen_perms = true    # with random_perms: only their lowest Θ, screened (--screen-perms)
A scenario with ``kind = "design"`` solves the routing-design LPs of SPEC §10 (Towles, Dally &
Boyd 2003) and compares the named algorithms with the optimal tradeoff curves::

    kind       = "design"
    network    = "torus:k=8,n=2"
    objectives = ["worst-case", "average-case"]   # one tradeoff curve each
    paths      = "all"     # path family of the curves: all, minimal or 2turn
    points     = 8         # locality bounds per curve
    samples    = 100       # random permutations of the average case
    seed       = 0         # their seed (the held-out sample uses seed + 1)

A scenario with ``kind = "adversary"`` builds Theorem 25's adversary (survey §5) over a grid of
butterfly dimensions and congestions, its keys those of ``universal adversary``::

    kind       = "adversary"
    dims       = [4, 6, 8]         # the networks butterfly:d=D
    congestion = [2, 4, 8]
    protocols  = ["fifo", "farthest-to-go"]
    seeds      = 5                  # runs of random rank with fresh ranks (seeds seed+1 onwards)
    seed       = 0                  # seed of the fixed ranks of random-rank / growing-rank as Q

A ``[sweep]`` table runs the experiment once per cell of a grid; names may hold ``{axis}``
placeholders (see :mod:`universal.sweep`)::

    network = "butterfly:d={d}"
    [sweep]
    d = [4, 6, 8, 10, 12, 14]

Relative file names inside the scenario (``edgelist:net.edges``) resolve against the
scenario file's folder. Built-in scenarios live in ``scenarios/`` and run by name.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from universal.datafiles import parse_nested, read_text
from universal.errors import UserError
from universal.design.study import DesignStudy
from universal.experiment import Experiment, check_seed_count
from universal.load_analysis import LoadAnalysis
from universal.protocols.adversary_study import AdversaryStudy
from universal.scenario_settings import (MAX_SEED, _buffer_setting, _opt_setting, _source_queue_setting,  # noqa: F401
                                         _string_list, _sweep_axes, _time_limit_setting, check_seed, seeds_from)
from universal.sweep import Sweep

KNOWN_KEYS = {"description", "network", "problem", "paths", "protocols", "seeds", "seed", "bandwidth", "buffer",
              "vcs", "vc_buffer", "source_queue", "engine", "sweep", "note", "opt", "time_limit"}
LOAD_KEYS = {"description", "kind", "network", "routing", "traffic", "worstcase", "seed"}
OPENLOOP_KEYS = {"description", "kind", "network", "routing", "traffic", "loads", "saturation", "injection", "units",
                 "seeds", "seed", "priority", "bandwidth", "buffer", "vcs", "window", "tolerance", "pairs", "jobs",
                 "histogram", "router_delay", "pool_translates", "worst_case", "random_perms", "source_queue",
                 "vc_buffer", "screen_perms"}
ADVERSARY_KEYS = {"description", "kind", "dims", "congestion", "protocols", "seeds", "seed"}
DESIGN_KEYS = {"description", "kind", "network", "objectives", "paths", "points", "samples", "seed"}


@dataclass
class Scenario:
    """A loaded scenario file."""

    name: str
    description: str
    experiment: Experiment | None
    path: Path
    analysis: LoadAnalysis | None = None
    sweep: Sweep | None = None
    openloop: object | None = None          # an OpenLoopStudy (kind = "openloop")
    design: DesignStudy | None = None
    adversary: AdversaryStudy | None = None


def builtin_dir() -> Path:
    """Folder of the built-in scenarios: installed package data, or ``scenarios/`` in a checkout."""
    try:
        folder = Path(str(resources.files("universal.scenarios")))
        if any(folder.glob("*.toml")):
            return folder
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parent.parent / "scenarios"


def list_scenarios() -> list[Scenario]:
    """All built-in scenarios, sorted by name."""
    return [load_scenario(p) for p in sorted(builtin_dir().glob("*.toml"))]


def find_scenario(name_or_file: str) -> Path:
    """Path of a built-in scenario by name, or of a scenario file."""
    candidate = Path(name_or_file).expanduser()
    try:
        if candidate.suffix == ".toml" or candidate.exists():
            if not candidate.is_file():
                raise UserError(f"scenario file {name_or_file!r} does not exist")
            return candidate
    except OSError as exc:  # a name too long for the file system, a folder we may not enter
        raise UserError(f"cannot read scenario {name_or_file!r}: {exc.strerror}") from None
    builtin = builtin_dir() / f"{name_or_file.replace('-', '_')}.toml"
    try:
        if builtin.is_file():
            return builtin
    except OSError:
        pass  # e.g. a name too long to be a file: not a built-in scenario either
    known = ", ".join(p.stem for p in sorted(builtin_dir().glob("*.toml")))
    raise UserError(f"unknown scenario {name_or_file!r} (built-in: {known})")


def load_scenario(name_or_file: str | Path) -> Scenario:
    """Load and validate a scenario by built-in name or file path.

    Examples
    --------
    >>> sc = load_scenario("butterfly_hrelation")
    >>> sc.experiment.network
    'butterfly:d=12'
    """
    path = find_scenario(str(name_or_file))
    try:
        data = parse_nested(tomllib.loads, read_text(path, "scenario"), str(path))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: malformed scenario file ({exc})") from None
    if data.get("kind") == "openloop":
        return _openloop_scenario(data, path)
    if data.get("kind") == "design":
        return _design_scenario(data, path)
    if data.get("kind") == "adversary":
        return _adversary_scenario(data, path)
    if "kind" in data:
        return _load_analysis_scenario(data, path)
    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
    if not isinstance(data.get("network"), str):
        raise UserError(f"{path}: 'network' must be given as a string")
    bandwidth = data.get("bandwidth", 1)
    values = bandwidth if isinstance(bandwidth, list) else [bandwidth]
    if not values or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in values):
        raise UserError(f"{path}: 'bandwidth' must be an integer >= 1 or a non-empty list of them")
    buffer = _buffer_setting(data.get("buffer", "unbounded"), path)
    vcs = data.get("vcs", 1)
    values = vcs if isinstance(vcs, list) else [vcs]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values):
        raise UserError(f"{path}: 'vcs' must be an integer >= 1 (virtual channels per link) or a non-empty list "
                        "of them")
    vc_buffer = data.get("vc_buffer", "set")
    if not isinstance(vc_buffer, str):
        raise UserError(f"{path}: 'vc_buffer' must be a name (set or fifo)")
    from universal.engine.fifo_vcs import check_vc_buffer

    try:
        check_vc_buffer(vc_buffer)
    except UserError as exc:
        raise UserError(f"{path}: {exc}") from None
    source_queue = _source_queue_setting(data.get("source_queue", "all"), path)
    experiment = Experiment(
        network=data["network"],
        problem=_string_list(data, "problem", path),
        paths=_string_list(data, "paths", path),
        protocols=_string_list(data, "protocols", path),
        seeds=seeds_from(data.get("seeds", 1), data.get("seed", 0), str(path)),
        bandwidth=bandwidth,
        buffer=buffer,
        vcs=vcs,
        vc_buffer=vc_buffer,
        source_queue=source_queue,
        engine=str(data.get("engine", "one")),
        name=path.stem,
        base_dir=path.parent,
        note=str(data.get("note", "")),
        opt=_opt_setting(data.get("opt", False), path),
        time_limit=_time_limit_setting(data.get("time_limit", 10.0), path),
    )
    sweep = Sweep(path.stem, experiment, _sweep_axes(data["sweep"], path)) if "sweep" in data else None
    return Scenario(path.stem, str(data.get("description", "")), experiment, path, sweep=sweep)


def _load_analysis_scenario(data: dict, path: Path) -> Scenario:
    """A ``kind = "load"`` scenario: the load table and/or the exact worst case (SPEC §7).

    Examples
    --------
    >>> sc = load_scenario("torus_worstcase")
    >>> sc.analysis.routings, sc.analysis.worstcase
    (['dor', 'romm'], True)
    """
    if data["kind"] != "load":
        raise UserError(f"{path}: 'kind' must be \"load\", \"openloop\", \"design\" or \"adversary\" (or left out "
                        f"for an experiment), "
                        f"not {data['kind']!r}")
    unknown = sorted(set(data) - LOAD_KEYS)
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r} for kind = \"load\" (known: {', '.join(sorted(LOAD_KEYS))})")
    if not isinstance(data.get("network"), str):
        raise UserError(f"{path}: 'network' must be given as a string")
    worstcase = data.get("worstcase", False)
    if not isinstance(worstcase, bool):
        raise UserError(f"{path}: 'worstcase' must be true or false")
    traffic = _string_list(data, "traffic", path) if "traffic" in data or not worstcase else []
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise UserError(f"{path}: 'seed' must be a non-negative integer")
    check_seed(seed, str(path), "seed")
    analysis = LoadAnalysis(network=data["network"], routings=_string_list(data, "routing", path),
                            traffics=traffic, worstcase=worstcase, seed=seed, name=path.stem,
                            base_dir=path.parent)
    return Scenario(path.stem, str(data.get("description", "")), None, path, analysis)


def _openloop_scenario(data: dict, path: Path) -> Scenario:
    """A ``kind = "openloop"`` scenario: a load sweep or a saturation table (SPEC §11).

    Examples
    --------
    >>> sc = load_scenario("goal_saturation")
    >>> sc.openloop.saturation, len(sc.openloop.routings)
    (True, 8)
    """
    from universal.openloop.study import OpenLoopStudy, parse_loads

    unknown = sorted(set(data) - OPENLOOP_KEYS)
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r} for kind = \"openloop\" "
                        f"(known: {', '.join(sorted(OPENLOOP_KEYS))})")
    if not isinstance(data.get("network"), str):
        raise UserError(f"{path}: 'network' must be given as a string")
    loads = data.get("loads")
    if isinstance(loads, list) and loads and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in loads):
        loads = parse_loads(",".join(str(x) for x in loads))
    elif isinstance(loads, str):
        loads = parse_loads(loads)
    elif loads is not None:
        raise UserError(f"{path}: 'loads' must be \"a:b:step\" or a list of numbers")
    saturation = data.get("saturation", False)
    if not isinstance(saturation, bool):
        raise UserError(f"{path}: 'saturation' must be true or false")
    options = _latency_options(data, path)
    if "priority" in data:  # one rule, or several (a list or comma-separated): an axis of the study
        rules = _string_list(data, "priority", path)
        rules = [part.strip() for rule in rules for part in rule.split(",") if part.strip()]
        if not rules:
            raise UserError(f"{path}: 'priority' must be a name or a non-empty list of names")
        options["priority"] = rules[0] if len(rules) == 1 else rules
    for key, kind in (("injection", str), ("units", str), ("bandwidth", int), ("vcs", int), ("window", int),
                      ("tolerance", float), ("source_queue", str), ("vc_buffer", str)):
        if key in data:
            ok = isinstance(data[key], (int, float) if kind is float else kind)
            if not ok or isinstance(data[key], bool):
                what = {str: "a name", int: "an integer", float: "a number"}[kind]
                raise UserError(f"{path}: '{key}' must be {what}")
            options[key] = data[key]
    if "source_queue" in options:
        _source_queue_setting(options["source_queue"], path)
    if "vc_buffer" in options:
        from universal.engine.fifo_vcs import check_vc_buffer

        try:
            check_vc_buffer(options["vc_buffer"])
        except UserError as exc:
            raise UserError(f"{path}: {exc}") from None
    buffer = _buffer_setting(data.get("buffer", "unbounded"), path)
    if isinstance(buffer, list):
        raise UserError(f"{path}: an openloop scenario takes one buffer size")
    pairs = _string_list(data, "pairs", path) if "pairs" in data else []
    jobs = data.get("jobs", 1)
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise UserError(f"{path}: 'jobs' must be a positive integer (worker processes by default)")
    study = OpenLoopStudy(data["network"], _string_list(data, "routing", path), _string_list(data, "traffic", path),
                          loads=loads, saturation=saturation, buffer=buffer, pairs=pairs,
                          seeds=seeds_from(data.get("seeds", 1), data.get("seed", 0), str(path)),
                          name=path.stem, base_dir=path.parent, jobs=jobs, **options)
    return Scenario(path.stem, str(data.get("description", "")), None, path, openloop=study)


def _latency_options(data: dict, path: Path) -> dict:
    """The keys of ``--histogram``, ``--router-delay``, ``--pool-translates``, ``--worst-case`` and
    ``--random-perms`` in an open-loop scenario, checked as the command line checks them (what they
    need, a load sweep and pairs, or saturation, is checked with the study).

    Examples
    --------
    >>> _latency_options({"histogram": True, "router_delay": 2}, Path("s.toml"))
    {'histogram': True, 'router_delay': 2}
    >>> _latency_options({"router_delay": -1}, Path("s.toml"))
    Traceback (most recent call last):
    ...
    universal.errors.UserError: s.toml: router delay -1: expected a whole number of steps per hop from 0 to 10,000
    """
    from universal.openloop.histograms import check_router_delay

    options = {}
    for key in ("histogram", "pool_translates", "worst_case", "screen_perms"):
        if key in data:
            if not isinstance(data[key], bool):
                raise UserError(f"{path}: '{key}' must be true or false")
            options[key] = data[key]
    if "random_perms" in data:
        count = data["random_perms"]
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise UserError(f"{path}: 'random_perms' must be a whole number >= 0 (random permutations for the "
                            "worst case)")
        options["random_perms"] = count
    if "router_delay" in data:
        try:
            options["router_delay"] = check_router_delay(data["router_delay"])
        except UserError as exc:
            raise UserError(f"{path}: {exc}") from None
    return options


def _design_scenario(data: dict, path: Path) -> Scenario:
    """A ``kind = "design"`` scenario: tradeoff curves and the named algorithms (SPEC §10).

    Examples
    --------
    >>> sc = load_scenario("tdb_tradeoff")
    >>> sc.design.network, sc.design.objectives
    ('torus:k=8,n=2', ['worst-case', 'average-case'])
    """
    unknown = sorted(set(data) - DESIGN_KEYS)
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r} for kind = \"design\" (known: {', '.join(sorted(DESIGN_KEYS))})")
    if not isinstance(data.get("network"), str):
        raise UserError(f"{path}: 'network' must be given as a string")
    objectives = _string_list(data, "objectives", path) if "objectives" in data else ["worst-case", "average-case"]
    bad = [o for o in objectives if o not in ("worst-case", "average-case", "capacity")]
    if bad:
        raise UserError(f"{path}: unknown objective {bad[0]!r} (known: worst-case, average-case, capacity)")
    paths = data.get("paths", "all")
    if paths not in ("all", "minimal", "2turn"):
        raise UserError(f"{path}: 'paths' must be all, minimal or 2turn")
    numbers = {}
    for key, default, low in (("points", 8, 2), ("samples", 100, 1), ("seed", 0, 0)):
        value = data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise UserError(f"{path}: '{key}' must be an integer >= {low}")
        numbers[key] = value
    study = DesignStudy(data["network"], objectives, paths, name=path.stem, **numbers)
    return Scenario(path.stem, str(data.get("description", "")), None, path, design=study)


def _adversary_scenario(data: dict, path: Path) -> Scenario:
    """A ``kind = "adversary"`` scenario: Theorem 25's adversary over dimensions and congestions.

    Examples
    --------
    >>> sc = load_scenario("adversary_growth")
    >>> sc.adversary.protocols
    ['fifo', 'farthest-to-go']
    """
    unknown = sorted(set(data) - ADVERSARY_KEYS)
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r} for kind = \"adversary\" "
                        f"(known: {', '.join(sorted(ADVERSARY_KEYS))})")
    grid = {}
    for key in ("dims", "congestion"):
        value = data.get(key)
        if not isinstance(value, list) or not value or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value):
            raise UserError(f"{path}: '{key}' must be a non-empty list of integers >= 1")
        grid[key] = value
    seeds = data.get("seeds", 5)
    seed = data.get("seed", 0)
    for key, value, low in (("seeds", seeds, 1), ("seed", seed, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise UserError(f"{path}: '{key}' must be an integer >= {low}")
    check_seed_count(seeds, str(path))
    check_seed(seed + seeds, str(path), "seed")
    study = AdversaryStudy(grid["dims"], grid["congestion"], _string_list(data, "protocols", path),
                           seeds=list(range(seed + 1, seed + 1 + seeds)), seed=seed, name=path.stem)
    study.check()
    return Scenario(path.stem, str(data.get("description", "")), None, path, adversary=study)
