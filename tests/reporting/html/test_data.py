"""What the HTML view holds, checked against independent sources: the fast open-loop engine
for the open-loop view's deliveries, the network's links for every packet's hops, closed forms
for the layouts."""

from __future__ import annotations

import json
import re
from dataclasses import asdict

import numpy as np
import pytest

from universal.errors import UserError
from universal.experiment import Experiment, run_experiment
from universal.networks import build_network
from universal.engine.runs import simulate
from universal.engine.measure import Measurement
from universal.openloop.study import OpenLoopStudy
from universal.reporting.html.data import batch_view, check_hops, openloop_view
from universal.reporting.html.layout import GRID_GAP, node_layout
from universal.reporting.html.page import MARKER, render


def hops_of(view: dict, p: int) -> tuple[list[int], list[int]]:
    off = view["hops"]["offsets"]
    return view["hops"]["link"][off[p]:off[p + 1]], view["hops"]["step"][off[p]:off[p + 1]]


def assert_hops_walk_the_network(view: dict, bufferless: bool = False) -> None:
    """Every packet's crossings form walks along the network's links, from its source; a
    delivered packet's last crossing enters its destination in its delivery step."""
    tail, head = view["network"]["tail"], view["network"]["head"]
    pk = view["packets"]
    for p in range(len(pk["src"])):
        links, steps = hops_of(view, p)
        made = [(s, e) for s, e in zip(steps, links) if s >= 0]
        assert [s for s, _ in made] == sorted(s for s, _ in made)
        if not bufferless:
            assert steps == sorted(steps, key=lambda s: (s < 0, s))        # hops not made come last
            assert all(s1 < s2 for s1, s2 in zip([s for s, _ in made], [s for s, _ in made][1:]))
            assert not links or tail[links[0]] == pk["src"][p]
            assert all(head[a] == tail[b] for a, b in zip(links, links[1:]))
            assert all(s >= pk["created"][p] for s, _ in made)
        if pk["delivered"][p] >= 0 and made and not bufferless:
            assert head[made[-1][1]] == pk["dst"][p] and made[-1][0] == pk["delivered"][p]
        if pk["delivered"][p] >= 0 and made and bufferless:     # the first copy in (duplication: others later)
            assert (pk["delivered"][p], pk["dst"][p]) in {(s, head[e]) for s, e in made}
            assert all(s >= pk["delivered"][p] for s, e in made if head[e] == pk["dst"][p])


def route_view(network, problem, paths, protocol, **kw):
    res = run_experiment(Experiment(network, problem, paths, [protocol], **kw), keep_runs=True)
    (coll, run), = res.runs
    return batch_view(coll, run, asdict(res.rows[0]), protocol=protocol, captions=res.captions), res


@pytest.mark.parametrize("protocol", ["random-rank", "fifo", "trial-and-failure", "duplication"])
def test_a_route_view_holds_every_hop_of_the_run(protocol):
    view, res = route_view("butterfly:d=3", "h-relation:h=2", ["valiant"], protocol)
    row = res.rows[0]
    assert_hops_walk_the_network(view, bufferless=view["bufferless"])
    assert view["last_step"] == row.T and view["row"]["T"] == row.T
    assert sum(d >= 0 for d in view["packets"]["delivered"]) == row.delivered == row.n
    # C is the largest number of paths on a link; the view's link loads are the collection's
    assert max(view["static_load"]) == row.C
    if not view["bufferless"]:
        assert len(view["hops"]["link"]) == row.hops


def test_a_deadlocked_run_keeps_the_hops_not_made():
    """The ring deadlock of the engine tests: four packets 3 hops clockwise on a 4-ring, b = 1;
    each makes its first hop in step 1, then nothing moves."""
    from universal.engine import simulate as route
    from universal.experiment import make_row
    from universal.paths import PathCollection
    from universal.protocols import build_protocol

    net = build_network("torus:k=4,n=1")
    coll = PathCollection.from_node_paths(net, [[i, (i + 1) % 4, (i + 2) % 4, (i + 3) % 4] for i in range(4)])
    run = route(coll, "fifo", np.random.default_rng(0), buffer=1, record_hops=True)
    row = make_row("ring", coll, build_protocol("fifo"), 0, run, 1, 0.0)
    view = batch_view(coll, run, asdict(row), protocol="fifo")
    assert_hops_walk_the_network(view)
    assert view["status"] == "deadlock" and view["hops"]["step"] == [1, -1, -1] * 4
    assert view["packets"]["delivered"] == [-1] * 4 and view["last_step"] == 2


