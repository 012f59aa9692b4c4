"""Figures for ``--plot FILE``: routing time versus size, channel-load heat maps, throughput
histograms and delivery curves.

Every function draws one figure with matplotlib's object API (a fresh
:class:`matplotlib.figure.Figure` on the Agg canvas, no pyplot state) and writes it to ``path`` as
PNG or SVG, chosen by the suffix. The file is written atomically: the image goes to a temporary file
in the same folder, which then replaces ``path``, so an error never leaves a half-written file.
matplotlib is imported only when a figure is drawn; without it the functions raise a
:class:`~universal.errors.UserError` that says how to install it from where the user is (:mod:`universal.extras`).

Call :func:`check_plot_path` before a long computation to refuse a bad file name early.

Examples
--------
>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as tmp:
...     out = plot_delivery_curve([[1, 2, 2, 3], [2, 4, 4, -1]], pathlib.Path(tmp) / "d.png",
...                               labels=["random-rank", "fifo"])
...     out.name, out.stat().st_size > 5000
('d.png', True)

One module per family of figures: :mod:`~universal.reporting.plots.scaling` (T against size),
:mod:`~universal.reporting.plots.loads` (heat maps, throughput histograms),
:mod:`~universal.reporting.plots.delivery` (packets delivered by step), over
:mod:`~universal.reporting.plots.common` (files, matplotlib, styles).
"""

from __future__ import annotations

from universal.reporting.plots.common import PLOT_FORMATS, check_plot_path
from universal.reporting.plots.delivery import (delivery_counts, delivery_figure, distinct_styles, experiment_figure,
                                                plot_delivery_curve, plot_experiment)
from universal.reporting.plots.loads import (_throughput_data, load_grids, plot_load_heatmap, plot_load_report,
                                             plot_throughput_histogram, torus_channel_loads)
from universal.reporting.plots.scaling import Curve, plot_scaling, plot_sweep, scaling_series

__all__ = ["PLOT_FORMATS", "Curve", "check_plot_path", "scaling_series", "plot_scaling", "plot_sweep",
           "torus_channel_loads", "load_grids", "plot_load_heatmap", "plot_throughput_histogram",
           "plot_load_report", "delivery_counts", "delivery_figure", "distinct_styles", "experiment_figure",
           "plot_delivery_curve", "plot_experiment"]
