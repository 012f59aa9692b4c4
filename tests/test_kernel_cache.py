"""The guard against stale numba caches (:mod:`universal.kernel_cache`).

Its tables list every module with cached kernels and everything compiled into them (read from
the sources). On a copy of those modules in a temporary directory: a changed digest removes the
kernels' cache files and writes a new stamp, an unchanged one removes nothing, and files that are
not the kernels' cache files stay, in the package's ``__pycache__``, in ``NUMBA_CACHE_DIR``, and,
when the package's directory is read-only, in numba's user-wide cache directory.
"""

from __future__ import annotations

import ast
import errno
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

import universal
from universal.kernel_cache import KERNEL_MODULES, SOURCES, STAMP, cache_dirs, clear_stale

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


@pytest.fixture
def read_only(package, tmp_path, monkeypatch):
    """The copy made read-only, as an installed package can be, each directory with a
    ``__pycache__`` of stale-looking files; numba's user-wide cache directory moved into ``tmp_path``.

    Permission bits do not stop the superuser (containers often run tests as root): where a probe
    file can still be created in a directory made read-only, numba's own writability check (the
    cache locators' ``ensure_cache_path``, which creates a temporary file in the directory) is made
    to fail for the copy's directories as it fails on a read-only one, with EACCES.
    """
    from numba.core import caching
    locator = getattr(caching, "_CacheLocator", None)
    if not hasattr(locator, "ensure_cache_path"):
        pytest.skip("this numba has no _CacheLocator.ensure_cache_path to stand in for a read-only directory")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))                          # the user-wide directory on macOS
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))     # and elsewhere but Windows
    directories = sorted({(package / name).parent for name in SOURCES} | {package})
    for directory in directories:
        _fill(directory / "__pycache__")
    frozen = [d / "__pycache__" for d in directories] + directories
    for directory in frozen:
        directory.chmod(0o555)
    try:
        (package / "probe").touch()
    except PermissionError:
        pass
    else:                                                           # chmod did not stop us: root
        (package / "probe").unlink()
        ensure = locator.ensure_cache_path                          # every locator's check

        def ensure_cache_path(self):
            if Path(self.get_cache_path()).is_relative_to(package):
                raise PermissionError(errno.EACCES, "Permission denied", self.get_cache_path())
            ensure(self)

        monkeypatch.setattr(locator, "ensure_cache_path", ensure_cache_path)
    yield home
    for directory in frozen:
        directory.chmod(0o755)


@needs_numba
@pytest.mark.skipif(sys.platform == "win32", reason="numba's user-wide cache directory on Windows is not moved "
                                                    "by HOME: the test would write to the real one")
def test_a_read_only_package_is_guarded_in_the_user_wide_directory(package, read_only):
    """The caches go to numba's user-wide directory: there the guard clears the package's own stale
    kernels and nothing else (other files, and another source directory's kernels of the same
    names); the read-only ``__pycache__`` is left as it is."""
    dirs = cache_dirs(package)
    user_cache = read_only / ("Library/Caches" if sys.platform == "darwin" else ".cache") / "numba"
    found = list(user_cache.glob("engine_*"))
    assert len(found) == 1, f"no user-wide cache directory for engine/: the guard looks in {sorted(dirs)}"
    user_wide = found[0]
    assert sorted(dirs) == sorted(user_wide.parent.glob("*_*"))
    assert user_wide in dirs and not any(d.is_relative_to(package) for d in dirs)
    neighbour = user_wide.parent / "engine_0123456789abcdef0123456789abcdef01234567"
    _fill(user_wide)
    _fill(neighbour)                      # another package's engine/ directory: its kernels are not ours
    removed = clear_stale(package)
    assert sorted(p.name for p in removed) == sorted(KERNEL_FILES)
    assert {p.parent for p in removed} == {user_wide}
    assert sorted(p.name for p in user_wide.iterdir()) == sorted(OTHER_FILES + [STAMP])
    assert all((neighbour / name).exists() for name in KERNEL_FILES + OTHER_FILES)
    assert all((package / "engine" / "__pycache__" / name).exists() for name in KERNEL_FILES)
    assert not (package / "engine" / "__pycache__" / STAMP).exists()
    _fill(user_wide)
    assert clear_stale(package) == []                                  # stamped: nothing stale now
