"""Rich tables for ``universal openloop`` and ``kind = "openloop"`` scenarios: a load sweep
(latency, α* and α' per offered load) or a saturation table (simulated Θ beside the exact
capacity over max channel load of ``universal load``)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from universal.reporting.layout import Col, FitTable

__all__ = ["openloop_table", "print_openloop", "latency_histograms", "histogram_table", "permutation_tables",
           "pairs_table", "worst_case_table", "screen_table"]


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
        rows = [r for r in rows if "permutation" not in r and "screened" not in r]  # random-perms:M: apart
        t = Table(title=f"Saturation throughput on {data['network']['name']} ({unit}{router_setting(data)})",
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
    return FitTable(cols, table_rows,
                    title=f"Open-loop runs: {where}{data['network']['name']} (rates: {unit}{router_setting(data)})",
                    caption=["α*: mean accepted rate of the sending nodes; α': the smallest; latency in steps "
                             "from creation to delivery (labelled packets of stable runs)"], wide=wide)


def router_setting(data: dict) -> str:
    """What a study's routers had beyond the ideal network's unbounded link buffers, for a title:
    ``; B=2, b=8, V=6`` (packets per link and step, per buffer or VC, VCs per link); empty
    for the defaults. CHAOS has no VCs: its b places per input link and its shared queue of S
    places per node are named apart (``chaos: b=8, S=160``), alone when it is the only routing.

    Examples
    --------
    >>> router_setting({"bandwidth": 1, "buffer": 8, "vcs": 6}), router_setting({"bandwidth": 1, "buffer": None})
    ('; b=8, V=6', '')
    >>> router_setting({"bandwidth": 1, "buffer": 8, "vcs": 6, "shared_queues": {"chaos": 160},
    ...                 "rows": [{"routing": "chaos"}, {"routing": "goal"}]})
    '; b=8, V=6; chaos: b=8, no VCs, shared queue S=160'
    >>> router_setting({"bandwidth": 1, "buffer": 8, "vcs": 6, "shared_queues": {"chaos": 160},
    ...                 "rows": [{"routing": "chaos"}]})
    '; b=8, no VCs, shared queue S=160'
    >>> router_setting({"bandwidth": 1, "buffer": None, "rows": [{"routing": "dor", "priority": "injection-age"}]})
    '; priority injection-age'
    """
    parts = [f"B={data['bandwidth']}"] if data.get("bandwidth", 1) != 1 else []
    parts += [f"b={data['buffer']}"] if data.get("buffer") is not None else []
    queues = data.get("shared_queues") or {}
    sq = data.get("source_queue", "all")
    fifo = [] if sq == "all" else ["FIFO source queues" + ("" if sq == "fifo" else f" (window {sq[7:]})")]
    fifo += ["FIFO VCs"] if data.get("vc_buffer", "set") != "set" else []
    # one rule for every row and not the default: named here (several get a column of their own)
    rules = {r.get("priority") for r in data.get("rows", [])}
    fifo += [f"priority {rules.pop()}"] if len(rules) == 1 and not rules & {None, "age"} else []
    if queues and {r["routing"] for r in data.get("rows", [])} <= set(queues):   # CHAOS alone: no VCs to name
        return "; " + ", ".join(parts + [_queue(queues)] + fifo)
    parts += [f"V={data['vcs']}"] if data.get("vcs", 1) != 1 else []
    parts += fifo
    text = "; " + ", ".join(parts) if parts else ""
    for name, size in queues.items():
        text += f"; {name}: " + ", ".join(([f"b={data['buffer']}"] if data.get("buffer") is not None else [])
                                          + [_queue({name: size})])
    return text


def _queue(queues: dict) -> str:
    """CHAOS's shared queue, for a title (one size, or the sizes of several CHAOS routings)."""
    sizes = sorted(set(queues.values()))
    return "no VCs, shared queue S=" + "/".join(str(x) for x in sizes)


#: Widest bar of a histogram table, in characters (the table stays within 80 columns).
BAR_WIDTH = 36
#: Width of a histogram table: its columns (latency, packets, share, bar) and borders.
HISTOGRAM_WIDTH = 9 + 9 + 7 + BAR_WIDTH + 2 + 5


