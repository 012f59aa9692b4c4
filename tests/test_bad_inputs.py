"""Bad input of every kind gets one ``error:`` line on stderr and exit status 2 (issue 11).

Each case runs the command line in-process (``universal.cli.main``) in an empty folder holding
only the case's input files, then checks: status 2, exactly one stderr line and it starts with
``error:``, no traceback, and every file in the folder exactly as it was (nothing written,
nothing left behind, no input changed).

Cases: files that are not UTF-8 (or are binary junk) for every kind of input file; seed and cell
counts too large to allocate; sweep placeholders that are not axis names; every way a results
file given to ``--resume`` can be corrupt; parameters given twice; empty output file names;
output folders that cannot be written.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from universal.cli import main

# --------------------------------------------------------------------------- the contract


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_refused(argv: list[str], folder: Path, capsys) -> str:
    """Run ``argv`` in ``folder``; check the contract; return the error line."""
    before = snapshot(folder)
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        status = main(argv)
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert status == 2, (status, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and out == ""
    assert snapshot(folder) == before
    return lines[0]


# --------------------------------------------------------------------------- input files

#: Byte strings that are not UTF-8 text, each next to otherwise valid content.
JUNK = {
    "latin-1 comment": lambda good: b"# caf\xe9\n" + good,
    "latin-1 in data": lambda good: good.replace(b"\n", b" \xe9\n", 1),
    "utf-16": lambda good: good.decode().encode("utf-16"),
    "lone continuation byte": lambda good: good + b"\x80\n",
    "truncated sequence": lambda good: good + b"# \xe2\x82\n",
    "overlong slash": lambda good: b"\xc0\xaf" + good,
    "surrogate": lambda good: good + b"# \xed\xa0\x80\n",
    "0xff byte": lambda good: b"\xff" + good,
    "binary junk": lambda good: b"\x00\x9f" + np.random.default_rng(11).bytes(300),
}

SWEEP_TOML = ('network = "hypercube:d={d}"\nproblem = "permutation:random"\npaths = "dimension-order"\n'
              'protocols = "fifo"\nseeds = 1\n[sweep]\nd = [2, 3]\n')

#: Kind -> (file name, valid content, argv using the file).
FILE_KINDS = {
    "edge list": ("net.edges", b"0 1\n1 2\n2 0\n",
                  ["route", "--network", "edgelist:net.edges", "--problem", "permutation:random"]),
    "permutation": ("perm.txt", b"1\n0\n3\n2\n",
                    ["route", "--network", "hypercube:d=2", "--problem", "permutation:file=perm.txt"]),
    "pairs": ("pairs.txt", b"0 1\n2 3\n",
              ["route", "--network", "hypercube:d=2", "--problem", "pairs:file=pairs.txt"]),
    "explicit paths": ("paths.txt", b"0 1\n1 0\n2 3\n3 2\n",
                       ["route", "--network", "hypercube:d=2", "--problem", "permutation:file=perm.txt",
                        "--paths", "explicit:file=paths.txt"]),
    "traffic matrix": ("m.txt", ("\n".join(" ".join("1" if j == (i + 1) % 3 else "0" for j in range(3))
                                           for i in range(3)) + "\n").encode(),
                       ["load", "--network", "torus:k=3,n=1", "--routing", "dor", "--traffic", "matrix:file=m.txt"]),
    "scenario": ("s.toml", b'network = "hypercube:d=2"\nproblem = "permutation:random"\npaths = "dimension-order"\n'
                           b'protocols = "fifo"\n', ["scenario", "s.toml"]),
    "results": ("r.jsonl", None, ["scenario", "sweep.toml", "--out", "r.jsonl", "--resume"]),
}


@pytest.fixture(scope="module")
def valid_results(tmp_path_factory) -> list[str]:
    """The lines of a finished results file of SWEEP_TOML (header and the two cells)."""
    folder = tmp_path_factory.mktemp("results")
    (folder / "sweep.toml").write_text(SWEEP_TOML)
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        assert main(["scenario", "sweep.toml", "--out", "r.jsonl", "--json"]) == 0
    finally:
        os.chdir(cwd)
    lines = (folder / "r.jsonl").read_text().splitlines()
    assert len(lines) == 3
    return lines


@pytest.mark.parametrize("junk", JUNK)
@pytest.mark.parametrize("kind", FILE_KINDS)
def test_files_that_are_not_utf8_text(kind, junk, tmp_path, capsys, valid_results):
    name, good, argv = FILE_KINDS[kind]
    if good is None:
        good = ("\n".join(valid_results) + "\n").encode()
    (tmp_path / "perm.txt").write_bytes(b"1\n0\n3\n2\n")
    (tmp_path / "sweep.toml").write_text(SWEEP_TOML)
    (tmp_path / name).write_bytes(JUNK[junk](good))
    line = assert_refused(argv, tmp_path, capsys)
    assert "not UTF-8 text" in line and name in line


def test_the_valid_files_of_the_battery_are_accepted(tmp_path, capsys, valid_results):
    """The same commands with the valid files succeed, so the failures above are the junk's."""
    for kind, (name, good, argv) in FILE_KINDS.items():
        (tmp_path / "perm.txt").write_bytes(b"1\n0\n3\n2\n")
        (tmp_path / "sweep.toml").write_text(SWEEP_TOML)
        (tmp_path / name).write_bytes(good if good is not None else ("\n".join(valid_results) + "\n").encode())
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            assert main([*argv, "--json"]) == 0, (kind, capsys.readouterr().err)
        finally:
            os.chdir(cwd)
        capsys.readouterr()


