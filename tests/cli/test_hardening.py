"""What issue 11 asked of the command line beyond refusing bad input (tests/test_bad_inputs.py):
provenance in every JSON output, unfinished runs shown as such, checks made before the work,
plots off 2-D tori, time estimates, per-link loads, defaults and pattern names."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import universal
from universal.cli import main

TINY_SWEEP = ('network = "hypercube:d={d}"\nproblem = "permutation:random"\npaths = "dimension-order"\n'
              'protocols = "fifo"\nseeds = 1\n[sweep]\nd = [2, 3]\n')


def run(capsys, *argv: str, cwd: Path | None = None) -> tuple[int, str, str]:
    here = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        status = main(list(argv))
    finally:
        os.chdir(here)
    out, err = capsys.readouterr()
    return status, out, err


# --------------------------------------------------------------------------- item 18: provenance


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"universal {universal.__version__}\n"


JSON_COMMANDS = {
    "route": ["route", "--network", "hypercube:d=2", "--problem", "permutation:random", "--json"],
    "route --trace": ["route", "--network", "hypercube:d=2", "--problem", "permutation:random", "--trace",
                      "--json"],
    "load": ["load", "--network", "torus:k=4,n=2", "--traffic", "uniform", "--json"],
    "worstcase": ["worstcase", "--network", "torus:k=4,n=2", "--json"],
    "scenario (load)": ["scenario", "load.toml", "--json"],
    "openloop": ["openloop", "--network", "torus:k=4,n=2", "--loads", "0.2", "--window", "50", "--json"],
    "scenario (experiment)": ["scenario", "exp.toml", "--json"],
    "scenario (sweep)": ["scenario", "sweep.toml", "--out", "r.jsonl", "--json"],
}


@pytest.mark.parametrize("name", JSON_COMMANDS)
def test_every_json_output_holds_version_and_command(name, tmp_path, capsys):
    (tmp_path / "sweep.toml").write_text(TINY_SWEEP)
    (tmp_path / "exp.toml").write_text(TINY_SWEEP.split("seeds")[0].replace("{d}", "2"))
    (tmp_path / "load.toml").write_text('kind = "load"\nnetwork = "torus:k=4,n=2"\nrouting = "dor"\n'
                                        'traffic = "uniform"\nworstcase = true\n')
    argv = JSON_COMMANDS[name]
    status, out, err = run(capsys, *argv, cwd=tmp_path)
    assert status == 0, err
    data = json.loads(out)
    assert data["version"] == universal.__version__
    assert data["command"] == "universal " + " ".join(argv)


def test_the_results_file_header_holds_version_and_command(tmp_path, capsys):
    (tmp_path / "sweep.toml").write_text(TINY_SWEEP)
    status, _, err = run(capsys, "scenario", "sweep.toml", "--out", "r.jsonl", "--csv", cwd=tmp_path)
    assert status == 0, err
    header = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])
    assert header["version"] == universal.__version__
    assert header["command"] == "universal scenario sweep.toml --out r.jsonl --csv"


# --------------------------------------------------------------------------- item 9: unfinished runs


def test_a_deadlocked_run_has_null_ratios_in_json_and_na_in_the_table(capsys):
    argv = ["route", "--network", "torus:k=8,n=1", "--problem", "permutation:tornado", "--paths",
            "dimension-order", "--protocols", "fifo", "--buffer", "1,unbounded"]
    status, out, err = run(capsys, *argv, "--json")
    stuck, done = json.loads(out)["rows"]
    assert stuck["status"] == "deadlock" and done["status"] == "delivered"
    for key in ("T_over_CD", "T_over_maxCD", "mean_latency", "latency_p50", "latency_p99"):
        assert stuck[key] is None and done[key] is not None
    status, out, err = run(capsys, *argv)
    assert status == 0
    assert "n/a" in out and "n/a: some run deadlocked before every packet arrived" in out


# --------------------------------------------------------------------------- item 10


def test_torus_routings_on_a_two_ary_torus_say_why_in_route_terms(capsys):
    status, _, err = run(capsys, "route", "--network", "torus:k=2,n=2", "--problem", "permutation:random",
                         "--paths", "romm")
    assert status == 2
    assert "path system 'romm' needs a torus with k >= 3" in err and "load analysis" not in err


# --------------------------------------------------------------------------- item 11: checks come first


ROUTE = ["route", "--network", "hypercube:d=2", "--problem", "permutation:random"]
ROUTES = "universal.experiment.run_experiment"
ANALYSES = "universal.load_analysis.run_load_analysis"


@pytest.mark.parametrize("argv, computes, option", [
    (ROUTE, ROUTES, "--plot"), (ROUTE, ROUTES, "--links"),
    (["load", "--network", "torus:k=5,n=2"], ANALYSES, "--plot"),
    (["load", "--network", "torus:k=5,n=2"], ANALYSES, "--links"),
    (["worstcase", "--network", "torus:k=5,n=2"], ANALYSES, "--plot"),
    (["worstcase", "--network", "torus:k=5,n=2"], ANALYSES, "--permutation-file"),
])
def test_output_files_are_checked_before_anything_is_computed(argv, computes, option, monkeypatch, capsys):
    module, name = computes.rsplit(".", 1)

    def must_not_run(*args, **kwargs):
        raise AssertionError("computed before the output file was checked")

    monkeypatch.setattr(f"{module}.{name}", must_not_run)
    status, _, err = run(capsys, *argv, option, "/sys/out.png")
    assert status == 2 and err.startswith("error: cannot write"), err


def test_a_plot_with_nothing_to_draw_is_refused_before_computing(monkeypatch, capsys):
    monkeypatch.setattr("universal.load_analysis.run_load_analysis", lambda *a, **k: 1 / 0)
    status, _, err = run(capsys, "load", "--network", "hypercube:d=3", "--traffic", "uniform", "--plot", "x.png")
    assert status == 2 and "nothing to draw" in err


# --------------------------------------------------------------------------- item 12: plots off 2-D tori


def test_worstcase_plot_on_a_mesh_draws_the_heat_map_under_the_worst_permutation(tmp_path, capsys):
    status, _, err = run(capsys, "worstcase", "--network", "mesh:k=4,n=2", "--routing", "dimension-order",
                         "--plot", str(tmp_path / "m.png"))
    assert status == 0, err
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("network", ["hypercube:d=4", "torus:k=3,n=3", "mesh:k=4,n=2"])
def test_random_perms_histograms_need_no_two_dimensional_layout(network, tmp_path, capsys):
    status, _, err = run(capsys, "load", "--network", network, "--routing", "valiant" if "torus" not in network
                         else "val", "--traffic", "random-perms:30", "--plot", str(tmp_path / "h.svg"))
    assert status == 0, err
    assert "<svg" in (tmp_path / "h.svg").read_text()


# --------------------------------------------------------------------------- item 13: long analyses


def test_an_analysis_of_many_hours_is_refused_at_once(capsys):
    from universal.load_analysis import MAX_SECONDS
    status, _, err = run(capsys, "load", "--network", "torus:k=8,n=4", "--routing", "rlb")
    assert status == 2 and f"more than {MAX_SECONDS // 60} minutes" in err


def test_the_estimate_follows_the_routes_to_tabulate():
    """A second count of the same quantity: every offset's routes, counted one by one, against
    the estimate's sample of 16 offsets (on a case small enough to count in full)."""
    from universal.load_analysis import _SECONDS_PER_ROUTE_CLASS, LoadAnalysis, estimate_seconds
    from universal.oblivious import Torus
    from universal.paths.torus.algorithms import get_routing
    torus = Torus(6, 2)
    routes = sum(len(get_routing("rlb").family(torus, t).weights) for t in range(torus.N))
    full = routes * 2 * torus.n * _SECONDS_PER_ROUTE_CLASS
    assert estimate_seconds(LoadAnalysis("torus:k=6,n=2", ["rlb"], ["uniform"])) == pytest.approx(full, rel=0.25)