@pytest.mark.parametrize("routing", ["dor", "val", "goal"])
def test_the_open_loop_view_is_the_fast_engines_run_until_creation_stops(routing):
    """Up to step S (creation stops there in the view) every packet is delivered in the step in
    which the fast engine, run on with the same seed, delivers it."""
    study = OpenLoopStudy("torus:k=4,n=2", [routing], ["tornado"], loads=[0.4], window=300)
    S = 60
    view = openloop_view(study, routing, "tornado", 0.4, 3, S)
    assert view["status"] == "drained" and min(view["packets"]["delivered"]) >= 0
    assert_hops_walk_the_network(view)
    from universal.openloop.cells import prepare
    from universal.engine.creation import RunSpec

    p = prepare(study)
    spec = RunSpec(p.traffics["tornado"], p.routers[routing], p.injection, 0.4 * p.scale, seed=3)
    fast = simulate(spec, measurement=Measurement(steps=S + 100)).records
    mine = np.array(view["packets"]["delivered"])
    before = mine < S
    assert before.sum() > 50
    assert np.array_equal(fast["delivered"][:len(mine)][before], mine[before])


def test_check_hops_names_the_limit():
    check_hops(200_000, "x", "hint")
    with pytest.raises(UserError, match="at most 200,000 packet-hops; x has 200,001: hint"):
        check_hops(200_001, "x", "hint")


