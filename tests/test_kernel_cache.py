"""The guard against stale numba caches (:mod:`universal.kernel_cache`).

Its tables list every module with cached kernels and everything compiled into them (read from
the sources). On a copy of those modules in a temporary directory: a changed digest removes the
kernels' cache files and writes a new stamp, an unchanged one removes nothing, and files that are
not the kernels' cache files stay, in the package's ``__pycache__`` and in ``NUMBA_CACHE_DIR``.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
from pathlib import Path

import pytest

import universal
from universal.kernel_cache import KERNEL_MODULES, SOURCES, STAMP, clear_stale

ROOT = Path(universal.__file__).parent

needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="numba is not installed: there are no cached kernels and no "
                                        "cache locators to ask where they would be")


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_table_lists_every_module_with_cached_kernels():
    decorated = re.compile(r"^\s*@njit\([^)]*cache=True", re.MULTILINE)
    holding = {_relative(p) for p in ROOT.rglob("*.py") if decorated.search(p.read_text(encoding="utf-8"))}
    assert set(KERNEL_MODULES) == holding


def _module_file(module: str) -> str:
    path = Path(*module.split(".")[1:])
    return (path / "__init__.py").as_posix() if (ROOT / path).is_dir() else f"{path.as_posix()}.py"


def test_everything_a_kernel_reads_from_the_package_is_digested():
    """A jitted function of one module calling one of another (or reading its constant) has it
    compiled in: every such module must be among the digested sources."""
    read = set()
    for name in KERNEL_MODULES:
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        imported = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("universal"):
                imported.update({a.asname or a.name: node.module for a in node.names})
            elif isinstance(node, ast.Import):
                imported.update({a.asname or a.name: a.name for a in node.names if a.name.startswith("universal")})
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef) and any(
                    "njit" in ast.unparse(d) or "intrinsic" in ast.unparse(d) for d in function.decorator_list):
                for node in ast.walk(function):
                    if isinstance(node, ast.Name) and node.id in imported:
                        read.add(_module_file(imported[node.id]))
    assert read and read <= set(SOURCES)


def test_every_module_taking_numbas_njit_runs_the_guard_first():
    for path in ROOT.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "from numba import njit" in text:
            assert "from numba import njit\n    from universal.kernel_cache import clear_stale\n    clear_stale()" in text, path


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A copy of the digested modules, caching in their own ``__pycache__`` (NUMBA_CACHE_DIR off)."""
    from numba.core import config
    monkeypatch.setattr(config, "CACHE_DIR", "")
    root = tmp_path / "universal"
    for name in SOURCES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, root / name)
    return root


KERNEL_FILES = ["compiled_adaptive._number-136.py311.nbi", "compiled_adaptive._number-136.py311.1.nbc",
                "compiled._counting_order-360.py311.nbi", "compiled._counting_order-360.py311.2.nbc"]
OTHER_FILES = ["compiled.cpython-311.pyc", "runs.cpython-311.pyc", "runs.helper-10.py311.nbi",
               "hints.prefetch-20.py311.nbi", "compiled_adaptive.notes.txt", "notes.nbc"]


def _fill(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in KERNEL_FILES + OTHER_FILES:
        (directory / name).write_text("x")


@needs_numba
def test_a_changed_digest_clears_the_kernels_caches_and_stamps(package):
    cache = package / "engine" / "__pycache__"
    _fill(cache)
    removed = clear_stale(package)           # no stamp yet: the caches' sources are unknown
    assert sorted(p.name for p in removed) == sorted(KERNEL_FILES)
    assert sorted(p.name for p in cache.iterdir()) == sorted(OTHER_FILES + [STAMP])
    first = (cache / STAMP).read_text()
    assert (package / "paths" / "__pycache__" / STAMP).read_text() == first

    _fill(cache)
    with open(package / "engine" / "hints.py", "a") as f:      # a callee's file, not a kernel's own
        f.write("\n# changed\n")
    removed = clear_stale(package)
    assert sorted(p.name for p in removed) == sorted(KERNEL_FILES)
    assert (cache / STAMP).read_text() != first
    assert all((cache / name).exists() for name in OTHER_FILES)


@needs_numba
def test_an_unchanged_digest_clears_nothing(package):
    cache = package / "engine" / "__pycache__"
    clear_stale(package)
    stamp = (cache / STAMP).read_text()
    _fill(cache)
    assert clear_stale(package) == []
    assert all((cache / name).exists() for name in KERNEL_FILES + OTHER_FILES)
    assert (cache / STAMP).read_text() == stamp


@needs_numba
def test_numba_cache_dir_is_where_it_clears(package, tmp_path, monkeypatch):
    """With NUMBA_CACHE_DIR numba caches elsewhere, under a directory named for the source's."""
    from numba.core import config
    elsewhere = tmp_path / "numba-cache"
    monkeypatch.setattr(config, "CACHE_DIR", str(elsewhere))
    clear_stale(package)
    engine = next(elsewhere.glob("engine_*"))
    in_tree = package / "engine" / "__pycache__"
    _fill(engine)
    _fill(in_tree)
    (package / "engine" / "compiled_adaptive.py").write_text("# changed\n")
    removed = clear_stale(package)
    assert sorted(p.name for p in removed) == sorted(KERNEL_FILES)
    assert {p.parent for p in removed} == {engine}
    assert all((in_tree / name).exists() for name in KERNEL_FILES)     # not where numba looks now
