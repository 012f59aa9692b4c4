"""The package's modules import each other without cycles, lazy imports inside functions included
(a lazy import hides a cycle from Python but not from a reader: SPEC §1's layering)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import networkx as nx

import universal

ROOT = Path(universal.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    """The module a ``from ... import`` names, relative imports (``from .x import y``) resolved."""
    if not node.level:
        return node.module
    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@cache  # parsed once for the module's tests (about a second each); they only read it
def import_graph() -> nx.DiGraph:
    """Module -> every ``universal`` module it imports, anywhere in its body."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            target = _absolute(node, package) if isinstance(node, ast.ImportFrom) else None
            if target and target.startswith("universal"):
                if target != name:                    # ``from . import x`` in a package's __init__
                    graph.add_edge(name, target)
                graph.add_edges_from((name, f"{target}.{a.name}") for a in node.names
                                     if f"{target}.{a.name}" in modules)
            elif isinstance(node, ast.Import):
                graph.add_edges_from((name, a.name) for a in node.names if a.name in modules)
    return graph


def test_the_import_graph_finds_the_engine_modules_imports():
    graph = import_graph()
    assert graph.has_edge("universal.engine.runs", "universal.engine.contention")
    assert graph.has_edge("universal.engine.bufferless", "universal.engine.contention")


def test_no_module_imports_itself_through_others():
    cycles = list(nx.simple_cycles(import_graph()))
    assert cycles == []


#: SPEC §1's layers, lowest first: a module may import its own layer and those below it. The
#: load analysis sits above the LP design because it offers the designed routings (2turn) by name;
#: the open loop sits above it because it prints the analytic saturation beside the simulated one.
LAYERS = [
    {"universal", "errors", "registry", "datafiles", "interrupts", "ascii", "memory", "workers", "executors", "extras",
     "kernel_cache", "output_files",
     "results", "scenarios"},   # scenarios: the built-in TOML files, a package once installed
    {"networks"},
    {"workloads"},
    {"paths"},
    {"engine", "protocols"},
    {"oblivious"},
    {"design", "optimum", "offline"},
    {"load_analysis"},
    {"openloop"},
    {"experiment", "experiment_plan", "sweep", "scenario", "scenario_settings"},
    {"reporting"},
    {"cli", "__main__"},
]


def _layer(module: str) -> int:
    part = module.split(".")[1] if "." in module else module
    return next(i for i, names in enumerate(LAYERS) if part in names)


def test_the_graph_resolves_relative_imports():
    assert import_graph().has_edge("universal.oblivious.loads", "universal.paths.torus.algorithms")


def test_every_module_has_a_layer():
    unplaced = [m for m in import_graph() if not any((m.split(".")[1] if "." in m else m) in names
                                                     for names in LAYERS)]
    assert unplaced == []


def test_no_lower_layer_imports_a_higher_one():
    """E.g. path systems never reach up into the load analysis, nor the engine into reporting."""
    upward = [(a, b) for a, b in import_graph().edges if _layer(a) < _layer(b)]
    assert upward == []
