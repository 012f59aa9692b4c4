"""Figures for ``--plot FILE``: routing time versus size, channel-load heat maps, throughput
histograms and delivery curves.

Every function draws one figure with matplotlib's object API (a fresh
:class:`matplotlib.figure.Figure` on the Agg canvas, no pyplot state) and writes it to ``path`` as
PNG or SVG, chosen by the suffix. The file is written atomically: the image goes to a temporary file
in the same folder, which then replaces ``path``, so an error never leaves a half-written file.
matplotlib is imported only when a figure is drawn; without it the functions raise a
:class:`~universal.errors.UserError` that says how to install it (``pip install 'universal[plot]'``).

Call :func:`check_plot_path` before a long computation to refuse a bad file name early.

Examples
--------
>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as tmp:
...     out = plot_delivery_curve([[1, 2, 2, 3], [2, 4, 4, -1]], pathlib.Path(tmp) / "d.png",
...                               labels=["random-rank", "fifo"])
...     out.name, out.stat().st_size > 5000
('d.png', True)
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from universal.datafiles import write_atomically
from universal.errors import UserError

__all__ = ["PLOT_FORMATS", "Curve", "check_plot_path", "scaling_series", "plot_scaling",
           "torus_channel_loads", "load_grids", "plot_load_heatmap", "plot_throughput_histogram",
           "delivery_counts", "plot_delivery_curve"]

#: File suffixes understood by ``--plot`` and the matplotlib format each one is written in.
PLOT_FORMATS = {".png": "png", ".svg": "svg"}

_DPI = 150
_MEASURED_COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:pink",
                    "tab:cyan", "tab:olive", "tab:brown", "tab:gray"]
_BOUND_COLORS = ["black", "dimgray", "saddlebrown", "darkolivegreen", "darkslateblue", "darkred",
                 "teal", "darkgoldenrod"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


# --------------------------------------------------------------------------- files and matplotlib
def _matplotlib():
    """(Figure, FigureCanvasAgg), imported on first use; a UserError when matplotlib is missing."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise UserError("plots need matplotlib: pip install 'universal[plot]'") from None
    return Figure, FigureCanvasAgg


def check_plot_path(path: str | Path) -> Path:
    """The plot file ``path`` as a Path, checked before any work: a ``.png`` or ``.svg`` suffix and
    an existing folder.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    Path

    Raises
    ------
    UserError
        Another suffix, a missing folder, or a folder given as the file.

    Examples
    --------
    >>> check_plot_path("scaling.svg").name
    'scaling.svg'
    >>> check_plot_path("scaling.pdf")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: cannot plot to 'scaling.pdf': the file name must end in .png or .svg
    """
    path = Path(path).expanduser()
    if path.suffix.lower() not in PLOT_FORMATS:
        raise UserError(f"cannot plot to {str(path)!r}: the file name must end in .png or .svg")
    if path.is_dir():
        raise UserError(f"cannot plot to {str(path)!r}: it is a folder")
    if not path.parent.is_dir():
        raise UserError(f"cannot plot to {str(path)!r}: folder {str(path.parent)!r} does not exist")
    return path


