"""Per-link loads as a plain text file (``route --links FILE``, ``load --links FILE``).

One line per directed link, ``tail head load``, with node labels as the network names them
(``3,1`` on tori and meshes) and ``#`` comment lines saying what the loads are: the format of
the tool's other data files (SPEC §8), read back by any whitespace-splitting reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from universal.datafiles import write_atomically
from universal.errors import UserError
from universal.networks import Network

if TYPE_CHECKING:
    from universal.experiment import ExperimentResult
    from universal.load_analysis import LoadReport


def link_lines(network: Network, loads: np.ndarray, number_format: str = "{}") -> list[str]:
    """``tail head load`` for every link of ``network``, in link order.

    Parameters
    ----------
    network : Network
    loads : ndarray
        One load per link of ``network``.
    number_format : str
        How a load is written (``"{}"`` for counts, ``"{:.10g}"`` for expected loads).

    Returns
    -------
    list of str

    Examples
    --------
    >>> from universal.networks import build_network
    >>> net = build_network("hypercube:d=1")
    >>> link_lines(net, np.array([2, 0]))
    ['0 1 2', '1 0 0']
    """
    if len(loads) != network.num_links:
        raise ValueError(f"{len(loads)} loads for the {network.num_links} links of {network.name}")
    labels = [network.label_of(v) for v in range(network.num_nodes)]
    return [f"{labels[t]} {labels[h]} {number_format.format(x)}"
            for t, h, x in zip(network.link_tail.tolist(), network.link_head.tolist(), loads.tolist())]


def experiment_link_lines(result: "ExperimentResult") -> list[str]:
    """The loads of every path collection of a run made with ``keep_link_loads=True``: one block
    per collection (problem, seed, path system), each led by a comment line naming it.

    Examples
    --------
    >>> from universal.experiment import Experiment, run_experiment
    >>> res = run_experiment(Experiment("hypercube:d=2", "permutation:bit-complement", ["dimension-order"],
    ...                                 ["fifo"]), keep_link_loads=True)
    >>> experiment_link_lines(res)[:3]
    ['# permutation:bit-complement, seed 0, dimension-order paths on hypercube:d=2 (C = 1, D = 2): number of paths on each link', '# tail head load', '0 1 1']
    """
    lines: list[str] = []
    for info, (host, loads) in zip(result.collections, result.link_loads):
        lines.append(f"# {info['problem']}, seed {info['seed']}, {info['paths']} paths on {host.name} "
                     f"(C = {info['C']}, D = {info['D']}): number of paths on each link")
        lines.append("# tail head load")
        lines += link_lines(host, loads)
    return lines


def report_link_lines(report: "LoadReport") -> list[str]:
    """The expected channel loads of the report's first routing under its first traffic pattern
    that is not ``random-perms`` (the pattern the heat map of ``--plot`` draws).

    Raises
    ------
    UserError
        If the report has no such pattern.

    Examples
    --------
    >>> from universal.load_analysis import LoadAnalysis, run_load_analysis
    >>> rep = run_load_analysis(LoadAnalysis("torus:k=4,n=1", ["dor"], ["tornado"]))
    >>> report_link_lines(rep)[2:4]
    ['0 1 1', '1 0 0']
    """
    fixed = [r for r in report.loads if r.histogram is None]
    if not fixed:
        raise UserError("--links writes the loads of one traffic pattern: give one besides random-perms")
    row = fixed[0]
    network, loads = _channel_loads(report, row.routing, row.traffic)
    return [f"# {row.routing} under {row.traffic} on {network.name}: expected load of each link "
            f"(packets per cycle per unit of injection; the busiest carries {float(loads.max()):.6g})",
            "# tail head load", *link_lines(network, loads, "{:.10g}")]


def _channel_loads(report: "LoadReport", routing: str, traffic: str) -> tuple[Network, np.ndarray]:
    """The network and the load of each of its links (torus channels mapped onto its links)."""
    from universal.oblivious.graphs import graph_link_loads, graph_pair_loads, graph_traffic

    net = report.graph
    if report.torus is None:
        return net, graph_link_loads(graph_pair_loads(net, routing), graph_traffic(net, traffic))
    from universal.oblivious import channel_loads, make_traffic, pair_loads

    torus = report.torus
    pattern = make_traffic(torus, traffic)
    matrix = pattern.matrix
    if matrix is None:
        matrix = np.zeros((torus.N, torus.N))
        matrix[np.arange(torus.N), pattern.perm] = 1.0
    by_class = channel_loads(pair_loads(routing, torus), matrix)
    loads = np.zeros(net.num_links)
    for (dim, sign), per_tail in by_class.items():
        tails = np.arange(torus.N)
        heads = np.array([torus.channel_ends(int(c))[1] for c in torus.channel(tails, dim, sign)])
        loads[net.links_between(tails, heads)] = per_tail
    return net, loads


def write_links(path: str | Path, lines: list[str]) -> Path:
    """Write the lines atomically (see :func:`universal.output_files.write_atomically`).

    Examples
    --------
    >>> import tempfile
    >>> write_links(Path(tempfile.mkdtemp()) / "links.txt", ["# tail head load", "0 1 2"]).read_text()
    '# tail head load\\n0 1 2\\n'
    """
    return write_atomically(path, "\n".join(lines) + "\n")