# --------------------------------------------------------------------------- sizes

SIZE_CASES = {
    "route --seeds 10^9": (["route", "--network", "hypercube:d=2", "--problem", "permutation:random",
                            "--seeds", "1000000000"], None, "seeds are more than"),
    "route --seeds 10^5+1": (["route", "--network", "hypercube:d=2", "--problem", "permutation:random",
                              "--seeds", "100001"], None, "seeds are more than"),
    "scenario --seeds 10^9": (["scenario", "s.toml", "--seeds", "1000000000"], "", "seeds are more than"),
    "scenario file seeds 10^9": (["scenario", "s.toml"], "seeds = 1000000000\n", "seeds are more than"),
    "sweep file seeds 10^9": (["scenario", "s.toml"], "seeds = 1000000000\n[sweep]\nd = [2, 3]\n",
                              "seeds are more than"),
    "sweep of 10^8 cells": (["scenario", "s.toml"],
                            "[sweep]\n" + "".join(f"a{i} = {list(range(100))}\n" for i in range(4)),
                            "100,000,000 cells"),
    "sweep of 10^4+ cells": (["scenario", "s.toml"], "[sweep]\na = " + str(list(range(101))) + "\nb = "
                             + str(list(range(100))) + "\n", "10,100 cells"),
    "load analysis of hours": (["load", "--network", "torus:k=8,n=4", "--routing", "rlb"], None,
                               "would take more than 60 minutes"),
}

BASE_TOML = ('network = "hypercube:d={d}"\nproblem = "permutation:random"\npaths = "dimension-order"\n'
             'protocols = "fifo"\n')


@pytest.mark.parametrize("case", SIZE_CASES)
def test_sizes_are_refused_before_allocating(case, tmp_path, capsys):
    argv, extra, message = SIZE_CASES[case]
    if extra is not None:
        toml = BASE_TOML if "[sweep]" in extra else BASE_TOML.replace("{d}", "2")
        (tmp_path / "s.toml").write_text(toml + extra)
    assert message in assert_refused(argv, tmp_path, capsys)


# --------------------------------------------------------------------------- placeholders

PLACEHOLDERS = {
    "index": ("network", "hypercube:d={d[0]}"),
    "attribute": ("network", "hypercube:d={d.foo}"),
    "positional": ("network", "hypercube:d={0}"),
    "empty braces": ("network", "hypercube:d={}"),
    "unknown axis": ("network", "hypercube:d={e}"),
    "unmatched open": ("network", "hypercube:d={d"),
    "unmatched close": ("network", "hypercube:d=d}"),
    "bad format spec": ("network", "hypercube:d={d:q}"),
    "index in problem": ("problem", "h-relation:h={d[1]}"),
    "attribute in paths": ("paths", "{d.real}"),
    "call-like in protocols": ("protocols", "{d()}"),
}


