"""The terminal log of an adaptive (or VC, or FIFO-queue) trace: :func:`print_adaptive_trace`
prints the object :func:`universal.reporting.trace_adaptive.adaptive_trace_to_json` makes, step
by step, with UGAL's comparisons written out (:func:`ugal_comparison`).

Examples
--------
>>> import io
>>> from rich.console import Console
>>> from universal.reporting.trace_adaptive import trace_adaptive_route
>>> out = io.StringIO()
>>> print_adaptive_trace(trace_adaptive_route("torus:k=4,n=1", "permutation:tornado", "min-adaptive", "fifo"),
...                      Console(file=out, width=80, color_system=None))
>>> out.getvalue().splitlines()[-8:-4]      # step 1's crossings, one per link (the 4-ring's tornado)
['  0->1: p0 crossed', '  1->2: p1 crossed', '  2->3: p2 crossed', '  3->0: p3 crossed']
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from universal.reporting.trace_adaptive import UGAL_NUMBERS, AdaptiveTrace, adaptive_trace_to_json, key_text

__all__ = ["print_adaptive_trace", "ugal_comparison"]


def print_adaptive_trace(trace: AdaptiveTrace | dict, console: Console | None = None) -> None:
    """Print the trace as a per-step log: a header, the packets and the paths they took, then
    every step (choices, crossings and losses, deliveries, buffers, CHAOS's shared queues).

    ``trace`` may be an :class:`AdaptiveTrace` or the object :func:`adaptive_trace_to_json` made of it.
    """
    from universal.reporting.tables import make_console

    data = trace if isinstance(trace, dict) else adaptive_trace_to_json(trace)
    console = console or make_console()
    b = "unbounded link buffers" if data["b"] is None else f"link buffers of size b = {data['b']}"
    if data.get("classes"):
        b = f"V = {data['vcs']} VCs per link of b = {data['b']}, classes {' '.join(data['classes'])}"
    elif data.get("vc_buffer") == "fifo":
        b = f"V = {data['vcs']} VCs per link of b = {data['b']}" if data["vcs"] > 1 else b
    elif data.get("vcs", 1) > 1 and data["b"] is None and not data["queue"]:
        b += f" (V = {data['vcs']} VCs per link: with unbounded buffers the classes never bind)"
    places = "place" if data["queue"] == "1" else "places"
    queue = f", a shared queue of {data['queue']} {places} per node" if data["queue"] else ""
    fifos = [x for x, on in [(f"source queue {data.get('source_queue')}", data.get("source_queue", "all") != "all"),
                             ("FIFO VCs", data.get("vc_buffer") == "fifo")] if on]
    for line in [f"Trace of {data['protocol']} under {data['paths']} on {data['network']}: {data['problem']}, "
                 f"seed {data['seed']}",
                 f"{data['n']} packets, B = {data['B']}, {b}{queue}" + "".join(f"; {x}" for x in fifos),
                 f"Choice: {data['choice']}",
                 f"Contention: {data['rule']}; ties go to the lower packet id"]:
        console.print(line)
    table = Table(header_style="bold", box=None)
    table.add_column("packet", justify="right")
    table.add_column("path taken (node labels)")
    for p in data["packets"]:
        path = " -> ".join(p["path"]) if len(p["path"]) > 1 else f"{p['path'][0]} (no hops)"
        table.add_row(f"p{p['packet']}", path)
    console.print(table)
    chaos = data["routing"] == "chaos"
    for s in data["steps"]:
        _print_step(s, data, console, chaos)
    r = data["result"]
    if r["status"] == "delivered":
        final = (f"T = {r['T']}: all {data['n']} packets delivered; paths taken C = {r['C']}, D = {r['D']}; "
                 f"largest buffer {r['max_buffer']}, mean latency {r['mean_latency']:.2f}, {r['hops']} hops")
    elif r["status"] == "deadlock":
        final = (f"Deadlock in step {r['deadlock_step']}: no packet could move; {len(r['blocked'])} packets wait "
                 f"({' '.join(f'p{i}' for i in r['blocked'])}), each for a full buffer of "
                 f"{', '.join(r['full_links'])}; {r['delivered']} of {data['n']} delivered")
    else:
        final = f"Step limit reached after {r['steps']} steps: {r['delivered']} of {data['n']} delivered"
    console.print(Text(final, style="bold"))


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def ugal_comparison(c: dict, global_: bool = False) -> str:
    """UGAL's comparison with the numbers the engine compared, in words: ``q_min·H_min = 2·3 = 6 >
    q_val·H_val + T = 0·5 + 0 = 0`` (UGAL-G, ``global_``: ``q_min/B + H_min = ...``).

    Examples
    --------
    >>> ugal_comparison({"q_min": 2, "H_min": 3, "q_val": 0, "H_val": 5, "T": 0.0})
    'q_min·H_min = 2·3 = 6 > q_val·H_val + T = 0·5 + 0 = 0'
    """
    n = _number
    qm, hm, qv, hv, T = (c[k] for k in UGAL_NUMBERS)
    if global_:
        B = c["B"]
        left, right = qm / B + hm, qv / B + hv + T
        return (f"q_min/B + H_min = {n(qm)}/{B} + {n(hm)} = {n(left)} {'>' if left > right else '<='} "
                f"q_val/B + H_val + T = {n(qv)}/{B} + {n(hv)} + {n(T)} = {n(right)}")
    left, right = qm * hm, qv * hv + T
    return (f"q_min·H_min = {n(qm)}·{n(hm)} = {n(left)} {'>' if left > right else '<='} "
            f"q_val·H_val + T = {n(qv)}·{n(hv)} + {n(T)} = {n(right)}")


def _item(console: Console, text: str | Text) -> None:
    """One item of a step, indented by 2, its wrapped lines by 6 (easier to scan in 80 columns)."""
    text = Text(text) if isinstance(text, str) else text
    for k, line in enumerate(text.wrap(console, max(console.width - 6, 20))):
        line.rstrip()                       # (the wrap keeps the space it broke at)
        console.print(Text("      " if k else "  ") + line, soft_wrap=True)


def _print_step(s: dict, data: dict, console: Console, chaos: bool) -> None:
    console.print(Text(f"step {s['step']}" + ("  (deadlock: no packet can move)" if s["deadlock"] else ""),
                       style="bold red" if s["deadlock"] else "bold"))
    for src in s["sources"]:
        _item(console, f"p{src['packet']} takes its {src['took']} path, since")
        _item(console, "    " + ugal_comparison(src, global_=data["paths"].startswith("ugal-g")))
    single = []
    for c in s["choices"]:
        if "phase" in c:
            at = f" (q at {c['at']})" if c["at"] != c["node"] else ""
            _item(console, f"p{c['packet']} at {c['node']}: "
                  + ("Valiant via " + c["via"] if c["phase"] == "valiant" else "minimal") + f"{at}, since")
            _item(console, "    " + ugal_comparison(c))         # (its own line: fits 80 columns unbroken)
        if len(c["allowed"]) == 1 and not c.get("deflected") and "options" not in c:
            single.append(f"p{c['packet']}")
            continue
        rooms = c.get("room", [True] * len(c["allowed"]))
        opts = ", ".join(f"{a['link']} ({a['waiting']}{'' if room else ', full'})"
                         for a, room in zip(c["allowed"], rooms))
        if "options" in c:          # *-channels: (link, class) options, a full class buffer marked
            opts = ", ".join(f"{o['link']} {o['vc']} ({o['waiting']}{', full' if o['full'] else ''})"
                             for o in c["options"])
        took = (f"deflected onto {c['took']}" if c.get("deflected") else f"took {c['took']}")
        took += f" {c['vc']}" if "vc" in c else ""
        _item(console, Text(f"p{c['packet']} at {c['node']} chose among {opts}: ")
              + Text(took, style="magenta" if c.get("deflected") else ""))
    if single:
        _item(console, f"one allowed link: {' '.join(single)}")
    key = data["key"]
    for e in s["links"]:
        line = Text(f"{e['link']}: ")
        if len(e["contenders"]) > 1:
            line.append(", ".join(f"p{c['packet']}" + (f" ({key_text(c['key'], key, chaos)})" if c["key"] else "")
                                  for c in e["contenders"]) + " -> ")
        if e["crossed"]:
            line.append(" ".join(f"p{i}" for i in e["crossed"]) + " crossed", style="green")
        for k, lost in enumerate(e["lost"]):
            line.append("; " if e["crossed"] or k else "")
            line.append(f"p{lost['packet']} {lost['why']}", style="red")
        _item(console, line)
    if s.get("queue_held"):
        _item(console, Text(f"held in their source queues (a packet ahead stays): "
                            f"{' '.join(f'p{i}' for i in s['queue_held'])}", style="red"))
    if s["delivered"]:
        _item(console, f"delivered: {' '.join(f'p{i}' for i in s['delivered'])}")
    def held(b: dict) -> str:           # p3, or p3:*_0 with VC classes
        return " ".join(f"p{i}" + (f":{b['classes'][k]}" if "classes" in b else "") for k, i in enumerate(b["packets"]))
    if "vcs" in s:                      # FIFO VCs: every VC, head first
        vcs = "; ".join(f"{v['link']} v{v['vc']} [{' '.join(f'p{i}' for i in v['packets'])}]" for v in s["vcs"])
        _item(console, f"VCs (head first): {vcs or 'all empty'}")
    else:
        buffers = "; ".join(f"{b['link']} [{held(b)}]" for b in s["buffers"])
        _item(console, f"buffers: {buffers or 'all empty'}")
    if chaos:
        ev = s["queue_events"]
        moves = [f"{' '.join(f'p{i}' for i in ev[k])} {what}" for k, what in
                 (("entered", "entered a shared queue"), ("left", "left a shared queue")) if ev[k]]
        queues = "; ".join(f"{q['node']} [{' '.join(f'p{i}' for i in q['packets'])}]" for q in s["queues"])
        _item(console, Text(f"shared queues: {queues or 'all empty'}" + ("; " + ", ".join(moves) if moves else ""),
                            style="magenta" if moves or queues else ""))
