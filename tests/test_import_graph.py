"""The package's modules import each other without cycles, lazy imports inside functions included
(a lazy import hides a cycle from Python but not from a reader: SPEC §1's layering)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import universal

ROOT = Path(universal.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> nx.DiGraph:
    """Module -> every ``universal`` module it imports, anywhere in its body."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("universal"):
                graph.add_edge(name, node.module)
                graph.add_edges_from((name, f"{node.module}.{a.name}") for a in node.names
                                     if f"{node.module}.{a.name}" in modules)
            elif isinstance(node, ast.Import):
                graph.add_edges_from((name, a.name) for a in node.names if a.name in modules)
    return graph


def test_the_import_graph_finds_the_engine_modules_imports():
    graph = import_graph()
    assert graph.has_edge("universal.engine.fast", "universal.engine.bufferless")
    assert graph.has_edge("universal.engine.bufferless", "universal.engine.contention")


def test_no_module_imports_itself_through_others():
    cycles = list(nx.simple_cycles(import_graph()))
    assert cycles == []
