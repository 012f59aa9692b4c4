"""The README's worked example is real: running its command prints exactly the output shown."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console

from universal.cli import main

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"


def _example() -> tuple[list[str], str]:
    text = README.read_text()
    command = re.search(r"\$ python -m universal (route .*?)\n\n", text, re.S).group(1)
    argv = shlex.split(command.replace("\\\n", " "))
    output = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    return argv, output


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def test_worked_example_output_is_what_the_command_prints(capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # as piped into a file: 120 columns
    argv, shown = _example()
    assert main(argv) == 0
    assert _lines(capsys.readouterr().out) == _lines(shown)


def test_readme_shows_the_two_setup_commands():
    text = README.read_text()
    assert "pip install . && python -m universal scenario butterfly_hrelation" in text
    assert "pip install '.[test]' && pytest -q" in text


def _printed_at(width: int, monkeypatch, capsys) -> str:
    """The worked example as the CLI prints it on a terminal ``width`` columns wide."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, emoji=False, markup=False, highlight=False)
    monkeypatch.setattr("universal.reporting.make_console", lambda: console)
    argv, _ = _example()
    assert main(argv) == 0
    capsys.readouterr()
    return buffer.getvalue()


def test_worked_example_fits_80_and_120_columns_without_cutting(monkeypatch, capsys):
    _, shown = _example()
    # the numbers of the README's table in the columns SPEC §6 asks for (C to T/bound)
    rows = [line.split("│")[3:11] for line in shown.splitlines() if line.startswith("│")]
    numbers = set(re.findall(r"\d+(?:\.\d+)?(?:–\d+)?", " ".join(" ".join(r) for r in rows)))
    assert len(numbers) > 10
    for width in (80, 120):
        text = _printed_at(width, monkeypatch, capsys)
        assert "…" not in text
        assert max(cell_len(line.rstrip()) for line in text.splitlines()) <= width
        assert numbers <= set(re.findall(r"\d+(?:\.\d+)?(?:–\d+)?", text))   # every one whole


def test_the_80_column_example_is_what_the_command_prints(monkeypatch, capsys):
    text = README.read_text()
    block = re.search(r"At 80 columns the\s+example above prints:\n\n```text\n(.*?)```", text, re.S).group(1)
    assert _lines(_printed_at(80, monkeypatch, capsys)) == _lines(block)
    labels = [line.split()[1] for line in _lines(block) if line.startswith((" dim-ord", " valiant"))]
    assert len(set(labels)) == 2                      # RR and fifo: two protocols, two labels


def test_readme_shows_the_flagship_and_scaling_plots():
    text = README.read_text()
    for image in ("docs/images/butterfly_hrelation.png", "docs/images/butterfly_scaling.png"):
        assert f"]({image})" in text
        assert (REPO / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_docs_cite_papers_not_paths_outside_the_repository():
    outside = "/".join(["..", "shared"])   # the folder beside the checkout (not spelled out here either)
    for doc in [README, *sorted((REPO / "docs").glob("*.md"))]:
        assert outside not in doc.read_text(), doc.name
        assert "SPEC.md" not in doc.read_text(), doc.name
    references = README.read_text().split("## References", 1)[1]
    for authors, year in [("Meyer auf der Heide and C. Scheideler", "1996"), ("Towles, W. J. Dally and S. Boyd", "2003"),
                          ("B. Towles, *Finding Worst-case Permutations", "2002"),
                          ("Singh, W. J. Dally, A. K. Gupta and B. Towles", "2003")]:
        entry = next(item for item in references.split("\n- ") if authors in item)
        assert year in entry


def test_scenarios_table_lists_every_built_in_scenario_in_one_table():
    from universal.scenario import list_scenarios

    text = README.read_text()
    table = re.search(r"\| scenario \| what it shows \|\n\| --- \| --- \|\n((?:\|.*\|\n)+)", text).group(1)
    listed = re.findall(r"^\| `([a-z_0-9]+)` \|", table, re.M)
    assert sorted(listed) == sorted(sc.name for sc in list_scenarios())


def test_synopsis_names_every_option_of_the_commands():
    from universal.cli import build_parser

    synopsis = README.read_text().split("## Command line", 1)[1].split("`--plot FILE`", 1)[0]
    parser = build_parser()
    commands = next(a for a in parser._actions if a.choices and "route" in a.choices).choices
    for name in ("route", "load", "worstcase", "scenario", "openloop"):
        for action in commands[name]._actions:
            for option in action.option_strings:
                if option.startswith("--") and option not in ("--help", "--engine"):
                    assert option in synopsis, (name, option)


def test_the_size_limit_of_the_all_pairs_analysis_is_the_one_stated():
    import pytest

    from universal.errors import UserError
    from universal.networks import build_network
    from universal.oblivious.graphs import check_graph

    text = " ".join(README.read_text().split())
    assert "so `hypercube:d=7` and `mesh:k=14,n=2` but not `hypercube:d=8`" in text
    for name in ("hypercube:d=7", "mesh:k=14,n=2"):
        check_graph(build_network(name))
    for name in ("hypercube:d=8", "mesh:k=15,n=2"):
        with pytest.raises(UserError, match="pair-link entries"):
            check_graph(build_network(name))


def test_the_openloop_example_is_what_the_command_prints(monkeypatch, capsys):
    text = README.read_text()
    section = text.split("## Open-loop mode", 1)[1].split("\n## ", 1)[0]
    command = re.search(r"\$ python -m universal (openloop .*?)\n\n", section, re.S).group(1)
    argv = shlex.split(command.replace("\\\n", " "))
    shown = re.search(r"\n\n((?:    .*\n)+)\n", section[section.index(command):]).group(1)
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, emoji=False, markup=False, highlight=False)
    monkeypatch.setattr("universal.reporting.make_console", lambda: console)
    assert main(argv) == 0
    assert _lines(buffer.getvalue()) == [line[4:].rstrip() for line in _lines(shown)]