def test_layouts_in_closed_form():
    xy, bend = node_layout(build_network("torus:k=5,n=2"))
    v = np.arange(25)
    assert np.allclose(xy, np.stack([v % 5, v // 5], axis=1)) and (bend > 0).sum() == 10
    # hypercube d=4: bits 0 and 2 along x, 1 and 3 along y, the upper bit's block (1 + GRID_GAP) away
    xy, _ = node_layout(build_network("hypercube:d=4"))
    bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    w = 1 + GRID_GAP
    assert np.allclose(xy, np.stack([bits[:, 0] + w * bits[:, 2], bits[:, 1] + w * bits[:, 3]], axis=1))
    # a butterfly in columns by level, rows in order; no link bends
    net = build_network("butterfly:d=3")
    xy, bend = node_layout(net)
    assert np.all(np.diff(xy[:, 0][np.argsort(net.levels, kind="stable")]) >= 0)
    assert np.allclose(xy[:8, 1], np.arange(8)) and not bend.any()
    # the wrapped butterfly's links from the last level back to level 0 bend
    net = build_network("wrapped-butterfly:d=3")
    _, bend = node_layout(net)
    lv = net.levels[net.edges]
    assert np.array_equal(bend > 0, np.abs(lv[:, 0] - lv[:, 1]) > 1)


def test_the_page_keeps_its_data_inside_its_script():
    page = render({"title": "</script><script>alert(1)</script>", "x": "https://example.org"})
    assert page.startswith(MARKER + "\n")
    assert page.count("</script>") == 3            # the error catcher, the data, the view's script
    data = re.search(r'id="view-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(data)["x"] == "https://example.org" and "https://" not in page


def _queues(view: dict, t: int) -> dict[int, int]:
    """Packets waiting to cross each link at the end of step ``t`` (the view's "queue")."""
    off, link, step = view["hops"]["offsets"], view["hops"]["link"], view["hops"]["step"]
    queue: dict[int, int] = {}
    for p in range(len(off) - 1):
        hops = list(zip(step[off[p]:off[p + 1]], link[off[p]:off[p + 1]]))
        made = sum(1 for s, _ in hops if 0 <= s <= t)
        if made < len(hops):
            queue[hops[made][1]] = queue.get(hops[made][1], 0) + 1
    return queue


def test_the_figures_of_exercise_14():
    """docs/answers.md, Exercise 14: the page's queues on BF(6) bit-reversal with FIFO."""
    view, res = route_view("butterfly:d=6", "permutation:bit-reversal", ["dimension-order"], "fifo")
    net = build_network("butterfly:d=6")
    level = lambda e: int(net.levels[view["network"]["tail"][e]])  # noqa: E731
    T = res.rows[0].T
    longest = {t: max(_queues(view, t).values(), default=0) for t in range(T + 1)}
    assert max(longest.values()) == 3 and [t for t, q in longest.items() if q == 3] == [3]
    assert {level(e) for e, q in _queues(view, 3).items() if q == 3} == {2}
    assert all(q <= 1 for t in range(T + 1) for e, q in _queues(view, t).items() if level(e) == 3)
    # the packets delivered last waited one step at level 1 and two at level 2
    off, link, step = view["hops"]["offsets"], view["hops"]["link"], view["hops"]["step"]
    last = [p for p, d in enumerate(view["packets"]["delivered"]) if d == T]
    for p in last:
        waits, ready = {}, 1
        for s, e in zip(step[off[p]:off[p + 1]], link[off[p]:off[p + 1]]):
            if s > ready:
                waits[level(e)] = s - ready
            ready = s + 1
        assert waits == {1: 1, 2: 2}
    valiant, _ = route_view("butterfly:d=6", "permutation:bit-reversal", ["valiant"], "fifo")
    assert max(max(_queues(valiant, t).values(), default=0) for t in range(valiant["last_step"] + 1)) == 2


def test_the_pages_script_stylesheet_and_template_ship_with_the_package():
    """An installed copy reads them with importlib.resources: they must be package data."""
    import fnmatch
    import tomllib
    from pathlib import Path

    import universal.reporting.html as html

    repo = Path(__file__).resolve().parents[3]
    patterns = tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "universal.reporting.html"]
    assets = [p.name for p in Path(html.__file__).parent.iterdir() if p.suffix not in (".py", ".pyc") and p.is_file()]
    assert {"view.js", "view.css", "template.html"} <= set(assets)
    assert all(any(fnmatch.fnmatch(a, pat) for pat in patterns) for a in assets)


# ---------------------------------------------------------------- the run the user asked for

def _page_data(path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'<script type="application/json" id="view-data">(.*?)</script>', text, re.S).group(1))


ROUTER = [[], ["--vcs", "2", "--buffer", "1", "--vc-buffer", "fifo"], ["--vcs", "2", "--buffer", "2"],
          ["--vcs", "2", "--buffer", "2", "--vc-buffer", "fifo"], ["--buffer", "2", "--source-queue", "fifo"]]


def test_the_route_page_shows_the_router_model_it_was_given(tmp_path, monkeypatch, capsys):
    """``route --html`` with --vcs, --buffer, --vc-buffer, --source-queue: the page's deliveries are
    those of a direct batch run with the same options (the same seeds, the library's
    ``batch.simulate``), differ from the default model's (and FIFO VCs from set VCs at b = 2), and
    the subtitle names the options."""
    from universal.cli import main
    from universal.engine.batch import simulate as simulate_paths
    from universal.paths import route_paths
    from universal.workloads import build_problem

    monkeypatch.chdir(tmp_path)
    net = build_network("torus:k=4,n=2")
    problem_ss, paths_ss, protocol_ss = np.random.SeedSequence(0).spawn(3)
    paths = route_paths("dimension-order", build_problem("h-relation:h=4", net, np.random.default_rng(problem_ss)),
                        net, np.random.default_rng(paths_ss))
    shown = []
    for i, extra in enumerate(ROUTER):
        assert main(["route", "--network", "torus:k=4,n=2", "--problem", "h-relation:h=4", "--protocols", "fifo",
                     *extra, "--html", f"v{i}.html"]) == 0
        capsys.readouterr()
        data = _page_data(tmp_path / f"v{i}.html")
        options = dict(zip(extra[::2], extra[1::2]))
        kwargs = dict(buffer=int(options["--buffer"]) if "--buffer" in options else None,
                      vcs=int(options.get("--vcs", 1)), vc_buffer=options.get("--vc-buffer", "set"),
                      source_queue=options.get("--source-queue", "all"))
        direct = simulate_paths(paths, "fifo", np.random.default_rng(protocol_ss), **kwargs)
        assert data["packets"]["delivered"] == direct.delivery.tolist()
        assert data["router"] == kwargs
        shown.append(data["packets"]["delivered"])
    assert all(s != shown[0] for s in shown[1:])
    assert shown[2] != shown[3]                   # FIFO VCs are not set VCs at b = 2
    subtitle = _page_data(tmp_path / "v3.html")["subtitle"]
    assert "b = 2, V = 2 virtual channels per link, FIFO VCs" in subtitle
    assert "FIFO source queues" in _page_data(tmp_path / "v4.html")["subtitle"]


@pytest.mark.parametrize("extra", ROUTER[1:], ids=lambda x: " ".join(x))
def test_the_open_loop_page_runs_the_router_model_it_was_given(tmp_path, monkeypatch, capsys, extra):
    """``openloop --html`` with the router options: until creation stops, every packet of the page
    is delivered in the step in which the fast engine's run with those options delivers it, which
    is not the default model's run; the subtitle names the options."""
    from universal.cli import main

    monkeypatch.chdir(tmp_path)
    S = 60
    base = ["openloop", "--network", "torus:k=4,n=2", "--routing", "dor", "--traffic", "uniform", "--loads", "0.45",
            "--window", "300", "--html-steps", str(S), "--seed", "2", "--json"]
    pages = {}
    for name, argv in (("mine", [*base, *extra]), ("default", base)):
        assert main([*argv, "--html", f"{name}.html"]) == 0
        capsys.readouterr()
        pages[name] = _page_data(tmp_path / f"{name}.html")
    options = dict(zip(extra[::2], extra[1::2]))
    kwargs = dict(buffer=int(options["--buffer"]), vcs=int(options.get("--vcs", 1)),
                  vc_buffer=options.get("--vc-buffer", "set"), source_queue=options.get("--source-queue", "all"))
    study = OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.45], window=300, **kwargs)
    from universal.openloop.cells import prepare
    from universal.engine.creation import RunSpec

    p = prepare(study)
    spec = RunSpec(p.traffics["uniform"], p.routers["dor"], p.injection, 0.45 * p.scale, seed=2)
    fast = simulate(spec, measurement=Measurement(steps=S + 100), **kwargs).records["delivered"]
    mine, default = (np.array(pages[k]["packets"]["delivered"]) for k in ("mine", "default"))
    before = mine < S
    assert before.sum() > 100 and np.array_equal(fast[:len(mine)][before], mine[before])
    n = min(len(mine), len(default))
    assert not np.array_equal(mine[:n], default[:n])
    assert pages["mine"]["router"] == kwargs and pages["default"]["router"]["vcs"] == 1
    assert ("FIFO VCs" in pages["mine"]["subtitle"]) == (kwargs["vc_buffer"] == "fifo")
    assert ("V = 2 virtual channels" in pages["mine"]["subtitle"]) == (kwargs["vcs"] == 2)


