"""Step-by-step traces of small adaptive runs (``route --trace`` with ``--paths min-adaptive``,
``goal``, ``ugal``, ``chaos``, ``ugal-l``, ``ugal-g``, ``splitter``).

An adaptive routing has no path collection before the run: every packet chooses its next link
as it goes. :func:`trace_adaptive_route` runs the batch of ``route``'s table row on the
reference engine (:func:`universal.engine.batch.route_batch` with ``engine="reference"``, the
step records of :mod:`universal.engine.reference_trace`), checks that it delivers every packet
in the same step and crosses the same links as the row's run (the one engine's), and
:func:`adaptive_trace_to_json` and
:func:`universal.reporting.trace_adaptive_text.print_adaptive_trace` show it: per step every choice
(the allowed links, the packets waiting for each, the one taken; UGAL's minimal or Valiant
phase; CHAOS's deflections), every link's contenders, who crossed and who lost and why, the
deliveries, the link buffers and, for CHAOS, the shared queues (Konstantinidou & Snyder, "The
Chaos router", 1994): who entered one, who left one, who sits in each.

The size limits are the fixed-path trace's (:mod:`universal.reporting.trace`): at most
:data:`~universal.reporting.trace.MAX_TRACE_PACKETS` packets, ``MAX_TRACE_NODES`` nodes and
``MAX_TRACE_HOPS`` link crossings (the crossings of the run, counted once it ran).

Examples
--------
>>> trace = trace_adaptive_route("torus:k=4,n=1", "permutation:tornado", "min-adaptive", "fifo")
>>> data = adaptive_trace_to_json(trace)
>>> data["n"], data["result"]["T"], len(data["steps"]) == data["result"]["steps"]
(4, 1, True)
>>> data["steps"][0]["choices"][0]["took"]
'0->1'

References
----------
Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing algorithm for torus
networks", 2003 (MIN AD, GOAL, UGAL and CHAOS as the route command runs them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from universal.engine.batch import BatchRun
from universal.errors import UserError
from universal.reporting.trace import MAX_TRACE_HOPS, MAX_TRACE_NODES, MAX_TRACE_PACKETS

__all__ = ["AdaptiveTrace", "adaptive_trace_to_json", "trace_adaptive_route"]

#: Where a CHAOS packet sits, by the first item of its contention key.
_PLACES = ("shared queue", "input buffer", "source")

#: Per protocol: (what its key is called, which packet wins).
_RULES = {"random-rank": ("rank", "lowest rank (drawn at creation from 0..2^31-1) wins"),
          "fifo": ("arrived", "earliest arrival at its node wins (step; 0 in the source)"),
          "farthest-to-go": ("key", "lowest key = -(hops left) wins: farthest to go (an adaptive packet's "
                                    "hops left: its minimal distance)"),
          "nearest-to-go": ("hops left", "fewest hops left (an adaptive packet's minimal distance) wins"),
          "longest-in-system": ("id", "all packets are as old (a batch): the lower packet id wins")}

#: Per routing kind: how a packet chooses, one line.
_TIES = "; ties by the packet's tie number"
_CHOICE = {"min-adaptive": "MIN AD: among the links one hop closer, the fewest waiting at the start of the step"
                           + _TIES,
           "goal": "GOAL: a direction per dimension at creation, then among the links of the dimensions left "
                   "to correct, the fewest waiting" + _TIES,
           "ugal": "UGAL: at the source Valiant (via a random intermediate) when q_min·H_min > q_val·H_val + T, "
                   "else minimal (q: the fewest packets waiting for a first link toward the target, plus its used "
                   "credits with --buffer; H: hops; an intermediate drawn at the source or the destination: minimal, "
                   "no comparison); then MIN AD toward the current target" + _TIES,
           "ugal-paths": "UGAL-L/G: the minimal or the Valiant path, taken at the source: UGAL-L Valiant when "
                         "q_min·H_min > q_val·H_val + T (q: packets waiting for the path's first router link plus "
                         "those in its buffer), UGAL-G when q_min/B + H_min > q_val/B + H_val + T (q: the packets "
                         "waiting along the whole path)",
           "chaos": "CHAOS: among the links one hop closer, one with room first, then the fewest waiting; a packet "
                    "in a full shared queue with no such room is deflected onto another link with room" + _TIES,
           "paths": "none: every packet follows its path, fixed before the run; with VCs each hop enters its "
                    "dateline class c = 2·level + wrapped on a torus (level on a mesh or hypercube)",
           "splitter": "the splitter rule: the packets of a node bound for one output set take its edges in turn, "
                       "in packet-id order, the edge with the fewest waiting first (ties to the lower row)"}


@dataclass
class AdaptiveTrace:
    """A traced adaptive run.

    Attributes
    ----------
    run : BatchRun
        The reference engine's run (the paths taken and the result, batch-engine steps).
    records : list of dict
        Its step records (:mod:`universal.engine.reference_trace`, engine steps from 0).
    routing, protocol, problem : str
    seed, bandwidth : int
    buffer : int or None
    kind : str
        The router's kind (``min-adaptive``, ``goal``, ``ugal``, ``chaos``, ``ugal-paths``, ...).
    queue : str or None
        CHAOS's shared-queue places per node (``"4"`` or ``"2-4"``).
    vcs, source_queue, vc_buffer : int, str, str
        The run's ``--vcs``, ``--source-queue`` and ``--vc-buffer``.
    class_names : list of str or None
        The name of every VC class (GOAL's *-channels), None without classes.
    key_name, rule : str or None
        What the contention key is called and which packet wins, when not the adaptive
        protocols' (fixed paths: :mod:`universal.reporting.trace_channels`).
    """

    run: BatchRun
    records: list
    routing: str
    protocol: str
    problem: str
    seed: int
    bandwidth: int
    buffer: int | None
    kind: str
    queue: str | None = None
    vcs: int = 1
    source_queue: str = "all"
    vc_buffer: str = "set"
    class_names: list | None = None
    key_name: str | None = None
    rule: str | None = None


def _too_large(value: int, limit: int, what: str, where: str) -> None:
    if value > limit:
        raise UserError(f"--trace is for small instances: {where} has {value:,} {what}, more than {limit:,}")


def trace_adaptive_route(network: str, problem: str, routing: str, protocol: str = "random-rank", *, seed: int = 0,
                         bandwidth: int = 1, buffer: int | None = None, vcs: int = 1,
                         source_queue: str = "all", vc_buffer: str = "set",
                         base_dir: Path | None = None) -> AdaptiveTrace:
    """Trace the run of ``route``'s row for an adaptive routing, on the reference engine.

    The seed is split as :func:`universal.experiment.run_experiment` splits it, so the run is
    the one of the row of ``python -m universal route ... --paths ROUTING --seed s``; the trace
    is refused (a RuntimeError) unless the reference delivers every packet in the same step and
    crosses the same links as the row's run.

    Parameters
    ----------
    network, problem, routing, protocol : str
        As ``route`` names them (``routing`` an adaptive one, e.g. ``min-adaptive``, ``chaos:queue=2``).
    seed, bandwidth : int
    buffer : int or None
        b (None: unbounded).
    vcs : int
        V, virtual channels per link: GOAL's *-channels for min-adaptive, goal and ugal (every
        choice then names its class); for CHAOS the buffer budget its shared queue takes.
    source_queue, vc_buffer : str
        As ``route``'s ``--source-queue`` (``fifo``: a packet is routed, and UGAL decides, when it
        reaches the head of its source queue) and ``--vc-buffer``.
    base_dir : Path, optional

    Returns
    -------
    AdaptiveTrace

    Raises
    ------
    UserError
        Beyond the trace's limits (packets, nodes, link crossings), or for bad names.
    """
    from universal.engine.batch import ADAPTIVE_PROTOCOLS, route_batch
    from universal.engine.routes import build_router
    from universal.networks import build_network
    from universal.protocols import build_protocol
    from universal.reporting.html.data import shared_queue_text
    from universal.workloads import build_problem, estimate_packets

    net = build_network(network, base_dir)
    _too_large(net.num_nodes, MAX_TRACE_NODES, "nodes", net.name)
    router = build_router(routing, net)
    name = build_protocol(protocol).name
    if name not in ADAPTIVE_PROTOCOLS:
        raise UserError(f"protocol {name!r} is not available with adaptive routing; use "
                        f"{', '.join(ADAPTIVE_PROTOCOLS)}")
    _too_large(estimate_packets(problem, net), MAX_TRACE_PACKETS, "packets", f"{problem} on {net.name}")
    problem_ss, _, protocol_ss = np.random.SeedSequence(seed).spawn(3)
    prob = build_problem(problem, net, np.random.default_rng(problem_ss), base_dir)
    _too_large(prob.size, MAX_TRACE_PACKETS, "packets", f"{problem} on {net.name}")
    distances = net.distances(prob.sources, prob.dests)
    if distances is not None:         # the fewest crossings the run can make, before it runs
        _too_large(int(distances.sum()), MAX_TRACE_HOPS, "hops (at least)", f"{problem} on {net.name}")
    options = dict(seed=protocol_ss, bandwidth=bandwidth, buffer=buffer, vcs=vcs, source_queue=source_queue,
                   vc_buffer=vc_buffer)
    records: list = []
    ref = route_batch(net, prob.sources, prob.dests, routing, name, engine="reference", trace=records, **options)
    _too_large(int(ref.result.hops), MAX_TRACE_HOPS, "link crossings", "this run")
    row = route_batch(net, prob.sources, prob.dests, routing, name, **options)      # the table row's run
    if not (np.array_equal(ref.result.delivery, row.result.delivery)
            and np.array_equal(ref.result.crossings, row.result.crossings)):
        raise RuntimeError(f"{routing}: the reference engine's run differs from the one engine's")
    queue = shared_queue_text(router, buffer, vcs)
    return AdaptiveTrace(ref, records, routing, name, problem, seed, bandwidth, buffer, router.kind, queue, vcs,
                         source_queue, vc_buffer, _class_names(router, vcs, buffer))


def _class_names(router, vcs: int, buffer: int | None) -> list[str] | None:
    """The names of the run's VC classes: GOAL's ``*_0``, ``*_1`` and ``non-*`` (``*`` and
    ``non-*`` without wrap-around), per UGAL phase ``ph1``/``ph2``; None when the classes do not
    bind (one VC, unbounded buffers, CHAOS)."""
    from universal.engine.vcs import plan_vcs

    plan = plan_vcs(router, vcs, buffer)
    if plan is None or buffer is None:
        return None
    names = ["*_0", "*_1", "non-*"] if plan.ring else ["*", "non-*"]
    if plan.phases == 1:
        return names
    return [f"{name} ph{phase + 1}" for phase in range(plan.phases) for name in names]


# --- JSON -----------------------------------------------------------------------------------

def adaptive_trace_to_json(trace: AdaptiveTrace) -> dict:
    """The trace as one JSON-serializable object (links ``tail->head`` and nodes by label).

    Keys: ``network``, ``problem``, ``paths`` (the routing), ``routing`` (its kind), ``seed``,
    ``protocol``, ``adaptive`` (true), ``bufferless`` (false), ``n``, ``B``, ``b``, ``queue``
    (CHAOS's shared-queue places per node, else null), ``vcs``, ``source_queue``, ``vc_buffer``
    (the run's options), ``classes`` (the VC classes' names, GOAL's *-channels, null without
    classes that bind), ``key``, ``rule``, ``choice`` (how a packet
    chooses, one line); ``packets``: ``{"packet", "source", "dest", "path"}`` per packet, ``path``
    the nodes it visited; ``steps``: one per step, in order; ``result``.

    A step is ``{"step", "choices", "sources", "links", "delivered", "buffers", "deadlock"}`` and,
    for CHAOS, ``"queues"`` and ``"queue_events"``: ``choices`` one ``{"packet", "node", "allowed":
    [{"link", "waiting"}, ...], "took"}`` per packet that chose its next link in the step (UGAL's
    first choice adds ``"phase"``, ``"minimal"`` or ``"valiant"``, ``"via"`` and the numbers the
    rule compared, ``"q_min"``, ``"H_min"``, ``"q_val"``, ``"H_val"``, ``"T"`` and ``"at"``, the
    router whose links q counts: Valiant when q_min·H_min > q_val·H_val + T; with *-channels
    ``"vc"``, the class taken, and ``"options"``, ``[{"link", "vc", "full", "waiting"}]``;
    CHAOS adds ``"room"`` per allowed link and ``"deflected"``); ``sources`` (UGAL-L/G) one
    ``{"packet", "minimal", "valiant", "took", "q_min", "H_min", "q_val", "H_val", "T", "B"}``
    per packet (path lengths, and the numbers compared: UGAL-L's q is the first router link's
    queue and used credits, Valiant when q_min·H_min > q_val·H_val + T; UGAL-G's the queues along
    the whole path, Valiant when q_min/B + H_min > q_val/B + H_val + T); ``links`` as in
    :func:`universal.reporting.trace.trace_to_json` (``contenders``: ``{"packet", "key"}`` with
    ``key`` a list, CHAOS's first item the place: 0 shared queue, 1 input buffer, 2 source; a
    loss's ``reason`` ``"lower-key"``, ``"bandwidth"`` or ``"buffer-full"`` as there, or
    ``"held"``: CHAOS's injection gate held the packet at its source, or ``"behind-head"``: FIFO
    VCs, it is not its VC's head; with VC classes every contender's ``"into"``, the class it
    would enter, null when the hop delivers it); ``buffers`` ``[{"link", "packets"}]`` at the end
    of the step (with VC classes also ``"classes"``, each packet's); with FIFO VCs ``vcs``
    ``[{"link", "vc", "packets"}]``, every non-empty VC head first; ``queues``
    ``[{"node", "packets"}]``; ``queue_events`` ``{"entered": [...], "left": [...]}``.

    ``result``: ``status``, ``T``, ``steps``, ``delivered``, ``delivery`` (step per packet, -1 if
    never), ``C`` and ``D`` of the paths taken, ``max_buffer``, ``hops``, ``mean_latency`` and,
    after a deadlock, ``deadlock_step``, ``blocked`` (the waiting packets) and ``full_links`` (the
    links they wait for; null otherwise).
    """
    run, res = trace.run, trace.run.result
    coll = run.paths
    net = coll.network
    label = net.label_of
    link = net.link_label
    n = coll.size
    key_name, rule = (trace.key_name, trace.rule) if trace.rule else _RULES[trace.protocol]
    chaos = trace.kind == "chaos"
    if chaos:
        rule = "the shared queue first, then input buffers, then the source; then " + rule
    packets = [{"packet": i, "source": label(int(coll.sources[i])), "dest": label(int(coll.dests[i])),
                "path": [label(v) for v in coll.node_path(i)]} for i in range(n)]
    steps = [_step(r, trace, link, label, key_name) for r in trace.records]
    return {"network": net.name, "problem": trace.problem, "paths": trace.routing, "routing": trace.kind,
            "seed": trace.seed, "protocol": trace.protocol, "adaptive": True, "bufferless": False, "n": n,
            "B": trace.bandwidth, "b": trace.buffer, "queue": trace.queue, "vcs": trace.vcs,
            "source_queue": trace.source_queue, "vc_buffer": trace.vc_buffer, "classes": trace.class_names,
            "key": key_name, "rule": rule,
            "choice": _CHOICE.get(trace.kind, trace.kind), "packets": packets, "steps": steps,
            "result": {"status": res.status, "T": res.T, "steps": res.steps, "delivered": res.delivered,
                       "delivery": res.delivery.tolist(), "C": coll.congestion, "D": coll.dilation,
                       "max_buffer": res.max_buffer, "hops": res.hops,
                       "mean_latency": None if not np.isfinite(res.mean_latency) else res.mean_latency,
                       "deadlock_step": res.deadlock_step,
                       "blocked": None if res.blocked is None else res.blocked.tolist(),
                       "full_links": None if res.full_links is None else [link(e) for e in res.full_links.tolist()]}}


#: The numbers of a UGAL comparison, as the JSON names them.
UGAL_NUMBERS = ("q_min", "H_min", "q_val", "H_val", "T")


def _step(r: dict, trace: AdaptiveTrace, link, label, key_name: str) -> dict:
    """One engine step record as the trace shows it (batch step numbers: the engine's + 1)."""
    names = trace.class_names
    choices = []
    for c in r["choices"]:
        entry = {"packet": c["packet"], "node": label(c["node"]),
                 "allowed": [{"link": link(e), "waiting": w} for e, w in zip(c["allowed"], c["counts"])],
                 "took": link(c["took"])}
        if "phase" in c:
            entry.update(phase=c["phase"], via=label(c["via"]))
            entry.update({k: c[k] for k in UGAL_NUMBERS}, at=label(c["at"]))
        if "room" in c:
            entry.update(room=c["room"], deflected=c["deflected"])
        if "vc" in c:
            entry.update(vc=names[c["vc"]], options=[{"link": link(e), "vc": names[k], "full": full,
                                                       "waiting": w} for e, k, full, w, _ in c["options"]])
        choices.append(entry)
    sources = [{k: v for k, v in src.items() if k != "chose_valiant"} for src in r["sources"]]
    links = []
    net = trace.run.paths.network
    for e in sorted(r["links"], key=lambda e: (int(net.link_tail[e["link"]]), int(net.link_head[e["link"]]))):
        keys = {i: k for k, i in e["contenders"]}
        into = dict(zip((i for _, i in e["contenders"]), e.get("classes", [])))
        lost = [{"packet": i, "key": keys[i], "reason": _code(reason, trace.bandwidth),
                 "beaten_by": e["crossed"] if reason == "priority" else [],
                 "why": _why(i, reason, keys, e, trace, link, label, key_name, into.get(i))} for i, reason in e["lost"]]
        entry = {"link": link(e["link"]), "contenders": [{"packet": i, "key": k} for k, i in e["contenders"]],
                 "crossed": e["crossed"], "lost": lost}
        if names is not None:
            for c in entry["contenders"]:
                c["into"] = None if into[c["packet"]] is None else names[into[c["packet"]]]
        links.append(entry)
    classes = r.get("classes", {})
    buffers = []
    for e in sorted(r["buffers"], key=lambda e: (int(net.link_tail[e]), int(net.link_head[e]))):
        buffers.append({"link": link(e), "packets": r["buffers"][e]})
        if names is not None:
            buffers[-1]["classes"] = [names[classes[i]] for i in r["buffers"][e]]
    out = {"step": r["step"] + 1, "choices": choices, "sources": sources, "links": links,
           "queue_held": r.get("queue_held", []), "delivered": r["delivered"], "buffers": buffers,
           "deadlock": r["deadlock"]}
    if "fifos" in r:
        fifos = sorted((tuple(map(int, key.split())), ps) for key, ps in r["fifos"].items())
        fifos.sort(key=lambda f: (int(net.link_tail[f[0][0]]), int(net.link_head[f[0][0]]), f[0][1]))
        out["vcs"] = [{"link": link(e), "vc": v, "packets": ps} for (e, v), ps in fifos]
    if "queues" in r:
        out["queues"] = [{"node": label(v), "packets": ps} for v, ps in r["queues"].items()]
        out["queue_events"] = r.get("queue_events", {"entered": [], "left": []})
    return out


def _code(reason: str, bandwidth: int) -> str:
    """The fixed-path trace's reason codes (``lower-key``, ``bandwidth``, ``buffer-full``), ``held``
    and ``behind-head``."""
    if reason == "priority":
        return "lower-key" if bandwidth == 1 else "bandwidth"
    return reason


def key_text(key: list, key_name: str, chaos: bool) -> str:
    """A contention key in words: ``arrived 2``, ``input buffer, arrived 2``."""
    place, rest = (_PLACES[key[0]], key[1:]) if chaos else (None, key)
    own = f"{key_name} {rest[0]}" if rest else ""
    return ", ".join(x for x in (place, own) if x)


def _why(i: int, reason: str, keys: dict, e: dict, trace: AdaptiveTrace, link, label, key_name: str,
         into: int | None = None) -> str:
    """Why packet ``i`` did not cross link ``e["link"]``, in words (``into``: the VC class it
    would enter)."""
    if reason == "buffer-full":
        if into is not None and trace.class_names is not None:
            return f"waits: no room left in class {trace.class_names[into]} of {link(e['link'])}"
        return f"waits: no room in the buffer of {link(e['link'])}"
    if reason == "behind-head":
        where = dict(zip((j for _, j in e["contenders"]), e["from_vc"]))[i]
        return f"waits: behind the head of its FIFO VC, {link(where[0])} v{where[1]}"
    if reason == "held":
        node = label(int(trace.run.paths.network.link_tail[e["link"]]))
        return (f"held at its source by the injection gate (the shared queue of {node} has no place for its "
                f"input packets and one more)")
    chaos = trace.kind == "chaos"
    winners = e["crossed"]
    if trace.bandwidth == 1:
        (w,) = winners
        wk, k = keys[w], keys[i]
        if wk == k:
            return f"lost to p{w} (both {key_text(k, key_name, chaos)}, lower id)" if k else f"lost to p{w} (lower id)"
        return f"lost to p{w} ({key_text(wk, key_name, chaos)} before {key_text(k, key_name, chaos)})"
    ahead = ", ".join(f"p{w}" for w in winners)
    return f"lost: B = {trace.bandwidth} crossings used up by {ahead}"
