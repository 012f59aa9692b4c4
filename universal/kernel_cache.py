"""Numba's cached kernels kept in step with the sources they were compiled from, across modules.

The compiled kernels are ``@njit(cache=True)``: numba stores their machine code beside the
module (``__pycache__/<module>.<function>-<line>.pyXY.nbi`` and ``.nbc``) and reuses it while
the function's *own* source file is unchanged. A kernel that calls a jitted function of another
module carries that callee's code in its cache too, and numba does not look at the callee's file
(numba's developer notes on caching; numba PR #8396, "Extend cache invalidation to include
changes in other files", not merged). So after a change to, say,
``universal.engine.compiled_adaptive._number``, ``compiled_openloop._chunk`` went on running the
old ``_number`` from its cache - a silently wrong result - or, with a changed signature, failed
with numba's ``can't unbox array`` error.

:func:`clear_stale` closes that gap in one place. Every module that holds cached kernels calls it
where it imports numba (before any kernel can be called, so before any cache is loaded): it
digests the sources of :data:`SOURCES` together with the numba, numpy and Python versions, and
where the digest differs from the stamp kept in each cache directory it removes the package's
own cache files there (only ``<kernel module>.*.nbi`` / ``.nbc``) and writes the new stamp. Any
change to any of these files therefore recompiles every kernel once (on first use): the cost of
being sure, paid only by whoever edits them.

The cache directory is the one numba's own cache locators pick for the module (the package's
``__pycache__``; ``NUMBA_CACHE_DIR`` when set; numba's user-wide cache directory when the
package's directory is read-only). Not covered: locators chosen through
``NUMBA_CACHE_LOCATOR_CLASSES``, and a long-running process started before an edit that compiles
a new specialisation afterwards (numba stamps it with the file as it is on disk by then).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

__all__ = ["KERNEL_MODULES", "SOURCES", "STAMP", "cache_dirs", "clear_stale", "digest"]

#: The modules holding ``@njit(cache=True)`` kernels, relative to the package
#: (``tests/test_kernel_cache.py`` checks that this is every module with an ``@njit(cache=True ...)`` kernel).
KERNEL_MODULES: tuple[str, ...] = (
    "engine/compiled.py",
    "engine/compiled_adaptive.py",
    "engine/compiled_adaptive_choice.py",
    "engine/compiled_batch_draws.py",
    "engine/compiled_draws.py",
    "engine/compiled_dynamic.py",
    "engine/compiled_in_cache.py",
    "engine/compiled_level_words.py",
    "engine/compiled_levels.py",
    "engine/compiled_list_upkeep.py",
    "engine/compiled_openloop.py",
    "engine/compiled_per_step.py",
    "engine/compiled_run_lists.py",
    "engine/compiled_static_loops.py",
    "paths/level_loads.py",
)

#: Everything compiled into those kernels: their modules and the jitted ``prefetch`` intrinsic
#: they call (the test checks that every ``universal`` name a kernel reads comes from here).
SOURCES: tuple[str, ...] = KERNEL_MODULES + ("engine/hints.py",)

#: The stamp's file name, in each cache directory.
STAMP = "universal-kernels.stamp"

_ROOT = Path(__file__).parent
_checked = False


def digest(root: Path = _ROOT, sources: tuple[str, ...] = SOURCES) -> str:
    """The hex digest of the sources' bytes and the versions that shape the compiled code.

    Parameters
    ----------
    root : Path
        The package directory the ``sources`` are relative to.
    sources : tuple of str
        The files, relative to ``root``.

    Returns
    -------
    str
        SHA-256 over the numba, numpy and Python versions and every file's name and bytes.

    Examples
    --------
    >>> len(digest())
    64
    """
    try:
        import numba           # imported already where the kernels are
        numba_version = numba.__version__
    except ImportError:        # no kernels to load; the digest still names the sources
        numba_version = None
    import numpy
    h = hashlib.sha256(f"numba {numba_version} numpy {numpy.__version__} {sys.version}".encode())
    for name in sources:
        data = (root / name).read_bytes()
        h.update(f"\0{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _probe() -> None:
    """A stand-in function for numba's locators, which only read its first line number."""


def cache_dirs(root: Path = _ROOT, modules: tuple[str, ...] = KERNEL_MODULES) -> dict[Path, list[str]]:
    """Where numba caches each source directory's kernels, with those kernel modules' names.

    Parameters
    ----------
    root : Path
        The package directory.
    modules : tuple of str
        The kernel modules, relative to ``root``.

    Returns
    -------
    dict
        Cache directory -> the names (file stems) of the kernel modules cached in it, found with
        numba's own locators in numba's order (``NUMBA_CACHE_DIR``, the module's
        ``__pycache__`` when writable, the user-wide cache directory).
    """
    try:
        from numba.core.caching import CacheImpl
        locator_classes = CacheImpl._locator_classes
    except (ImportError, AttributeError):     # a numba that moved them: unguarded, as before
        return {}
    by_source: dict[Path, list[str]] = {}
    for name in modules:
        by_source.setdefault((root / name).parent, []).append(Path(name).stem)
    by_dir: dict[Path, list[str]] = {}
    for source, stems in by_source.items():
        # numba's locators place a file by its directory alone: one probe per directory
        path = str(source / f"{stems[0]}.py")
        for locator_class in locator_classes:
            locator = locator_class.from_function(_probe, path)
            if locator is not None:
                by_dir.setdefault(Path(locator.get_cache_path()), []).extend(stems)
                break
    return by_dir


def _is_cache_file(file: str, stems: list[str]) -> bool:
    """Whether ``file`` is numba's index or data file for a kernel of one of the modules."""
    return file.endswith((".nbi", ".nbc")) and file.split(".", 1)[0] in stems


def clear_stale(root: Path = _ROOT, sources: tuple[str, ...] = SOURCES,
                modules: tuple[str, ...] = KERNEL_MODULES) -> list[Path]:
    """Remove the kernels' cache files where they may have been compiled from other sources.

    Runs once per process for the package (later calls return at once); a call with another
    ``root`` (the tests' copies) always runs.

    Parameters
    ----------
    root : Path
        The package directory.
    sources : tuple of str
        The files whose digest the stamp holds (:data:`SOURCES`).
    modules : tuple of str
        The modules whose cache files may be removed (:data:`KERNEL_MODULES`).

    Returns
    -------
    list of Path
        The files removed (none when every stamp matched).

    Examples
    --------
    >>> clear_stale()  # doctest: +SKIP
    []
    """
    global _checked
    if root == _ROOT:
        if _checked:
            return []
        _checked = True
    want = digest(root, sources)
    removed: list[Path] = []
    for directory, stems in cache_dirs(root, modules).items():
        stamp = directory / STAMP
        try:
            if stamp.read_text() == want:
                continue
        except OSError:           # no stamp yet: caches of unknown sources
            pass
        try:
            for entry in os.scandir(directory):
                if entry.is_file(follow_symlinks=False) and _is_cache_file(entry.name, stems):
                    try:
                        os.remove(entry.path)
                        removed.append(Path(entry.path))
                    except FileNotFoundError:     # another process cleared it first
                        pass
            temporary = directory / f"{STAMP}.{os.getpid()}"
            temporary.write_text(want)
            os.replace(temporary, stamp)      # atomic: a concurrent reader sees old or new
        except OSError:           # another process removed it first, or the directory is read-only
            pass
    return removed
