"""Files, matplotlib and the styles shared by every figure of ``--plot``.

matplotlib is imported only when a figure is drawn; without it :func:`check_plot_path` still works
and drawing raises a :class:`~universal.errors.UserError` saying how to install it.
"""

from __future__ import annotations

from pathlib import Path

from universal.datafiles import write_atomically
from universal.errors import UserError

#: File suffixes understood by ``--plot`` and the matplotlib format each one is written in.
PLOT_FORMATS = {".png": "png", ".svg": "svg"}

_DPI = 150
_MEASURED_COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:pink",
                    "tab:cyan", "tab:olive", "tab:brown", "tab:gray"]
_BOUND_COLORS = ["black", "dimgray", "saddlebrown", "darkolivegreen", "darkslateblue", "darkred",
                 "teal", "darkgoldenrod"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


# --------------------------------------------------------------------------- files and matplotlib
def _matplotlib():
    """(Figure, FigureCanvasAgg), imported on first use; a UserError when matplotlib is missing."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        from universal.extras import install_hint
        raise UserError(f"plots need matplotlib, which is not installed: {install_hint('plot')}") from None
    return Figure, FigureCanvasAgg


def check_plot_path(path: str | Path) -> Path:
    """The plot file ``path`` as a Path, checked before any work: a ``.png`` or ``.svg`` suffix and
    an existing folder.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    Path

    Raises
    ------
    UserError
        Another suffix, a missing folder, or a folder given as the file.

    Examples
    --------
    >>> check_plot_path("scaling.svg").name
    'scaling.svg'
    >>> check_plot_path("scaling.pdf")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: cannot plot to 'scaling.pdf': the file name must end in .png or .svg
    """
    path = Path(path).expanduser()
    if path.suffix.lower() not in PLOT_FORMATS:
        raise UserError(f"cannot plot to {str(path)!r}: the file name must end in .png or .svg")
    if path.is_dir():
        raise UserError(f"cannot plot to {str(path)!r}: it is a folder")
    if not path.parent.is_dir():
        raise UserError(f"cannot plot to {str(path)!r}: folder {str(path.parent)!r} does not exist")
    return path


def _new_figure(width: float, height: float):
    Figure, FigureCanvasAgg = _matplotlib()
    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` atomically (:func:`universal.output_files.write_atomically`)."""
    path = check_plot_path(path)
    fmt = PLOT_FORMATS[path.suffix.lower()]
    return write_atomically(path, lambda handle: fig.savefig(
        handle, format=fmt, dpi=_DPI, metadata={"Date": None} if fmt == "svg" else None))




def sibling(path: Path, tag: str) -> Path:
    """``dir/name.TAG.suffix`` next to ``path`` (a second figure of the same command).

    Examples
    --------
    >>> sibling(Path("out/loads.png"), "histogram").as_posix()
    'out/loads.histogram.png'
    """
    return path.with_name(f"{path.stem}.{tag}{path.suffix}")
