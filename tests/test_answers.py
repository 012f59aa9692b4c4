"""The classroom answer key (docs/answers.md) never rots: every figure in it is checked here.

How docs/answers.md is written (see its introduction):

* A ```check block runs one command and checks values of its JSON output::

      $ python -m universal route --network butterfly:d=3 ... --json
      rows[protocol=fifo].C = 2
      collections[0].load_histogram.2 = 4

  The selector is a path into the JSON object: dotted keys, list indices ``[0]`` and filters
  ``[key=value,...]`` that must match exactly one element of a list of objects (a filter key may
  itself be dotted, ``cells[cell.d=8]``; a value with a comma is written as a JSON string).
  The expected value is a JSON literal: integers, strings, booleans and null compare exactly; a
  decimal compares at the precision written (``0.278`` means ``round(value, 3) == 0.278``).
  The command runs in-process through :func:`universal.cli.main`, once per test session.
* A ```calc block checks a hand derivation: ``EXPRESSION = VALUE`` with Python arithmetic,
  ``F`` (:class:`fractions.Fraction`), ``log2``, ``sqrt``, ``floor``, ``ceil``, ``comb``, ``min``,
  ``max``, ``sum``, ``range``; VALUE is a
  number or a fraction ``a/b`` compared the same way.
* A ```paper block quotes published figures: ``paper-file-stem: text``; the text must occur in
  that paper (whitespace and ``$`` ignored). The papers are not part of the repository: the test
  reads them from ``$UNIVERSAL_PAPERS`` (by default ``shared/papers`` beside the checkout) and is
  skipped, with the reason printed, where they are absent.

The prose of each answer section (outside code blocks and headings) may only state result-looking
numbers - any decimal, any fraction a/b, any integer >= 10 - that appear among the section's
checked values, calc or paper figures, or the numbers in its commands and selectors (bit strings
in code spans, such as `101`, are row labels and exempt).
Every ``python -m universal`` command in docs/exercises.md must parse with the real CLI parser.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pytest

from universal.cli import COMMANDS, build_parser, main

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
EXERCISES = DOCS / "exercises.md"
ANSWERS = DOCS / "answers.md"
PAPERS = Path(os.environ.get("UNIVERSAL_PAPERS", REPO.parent / "shared" / "papers"))

SECTION = re.compile(r"^## Exercise (\d+): (.+?)\s*$", re.M)
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
COMMAND = "python -m universal"


# --------------------------------------------------------------------------------------------
# Parsing the documents


@dataclass
class Block:
    kind: str          # info string of the fence: check, calc, paper, text, ...
    body: str
    section: int       # exercise number, 0 before the first section


@dataclass
class Section:
    number: int
    title: str
    text: str
    blocks: list[Block] = field(default_factory=list)


def split_sections(text: str) -> list[Section]:
    """The ``## Exercise N: title`` sections of a document, each up to the next ``## `` heading."""
    sections = []
    starts = list(SECTION.finditer(text))
    for i, m in enumerate(starts):
        end = len(text)
        nxt = re.compile(r"^## ", re.M).search(text, m.end())
        if nxt:
            end = nxt.start()
        body = text[m.end():end]
        sec = Section(int(m.group(1)), m.group(2), body)
        sec.blocks = [Block(b.group(1).strip(), b.group(2), sec.number) for b in FENCE.finditer(body)]
        sections.append(sec)
    return sections


def answer_sections() -> list[Section]:
    return split_sections(ANSWERS.read_text())


def prose_of(text: str) -> str:
    """The text outside fenced blocks and headings."""
    text = FENCE.sub("", text)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def join_continuations(text: str) -> list[str]:
    """Lines of ``text`` with backslash continuations joined."""
    return re.sub(r"\\\n\s*", " ", text).splitlines()


def command_argv(line: str) -> list[str]:
    """argv after ``python -m universal`` on a command line (an optional leading ``$ ``)."""
    line = line.strip()
    if line.startswith("$"):
        line = line[1:].strip()
    if not line.startswith(COMMAND + " "):
        raise ValueError(f"not a `{COMMAND}` command: {line!r}")
    return shlex.split(line[len(COMMAND):])


# --------------------------------------------------------------------------------------------
# Selectors and values


class SelectorError(Exception):
    pass


