"""Tables fit the terminal: at 80 and 120 columns no number is cut (no ``…`` anywhere), every line
fits, no two protocols or path systems share a visible label, and a short label is always
explained by the legend. Checked on the flagship scenario and the load and worst-case tables (the
README's worked example: tests/test_readme.py)."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len

from universal.cli import main
from universal.experiment import run_experiment
from universal.load_analysis import LoadAnalysis, run_load_analysis
from universal.oblivious import ROUTINGS
from universal.paths.systems import PATH_SYSTEMS
from universal.protocols.buffered import PROTOCOLS
from universal.reporting import layout
from universal.reporting.layout import SHORT_NAMES, Col, FitTable, Fold, render_text, short_name
from universal.reporting.oblivious import load_results_table, worstcase_table
from universal.reporting.tables import experiment_table
from universal.scenario import load_scenario

WIDTHS = [80, 120]


@pytest.fixture(scope="module")
def flagship():
    return run_experiment(load_scenario("butterfly_hrelation").experiment)


def assert_fits(text: str, width: int) -> None:
    assert "…" not in text
    for line in text.splitlines():
        assert cell_len(line.rstrip()) <= width, line


def assert_labels_unambiguous(table: FitTable, width: int, column: str) -> None:
    """Distinct names in ``column`` stay distinct on screen, and each short label is in the legend."""
    headers, body = table.visible(width)
    j = headers.index(column)
    i = [c.header for c in table.columns].index(column)
    names = [str(cells[i]) for cells, _ in table.rows]
    shown = [row[j].replace("\n", "") for row in body]
    pairs = {n: s for n, s in zip(names, shown) if n}
    assert len(set(pairs.values())) == len(pairs), pairs
    legend = render_text(table, width)
    legend = re.sub(r"\s+", " ", legend)
    for name, label in pairs.items():
        if label != name.replace("\n", ""):
            assert f"{label} = {name}" in legend


@pytest.mark.parametrize("width", WIDTHS)
def test_flagship_table_fits_without_cut_numbers_or_shared_labels(flagship, width):
    table = experiment_table(flagship)
    assert_fits(render_text(table, width), width)
    assert_labels_unambiguous(table, width, "protocol")
    assert_labels_unambiguous(table, width, "paths")
    # the numbers shown are the numbers computed: each T cell is its mean and range, whole
    headers, body = table.visible(width)
    t = headers.index("T")
    for (cells, _), row in zip(table.rows, body):
        full = cells[[c.header for c in table.columns].index("T")]
        assert row[t].split() == " ".join(full.parts).split()


def test_at_120_columns_the_flagship_keeps_full_protocol_names(flagship):
    headers, body = experiment_table(flagship).visible(120)
    protocols = {row[headers.index("protocol")] for row in body}
    assert {"random-rank", "growing-rank", "random", "trial-and-failure"} <= protocols


def test_wide_keeps_every_column_and_columns_selects(flagship):
    wide = experiment_table(flagship, wide=True)
    headers, _ = wide.visible(80)
    assert {"buf", "lat", "rounds", "disc"} <= {h.replace("\n", " ") for h in headers}
    for width in (80, 100, 120):
        text = render_text(wide, width)
        assert_fits(text, width)                      # in pieces where one table does not fit
        for cells, _ in wide.rows:                    # every value of every column is printed
            for cell in cells[2:]:
                for part in (cell.parts if isinstance(cell, Fold) else [cell]):
                    assert part in text
    chosen = experiment_table(flagship, columns=["T", "C"])
    assert chosen.visible(80)[0] == ["paths", "protocol", "C", "T"]


def test_left_out_columns_are_named_under_the_table(flagship):
    text = re.sub(r"\s+", " ", render_text(experiment_table(flagship), 80))
    assert "left out at this width: last del, lat, buf, disc, rounds" in text
    # and their explanations in the caption go with them
    assert "lat: mean packet latency" not in text and "disc: discarded" not in text
    assert "lat: mean packet latency" in re.sub(r"\s+", " ", render_text(experiment_table(flagship), 200))


@pytest.mark.parametrize("width", WIDTHS)
def test_load_and_worstcase_tables_fit(width):
    report = run_load_analysis(LoadAnalysis("torus:k=9,n=2", ["dor", "romm"],
                                            ["uniform", "bitcomp", "tornado", "random-perms:50"], worstcase=True))
    for table in (load_results_table(report), worstcase_table(report)):
        assert_fits(render_text(table, width), width)
    graph = run_load_analysis(LoadAnalysis("mesh:k=4,n=2", ["dimension-order", "random-shortest", "valiant"],
                                           worstcase=True))
    text = render_text(worstcase_table(graph), width)
    assert_fits(text, width)
    assert "16/51" in text


def test_cli_columns_and_wide_options(capsys):
    argv = ["route", "--network", "hypercube:d=4", "--problem", "permutation:transpose", "--columns", "T,C"]
    assert main(argv) == 0
    head = capsys.readouterr().out.splitlines()[1:4]
    assert any(re.search(r"paths .*protocol .* C .* T ", line) for line in head)
    assert main(argv[:-2] + ["--columns", "nosuch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "nosuch" in err[0]


def test_cli_columns_of_the_offline_optimum_are_known(capsys):
    """``--opt`` adds OPT and T/OPT; ``--columns`` accepts them (one list of names serves both)."""
    argv = ["route", "--network", "hypercube:d=3", "--problem", "permutation:bit-complement", "--protocols",
            "random-rank", "--opt", "--columns", "T,OPT,T/OPT"]
    assert main(argv) == 0
    head = capsys.readouterr().out.splitlines()[1:4]
    assert any(re.search(r"protocol .* T .* OPT .* T/OPT", line) for line in head)


def test_the_width_model_is_rich_s_width():
    """The width a layout is predicted to take is what rich draws (so no table is squeezed)."""
    table = FitTable([Col("paths", "left", "name"), Col("protocol", "left", "name"), Col("C"),
                      Col("T/(C+D)", folded_header="T/\n(C+D)"), Col("T"), Col("lat", drop=1)],
                     [(["dimension-order", "random-rank", "4.7", "0.74", Fold("11.3", "(10–13)"), "6.3"], None),
                      (["valiant:base=shortest", "growing-rank:K=40", "10", "1.00", Fold("7"), "3.2"], None)])
    for lay in table.layouts():
        drawn = max(cell_len(line) for line in render_text(table._build(lay, {}), 1000).splitlines()[1:])
        assert drawn == table._width(lay), lay


def test_short_names_are_not_registered_names():
    registered = {n.lower() for n in PROTOCOLS.names() + PATH_SYSTEMS.names() + list(ROUTINGS)}
    for name, short in SHORT_NAMES.items():
        assert short.lower() not in registered, short
        assert short_name(f"{name}:K=3") == f"{short}:K=3"
    assert layout.short_name("valiant:base=random-shortest") == "valiant:base=rnd-short"


def test_a_short_label_is_used_only_where_it_is_unique():
    # two names whose short labels would clash keep their full names
    table = FitTable([Col("protocol", "left", "name"), Col("T")],
                     [(["random-rank", "1"], None), (["RR", "2"], None)])
    _, body = table.visible(10)
    assert [row[0] for row in body] == ["random-rank", "RR"]


def test_several_problems_get_a_table_each_and_fit_80_columns():
    from universal.experiment import Experiment
    from universal.reporting.tables import experiment_tables

    res = run_experiment(Experiment("hypercube:d=6", ["permutation:bit-reversal", "permutation:transpose"],
                                    ["dimension-order", "valiant"],
                                    ["random-rank", "growing-rank", "fifo", "farthest-to-go"], seeds=[0, 1]))
    tables = experiment_tables(res)
    assert [t.title for t in tables] == ["route: permutation:bit-reversal on hypercube:d=6",
                                         "route: permutation:transpose on hypercube:d=6"]
    for table in tables:
        assert "problem" not in table.headers
        for width in WIDTHS:
            text = render_text(table, width)
            assert_fits(text, width)
            assert "(continued)" not in text              # one piece: the core columns fit
            assert_labels_unambiguous(table, width, "protocol")


@pytest.mark.parametrize("width", [80, 120])
def test_open_loop_load_sweep_fits_without_cut_names_or_numbers(width):
    """The load-sweep table of ``openloop --loads`` (eleven columns) fits a narrow terminal."""
    from universal.reporting.openloop import openloop_table

    rows = [{"routing": routing, "traffic": traffic, "seed": 0, "offered": offered, "accepted": 0.098,
             "accepted_min": 0.087, "latency_mean": 12.5, "latency_p50": 11.0, "latency_p99": 40.0,
             "hops_mean": 5.25, "stable": True, "status": "stable"}
            for routing in ("min-adaptive", "dor") for traffic in ("uniform", "bitcomp") for offered in (0.1, 0.9)]
    table = openloop_table({"units": "capacity", "network": {"name": "torus:k=8,n=2"}, "rows": rows})
    text = render_text(table, width)
    assert_fits(text, width)
    assert "min-adaptive" in text or "min-adaptive" in "".join(table.caption + text.splitlines())
    assert "12.5" in text and "0.087" in text
