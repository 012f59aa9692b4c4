"""The README's worked example is real: running its command prints exactly the output shown."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from universal.cli import main

README = Path(__file__).resolve().parent.parent / "README.md"


def _example() -> tuple[list[str], str]:
    text = README.read_text()
    command = re.search(r"\$ python -m universal (route .*?)\n\n", text, re.S).group(1)
    argv = shlex.split(command.replace("\\\n", " "))
    output = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    return argv, output


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def test_worked_example_output_is_what_the_command_prints(capsys):
    argv, shown = _example()
    assert main(argv) == 0
    assert _lines(capsys.readouterr().out) == _lines(shown)


def test_readme_shows_the_two_setup_commands():
    text = README.read_text()
    assert "pip install . && python -m universal scenario butterfly_hrelation" in text
    assert "pip install '.[test]' && pytest -q" in text
