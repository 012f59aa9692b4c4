"""Channel loads and throughput: heat maps on 2-D tori and meshes, throughput histograms, and the
figures of ``load``, ``worstcase`` and load scenarios.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from universal.errors import UserError

from universal.reporting.plots.common import _MEASURED_COLORS, _new_figure, _save
from universal.reporting.plots.common import sibling as _sibling


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
    lows, bars, gaps = [], [], []
    for i, (label, item) in enumerate(data.items()):
        color = _MEASURED_COLORS[i % len(_MEASURED_COLORS)]
        samples, (counts, edges), sampled = _throughput_data(item)
        bars.append((counts, edges))
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
                gaps.append((worst, sampled))
    left, right = ax.get_xlim()
    span = right - min(lows)
    ax.set_xlim(min(left, min(lows) - 0.05 * span), right)
    ax.set_xlabel("throughput (fraction of capacity)")
    ax.set_ylabel("permutations")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.4)
    top = ax.get_ylim()[1]
    ax.set_ylim(0, max(top * 1.3, _mark_overestimates(ax, gaps, bars, top)))   # headroom for the legend
    ax.legend(fontsize=9, loc="upper right")
    return _save(fig, path)


def _mark_overestimates(ax, gaps: list[tuple[float, float]], bars: list, top: float) -> float:
    """Draw an arrow from each exact worst case to the worst sample, with its label, above every
    bar under the arrow or the label (so neither crosses a bar); returns the height they need."""
    left, right = ax.get_xlim()
    half_label = 0.11 * (right - left)           # half the width of the two-line label, about
    floor, needed = 0.0, 0.0
    for worst, sampled in gaps:
        middle = (worst + sampled) / 2
        lo, hi = min(worst, middle - half_label), max(sampled, middle + half_label)
        under = [c[(e[1:] > lo) & (e[:-1] < hi)] for c, e in bars]
        tallest = max([float(u.max()) for u in under if u.size] + [0.0])
        height = max(tallest + 0.04 * top, 0.15 * top, floor)
        ax.annotate("", xy=(worst, height), xytext=(sampled, height), arrowprops=dict(arrowstyle="<->", color="gray"))
        ax.text(middle, height, f"sampling overestimates\nthe worst case by {sampled - worst:.3f}", ha="center",
                va="bottom", fontsize=9, color="dimgray", bbox=dict(facecolor="white", edgecolor="none", alpha=0.8))
        floor = height + 0.14 * top                # the next label goes above this one
        needed = max(needed, height + 0.2 * top)
    return needed


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
