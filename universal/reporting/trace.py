"""Step-by-step traces of small routing runs, to follow a protocol by hand (``route --trace``).

:func:`trace_run` runs the reference engine (:mod:`universal.engine.reference`) with its event
recorder on; :func:`trace_to_json` turns the records into one JSON object (packets and links
named as the network prints them) and :func:`print_trace` prints that object as a readable
per-step log. Both show exactly what the engine did: the printed log is rendered from the JSON.

Adaptive routings (no paths before the run) are traced by :mod:`universal.reporting.trace_adaptive`.

Traces are for small instances only: :func:`trace_run` refuses (with a :class:`UserError`)
collections of more than :data:`MAX_TRACE_PACKETS` packets, :data:`MAX_TRACE_HOPS` hops or
:data:`MAX_TRACE_NODES` nodes.

Examples
--------
>>> trace = trace_route("hypercube:d=3", "permutation:bit-reversal", "dimension-order", "fifo")
>>> data = trace_to_json(trace)
>>> data["n"], data["result"]["T"], len(data["steps"]) == data["result"]["steps"]
(8, 2, True)
>>> data["steps"][0]["links"][0]["link"]
'1->0'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from rich.text import Text

from universal.engine.reference import simulate_reference
from universal.engine.result import RoutingResult
from universal.errors import UserError
from universal.networks import build_network
from universal.paths import PathCollection, build_path_system
from universal.protocols import Duplication, Protocol, TrialAndFailure, build_protocol
from universal.protocols.buffered import (FarthestToGo, Fifo, GrowingRank, LongestInSystem, NearestToGo,
                                          RandomDelay, RandomEachStep, RandomRank)
from universal.workloads import build_problem, estimate_packets

#: Largest number of packets a trace accepts.
MAX_TRACE_PACKETS = 64
#: Largest number of nodes (of the network the packets cross) a trace accepts.
MAX_TRACE_NODES = 256
#: Largest total path length (hops) a trace accepts.
MAX_TRACE_HOPS = 2000
#: Rounds a traced bufferless run may take unless a step limit is given.
MAX_TRACE_ROUNDS = 100
#: Largest number of packet copies in one round of a traced duplication run.
MAX_TRACE_COPIES = 4096


@dataclass
class TraceResult:
    """A traced run: the inputs, the engine's records and its result.

    Attributes
    ----------
    collection : PathCollection
    protocol : Protocol
    bandwidth : int
        B.
    buffer : int or None
        b (None: unbounded; ignored by the bufferless protocols).
    result : RoutingResult
        The reference engine's result (with ``record_hops=True``).
    records : list of dict
        The engine's trace records (see :mod:`universal.engine.reference`).
    problem, seed : str and int, or None
        What the collection was built from, when known (for the header).
    """

    collection: PathCollection
    protocol: Protocol
    bandwidth: int
    buffer: int | None
    result: RoutingResult
    records: list[dict]
    problem: str | None = None
    seed: int | None = None


def check_traceable(collection: PathCollection) -> None:
    """Raise :class:`UserError` if ``collection`` is too large to trace."""
    n, hops, nodes = collection.size, int(collection.lengths.sum()), collection.network.num_nodes
    for value, limit, what in [(n, MAX_TRACE_PACKETS, "packets"), (hops, MAX_TRACE_HOPS, "hops"),
                               (nodes, MAX_TRACE_NODES, "nodes")]:
        if value > limit:
            raise UserError(f"--trace is for small instances: this one has {value:,} {what} "
                            f"(on {collection.network.name}), more than {limit:,}")


def trace_run(collection: PathCollection, protocol: str | Protocol, rng: np.random.Generator, *,
              bandwidth: int = 1, buffer: int | None = None, step_limit: int | None = None) -> TraceResult:
    """Route ``collection`` with the reference engine, recording every step.

    The result is the one :func:`universal.engine.simulate_reference` (and the fast engine)
    gives for the same inputs and generator, except that a bufferless run stops after
    :data:`MAX_TRACE_ROUNDS` rounds unless ``step_limit`` says otherwise.

    Raises
    ------
    UserError
        If the collection is too large to trace (see :func:`check_traceable`).
    """
    check_traceable(collection)
    protocol = build_protocol(protocol)
    D = max(collection.dilation, 1)
    if isinstance(protocol, Duplication):
        # a traced run stops (status copy-limit) before a round of more than MAX_TRACE_COPIES copies
        protocol = replace(protocol, max_round_copies=min(protocol.max_round_copies, MAX_TRACE_COPIES))
    if protocol.bufferless and step_limit is None:
        step_limit = protocol.round_length(D) * min(protocol.max_rounds, MAX_TRACE_ROUNDS)
    records: list[dict] = []
    result = simulate_reference(collection, protocol, rng, bandwidth=bandwidth, buffer=buffer,
                                step_limit=step_limit, record_hops=True, trace=records)
    return TraceResult(collection, protocol, bandwidth, buffer, result, records)


def trace_route(network: str, problem: str, paths: str = "dimension-order", protocol: str = "random-rank", *,
                seed: int = 0, bandwidth: int = 1, buffer: int | None = None,
                base_dir: Path | None = None) -> TraceResult:
    """Build the instance from names and seed exactly as ``route`` does, and trace it.

    Seed ``s`` is split into the problem, paths and protocol streams as in
    :func:`universal.experiment.run_experiment`, so the trace is the run of that row of
    ``python -m universal route ... --seed s``. Sizes are checked before anything is built.
    """
    protocol_obj = build_protocol(protocol)      # a bad name is refused before anything is built
    collection, protocol_ss = traced_collection(network, problem, paths, seed=seed, base_dir=base_dir)
    trace = trace_run(collection, protocol_obj, np.random.default_rng(protocol_ss), bandwidth=bandwidth,
                      buffer=buffer)
    trace.problem, trace.seed = problem, seed
    return trace


def traced_collection(network: str, problem: str, paths: str, *, seed: int = 0,
                      base_dir: Path | None = None) -> tuple[PathCollection, np.random.SeedSequence]:
    """The path collection of ``route``'s row for seed ``seed`` and the seed of its protocol's
    stream (:func:`trace_route`), its sizes checked against the trace's limits before and after
    it is built."""
    net = build_network(network, base_dir)
    if net.num_nodes > MAX_TRACE_NODES:
        raise UserError(f"--trace is for small instances: {net.name} has {net.num_nodes:,} nodes, "
                        f"more than {MAX_TRACE_NODES:,}")
    system = build_path_system(paths, net, base_dir)
    packets = estimate_packets(problem, net)  # a relative file under base_dir counts 0 here; see below
    if packets > MAX_TRACE_PACKETS:
        raise UserError(f"--trace is for small instances: {problem} has {packets:,} packets "
                        f"on {net.name}, more than {MAX_TRACE_PACKETS}")
    problem_ss, paths_ss, protocol_ss = np.random.SeedSequence(seed).spawn(3)
    prob = build_problem(problem, net, np.random.default_rng(problem_ss), base_dir)
    if prob.size > MAX_TRACE_PACKETS:
        raise UserError(f"--trace is for small instances: {problem} has {prob.size:,} packets "
                        f"on {net.name}, more than {MAX_TRACE_PACKETS}")
    collection = system.route(prob, net, np.random.default_rng(paths_ss))
    check_traceable(collection)
    return collection, protocol_ss


# --- JSON -----------------------------------------------------------------------------------

_RANKED = (RandomRank, GrowingRank)


def _key_rule(protocol: Protocol) -> tuple[str, str]:
    """(name of the key in the log, one line saying which packet wins)."""
    if protocol.bufferless:
        if isinstance(protocol, Duplication):
            return "rank", ("B-collision rule: when more than B copies want a link in a step, all of them "
                            "are discarded")
        again = ("ranks and delays are drawn again every round (redraw=yes, a variant)"
                 if getattr(protocol, "redraw", False) else "ranks and delays are drawn once, before the first round")
        return "rank", f"B-priority rule: the B of lowest (rank, packet id) go on, the others are discarded; {again}"
    rules = [(RandomRank, "rank", "lowest rank wins"),
             (GrowingRank, "key", "lowest key = rank·D + hops·K wins (the rank grows by K/D per hop)"),
             (Fifo, "arrived", "earliest arrival at its buffer wins (step; 0 in the source)"),
             (FarthestToGo, "key", "lowest key = D - hops left wins (farthest to go)"),
             (NearestToGo, "hops left", "fewest hops left wins"),
             (LongestInSystem, "key", "all keys are 0 (all injected at step 0)"),
             (RandomEachStep, "key", "lowest of fresh random keys drawn every step wins"),
             (RandomDelay, "arrived", "earliest arrival at its buffer wins (a packet may first move in the step "
                                      "after its delay ends, and arrived in the source when it ended)")]
    for cls, name, line in rules:
        if isinstance(protocol, cls):
            return name, line + "; ties go to the lower packet id"
    return "key", "lowest key wins; ties go to the lower packet id"


def _why_lost(key_name: str, key: int, winners: list[tuple[int, int]], bandwidth: int) -> tuple[str, str]:
    """Reason code and text for a packet that lost on priority to ``winners`` ((packet, key))."""
    if bandwidth == 1:
        (w, wkey), = winners
        relation = f"{wkey} < {key}" if wkey < key else f"both {key}, lower id"
        return "lower-key", f"lost to p{w} ({key_name} {relation})"
    ahead = ", ".join(f"p{w} ({key_name} {k})" for w, k in winners)
    return "bandwidth", f"lost: B = {bandwidth} crossings used up by {ahead}"


def trace_to_json(trace: TraceResult) -> dict:
    """The trace as one JSON-serializable object.

    Keys: ``network`` (the network the packets cross), ``problem``, ``paths``, ``seed``,
    ``protocol``, ``bufferless``, ``n``, ``C``, ``D``, ``B``, ``b`` (link-buffer size, null for
    unbounded, 0 for the bufferless protocols), ``lower_bound`` (max(ceil(C/B), D)), ``K`` (rank
    range, null for rules without ranks), ``key`` (what the priority key is called) and ``rule``
    (which packet wins, one line); ``packets``: one ``{"packet", "path", "rank"}`` per packet,
    ``path`` as node labels; ``steps``: one object per step (bufferless: per forward-pass step in
    which something moves), in order; ``rounds`` (bufferless only); ``result``.

    A buffered step is ``{"step", "links", "delivered", "buffers", "deadlock"}``: every link that
    had contenders is ``{"link": "tail->head", "contenders": [{"packet", "key"}, ...]`` in
    priority order, ``"crossed": [packet, ...], "lost": [{"packet", "key", "reason",
    "beaten_by", "why"}, ...]}`` where ``reason`` is ``"lower-key"`` (B = 1: the packet in
    ``beaten_by`` was ahead of it), ``"bandwidth"`` (the B crossings went to the packets in
    ``beaten_by``, all ahead of it) or ``"buffer-full"`` (no room in the link's buffer, counted
    from the start of the step) and ``why`` says it in words; ``delivered`` lists the packets
    that arrived; ``buffers`` the link buffers at the end of the step,
    ``[{"link", "packets"}, ...]``; ``deadlock`` is true on the step that moved nothing.

    A bufferless step is ``{"step", "round", "links", "delivered"}``: every wanted link is
    ``{"link", "wanting": [{"packet", "copy", "rank"}, ...], "crossed": [{"packet", "copy"}, ...],
    "discarded": [{"packet", "copy", "reason", "why"}, ...]}`` with reason ``"lower-rank"``
    (trial-and-failure) or ``"collision"`` (duplication); ``delivered`` is a list of
    ``{"packet", "copy"}``. A round is ``{"round", "first_step", "last_step", "copies", "draws":
    [{"packet", "copy", "delay", "rank"}, ...], "acks": [{"packet", "step"}, ...],
    "still_active": [packet, ...]}`` (copies numbered from 1; rank null for duplication).

    ``result`` holds ``status``, ``T``, ``steps``, ``delivered``, ``delivery`` (step per packet,
    -1 if never), ``max_buffer``, ``hops``, ``mean_latency``, ``deadlock_step``, ``blocked``,
    ``full_links`` and, for the bufferless protocols, ``rounds``, ``discarded``, ``finish``,
    ``last_delivery`` and ``copies_capped`` (duplication: whether a ``copies=`` cap cut a
    round; null for trial-and-failure).
    """
    coll, protocol, res, B = trace.collection, trace.protocol, trace.result, trace.bandwidth
    net = coll.network
    C, D, n = coll.congestion, coll.dilation, coll.size
    key_name, rule = _key_rule(protocol)

    link_name = net.link_label

    def by_link(links: list[dict]) -> list[dict]:
        """Link records in the order of (tail, head) node ids: easier to read than the engine's."""
        return sorted(links, key=lambda e: (int(net.link_tail[e["link"]]), int(net.link_head[e["link"]])))

    setup = next((r for r in trace.records if r["event"] == "setup"), None)
    ranked = isinstance(protocol, _RANKED)
    packets = [{"packet": i, "path": [net.label_of(v) for v in coll.node_path(i)],
                "rank": setup["ranks"][i] if ranked and setup else None} for i in range(n)]
    if isinstance(protocol, RandomDelay) and setup:
        for p in packets:  # the delays are the protocol's draws (its "ranks")
            p["delay"] = setup["ranks"][p["packet"]]
    out = {"network": net.name, "problem": trace.problem, "paths": coll.system, "seed": trace.seed,
           "protocol": protocol.name, "bufferless": protocol.bufferless, "n": n, "C": C, "D": D, "B": B,
           "b": 0 if protocol.bufferless else trace.buffer, "lower_bound": max(-(-C // B), D),
           "K": _rank_range(protocol, setup, C, D, n, B), "key": key_name, "rule": rule,
           "packets": packets, "steps": []}
    if protocol.bufferless:
        out["rounds"] = []
        _bufferless_json(trace, out, link_name, by_link)
    else:
        for r in trace.records:
            if r["event"] == "step":
                out["steps"].append(_buffered_step(r, key_name, B, link_name, by_link))
    result = {"status": res.status, "T": res.T, "steps": res.steps, "delivered": res.delivered,
              "delivery": res.delivery.tolist(), "max_buffer": res.max_buffer, "hops": res.hops,
              "mean_latency": res.mean_latency, "deadlock_step": res.deadlock_step,
              "blocked": None if res.blocked is None else res.blocked.tolist(),
              "full_links": None if res.full_links is None else [link_name(e) for e in res.full_links.tolist()]}
    if protocol.bufferless:
        result.update(rounds=res.rounds, discarded=res.discarded, finish=res.finish,
                      last_delivery=res.last_delivery, copies_capped=res.copies_capped)
    out["result"] = result
    return out


def _rank_range(protocol: Protocol, setup: dict | None, C: int, D: int, n: int, B: int) -> int | None:
    """K of the protocols that draw ranks (None for the greedy rules and duplication)."""
    if isinstance(protocol, TrialAndFailure):
        return protocol.rank_range(C, max(D, 1), n, B)
    return setup["K"] if isinstance(protocol, _RANKED) and setup else None


def _buffered_step(r: dict, key_name: str, B: int, link_name, by_link) -> dict:
    links = []
    for e in by_link(r["links"]):
        keys = {i: k for k, i in e["contenders"]}
        lost = []
        for i, reason in e["lost"]:
            if reason == "buffer-full":
                code, why, beaten = "buffer-full", f"waits: no room in the buffer of {link_name(e['link'])}", []
            else:
                beaten = e["crossed"]
                code, why = _why_lost(key_name, keys[i], [(w, keys[w]) for w in beaten], B)
            lost.append({"packet": i, "key": keys[i], "reason": code, "beaten_by": beaten, "why": why})
        links.append({"link": link_name(e["link"]),
                      "contenders": [{"packet": i, "key": k} for k, i in e["contenders"]],
                      "crossed": e["crossed"], "lost": lost})
    return {"step": r["step"], "links": links, "delivered": r["delivered"],
            "buffers": [{"link": link_name(e["link"]), "packets": e["packets"]}
                        for e in by_link([{"link": e, "packets": ps} for e, ps in r["buffers"].items()])],
            "deadlock": r.get("deadlock", False)}


def _bufferless_json(trace: TraceResult, out: dict, link_name, by_link) -> None:
    duplication = isinstance(trace.protocol, Duplication)
    R = trace.protocol.round_length(trace.collection.dilation)
    attempts: list = []
    active: set[int] = {i for i in range(trace.collection.size) if trace.collection.lengths[i] > 0}
    for r in trace.records:
        if r["event"] == "round":
            attempts = r["attempts"]
            out["rounds"].append({"round": r["round"], "first_step": r["first_step"],
                                  "last_step": r["first_step"] + R - 1, "copies": r["copies"],
                                  "draws": [{"packet": i, "copy": q + 1, "delay": delay,
                                             "rank": None if duplication else rank}
                                            for i, q, delay, rank in attempts]})
        elif r["event"] == "acks":
            active -= {i for i, _ in r["acks"]}
            out["rounds"][-1].update(acks=[{"packet": i, "step": t} for i, t in r["acks"]],
                                     still_active=sorted(active))
        elif r["event"] == "step" and r["links"]:
            def who(a: int) -> dict:
                return {"packet": attempts[a][0], "copy": attempts[a][1] + 1}

            links = []
            for e in by_link(r["links"]):
                if duplication:
                    why = f"{len(e['wanting'])} copies want the link, more than B = {trace.bandwidth}"
                    discarded = [{**who(a), "reason": "collision", "why": why} for a in e["discarded"]]
                else:
                    ahead = [(attempts[a][0], attempts[a][3]) for a in e["crossed"]]
                    discarded = [{**who(a), "reason": "lower-rank",
                                  "why": _why_lost("rank", attempts[a][3], ahead, trace.bandwidth)[1]}
                                 for a in e["discarded"]]
                links.append({"link": link_name(e["link"]),
                              "wanting": [{**who(a), "rank": None if duplication else attempts[a][3]}
                                          for a in e["wanting"]],
                              "crossed": [who(a) for a in e["crossed"]], "discarded": discarded})
            out["steps"].append({"step": r["step"], "round": r["round"], "links": links,
                                 "delivered": [who(a) for a in r["delivered"]]})


# --- terminal -------------------------------------------------------------------------------

def _p(entry: dict | int, copies: int = 1) -> str:
    """``p3`` for a packet, ``p3.2`` for its second copy when a round sends several."""
    if isinstance(entry, int):
        return f"p{entry}"
    return f"p{entry['packet']}" + (f".{entry['copy']}" if copies > 1 else "")


def print_trace(trace: TraceResult | dict, console: Console | None = None) -> None:
    """Print the trace as a per-step log: a header, the packets and their paths, then every step.

    ``trace`` may be a :class:`TraceResult` or the object :func:`trace_to_json` made of it.
    """
    from universal.reporting.tables import make_console

    data = trace if isinstance(trace, dict) else trace_to_json(trace)
    console = console or make_console()
    for line in _header(data):
        console.print(line)
    table = Table(header_style="bold", box=None)
    table.add_column("packet", justify="right")
    table.add_column("path (node labels)")
    ranks = data["K"] is not None and not data["bufferless"]
    delays = bool(data["packets"]) and "delay" in data["packets"][0]
    if ranks:
        table.add_column("rank", justify="right")
    if delays:
        table.add_column("delay", justify="right")
    for p in data["packets"]:
        cells = [_p(p["packet"]), " -> ".join(p["path"]) if len(p["path"]) > 1 else f"{p['path'][0]} (no hops)"]
        table.add_row(*cells, *([str(p["rank"])] if ranks else []), *([str(p["delay"])] if delays else []))
    console.print(table)
    if data["bufferless"]:
        _print_bufferless(data, console)
    else:
        _print_buffered(data, console)
    console.print(Text(_final_line(data), style="bold"))


def _header(data: dict) -> list[str]:
    made = ", ".join(x for x in [data["problem"], f"{data['paths']} paths" if data["paths"] else None,
                                 None if data["seed"] is None else f"seed {data['seed']}"] if x)
    b = "bufferless" if data["bufferless"] else ("unbounded link buffers" if data["b"] is None
                                                 else f"link buffers of size b = {data['b']}")
    lines = [f"Trace of {data['protocol']} on {data['network']}" + (f": {made}" if made else ""),
             f"{data['n']} packets, C = {data['C']}, D = {data['D']}, B = {data['B']}, {b}; "
             f"lower bound max(C/B, D) = {data['lower_bound']}",
             f"Contention: {data['rule']}" + (f"; ranks drawn from 0..{data['K'] - 1}" if data["K"] else "")]
    if data["bufferless"]:
        rounds = data["rounds"]
        length = rounds[0]["last_step"] - rounds[0]["first_step"] + 1 if rounds else 4 * max(data["D"], 1)
        lines.append(f"Rounds of {length} steps (4D): forward pass of 2D steps, then the acknowledgements "
                     f"travel back for 2D steps; a packet with delay d leaves in step d + 1 of the round")
    return lines


def _print_buffered(data: dict, console: Console) -> None:
    key = data["key"]
    for s in data["steps"]:
        console.print(Text(f"step {s['step']}" + ("  (deadlock: no packet can move)" if s["deadlock"] else ""),
                           style="bold red" if s["deadlock"] else "bold"))
        for e in s["links"]:
            line = Text(f"  {e['link']}: ")
            if len(e["contenders"]) > 1:
                line.append(", ".join(f"{_p(c['packet'])} ({key} {c['key']})" for c in e["contenders"]) + " -> ")
            if e["crossed"]:
                line.append(" ".join(_p(i) for i in e["crossed"]) + " crossed", style="green")
                if len(e["contenders"]) == 1:
                    line.append(f" ({key} {e['contenders'][0]['key']})")
            for lost in e["lost"]:
                line.append("; " if e["crossed"] or lost is not e["lost"][0] else "")
                line.append(f"{_p(lost['packet'])} {lost['why']}", style="red")
            console.print(line)
        if s["delivered"]:
            console.print(f"  delivered: {' '.join(_p(i) for i in s['delivered'])}")
        buffers = "; ".join(f"{b['link']} [{' '.join(_p(i) for i in b['packets'])}]" for b in s["buffers"])
        console.print(f"  buffers: {buffers or 'all empty'}")


def _print_bufferless(data: dict, console: Console) -> None:
    steps = data["steps"]
    for rnd in data["rounds"]:
        c = rnd["copies"]
        console.print(Text(f"round {rnd['round']} (steps {rnd['first_step']}..{rnd['last_step']})"
                           + (f": {c} copies per packet" if c > 1 else ""), style="bold"))
        if c > 1:
            by_packet: dict[int, list[int]] = {}
            for d in rnd["draws"]:
                by_packet.setdefault(d["packet"], []).append(d["delay"])
            draws = ", ".join(f"p{i} delays {' '.join(map(str, ds))}" for i, ds in by_packet.items())
        else:
            draws = ", ".join(f"p{d['packet']} delay {d['delay']}" + ("" if d["rank"] is None else f" rank {d['rank']}")
                              for d in rnd["draws"])
        console.print(f"  draws: {draws}")
        for s in steps:
            if s["round"] != rnd["round"]:
                continue
            moves = "; ".join(f"{e['link']} {' '.join(_p(x, c) for x in e['crossed'])}"
                              for e in s["links"] if e["crossed"])
            console.print(Text(f"  step {s['step']}: ", style="bold") + Text(moves or "no link crossed"))
            for e in s["links"]:
                for x in e["discarded"]:
                    console.print(Text(f"    {_p(x, c)} discarded at {e['link']}: {x['why']}", style="red"))
            if s["delivered"]:
                console.print(Text(f"    delivered: {' '.join(_p(x, c) for x in s['delivered'])}", style="green"))
        acks = ", ".join(f"p{a['packet']} at step {a['step']}" for a in rnd.get("acks", []))
        console.print(f"  acknowledged: {acks or 'none'}; still active: "
                      f"{' '.join(_p(i) for i in rnd.get('still_active', [])) or 'none'}")


def _final_line(data: dict) -> str:
    r = data["result"]
    if r["status"] == "deadlock":
        return (f"Deadlock in step {r['deadlock_step']}: no packet could move; {len(r['blocked'])} packets wait "
                f"({' '.join(_p(i) for i in r['blocked'])}), each for a full buffer of "
                f"{', '.join(r['full_links'])}; {r['delivered']} of {data['n']} delivered; T = {r['T']} steps run")
    if r["status"] != "delivered":
        return f"Step limit reached after {r['steps']} steps: {r['delivered']} of {data['n']} delivered; T = {r['T']}"
    if data["bufferless"]:
        return (f"T = {r['T']} (last acknowledgement; last delivery at step {r['last_delivery']}): "
                f"{r['rounds']} rounds, {r['discarded']} discarded, {r['hops']} link crossings")
    return (f"T = {r['T']}: all {data['n']} packets delivered; largest buffer {r['max_buffer']}, "
            f"mean latency {r['mean_latency']:.2f}, {r['hops']} hops")