def test_a_long_analysis_is_announced_on_stderr(monkeypatch, capsys):
    monkeypatch.setattr("universal.cli.outputs.LONG_SECONDS", -1)
    status, out, err = run(capsys, "load", "--network", "torus:k=4,n=2", "--json")
    assert status == 0 and err.startswith("note: this analysis will take roughly")
    assert json.loads(out)["rows"]


# --------------------------------------------------------------------------- item 19: --links


def _read_links(path: Path) -> list[tuple[str, str, float]]:
    rows = []
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            tail, head, load = line.split()
            rows.append((tail, head, float(load)))
    return rows


def test_route_links_count_the_paths_on_every_link(tmp_path, capsys):
    """Oracle: the node paths of the same collection (same seed), walked one hop at a time."""
    from universal.networks import build_network
    from universal.paths import route_paths
    from universal.workloads import build_problem
    status, _, err = run(capsys, "route", "--network", "torus:k=4,n=2", "--problem", "permutation:random",
                         "--paths", "valiant", "--analyze", "--links", str(tmp_path / "l.txt"), "--json")
    assert status == 0, err
    net = build_network("torus:k=4,n=2")
    problem_ss, paths_ss, _ = np.random.SeedSequence(0).spawn(3)
    problem = build_problem("permutation:random", net, np.random.default_rng(problem_ss))
    paths = route_paths("valiant", problem, net, np.random.default_rng(paths_ss))
    walked = Counter()
    for i in range(paths.size):
        nodes = [net.label_of(v) for v in paths.node_path(i)]
        walked.update(zip(nodes, nodes[1:]))
    rows = _read_links(tmp_path / "l.txt")
    assert len(rows) == net.num_links
    assert {(t, h): int(x) for t, h, x in rows if x} == dict(walked)


