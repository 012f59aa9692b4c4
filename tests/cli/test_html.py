"""``--html`` on ``route`` and ``openloop``: bad input is one ``error:`` line, status 2 and nothing
written; a view this tool wrote is replaced, nothing else is; the file's size is reported."""

from __future__ import annotations

import os
import re

import pytest

from universal.cli import main
from tests.cli.test_files_and_streams import refused

ROUTE = ["route", "--network", "butterfly:d=3", "--problem", "permutation:random", "--protocols", "fifo"]
OPENLOOP = ["openloop", "--network", "torus:k=4,n=1", "--routing", "dor", "--traffic", "tornado",
            "--loads", "0.3", "--window", "300", "--html-steps", "40"]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "notes.html").write_text("<html>my notes</html>\n")
    (tmp_path / "ring.edges").write_text("0 1\n1 2\n2 3\n3 0\n")
    os.mkdir(tmp_path / "sub")
    os.mkfifo(tmp_path / "pipe")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("target, fragment", [
    ("sub", "it is a folder"),
    ("pipe", "not a regular file"),
    ("notes.html", "is not an HTML view written by universal"),
    ("ring.edges", "input of this run"),
    ("missing/v.html", "does not exist"),
])
def test_html_never_goes_where_it_must_not(folder, capsys, target, fragment):
    refused(capsys, folder, ["route", "--network", "edgelist:ring.edges", "--problem", "permutation:random",
                             "--html", target], fragment)
    if target != "ring.edges":       # the open-loop run reads no edge list: the file is just not a view
        refused(capsys, folder, [*OPENLOOP, "--html", target], fragment)


@pytest.mark.parametrize("argv, fragment", [
    ([*ROUTE, "--seeds", "2"], "--html draws one run: give one value for --seeds"),
    ([*ROUTE[:-1], "fifo,random-rank"], "give one value for --protocols"),
    ([*ROUTE, "--trace"], "give one of the two"),
    (["route", "--network", "torus:k=65,n=2", "--problem", "permutation:random"], "at most 4,096 nodes"),
    # 8192 packets of 32 hops on average: too many packet-hops, refused after the run, before any output
    (["route", "--network", "torus:k=64,n=2", "--problem", "h-relation:h=2"], "at most 200,000 packet-hops"),
    ([*OPENLOOP[:-5], "0.2,0.3", "--html-steps", "40"], "--html-load"),
    ([*OPENLOOP, "--html-load", "0.25"], "is not one of --loads"),
    ([*OPENLOOP[:-6], "--saturation"], "use it with --loads"),
    ([*OPENLOOP[:-2], "--html-steps", "5001"], "at most 5,000"),
    (["openloop", "--network", "torus:k=16,n=2", "--loads", "0.9", "--html-steps", "5000", "--window", "100"],
     "give fewer --html-steps"),
])
def test_runs_it_cannot_draw_are_refused(folder, capsys, argv, fragment):
    refused(capsys, folder, [*argv, "--html", "v.html"], fragment)


def test_a_view_is_written_reported_and_replaced_on_the_next_run(folder, capsys):
    assert main([*ROUTE, "--html", "v.html"]) == 0
    out, err = capsys.readouterr()
    size = (folder / "v.html").stat().st_size
    assert re.fullmatch(rf"html: v\.html \({size / 1024:,.0f} kB\)\n", err)
    assert "Fastest" in out                       # the table is printed as without --html
    first = (folder / "v.html").read_text()
    assert main([*ROUTE, "--seed", "1", "--html", "v.html"]) == 0    # its own file: replaced
    assert (folder / "v.html").read_text() != first
    assert sorted(p.name for p in folder.iterdir()) == ["notes.html", "pipe", "ring.edges", "sub", "v.html"]
    assert main([*OPENLOOP, "--html", "v.html", "--json"]) == 0
    assert '"kind":"openloop"' in (folder / "v.html").read_text()


def test_the_readme_documents_the_view_and_shows_it():
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    text = (repo / "README.md").read_text()
    assert "](docs/images/html_view.png)" in text
    assert (repo / "docs/images/html_view.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from universal.reporting.html.data import MAX_HOPS, MAX_HTML_STEPS, MAX_NODES

    for limit in (MAX_NODES, MAX_HOPS, MAX_HTML_STEPS):
        assert f"{limit:,}" in text.split("### The HTML view", 1)[1].split("###", 1)[0]
