"""Plots for --plot: every figure is written as a valid PNG and SVG, atomically, from the data the
experiments and the load analysis produce; the data behind the scaling curves and the heat maps is
exactly the data given."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from universal.engine import ENGINES
from universal.errors import UserError
from universal.experiment import Experiment, run_experiment, summarize
from universal.networks import build_network
from universal.oblivious import Torus, channel_loads, load_table, pair_loads, worst_case
from universal.paths import build_path_system
from universal.protocols import build_protocol
from universal.reporting import plots
from universal.reporting.plots import (Curve, check_plot_path, delivery_counts, load_grids,
                                       plot_delivery_curve, plot_load_heatmap, plot_scaling,
                                       plot_throughput_histogram, scaling_series, torus_channel_loads)
from universal.workloads import build_problem

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 600 and height >= 400
    assert len(data) > 10_000


def assert_svg(path: Path) -> None:
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    assert len(list(root.iter())) > 50


def assert_only(folder: Path, *names: str) -> None:
    """The folder holds exactly these files: no temporary leftovers."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


# ------------------------------------------------------------------------------------- fixtures
SIZES = (3, 4, 5)
PROBLEMS = ["permutation:bit-reversal", "h-relation:h=2"]
SYSTEMS = ["dimension-order", "valiant"]
PROTOCOLS = ["random-rank", "growing-rank", "fifo"]


@pytest.fixture(scope="module")
def rows_by_size():
    return {d: run_experiment(Experiment(f"butterfly:d={d}", PROBLEMS, SYSTEMS, PROTOCOLS, seeds=[0, 1])).rows
            for d in SIZES}


@pytest.fixture(scope="module")
def summaries_by_size(rows_by_size):
    return {d: summarize(rows) for d, rows in rows_by_size.items()}


@pytest.fixture(scope="module")
def torus_loads():
    torus = Torus(8, 2)
    return torus, torus_channel_loads(torus, "dor", "transpose")


# ------------------------------------------------------------------------------- scaling series
def _find(summaries, **keys):
    (match,) = [s for s in summaries if all(s[k] == v for k, v in keys.items())]
    return match


def test_scaling_series_measured_curves_are_the_summaries(summaries_by_size):
    curves = scaling_series(summaries_by_size)
    measured = [c for c in curves if c.kind == "measured"]
    assert len(measured) == len(PROBLEMS) * len(SYSTEMS) * len(PROTOCOLS)
    assert {(c.panel, c.label) for c in measured} == {
        (f"{p}, {s}", r) for p in PROBLEMS for s in SYSTEMS for r in PROTOCOLS}
    for c in measured:
        problem, paths = c.panel.split(", ")
        assert list(c.x) == list(SIZES)
        for d, y, lo, hi in zip(c.x, c.y, c.y_min, c.y_max):
            s = _find(summaries_by_size[d], problem=problem, paths=paths, protocol=c.label)
            assert (y, lo, hi) == (s["T"], s["T_min"], s["T_max"])
            assert lo <= y <= hi


def test_scaling_series_bound_curves_once_per_collection(summaries_by_size):
    curves = scaling_series(summaries_by_size)
    bounds = [c for c in curves if c.kind == "bound"]
    assert len({(c.panel, c.label) for c in bounds}) == len(bounds)       # no duplicates
    by_label: dict[str, list[Curve]] = {}
    for c in bounds:
        by_label.setdefault(c.label, []).append(c)
    # random-rank and growing-rank share their bound expression: one curve naming both; FIFO has none
    assert set(by_label) == {"C + D", "lower bound max(C/B, D)", "C + D + log n (random-rank, growing-rank)"}
    for label, key in [("C + D", "C_plus_D"), ("lower bound max(C/B, D)", "lower_bound"),
                       ("C + D + log n (random-rank, growing-rank)", "bound")]:
        assert len(by_label[label]) == len(PROBLEMS) * len(SYSTEMS)
        for c in by_label[label]:
            assert c.linestyle in ("--", ":", "-.")
            problem, paths = c.panel.split(", ")
            for d, y in zip(c.x, c.y):
                assert y == _find(summaries_by_size[d], problem=problem, paths=paths, protocol="random-rank")[key]