def test_load_links_on_a_torus_match_the_general_graph_engine(tmp_path, capsys):
    """Two methods: the torus engine's channel loads (relative routing) and the general-graph
    engine's pair loads of the same routing on the same network."""
    from universal.networks import build_network
    from universal.oblivious.graphs import graph_link_loads, graph_pair_loads, graph_traffic
    status, _, err = run(capsys, "load", "--network", "torus:k=5,n=2", "--routing", "romm",
                         "--traffic", "random-perms:5,transpose", "--links", str(tmp_path / "l.txt"))
    assert status == 0, err
    net = build_network("torus:k=5,n=2")
    expected = graph_link_loads(graph_pair_loads(net, "romm"), graph_traffic(net, "transpose"))
    rows = _read_links(tmp_path / "l.txt")
    labels = [(net.label_of(int(t)), net.label_of(int(h))) for t, h in zip(net.link_tail, net.link_head)]
    assert [(t, h) for t, h, _ in rows] == labels
    assert np.allclose([x for _, _, x in rows], expected, atol=1e-9)
    assert "romm under transpose" in (tmp_path / "l.txt").read_text().splitlines()[0]


# --------------------------------------------------------------------------- item 20


def test_route_on_an_edge_list_defaults_to_shortest_paths(tmp_path, capsys):
    (tmp_path / "ring.edges").write_text("".join(f"{i} {(i + 1) % 6}\n" for i in range(6)))
    status, out, err = run(capsys, "route", "--network", f"edgelist:{tmp_path / 'ring.edges'}",
                           "--problem", "permutation:random", "--json")
    assert status == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["paths"] == "shortest" and row["D"] <= 3      # a 6-ring: no shortest path is longer


@pytest.mark.parametrize("short, long", [("bitcomp", "bit-complement"), ("bitrev", "bit-reversal")])
def test_both_names_of_the_bit_patterns_work_in_route_and_load(short, long, capsys):
    results = {}
    for name in (short, long):
        _, out, _ = run(capsys, "route", "--network", "hypercube:d=4", "--problem", f"permutation:{name}", "--json")
        _, out2, _ = run(capsys, "load", "--network", "torus:k=4,n=2", "--traffic", name, "--json")
        row, load = json.loads(out)["rows"][0], json.loads(out2)["rows"][0]
        results[name] = (row["C"], row["D"], row["T"], load["throughput"])
    assert results[short] == results[long]