# ---------------------------------------------------------------- CHAOS's shared queues

def shared_at(view: dict, t: int) -> dict[int, int]:
    """Packets in every node's shared queue at the end of step ``t``, from the view's data: a
    packet that moved into its node's queue at step q while waiting for hop j is there from q
    until it makes hop j."""
    off, step, link, queued = (view["hops"][k] for k in ("offsets", "step", "link", "queued"))
    tail = view["network"]["tail"]
    count: dict[int, int] = {}
    for p in range(len(off) - 1):
        for j in range(off[p], off[p + 1]):
            if 0 <= queued[j] <= t and (step[j] < 0 or step[j] > t):
                count[tail[link[j]]] = count.get(tail[link[j]], 0) + 1
    return count


def assert_queue_stays_fit(view: dict, places: int) -> None:
    """Every move into a shared queue comes after the packet's last crossing and before its next,
    and no queue ever holds more than its places."""
    off, step, queued = (view["hops"][k] for k in ("offsets", "step", "queued"))
    for p in range(len(off) - 1):
        for j in range(off[p], off[p + 1]):
            if queued[j] >= 0:
                assert j > off[p] and step[j - 1] < queued[j] and (step[j] < 0 or queued[j] < step[j])
    most = max(max(shared_at(view, t).values(), default=0) for t in range(view["last_step"] + 1))
    assert 1 <= most <= places


