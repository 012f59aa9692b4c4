"""Latency and accepted throughput against offered load for ``universal openloop --plot``
(Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003, Figure 1: the latency-load curve and the accepted-offered curve)."""

from __future__ import annotations

from pathlib import Path

from universal.reporting.plots.common import _MARKERS, _MEASURED_COLORS, _new_figure, _save

__all__ = ["plot_openloop", "plot_latency_histograms", "plot_permutation_thetas"]

#: Routing line styles; plain dots are kept for α' and the analytic saturation lines.
_LINES = ["-", "--", "-.", (0, (5, 1, 1, 1, 1, 1))]


def plot_openloop(rows: list[dict], path: str | Path, units: str = "capacity") -> list[Path]:
    """Two panels per traffic: mean latency and accepted rate (α* solid, α' dotted) against the
    offered rate, one line per routing; a vertical line (named in the legend) marks a routing's
    analytic saturation when the rows carry it (``analytic_value``).

    Parameters
    ----------
    rows : list of dict
        Sweep rows (``routing``, ``traffic``, ``offered``, ``accepted``, ``accepted_min``,
        ``latency_mean``, ``stable``; optionally ``analytic_value``).
    path : str or Path
    units : str

    Returns
    -------
    list of Path

    Examples
    --------
    >>> import tempfile, pathlib
    >>> rows = [dict(routing="dor", traffic="uniform", offered=x, accepted=x, accepted_min=x,
    ...              latency_mean=4 + x, stable=True) for x in (0.1, 0.5)]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_openloop(rows, pathlib.Path(tmp) / "o.png")[0].name
    'o.png'
    """
    traffics = list(dict.fromkeys(r["traffic"] for r in rows))
    routings = list(dict.fromkeys(r["routing"] for r in rows))
    fig = _new_figure(10, 3.4 * len(traffics))
    axes = fig.subplots(len(traffics), 2, squeeze=False)
    unit = "fraction of capacity" if units == "capacity" else "packets per node per step"
    for i, traffic in enumerate(traffics):
        lat_ax, acc_ax = axes[i]
        latencies = []
        for j, routing in enumerate(routings):
            mine = sorted((r for r in rows if r["traffic"] == traffic and r["routing"] == routing),
                          key=lambda r: r["offered"])
            if not mine:
                continue
            style = dict(color=_MEASURED_COLORS[j % len(_MEASURED_COLORS)], marker=_MARKERS[j % len(_MARKERS)],
                         linestyle=_LINES[j % len(_LINES)], markersize=4)
            stable = [r for r in mine if r["stable"] and r["latency_mean"] is not None]
            lat_ax.plot([r["offered"] for r in stable], [r["latency_mean"] for r in stable], label=routing, **style)
            latencies += [r["latency_mean"] for r in stable]
            acc_ax.plot([r["offered"] for r in mine], [r["accepted"] for r in mine], label=f"{routing} α*", **style)
            acc_ax.plot([r["offered"] for r in mine], [r["accepted_min"] for r in mine], color=style["color"],
                        linestyle=":", linewidth=1, label=f"{routing} α'")
            exact = next((r.get("analytic_value") for r in mine if r.get("analytic_value")), None)
            if exact:       # sparser dots than α' and named in the legend, so the two are told apart
                for ax in (lat_ax, acc_ax):
                    ax.axvline(exact, color=style["color"], linestyle=(0, (1, 4)), linewidth=1.2,
                               label=f"{routing} Θ, analysis")
        lat_ax.set(title=f"{traffic}: latency (stable runs)", xlabel=f"offered ({unit})",
                   ylabel=f"mean latency (steps{_log_scale(lat_ax, latencies)})")
        acc_ax.set(title=f"{traffic}: accepted", xlabel=f"offered ({unit})", ylabel=f"accepted ({unit})")
        for ax in (lat_ax, acc_ax):
            ax.grid(alpha=0.3)
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, borderaxespad=0)
    return [_save(fig, path)]


#: Latencies spanning more than this factor go on a log axis: near saturation one routing's latency
#: grows without bound and on a linear axis would flatten every other curve to the bottom.
LOG_SPAN = 5.0


def _log_scale(ax, latencies: list[float]) -> str:
    """Put the latency axis on a log scale (ticks as plain numbers: 2, 3, 5, 10, 20, ...) when the
    latencies span more than :data:`LOG_SPAN`; returns the note for the axis label."""
    positive = [x for x in latencies if x and x > 0]
    if not positive or max(positive) <= LOG_SPAN * min(positive):
        return ""
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
    plain = ScalarFormatter()
    plain.set_scientific(False)
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(NullFormatter())
    return ", log scale"


