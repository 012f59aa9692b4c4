"""Every non-ASCII symbol the package prints has an ASCII spelling (universal/ascii.py), so an
ASCII-only terminal or ``PYTHONIOENCODING=ascii`` gets complete, readable output."""

from __future__ import annotations

import ast
import io
from pathlib import Path

from rich.table import Table

from universal.ascii import SPELLINGS, ascii_renderable, install_ascii_fallback, spell_ascii
from universal.reporting.tables import AsciiAwareConsole

PACKAGE = Path(__file__).resolve().parent.parent / "universal"


def printed_strings(source: str) -> list[str]:
    """The string constants of a module, docstrings left out (they are never printed)."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_every_symbol_in_the_package_strings_has_an_ascii_spelling():
    missing = {}
    for module in PACKAGE.rglob("*.py"):
        for text in printed_strings(module.read_text(encoding="utf-8")):
            for char in text:
                if not char.isascii() and char not in SPELLINGS:
                    missing.setdefault(char, module.relative_to(PACKAGE).as_posix())
    assert not missing, missing
    assert all(spelling.isascii() and spelling for spelling in SPELLINGS.values())


def test_an_ascii_console_prints_an_aligned_table_with_the_spellings():
    table = Table(title="C̄ per path system")
    table.add_column("paths")
    table.add_column("C̄", justify="right")
    table.add_column("±", justify="right")
    table.add_row("valiant", "1", "—")
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    AsciiAwareConsole(file=out, width=60).print(table)
    out.flush()
    text = out.buffer.getvalue().decode("ascii")
    lines = text.splitlines()
    assert "Cbar per path system" in text and "+/-" in text and "?" not in text
    assert len({len(line) for line in lines[1:]}) == 1   # every row of the box equally wide
    assert ascii_renderable(table).columns[1].header == "Cbar"
    assert table.columns[1].header == "C̄"                # the original is left as it was


def test_whatever_else_reaches_an_ascii_stream_is_spelled_not_an_error():
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert install_ascii_fallback(out)
    out.write("T 3–5 … b = ∞, é")
    out.flush()
    assert out.buffer.getvalue() == b"T 3-5 ... b = inf, ?"
    assert spell_ascii("C̄") == "Cbar"