@pytest.mark.parametrize("case", PLACEHOLDERS)
def test_sweep_placeholders_must_be_axis_names(case, tmp_path, capsys):
    key, value = PLACEHOLDERS[case]
    toml = {"network": "hypercube:d={d}", "problem": "permutation:random", "paths": "dimension-order",
            "protocols": "fifo"}
    toml[key] = value
    text = "".join(f"{k} = {json.dumps(v)}\n" for k, v in toml.items()) + "[sweep]\nd = [2, 3]\n"
    (tmp_path / "s.toml").write_text(text)
    line = assert_refused(["scenario", "s.toml", "--out", "r.jsonl"], tmp_path, capsys)
    assert "axis" in line or "brace" in line or "placeholder" in line


# --------------------------------------------------------------------------- corrupt results files


def _edit_row(field, value):
    def edit(lines):
        cell = json.loads(lines[1])
        cell["rows"][0][field] = value
        return [lines[0], json.dumps(cell), lines[2]]
    return edit


def _edit_cell(change):
    def edit(lines):
        cell = json.loads(lines[2])
        change(cell)
        return [lines[0], lines[1], json.dumps(cell)]
    return edit


def _edit_header(change):
    def edit(lines):
        header = json.loads(lines[0])
        change(header)
        return [json.dumps(header), *lines[1:]]
    return edit


def _drop(key):
    return lambda d: d.pop(key)


def _set(key, value):
    return lambda d: d.__setitem__(key, value)


#: Case -> (edit of the valid lines, the line number the error must name, or None for the header's "line 1").
CORRUPT = {
    "empty file": (lambda lines: [""], 1),
    "header not JSON": (lambda lines: ["{sweep", *lines[1:]], 1),
    "header a list": (lambda lines: ["[]", *lines[1:]], 1),
    "header a string": (lambda lines: ['"small"', *lines[1:]], 1),
    "header a number": (lambda lines: ["1", *lines[1:]], 1),
    "header null": (lambda lines: ["null", *lines[1:]], 1),
    "header without sweep": (_edit_header(_drop("sweep")), 1),
    "header without settings": (_edit_header(_drop("settings")), 1),
    "header settings a list": (_edit_header(_set("settings", [])), 1),
    "header version a number": (_edit_header(_set("version", 3)), 1),
    "header unknown key": (_edit_header(_set("colour", "red")), 1),
    "cell line not JSON": (lambda lines: [lines[0], lines[1], "{\"cell\": "], 3),
    "cell line a list": (lambda lines: [lines[0], "[1, 2]", lines[2]], 2),
    "cell line without rows": (_edit_cell(_drop("rows")), 3),
    "cell line without captions": (_edit_cell(_drop("captions")), 3),
    "cell line with an extra key": (_edit_cell(_set("extra", 1)), 3),
    "cell with no rows": (_edit_cell(_set("rows", [])), 3),
    "rows not a list": (_edit_cell(_set("rows", {"T": 1})), 3),
    "cell not an object": (_edit_cell(_set("cell", [3])), 3),
    "cell with an unknown axis": (_edit_cell(_set("cell", {"e": 3})), 3),
    "cell not in the sweep": (_edit_cell(_set("cell", {"d": 99})), 3),
    "cell given twice": (lambda lines: [lines[0], lines[1], lines[1]], 3),
    "network a string": (_edit_cell(_set("network", "x")), 3),
    "network without links": (_edit_cell(lambda c: c["network"].pop("links")), 3),
    "network nodes a string": (_edit_cell(lambda c: c["network"].__setitem__("nodes", "9")), 3),
    "captions not strings": (_edit_cell(_set("captions", [1])), 3),
    "row not an object": (_edit_cell(lambda c: c["rows"].__setitem__(0, 5)), 3),
    'row "T": "abc"': (_edit_row("T", "abc"), 2),
    'row "C": null': (_edit_row("C", None), 2),
    'row "T": 1.5': (_edit_row("T", 1.5), 2),
    'row "D": true': (_edit_row("D", True), 2),
    'row "deadlock": "no"': (_edit_row("deadlock", "no"), 2),
    'row "paths": 3': (_edit_row("paths", 3), 2),
    'row "T_over_CD": "x"': (_edit_row("T_over_CD", "x"), 2),
    'row "full_links": [1]': (_edit_row("full_links", [1]), 2),
    "row missing a field": (_edit_cell(lambda c: c["rows"][0].pop("T")), 3),
    'row "status": "finished"': (_edit_row("status", "finished"), 2),
    "row of a seed the sweep does not run": (_edit_row("seed", 5), 2),
    "row with a NaN latency": (lambda lines: [lines[0], re.sub(r'"mean_latency": [^,]*', '"mean_latency": NaN',
                                                                 lines[1]), lines[2]], 2),
    "cell line with a key given twice": (lambda lines: [lines[0], lines[1], lines[2][:-1] + ', "rows": []}'], 3),
    "row with an unknown field": (_edit_cell(lambda c: c["rows"][0].__setitem__("colour", 1)), 3),
}