def parse_selector(selector: str) -> list[tuple[str, object]]:
    """Split a selector into steps: ("key", name), ("index", i) or ("filter", [(path, value)])."""
    steps: list[tuple[str, object]] = []
    i, n = 0, len(selector)
    expect_key = True
    while i < n:
        ch = selector[i]
        if ch == "[":
            depth, j, quoted = 0, i, False
            while j < n:
                c = selector[j]
                if c == '"' and selector[j - 1] != "\\":
                    quoted = not quoted
                elif not quoted and c == "[":
                    depth += 1
                elif not quoted and c == "]":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                raise SelectorError(f"unclosed '[' in {selector!r}")
            inner = selector[i + 1:j]
            if re.fullmatch(r"-?\d+", inner):
                steps.append(("index", int(inner)))
            else:
                steps.append(("filter", parse_filter(inner, selector)))
            i = j + 1
            expect_key = False
        elif ch == ".":
            if expect_key:
                raise SelectorError(f"empty key in {selector!r}")
            i += 1
            expect_key = True
        else:
            m = re.match(r"[^.\[\]\s=]+", selector[i:])
            if not m or not expect_key:
                raise SelectorError(f"malformed selector {selector!r} at {selector[i:]!r}")
            steps.append(("key", m.group(0)))
            i += m.end()
            expect_key = False
    if not steps or expect_key:
        raise SelectorError(f"malformed selector {selector!r}")
    return steps


def split_outside_quotes(text: str, sep: str) -> list[str]:
    parts, cur, quoted = [], [], False
    for k, c in enumerate(text):
        if c == '"' and (k == 0 or text[k - 1] != "\\"):
            quoted = not quoted
        if c == sep and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


def parse_filter(inner: str, selector: str) -> list[tuple[str, object]]:
    conds = []
    for part in split_outside_quotes(inner, ","):
        key, eq, raw = part.partition("=")
        if not eq or not key or not raw:
            raise SelectorError(f"malformed filter {part!r} in {selector!r}")
        if raw.startswith('"'):
            value = json.loads(raw)
        else:
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw
        conds.append((key, value))
    return conds


def same(actual, wanted) -> bool:
    """Filter equality: JSON-typed, but a bare word also matches its string form."""
    if isinstance(actual, bool) or isinstance(wanted, bool):
        return actual is wanted
    if isinstance(actual, (int, float)) and isinstance(wanted, (int, float)):
        return actual == wanted
    return actual == wanted or (isinstance(actual, str) and actual == str(wanted))


def dig(obj, path: str):
    """Follow a dotted key path (used inside filters); KeyError if a key is missing."""
    for key in path.split("."):
        if isinstance(obj, dict) and key in obj:
            obj = obj[key]
        else:
            raise KeyError(key)
    return obj


def select(obj, selector: str):
    """The value at ``selector`` in ``obj``; SelectorError if it matches nothing (or a filter
    matches more than one element)."""
    for kind, arg in parse_selector(selector):
        if kind == "key":
            if not isinstance(obj, dict) or arg not in obj:
                raise SelectorError(f"{selector}: no key {arg!r}")
            obj = obj[arg]
        elif kind == "index":
            if not isinstance(obj, list) or not -len(obj) <= arg < len(obj):
                raise SelectorError(f"{selector}: no index {arg}")
            obj = obj[arg]
        else:
            if not isinstance(obj, list):
                raise SelectorError(f"{selector}: filter on a non-list")
            hits = []
            for item in obj:
                try:
                    if all(same(dig(item, k), v) for k, v in arg):
                        hits.append(item)
                except KeyError:
                    continue
            if len(hits) != 1:
                raise SelectorError(f"{selector}: filter {arg} matches {len(hits)} elements, not one")
            obj = hits[0]
    return obj


def decimals(literal: str) -> int | None:
    """Digits after the decimal point of a decimal literal, None for an integer."""
    m = re.fullmatch(r"-?\d+\.(\d+)", literal.strip())
    return len(m.group(1)) if m else None


def matches(actual, literal: str) -> bool:
    """``actual`` against the expected JSON ``literal`` (decimals at the written precision)."""
    wanted = json.loads(literal)
    places = decimals(literal)
    if places is not None:
        return (isinstance(actual, (int, float)) and not isinstance(actual, bool)
                and round(float(actual), places) == round(wanted, places))
    if isinstance(wanted, bool) or wanted is None or isinstance(wanted, str):
        return actual is wanted if not isinstance(wanted, str) else actual == wanted
    if isinstance(wanted, int):
        return (isinstance(actual, (int, float)) and not isinstance(actual, bool)
                and actual == wanted)
    return actual == wanted