def test_scaling_series_takes_rows_one_panel_and_x_of_size(rows_by_size, summaries_by_size):
    from_rows = scaling_series(rows_by_size, size_to_x=lambda d: 2 ** d, panel_by=())
    assert {c.panel for c in from_rows} == {None}
    assert all(list(c.x) == [8, 16, 32] for c in from_rows)
    labels = [c.label for c in from_rows]
    assert len(labels) == len(set(labels))
    assert "permutation:bit-reversal / valiant / fifo" in labels
    assert "C + D (h-relation:h=2 / dimension-order)" in labels
    same = scaling_series(summaries_by_size, size_to_x=lambda d: 2 ** d, panel_by=())
    assert [(c.label, list(c.y)) for c in same] == [(c.label, list(c.y)) for c in from_rows]


def test_scaling_series_names_the_bandwidth_when_it_varies():
    rows = {d: run_experiment(Experiment(f"butterfly:d={d}", "permutation:bit-reversal", ["dimension-order"],
                                         ["fifo"], bandwidth=[1, 2])).rows for d in (3, 4)}
    curves = scaling_series(rows)
    assert {c.label for c in curves} == {"fifo / B = 1", "fifo / B = 2", "C + D (B = 1)", "C + D (B = 2)",
                                         "lower bound max(C/B, D) (B = 1)", "lower bound max(C/B, D) (B = 2)"}
    with pytest.raises(UserError, match="panel_by"):
        scaling_series(rows, panel_by=("network",))


def test_plot_scaling_png_and_svg(summaries_by_size, tmp_path):
    curves = scaling_series(summaries_by_size, size_to_x=lambda d: 2 ** d)
    assert_png(plot_scaling(curves, tmp_path / "s.png", x_label="inputs n = 2^d"))
    assert_svg(plot_scaling(curves, tmp_path / "s.svg", x_label="inputs n = 2^d"))
    assert_only(tmp_path, "s.png", "s.svg")


def test_plot_scaling_accepts_dicts_and_refuses_nonsense(tmp_path):
    curve = {"label": "fifo", "x": [4, 5, 6], "y": [7, 9, 12], "y_min": [6, 9, 11], "y_max": [8, 10, 13]}
    assert_png(plot_scaling([curve, {"label": "C + D", "x": [4, 5, 6], "y": [6, 8, 10], "kind": "bound"}],
                            tmp_path / "d.png", x_label="d"))
    with pytest.raises(UserError, match="kind"):
        plot_scaling([{**curve, "kind": "guess"}], tmp_path / "e.png")
    with pytest.raises(UserError, match="nothing to plot"):
        plot_scaling([], tmp_path / "e.png")
    assert_only(tmp_path, "d.png")


# ------------------------------------------------------------------------------------- heat map
def test_heatmap_data_is_the_loads_given(torus_loads):
    torus, loads = torus_loads
    # the loads are the load analysis's own: their maximum gives load_table's throughput
    (row,) = load_table(8, 2, ["dor"], ["transpose"], np.random.default_rng(0))
    assert float(torus.capacity_load) / max(v.max() for v in loads.values()) == pytest.approx(row.throughput)
    grids = load_grids(loads, torus)
    names = {(0, 1): "+x", (0, -1): "-x", (1, 1): "+y", (1, -1): "-y"}
    for cls, values in loads.items():
        image = grids[names[cls]]
        assert image.shape == (8, 8)
        for node in range(torus.N):
            x, y = torus.coords[node]
            assert image[y, x] == values[node]
    # the same loads as one value per channel, in the analysis's channel numbering
    flat = np.zeros(torus.num_channels)
    for (dim, sign), values in loads.items():
        flat[torus.channel(np.arange(torus.N), dim, sign)] = values
    assert all(np.array_equal(grids[k], v) for k, v in load_grids(flat, torus).items())


def test_heatmap_of_a_mesh_network_link_loads():
    net = build_network("mesh:k=4,n=2")
    loads = np.arange(net.num_links, dtype=float) + 1
    grids = load_grids(loads, net)
    assert np.isnan(grids["+x"][:, 3]).all() and np.isnan(grids["-x"][:, 0]).all()
    assert np.isnan(grids["+y"][3, :]).all() and np.isnan(grids["-y"][0, :]).all()
    seen = []
    for link in range(net.num_links):
        tail, head = int(net.link_tail[link]), int(net.link_head[link])
        (tx, ty), (hx, hy) = divmod(tail, 4)[::-1], divmod(head, 4)[::-1]
        name = {(1, 0): "+x", (-1, 0): "-x", (0, 1): "+y", (0, -1): "-y"}[(hx - tx, hy - ty)]
        assert grids[name][ty, tx] == loads[link]
        seen.append(loads[link])
    assert sorted(seen) == sorted(v for g in grids.values() for v in g[np.isfinite(g)])


