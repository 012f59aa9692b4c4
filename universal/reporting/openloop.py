"""Rich tables for ``universal openloop`` and ``kind = "openloop"`` scenarios: a load sweep
(latency, α* and α' per offered load) or a saturation table (simulated Θ beside the exact
capacity over max channel load of ``universal load``)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from universal.reporting.layout import Col, FitTable

__all__ = ["openloop_table", "print_openloop"]


def _f(x, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def openloop_table(data: dict, wide: bool = False) -> Table | FitTable:
    """The table of a study's JSON (``OpenLoopReport.to_json()``): a rich Table for saturation
    studies, a :class:`FitTable` (it picks its layout for the terminal's width) for load sweeps.

    Examples
    --------
    >>> t = openloop_table({"units": "capacity", "network": {"name": "torus:k=8,n=1"}, "rows": [
    ...     {"routing": "dor", "traffic": "tornado", "seed": 0, "saturation": 0.33, "analytic": "1/3",
    ...      "analytic_value": 1/3, "ratio": 0.99, "zero_load_latency": 3.0, "hops_mean": 3.0, "limited": False}]})
    >>> [c.header for c in t.columns][:4]
    ['routing', 'traffic', 'Θ', 'analytic']
    """
    rows = data["rows"]
    unit = "fraction of capacity" if data["units"] == "capacity" else "packets per node per step"
    seeds = len({r["seed"] for r in rows}) > 1
    rules = len({r.get("priority") for r in rows}) > 1      # several priorities: a column
    if rows and "saturation" in rows[0]:
        t = Table(title=f"Saturation throughput on {data['network']['name']} ({unit})",
                  caption=("analytic: capacity / max channel load (universal load), exact; " if data["units"] == "capacity"
                           else "analytic: B / max channel load at one packet per node and step (universal load), "
                           "exact; ") + "lat₀, hops: at offered 0.02")
        for c in (["routing", "traffic"] + (["priority"] if rules else []) + (["seed"] if seeds else [])
                  + ["Θ", "analytic", "ratio", "lat₀", "hops"]):
            t.add_column(c, justify="left" if c in ("routing", "traffic", "priority") else "right", no_wrap=True)
        for r in rows:
            sat = _f(r["saturation"]) + ("+" if r.get("limited") else "")
            t.add_row(r["routing"], r["traffic"], *([r["priority"]] if rules else []),
                      *([str(r["seed"])] if seeds else []), sat,
                      r["analytic"] or "—", _f(r["ratio"]), _f(r["zero_load_latency"], 2), _f(r["hops_mean"], 2))
        return t
    traffics = list(dict.fromkeys(r["traffic"] for r in rows))
    one = len(traffics) == 1                    # one traffic: named in the title, no column
    where = f"{traffics[0]} on " if one else ""
    cols = [Col("routing", "left", "name")] + ([] if one else [Col("traffic", "left", "name")])
    cols += [Col("priority", "left", "name")] if rules else []
    cols += [Col("seed", kind="label")] if seeds else []
    cols += [Col("offered"), Col("α*"), Col("α'"), Col("latency", folded_header="lat-\nency"),
             Col("p50", drop=1), Col("p99"), Col("hops", drop=2), Col("stable", "left", "text")]
    table_rows = []
    for r in rows:
        cells = [r["routing"], *([] if one else [r["traffic"]]), *([r["priority"]] if rules else []),
                 *([str(r["seed"])] if seeds else []),
                 _f(r["offered"]), _f(r["accepted"]), _f(r["accepted_min"]), _f(r["latency_mean"], 1),
                 _f(r["latency_p50"], 0), _f(r["latency_p99"], 0), _f(r["hops_mean"], 2),
                 "yes" if r["stable"] else ("no" if r["status"] == "unstable" else f"no: {r['status']}")]
        table_rows.append((cells, None))
    return FitTable(cols, table_rows, title=f"Open-loop runs: {where}{data['network']['name']} (rates: {unit})",
                    caption=["α*: mean accepted rate of the sending nodes; α': the smallest; latency in steps "
                             "from creation to delivery (labelled packets of stable runs)"], wide=wide)


def print_openloop(data: dict, console: Console, wide: bool = False) -> None:
    """Print the study's table (``wide``: leave no column out to fit the terminal)."""
    console.print(openloop_table(data, wide=wide))
    if data.get("pairs"):
        t = Table(title="Latency of single pairs (labelled packets)")
        rules = len({p.get("priority") for p in data["pairs"]}) > 1
        for c in ("routing", "traffic") + (("priority",) if rules else ()) + ("offered", "pair", "latency", "hops",
                                                                              "packets"):
            t.add_column(c, justify="left" if c in ("routing", "traffic", "priority", "pair") else "right")
        for p in data["pairs"]:
            t.add_row(p["routing"], p["traffic"], *([p["priority"]] if rules else []), _f(p["offered"]), p["pair"], _f(p["latency_mean"], 2),
                      _f(p["hops_mean"], 2), str(p["packets"]))
        console.print(t)
    limited = [r for r in data["rows"] if r.get("limited")]
    if limited:
        if str(data.get("injection", "")).startswith("poisson"):
            console.print("+: every rate up to the one that fills all of a node's links was stable "
                          "(saturation is at least this)")
        else:
            console.print("+: the injection process could offer no more and every rate was stable "
                          "(saturation is at least this; try --injection poisson)")
    if data.get("results_file"):
        resumed = data.get("resumed_cells", 0)
        console.print(f"results: {data['results_file']}" +
                      (f" ({resumed} cells read back, {len(data['rows']) - resumed} computed)" if resumed else ""),
                      style="dim", markup=False, highlight=False)
