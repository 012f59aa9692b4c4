"""The saved-routing file of ``universal design --save`` and ``lp:file=PATH``.

A JSON object (UTF-8)::

    {
      "format": "universal-routing", "version": 1,
      "network": "torus:k=8,n=2",
      "denominator": 1099511627776,
      "flows": {"1,0": {"0,0->1,0": 1099511627776}, "2,0": {...}, ...},
      "paths": {"1,0": [[1099511627776, [[0, 1]]]], "2,2": [[W, [[0, 3], [1, 2], [0, -1]]], ...], ...},
      "meta": {"objective": "worst-case", "paths": "all", "throughput_worst": 0.5, ...}
    }

``flows[t][c]`` is the flow of one packet from node 0 to offset ``t`` (a node label) over
channel ``c`` (``"tail->head"`` by node labels), as a non-negative integer numerator over
``denominator``: the routing is exact, with no tolerance. Channels and offsets left out carry no
flow; offset ``0,...,0`` may be left out. On reading, every number is checked: the torus size,
node and channel labels, non-negativity, at most one unit on a channel, conservation at every
node (exactly, in integers) and the absence of cycles. ``meta`` is informational only (what
produced the routing); nothing computed from the file trusts it.

``paths`` is present when the routing was designed over a path family (``--paths 2turn``): for
every offset its routes as ``[weight, legs]``, legs ``[dim, signed steps]`` from node 0, weights
summing to ``denominator``. Then the routes are exactly these (loads, locality and the engine's
draws), ``flows`` must be their channel flows, and each route must not revisit a node; without
``paths`` the flows are decomposed into routes and must be acyclic.

The routing is relative (SPEC §10): a packet from ``s`` to ``s + t`` uses the flow of ``t``
translated by ``s``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from universal.datafiles import load_json, output_kind, write_atomically
from universal.errors import UserError
from universal.registry import Spec, check_known_params, parse_spec

from .algorithms import ROUTING_FACTORIES
from .designed import FlowRouting, family_of_legs
from .geometry import Torus

__all__ = ["FORMAT", "read_routing", "write_routing", "check_replaceable", "routing_to_json", "routing_from_json"]

FORMAT = "universal-routing"
VERSION = 1


def routing_to_json(routing: FlowRouting) -> dict:
    """The JSON object of a flow routing (see the module docstring)."""
    t = routing.torus
    flows = {}
    for off in range(t.N):
        nz = np.flatnonzero(routing.num[off])
        if len(nz):
            flows[t.label(off)] = {t.channel_label(int(c)): int(routing.num[off, c]) for c in nz}
    out = {"format": FORMAT, "version": VERSION, "network": t.name, "name": routing.name,
           "denominator": routing.den, "flows": flows}
    if routing.paths is not None:
        out["paths"] = {t.label(off): [[int(w), [[int(d), int(s)] for d, s in zip(dims, steps) if s]]
                                       for dims, steps, w in zip(fam.dims, fam.steps, fam.weights)]
                        for off, fam in sorted(routing.paths.items()) if off != 0}
    out["meta"] = routing.meta
    return out


def write_routing(path: str | Path, routing: FlowRouting) -> Path:
    """Save ``routing`` atomically as JSON (a half-written file is never left behind).

    Examples
    --------
    >>> import tempfile
    >>> from universal.paths.torus.designed import FlowRouting
    >>> t = Torus(3, 1)
    >>> r = FlowRouting(t, np.array([[0] * 6, [1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0]]), 1, "near")
    >>> p = write_routing(Path(tempfile.mkdtemp()) / "near.routing", r)
    >>> read_routing(p).num.tolist() == r.num.tolist()
    True
    """
    import json     # saving only (reading goes through universal.datafiles): kept off start-up

    path = Path(path).expanduser()
    check_replaceable(path)
    return write_atomically(path, json.dumps(routing_to_json(routing), indent=1) + "\n")


def check_replaceable(path: str | Path) -> None:
    """UserError unless ``path`` can take a saved routing: a new file, or an old saved routing.

    Any other existing file is not this tool's to replace.
    """
    path = Path(path).expanduser()
    kind = output_kind(path)
    if kind == "stream":
        return  # a FIFO or device: written as a stream, never read (a FIFO would block the read)
    if kind != "file":
        raise UserError(f"cannot write {str(path)!r}: {kind}")
    if path.exists():
        try:
            ours = load_json(path.read_text(encoding="utf-8"), str(path)).get("format") == FORMAT
        except (OSError, ValueError, AttributeError):  # UnicodeDecodeError and UserError are ValueErrors
            ours = False
        if not ours:
            raise UserError(f"{str(path)!r} exists and is not a saved routing: not replacing it")


def _torus_of(text) -> Torus:
    if not isinstance(text, str):
        raise UserError("'network' must be a name like torus:k=8,n=2")
    spec = parse_spec(text)
    if spec.name != "torus" or set(spec.params) != {"k", "n"}:
        raise UserError(f"network {text!r}: a saved routing is defined on a torus:k=K,n=N")
    try:
        return Torus(int(spec.params["k"]), int(spec.params["n"]))
    except ValueError:
        raise UserError(f"network {text!r}: k and n must be integers") from None


def _channel_of(torus: Torus, label: str) -> int:
    tail_text, sep, head_text = str(label).partition("->")
    if not sep:
        raise UserError(f"channel {label!r} is not of the form tail->head")
    tail, head = torus.parse_node(tail_text), torus.parse_node(head_text)
    diff = (torus.coords[head] - torus.coords[tail]) % torus.k
    moved = np.flatnonzero(diff)
    if len(moved) != 1 or diff[moved[0]] not in (1, torus.k - 1):
        raise UserError(f"{label!r} is not a channel of {torus.name}")
    dim = int(moved[0])
    return int(torus.channel(tail, dim, 1 if diff[dim] == 1 else -1))


def routing_from_json(data, name: str) -> FlowRouting:
    """Validate a parsed routing file and build its :class:`FlowRouting` (UserError if broken)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"not a saved routing (expected \"format\": \"{FORMAT}\")")
    if data.get("version") != VERSION:
        raise UserError(f"unsupported routing file version {data.get('version')!r} (this reads {VERSION})")
    torus = _torus_of(data.get("network"))
    den = data.get("denominator")
    if not isinstance(den, int) or isinstance(den, bool) or den < 1:
        raise UserError(f"'denominator' must be a positive integer (got {str(den)[:40]})")
    if den > 2 ** 62:
        raise UserError("'denominator' is too large (at most 2**62)")
    flows = data.get("flows")
    if not isinstance(flows, dict):
        raise UserError("'flows' must map offsets to {channel: numerator}")
    num = np.zeros((torus.N, torus.num_channels), dtype=np.int64)
    for off_label, per_channel in flows.items():
        off = torus.parse_node(off_label)
        if not isinstance(per_channel, dict):
            raise UserError(f"flows of offset {off_label!r} must map channels to numerators")
        for ch_label, value in per_channel.items():
            if not isinstance(value, int) or isinstance(value, bool):
                raise UserError(f"flow of offset {off_label!r} on {ch_label!r} must be an integer numerator (got {value!r})")
            if abs(value) > 2 ** 62:
                raise UserError(f"flow of offset {off_label!r} on {ch_label!r} is too large")
            num[off, _channel_of(torus, ch_label)] = value
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    paths = _paths_of(torus, data["paths"], den) if "paths" in data else None
    return FlowRouting(torus, num, den, name, meta=meta, paths=paths)