def _bar(count: int, most: int) -> str:
    return "█" * (round(BAR_WIDTH * count / most) if most else 0)


def _merged(hists: list[dict]) -> dict | None:
    """Histograms of several seeds as one (bins aligned on the widest width; None if there are none)."""
    hists = [h for h in hists if h is not None and h["packets"]]
    if not hists:
        return None
    if len(hists) == 1:
        return hists[0]
    start = min(h["start"] for h in hists)
    width = max(h["width"] for h in hists)
    counts: dict[int, int] = {}
    for h in hists:
        for i, c in enumerate(h["counts"]):
            if c:
                at = (h["start"] + i * h["width"] - start) // width
                counts[at] = counts.get(at, 0) + c
    top = max(counts)
    return {"start": start, "width": width, "counts": [counts.get(i, 0) for i in range(top + 1)],
            "packets": sum(counts.values())}


def latency_histograms(data: dict) -> list[dict]:
    """The latency histograms of a load sweep's JSON, seeds pooled: one per (routing, traffic,
    priority, offered load) for all labelled packets and one per named pair.

    Parameters
    ----------
    data : dict
        ``OpenLoopReport.to_json()`` of a study run with ``histogram``.

    Returns
    -------
    list of dict
        ``routing``, ``traffic``, ``priority``, ``offered``, ``what`` (``"all"`` or the pair),
        ``seeds`` (how many were pooled) and ``histogram`` (None when no run was stable).

    Examples
    --------
    >>> h = {"start": 4, "width": 1, "counts": [3, 1], "packets": 4}
    >>> row = dict(routing="dor", traffic="uniform", priority="age", offered=0.2, seed=0, histogram=h)
    >>> [x["histogram"]["counts"] for x in latency_histograms({"rows": [row, {**row, "seed": 1}]})]
    [[6, 2]]
    """
    groups: dict[tuple, list] = {}
    for r in data["rows"]:
        if "histogram" in r:
            groups.setdefault((r["routing"], r["traffic"], r["priority"], r["offered"], "all"), []).append(r)
    for p in data.get("pairs", []):
        if "histogram" in p:
            groups.setdefault((p["routing"], p["traffic"], p["priority"], p["offered"], p["pair"]), []).append(p)
    return [{"routing": k[0], "traffic": k[1], "priority": k[2], "offered": k[3], "what": k[4],
             "seeds": len(v), "translates": v[0].get("translates", 1),
             "histogram": _merged([x["histogram"] for x in v])} for k, v in groups.items()]


def _who(h: dict) -> str:
    """What a histogram counts: all labelled packets, one pair, or a pair and its translates."""
    if h["what"] == "all":
        return "all labelled packets"
    more = h.get("translates", 1) - 1
    return f"pair {h['what']}" + (f" + {more} translates" if more > 0 else "")


def histogram_table(h: dict, delay: int = 0) -> Table:
    """One latency histogram (an item of :func:`latency_histograms`) as a table of at most 20
    bins and a tail bin, each with its packets, share and a bar; at most 80 columns wide."""
    from universal.openloop.histograms import display_bins

    hist = h["histogram"]
    rule = "" if h["priority"] == "age" else f" ({h['priority']})"
    head = f"Latency, {h['routing']}{rule} on {h['traffic']} at {h['offered']:g}:"
    tail = _who(h) + (f" ({h['seeds']} seeds)" if h["seeds"] > 1 else "")
    title = f"{head} {tail}" if len(head) + len(tail) < HISTOGRAM_WIDTH else f"{head}\n{tail}"  # one line if it fits
    pooled = f" of {h['translates']:,} pairs" if h.get("translates", 1) > 1 else ""
    t = Table(title=title, caption=f"{hist['packets']:,} packets{pooled}\nlatency: steps from creation to delivery"
              f"{f' (+{delay} per hop)' if delay else ''}" if hist else "no stable run: no latency to show")
    for c, j in (("latency", "right"), ("packets", "right"), ("share", "right"), ("", "left")):
        t.add_column(c, justify=j, no_wrap=True)
    bins = display_bins(hist) if hist else []
    most = max((c for _, _, c in bins), default=0)
    for low, high, count in bins:
        label = f"≥ {low}" if high is None else (str(low) if high == low else f"{low}-{high}")
        t.add_row(label, f"{count:,}", f"{100 * count / hist['packets']:.1f}%", _bar(count, most))
    return t