def _grid(count: int):
    """A figure of ``count`` panels, two per row, and its axes in order."""
    cols = 1 if count == 1 else 2
    rows = -(-count // cols)
    fig = _new_figure(7.5 if cols == 1 else 12, 3.2 * rows)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes[:count]


def plot_latency_histograms(histograms: list[dict], path: str | Path, delay: int = 0) -> list[Path]:
    """Latency histograms of labelled packets (Singh, Dally, Gupta & Towles, "GOAL: a
    load-balanced adaptive routing algorithm for torus networks", 2003, Figures 11-12): one panel
    per traffic, offered load and packets shown (all, or one named pair), one step line per
    routing and priority, the share of packets against latency.

    Parameters
    ----------
    histograms : list of dict
        :func:`universal.reporting.openloop.latency_histograms` of a study's JSON.
    path : str or Path
    delay : int
        The router delay the latencies include (named on the axis).

    Returns
    -------
    list of Path

    Examples
    --------
    >>> import tempfile, pathlib
    >>> h = dict(routing="dor", traffic="uniform", priority="age", offered=0.2, what="all", seeds=1,
    ...          histogram={"start": 4, "width": 1, "counts": [6, 2, 1], "packets": 9})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_latency_histograms([h], pathlib.Path(tmp) / "h.png")[0].name
    'h.png'
    """
    from universal.errors import UserError

    shown = [h for h in histograms if h["histogram"] is not None]
    if not shown:
        raise UserError("no run was stable: there is no latency histogram to plot")
    panels = list(dict.fromkeys((h["traffic"], h["offered"], h["what"]) for h in shown))
    curves = list(dict.fromkeys((h["routing"], h["priority"]) for h in shown))
    rules = len({p for _, p in curves}) > 1
    fig, axes = _grid(len(panels))
    for ax, (traffic, offered, what) in zip(axes, panels):
        for j, (routing, priority) in enumerate(curves):
            h = next((h for h in shown if (h["traffic"], h["offered"], h["what"], h["routing"], h["priority"])
                      == (traffic, offered, what, routing, priority)), None)
            if h is None:
                continue
            hist = h["histogram"]
            edges = [hist["start"] - 0.5 + i * hist["width"] for i in range(len(hist["counts"]) + 1)]
            share = [c / hist["packets"] for c in hist["counts"]]
            ax.stairs(share, edges, color=_MEASURED_COLORS[j % len(_MEASURED_COLORS)],
                      linestyle=_LINES[j % len(_LINES)], linewidth=1.4,
                      label=f"{routing}{f' ({priority})' if rules else ''}, {hist['packets']:,} packets")
        pooled = max((h.get("translates", 1) for h in shown if h["what"] == what), default=1)
        who = ("all labelled packets" if what == "all" else f"pair {what}"
               + (f" and its {pooled - 1} translates" if pooled > 1 else ""))
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set(title=f"{traffic} at {offered:g}: {who}", ylabel="share of packets",
               xlabel="latency (steps" + (f", +{delay} per hop" if delay else "") + ")")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, borderaxespad=0)
    return [_save(fig, path)]


def plot_permutation_thetas(data: dict, path: str | Path) -> list[Path]:
    """Histograms of the saturation throughput over the random permutations of ``random-perms:M``
    (Singh, Dally, Gupta & Towles 2003, Figure 9): one panel per routing and traffic, the
    mean and the minimum marked, and the exact values of the same permutations as a second
    histogram where the analysis has them.

    Parameters
    ----------
    data : dict
        ``OpenLoopReport.to_json()`` of a saturation study with ``random-perms:M`` traffic.
    path : str or Path

    Returns
    -------
    list of Path

    Examples
    --------
    >>> import tempfile, pathlib
    >>> rows = [dict(routing="dor", traffic="random-perms:3", priority="age", seed=0, permutation=i,
    ...              saturation=s, analytic_value=None) for i, s in enumerate([0.3, 0.32, 0.4])]
    >>> summary = [dict(routing="dor", traffic="random-perms:3", priority="age", seed=0, permutations=3,
    ...                 min=0.3, mean=0.34, max=0.4, analytic_min=None, analytic_mean=None)]
    >>> data = {"units": "capacity", "rows": rows, "random_perms": summary}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_permutation_thetas(data, pathlib.Path(tmp) / "p.png")[0].name
    'p.png'
    """
    from universal.openloop.histograms import theta_bins

    summary = data["random_perms"]
    unit = "fraction of capacity" if data["units"] == "capacity" else "packets per node per step"
    fig, axes = _grid(len(summary))
    for ax, s in zip(axes, summary):
        key = (s["routing"], s["traffic"], s["priority"], s["seed"])
        mine = [r for r in data["rows"] if r.get("permutation") is not None
                and (r["routing"], r["traffic"], r["priority"], r["seed"]) == key]
        bins = theta_bins([r["saturation"] for r in mine])
        edges = [b[0] for b in bins] + [bins[-1][1]]
        if len(bins) == 1:                       # every permutation alike: one narrow bar
            half = max(abs(edges[0]), 1e-9) * 0.005
            edges = [edges[0] - half, edges[0] + half]
        ax.stairs([b[2] for b in bins], edges, fill=True, alpha=0.6, color=_MEASURED_COLORS[0],
                  label=f"simulated Θ ({len(mine)} permutations)")
        exact = [r["analytic_value"] for r in mine]
        if None not in exact:
            counts = [sum(low <= x < high or (i == len(bins) - 1 and x == high) for x in exact)
                      for i, (low, high, _) in enumerate(bins)] if len(bins) > 1 else [len(exact)]
            ax.stairs(counts, edges, color="black", linewidth=1.2, label="exact analysis, same permutations")
        ax.axvline(s["mean"], color=_MEASURED_COLORS[1], linestyle="--", label=f"mean {s['mean']:.3f}")
        ax.axvline(s["min"], color=_MEASURED_COLORS[3], linestyle=":", label=f"min {s['min']:.3f}")
        ax.set(title=f"{s['routing']}, {s['traffic']}", xlabel=f"saturation throughput Θ ({unit})",
               ylabel="permutations")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, borderaxespad=0)
    return [_save(fig, path)]
