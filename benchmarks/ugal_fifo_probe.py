"""What the packet at the head of a source queue sees when UGAL chooses, on tornado with one-place
VCs (a diagnostic of issue 24, not a model): why, with a FIFO source at offered 1.0, UGAL took
no Valiant path while its queue estimate counted only the waiting packets, and what it sees now
that, with bounded buffers, the estimate also counts the used credits.

Usage::

    python benchmarks/ugal_fifo_probe.py                                   # 8-ary 2-cube, 1.0 and 0.4
    python benchmarks/ugal_fifo_probe.py --waiting-only                    # the earlier estimate
    python benchmarks/ugal_fifo_probe.py --network torus:k=6,n=1 --rates 0.3,0.75 --steps 600 --trace 300
        # the 6-node ring (0.75: one packet per node and step), and who crosses node 0's link

Every run is ``universal openloop``'s UGAL (threshold 0; Singh, Dally, Gupta & Towles, "GOAL: a
load-balanced adaptive routing algorithm for torus networks", 2003, and Singh's thesis, 2005)
on tornado, bernoulli sources, ``--buffer 1 --vcs 6`` and ``--source-queue`` both ways, for
``--steps`` steps. UGAL chooses once, when the packet is routed (with ``fifo``: when it reaches
the head of its source queue), from each first link's queue at the start of the step: the
packets committed to (waiting for) the link plus its used credits, the packets that crossed it
and still sit in its buffers at the next router (:func:`universal.engine.adaptive.used_credits`);
Valiant when ``q_min * H_min > q_val * H_val``. ``--waiting-only`` sets the credits to 0, the
estimate before they were counted. At every choice in the second half of the run it records
the packets in the network at the chooser's node, how many of them have not chosen their next
link yet (they arrived in the previous step and choose in this one, so they wait for nothing),
how many wait for the chooser's minimal link, that link's used credits and ``q_min`` (waiting
anywhere plus credits); and the fraction of choices that went Valiant. The engine is not
changed: :func:`universal.engine.adaptive._ugal_choice` is wrapped to look before it decides.
"""

from __future__ import annotations

import argparse

import numpy as np

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

import universal.engine.adaptive as adaptive  # noqa: E402
from universal.networks import build_network  # noqa: E402
from universal.openloop import Measurement, RunSpec, build_injection, build_router, offered_traffic  # noqa: E402
from universal.engine.runs import simulate_batch  # noqa: E402
from universal.openloop.workload import capacity_rate  # noqa: E402


def probe(network: str, rate: float, source_queue: str, steps: int, seed: int) -> dict:
    """One run; the means over the choices made in its second half (see the module docstring)."""
    net = build_network(network)
    spec = RunSpec(offered_traffic(net, "tornado"), build_router("ugal", net), build_injection("bernoulli"),
                   rate * float(capacity_rate(net)), seed=seed)
    seen: list[tuple] = []
    step = [0]
    choose, decide_star = adaptive._ugal_choice, adaptive.decide_star

    def looking(batch, idx, base, q, tabs):
        a, h = batch.a, batch.head
        node = a["node"][idx]
        minimal = tabs["productive"][node, a["dst"][idx]][:, 0] + base    # tornado: one minimal link
        live = np.arange(h, batch.cap)
        live = live[(a["want"][live] < batch.trash) & (a["prev"][live] != batch.inject_slot)]
        at, want = a["node"][live], a["want"][live]
        credits = np.zeros(len(idx), dtype=np.int64) + adaptive.used_credits(batch, minimal)
        choose(batch, idx, base, q, tabs)
        valiant = a["target"][idx] != a["dst"][idx]
        for v, m, c, val in zip(node, minimal, credits, valiant):
            here = at == v
            seen.append((step[0], here.sum(), (want[here] < 0).sum(), (want[here] == m).sum(), c, q[m] + c, val))

    def stepping(batch, t):
        step[0] = t
        return decide_star(batch, t)

    import universal.engine.runs as runs

    adaptive._ugal_choice, runs.decide_star = looking, stepping
    try:
        simulate_batch([spec], buffer=1, vcs=6, measurement=Measurement(steps=steps), source_queue=source_queue)
    finally:
        adaptive._ugal_choice, runs.decide_star = choose, decide_star
    s = np.array([x for x in seen if x[0] >= steps // 2], dtype=float)
    return {"choices": len(s), "at node": s[:, 1].mean(), "not chosen": s[:, 2].mean(),
            "for minimal": s[:, 3].mean(), "credits": s[:, 4].mean(), "q_min": s[:, 5].mean(),
            "valiant": s[:, 6].mean()}


def trace(network: str, rate: float, steps: int, seed: int, first: int, count: int) -> str:
    """With a FIFO source: who crosses node 0's tornado link in steps ``first .. first + count - 1``:
    ``H`` a packet making its first hop (a queue's head leaving), ``T`` a transit packet."""
    net = build_network(network)
    spec = RunSpec(offered_traffic(net, "tornado"), build_router("ugal", net), build_injection("bernoulli"),
                   rate * float(capacity_rate(net)), seed=seed)
    out = simulate_batch([spec], buffer=1, vcs=6, measurement=Measurement(steps=steps, record_crossings=True),
                         source_queue="fifo")[0].records["crossings"]
    link = int(spec.router.productive[0, spec.traffic.perm[0]][0])     # tornado: one minimal link
    start: dict[int, int] = {}
    for step, packet, _ in out:
        start.setdefault(int(packet), int(step))
    rows = out[(out[:, 2] == link) & (out[:, 0] >= first) & (out[:, 0] < first + count)]
    return " ".join(f"{s}:{'H' if start[int(p)] == s else 'T'}" for s, p, _ in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--network", default="torus:k=8,n=2")
    parser.add_argument("--rates", default="0.4,1.0", help="offered loads, fractions of capacity")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trace", type=int, default=None, metavar="STEP",
                        help="also print who crosses node 0's tornado link in 30 steps from STEP (FIFO source, "
                             "at the last rate)")
    parser.add_argument("--waiting-only", action="store_true",
                        help="UGAL's q without the used credits (the estimate before they were counted)")
    args = parser.parse_args()
    if args.waiting_only:
        adaptive.used_credits = lambda batch, slots: 0
    print(f"UGAL, tornado, {args.network}, b = 1, V = 6, bernoulli, seed {args.seed}, {args.steps} steps; "
          f"means over the choices of the second half; q = waiting{'' if args.waiting_only else ' + used credits'}")
    print(f"{'source':>6} {'offered':>7} {'choices':>8} {'valiant':>8} {'at node':>8} {'not chosen':>10} "
          f"{'for min':>8} {'credits':>8} {'q_min':>7}")
    for queue in ("all", "fifo"):
        for rate in (float(x) for x in args.rates.split(",")):
            r = probe(args.network, rate, queue, args.steps, args.seed)
            print(f"{queue:>6} {rate:7.2f} {r['choices']:8d} {r['valiant']:8.3f} {r['at node']:8.2f} "
                  f"{r['not chosen']:10.2f} {r['for minimal']:8.2f} {r['credits']:8.2f} {r['q_min']:7.2f}")
    if args.trace is not None:
        rate = float(args.rates.split(",")[-1])
        print(f"node 0's tornado link, fifo, offered {rate} (H: a head's first hop, T: a transit packet):")
        print(trace(args.network, rate, args.trace + 30, args.seed, args.trace, 30))


if __name__ == "__main__":
    from universal.errors import UserError

    try:
        main()
    except UserError as e:
        print(f"error: {e}", file=_sys.stderr)
        _sys.exit(2)