@pytest.mark.parametrize("case", CORRUPT)
def test_resume_refuses_a_corrupt_results_file_and_leaves_it_alone(case, tmp_path, capsys, valid_results):
    edit, lineno = CORRUPT[case]
    (tmp_path / "sweep.toml").write_text(SWEEP_TOML)
    (tmp_path / "r.jsonl").write_text("\n".join(edit(list(valid_results))) + "\n")
    line = assert_refused(["scenario", "sweep.toml", "--out", "r.jsonl", "--resume"], tmp_path, capsys)
    assert f"line {lineno}" in line and "r.jsonl" in line


def test_resume_accepts_the_uncorrupted_file(tmp_path, capsys, valid_results):
    (tmp_path / "sweep.toml").write_text(SWEEP_TOML)
    (tmp_path / "r.jsonl").write_text("\n".join(valid_results) + "\n")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["scenario", "sweep.toml", "--out", "r.jsonl", "--resume", "--json"]) == 0
    finally:
        os.chdir(cwd)
    assert json.loads(capsys.readouterr().out)["resumed_cells"] == 2


# --------------------------------------------------------------------------- names and options

DUPLICATED = {
    "route network": ["route", "--network", "torus:k=8,k=9,n=2", "--problem", "permutation:random"],
    "load network": ["load", "--network", "torus:k=5,n=2,n=1"],
    "worstcase network": ["worstcase", "--network", "mesh:k=3,k=3,n=2"],
    "problem": ["route", "--network", "hypercube:d=2", "--problem", "h-relation:h=1,h=2"],
    "paths": ["route", "--network", "hypercube:d=2", "--problem", "permutation:random",
              "--paths", "valiant:base=shortest,base=dimension-order"],
    "protocol": ["route", "--network", "hypercube:d=2", "--problem", "permutation:random",
                 "--protocols", "duplication:copies=2,copies=3"],
    "traffic": ["load", "--network", "torus:k=5,n=2", "--traffic", "hotspot:count=2,count=3"],
    "scenario file": ["scenario", "dup.toml"],
    "design network": ["design", "--network", "torus:k=4,n=2,n=3"],
    "openloop network": ["openloop", "--network", "torus:k=4,k=4,n=2", "--loads", "0.1"],
}

EMPTY_OUTPUTS = {
    "route --plot": ["route", "--network", "hypercube:d=2", "--problem", "permutation:random", "--plot", ""],
    "route --links": ["route", "--network", "hypercube:d=2", "--problem", "permutation:random", "--links", ""],
    "load --plot": ["load", "--network", "torus:k=5,n=2", "--plot", ""],
    "load --links": ["load", "--network", "torus:k=5,n=2", "--links", ""],
    "worstcase --plot": ["worstcase", "--network", "torus:k=5,n=2", "--plot", ""],
    "worstcase --permutation-file": ["worstcase", "--network", "torus:k=5,n=2", "--permutation-file", ""],
    "scenario --out": ["scenario", "sweep.toml", "--out", ""],
    "scenario --plot": ["scenario", "sweep.toml", "--plot", "  "],
    "design --save": ["design", "--network", "torus:k=4,n=2", "--save", ""],
}

