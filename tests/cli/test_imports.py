"""Start-up time is part of every run: each command imports only what it needs.

``python -X importtime`` lists every module a run imports; a plain ``route`` must not load
scipy.optimize (about half a second here), networkx or matplotlib, and building the parser
must not load the library at all.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(*argv: str) -> set[str]:
    """The modules that ``python -X importtime -m universal ARGV`` imports (it must succeed)."""
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "universal", *argv], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}


def test_a_plain_route_does_not_import_scipy_optimize_networkx_or_matplotlib():
    modules = imported_modules("route", "--network", "butterfly:d=4", "--problem", "h-relation:h=2",
                               "--paths", "valiant", "--protocols", "random-rank", "--json")
    assert "universal.experiment" in modules          # the check sees the library's imports
    heavy = {m for m in modules if m.split(".")[0] in {"networkx", "matplotlib"} or m.startswith("scipy.optimize")}
    assert not heavy, sorted(heavy)


#: Modules a butterfly route never uses, loaded only when a command names what they hold (start-up).
LAZY_FOR_A_BUTTERFLY = {"universal.paths.torus", "universal.paths.torus.algorithms", "universal.networks.multibutterfly",
                        "universal.networks.datacenter", "universal.engine.vcs", "json"}


def test_a_butterfly_route_leaves_the_torus_multibutterfly_and_datacenter_modules_out():
    modules = imported_modules("route", "--network", "butterfly:d=4", "--problem", "h-relation:h=2",
                               "--paths", "valiant", "--protocols", "random-rank")
    assert "universal.paths.systems" in modules
    assert not LAZY_FOR_A_BUTTERFLY & modules, sorted(LAZY_FOR_A_BUTTERFLY & modules)


def test_the_routes_that_need_them_load_the_lazy_modules():
    """The same measurement sees each module when a route needs it (so the test above can fail)."""
    assert "universal.paths.torus.algorithms" in imported_modules(
        "route", "--network", "torus:k=4,n=2", "--problem", "permutation:random", "--paths", "dor", "--protocols",
        "random-rank")
    assert "universal.networks.multibutterfly" in imported_modules(
        "route", "--network", "multibutterfly:s=4,d=3", "--problem", "permutation:random",
        "--paths", "random-splitter", "--protocols", "random-rank")
    assert "universal.networks.datacenter" in imported_modules(
        "route", "--network", "fattree:k=2,n=3", "--problem", "permutation:random", "--paths", "nca",
        "--protocols", "random-rank")
    assert "universal.engine.vcs" in imported_modules(
        "route", "--network", "torus:k=4,n=1", "--problem", "permutation:tornado", "--paths", "dor",
        "--protocols", "fifo", "--buffer", "1", "--vcs", "2")


def test_worstcase_does_import_scipy_optimize():
    """The same measurement sees scipy.optimize when a command needs it (so the test above can fail)."""
    modules = imported_modules("worstcase", "--network", "torus:k=4,n=2", "--routing", "dor", "--json")
    assert "scipy.optimize" in modules


def test_building_the_parser_does_not_import_the_library():
    """Every command's options are parsed before anything heavy is loaded (``--help`` costs nothing)."""
    code = ("import sys; from universal.cli import build_parser; build_parser(); "
            "print(' '.join(sorted(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    modules = set(run.stdout.split())
    assert "universal.cli.route" in modules
    assert not {"numpy", "universal.experiment", "rich"} & modules


def test_a_butterfly_route_leaves_the_design_layer_out_and_a_torus_route_can_design():
    """The LP designer behind 2turn / 2turna is imported where those routings can run, on tori;
    the reference engine only where it routes."""
    modules = imported_modules("route", "--network", "butterfly:d=4", "--problem", "h-relation:h=2",
                               "--paths", "valiant", "--protocols", "random-rank", "--json")
    assert not {m for m in modules if m.startswith("universal.design")}
    assert "universal.engine.reference" not in modules
    assert "universal.engine.reference" in imported_modules(
        "route", "--network", "butterfly:d=3", "--problem", "h-relation:h=1", "--paths", "valiant", "--protocols",
        "random-rank", "--engine", "reference", "--json")
    modules = imported_modules("route", "--network", "torus:k=3,n=2", "--problem", "permutation:random",
                               "--paths", "2turn", "--protocols", "random-rank", "--json")
    assert "universal.design" in modules
