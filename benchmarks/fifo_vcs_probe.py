"""The accepted rate per 1000-step block of one routing with set and with FIFO virtual channels
(``--vc-buffer``; :mod:`universal.engine.fifo_vcs`), the paper's 8-deep VCs and budget
(b = 8, V = 6), the default ``all`` source queue: does the rate hold over a long run?

Usage::

    python benchmarks/fifo_vcs_probe.py --routing val --traffic tornado --rates 0.441,1.0 --steps 12000

Each run is one fixed-length run (seed 0) of the 8-ary 2-cube; the rate of a block is the packets
delivered in it per node and step (fractions of capacity on this network). A set-VC run near Θ
holds its rate; where a FIFO-VC run's rate falls late in the run, the network has fallen into a
congested state it does not leave (head-of-line blocking feeding on itself), which a saturation
search whose windows end earlier does not see.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from universal.engine.measure import Measurement
from universal.engine.routes import build_router
from universal.engine.runs import RunSpec, simulate_batch
from universal.engine.workload import build_injection
from universal.networks import build_network
from universal.openloop.workload import offered_traffic


def blocks(routing: str, traffic: str, rate: float, steps: int, vc_buffer: str, network: str = "torus:k=8,n=2",
           buffer: int = 8, vcs: int = 6) -> np.ndarray:
    """Packets delivered per node and step in every whole block of 1000 steps of one run."""
    net = build_network(network)
    spec = RunSpec(offered_traffic(net, traffic), build_router(routing, net), build_injection("bernoulli"), rate)
    res, = simulate_batch([spec], buffer=buffer, vcs=vcs, measurement=Measurement(steps=steps), vc_buffer=vc_buffer)
    d = res.records["delivered"]
    d = d[d >= 0]
    n = steps // 1000
    return np.bincount(d // 1000, minlength=n)[:n] / (1000 * net.num_nodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--routing", default="val")
    parser.add_argument("--traffic", default="tornado")
    parser.add_argument("--rates", default="0.441,1.0", help="offered loads, packets per node and step")
    parser.add_argument("--steps", type=int, default=12000)
    args = parser.parse_args()
    for vc_buffer in ("set", "fifo"):
        for rate in (float(x) for x in args.rates.split(",")):
            start = time.time()
            got = blocks(args.routing, args.traffic, rate, args.steps, vc_buffer)
            print(f"{args.routing} {args.traffic} {vc_buffer:4} offered {rate:.3f}: accepted per 1000 steps",
                  " ".join(f"{x:.3f}" for x in got), f"({time.time() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
