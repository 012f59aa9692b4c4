"""Packets delivered by step: :func:`plot_delivery_curve` and the figure of ``route --plot`` and
plain scenarios.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from universal.errors import UserError

from universal.reporting.plots.common import _MEASURED_COLORS, _new_figure, _save


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
                        labels: Sequence[str] | None = None, fraction: bool = False,
                        panels: Sequence[str] | None = None, colour_keys: Sequence[str] | None = None,
                        style_keys: Sequence[str] | None = None) -> Path:
    """Packets delivered versus step, one line per run, in one or more panels.

    Every run gets its own (colour, line style) pair: runs with the same ``colour_keys`` entry
    share a colour and runs with the same ``style_keys`` entry a line style (by default every run
    its own colour). Each panel has its own step axis and its legend outside, to its right.

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
    panels : sequence of str, optional
        The title of the panel of every run (panels stacked in first-seen order); one panel when
        None.
    colour_keys, style_keys : sequence of str, optional
        What chooses each run's colour and line style (e.g. its protocol and its path system).

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
    fig = delivery_figure(delivery, title=title, labels=labels, fraction=fraction, panels=panels,
                          colour_keys=colour_keys, style_keys=style_keys)
    return _save(fig, path)


def delivery_figure(delivery, *, title: str = "Packets delivered by step", labels: Sequence[str] | None = None,
                    fraction: bool = False, panels: Sequence[str] | None = None,
                    colour_keys: Sequence[str] | None = None, style_keys: Sequence[str] | None = None):
    """The :class:`matplotlib.figure.Figure` that :func:`plot_delivery_curve` writes.

    Examples
    --------
    >>> fig = delivery_figure([[1, 2], [3, 3]], labels=["a", "b"], panels=["left", "right"])
    >>> [ax.get_title() for ax in fig.axes]
    ['left', 'right']
    """
    runs = _runs(delivery)
    if not runs:
        raise UserError("nothing to plot: no runs")
    if labels is None:
        labels = [None] * len(runs) if len(runs) == 1 else [f"run {i + 1}" for i in range(len(runs))]
    panels = list(panels) if panels is not None else [None] * len(runs)
    for name, values in (("labels", labels), ("panels", panels), ("colour_keys", colour_keys),
                         ("style_keys", style_keys)):
        if values is not None and len(values) != len(runs):
            raise UserError(f"{len(values)} {name} for {len(runs)} runs")
    styles = distinct_styles(list(colour_keys) if colour_keys is not None else [str(i) for i in range(len(runs))],
                             list(style_keys) if style_keys is not None else [""] * len(runs))
    order = list(dict.fromkeys(panels))
    longest = max(len(text or "") for text in labels) + 14
    fig = _new_figure(6.5 + 0.075 * longest, 0.6 + max(3.6, 0.2 * max(panels.count(p) for p in order) + 1.2)
                      * len(order))
    axes = fig.subplots(len(order), 1, squeeze=False).ravel()
    from matplotlib.ticker import MaxNLocator

    for ax, panel in zip(axes, order):
        mine = [i for i, p in enumerate(panels) if p == panel]
        # thinner lines for later colours, so that coinciding runs stay visible
        rank = {c: j for j, c in enumerate(dict.fromkeys(styles[i]["color"] for i in mine))}
        for i in mine:
            run = runs[i]
            total = np.asarray(getattr(run, "delivery", run)).size
            steps, counts = delivery_counts(run)
            lost = total - int(counts[-1]) if counts.size else total
            y = counts / max(total, 1) if fraction else counts
            text = labels[i] or "delivered"
            # The last delivery, which is T for the buffered protocols but not for the bufferless ones
            # (their T is the last acknowledgement), so the legend does not call it T.
            text += f" (last delivery: step {int(steps[-1])}" + (f", {lost} never delivered)" if lost else ")")
            ax.step(steps, y, where="post", linewidth=max(1.0, 3.4 - 0.35 * rank[styles[i]["color"]]), label=text,
                    **styles[i])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("step")
        ax.set_ylabel("fraction of packets delivered" if fraction else "packets delivered (cumulative)")
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        if panel is not None:
            ax.set_title(panel, fontsize=10)
        ax.grid(True, alpha=0.4)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.suptitle(title, fontsize=12)
    return fig