def _new_figure(width: float, height: float):
    Figure, FigureCanvasAgg = _matplotlib()
    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` atomically (:func:`universal.datafiles.write_atomically`)."""
    path = check_plot_path(path)
    fmt = PLOT_FORMATS[path.suffix.lower()]
    return write_atomically(path, lambda handle: fig.savefig(
        handle, format=fmt, dpi=_DPI, metadata={"Date": None} if fmt == "svg" else None))


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


def plot_scaling(series: Sequence[Curve | Mapping], path: str | Path, *, x_label: str = "size",
                 y_label: str = "routing time T (steps)", title: str = "Routing time versus size",
                 loglog: bool = True) -> Path:
    """Routing time versus size on log-log axes, one panel per ``Curve.panel``.

    Measured curves are drawn with markers, solid lines and min/max error bars; bound curves
    (C + D, max(C/B, D), the protocols' theorem bounds) as dashed or dotted lines without markers.
    Curves with the same label have the same style in every panel and one legend entry. When all
    x values are powers of two the x axis is labelled 2^k.

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
        for c in (c for c in curves if c.panel == panel):
            if not len(c.x):
                continue
            style = styles[c.label]
            if c.kind == "measured" and c.y_min is not None and c.y_max is not None:
                y = np.asarray(c.y, dtype=float)
                err = [y - np.asarray(c.y_min, dtype=float), np.asarray(c.y_max, dtype=float) - y]
                handle = ax.errorbar(c.x, y, yerr=err, capsize=3, label=c.label, **style)
            else:
                (handle,) = ax.plot(c.x, c.y, label=c.label, **style)
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
               title="measured: markers, mean with min-max over seeds\nbounds: lines", title_fontsize=8)
    return _save(fig, path)


# --------------------------------------------------------------------------- channel-load heat map
_DIRECTIONS = {(0, 1): "+x", (0, -1): "-x", (1, 1): "+y", (1, -1): "-y"}


def torus_channel_loads(torus, routing: str, traffic: str) -> dict[tuple[int, int], np.ndarray]:
    """Channel loads of an oblivious routing under a single traffic pattern, for the heat map.

    A thin wrapper over :func:`universal.oblivious.pair_loads` and
    :func:`universal.oblivious.channel_loads` (permutations become their 0/1 traffic matrix).

    Parameters
    ----------
    torus : universal.oblivious.Torus
    routing : str
        ``dor``, ``val``, ``romm``, ...
    traffic : str
        A traffic name other than ``random-perms`` (e.g. ``tornado``, ``transpose``).

    Returns
    -------
    dict (dim, sign) -> ndarray of shape (N,)
        Load of the channel leaving each node (by tail id) in that dimension and direction.

    Examples
    --------
    >>> from universal.oblivious import Torus
    >>> loads = torus_channel_loads(Torus(8, 2), "dor", "tornado")
    >>> float(loads[(0, 1)].max()), float(loads[(0, -1)].max())
    (3.0, 0.0)
    """
    from universal.oblivious import channel_loads, make_traffic, pair_loads

    pattern = make_traffic(torus, traffic)
    if pattern.is_random:
        raise UserError(f"a heat map needs one traffic pattern, not {traffic!r} (random permutations)")
    matrix = pattern.matrix
    if matrix is None:
        matrix = np.zeros((torus.N, torus.N))
        matrix[np.arange(torus.N), pattern.perm] = 1.0
    return channel_loads(pair_loads(routing, torus), matrix)


def _grid_shape(grid) -> tuple[int, int, str]:
    """(k, n, kind) of a Torus (load analysis) or a mesh/torus Network."""
    params = getattr(grid, "params", None)
    if params is not None:                     # a universal.networks.Network
        if grid.kind not in ("mesh", "torus"):
            raise UserError(f"a channel-load heat map needs a 2-D torus or mesh, not {grid.name}")
        k, n, kind = params["k"], params["n"], grid.kind
    else:
        k, n, kind = grid.k, grid.n, "torus"
    if n != 2:
        raise UserError(f"a channel-load heat map needs a 2-D torus or mesh (n=2), not n={n}")
    return k, n, kind


def load_grids(loads, grid) -> dict[str, np.ndarray]:
    """The loads of the channels leaving every node, one ``k x k`` image per direction.

    ``image[y, x]`` is the load of the channel leaving node ``(x, y)`` (node id ``x + k*y``) in that
    direction; NaN where a mesh has no such channel.

    Parameters
    ----------
    loads : dict or ndarray
        ``{(dim, sign): loads by tail}`` as :func:`universal.oblivious.channel_loads` returns; or one
        value per channel in the load analysis's numbering (``tail * 4 + 2 * dim + (sign < 0)``)
        when ``grid`` is a :class:`~universal.oblivious.Torus`; or one value per link when ``grid`` is
        a mesh or torus :class:`~universal.networks.Network` (e.g. ``PathCollection.link_loads``).
    grid : Torus or Network
        A 2-D torus (``n = 2``) or mesh.

    Returns
    -------
    dict direction -> ndarray of shape (k, k)
        Keys ``"+x"``, ``"-x"``, ``"+y"``, ``"-y"``.

    Examples
    --------
    >>> from universal.oblivious import Torus
    >>> t = Torus(3, 2)
    >>> grids = load_grids(np.arange(t.num_channels), t)
    >>> grids["+x"][0].tolist(), float(grids["-y"][1, 2])   # node (2, 1) is id 5: channel 5*4 + 3
    ([0.0, 4.0, 8.0], 23.0)
    """
    k, n, kind = _grid_shape(grid)
    N = k * k
    out = {name: np.full(N, np.nan) for name in _DIRECTIONS.values()}
    if isinstance(loads, Mapping):
        for cls, values in loads.items():
            values = np.asarray(values, dtype=float)
            if cls not in _DIRECTIONS or values.shape != (N,):
                raise UserError(f"channel loads for {cls!r}: expected a (dim, sign) class with {N} values")
            out[_DIRECTIONS[cls]] = values.copy()
    elif getattr(grid, "params", None) is None:     # Torus: the analysis's channel numbering
        values = np.asarray(loads, dtype=float)
        if values.shape != (grid.num_channels,):
            raise UserError(f"{grid.name} has {grid.num_channels} channels, got {values.shape[0]} loads")
        per_node = values.reshape(N, 2 * n)
        for (dim, sign), name in _DIRECTIONS.items():
            out[name] = per_node[:, 2 * dim + (sign < 0)].copy()
    else:                                           # Network: one value per link
        values = np.asarray(loads, dtype=float)
        if values.shape != (grid.num_links,):
            raise UserError(f"{grid.name} has {grid.num_links} links, got {values.shape[0]} loads")
        tail, head = grid.link_tail, grid.link_head
        dim = np.where(tail % k != head % k, 0, 1)
        diff = np.where(dim == 0, head % k - tail % k, head // k - tail // k)
        sign = np.where(np.abs(diff) == 1, np.sign(diff), -np.sign(diff))   # |diff| = k-1: wrap
        for (d, s), name in _DIRECTIONS.items():
            pick = (dim == d) & (sign == s)
            out[name][tail[pick]] = values[pick]
    return {name: values.reshape(k, k) for name, values in out.items()}


def plot_load_heatmap(loads, path: str | Path, *, grid, title: str = "Channel loads",
                      label: str = "channel load (packets per unit injection)") -> Path:
    """Channel loads on a 2-D torus or mesh as four heat maps, one per direction (+x, -x, +y, -y).

    Each panel is a ``k x k`` image of the load of every node's outgoing channel in that direction
    (x to the right, y upwards), with one shared colour scale; each panel's title gives its
    largest load. Channels a mesh lacks are left blank.

    Parameters
    ----------
    loads : dict or ndarray
        Channel loads, in any form :func:`load_grids` accepts (e.g. :func:`torus_channel_loads`).
    path : str or Path
        ``.png`` or ``.svg`` file to write.
    grid : Torus or Network
        The 2-D torus or mesh the loads are on.
    title : str
        Figure title, e.g. ``"DOR, tornado traffic on torus:k=8,n=2"``.
    label : str
        Colour bar label (with units); e.g. ``"paths per link"`` for a path collection's loads.

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from universal.oblivious import Torus
    >>> t = Torus(4, 2)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_load_heatmap(torus_channel_loads(t, "dor", "transpose"), pathlib.Path(tmp) / "h.png",
    ...                       grid=t).name
    'h.png'
    """
    grids = load_grids(loads, grid)
    k = next(iter(grids.values())).shape[0]
    finite = np.concatenate([g[np.isfinite(g)] for g in grids.values()])
    vmax = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    fig = _new_figure(9.5, 8.2)
    axes = fig.subplots(2, 2, sharex=True, sharey=True)
    from matplotlib import colormaps
    cmap = colormaps["viridis"].with_extremes(bad="lightgray")
    image = None
    for ax, (name, values) in zip(axes.ravel(), grids.items()):
        image = ax.imshow(np.ma.masked_invalid(values), origin="lower", cmap=cmap, vmin=0, vmax=vmax,
                          interpolation="nearest")
        top = np.nanmax(values) if np.isfinite(values).any() else float("nan")
        ax.set_title(f"{name} channels (max {top:.3g})", fontsize=11)
        step = max(1, k // 8)
        ax.set_xticks(range(0, k, step))
        ax.set_yticks(range(0, k, step))
    for ax in axes[1]:
        ax.set_xlabel("x (node coordinate)")
    for ax in axes[:, 0]:
        ax.set_ylabel("y (node coordinate)")
    fig.colorbar(image, ax=axes, label=label, shrink=0.9)
    fig.suptitle(f"{title}\nload of the channel leaving each node, by direction", fontsize=12)
    return _save(fig, path)


# --------------------------------------------------------------------------- throughput histogram
def _throughput_data(data) -> tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray], float]:
    """(samples or None, (counts, edges), sampled worst) of samples, a histogram or a LoadResult."""
    if hasattr(data, "histogram"):                 # universal.oblivious.LoadResult of random-perms
        if data.histogram is None:
            raise UserError(f"{data.routing} under {data.traffic}: no histogram (use random-perms:M traffic)")
        counts, edges = data.histogram
        return None, (np.asarray(counts), np.asarray(edges, dtype=float)), float(data.throughput)
    if isinstance(data, tuple) and len(data) == 2:
        counts, edges = (np.asarray(a) for a in data)
        if edges.shape != (counts.shape[0] + 1,):
            raise UserError("a throughput histogram needs counts and edges with one more edge than counts")
        return None, (counts, edges.astype(float)), float(edges[0])
    samples = np.asarray(data, dtype=float).ravel()
    if not samples.size:
        raise UserError("nothing to plot: no throughput samples")
    return samples, np.histogram(samples, bins=min(30, max(5, int(np.sqrt(samples.size))))), float(samples.min())


def _throughput_value(x) -> float | None:
    if x is None:
        return None
    return float(getattr(x, "throughput", x))


def plot_throughput_histogram(throughputs, path: str | Path, *, exact_worst=None,
                              title: str = "Throughput of random permutations") -> Path:
    """Histogram of the throughputs of random permutations, with the sampled and the exact worst
    case marked.

    The exact worst case (max-weight matching) usually lies well below the worst of the samples:
    sampling overestimates the worst-case throughput (Towles, "Finding worst-case permutations",
    on ROMM).

    Parameters
    ----------
    throughputs : array, (counts, edges), LoadResult, or a dict label -> any of these
        Throughputs as fractions of capacity: the samples, a ``numpy.histogram`` of them, or the
        :class:`~universal.oblivious.LoadResult` of ``random-perms:M`` traffic (its histogram and
        its worst sample). A dict overlays several routings.
    path : str or Path
        ``.png`` or ``.svg`` file to write.
    exact_worst : float, WorstCaseResult, or dict label -> these, optional
        The exact worst-case throughput, drawn as a vertical line.
    title : str
        Figure title.

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> samples = np.random.default_rng(0).normal(0.6, 0.04, 500)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_throughput_histogram(samples, pathlib.Path(tmp) / "t.png", exact_worst=0.42).name
    't.png'
    """
    data = dict(throughputs) if isinstance(throughputs, Mapping) else {None: throughputs}
    exact = exact_worst if isinstance(exact_worst, Mapping) else {label: exact_worst for label in data}
    fig = _new_figure(8.5, 5.0)
    ax = fig.subplots()
    lows = []
    for i, (label, item) in enumerate(data.items()):
        color = _MEASURED_COLORS[i % len(_MEASURED_COLORS)]
        samples, (counts, edges), sampled = _throughput_data(item)
        count = int(counts.sum())
        name = f"{label}: " if label is not None else ""
        ax.stairs(counts, edges, fill=True, alpha=0.35 if len(data) > 1 else 0.6, color=color,
                  label=f"{name}{count:,} random permutations")
        ax.stairs(counts, edges, color=color, linewidth=1.2)
        ax.axvline(sampled, color=color, linestyle="--", linewidth=1.6,
                   label=f"{name}worst sampled: {sampled:.3f}")
        lows.append(sampled)
        worst = _throughput_value(exact.get(label))
        if worst is not None:
            ax.axvline(worst, color="black" if len(data) == 1 else color, linestyle="-", linewidth=2.2,
                       label=f"{name}exact worst case: {worst:.3f}")
            lows.append(worst)
            if worst < sampled:
                height = (0.5 - 0.08 * i) * max(counts.max(), 1)
                ax.annotate("", xy=(worst, height), xytext=(sampled, height),
                            arrowprops=dict(arrowstyle="<->", color="gray"))
                ax.text((worst + sampled) / 2, height, f"sampling overestimates\nthe worst case by "
                        f"{sampled - worst:.3f}", ha="center", va="bottom", fontsize=9, color="dimgray")
    left, right = ax.get_xlim()
    span = right - min(lows)
    ax.set_xlim(min(left, min(lows) - 0.05 * span), right)
    ax.set_xlabel("throughput (fraction of capacity)")
    ax.set_ylabel("permutations")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.4)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.3)          # headroom for the legend
    ax.legend(fontsize=9, loc="upper right")
    return _save(fig, path)


# --------------------------------------------------------------------------- delivery curve
def delivery_counts(delivery) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative deliveries by step: ``(steps, delivered)``, ``delivered[i]`` = packets delivered
    at or before ``steps[i]`` (steps 0 .. last delivery; packets never delivered are not counted).

    Parameters
    ----------
    delivery : array of int or RoutingResult
        ``RoutingResult.delivery``: the step each packet was delivered, -1 if never.

    Returns
    -------
    (ndarray, ndarray)

    Examples
    --------
    >>> [a.tolist() for a in delivery_counts([2, 0, 2, -1, 3])]
    [[0, 1, 2, 3], [1, 1, 3, 4]]
    """
    delivery = np.asarray(getattr(delivery, "delivery", delivery), dtype=np.int64).ravel()
    done = delivery[delivery >= 0]
    last = int(done.max()) if done.size else 0
    return np.arange(last + 1), np.cumsum(np.bincount(done, minlength=last + 1))


def _runs(delivery) -> list:
    """The runs of :func:`plot_delivery_curve`: one delivery array (or result) or several."""
    if hasattr(delivery, "delivery") or (isinstance(delivery, np.ndarray) and delivery.ndim == 1):
        return [delivery]
    items = list(delivery)
    if items and all(np.ndim(getattr(x, "delivery", x)) == 0 for x in items):
        return [np.asarray(items)]
    return items


def plot_delivery_curve(delivery, path: str | Path, *, title: str = "Packets delivered by step",
                        labels: Sequence[str] | None = None, fraction: bool = False) -> Path:
    """Packets delivered versus step, one line per run.

    Parameters
    ----------
    delivery : array, RoutingResult, or a list of these
        ``RoutingResult.delivery`` (the step each packet arrived, -1 if never) of one run, or of
        several runs to compare.
    path : str or Path
        ``.png`` or ``.svg`` file to write.
    title : str
        Figure title.
    labels : sequence of str, optional
        One legend label per run (``run 1``, ``run 2``, ... by default).
    fraction : bool
        Plot the fraction of packets delivered instead of the count.

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_delivery_curve(np.array([3, 1, 4, 1, 5]), pathlib.Path(tmp) / "d.svg").name
    'd.svg'
    """
    runs = _runs(delivery)
    if not runs:
        raise UserError("nothing to plot: no runs")
    if labels is None:
        labels = [None] * len(runs) if len(runs) == 1 else [f"run {i + 1}" for i in range(len(runs))]
    if len(labels) != len(runs):
        raise UserError(f"{len(labels)} labels for {len(runs)} runs")
    fig = _new_figure(8.0, 5.0)
    ax = fig.subplots()
    for i, (run, label) in enumerate(zip(runs, labels)):
        total = np.asarray(getattr(run, "delivery", run)).size
        steps, counts = delivery_counts(run)
        lost = total - int(counts[-1]) if counts.size else total
        y = counts / max(total, 1) if fraction else counts
        text = label or "delivered"
        text += f" (T = {int(steps[-1])}" + (f", {lost} never delivered)" if lost else ")")
        # thinner lines for later runs, so that coinciding runs stay visible
        ax.step(steps, y, where="post", linewidth=max(1.2, 3.4 - 0.6 * i),
                color=_MEASURED_COLORS[i % len(_MEASURED_COLORS)], label=text)
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("step")
    ax.set_ylabel("fraction of packets delivered" if fraction else "packets delivered (cumulative)")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.grid(True, alpha=0.4)
    ax.legend(fontsize=9, loc="upper left")
    return _save(fig, path)


# --- One figure per kind of result (what `--plot FILE` draws) ------------------------------------


def _sibling(path: Path, tag: str) -> Path:
    """``dir/name.TAG.suffix`` next to ``path`` (a second figure of the same command)."""
    return path.with_name(f"{path.stem}.{tag}{path.suffix}")


def plot_experiment(result, path: str | Path) -> list[Path]:
    """Packets delivered against steps for every run of the first seed (and first problem).

    ``result`` is an :class:`~universal.experiment.ExperimentResult` run with
    ``keep_delivery=True``.

    Returns
    -------
    list of Path
        The file written.
    """
    if not result.deliveries:
        raise ValueError("run the experiment with keep_delivery=True to plot its deliveries")
    first = (result.rows[0].problem, result.rows[0].seed)
    runs, labels = [], []
    for row, delivery in zip(result.rows, result.deliveries):
        if (row.problem, row.seed) != first:
            continue
        label = f"{row.paths} / {row.protocol}"
        label += f", B = {row.bandwidth}" if isinstance(result.bandwidth, list) else ""
        label += f", b = {'∞' if row.buffer is None else row.buffer}" if isinstance(result.buffer, list) else ""
        runs.append(delivery)
        labels.append(label)
    title = f"{first[0]} on {result.network.name} (seed {first[1]}): packets delivered by step"
    return [plot_delivery_curve(runs, path, labels=labels, title=title)]


def plot_sweep(result, path: str | Path) -> list[Path]:
    """T against the number of nodes N for every (problem, paths, protocol) of a sweep, next to
    C + D, the lower bound max(C/B, D) and the theorem bounds (log-log).

    ``result`` is a :class:`~universal.sweep.SweepResult`.
    """
    by_size = {cell.network["nodes"]: cell.rows for cell in result.cells}
    curves = scaling_series(by_size)
    axes = ", ".join(result.sweep.axes)
    title = f"{result.sweep.name}: routing time versus size (sweep over {axes})"
    return [plot_scaling(curves, path, x_label="N, nodes of the network", title=title)]


def plot_load_report(report, path: str | Path) -> list[Path]:
    """The figures of a load analysis (a :class:`~universal.load_analysis.LoadReport`).

    On a 2-D torus or mesh: the channel-load heat map of the first routing under the first
    single traffic pattern (or, when only a worst case was computed, under its worst
    permutation), to ``path``; and, on any network, when ``random-perms:M`` was analysed, the
    throughput histogram of every routing with its exact worst case marked (on tori computed if
    the report lacks it; on other networks when it was computed), to ``NAME.histogram.SUFFIX``
    beside the heat map or to ``path`` without one.

    Returns
    -------
    list of Path
        The files written.
    """
    from universal.oblivious import channel_loads, pair_loads
    from universal.oblivious.worstcase import worst_case

    torus = report.torus
    path = Path(path)
    if torus is None:
        return _plot_graph_loads(report, path)
    written: list[Path] = []
    fixed = [r for r in report.loads if r.histogram is None]
    if torus.n != 2:
        pass  # no 2-D layout for a heat map; a histogram needs none
    elif fixed:
        row = fixed[0]
        loads = torus_channel_loads(torus, row.routing, row.traffic)
        title = f"{row.routing} under {row.traffic} on {torus.name}: channel loads"
        written.append(plot_load_heatmap(loads, path, grid=torus, title=title))
    elif report.worst:
        worst = report.worst[0]
        matrix = np.zeros((torus.N, torus.N))
        matrix[np.arange(torus.N), worst.permutation] = 1.0
        loads = channel_loads(pair_loads(worst.routing, torus), matrix)
        title = f"{worst.routing} under its worst-case permutation on {torus.name}: channel loads"
        written.append(plot_load_heatmap(loads, path, grid=torus, title=title))
    sampled = {r.routing: r for r in report.loads if r.histogram is not None}
    if sampled:
        known = {w.routing: w for w in report.worst}
        exact = {name: known.get(name) or worst_case(torus.k, torus.n, name) for name in sampled}
        target = _sibling(path, "histogram") if written else path
        title = f"Throughput of {next(iter(sampled.values())).traffic} on {torus.name}"
        written.append(plot_throughput_histogram(sampled, target, exact_worst=exact, title=title))
    if not written:
        raise UserError("nothing to plot: --plot draws channel loads on 2-D tori and meshes (n = 2) and "
                        "throughput histograms of random-perms:M traffic")
    return written


def _plot_graph_loads(report, path: Path) -> list[Path]:
    """The figures of a general-graph analysis: on a 2-D mesh or torus the link-load heat map of
    the first routing under the first single traffic (or under its worst permutation when only
    the worst case was computed); on any network the throughput histogram of ``random-perms:M``
    (with the exact worst case marked when it was computed), beside the heat map."""
    from universal.oblivious.graphs import graph_link_loads, graph_pair_loads, graph_traffic
    from universal.oblivious.traffic import Traffic

    net = report.graph
    grid = net is not None and net.kind in ("mesh", "torus") and net.params.get("n") == 2
    fixed = [r for r in report.loads if r.histogram is None]
    sampled = {r.routing: r for r in report.loads if r.histogram is not None}
    written: list[Path] = []
    if grid and fixed:
        row = fixed[0]
        loads = graph_link_loads(graph_pair_loads(net, row.routing), graph_traffic(net, row.traffic))
        title = f"{row.routing} under {row.traffic} on {net.name}: channel loads ({row.pair_loads})"
        written.append(plot_load_heatmap(loads, path, grid=net, title=title))
    elif grid and report.worst and not sampled:
        worst = report.worst[0]
        loads = graph_link_loads(graph_pair_loads(net, worst.routing),
                                 Traffic("worst case", perm=np.asarray(worst.permutation)))
        title = f"{worst.routing} under its worst-case permutation on {net.name}: channel loads"
        written.append(plot_load_heatmap(loads, path, grid=net, title=title))
    if sampled:
        known = {w.routing: w for w in report.worst}
        target = _sibling(path, "histogram") if written else path
        title = f"Throughput of {next(iter(sampled.values())).traffic} on {report.network['name']}"
        written.append(plot_throughput_histogram(sampled, target, exact_worst={r: known.get(r) for r in sampled},
                                                 title=title))
    if not written:
        raise UserError("--plot draws channel loads on 2-D tori and meshes only (n = 2), and throughput "
                        "histograms of random-perms:M traffic on any network")
    return written