@dataclass
class Check:
    argv: list[str]
    expectations: list[tuple[str, str]]   # (selector, JSON literal)
    section: int


CHECK_LINE = re.compile(r"^(\S+)\s+=\s+(.+?)\s*$")


def parse_check(block: Block) -> Check:
    lines = [ln for ln in join_continuations(block.body)
             if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise ValueError("empty check block")
    argv = command_argv(lines[0])
    if "--json" not in argv:
        raise ValueError(f"check command without --json: {lines[0]!r}")
    expectations = []
    for line in lines[1:]:
        m = CHECK_LINE.match(line)
        if not m:
            raise ValueError(f"malformed check line {line!r}")
        parse_selector(m.group(1))
        json.loads(m.group(2))       # a JSON literal, or this raises
        expectations.append((m.group(1), m.group(2)))
    if not expectations:
        raise ValueError(f"check block without values: {lines[0]!r}")
    return Check(argv, expectations, block.section)


CALC_NAMES = {"F": Fraction, "log2": math.log2, "sqrt": math.sqrt, "floor": math.floor,
              "ceil": math.ceil, "comb": math.comb, "min": min, "max": max, "sum": sum, "range": range}


def calc_lines(block: Block) -> list[tuple[str, str]]:
    out = []
    for line in join_continuations(block.body):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        expr, eq, value = line.rpartition(" = ")
        if not eq:
            raise ValueError(f"malformed calc line {line!r}")
        out.append((expr.strip(), value.strip()))
    return out


def calc_matches(expr: str, value: str) -> bool:
    got = eval(expr, {"__builtins__": {}, **CALC_NAMES})  # noqa: S307 - our own document
    if re.fullmatch(r"-?\d+/\d+", value):
        return Fraction(got) == Fraction(value) if not isinstance(got, float) else False
    places = decimals(value)
    if places is not None:
        return round(float(got), places) == round(float(value), places)
    return got == int(value)


# --------------------------------------------------------------------------------------------
# Numbers in prose

# A pre-pass drops references that look like numbers but are not results.
REFERENCE = re.compile(r"\b(?:Theorems?|Corollar(?:y|ies)|Tables?|Figures?|Sections?|Chapters?|"
                       r"Lemmas?|Remarks?|Exercises?|issue|scope point)\s+\d+(?:\.\d+)?"
                       r"(?:\s*(?:,|and|or)\s*\d+(?:\.\d+)?)*|§\s*\d+(?:\.\d+)*")
NUMBER = re.compile(r"(?<![\w.^/§])(\d+(?:\.\d+)?)(?:/(\d+))?(?![\w^]|\.\d)")


def numbers_in(text: str) -> list[str]:
    """Every number-looking token (integers, decimals, fractions a/b) in ``text``."""
    return [m.group(0) for m in NUMBER.finditer(text)]


def is_result_looking(token: str) -> bool:
    if "/" in token or "." in token:
        return True
    return int(token) >= 10


def as_value(token: str) -> Fraction:
    return Fraction(token)


@dataclass
class Allowed:
    exact: set = field(default_factory=set)        # Fractions
    floats: list = field(default_factory=list)     # for rounding comparisons

    def add_token(self, token: str) -> None:
        v = as_value(token)
        self.exact.add(v)
        self.floats.append(float(v))

    def add_text(self, text: str) -> None:
        for token in numbers_in(text):
            self.add_token(token)

    def admits(self, token: str) -> bool:
        v = as_value(token)
        if v in self.exact:
            return True
        places = decimals(token)
        if places is not None:
            return any(round(f, places) == round(float(v), places) for f in self.floats)
        return False


def allowed_for(section: Section) -> Allowed:
    allowed = Allowed()
    for block in section.blocks:
        if block.kind == "check":
            check = parse_check(block)
            allowed.add_text(" ".join(check.argv))
            for selector, literal in check.expectations:
                allowed.add_text(selector)      # filter values such as cells[cell.d=10]
                value = json.loads(literal)
                if isinstance(value, str):
                    allowed.add_text(value)
                elif isinstance(value, (int, float)) and not isinstance(value, bool):
                    allowed.add_token(literal)
        elif block.kind == "calc":
            for expr, value in calc_lines(block):
                allowed.add_text(expr)
                allowed.add_token(value)
        elif block.kind == "paper":
            allowed.add_text(block.body)
    return allowed


# Row labels of butterflies and hypercubes written as bit strings in code spans (`101`).
BITS = re.compile(r"`[01]{2,}`")


def stray_figures(section: Section) -> list[str]:
    prose = BITS.sub(" ", REFERENCE.sub(" ", prose_of(section.text)))
    allowed = allowed_for(section)
    return [t for t in numbers_in(prose) if is_result_looking(t) and not allowed.admits(t)]


# --------------------------------------------------------------------------------------------
# Running the commands (each distinct command once per session)

_OUTPUTS: dict[tuple[str, ...], dict] = {}


def run_json(argv: list[str], capsys, tmp_path_factory) -> dict:
    key = tuple(argv)
    if key not in _OUTPUTS:
        cwd = os.getcwd()
        # Sweeps write a results file into the working directory: keep it out of the checkout.
        os.chdir(tmp_path_factory.mktemp("answers"))
        try:
            capsys.readouterr()
            status = main(list(argv))
            out, err = capsys.readouterr()
        finally:
            os.chdir(cwd)
        assert status == 0, f"{COMMAND} {shlex.join(argv)} exited {status}: {err}"
        _OUTPUTS[key] = json.loads(out)
    return _OUTPUTS[key]


def all_checks() -> list[Check]:
    return [parse_check(b) for s in answer_sections() for b in s.blocks if b.kind == "check"]


def check_id(check: Check) -> str:
    return f"ex{check.section}-" + " ".join(check.argv[:3])


# --------------------------------------------------------------------------------------------
# The tests


def test_every_exercise_has_an_answer_with_checks():
    exercises = split_sections(EXERCISES.read_text())
    answers = answer_sections()
    numbers = [s.number for s in exercises]
    assert len(exercises) >= 8
    assert numbers == list(range(1, len(exercises) + 1)), numbers
    assert [(s.number, s.title) for s in answers] == [(s.number, s.title) for s in exercises]
    for section in answers:
        assert any(b.kind == "check" for b in section.blocks), f"exercise {section.number}"


def test_every_exercise_gives_commands():
    for section in split_sections(EXERCISES.read_text()):
        assert COMMAND in section.text, f"exercise {section.number} has no command to run"


def exercise_commands() -> list[str]:
    commands = []
    for block in FENCE.finditer(EXERCISES.read_text()):
        for line in join_continuations(block.group(2)):
            stripped = line.strip().lstrip("$").strip()
            if stripped.startswith(COMMAND + " "):
                commands.append(stripped)
    return commands


def test_exercise_commands_exist():
    assert len(exercise_commands()) >= 16


@pytest.mark.parametrize("command", exercise_commands())
def test_exercise_command_parses(command):
    """Each command a student copies parses with the real CLI parser (it is not run here)."""
    argv = command_argv(command)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse reports and exits on a bad command line
        pytest.fail(f"{command!r} does not parse (exit {exc.code})")
    assert args.command in COMMANDS


@pytest.mark.parametrize("check", all_checks(), ids=check_id)
def test_answer_figures(check, capsys, tmp_path_factory):
    """Every figure of a check block is what the command prints today."""
    output = run_json(check.argv, capsys, tmp_path_factory)
    wrong = []
    for selector, literal in check.expectations:
        actual = select(output, selector)
        if not matches(actual, literal):
            wrong.append(f"{selector} = {actual!r}, the answer key says {literal}")
    assert not wrong, f"{COMMAND} {shlex.join(check.argv)}:\n" + "\n".join(wrong)


def test_calc_blocks():
    blocks = [b for s in answer_sections() for b in s.blocks if b.kind == "calc"]
    assert blocks
    for block in blocks:
        for expr, value in calc_lines(block):
            assert calc_matches(expr, value), f"exercise {block.section}: {expr} != {value}"


def normalize(text: str) -> str:
    return " ".join(text.replace("$", " ").split())


def test_paper_quotes():
    blocks = [b for s in answer_sections() for b in s.blocks if b.kind == "paper"]
    assert blocks
    if not PAPERS.is_dir():
        pytest.skip(f"the papers are not in {PAPERS} (a clone has no copy; set UNIVERSAL_PAPERS to the "
                    "folder of their markdown texts to check the quoted figures)")
    for block in blocks:
        for line in block.body.splitlines():
            if not line.strip():
                continue
            stem, colon, quote = line.partition(":")
            assert colon and quote.strip(), f"malformed paper line {line!r}"
            paper = PAPERS / f"{stem.strip()}.md"
            assert paper.is_file(), f"no paper {paper.name}"
            assert normalize(quote) in normalize(paper.read_text()), f"{paper.name}: {quote.strip()!r}"


@pytest.mark.parametrize("section", answer_sections(), ids=lambda s: f"ex{s.number}")
def test_prose_states_only_checked_figures(section):
    assert not stray_figures(section), (
        f"exercise {section.number}: figures in the prose that no check, calc or paper block "
        f"states: {stray_figures(section)}")


def test_no_figures_outside_sections():
    text = ANSWERS.read_text()
    first = SECTION.search(text)
    intro = REFERENCE.sub(" ", prose_of(text[:first.start()] if first else text))
    # The introduction explains the format; its examples live in code spans and blocks.
    intro = re.sub(r"`[^`]*`", " ", intro)
    assert [t for t in numbers_in(intro) if is_result_looking(t)] == []


# --------------------------------------------------------------------------------------------
# The mechanism itself


SAMPLE = {"rows": [{"protocol": "fifo", "paths": "valiant", "T": 7, "x": 0.27777},
                   {"protocol": "random-rank", "paths": "valiant", "T": 9, "x": None},
                   {"protocol": "fifo", "paths": "direct", "T": 5, "x": 2.0}],
          "cells": [{"cell": {"d": 4}, "rows": [{"C": 2}]}, {"cell": {"d": 8}, "rows": [{"C": 8}]}],
          "hist": {"0": 76, "2": 4}, "name": "torus:k=9,n=2"}


def test_selectors():
    assert select(SAMPLE, "rows[0].T") == 7
    assert select(SAMPLE, "rows[-1].T") == 5
    assert select(SAMPLE, "rows[protocol=fifo,paths=valiant].T") == 7
    assert select(SAMPLE, "rows[protocol=random-rank].x") is None
    assert select(SAMPLE, "cells[cell.d=8].rows[0].C") == 8
    assert select(SAMPLE, "hist.2") == 4
    assert select(SAMPLE, "name") == "torus:k=9,n=2"
    assert select(SAMPLE, 'rows[protocol="fifo",T=5].paths') == "direct"
    for bad in ["rows[protocol=fifo].T", "rows[protocol=growing-rank].T", "rows[7].T",
                "rows[0].nope", "cells[cell.d=6]", "rows..T", "rows[0", ".rows"]:
        with pytest.raises(SelectorError):
            select(SAMPLE, bad)


def test_value_comparison():
    assert matches(0.27777, "0.278") and not matches(0.27777, "0.277")
    assert matches(7, "7") and matches(8.0, "8") and not matches(7.2, "7")
    assert matches("5/18", '"5/18"') and not matches("5/18", '"25/144"')
    assert matches(True, "true") and not matches(1, "true") and matches(None, "null")
    assert calc_matches("F(2, 3)**3 * 2 - F(2, 27)", "14/27")
    assert calc_matches("2**((7 - 1) // 2)", "8") and calc_matches("2 / 7", "0.286")


def test_prose_rule():
    section = Section(1, "t", "We get C = 2 and T = 14 at d = 12, and 0.28 = 5/18, not 0.4.\n"
                              "Theorem 12 and §4.3 are references, `101` is a row, 101 is not.\n"
                              "```check\n$ python -m universal route --network hypercube:d=12 --json\n"
                              "rows[0].T = 14\nrows[0].x = \"5/18\"\nrows[0].y = 0.278\n```\n")
    section.blocks = [Block(b.group(1), b.group(2), 1) for b in FENCE.finditer(section.text)]
    assert stray_figures(section) == ["0.4", "101"]
    with pytest.raises(ValueError):
        parse_check(Block("check", "$ python -m universal route --network x\nrows[0].T = 1\n", 1))
    with pytest.raises(ValueError):
        parse_check(Block("check", "$ python -m universal route --json\nrows[0].T == 1\n", 1))