#: Most routes a saved routing may list (all offsets together).
MAX_SAVED_PATHS = 1_000_000


def _integer(value, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise UserError(f"{what} must be an integer (got {value!r})")
    if abs(value) > 2 ** 62:
        raise UserError(f"{what} is too large")
    return value


def _paths_of(torus: Torus, data, den: int) -> dict:
    """The ``paths`` entry as per-offset path families (UserError if malformed)."""
    if not isinstance(data, dict):
        raise UserError("'paths' must map offsets to lists of [weight, legs]")
    if sum(len(v) for v in data.values() if isinstance(v, list)) > MAX_SAVED_PATHS:
        raise UserError(f"'paths' lists more than {MAX_SAVED_PATHS:,} routes")
    out = {0: family_of_legs([[]], [den])}          # offset 0: the empty route
    for off_label, routes in data.items():
        off = torus.parse_node(off_label)
        if off == 0:
            continue
        if not isinstance(routes, list) or not routes:
            raise UserError(f"paths of offset {off_label!r} must be a non-empty list of [weight, legs]")
        weights, legs = [], []
        for route in routes:
            if not (isinstance(route, list) and len(route) == 2 and isinstance(route[1], list)):
                raise UserError(f"a path of offset {off_label!r} is not [weight, [[dim, steps], ...]]")
            weights.append(_integer(route[0], f"a path weight of offset {off_label!r}"))
            leg_list = []
            for leg in route[1]:
                if not (isinstance(leg, list) and len(leg) == 2):
                    raise UserError(f"a leg of a path of offset {off_label!r} is not [dim, steps]")
                leg_list.append((_integer(leg[0], "a leg's dimension"), _integer(leg[1], "a leg's steps")))
            if len(leg_list) > torus.N:
                raise UserError(f"a path of offset {off_label!r} has more legs than {torus.name} has nodes")
            legs.append(leg_list)
        out[off] = family_of_legs(legs, weights)
    return out


def read_routing(path: str | Path, name: str | None = None) -> FlowRouting:
    """Read and validate a saved routing; any defect is one UserError naming the file.

    Parameters
    ----------
    path : str or Path
    name : str, optional
        Name the routing goes by in tables (default ``lp:file=PATH``).

    Returns
    -------
    FlowRouting
    """
    path = Path(path).expanduser()
    label = name or f"lp:file={path}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read routing file {str(path)!r}: {exc.strerror if isinstance(exc, OSError) else exc}") from None
    data = load_json(text, f"routing file {str(path)!r}")
    try:
        return routing_from_json(data, label)
    except UserError as exc:
        raise UserError(f"routing file {str(path)!r}: {exc}") from None


def _lp_file(spec: Spec) -> FlowRouting:
    check_known_params(spec, {"file"})
    file = spec.params.get("file") or spec.arg
    if not file:
        raise UserError(f"{spec.text!r}: give the saved routing as lp:file=PATH")
    return read_routing(file, name=spec.text)


ROUTING_FACTORIES["lp"] = ("a saved designed routing: lp:file=PATH (see universal design --save)", _lp_file)
