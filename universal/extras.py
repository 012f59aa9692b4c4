"""Optional dependencies (the extras of ``pyproject.toml``): whether one is there, and how to get it.

OR-Tools (``opt``: the offline optimum), matplotlib (``plot``) and Dask (``distributed``) are
imported only by the commands that use them. A command that needs a missing one is refused with
one line before any work or file, and the line says what installs it *from where the user is*:
in a checkout of the project (the folder holding ``pyproject.toml``), the project's extra
(``pip install '.[opt]'`` there, or with the checkout's path from elsewhere); in any other
installed copy, the package itself as the extra names it (``pip install 'ortools>=9.8'``), since
the project is not published on a package index under its name.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from universal.errors import UserError

__all__ = ["EXTRAS", "missing", "install_hint", "require"]

#: Extra -> (module to import, distribution name, what it is, the requirement pyproject gives).
EXTRAS = {
    "opt": ("ortools", "OR-Tools", "ortools>=9.8"),
    "plot": ("matplotlib", "matplotlib", "matplotlib>=3.8"),
    "distributed": ("distributed", "Dask distributed", "dask[distributed]>=2024.1"),
}


def missing(extra: str) -> bool:
    """Whether the module of ``extra`` cannot be imported (without importing it).

    Examples
    --------
    >>> missing("plot") in (True, False)
    True
    """
    module = EXTRAS[extra][0]
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def _checkout() -> Path | None:
    """The project's checkout this copy runs from (its ``pyproject.toml`` names the project), or None."""
    root = Path(__file__).resolve().parents[1]
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return root if 'name = "universal"' in text else None


def install_hint(extra: str, cwd: Path | None = None) -> str:
    """The command that installs ``extra`` from here.

    Examples
    --------
    >>> install_hint("opt").startswith("pip install '")
    True
    """
    root = _checkout()
    if root is None:
        return f"pip install '{EXTRAS[extra][2]}'"
    here = (cwd or Path.cwd()).resolve()
    where = "." if here == root else str(root)
    return f"pip install '{where}[{extra}]'"


def require(extra: str, what: str) -> None:
    """Refuse ``what`` with one UserError when the module of ``extra`` is missing.

    Parameters
    ----------
    extra : str
        ``opt``, ``plot`` or ``distributed`` (:data:`EXTRAS`).
    what : str
        What needs it, for the message (``"--opt"``, ``"plots"``).

    Examples
    --------
    >>> require("opt", "the offline optimum") if not missing("opt") else None
    """
    if missing(extra):
        _, name, _ = EXTRAS[extra]
        raise UserError(f"{what} needs {name}, which is not installed: {install_hint(extra)}")
