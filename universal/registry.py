"""Name-to-factory tables (BookSim style): every network, problem, path system and
protocol is registered under its public name, so adding one is a single new entry.

Names are the public contract of SPEC §8: lower case with hyphens, parameters after a
colon as ``key=value`` pairs separated by commas (``torus:k=8,n=2``). A few kinds take one
bare argument instead (``edgelist:PATH``); their factories receive it as ``arg``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Generic, Iterable, Iterator, TypeVar

from universal.errors import UserError

T = TypeVar("T")


@dataclass(frozen=True)
class Spec:
    """A parsed name such as ``butterfly:d=8`` or ``edgelist:net.txt``.

    Attributes
    ----------
    name : str
        The registered name with underscores normalised to hyphens.
    params : dict[str, str]
        ``key=value`` parameters, values still as strings.
    arg : str or None
        A bare argument after the colon (``edgelist:PATH``), if any.
    text : str
        The original text, for messages.
    """

    name: str
    params: dict[str, str] = field(default_factory=dict)
    arg: str | None = None
    text: str = ""


def parse_spec(text: str) -> Spec:
    """Parse ``name[:key=value,...]`` or ``name:ARG``.

    Parameters
    ----------
    text : str
        The user's text.

    Returns
    -------
    Spec

    Examples
    --------
    >>> parse_spec("torus:k=8,n=2").params
    {'k': '8', 'n': '2'}
    >>> parse_spec("edgelist:nets/a.txt").arg
    'nets/a.txt'
    >>> parse_spec("torus:k=8,k=9,n=2")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: parameter 'k' given twice in 'torus:k=8,k=9,n=2'
    """
    text = text.strip()
    if not text:
        raise UserError("empty name")
    name, _, rest = text.partition(":")
    name = name.strip().lower().replace("_", "-")
    params: dict[str, str] = {}
    arg = None
    rest = rest.strip()
    if rest:
        items = [item.strip() for item in rest.split(",")]
        if "=" not in rest:
            arg = rest
        elif "=" in items[0]:
            key = ""
            for item in items:
                if "=" not in item and item[:1].isdigit():
                    # A comma inside a value, as in a torus label: broadcast:source=3,4
                    params[key] += "," + item
                    continue
                if "=" not in item:
                    raise UserError(f"malformed parameter {item!r} in {text!r} (expected key=value)")
                key, _, value = item.partition("=")
                key = key.strip().lower().replace("_", "-")
                if not key or not value.strip():
                    raise UserError(f"malformed parameter {item!r} in {text!r} (expected key=value)")
                if key in params:
                    raise UserError(f"parameter {key!r} given twice in {text!r}")
                params[key] = value.strip()
        else:
            raise UserError(f"malformed parameters in {text!r} (expected key=value pairs separated by commas)")
    return Spec(name=name, params=params, arg=arg, text=text)


@dataclass
class Entry(Generic[T]):
    """One registered name: its factory and a one-line description."""

    name: str
    factory: Callable[..., T]
    summary: str


class Registry(Generic[T]):
    """A table of named factories of one kind (networks, problems, ...).

    Examples
    --------
    >>> shapes = Registry("shape")
    >>> @shapes.register("square", "a square")
    ... def square(side: int = 1):
    ...     return side * side
    >>> shapes.entry("square").factory(side=3)
    9
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def register(self, name: str, summary: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator that files ``factory`` under ``name``."""

        def decorate(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            self._entries[name] = Entry(name, factory, summary)
            return factory

        return decorate

    def entry(self, name: str) -> Entry[T]:
        """The entry for ``name`` (underscores accepted), or a :class:`UserError` listing the known names."""
        key = name.lower().replace("_", "-")
        if key not in self._entries:
            known = ", ".join(sorted(self._entries))
            raise UserError(f"unknown {self.kind} {name!r} (known: {known})")
        return self._entries[key]

    def names(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower().replace("_", "-") in self._entries

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(self._entries.values())


#: Patterns known under two names: the survey's (``permutation:bit-reversal``) and the short ones
#: of Towles, Dally & Boyd's traffic tables (``bitrev``). Both are accepted wherever either is.
SAME_PATTERN = (("bit-complement", "bitcomp"), ("bit-reversal", "bitrev"))


def pattern_name(name: str, known: Iterable[str]) -> str:
    """``name``, or its other spelling (see :data:`SAME_PATTERN`) if only that one is in ``known``.

    Parameters
    ----------
    name : str
        A pattern name as the user wrote it (lower case, hyphens).
    known : iterable of str
        The names a table registers.

    Returns
    -------
    str

    Examples
    --------
    >>> pattern_name("bitcomp", ["bit-complement", "transpose"])
    'bit-complement'
    >>> pattern_name("bit-reversal", ["bitrev"]), pattern_name("tornado", ["bitrev"])
    ('bitrev', 'tornado')
    """
    known = set(known)
    if name in known:
        return name
    for pair in SAME_PATTERN:
        if name in pair:
            other = pair[1 - pair.index(name)]
            if other in known:
                return other
    return name


#: Largest integer parameter any name takes unless it says otherwise: beyond it the numpy
#: arithmetic behind every parameter would overflow 64 bits.
MAX_PARAM_INT = 2**62


def take_int(spec: Spec, key: str, *, default: int | None = None, low: int | None = None,
             high: int | None = None) -> int:
    """Pop integer parameter ``key`` from ``spec.params`` with range checks (UserError on bad values).

    Without ``high``, values above :data:`MAX_PARAM_INT` are refused.

    Examples
    --------
    >>> take_int(parse_spec("hotspot:factor=7"), "factor", low=1)
    7
    """
    raw = spec.params.get(key)
    high = MAX_PARAM_INT if high is None else high
    if raw is None:
        if default is None:
            raise UserError(f"{spec.text!r} needs parameter {key}=...")
        value = default
    else:
        if len(raw.strip().lstrip("+-")) > 40:
            raise UserError(f"parameter {key}={raw[:20]}... in {spec.text[:40]!r}... is far too large")
        try:
            value = int(raw)
        except ValueError:
            raise UserError(f"parameter {key}={raw!r} in {spec.text!r} is not an integer") from None
    if low is not None and value < low:
        raise UserError(f"parameter {key}={value} in {spec.text!r} is out of range (must be >= {low})")
    if high is not None and value > high:
        raise UserError(f"parameter {key}={value} in {spec.text!r} is out of range (must be <= {high})")
    return value


def check_known_params(spec: Spec, allowed: set[str]) -> None:
    """Reject parameters that the named thing does not take."""
    unknown = sorted(set(spec.params) - allowed)
    if unknown:
        want = ", ".join(sorted(allowed)) or "none"
        raise UserError(f"unknown parameter {unknown[0]!r} in {spec.text!r} (takes: {want})")


def named_files(texts: Iterable[object], base_dir: Path | None = None) -> list[Path]:
    """The existing files that names such as ``edgelist:FILE``, ``permutation:file=PATH`` or
    ``paths:FILE`` point to: what a run reads, so that no output of the same run replaces it.

    A relative name resolves against ``base_dir`` (a scenario file's folder) when given, else the
    current folder; names that are not files (``torus:k=8,n=2``, ``permutation:random``) are
    skipped, and so are texts that do not parse (they are reported when the run checks them).

    Parameters
    ----------
    texts : iterable
        Names as the user wrote them (strings; anything else is skipped).
    base_dir : Path, optional

    Returns
    -------
    list of Path

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "g.edges").write_text("0 1\\n")
    >>> [p.name for p in named_files(["edgelist:g.edges", "torus:k=4,n=2", "shortest"], folder)]
    ['g.edges']
    """
    found = []
    for text in texts:
        if not isinstance(text, str):
            continue
        try:
            spec = parse_spec(text)
        except UserError:
            continue
        for name in (spec.arg, spec.params.get("file")):
            if not name:
                continue
            path = Path(name).expanduser()
            if not path.is_absolute() and base_dir is not None:
                path = Path(base_dir) / path
            try:
                if path.is_file():
                    found.append(path)
            except OSError:
                pass  # too long a name, a folder we may not enter: the run says so when it reads it
    return found


def with_file_resolved(text: str, base_dir: Path | None) -> str:
    """``text`` with a relative ``file=`` parameter (``lp:file=opt.routing``,
    ``permutation:file=p.txt``) joined to ``base_dir`` (a scenario file's folder); unchanged
    without ``base_dir``, for an absolute file, or when there is no ``file=``.

    Parameters
    ----------
    text : str
        A name as the user wrote it.
    base_dir : Path, optional

    Returns
    -------
    str

    Examples
    --------
    >>> with_file_resolved("lp:file=opt.routing", Path("studies"))
    'lp:file=studies/opt.routing'
    >>> with_file_resolved("lp:file=/data/opt.routing", Path("studies")), with_file_resolved("dor", Path("x"))
    ('lp:file=/data/opt.routing', 'dor')
    """
    if base_dir is None:
        return text
    try:
        name = parse_spec(text).params.get("file")
    except UserError:
        return text  # reported where the name is used
    if not name or Path(name).expanduser().is_absolute():
        return text
    return text.replace(f"file={name}", f"file={Path(base_dir) / name}", 1)

