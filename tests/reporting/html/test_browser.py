"""The HTML view opened in a real browser (headless Chromium): the three runs of issue 27.

For each page: it loads with no console message and no error caught by the page, it draws as
many nodes and links as the network has (closed forms: BF(d) has (d + 1)·2^d nodes and
4·d·2^d links, two butterflies back to back (2d + 1)·2^d and 8·d·2^d, the k-ary n-cube k^n
and 2·n·k^n), stepping to the last step shows every packet delivered, and a screenshot is
saved (into ``$UNIVERSAL_SCREENSHOTS`` when set, else the test's folder). Skipped, saying why,
where Chromium is absent. A broken page must fail the same checks (the last test).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from universal.cli import main
from tests.reporting.html.browser import chromium, screenshot, self_test

RUNS = {
    "bf4_valiant_random_rank": (["route", "--network", "butterfly:d=4", "--problem", "h-relation:h=4", "--paths",
                                 "valiant", "--protocols", "random-rank"], 9 * 16, 8 * 4 * 16, 64),
    "torus_goal_tornado": (["openloop", "--network", "torus:k=4,n=2", "--routing", "goal", "--traffic", "tornado",
                            "--loads", "0.15,0.3,0.45", "--html-load", "0.45", "--html-steps", "120", "--window", "300"],
                           4 ** 2, 2 * 2 * 4 ** 2, None),
    "bf3_trial_and_failure": (["route", "--network", "butterfly:d=3", "--problem", "h-relation:h=2", "--protocols",
                               "trial-and-failure"], 4 * 8, 4 * 3 * 8, 16),
}


def _data(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="view-data">(.*?)</script>', text, re.S)
    return json.loads(found.group(1))


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    chromium()      # skip before computing anything when there is no browser
    folder = tmp_path_factory.mktemp("views")
    made = {}
    here = os.getcwd()
    os.chdir(folder)            # the page shows its command: a plain file name reads better
    try:
        for name, (argv, *_) in RUNS.items():
            assert main([*argv, "--html", f"{name}.html", "--json"]) == 0
            made[name] = folder / f"{name}.html"
    finally:
        os.chdir(here)
    return made


@pytest.mark.parametrize("name", list(RUNS))
def test_the_page_draws_the_network_and_delivers_every_packet(pages, name):
    _, nodes, links, packets = RUNS[name]
    verdict, console = self_test(pages[name])
    assert console == [] and verdict["errors"] == []
    assert (verdict["nodes"], verdict["links"]) == (nodes, links)
    if packets is not None:
        assert verdict["packets"] == packets
    assert verdict["packets"] > 0 and verdict["delivered"] == verdict["packets"]
    assert verdict["last_step"] == _data(pages[name])["last_step"]


@pytest.mark.parametrize("name", list(RUNS))
def test_a_screenshot_of_the_page(pages, name, tmp_path):
    folder = Path(os.environ.get("UNIVERSAL_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    data = _data(pages[name])
    # a busy moment: the first step in which the most packets cross a link (batch runs, which
    # start with every packet waiting) or the most are in the network (open loop)
    steps = [s for s in data["hops"]["step"] if s >= 0]
    pk = data["packets"]

    def busy(t: int) -> int:
        if data["kind"] == "batch":
            return steps.count(t)
        return sum(c <= t and not 0 <= d <= t for c, d in zip(pk["created"], pk["delivered"]))

    step = max(range(data["last_step"] + 1), key=lambda t: (busy(t), -t))
    assert screenshot(pages[name], folder / f"{name}.png", step) == []


@pytest.mark.parametrize("name", list(RUNS))
def test_the_file_loads_nothing_from_the_network(pages, name):
    """No ``http://`` or ``https://`` anywhere in the file (the data writes ``:\\/\\/``), and nothing
    that would load anything: no ``src=``, ``href=``, ``url(``, ``@import``, ``fetch(``,
    ``import(``, ``XMLHttpRequest``, ``WebSocket`` or ``EventSource``."""
    text = pages[name].read_text(encoding="utf-8")
    assert not re.search(r"https?://", text, re.I)
    for loader in ["src=", "href=", "url(", "@import", "fetch(", "import(", "XMLHttpRequest", "WebSocket",
                   "EventSource"]:
        assert loader not in text, loader


def test_a_broken_page_fails_the_same_checks(pages, tmp_path):
    """The checks can fail: a page whose data lacks the links' bends throws while drawing, and
    the self-test reports the error (the console shows it too)."""
    text = pages["bf3_trial_and_failure"].read_text(encoding="utf-8")
    broken = tmp_path / "broken.html"
    broken.write_text(text.replace('"bend":', '"bent":', 1), encoding="utf-8")
    verdict, console = self_test(broken)
    assert verdict["errors"] and console


def test_a_page_of_fifo_virtual_channels_loads_and_names_them(tmp_path, monkeypatch):
    """``route --html`` with ``--vcs 2 --buffer 2 --vc-buffer fifo --source-queue fifo``: the page
    passes its self-test in the browser (every packet delivered at the last step) and its
    subtitle, as drawn, names the router model."""
    from tests.reporting.html.browser import _run, console_lines

    chromium()
    monkeypatch.chdir(tmp_path)
    assert main(["route", "--network", "torus:k=4,n=2", "--problem", "h-relation:h=4", "--vcs", "2", "--buffer",
                 "2", "--vc-buffer", "fifo", "--source-queue", "fifo", "--html", "v.html", "--json"]) == 0
    run = _run(tmp_path / "v.html", "selftest", "--dump-dom")     # self_test's run, the DOM kept
    verdict = json.loads(re.search(r'<pre id="selftest">([^<]*)</pre>', run.stdout).group(1).replace("&quot;", '"'))
    assert console_lines(run.stderr) == [] and verdict["errors"] == []
    assert verdict["packets"] == 64 and verdict["delivered"] == 64
    dom = run.stdout
    subtitle = re.search(r'id="subtitle"[^>]*>([^<]*)<', dom).group(1)
    assert "link buffers b = 2, V = 2 virtual channels per link, FIFO VCs" in subtitle
    assert "FIFO source queues" in subtitle


def test_a_chaos_page_shows_its_shared_queues(tmp_path, monkeypatch):
    """``route --paths chaos --html`` (16 packets per node, b = 1, 4 queue places per node): the
    page passes its self-test, and at the step with the most packets in shared queues its status
    line counts as many as the page's data holds (counted here in Python, the page counts in its
    script)."""
    from tests.reporting.html.browser import _run, console_lines
    from tests.reporting.html.test_data import shared_at

    chromium()
    monkeypatch.chdir(tmp_path)
    assert main(["route", "--network", "torus:k=4,n=2", "--problem", "h-relation:h=16", "--paths", "chaos",
                 "--buffer", "1", "--vcs", "2", "--html", "c.html", "--json"]) == 0
    page = tmp_path / "c.html"
    verdict, console = self_test(page)
    assert console == [] and verdict["errors"] == [] and verdict["delivered"] == verdict["packets"]
    data = _data(page)
    t = max(range(data["last_step"] + 1), key=lambda s: sum(shared_at(data, s).values()))
    want = sum(shared_at(data, t).values())
    run = _run(page, f"step={t}", "--dump-dom")
    assert console_lines(run.stderr) == [] and want > 0
    status = re.search(r'id="status"[^>]*>(.*?)</div>', run.stdout, re.S).group(1)
    assert f"{want} in shared queues" in status
