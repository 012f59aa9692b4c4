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