UNWRITABLE = "/sys"   # a folder that exists and that no one may create files in (read-only sysfs)

UNWRITABLE_OUTPUTS = {
    "route --plot": ["route", "--network", "hypercube:d=2", "--problem", "permutation:random",
                     "--plot", f"{UNWRITABLE}/p.png"],
    "route --links": ["route", "--network", "hypercube:d=2", "--problem", "permutation:random",
                      "--links", f"{UNWRITABLE}/l.txt"],
    "load --links": ["load", "--network", "torus:k=5,n=2", "--links", f"{UNWRITABLE}/l.txt"],
    "worstcase --permutation-file": ["worstcase", "--network", "torus:k=5,n=2",
                                     "--permutation-file", f"{UNWRITABLE}/w.txt"],
    "scenario --out": ["scenario", "sweep.toml", "--out", f"{UNWRITABLE}/r.jsonl"],
    "load --plot": ["load", "--network", "torus:k=5,n=2", "--plot", f"{UNWRITABLE}/p.png"],
    "worstcase --plot": ["worstcase", "--network", "torus:k=5,n=2", "--plot", f"{UNWRITABLE}/p.png"],
    "scenario --plot": ["scenario", "sweep.toml", "--plot", f"{UNWRITABLE}/p.svg"],
    "plot into a file's folder": ["load", "--network", "torus:k=5,n=2", "--plot", "sweep.toml/p.png"],
    "plot into a missing folder": ["load", "--network", "torus:k=5,n=2", "--plot", "nowhere/p.png"],
    "links into a folder": ["load", "--network", "torus:k=5,n=2", "--links", "."],
}


@pytest.mark.parametrize("case", DUPLICATED)
def test_a_parameter_given_twice_is_refused(case, tmp_path, capsys):
    (tmp_path / "dup.toml").write_text('network = "torus:k=4,n=2,k=5"\nproblem = "permutation:random"\n'
                                       'paths = "dimension-order"\nprotocols = "fifo"\n')
    assert "given twice" in assert_refused(DUPLICATED[case], tmp_path, capsys)


@pytest.mark.parametrize("case", EMPTY_OUTPUTS)
def test_an_empty_output_file_name_is_refused(case, tmp_path, capsys):
    (tmp_path / "sweep.toml").write_text(SWEEP_TOML)
    assert "file name is empty" in assert_refused(EMPTY_OUTPUTS[case], tmp_path, capsys)


@pytest.mark.parametrize("case", UNWRITABLE_OUTPUTS)
def test_an_output_folder_that_cannot_be_written_is_refused_first(case, tmp_path, capsys):
    if os.access(UNWRITABLE, os.W_OK) and UNWRITABLE in " ".join(UNWRITABLE_OUTPUTS[case]):
        try:
            Path(UNWRITABLE, ".probe").touch()
        except OSError:
            pass
        else:  # pragma: no cover - a machine where /sys can be written
            Path(UNWRITABLE, ".probe").unlink()
            pytest.skip(f"{UNWRITABLE} can be written here")
    (tmp_path / "sweep.toml").write_text(SWEEP_TOML)
    line = assert_refused(UNWRITABLE_OUTPUTS[case], tmp_path, capsys)
    assert "cannot write" in line or "cannot plot" in line


def test_the_battery_holds_at_least_a_hundred_bad_inputs():
    cases = (len(FILE_KINDS) * len(JUNK) + len(SIZE_CASES) + len(PLACEHOLDERS) + len(CORRUPT) + len(DUPLICATED)
             + len(EMPTY_OUTPUTS) + len(UNWRITABLE_OUTPUTS))
    assert cases >= 100