def permutation_tables(data: dict) -> list[Table]:
    """Saturation throughput over the random permutations of ``random-perms:M``: the summary
    (min, mean, max beside the exact analysis's) and a histogram per routing and traffic
    (Singh, Dally, Gupta & Towles 2003, Figures 9 and 10)."""
    from universal.openloop.histograms import theta_bins

    summary = data.get("random_perms") or []
    if not summary:
        return []
    unit = "fraction of capacity" if data["units"] == "capacity" else "packets per node per step"
    rules = len({s["priority"] for s in summary}) > 1
    seeds = len({s["seed"] for s in summary}) > 1
    exact = any(s["analytic_min"] is not None for s in summary)
    traffics = list(dict.fromkeys(s["traffic"] for s in summary))
    one = len(traffics) == 1                   # one traffic: named in the title, no column
    t = Table(title=f"Saturation throughput Θ of {traffics[0] if one else 'random permutations'} on "
                    f"{data['network']['name']} ({unit})",
              caption="M: permutations; min, mean, max: simulated Θ" + (
                  "; exact: capacity / max channel load of the same permutations (universal load)" if exact else ""))
    cols = (["routing"] + ([] if one else ["traffic"]) + (["priority"] if rules else []) + (["seed"] if seeds else [])
            + ["M", "min", "mean", "max"] + (["exact\nmin", "exact\nmean"] if exact else []))
    for c in cols:
        t.add_column(c, justify="left" if c in ("routing", "traffic", "priority") else "right", no_wrap=True)
    for s in summary:
        t.add_row(s["routing"], *([] if one else [s["traffic"]]), *([s["priority"]] if rules else []),
                  *([str(s["seed"])] if seeds else []),
                  str(s["permutations"]), _f(s["min"]), _f(s["mean"]), _f(s["max"]) + ("+" if s["limited"] else ""),
                  *([_f(s["analytic_min"]), _f(s["analytic_mean"])] if exact else []))
    tables = [t]
    for s in summary:
        values = [r["saturation"] for r in data["rows"] if r.get("permutation") is not None
                  and (r["routing"], r["traffic"], r["priority"], r["seed"])
                  == (s["routing"], s["traffic"], s["priority"], s["seed"])]
        h = Table(title=f"Θ of {s['permutations']} permutations: {s['routing']}, {s['traffic']}"
                  + (f", {s['priority']}" if rules else "") + (f", seed {s['seed']}" if seeds else ""))
        for c, j in (("Θ", "right"), ("perms", "right"), ("", "left")):
            h.add_column(c, justify=j, no_wrap=True)
        bins = theta_bins(values)
        most = max(c for _, _, c in bins)
        for low, high, count in bins:
            h.add_row(f"{low:.3f}-{high:.3f}" if high > low else f"{low:.3f}", str(count), _bar(count, most))
        tables.append(h)
    return tables


#: The GOAL paper's short names of its traffic patterns (Table 2), for the worst-case table's columns.
SHORT_TRAFFIC = {"neighbor": "NN", "uniform": "UR", "bitcomp": "BC", "transpose": "TP", "tornado": "TOR",
                 "diagonal": "DIA"}


def _pattern_label(pattern: str) -> str:
    """A worst-case pattern, short: ``own WC perm``, ``perm #17 of 40``, ``TOR``.

    Examples
    --------
    >>> _pattern_label("random-perms:40#17"), _pattern_label("worst-case"), _pattern_label("tornado")
    ('perm #17 of 40', 'own WC perm', 'TOR')
    """
    if pattern == "worst-case":
        return "own WC perm"
    if pattern.startswith("random-perms") and "#" in pattern:
        name, index = pattern.split("#")
        return f"perm #{index} of {name.partition(':')[2] or 1000}"
    return SHORT_TRAFFIC.get(pattern, pattern)