def test_the_open_loop_page_draws_chaos_shared_queues():
    """CHAOS beyond saturation (b = 1, the queue takes V = 2's budget: 4 places per node): the view
    holds when packets moved into their nodes' shared queues, the queues never overflow, the
    subtitle names them, and the deliveries are still the fast engine's."""
    study = OpenLoopStudy("torus:k=4,n=2", ["chaos"], ["uniform"], loads=[1.2], injection="poisson", buffer=1, vcs=2,
                          window=300)
    S = 60
    view = openloop_view(study, "chaos", "uniform", 1.2, 0, S)
    assert sum(q >= 0 for q in view["hops"]["queued"]) > 100
    assert_queue_stays_fit(view, 4)
    assert "no virtual channels, a shared queue of 4 places per node (CHAOS)" in view["subtitle"]
    from universal.openloop.cells import prepare
    from universal.engine.creation import RunSpec

    p = prepare(study)
    spec = RunSpec(p.traffics["uniform"], p.routers["chaos"], p.injection, 1.2 * p.scale, seed=0)
    fast = simulate(spec, measurement=Measurement(steps=S + 100), buffer=1, vcs=2).records["delivered"]
    mine = np.array(view["packets"]["delivered"])
    assert np.array_equal(fast[:len(mine)][mine < S], mine[mine < S])
    assert "queued" not in openloop_view(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.3]),
                                         "dor", "uniform", 0.3, 0, 20)["hops"]


def test_the_route_page_draws_chaos_shared_queues(tmp_path, monkeypatch, capsys):
    """``route --paths chaos --html``: the page holds the moves into the shared queues (from the
    reference's run of the batch, which equals the run drawn), and its deliveries are the run's."""
    from universal.cli import main

    monkeypatch.chdir(tmp_path)
    argv = ["route", "--network", "torus:k=4,n=2", "--problem", "h-relation:h=8", "--paths", "chaos", "--buffer", "1",
            "--vcs", "2"]
    assert main([*argv, "--html", "v.html", "--json"]) == 0
    row, = json.loads(capsys.readouterr()[0])["rows"]
    view = _page_data(tmp_path / "v.html")
    assert_queue_stays_fit(view, 4)
    assert max(view["packets"]["delivered"]) == row["T"] and "(CHAOS)" in view["subtitle"]
    res = run_experiment(Experiment("torus:k=4,n=2", "h-relation:h=8", ["chaos"], ["random-rank"], buffer=1, vcs=2),
                         keep_runs=True)
    assert view["packets"]["delivered"] == res.runs[0][1].delivery.tolist()


def test_the_open_loop_page_says_the_router_delay_is_not_in_its_steps():
    study = OpenLoopStudy("torus:k=4,n=1", ["dor"], ["tornado"], loads=[0.3], router_delay=2)
    delayed = openloop_view(study, "dor", "tornado", 0.3, 0, 20)
    plain = openloop_view(OpenLoopStudy("torus:k=4,n=1", ["dor"], ["tornado"], loads=[0.3]), "dor", "tornado", 0.3, 0, 20)
    assert "router delay of 2 steps per hop, the steps shown do not" in delayed["subtitle"]
    assert "router delay" not in plain["subtitle"] and delayed["packets"] == plain["packets"]
