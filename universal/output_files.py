"""Writing the files a run outputs (results, plots, link loads, routing files) so that no reader
sees one half-written and nothing that must not be replaced is: atomic replacement through a
temporary file, FIFOs and character devices written as streams, the checks made before any work
(:func:`check_writable`), and the run's own inputs, which no output may replace (:func:`protect_inputs`).

:mod:`universal.datafiles` imports the public names back under the same names.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, Iterable

from universal.errors import UserError
from universal.interrupts import deferred


def write_atomically(path: str | Path, content: str | bytes | Callable[[BinaryIO], None]) -> Path:
    """Write a file so that no reader ever sees it half-written, and never replace what is not a file.

    A regular file (or a new name) gets the content through a temporary file in the same folder,
    which then replaces it (``os.replace`` is atomic on POSIX and Windows) with the mode a new file
    would get; on any failure, Ctrl-C included, the temporary file is removed and ``path`` is left
    as it was. A symbolic link is followed: its target is written that way (the temporary file in
    the target's folder) and the link stays a link. A FIFO or a character device (``/dev/null``,
    ``/dev/stdout``) is written directly, as a stream, and stays what it was (a FIFO only while
    a process reads it: one without a reader is refused, never waited on); any other kind of
    entry (a folder, a socket, a block device) is refused.

    Parameters
    ----------
    path : str or Path
    content : str, bytes or callable
        The text (written as UTF-8), the bytes, or a function that writes to the binary file
        handle it is given (e.g. ``lambda f: figure.savefig(f, format="png")``).

    Returns
    -------
    Path
        The file written (the path given, also when it is a link).

    Raises
    ------
    UserError
        If the folder cannot be written or ``path`` is not something a file can be written to.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_atomically(folder / "a.txt", "hello\\n").read_text()
    'hello\\n'
    >>> (folder / "link.txt").symlink_to(folder / "a.txt")
    >>> _ = write_atomically(folder / "link.txt", "through the link\\n")
    >>> (folder / "link.txt").is_symlink(), (folder / "a.txt").read_text()
    (True, 'through the link\\n')
    >>> sorted(p.name for p in folder.iterdir())
    ['a.txt', 'link.txt']
    """
    path = Path(path).expanduser()
    _refuse_inputs(path, "")
    target = Path(os.path.realpath(path))  # a link's target; the path itself otherwise
    kind = output_kind(path)
    if kind == "stream":
        return _write_stream(path, content)
    if kind != "file":
        raise UserError(f"cannot write {str(path)!r}: {kind}")
    try:
        with deferred():  # a Ctrl-C between creating the temporary file and the cleanup below would leak it
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise UserError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            _put(handle, content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _mode_for(target))  # mkstemp makes the file private; give it the usual mode
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _put(handle: BinaryIO, content: str | bytes | Callable[[BinaryIO], None]) -> None:
    if callable(content):
        content(handle)
    else:
        handle.write(content.encode() if isinstance(content, str) else content)


def _write_stream(path: Path, content: str | bytes | Callable[[BinaryIO], None]) -> Path:
    """Write to a FIFO or character device as it is: opened for writing, never created or replaced.
    A FIFO is written through the descriptor :func:`check_writable` opened, or opened now; either
    way only if a process reads it (:func:`_open_fifo`)."""
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):
            fd = _STREAMS.pop(os.path.realpath(path), None)
            fd = _open_fifo(path, "") if fd is None else fd
            os.set_blocking(fd, True)  # opened without blocking; the reader sets the pace from here on
        else:
            fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "wb") as handle:
            _put(handle, content)
    except BrokenPipeError:
        pass  # the reader of the FIFO went away: like a closed pipe on standard output, not an error
    except OSError as exc:
        raise UserError(f"cannot write {str(path)!r}: {exc.strerror}") from None
    return path


#: FIFOs that :func:`check_writable` opened for writing (a reader was there), by real path, until
#: :func:`write_atomically` writes them or :func:`release_streams` closes them.
_STREAMS: dict[str, int] = {}


def _open_fifo(path: Path, what: str) -> int:
    """A descriptor writing to the FIFO ``path``, opened without blocking: a FIFO that no process
    reads is refused at once, where a plain ``open`` would wait for a reader forever."""
    key = os.path.realpath(path)
    if key in _STREAMS:
        return _STREAMS[key]
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        reason = ("no process is reading it (start the reader first, e.g. cat FIFO &)"
                  if exc.errno == errno.ENXIO else exc.strerror)
        raise UserError(f"cannot write {what}{str(path)!r}: {reason}") from None
    return fd


def release_streams() -> None:
    """Close the FIFOs :func:`check_writable` opened and nothing wrote (the run ended early): their
    readers see the end of the stream.

    Examples
    --------
    >>> release_streams()
    """
    while _STREAMS:
        _, fd = _STREAMS.popitem()
        try:
            os.close(fd)
        except OSError:
            pass


def output_kind(path: str | Path) -> str:
    """How :func:`write_atomically` would treat ``path``: ``"file"`` (a regular file, a new name, or
    a link to either: replaced atomically), ``"stream"`` (a FIFO or character device: written
    directly), or the reason it refuses (a folder, a socket, a block device, a missing folder,
    a name too long, a folder it may not enter).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    str

    Examples
    --------
    >>> output_kind("/dev/null"), output_kind("/"), output_kind("/no/such/folder/x.txt")
    ('stream', 'it is a folder', "folder '/no/such/folder' does not exist")
    """
    path = Path(path).expanduser()
    try:
        mode = os.stat(path).st_mode  # follows links: the target decides
    except FileNotFoundError:
        return _new_name_kind(path)
    except OSError as exc:
        return _reason(exc)
    if stat.S_ISREG(mode):
        folder = Path(os.path.realpath(path)).parent  # the temporary file goes next to the target
        return "file" if os.access(folder, os.W_OK | os.X_OK) else f"folder {str(folder)!r} is not writable"
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return "stream"
    if stat.S_ISDIR(mode):
        return "it is a folder"
    return "it is not a regular file, a FIFO or a character device"


def _new_name_kind(path: Path) -> str:
    """A name that does not exist yet (or a dangling link): its folder must exist."""
    target = Path(os.path.realpath(path))
    if len(os.fsencode(target.name)) > _name_max(target.parent):
        return f"the file name is longer than the file system allows ({_name_max(target.parent)} bytes)"
    try:
        if not stat.S_ISDIR(os.stat(target.parent).st_mode):
            return f"{str(target.parent)!r} is not a folder"
    except FileNotFoundError:
        return f"folder {str(target.parent)!r} does not exist"
    except OSError as exc:
        return _reason(exc)
    if not os.access(target.parent, os.W_OK | os.X_OK):
        return f"folder {str(target.parent)!r} is not writable"
    return "file"


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return "the name is longer than the file system allows"
    return (exc.strerror or str(exc)).lower() if exc.errno != errno.EACCES else "permission denied"


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two names are one file once links are resolved (a hard link counts too).

    Examples
    --------
    >>> same_file("/tmp/../tmp/x", "/tmp/x")
    True
    """
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def check_writable(path: str | Path, what: str, inputs: Iterable[str | Path] = (), streams: bool = True) -> Path:
    """Check, before any work, that ``what`` could be written at ``path`` without replacing what
    it must not: refuse an input of the run and anything :func:`output_kind` refuses.

    For a regular file or a new name, a probe file is created in the folder that will receive the
    temporary file (the link target's folder for a link) and removed at once: the only test that
    also holds for read-only mounts and for the superuser, whom permission bits do not stop. A
    FIFO or character device needs no probe: it is written in place. A FIFO is opened for
    writing here, without blocking, and kept open until it is written: one that no process reads
    is refused now rather than waited on after the work.

    Parameters
    ----------
    path : str or Path
    what : str
        What will be written, for the error message (``"plot"``, ``"results file"``).
    inputs : iterable of str or Path
        Files the run reads, besides those declared with :func:`protect_inputs`.
    streams : bool
        Whether a FIFO or character device will do (False for a file that is read back later,
        such as a results file).

    Returns
    -------
    Path
        ``path`` with ``~`` expanded.

    Raises
    ------
    UserError
        If ``path`` is empty, an input of the run (after resolving links), a folder, a socket, a
        block device, a FIFO that no process reads, too long a name, or its folder is missing or
        cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> check_writable(Path(tempfile.mkdtemp()) / "loads.txt", "links file").name
    'loads.txt'
    >>> check_writable("/dev/null", "plot").name
    'null'
    >>> check_writable("", "plot")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: the plot file name is empty
    >>> check_writable("/etc/hostname", "plot", ["/etc/hostname"])
    Traceback (most recent call last):
    ...
    universal.errors.UserError: cannot write plot '/etc/hostname': it is an input of this run
    """
    if not str(path).strip():
        raise UserError(f"the {what} file name is empty")
    path = Path(path).expanduser()
    _refuse_inputs(path, f"{what} ", inputs)
    kind = output_kind(path)
    if kind == "stream":
        if not streams:
            raise UserError(f"{what} {str(path)!r} must be a regular file, not a FIFO or device")
        if stat.S_ISFIFO(os.stat(path).st_mode):  # held open until written, so its reader waits for us
            _STREAMS[os.path.realpath(path)] = _open_fifo(path, f"{what} ")
        return path
    if kind != "file":
        raise UserError(f"cannot write {what} {str(path)!r}: {kind}")
    folder = Path(os.path.realpath(path)).parent
    try:
        with deferred():  # never interrupted half-way: the probe file goes again at once
            fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".probe")
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise UserError(f"cannot write {what} {str(path)!r}: {exc.strerror}") from None
    return path


#: Files the current run reads (see :func:`protect_inputs`): no output of the run may replace them.
_PROTECTED: list[Path] = []


def protect_inputs(paths: Iterable[str | Path]) -> None:
    """Declare ``paths`` inputs of the current run: :func:`write_atomically` and :func:`check_writable`
    refuse to write over them (compared after resolving links) until :func:`forget_inputs`.

    Examples
    --------
    >>> protect_inputs(["/etc/hostname"])
    >>> write_atomically("/etc/hostname", "x")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: cannot write '/etc/hostname': it is an input of this run
    >>> forget_inputs()
    """
    _PROTECTED.extend(Path(p) for p in paths)


def forget_inputs() -> None:
    """End the current run's protection (:func:`protect_inputs`)."""
    _PROTECTED.clear()


def _refuse_inputs(path: Path, what: str, inputs: Iterable[str | Path] = ()) -> None:
    for source in [*inputs, *_PROTECTED]:
        if same_file(path, source):
            raise UserError(f"cannot write {what}{str(path)!r}: it is an input of this run")


def _mode_for(path: Path) -> int:
    """The mode a new file would get from the umask, or the mode ``path`` already has."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask
