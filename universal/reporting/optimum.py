"""Tables and JSON for the offline optimum (``optimum`` and ``routing-number`` commands)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from universal.optimum import OptimumResult, Schedule
from universal.optimum.routing_number import RoutingNumberResult


def schedule_steps(schedule: Schedule) -> list[list[dict]]:
    """Per step, the crossings ``{"packet", "link"}`` (link as ``tail->head``), by packet id.

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import build_network
    >>> from universal.optimum import replay
    >>> from universal.paths import PathCollection
    >>> paths = PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2], [1, 2]])
    >>> schedule_steps(replay(paths, np.array([1, 2, 1]), 1))[1]
    [{'packet': 0, 'link': '1->2'}]
    """
    net = schedule.collection.network
    return [[{"packet": p, "link": net.link_label(link)} for p, link in step] for step in schedule.moves()]


def optimum_json(result: OptimumResult, header: dict, with_schedule: bool) -> dict:
    """The ``optimum --json`` object: what was solved, the bounds and (optionally) the schedule.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.optimum import optimum
    >>> from universal.paths import PathCollection
    >>> res = optimum(PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2]] * 2))
    >>> data = optimum_json(res, {"problem": "two on a line"}, with_schedule=True)
    >>> data["opt"], data["opt_status"], len(data["schedule"]), data["paths_used"]
    (3, 'optimal', 3, [[0, 1, 2], [0, 1, 2]])
    """
    out = {**header, **result.summary(), "gap": round(result.gap, 4), "hint": result.hint,
           "hint_source": result.hint_source}
    if result.extra.get("infeasible") is not None:
        out["infeasible_horizons"] = result.extra["infeasible"]
    if with_schedule:
        out["schedule"] = schedule_steps(result.schedule)
        out["paths_used"] = [result.schedule.collection.node_path(i) for i in range(result.schedule.collection.size)]
    return out


def _value(lower: int, upper: int, status: str) -> str:
    return str(upper) if status == "optimal" else f"[{lower}, {upper}]"


def print_optimum(result: OptimumResult, header: dict, console: Console, with_schedule: bool) -> None:
    """A one-row table of the instance and its optimum, then (optionally) the schedule step by step.

    Examples
    --------
    >>> import io
    >>> from universal.networks import build_network
    >>> from universal.optimum import optimum
    >>> from universal.paths import PathCollection
    >>> res = optimum(PathCollection.from_node_paths(build_network("mesh:k=3,n=1"), [[0, 1, 2]] * 2))
    >>> out = io.StringIO()
    >>> header = {"network": "mesh:k=3,n=1", "problem": "two", "paths": "explicit", "n": 2, "C": 2, "D": 2}
    >>> print_optimum(res, header, Console(file=out, width=100), with_schedule=True)
    >>> out.getvalue().splitlines()[-1]
    'step   3: #1 1->2'
    """
    free = header.get("paths") == "free"
    what = "R(G, π) (free paths)" if free else "OPT"
    table = Table(title=f"{what}: {header['problem']} on {header['network']}", header_style="bold",
                  caption=_caption(result, free))
    cells = {"paths": header["paths"], "n": str(header["n"])}
    if not free:
        cells.update(C=str(header["C"]), D=str(header["D"]))
    cells.update({"LB": str(result.lower_bound), "greedy T": str(result.hint),
                  what.split(" ")[0]: _value(result.lower, result.upper, result.status),
                  "status": result.status, "gap": f"{100 * result.gap:.1f}%", "seconds": f"{result.seconds:.2f}"})
    for name in cells:
        table.add_column(name, justify="left" if name in ("paths", "status") else "right")
    table.add_row(*cells.values())
    console.print(table)
    if with_schedule:
        console.print(f"Schedule of {result.upper} steps (replayed and checked: every packet follows its path in "
                      f"order, at most B = {result.schedule.bandwidth} per link per step):")
        for step, moves in enumerate(schedule_steps(result.schedule), start=1):
            console.print(_step_line(step, moves))


def _step_line(step: int, moves: list[dict]) -> str:
    """``step   2: #1 0,0->0,1  #2 1,0->0,0`` (packet id, then the link it crosses)."""
    return f"step {step:>3}: " + "  ".join(f"#{m['packet']} {m['link']}" for m in moves)


def _caption(result: OptimumResult, free: bool) -> str:
    bound = "LB = the longest distance" if free else "LB = max(ceil(C/B), D)"
    line = (f"{bound}; greedy T: the best protocol's schedule ({result.hint_source}), the solver's start; "
            f"gap: (upper - lower) / upper")
    if result.status != "optimal":
        line += "\nthe time limit ended the search: OPT lies in [lower, upper]"
    return line


def routing_number_json(result: RoutingNumberResult, network, bandwidth: int, with_schedule: bool) -> dict:
    """The ``routing-number --json`` object.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.optimum.routing_number import routing_number
    >>> net = build_network("mesh:k=3,n=1")
    >>> data = routing_number_json(routing_number(net), net, 1, with_schedule=False)
    >>> data["R"], data["permutation"], data["classes"]
    (2, ['1', '2', '0'], 4)
    """
    out = {"network": network.summary(), "bandwidth": bandwidth, "R": result.upper if result.status == "optimal"
           else None, "R_lower": result.lower, "R_upper": result.upper, "status": result.status,
           "permutation": [network.label_of(v) for v in result.permutation], "classes": result.classes,
           "automorphisms": result.automorphisms, "exact_solves": result.exact_solves,
           "seconds": round(result.seconds, 3), "unsettled": result.unsettled}
    if with_schedule:
        out["schedule"] = schedule_steps(result.schedule)
    return out


def print_routing_number(result: RoutingNumberResult, network, bandwidth: int, console: Console,
                         with_schedule: bool) -> None:
    """R(G) with the attaining permutation, then (optionally) its optimal schedule.

    Examples
    --------
    >>> import io
    >>> from universal.networks import build_network
    >>> from universal.optimum.routing_number import routing_number
    >>> net, out = build_network("mesh:k=3,n=1"), io.StringIO()
    >>> print_routing_number(routing_number(net), net, 1, Console(file=out, width=100), with_schedule=False)
    >>> out.getvalue().splitlines()[-1]
    'A permutation that needs 2 steps: 0->1, 1->2, 2->0'
    """
    table = Table(title=f"Routing number of {network.name} (B = {bandwidth})", header_style="bold",
                  caption="classes: permutations up to the network's automorphisms; exact: classes that needed "
                          "the exact model (the others were settled by a schedule of at most the current R)")
    for name in ("nodes", "automorphisms", "classes", "exact", "R(G)", "status", "seconds"):
        table.add_column(name, justify="right")
    table.add_row(str(network.num_nodes), str(result.automorphisms), str(result.classes), str(result.exact_solves),
                  _value(result.lower, result.upper, result.status), result.status, f"{result.seconds:.1f}")
    console.print(table)
    perm = ", ".join(f"{network.label_of(v)}->{network.label_of(w)}" for v, w in enumerate(result.permutation)
                     if v != w)
    console.print(f"A permutation that needs {result.lower} steps: {perm}")
    if with_schedule:
        for step, moves in enumerate(schedule_steps(result.schedule), start=1):
            console.print(_step_line(step, moves))
