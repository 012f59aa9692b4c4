"""The documents under docs/ run as written: the tutorial's ``pycon`` blocks are doctests, run in
order in one namespace, as a reader would type them."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def pycon_blocks(text: str) -> str:
    """The contents of every ```pycon fenced block, in order (the fences are not examples)."""
    return "\n".join(re.findall(r"```pycon\n(.*?)```", text, re.S))


def test_tutorial_runs_as_written():
    text = (DOCS / "tutorial.md").read_text()
    test = doctest.DocTestParser().get_doctest(pycon_blocks(text), {}, "tutorial.md", str(DOCS / "tutorial.md"), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 20
    assert result.failed == 0