def test_heatmap_of_a_torus_network_uses_wraparound_directions():
    net = build_network("torus:k=4,n=2")
    loads = np.arange(net.num_links, dtype=float)
    grids = load_grids(loads, net)
    assert all(np.isfinite(g).all() for g in grids.values())
    wrap = int(net.links_between(np.array([3]), np.array([0]))[0])    # (3,0) -> (0,0) is a +x channel
    assert grids["+x"][0, 3] == loads[wrap]


def test_heatmap_refuses_what_it_cannot_draw():
    with pytest.raises(UserError, match="2-D"):
        load_grids({}, Torus(3, 3))
    with pytest.raises(UserError, match="2-D torus or mesh"):
        load_grids(np.zeros(10), build_network("butterfly:d=2"))
    with pytest.raises(UserError, match="channels"):
        load_grids(np.zeros(5), Torus(4, 2))
    with pytest.raises(UserError, match="random permutations"):
        torus_channel_loads(Torus(4, 2), "dor", "random-perms:3")


def test_plot_load_heatmap_png_and_svg(torus_loads, tmp_path):
    torus, loads = torus_loads
    assert_png(plot_load_heatmap(loads, tmp_path / "h.png", grid=torus, title="DOR, transpose"))
    net = build_network("mesh:k=5,n=2")
    assert_svg(plot_load_heatmap(np.ones(net.num_links), tmp_path / "h.svg", grid=net, label="paths per link"))
    assert_only(tmp_path, "h.png", "h.svg")


# --------------------------------------------------------------------------- throughput histogram
@pytest.fixture(scope="module")
def romm_random_perms():
    (row,) = load_table(4, 2, ["romm"], ["random-perms:200"], np.random.default_rng(1))
    return row, worst_case(4, 2, "romm")


def test_plot_throughput_histogram_from_a_load_result(romm_random_perms, tmp_path):
    row, worst = romm_random_perms
    assert worst.throughput <= row.throughput              # the exact worst case is never above the samples'
    assert_png(plot_throughput_histogram(row, tmp_path / "t.png", exact_worst=worst))
    assert_svg(plot_throughput_histogram(row.histogram, tmp_path / "t.svg", exact_worst=worst.throughput))
    assert_only(tmp_path, "t.png", "t.svg")


def test_plot_throughput_histogram_of_samples_and_several_routings(romm_random_perms, tmp_path):
    row, worst = romm_random_perms
    samples = np.random.default_rng(0).uniform(0.3, 0.6, 300)
    assert_png(plot_throughput_histogram({"romm": row, "other": samples}, tmp_path / "t.png",
                                         exact_worst={"romm": worst}))
    assert plots._throughput_data(samples)[2] == samples.min()
    assert plots._throughput_data(row)[2] == row.throughput
    (single,) = load_table(4, 2, ["dor"], ["tornado"], np.random.default_rng(0))
    with pytest.raises(UserError, match="random-perms"):
        plot_throughput_histogram(single, tmp_path / "u.png")
    with pytest.raises(UserError, match="no throughput"):
        plot_throughput_histogram([], tmp_path / "u.png")
    assert_only(tmp_path, "t.png")


def test_the_overestimate_arrow_and_its_label_pass_above_every_bar_beneath_them():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from universal.reporting.plots.loads import _mark_overestimates

    ax = Figure().subplots()
    tall = (np.array([400, 50]), np.array([0.28, 0.29, 0.30]))           # another routing's bars in the gap
    wide = (np.array([10, 200, 260, 90]), np.array([0.31, 0.35, 0.40, 0.45, 0.50]))
    for counts, edges in (tall, wide):
        ax.stairs(counts, edges, fill=True)
    ax.set_xlim(0.19, 0.55)
    needed = _mark_overestimates(ax, [(0.21, 0.31)], [tall, wide], top=450)
    [arrow] = [t for t in ax.texts if not t.get_text()]
    [label] = [t for t in ax.texts if t.get_text().startswith("sampling overestimates")]
    height = arrow.xy[1]
    # the label's half width (0.11 of the axis) reaches into the first bin of the wide histogram
    assert height > 400 and label.get_position()[1] == height and needed > height
    assert "by 0.100" in label.get_text()


# -------------------------------------------------------------------------------- delivery curve
@pytest.fixture(scope="module")
def two_runs():
    net = build_network("butterfly:d=4")
    problem = build_problem("permutation:bit-reversal", net, np.random.default_rng(0))
    paths = build_path_system("dimension-order", net).route(problem, net, np.random.default_rng(0))
    return [ENGINES["fast"](paths, build_protocol(p), np.random.default_rng(0)) for p in ("random-rank", "fifo")]


