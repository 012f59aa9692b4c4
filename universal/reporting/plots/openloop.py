"""Latency and accepted throughput against offered load for ``universal openloop --plot``
(Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003, Figure 1: the latency-load curve and the accepted-offered curve)."""

from __future__ import annotations

from pathlib import Path

from universal.reporting.plots.common import _MARKERS, _MEASURED_COLORS, _new_figure, _save

__all__ = ["plot_openloop"]

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
