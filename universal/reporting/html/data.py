"""What the HTML view of one run holds: the network's picture, every packet's hops with their
steps, the curves and the table row, as one JSON-ready dict (:func:`batch_view`,
:func:`openloop_view`).

Per packet the view keeps its hops in order, each a link and the step in which it was crossed
(-1: not crossed); everything the page shows (where every packet is after each step, which
link it waits for, each link's queue over time, the delivery curve) is computed from these in
the browser. For the bufferless protocols a packet's hops are its crossings, attempts one after
the other (a discarded attempt appears up to its last crossing, as the engine records it).

Sizes are checked before anything is gathered: at most :data:`MAX_NODES` nodes and
:data:`MAX_HOPS` packet-hops.
"""

from __future__ import annotations

import math

import numpy as np

from universal.errors import UserError

#: Largest network (nodes) the view draws.
MAX_NODES = 4096
#: Largest number of packet-hops (link crossings) the view holds.
MAX_HOPS = 200_000
#: Largest --html-steps of an open-loop view.
MAX_HTML_STEPS = 5000


def check_nodes(num_nodes: int, name: str, hint: str = "a smaller network") -> None:
    """Refuse a network of more than :data:`MAX_NODES` nodes (one clear line).

    Parameters
    ----------
    num_nodes : int
    name : str
        The network's name, for the message.
    hint : str
        What to use instead.

    Examples
    --------
    >>> check_nodes(4096, "torus:k=64,n=2")
    >>> check_nodes(4097, "x")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: --html draws at most 4,096 nodes; x has 4,097: use a smaller network
    """
    if num_nodes > MAX_NODES:
        raise UserError(f"--html draws at most {MAX_NODES:,} nodes; {name} has {num_nodes:,}: use {hint}")


def check_hops(hops: int, what: str, hint: str) -> None:
    """Refuse a view of more than :data:`MAX_HOPS` packet-hops (one clear line).

    Parameters
    ----------
    hops : int
        Link crossings the view would hold.
    what, hint : str
        What has them, and what to change (named in the message).

    Examples
    --------
    >>> check_hops(250_000, "this run", "route fewer packets")
    Traceback (most recent call last):
    ...
    universal.errors.UserError: --html holds at most 200,000 packet-hops; this run has 250,000: route fewer packets
    """
    if hops > MAX_HOPS:
        raise UserError(f"--html holds at most {MAX_HOPS:,} packet-hops; {what} has {hops:,}: {hint}")


def _network(net, seed: int = 0) -> dict:
    from universal.reporting.html.layout import node_layout

    xy, bend = node_layout(net, seed)
    tail, head = net.link_tail, net.link_head
    return {"name": net.name, "kind": net.kind,
            "x": np.round(xy[:, 0], 4).tolist(), "y": np.round(xy[:, 1], 4).tolist(),
            "labels": [net.label_of(v) for v in range(net.num_nodes)],
            "tail": tail.tolist(), "head": head.tolist(), "bend": np.repeat(bend, 2).tolist()}