def test_delivery_counts(two_runs):
    steps, counts = delivery_counts(np.array([2, 0, 2, -1, 3]))
    assert steps.tolist() == [0, 1, 2, 3] and counts.tolist() == [1, 1, 3, 4]
    for run in two_runs:
        steps, counts = delivery_counts(run)
        assert steps[-1] == run.T and counts[-1] == run.delivered
        assert all(counts[s] == np.count_nonzero((run.delivery >= 0) & (run.delivery <= s)) for s in steps)
    assert [a.tolist() for a in delivery_counts(np.array([-1, -1]))] == [[0], [0]]


def test_plot_delivery_curve_png_and_svg(two_runs, tmp_path):
    assert_png(plot_delivery_curve(two_runs, tmp_path / "d.png", labels=["random-rank", "fifo"]))
    assert_svg(plot_delivery_curve(two_runs[0].delivery, tmp_path / "d.svg", fraction=True))
    assert_png(plot_delivery_curve([3, 1, -1], tmp_path / "e.png"))
    with pytest.raises(UserError, match="labels"):
        plot_delivery_curve(two_runs, tmp_path / "f.png", labels=["one"])
    assert_only(tmp_path, "d.png", "d.svg", "e.png")


# ------------------------------------------------------------------------------- files, matplotlib
@pytest.mark.parametrize("name", ["plot.pdf", "plot", "plot.png.txt"])
def test_a_bad_suffix_is_refused_and_writes_nothing(name, tmp_path):
    with pytest.raises(UserError, match=r"must end in \.png or \.svg"):
        plot_delivery_curve([1, 2], tmp_path / name)
    assert_only(tmp_path)


def test_check_plot_path(tmp_path):
    assert check_plot_path(tmp_path / "a.PNG") == tmp_path / "a.PNG"
    with pytest.raises(UserError, match="does not exist"):
        check_plot_path(tmp_path / "missing" / "a.png")
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(UserError, match="is a folder"):
        check_plot_path(tmp_path / "dir.png")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    target = tmp_path / "d.png"
    target.write_bytes(b"old")

    def broken(self, handle, **kwargs):
        handle.write(b"half a picture")
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        plot_delivery_curve([1, 2], target)
    assert target.read_bytes() == b"old"
    assert_only(tmp_path, "d.png")


def test_without_matplotlib_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)           # import matplotlib -> ImportError
    # a checkout names its extra, an installed copy (CI's) the requirement itself
    with pytest.raises(UserError, match=r"pip install '(.*\[plot\]|matplotlib>=.*)'"):
        plot_delivery_curve([1, 2], tmp_path / "d.png")
    assert_only(tmp_path)


def test_no_pyplot_figures_are_left_open(tmp_path):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plot_delivery_curve([1, 2], tmp_path / "d.png")
    assert plt.get_fignums() == before


# --- the flagship figure: distinct styles, legends off the data, each family on its own axis ---------
@pytest.fixture(scope="module")
def flagship_figure():
    from universal.reporting.plots import experiment_figure
    from universal.scenario import load_scenario

    exp = load_scenario("butterfly_hrelation").experiment
    exp.seeds = exp.seeds[:1]
    result = run_experiment(exp, keep_delivery=True)
    fig = experiment_figure(result)
    fig.canvas.draw()
    return result, fig


def test_flagship_plot_has_no_repeated_colour_and_style(flagship_figure):
    from matplotlib.colors import to_hex

    result, fig = flagship_figure
    lines = [line for ax in fig.axes for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert len(lines) == len(result.rows) == 16      # 8 protocols x 2 path systems, first seed
    pairs = [(to_hex(line.get_color()), line.get_linestyle()) for line in lines]
    assert len(set(pairs)) == len(pairs)
    # colour says the protocol, line style the path system
    by_label = {line.get_label().split(" (last delivery")[0]: pair for line, pair in zip(lines, pairs)}
    assert by_label["dimension-order / fifo"][0] == by_label["valiant / fifo"][0]
    assert by_label["dimension-order / fifo"][1] == by_label["dimension-order / random-rank"][1]
    assert by_label["dimension-order / fifo"][1] != by_label["valiant / fifo"][1]


def test_flagship_plot_legends_are_outside_the_data(flagship_figure):
    _, fig = flagship_figure
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes]
    assert all(legend is not None for legend in legends)
    for ax, legend in zip(fig.axes, legends):
        box, area = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert box.x0 >= area.x1, "legend overlaps the plotting area"
        assert box.x1 <= fig.bbox.x1 + 1, "legend cut off at the figure's edge"


