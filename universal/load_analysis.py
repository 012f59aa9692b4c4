"""The load analysis behind ``universal load``, ``universal worstcase`` and ``kind = "load"``
scenarios (SPEC §7, §8): a thin layer over :mod:`universal.oblivious` that parses the network
name, runs the tables and the exact worst case, and writes worst permutations to files.

Only ``torus:k=,n=`` networks are analysed so far.

Examples
--------
>>> report = run_load_analysis(LoadAnalysis("torus:k=9,n=2", ["dor"], ["tornado"], worstcase=True))
>>> round(report.loads[0].throughput, 3), str(report.worst[0].max_load_exact)
(0.278, '4')

References
----------
B. Towles, "Finding worst-case permutations for oblivious routing algorithms" (Table 1);
B. Towles, W. J. Dally and S. Boyd, "Throughput-centric routing algorithm design" (SPAA 2003).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from universal.errors import UserError
from universal.networks import NETWORKS, resolve_path
from universal.oblivious import (LoadResult, Torus, WorstCaseResult, focus_classes, get_routing,
                                 load_table, make_traffic, worst_case)
from universal.registry import check_known_params, parse_spec, take_int

__all__ = ["LoadAnalysis", "LoadReport", "torus_from_network", "run_load_analysis", "progress_total",
           "permutation_paths", "write_permutation_file"]

Progress = Callable[[int], object] | None

#: Largest M x N of ``random-perms:M`` (the permutations are held as an M x N int64 array, twice).
MAX_PERM_ENTRIES = 50_000_000


@dataclass
class LoadAnalysis:
    """What to analyse. Strings are the registered names of SPEC §8.

    Attributes
    ----------
    network : str
        ``torus:k=K,n=N``.
    routings : list of str
        Oblivious routings (``dor``, ``val``, ``romm``, ``rlb``, ``rlbth``, ``ival``).
    traffics : list of str
        Traffic patterns for the load table (may be empty when only the worst case is wanted).
    worstcase : bool
        Also find the exact worst-case permutation of every routing.
    seed : int
        Seed of the random permutations (``random-perms:M``).
    name : str
        Scenario name, if any.
    base_dir : Path or None
        Folder that relative ``matrix:file=`` names resolve against (a scenario's folder).
    """

    network: str
    routings: Sequence[str]
    traffics: Sequence[str] = ()
    worstcase: bool = False
    seed: int = 0
    name: str = ""
    base_dir: Path | None = None


@dataclass
class LoadReport:
    """Results of a :class:`LoadAnalysis`.

    Attributes
    ----------
    name : str
        Scenario name ("" for the ad-hoc commands).
    torus : Torus
    network : dict
        ``{name, nodes, links}`` of the network analysed.
    loads : list of LoadResult
        Routing-major rows of the load table.
    worst : list of WorstCaseResult
        One per routing when the worst case was asked for.
    seed : int
    """

    name: str
    torus: Torus
    network: dict
    loads: list[LoadResult] = field(default_factory=list)
    worst: list[WorstCaseResult] = field(default_factory=list)
    seed: int = 0

    @property
    def capacity_load(self) -> Fraction:
        """Uniform per-channel load under minimal balanced routing (throughput 1 = this load)."""
        return self.torus.capacity_load

    def to_json(self) -> dict:
        """The ``--json`` object: ``network``, ``capacity_load`` and ``rows``.

        ``rows`` holds the load rows when a load table was computed, else the worst-case rows;
        when both were computed (a scenario), the worst-case rows are under ``worstcase``.
        """
        out: dict = {}
        if self.name:
            out["scenario"] = self.name
        out.update(network=self.network, capacity_load=float(self.capacity_load),
                   capacity_load_exact=str(self.capacity_load))
        worst = [w.as_dict() for w in self.worst]
        if self.loads:
            out["seed"] = self.seed
            out["rows"] = [r.as_dict() for r in self.loads]
            if worst:
                out["worstcase"] = worst
        else:
            out["rows"] = worst
        return out


def torus_from_network(text: str) -> Torus:
    """The :class:`Torus` named by ``torus:k=K,n=N``; any other network is a UserError.

    Parameters
    ----------
    text : str
        A network name of SPEC §8.

    Returns
    -------
    Torus

    Examples
    --------
    >>> torus_from_network("torus:k=9,n=2").N
    81
    """
    spec = parse_spec(text)
    if spec.name != "torus":
        NETWORKS.entry(spec.name)          # an unknown name gets the registry's own message
        raise UserError(f"the load analysis supports only tori so far (torus:k=,n=), not {text!r}")
    check_known_params(spec, {"k", "n"})
    return Torus(take_int(spec, "k"), take_int(spec, "n"))   # Torus explains k >= 3, n >= 1


def _resolve_traffic(text: str, base_dir: Path | None) -> str:
    """The traffic name with a relative ``file=`` resolved against ``base_dir``."""
    spec = parse_spec(text)
    if "file" in spec.params and base_dir is not None:
        return text.replace(spec.params["file"], str(resolve_path(spec.params["file"], base_dir)))
    return text


def _check_size(torus: Torus, count: int, traffic: str) -> None:
    """Refuse ``random-perms:M`` whose permutations would not fit in memory (before drawing them)."""
    if count * torus.N > MAX_PERM_ENTRIES:
        raise UserError(f"{traffic} on {torus.name} needs {count:,} x {torus.N:,} permutation entries, more "
                        f"than this tool handles ({MAX_PERM_ENTRIES:,}); ask for fewer permutations")


def progress_total(analysis: LoadAnalysis, torus: Torus) -> int:
    """Work units the progress callback of :func:`run_load_analysis` will be advanced by.

    Per routing: N for tabulating its pair loads and one per random permutation (load table),
    and N plus one per focus channel (worst case).
    """
    random_perms = sum(make_traffic(torus, _resolve_traffic(t, analysis.base_dir)).count
                       for t in analysis.traffics if parse_spec(t).name == "random-perms")
    total = 0
    for routing in analysis.routings:
        if analysis.traffics:
            total += torus.N + random_perms
        if analysis.worstcase:
            total += torus.N + len(focus_classes(routing, torus.n))
    return total


def run_load_analysis(analysis: LoadAnalysis, progress: Progress = None) -> LoadReport:
    """Run the load table and/or the exact worst case of ``analysis``.

    Parameters
    ----------
    analysis : LoadAnalysis
    progress : callable or tqdm-like, optional
        Advanced in work units (see :func:`progress_total`).

    Returns
    -------
    LoadReport

    Raises
    ------
    UserError
        Unknown routing or traffic, a network that is not a torus, parameters out of range.

    Examples
    --------
    >>> rep = run_load_analysis(LoadAnalysis("torus:k=8,n=2", ["val"], ["tornado"]))
    >>> rep.loads[0].throughput, rep.loads[0].locality
    (0.5, 2.0)
    """
    torus = torus_from_network(analysis.network)
    if not analysis.routings:
        raise UserError("name at least one routing")
    if not analysis.traffics and not analysis.worstcase:
        raise UserError("name at least one traffic pattern (or ask for the worst case)")
    for routing in analysis.routings:
        get_routing(routing)
    traffics = [_resolve_traffic(t, analysis.base_dir) for t in analysis.traffics]
    for t in traffics:                       # every name checked before any long computation
        _check_size(torus, make_traffic(torus, t).count, t)
    network = {"name": torus.name, "nodes": torus.N, "links": torus.num_channels}
    report = LoadReport(analysis.name, torus, network, seed=analysis.seed)
    if traffics:
        report.loads = load_table(torus.k, torus.n, list(analysis.routings), traffics,
                                  np.random.default_rng(analysis.seed), progress=progress)
    if analysis.worstcase:
        report.worst = [worst_case(torus.k, torus.n, r, progress=progress) for r in analysis.routings]
    return report


def permutation_paths(path: str | Path, routings: Sequence[str]) -> dict[str, Path]:
    """Where ``--permutation-file PATH`` writes each routing's worst permutation.

    One routing writes ``PATH`` itself; several write ``STEM.ROUTING.SUFFIX`` next to it.
    The folder must exist (checked here, before the long computation).

    Examples
    --------
    >>> {r: p.name for r, p in permutation_paths("/tmp/worst.txt", ["dor", "romm"]).items()}
    {'dor': 'worst.dor.txt', 'romm': 'worst.romm.txt'}
    """
    path = Path(path).expanduser()
    if not path.parent.is_dir():
        raise UserError(f"cannot write {str(path)!r}: folder {str(path.parent)!r} does not exist")
    if path.is_dir():
        raise UserError(f"cannot write {str(path)!r}: it is a folder")
    if len(routings) == 1:
        return {routings[0]: path}
    return {r: path.with_name(f"{path.stem}.{get_routing(r).name}{path.suffix}") for r in routings}


def write_permutation_file(path: str | Path, result: WorstCaseResult) -> Path:
    """Write ``result.permutation`` atomically in the ``permutation:file=`` format.

    Line ``i`` (after ``#`` comments) holds the destination id of source id ``i``. The text goes
    to a temporary file in the same folder, which then replaces ``path`` (``os.replace``), so a
    reader never sees a half-written file.

    Parameters
    ----------
    path : str or Path
    result : WorstCaseResult

    Returns
    -------
    Path
        The file written.
    """
    path = Path(path).expanduser()
    header = (f"# worst-case permutation of {result.routing} on {result.torus}: line i (after these "
              f"comments) is the destination id of source id i\n"
              f"# it loads channel {result.channel[0]}->{result.channel[1]} to {result.max_load_exact} "
              f"(throughput {result.throughput:.3f} of capacity)\n"
              f"# use it as: --problem permutation:file={path.name}\n")
    text = header + "".join(f"{int(d)}\n" for d in result.permutation)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise UserError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