def _hops(per_packet: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    """Flat hop arrays: packet i's hops are ``link[offsets[i]:offsets[i+1]]`` with their steps."""
    lengths = [len(links) for links, _ in per_packet]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    cat = (lambda k: np.concatenate([p[k] for p in per_packet]).astype(np.int64).tolist()) if per_packet \
        else (lambda k: [])
    return {"offsets": offsets.tolist(), "link": cat(0), "step": cat(1)}


def shared_queue_text(router, buffer: int | None, vcs: int) -> str | None:
    """CHAOS's shared-queue places per node (``"4"``, or ``"2-4"`` where nodes differ), or None for
    another routing.

    Examples
    --------
    >>> from universal.networks import build_network
    >>> from universal.engine.routes import build_router
    >>> net = build_network("torus:k=4,n=2")
    >>> shared_queue_text(build_router("chaos", net), 1, 2), shared_queue_text(build_router("dor", net), 1, 2)
    ('4', None)
    """
    if router.kind != "chaos":
        return None
    from universal.engine.chaos import queue_sizes

    sizes = queue_sizes(router, buffer, vcs)
    low, high = int(sizes.min()), int(sizes.max())
    return str(low) if low == high else f"{low}-{high}"


def queued_hops(hops: dict, queued) -> list[int]:
    """Per hop of :func:`_hops`, the step in which the packet moved into its node's shared queue
    (CHAOS) while waiting to make that hop, or -1: a move at step q after the packet's hops
    crossed before q is made while it waits for its next hop, which it makes after q (it
    stays in the queue until then).

    Examples
    --------
    >>> queued_hops({"offsets": [0, 2, 3], "link": [4, 5, 6], "step": [0, 5, 1]}, [(2, 0)])
    [-1, 2, -1]
    """
    out = [-1] * len(hops["step"])
    off, step = hops["offsets"], hops["step"]
    for q, p in queued:
        k = off[p] + sum(1 for s in step[off[p]:off[p + 1]] if 0 <= s < q)
        if k < off[p + 1]:          # (a packet never moving on again is not drawn waiting for a hop)
            out[k] = int(q)
    return out


def _clean(value):
    """JSON-safe scalars: numpy numbers as Python ones, NaN and infinities as None."""
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else round(float(value), 4)
    return value


def router_model(buffer: int | None, vcs: int = 1, source_queue: str = "all", vc_buffer: str = "set") -> dict:
    """The router-model settings a view's run ran with, as the page's data holds them.

    Examples
    --------
    >>> router_model(2, vcs=2, vc_buffer="fifo")
    {'buffer': 2, 'vcs': 2, 'source_queue': 'all', 'vc_buffer': 'fifo'}
    """
    return {"buffer": buffer, "vcs": vcs, "source_queue": source_queue, "vc_buffer": vc_buffer}


def router_text(model: dict, shared_queue: str | None = None) -> str:
    """The router model in words, for a view's subtitle: the buffers, the virtual channels, the VC
    buffer's model and the source queue (the last three only where they are not the defaults);
    for CHAOS (``shared_queue``: its places per node) the shared queue instead of the VCs.

    Examples
    --------
    >>> router_text(router_model(None))
    'unbounded link buffers'
    >>> router_text(router_model(2, vcs=2, source_queue="fifo", vc_buffer="fifo"))
    'link buffers b = 2, V = 2 virtual channels per link, FIFO VCs (the head of a VC alone leaves), FIFO source queues'
    """
    parts = ["unbounded link buffers" if model["buffer"] is None else f"link buffers b = {model['buffer']}"]
    if shared_queue is not None:        # CHAOS has no VCs: --vcs is the budget its queue takes
        parts.append(f"no virtual channels, a shared queue of {shared_queue} places per node (CHAOS)")
    elif model["vcs"] != 1:
        parts.append(f"V = {model['vcs']} virtual channels per link")
    if model["vc_buffer"] == "fifo":
        parts.append("FIFO VCs (the head of a VC alone leaves)" if model["vcs"] != 1
                     else "FIFO link buffers (the head of a buffer alone leaves)")
    if model["source_queue"] == "fifo":
        parts.append("FIFO source queues")
    elif model["source_queue"] != "all":
        parts.append(f"FIFO source queues, look-ahead window {model['source_queue'][7:]}")
    return ", ".join(parts)


def batch_view(collection, result, row: dict, *, protocol, captions=(), command: str = "", vcs: int = 1,
               source_queue: str = "all", vc_buffer: str = "set", queued=None, shared_queue: str | None = None) -> dict:
    """The view of one ``route`` run: a path collection routed by the fast engine with
    ``record_hops=True``.

    Parameters
    ----------
    collection : PathCollection
        The packets' paths (on their host network: two butterflies back to back under Valiant's
        trick on a butterfly).
    result : RoutingResult
        The engine's result, with ``hop_steps`` (buffered protocols) or ``crossings``
        (bufferless ones).
    row : dict
        The table row of the run (``asdict`` of :class:`universal.experiment.Row`).
    protocol : Protocol
    captions : sequence of str
        The table's notes.
    command : str
        The command line, shown in the page.
    vcs, source_queue, vc_buffer : int, str, str
        The router model the run had (:func:`universal.engine.batch.simulate`), named in the
        subtitle and kept under ``router`` (a bufferless protocol has none of them).
    queued, shared_queue : list of (int, int) and str, optional
        CHAOS: when packets moved into their nodes' shared queues
        (:attr:`universal.engine.batch.BatchRun.queued`), drawn there, and the queue's places
        per node, named in the subtitle.

    Returns
    -------
    dict

    Examples
    --------
    >>> from dataclasses import asdict
    >>> from universal.experiment import Experiment, run_experiment
    >>> res = run_experiment(Experiment("butterfly:d=3", "permutation:random", None, ["fifo"]), keep_runs=True)
    >>> (coll, run), = res.runs
    >>> view = batch_view(coll, run, asdict(res.rows[0]), protocol="fifo")
    >>> len(view["network"]["x"]), len(view["packets"]["delivered"]), view["last_step"] == res.rows[0].T
    (32, 8, True)

    References
    ----------
    Leighton, Maggs & Rao, "Packet routing and job-shop scheduling in O(congestion + dilation)
    steps", 1994 (C, D and the lower bound the row shows).
    """
    from universal.protocols import build_protocol

    protocol = build_protocol(protocol)
    net = collection.network
    check_nodes(net.num_nodes, net.name)
    n = collection.size
    if protocol.bufferless:
        rows = result.crossings if result.crossings is not None else np.empty((0, 3), np.int64)
        check_hops(len(rows), "this run", "route fewer packets or use a smaller network")
        order = np.lexsort((rows[:, 0], rows[:, 2])) if len(rows) else np.empty(0, np.int64)
        rows = rows[order]
        cuts = np.searchsorted(rows[:, 2], np.arange(n + 1)) if len(rows) else np.zeros(n + 1, np.int64)
        hops = _hops([(rows[cuts[i]:cuts[i + 1], 1], rows[cuts[i]:cuts[i + 1], 0]) for i in range(n)])
        last_crossing = int(rows[:, 0].max()) if len(rows) else 0
    else:
        total = int(collection.lengths.sum())
        check_hops(total, "this run", "route fewer packets or use a smaller network")
        steps = result.hop_steps
        off = collection.offsets
        hops = _hops([(collection.links[off[i]:off[i + 1]], steps[off[i]:off[i + 1]]) for i in range(n)])
        if queued is not None:
            hops["queued"] = queued_hops(hops, queued)
        last_crossing = int(steps.max()) if len(steps) else 0
    D = collection.dilation
    last = max(int(result.T), last_crossing, 0)
    router = None if protocol.bufferless else router_model(row["buffer"], vcs, source_queue, vc_buffer)
    return {
        "kind": "batch", "command": command, "title": f"{row['protocol']} on {net.name}",
        "subtitle": f"{row['problem']}, {row['paths']} paths, seed {row['seed']}, B = {row['bandwidth']}, "
                    + ("bufferless" if protocol.bufferless else router_text(router, shared_queue)),
        "router": router, "bufferless": bool(protocol.bufferless), "start_offset": 1,
        "round_length": protocol.round_length(D) if protocol.bufferless else None,
        "network": _network(net),
        "static_load": collection.link_loads.tolist(),
        "packets": {"src": collection.sources.tolist(), "dst": collection.dests.tolist(),
                    "created": [0] * n, "delivered": result.delivery.tolist()},
        "hops": hops, "last_step": last, "status": result.status,
        "row": {k: _clean(v) for k, v in row.items()}, "captions": list(captions), "sweep": None,
    }


def openloop_view(study, routing: str, traffic: str, load: float, seed: int, steps: int,
                  rows: list[dict] | None = None, command: str = "") -> dict:
    """The view of one open-loop run: ``steps`` steps of packet creation at offered ``load``,
    then the network drains until every packet created is delivered.

    The run is the reference engine's (:func:`universal.engine.reference_runs.simulate_reference`),
    which delivers every packet in the same step as the fast engine of ``openloop``: its first
    ``steps`` steps are the steps of the study's run at that load and seed.

    Parameters
    ----------
    study : OpenLoopStudy
    routing, traffic : str
        One of the study's routings and traffics.
    load : float
        The offered load (in the study's units).
    seed : int
    steps : int
        Steps in which packets are created (``--html-steps``).
    rows : list of dict, optional
        The study's rows (the load sweep), drawn beside the network; they may be added later
        with :func:`add_sweep` (the view is checked and gathered before the study runs).
    command : str

    Returns
    -------
    dict

    Raises
    ------
    UserError
        Beyond :data:`MAX_NODES` nodes or :data:`MAX_HOPS` packet-hops (naming ``--html-steps``).

    Examples
    --------
    >>> from universal.openloop.study import OpenLoopStudy
    >>> study = OpenLoopStudy("torus:k=4,n=1", ["dor"], ["tornado"], loads=[0.5])
    >>> view = openloop_view(study, "dor", "tornado", 0.5, 0, 50)
    >>> view["status"], all(d >= 0 for d in view["packets"]["delivered"])
    ('drained', True)

    References
    ----------
    Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
    networks", 2003 (the open-loop measurement).
    """
    from universal.openloop.cells import prepare
    from universal.engine.creation import RunSpec
    from universal.engine.reference_runs import simulate_reference

    if not 1 <= steps <= MAX_HTML_STEPS:
        raise UserError(f"--html-steps must be between 1 and {MAX_HTML_STEPS:,} (got {steps})")
    p = prepare(study)
    net = p.network
    check_nodes(net.num_nodes, net.name)
    spec = RunSpec(p.traffics[traffic], p.routers[routing], p.injection, load * p.scale, seed=seed,
                   priority=study.priorities[0])
    record: dict = {"limit": MAX_HOPS}
    # the drain is bounded by the hop limit: every step before it ends moves a packet (or deadlocks)
    # the study's router model, whole: the view is the study's run at this load and seed
    router = router_model(study.buffer, study.vcs, study.source_queue, study.vc_buffer)
    shared = shared_queue_text(spec.router, study.buffer, study.vcs)
    run = simulate_reference(spec, steps + MAX_HOPS + 1, bandwidth=study.bandwidth, create_until=steps, record=record,
                             **router)
    if run["status"] == "record-limit":
        raise UserError(f"--html holds at most {MAX_HOPS:,} packet-hops; {steps} steps of {routing} {traffic} "
                        f"at offered {load:g} on {net.name} make more: give fewer --html-steps, a lower load "
                        f"or a smaller network")
    n = len(run["pid"])
    cross = np.array(record["crossings"], dtype=np.int64).reshape(-1, 3)
    cross = cross[np.argsort(cross[:, 1], kind="stable")]            # by packet, steps in order
    cuts = np.searchsorted(cross[:, 1], np.arange(n + 1))
    hops = _hops([(cross[cuts[i]:cuts[i + 1], 2], cross[cuts[i]:cuts[i + 1], 0]) for i in range(n)])
    if "queued" in record:          # CHAOS: when packets moved into their nodes' shared queues
        hops["queued"] = queued_hops(hops, record["queued"])
    units = "fraction of capacity" if study.units == "capacity" else "packets per node per step"
    view = {
        "kind": "openloop", "command": command, "title": f"{routing} on {net.name}, {traffic} traffic",
        "subtitle": f"offered {load:g} ({units}), {study.injection} injection, priority {study.priorities[0]}, "
                    f"seed {seed}, B = {study.bandwidth}, " + router_text(router, shared)
                    + f"; packets created in steps 0..{steps - 1}, then the network drains"
                    + (f"; the sweep's latencies add a router delay of {study.router_delay} steps per hop, the "
                       "steps shown do not" if study.router_delay else ""),
        "router": router, "bufferless": False, "start_offset": 0, "round_length": None,
        "network": _network(net), "static_load": None,
        "packets": {"src": record["src"], "dst": record["dst"], "created": record["created"],
                    "delivered": run["delivered"]},
        "hops": hops, "last_step": int(run["last"]), "status": run["status"], "create_steps": steps,
        "row": {}, "captions": [], "sweep": {"offered": [], "latency": [], "accepted": [], "load": load,
                                             "units": units, "routing": routing, "traffic": traffic, "seed": seed},
    }
    return add_sweep(view, rows or [])


def add_sweep(view: dict, rows: list[dict]) -> dict:
    """Put the load sweep's rows of the view's routing, traffic and seed into an open-loop view:
    the curves beside the network and the row of its load.

    Examples
    --------
    >>> view = {"row": {}, "sweep": {"routing": "dor", "traffic": "uniform", "seed": 0, "load": 0.2}}
    >>> rows = [{"routing": "dor", "traffic": "uniform", "seed": 0, "offered": x, "latency_mean": 3.0,
    ...          "accepted": x} for x in (0.1, 0.2)]
    >>> add_sweep(view, rows)["row"]["offered"], add_sweep(view, rows)["sweep"]["offered"]
    (0.2, [0.1, 0.2])
    """
    sw = view["sweep"]
    mine = [r for r in rows if (r.get("routing"), r.get("traffic"), r.get("seed")) ==
            (sw["routing"], sw["traffic"], sw["seed"])]
    row = next((r for r in mine if math.isclose(r["offered"], sw["load"])), {})
    view["row"] = {k: _clean(v) for k, v in row.items()}
    sw.update(offered=[r["offered"] for r in mine], latency=[_clean(r.get("latency_mean")) for r in mine],
              accepted=[_clean(r.get("accepted")) for r in mine])
    return view