def test_flagship_plot_gives_buffered_and_bufferless_runs_their_own_axis(flagship_figure):
    result, fig = flagship_figure
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["buffered protocols", "bufferless protocols"]
    for ax in fig.axes:
        longest = max(line.get_xdata()[-1] for line in ax.get_lines())
        assert longest >= 0.8 * ax.get_xlim()[1]          # the runs fill their axis
    buffered = [r.T for r in result.rows if r.rounds is None]
    assert fig.axes[0].get_xlim()[1] < 2 * max(buffered)


def test_sweep_markers_of_equal_values_are_set_apart(tmp_path, monkeypatch):
    from universal.reporting.plots import scaling

    drawn = []
    real = scaling._save
    monkeypatch.setattr(scaling, "_save", lambda fig, path: (drawn.append(fig), real(fig, path))[1])
    curves = [Curve("random-rank", [16, 64, 256], [9, 20, 41]), Curve("growing-rank", [16, 64, 256], [9, 20, 41])]
    plot_scaling(curves, tmp_path / "s.png")
    xs = [line.get_xdata() for line in drawn[0].axes[0].get_lines() if not line.get_label().startswith("_")]
    assert len(xs) == 2
    ratio = np.asarray(xs[1]) / np.asarray(xs[0])
    assert np.allclose(ratio, scaling.dodge_factor([16, 64, 256], 2))   # apart by the documented factor
    assert ratio[0] > 1.03
    assert np.allclose(np.sqrt(np.asarray(xs[0]) * np.asarray(xs[1])), [16, 64, 256])  # centred on the size


# --- open-loop curves: analytic saturation named, legends off the data ---------------------------
def test_openloop_plot_marks_and_names_the_analytic_saturation(tmp_path, monkeypatch):
    from universal.reporting.plots import openloop as module

    figures = []
    monkeypatch.setattr(module, "_save", lambda fig, path: figures.append(fig) or Path(path))
    rows = [dict(routing=r, traffic="tornado", offered=x, accepted=min(x, cap), accepted_min=min(x, cap) - 0.01,
                 latency_mean=3 + x if x < cap else None, stable=x < cap, analytic_value=exact)
            for r, cap, exact in (("dor", 1 / 3, 1 / 3), ("goal", 0.53, None)) for x in (0.1, 0.3, 0.5)]
    module.plot_openloop(rows, tmp_path / "o.png")
    fig, = figures
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        marks = [line for line in ax.get_lines() if line.get_label() == "dor Θ, analysis"]
        assert len(marks) == 1 and list(marks[0].get_xdata()) == [1 / 3, 1 / 3]
        assert "goal Θ, analysis" not in [line.get_label() for line in ax.get_lines()]
        assert "dor Θ, analysis" in [t.get_text() for t in ax.get_legend().get_texts()]
        box, area = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
        assert box.x0 >= area.x1, "legend overlaps the plotting area"
    # plain dots belong to α' and the analysis lines: no routing's own curve uses them
    curves = [line for line in fig.axes[0].get_lines() if "analysis" not in line.get_label()]
    assert all(line.get_linestyle() != ":" for line in curves)


def test_openloop_latency_goes_on_a_log_axis_when_one_routing_is_much_slower(tmp_path, monkeypatch):
    from universal.reporting.plots import openloop as module

    figures = []
    monkeypatch.setattr(module, "_save", lambda fig, path: figures.append(fig) or Path(path))

    def rows(traffic, slow):
        return [dict(routing=r, traffic=traffic, offered=x, accepted=x, accepted_min=x, stable=True,
                     latency_mean=(slow if r == "val" and x == 0.5 else 3 + x))
                for r in ("dor", "val") for x in (0.1, 0.3, 0.5)]
    module.plot_openloop(rows("tornado", 40.0) + rows("uniform", 9.0), tmp_path / "o.png")
    (fig,) = figures
    tornado_latency, _, uniform_latency, _ = fig.axes
    # 40 steps beside 3.1: on a linear axis dor's curve would be a flat line at the bottom
    assert tornado_latency.get_yscale() == "log" and "log scale" in tornado_latency.get_ylabel()
    low, high = tornado_latency.get_ylim()
    assert low <= 3.1 and high >= 40
    assert uniform_latency.get_yscale() == "linear" and "log" not in uniform_latency.get_ylabel()   # 9 / 3.1 < 5