def worst_case_table(data: dict) -> Table:
    """Θ of every routing on each named pattern and its worst case (``worst_case``): the lowest Θ
    simulated, the pattern that gave it and, for a routing with an exact worst case, the ideal
    network's Θ of its worst-case permutation (Singh, Dally, Gupta & Towles 2003, Figure 6).

    Examples
    --------
    >>> rows = [dict(routing="dor", traffic=t, priority="age", seed=0, saturation=x, limited=False)
    ...         for t, x in [("uniform", 0.96), ("tornado", 0.33)]]
    >>> wc = [dict(routing="dor", priority="age", seed=0, theta=0.28, pattern="worst-case", limited=False,
    ...            patterns=3, random_perms=0, exact_theta=2 / 7, worst_case_theta=0.28)]
    >>> t = worst_case_table({"units": "capacity", "network": {"name": "torus:k=8,n=2"}, "rows": rows,
    ...                       "worst_case": wc})
    >>> [c.header for c in t.columns]
    ['routing', 'UR', 'TOR', 'WC perm', 'WC', 'WC pattern', 'exact WC']
    """
    summary = data["worst_case"]
    rows = [r for r in data["rows"] if "permutation" not in r and "screened" not in r and r["traffic"] != "worst-case"]
    traffics = list(dict.fromkeys(r["traffic"] for r in rows))
    rules = len({s["priority"] for s in summary}) > 1
    seeds = len({s["seed"] for s in summary}) > 1
    theta = {(r["routing"], r["priority"], r["seed"], r["traffic"]): r for r in rows}
    unit = "fraction of capacity" if data["units"] == "capacity" else "packets per node per step"
    perms = max((s["random_perms"] for s in summary), default=0)
    own = any(s["exact_theta"] is not None for s in summary)    # some routing has an exact worst case
    t = Table(title=f"Worst case on {data['network']['name']} ({unit}{router_setting(data)})",
              caption=("WC perm: Θ on the routing's own exact worst-case permutation (Towles & Dally); " if own else "")
                      + "WC: the lowest Θ simulated, over the patterns named" + (" and that permutation" if own else "")
                      + (f", {perms:,} random permutations for the routings without one" if perms else "")
                      + (" (screened: their lowest Θ only)" if any(s.get("screened") for s in summary) else "")
                      + ("; exact WC: the ideal network's Θ of that permutation (capacity / max channel load)"
                         if own else ""))
    cols = (["routing"] + (["priority"] if rules else []) + (["seed"] if seeds else [])
            + [SHORT_TRAFFIC.get(x, x) for x in traffics] + (["WC perm"] if own else []) + ["WC", "WC pattern"]
            + (["exact WC"] if own else []))
    for c in cols:
        t.add_column(c, justify="left" if c in ("routing", "priority", "WC pattern") else "right", no_wrap=True)
    for s in summary:
        cells = []
        for x in traffics:
            r = theta.get((s["routing"], s["priority"], s["seed"], x))
            cells.append("—" if r is None else _f(r["saturation"]) + ("+" if r.get("limited") else ""))
        t.add_row(s["routing"], *([s["priority"]] if rules else []), *([str(s["seed"])] if seeds else []), *cells,
                  *([_f(s["worst_case_theta"])] if own else []), _f(s["theta"]) + ("+" if s["limited"] else ""),
                  _pattern_label(s["pattern"]), *([_f(s["exact_theta"])] if own else []))
    return t


