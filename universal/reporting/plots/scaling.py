"""Routing time against size: :func:`plot_scaling` and the sweep figure (``scenario --plot`` on a
sweep).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from universal.errors import UserError

from universal.reporting.plots.common import _BOUND_COLORS, _MARKERS, _MEASURED_COLORS, _new_figure, _save


# --------------------------------------------------------------------------- T versus size
@dataclass
class Curve:
    """One line of :func:`plot_scaling`.

    Attributes
    ----------
    label : str
        Legend entry. Curves of several panels with the same label share one colour and one
        legend entry.
    x, y : sequence of float
        Sizes and (mean) routing times.
    kind : str
        ``"measured"`` (markers, solid line) or ``"bound"`` (a line without markers).
    y_min, y_max : sequence of float, optional
        Spread of the measurements (drawn as error bars).
    panel : str, optional
        Title of the panel the curve is drawn in (one panel per distinct value; None: one panel).
    linestyle : str, optional
        matplotlib line style; ``"-"`` for measured and ``"--"`` for bound curves by default.
    """

    label: str
    x: Sequence[float]
    y: Sequence[float]
    kind: str = "measured"
    y_min: Sequence[float] | None = None
    y_max: Sequence[float] | None = None
    panel: str | None = None
    linestyle: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("measured", "bound"):
            raise UserError(f"curve {self.label!r}: kind must be 'measured' or 'bound', not {self.kind!r}")
        if len(self.x) != len(self.y):
            raise UserError(f"curve {self.label!r}: {len(self.x)} x values but {len(self.y)} y values")


_SCALING_KEYS = ("problem", "paths", "protocol")


def _as_summary(rows_or_summary: Sequence) -> list[dict]:
    items = list(rows_or_summary)
    if items and not isinstance(items[0], Mapping):
        from universal.experiment import summarize
        items = summarize(items)
    return items


def scaling_series(summaries_by_size: Mapping[Any, Sequence], *, size_to_x=None,
                   panel_by: Sequence[str] = ("problem", "paths")) -> list[Curve]:
    """The curves of :func:`plot_scaling` from experiments run at several sizes.

    One measured curve per (problem, path system, protocol) with its mean T and the min/max
    spread over seeds; and per (problem, path system) the bound curves C + D and the lower bound
    max(C/B, D), plus one curve per theorem bound (protocols sharing a bound expression share the
    curve). A bandwidth or buffer size is added to the labels when the summaries hold several.

    Parameters
    ----------
    summaries_by_size : mapping size -> list
        ``{size: summarize(rows)}`` (:func:`universal.experiment.summarize`), or ``{size: rows}``.
    size_to_x : callable, optional
        Maps a size to its x value, e.g. ``lambda d: 2 ** d`` to plot against the butterfly's
        n = 2^d inputs instead of d; the size itself by default.
    panel_by : sequence of str
        Which of ``problem``, ``paths``, ``protocol`` choose the panel; the others go into the
        labels. ``()`` draws everything in one panel.

    Returns
    -------
    list of Curve
        Measured curves first, in first-seen order; then the bound curves.

    Examples
    --------
    >>> from universal.experiment import Experiment, run_experiment
    >>> by_d = {d: run_experiment(Experiment(f"butterfly:d={d}", "permutation:bit-reversal",
    ...                                      ["dimension-order"], ["random-rank", "fifo"])).rows
    ...         for d in (3, 4)}
    >>> [(c.kind, c.label, list(c.x)) for c in scaling_series(by_d)]
    [('measured', 'random-rank', [3, 4]), ('measured', 'fifo', [3, 4]),
     ('bound', 'C + D', [3, 4]), ('bound', 'lower bound max(C/B, D)', [3, 4]),
     ('bound', 'C + D + log n (random-rank)', [3, 4])]
    """
    unknown = set(panel_by) - set(_SCALING_KEYS)
    if unknown:
        raise UserError(f"panel_by: unknown key(s) {sorted(unknown)} (known: {', '.join(_SCALING_KEYS)})")
    to_x = size_to_x or (lambda size: size)
    by_size = {size: _as_summary(items) for size, items in summaries_by_size.items()}
    everything = [s for items in by_size.values() for s in items]
    several_b = len({s["bandwidth"] for s in everything}) > 1
    several_buf = len({s["buffer"] for s in everything}) > 1

    def names(s: dict, keys: Iterable[str], with_buffer: bool) -> tuple[str | None, str]:
        """(panel title, label part) of a summary for the given keys."""
        keys = list(keys)
        panel = ", ".join(str(s[k]) for k in keys if k in panel_by) or None
        label = [str(s[k]) for k in keys if k not in panel_by]
        if several_b:
            label.append(f"B = {s['bandwidth']}")
        if with_buffer and several_buf:
            label.append("b = unbounded" if s["buffer"] is None else f"b = {s['buffer']}")
        return panel, " / ".join(label)

    groups: dict[tuple, dict] = {}

    def add(key: tuple, size, s: dict, y: float, **extra) -> None:
        g = groups.setdefault(key, {"points": {}, **extra})
        g["points"].setdefault(size, (y, s))

    for size, items in by_size.items():
        for s in items:
            base = (s["problem"], s["paths"], s["bandwidth"])
            add(("measured", *base, s["protocol"], s["buffer"]), size, s, s["T"],
                names=names(s, _SCALING_KEYS, True))
            add(("C+D", *base), size, s, s["C_plus_D"], names=names(s, ("problem", "paths"), False))
            add(("LB", *base), size, s, s["lower_bound"], names=names(s, ("problem", "paths"), False))
            if s.get("bound") is not None:
                add(("theorem", *base, s["bound_expr"]), size, s, s["bound"],
                    names=names(s, ("problem", "paths"), False), protocols=[])
                g = groups[("theorem", *base, s["bound_expr"])]
                if s["protocol"] not in g["protocols"]:
                    g["protocols"].append(s["protocol"])

    curves: list[Curve] = []
    for kind in ("measured", "C+D", "LB", "theorem"):
        for key, g in groups.items():
            if key[0] != kind:
                continue
            sizes = sorted(g["points"], key=to_x)
            x = [to_x(size) for size in sizes]
            y = [g["points"][size][0] for size in sizes]
            panel, label = g["names"]
            if kind == "measured":
                summaries = [g["points"][size][1] for size in sizes]
                curves.append(Curve(label or key[4], x, y, "measured",
                                    y_min=[s["T_min"] for s in summaries],
                                    y_max=[s["T_max"] for s in summaries], panel=panel))
                continue
            if kind == "C+D":
                name, style = "C + D", "--"
            elif kind == "LB":
                name, style = "lower bound max(C/B, D)", ":"
            else:
                name, style = f"{key[4]} ({', '.join(g['protocols'])})", "-."
            curves.append(Curve(f"{name} ({label})" if label else name, x, y, "bound", panel=panel,
                                linestyle=style))
    return curves


def _is_power_of_two(values: Iterable[float]) -> bool:
    return all(v > 0 and float(v).is_integer() and (int(v) & (int(v) - 1)) == 0 for v in values)


def _curves(series: Sequence[Curve | Mapping]) -> list[Curve]:
    out = [c if isinstance(c, Curve) else Curve(**c) for c in series]
    if not out or not any(len(c.x) for c in out):
        raise UserError("nothing to plot: no curve has a point")
    return out


#: Distance between the x positions of neighbouring measured curves in a log-log panel, as a
#: fraction of the x axis (apart enough to see every marker, close enough to read the size).
DODGE = 0.012


def dodge_factor(xs: Sequence[float], curves: int) -> float:
    """The factor between the x positions of neighbouring measured curves on a log x axis:
    :data:`DODGE` of the axis's log range, but the whole group within a third of the closest
    two sizes, so that groups never mix.

    Examples
    --------
    >>> round(dodge_factor([16, 64, 256, 1024], 3), 4)    # 1.2% of 6 octaves
    1.0512
    >>> round(dodge_factor([100, 110, 10_000], 2), 4)      # close sizes: a third of their gap
    1.0323
    """
    logs = np.unique(np.log(np.asarray(xs, dtype=float)))
    if curves < 2 or logs.size < 2:
        return 1.0
    step = DODGE * (logs[-1] - logs[0])
    step = min(step, np.diff(logs).min() / 3 / (curves - 1))
    return float(np.exp(step))


def plot_scaling(series: Sequence[Curve | Mapping], path: str | Path, *, x_label: str = "size",
                 y_label: str = "routing time T (steps)", title: str = "Routing time versus size",
                 loglog: bool = True) -> Path:
    """Routing time versus size on log-log axes, one panel per ``Curve.panel``.

    Measured curves are drawn with markers, solid lines and min/max error bars; bound curves
    (C + D, max(C/B, D), the protocols' theorem bounds) as dashed or dotted lines without markers.
    Curves with the same label have the same style in every panel and one legend entry. On
    log-log axes the measured curves of a panel are set side by side (:func:`dodge_factor` apart)
    so that curves with equal values do not hide each other. When all x values are powers
    of two the x axis is labelled 2^k.

    Parameters
    ----------
    series : sequence of Curve or dict
        The curves (dicts are passed to :class:`Curve`); see :func:`scaling_series`.
    path : str or Path
        ``.png`` or ``.svg`` file to write.
    x_label, y_label, title : str
        Axis labels (with units) and figure title.
    loglog : bool
        Logarithmic axes (default); linear when False.

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> curves = [Curve("fifo", [16, 64, 256], [9, 20, 41], y_min=[8, 18, 40], y_max=[10, 22, 44]),
    ...           Curve("C + D", [16, 64, 256], [8, 12, 16], kind="bound")]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_scaling(curves, pathlib.Path(tmp) / "s.svg", x_label="inputs n").suffix
    '.svg'
    """
    curves = _curves(series)
    panels = list(dict.fromkeys(c.panel for c in curves))
    cols = 1 if len(panels) == 1 else 2
    rows = math.ceil(len(panels) / cols)
    fig = _new_figure(6.0 * cols + 2.6, 4.2 * rows + 0.6)
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False).ravel()
    styles: dict[str, dict] = {}
    counts = {"measured": 0, "bound": 0}
    xs = [x for c in curves for x in c.x]
    for c in curves:
        if c.label in styles:
            continue
        i = counts[c.kind]
        counts[c.kind] += 1
        if c.kind == "measured":
            # hollow markers shrinking curve by curve, so that coinciding curves stay visible
            styles[c.label] = dict(color=_MEASURED_COLORS[i % len(_MEASURED_COLORS)],
                                   marker=_MARKERS[i % len(_MARKERS)], linestyle=c.linestyle or "-",
                                   linewidth=1.6, markersize=max(4.0, 9.0 - 1.5 * i),
                                   markerfacecolor="none", markeredgewidth=1.5, zorder=3)
        else:
            styles[c.label] = dict(color=_BOUND_COLORS[i % len(_BOUND_COLORS)],
                                   linestyle=c.linestyle or "--", linewidth=1.6, zorder=2)
    handles: dict[str, Any] = {}
    for ax, panel in zip(axes, panels):
        mine = [c for c in curves if c.panel == panel]
        measured = [c for c in mine if c.kind == "measured"]
        for c in mine:
            if not len(c.x):
                continue
            style = styles[c.label]
            x = np.asarray(c.x, dtype=float)
            if c.kind == "measured" and loglog and len(measured) > 1:
                # Dodge: the measured curves of a panel sit side by side on the log axis, so that
                # equal means (random rank and growing rank often agree) stay visible.
                x = x * dodge_factor(xs, len(measured)) ** (measured.index(c) - (len(measured) - 1) / 2)
            if c.kind == "measured" and c.y_min is not None and c.y_max is not None:
                y = np.asarray(c.y, dtype=float)
                err = [y - np.asarray(c.y_min, dtype=float), np.asarray(c.y_max, dtype=float) - y]
                handle = ax.errorbar(x, y, yerr=err, capsize=3, label=c.label, **style)
            else:
                (handle,) = ax.plot(x, c.y, label=c.label, **style)
            handles.setdefault(c.label, handle)
        if panel is not None:
            ax.set_title(panel, fontsize=10)
        ax.grid(True, which="major", alpha=0.4)
        ax.grid(True, which="minor", alpha=0.15)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    if loglog:
        from matplotlib.ticker import FuncFormatter, LogLocator
        plain = FuncFormatter(lambda v, _: f"{v:g}")
        for ax in axes[:len(panels)]:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
            if _is_power_of_two(xs):
                ax.set_xscale("log", base=2)
            else:
                ax.set_xscale("log")
                ax.xaxis.set_major_formatter(plain)
    for i, ax in enumerate(axes[:len(panels)]):
        if i + cols >= len(panels):           # the lowest panel of its column
            ax.set_xlabel(x_label)
            ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[::cols][:rows]:
        ax.set_ylabel(y_label)
    fig.suptitle(title, fontsize=13)
    fig.legend(list(handles.values()), list(handles), loc="outside right upper", fontsize=9,
               title="measured: markers, mean with min-max over seeds\n(set a little apart sideways when several)"
                     "\nbounds: lines", title_fontsize=8)
    return _save(fig, path)


def _family(network_name: str) -> str:
    """``butterfly`` of ``butterfly:d=4``: the family a network name belongs to."""
    return network_name.split(":")[0]


def plot_sweep(result, path: str | Path) -> list[Path]:
    """T against the number of nodes N for every (problem, paths, protocol) of a sweep, next to
    C + D, the lower bound max(C/B, D) and the theorem bounds (log-log).

    ``result`` is a :class:`~universal.sweep.SweepResult`. A sweep over several network families
    (butterflies beside multibutterflies, meshes beside tori) draws one curve per family: a curve
    through unlike networks would zigzag between them.
    """
    from dataclasses import replace

    families = {_family(cell.network["name"]) for cell in result.cells}
    by_size = {}
    for cell in result.cells:
        family = _family(cell.network["name"])
        rows = cell.rows if len(families) < 2 else [replace(r, paths=f"{r.paths} on {family}") for r in cell.rows]
        by_size[(family, cell.network["nodes"])] = rows
    curves = scaling_series(by_size, size_to_x=lambda key: key[1])
    axes = ", ".join(result.sweep.axes)
    title = f"{result.sweep.name}: routing time versus size (sweep over {axes})"
    return [plot_scaling(curves, path, x_label="N, nodes of the network", title=title)]