#: Line styles after the solid one, all distinguishable at the widths used.
_LINESTYLES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (1, 3)), (0, (3, 1, 1, 1, 1, 1, 1, 1))]


def distinct_styles(colour_keys: Sequence[str], style_keys: Sequence[str]) -> list[dict]:
    """A matplotlib style (``color``, ``linestyle``) per run: one colour per colour key, one line
    style per style key, and never the same pair for two different (colour key, style key)s.

    When there are more colour keys than colours, the colours are reused with further line
    styles, so pairs stay distinct.

    Examples
    --------
    >>> [(s["color"], s["linestyle"]) for s in distinct_styles(["rr", "fifo", "rr"], ["dor", "dor", "val"])]
    [('tab:blue', '-'), ('tab:orange', '-'), ('tab:blue', '--')]
    """
    colours = {k: i for i, k in enumerate(dict.fromkeys(colour_keys))}
    kinds = {k: i for i, k in enumerate(dict.fromkeys(style_keys))}
    rounds = -(-len(colours) // len(_MEASURED_COLORS))  # how often the palette is reused
    if len(kinds) * rounds > len(_LINESTYLES):
        raise UserError(f"too many runs to draw apart: {len(colours)} colours x {len(kinds)} line styles")
    out = []
    for c, k in zip(colour_keys, style_keys):
        ci = colours[c]
        out.append({"color": _MEASURED_COLORS[ci % len(_MEASURED_COLORS)],
                    "linestyle": _LINESTYLES[kinds[k] * rounds + ci // len(_MEASURED_COLORS)]})
    return out


def plot_experiment(result, path: str | Path) -> list[Path]:
    """Packets delivered against steps for every run of the first seed (and first problem).

    ``result`` is an :class:`~universal.experiment.ExperimentResult` run with
    ``keep_delivery=True``. The colour says the protocol (with B and b when they vary), the line
    style the path system; buffered and bufferless protocols get a panel each, since the
    bufferless ones take many times longer.

    Returns
    -------
    list of Path
        The file written.
    """
    return [_save(experiment_figure(result), path)]


def experiment_figure(result):
    """The :class:`matplotlib.figure.Figure` of :func:`plot_experiment`.

    Examples
    --------
    >>> from universal.experiment import Experiment, run_experiment
    >>> res = run_experiment(Experiment("butterfly:d=3", "permutation:random", ["dimension-order"],
    ...                                 ["fifo", "trial-and-failure"]), keep_delivery=True)
    >>> [ax.get_title() for ax in experiment_figure(res).axes]
    ['buffered protocols', 'bufferless protocols']
    """
    if not result.deliveries:
        raise ValueError("run the experiment with keep_delivery=True to plot its deliveries")
    first = (result.rows[0].problem, result.rows[0].seed)
    runs, labels, panels, colours, kinds = [], [], [], [], []
    for row, delivery in zip(result.rows, result.deliveries):
        if (row.problem, row.seed) != first:
            continue
        setting = f", B = {row.bandwidth}" if isinstance(result.bandwidth, list) else ""
        setting += f", b = {'∞' if row.buffer is None else row.buffer}" if isinstance(result.buffer, list) else ""
        setting += f", V = {row.vcs}" if isinstance(result.vcs, list) else ""
        runs.append(delivery)
        labels.append(f"{row.paths} / {row.protocol}{setting}")
        panels.append("bufferless protocols" if row.rounds is not None else "buffered protocols")
        colours.append(row.protocol + setting)
        kinds.append(row.paths)
    if len(set(panels)) == 1:
        panels = [None] * len(runs)
    title = f"{first[0]} on {result.network.name} (seed {first[1]}): packets delivered by step"
    return delivery_figure(runs, labels=labels, title=title, panels=panels, colour_keys=colours, style_keys=kinds)