def screen_table(data: dict) -> Table:
    """The screened worst cases (``--screen-perms``; :mod:`universal.openloop.screen`): per
    routing the lowest Θ over its M random permutations, the permutation that gave it, how many
    were searched in full and the screening passes, each as rate: permutations run / unstable.

    Examples
    --------
    >>> row = dict(routing="goal", traffic="random-perms:200", priority="age", seed=0, saturation=0.55,
    ...            screened=200, screen_permutation=17, searched={"0": 0.6, "17": 0.55}, screens=[[0.6, 199, 5]])
    >>> t = screen_table({"units": "capacity", "network": {"name": "torus:k=8,n=2"}, "rows": [row]})
    >>> [c.header for c in t.columns]
    ['routing', 'M', 'lowest Θ', 'perm', 'searched', 'screens (rate: run/unstable)']
    """
    rows = [r for r in data["rows"] if "screened" in r]
    unit = "fraction of capacity" if data["units"] == "capacity" else "packets per node per step"
    t = Table(title=f"Screened worst case of random permutations on {data['network']['name']} ({unit})",
              caption="each permutation not searched ran once stable at a rate at least the lowest Θ; the lowest "
                      "Θ is its permutation's full search; no mean or histogram (random-perms:M --saturation)")
    for c in ("routing", "M", "lowest Θ", "perm", "searched", "screens (rate: run/unstable)"):
        t.add_column(c, justify="left" if c in ("routing", "screens (rate: run/unstable)") else "right")
    for r in rows:
        t.add_row(r["routing"], f"{r['screened']:,}", _f(r["saturation"]) + ("+" if r.get("limited") else ""),
                  f"#{r['screen_permutation']}", str(len(r["searched"])),
                  ", ".join(f"{_f(rate)}: {run}/{bad}" for rate, run, bad in r["screens"]))
    return t


def pairs_table(data: dict) -> Table:
    """The latency of the named pairs; a traffic or offered load that every row shares is named in
    the title instead of a column, and pooled translates in the caption.

    Examples
    --------
    >>> p = dict(routing="dor", traffic="uniform", priority="random-rank", offered=0.2, seed=0, pair="0,0->1,3",
    ...          translates=64, latency_mean=4.4, hops_mean=4.0, packets=1012)
    >>> t = pairs_table({"pairs": [p]})
    >>> t.title, [c.header for c in t.columns]
    ('Latency of pairs: uniform at 0.2', ['routing', 'pair', 'latency', 'hops', 'packets'])
    >>> t.caption
    'each pair pooled with its 63 translates'
    """
    pairs = data["pairs"]
    many = {key: len({p.get(key) for p in pairs}) > 1 for key in ("traffic", "priority", "offered", "seed")}
    where = ("" if many["traffic"] else f" {pairs[0]['traffic']}") + ("" if many["offered"] else
                                                                       f" at {pairs[0]['offered']:g}")
    pooled = max(p.get("translates", 1) for p in pairs)
    caption = None
    if pooled > 1:
        caption = f"each pair pooled with its {pooled - 1:,} translates"
        from universal.engine.priorities import RANKED

        tied = list(dict.fromkeys(p.get("priority", "age") for p in pairs if p.get("priority", "age") not in RANKED))
        if tied:        # ties by packet id favour low-numbered sources (docs/openloop.md: pooling translates)
            caption += (f"; under {', '.join(tied)} equal keys go to the lower packet id, numbered by source node, "
                        "so translates are alike only up to those ties")
    t = Table(title=f"Latency of {'pairs' if pooled > 1 else 'single pairs'}{':' + where if where else ''}",
              caption=caption)
    cols = ["routing", *[key for key in ("traffic", "priority", "offered", "seed") if many[key]], "pair", "latency",
            "hops", "packets"]
    for c in cols:
        t.add_column(c, justify="left" if c in ("routing", "traffic", "priority", "pair") else "right")
    for p in pairs:
        cells = {"routing": p["routing"], "traffic": p["traffic"], "priority": p.get("priority", ""),
                 "offered": _f(p["offered"]), "seed": str(p.get("seed", "")), "pair": p["pair"], "latency": _f(p["latency_mean"], 2),
                 "hops": _f(p["hops_mean"], 2), "packets": f"{p['packets']:,}"}
        t.add_row(*[cells[c] for c in cols])
    return t


def print_openloop(data: dict, console: Console, wide: bool = False) -> None:
    """Print the study's table (``wide``: leave no column out to fit the terminal), the latency
    histograms of ``--histogram`` and the random permutations' Θ of ``random-perms:M``."""
    if any("permutation" not in r for r in data["rows"]) or not data["rows"]:
        console.print(openloop_table(data, wide=wide))
    if data.get("worst_case"):
        console.print(worst_case_table(data))
    if any("screened" in r for r in data["rows"]):
        console.print(screen_table(data))
    for table in permutation_tables(data):
        console.print(table)
    for h in latency_histograms(data):
        console.print(histogram_table(h, data.get("router_delay", 0)))
    if data.get("pairs"):
        console.print(pairs_table(data))
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
