"""The tradeoff figure of ``universal design --tradeoff N --plot FILE``.

Throughput (fraction of capacity) on the horizontal axis, locality (mean path length over the
minimal one) on the vertical axis, as in Towles, Dally & Boyd, "Throughput-centric routing
algorithm design" (2003), Figures 1 and 6: the optimal curve as a solid line, the region of
feasible routings shaded, the infeasible region left white, and the named algorithms as
labelled points.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from universal.datafiles import write_atomically
from universal.errors import UserError

__all__ = ["plot_tradeoff", "plot_study"]

_MARKERS = ("o", "s", "^", "v", "D", "P", "*", "X")

#: How Towles, Dally & Boyd (2003) write the names of the algorithms.
DISPLAY = {"dor": "DOR", "romm": "ROMM", "val": "VAL", "rlb": "RLB", "rlbth": "RLBth", "ival": "IVAL",
           "2turn": "2TURN", "2turna": "2TURNA"}


def plot_tradeoff(curve: list, points: dict[str, dict], path: str | Path, *, key: str,
                  title: str = "") -> Path:
    """Draw the optimal tradeoff curve with the feasible region and the named algorithms.

    Parameters
    ----------
    curve : list of DesignResult
        From :func:`universal.design.tradeoff` (``lp_throughput``, ``locality``).
    points : dict
        Name -> figures (``locality`` and ``key``) of the algorithms to mark.
    path : str or Path
        ``.png`` or ``.svg``.
    key : str
        The figure on the horizontal axis: ``throughput_worst`` or ``throughput_average``.
    title : str

    Returns
    -------
    Path

    Examples
    --------
    >>> import tempfile
    >>> from types import SimpleNamespace as R
    >>> c = [R(lp_throughput=0.3, locality=1.0), R(lp_throughput=0.5, locality=1.4)]
    >>> p = plot_tradeoff(c, {"dor": {"throughput_worst": 0.3, "locality": 1.0}},
    ...                   Path(tempfile.mkdtemp()) / "t.png", key="throughput_worst")
    >>> p.stat().st_size > 0
    True
    """
    from universal.reporting.plots import check_plot_path
    path = check_plot_path(path)
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        from universal.extras import install_hint
        raise UserError(f"plots need matplotlib, which is not installed: {install_hint('plot')}") from None
    fig = Figure(figsize=(6.4, 4.8), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    x = np.array([r.lp_throughput for r in curve])
    y = np.array([r.locality for r in curve])
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    ys = [f["locality"] for f in points.values() if f.get("locality") is not None]
    top = max([*y, *ys, 1.0]) * 1.08
    # feasible: at locality L any throughput up to the curve's; above the curve's end, up to its max
    region_x = np.concatenate([[0.0], x, [x[-1], 0.0]])
    region_y = np.concatenate([[y[0]], y, [top, top]])
    ax.fill(region_x, region_y, color="0.85", label="feasible routings", zorder=0)
    ax.plot(x, y, color="black", linewidth=2, label="optimal tradeoff (LP)", zorder=2)
    for i, (name, f) in enumerate(points.items()):
        if f.get(key) is None:
            continue
        ax.plot(f[key], f["locality"], linestyle="none", marker=_MARKERS[i % len(_MARKERS)],
                markersize=8, label=DISPLAY.get(name, name), zorder=3)
        ax.annotate(DISPLAY.get(name, name), (f[key], f["locality"]), textcoords="offset points", xytext=(6, 4),
                    fontsize=9)
    xmax = max([*x, *(f[key] for f in points.values() if f.get(key) is not None)])
    ax.set_xlim(0.0, min(1.0, xmax * 1.12))
    ax.set_ylim(0.95, top)
    what = "worst-case" if key == "throughput_worst" else "average-case" if key == "throughput_average" else "uniform"
    ax.set_xlabel(f"{what} throughput (fraction of capacity)")
    ax.set_ylabel("locality (mean path length / minimal)")
    ax.set_title(title or f"Locality against {what} throughput")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    fig.set_size_inches(8.0, 4.8)
    return write_atomically(path, lambda handle: fig.savefig(handle, format=path.suffix.lower()[1:], dpi=120))


def plot_study(result, path: str | Path) -> list[Path]:
    """One tradeoff figure per objective of a design study (``FILE``, then ``FILE`` + ``.average-case``).

    Returns
    -------
    list of Path
    """
    from universal.design.tradeoffs import curve_key
    path = Path(path)
    out = []
    for i, (obj, curve) in enumerate(result.curves.items()):
        target = path if i == 0 else path.with_name(f"{path.stem}.{obj}{path.suffix}")
        keep = ("2turna",) if obj == "average-case" else ("2turn",)
        pts = {n: f for n, f in result.points.items() if not n.startswith("2turn") or n in keep}
        title = f"{result.study.network}: optimal locality against {obj} throughput"
        out.append(plot_tradeoff(curve, pts, target, key=curve_key(obj), title=title))
    return out
