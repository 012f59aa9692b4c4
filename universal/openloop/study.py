"""Open-loop studies: load sweeps and saturation tables over routings, traffics and seeds, the
API behind ``universal openloop`` and ``kind = "openloop"`` scenarios (SPEC §8, §11).

Rates are fractions of capacity by default (SPEC §7: 1.0 loads the busiest channel of uniform
traffic under minimal balanced routing to B; on the 8-ary 2-cube that is one packet per node
per step), or packets per node per step with ``units="packets"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from universal.errors import UserError
from universal.networks import build_network
from universal.openloop.creation import RunSpec
from universal.openloop.engine import PRIORITIES, simulate_batch
from universal.openloop.measure import Measurement, RunResult
from universal.openloop.routes import build_router
from universal.openloop.saturation import find_saturation
from universal.openloop.workload import build_injection, capacity_rate, offered_traffic

__all__ = ["OpenLoopStudy", "OpenLoopReport", "run_study", "parse_loads", "analytic_throughput"]

#: Offered load (fraction of capacity) of the zero-load latency runs of a saturation table.
ZERO_LOAD = 0.02


def parse_loads(text: str) -> list[float]:
    """``a:b:step`` (inclusive) or a comma-separated list of loads.

    Examples
    --------
    >>> parse_loads("0.1:0.5:0.1")
    [0.1, 0.2, 0.3, 0.4, 0.5]
    >>> parse_loads("0.2,0.9")
    [0.2, 0.9]
    """
    try:
        if ":" in text:
            a, b, step = (float(x) for x in text.split(":"))
            if step <= 0 or b < a:
                raise UserError(f"--loads {text!r}: need a <= b and a positive step")
            count = int(np.floor((b - a) / step + 1e-9)) + 1
            if count > 1000:
                raise UserError(f"--loads {text!r} asks for {count} loads (at most 1000)")
            values = [round(a + i * step, 12) for i in range(count)]
        else:
            values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--loads {text!r}: expected a:b:step or numbers separated by commas") from None
    if not values:
        raise UserError("--loads is empty")
    bad = [v for v in values if not v > 0]
    if bad:
        raise UserError(f"offered loads must be positive (got {bad[0]:g})")
    return values


@dataclass
class OpenLoopStudy:
    """What to simulate (see :func:`run_study`)."""

    network: str
    routings: list[str]
    traffics: list[str]
    loads: list[float] | None = None
    saturation: bool = False
    injection: str = "bernoulli"
    units: str = "capacity"
    seeds: list[int] = field(default_factory=lambda: [0])
    priority: str = "age"
    bandwidth: int = 1
    buffer: int | None = None
    window: int | None = None
    tolerance: float = 0.01
    name: str = "openloop"
    base_dir: Path | None = None
    pairs: list[str] = field(default_factory=list)


@dataclass
class OpenLoopReport:
    """Rows of a study (dicts, the ``--json`` rows) and what they were measured on."""

    study: OpenLoopStudy
    network: dict
    capacity_rate: float | None
    rows: list[dict]
    pairs: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        s = self.study
        out = {"name": s.name, "network": self.network, "units": s.units, "injection": s.injection,
               "priority": s.priority, "bandwidth": s.bandwidth, "buffer": s.buffer,
               "capacity_rate": self.capacity_rate, "rows": self.rows}
        if self.pairs:
            out["pairs"] = self.pairs
        return out


def analytic_throughput(network, routing: str, traffic: str) -> Fraction | None:
    """Capacity over the largest channel load of an oblivious torus routing (``universal load``).

    The exact fraction when the analysis forms it (permutations); otherwise the fraction with a
    denominator below 10^6 that equals the analysis's float to 1e-12. None for routings the
    torus analysis does not cover (adaptive routings, path systems).
    """
    from universal.oblivious import ROUTINGS, load_table
    from universal.registry import parse_spec

    if network.kind != "torus" or parse_spec(routing).name not in ROUTINGS or network.params["k"] < 3:
        return None
    if parse_spec(traffic).name in ("permutation", "matrix"):
        return None
    k, n = network.params["k"], network.params["n"]
    row = load_table(k, n, [routing], [traffic], np.random.default_rng(0))[0]
    if row.max_load_exact is not None:
        from universal.paths.torus.geometry import Torus

        return Torus(k, n).capacity_load / row.max_load_exact
    guess = Fraction(row.throughput).limit_denominator(10**6)
    return guess if abs(float(guess) - row.throughput) <= 1e-12 else None


def _row_base(routing: str, traffic: str, seed: int) -> dict:
    return {"routing": routing, "traffic": traffic, "seed": seed}


def _measured(res: RunResult, scale: float) -> dict:
    def sc(x):
        return None if x is None else x / scale
    return {"accepted": sc(res.accepted), "accepted_min": sc(res.accepted_min), "latency_mean": res.latency_mean,
            "latency_p50": res.latency_p50, "latency_p99": res.latency_p99, "latency_max": res.latency_max,
            "hops_mean": res.hops_mean, "stable": res.stable, "status": res.status}


def run_study(study: OpenLoopStudy, progress=None) -> OpenLoopReport:
    """Run a load sweep (``loads``) or a saturation table (``saturation``).

    Parameters
    ----------
    study : OpenLoopStudy
    progress : callable, optional
        Called with a number of finished runs.

    Returns
    -------
    OpenLoopReport

    Examples
    --------
    >>> rep = run_study(OpenLoopStudy("torus:k=8,n=1", ["dor"], ["tornado"], loads=[0.2], window=500))
    >>> row = rep.rows[0]
    >>> row["offered"], row["hops_mean"], row["stable"]
    (0.2, 3.0, True)
    """
    if study.units not in ("capacity", "packets"):
        raise UserError(f"--units must be capacity or packets (got {study.units!r})")
    if study.priority not in PRIORITIES:
        raise UserError(f"unknown priority {study.priority!r} (known: {', '.join(PRIORITIES)})")
    if (study.loads is None) == (not study.saturation):
        raise UserError("give offered loads (--loads a:b:step) or ask for --saturation, one of the two")
    from universal.load_analysis import _resolve_traffic

    net = build_network(study.network, study.base_dir)
    injection = build_injection(study.injection)
    pairs = [_parse_pair(net, p) for p in study.pairs]
    if pairs and study.loads is None:
        raise UserError("pair latencies come from a load sweep (loads), not from a saturation search")
    cap = float(capacity_rate(net, study.bandwidth)) if study.units == "capacity" else None
    scale = cap if cap is not None else 1.0
    traffics = {t: offered_traffic(net, _resolve_traffic(t, study.base_dir)) for t in study.traffics}
    routers = {r: build_router(r, net) for r in study.routings}
    Measurement(window=study.window).check()
    report = OpenLoopReport(study, net.summary(), cap, [])

    def make(r, t, rate, seed):
        return RunSpec(traffics[t], routers[r], injection, rate * scale, seed=seed, priority=study.priority)

    if study.loads is not None:
        specs, keys = [], []
        for r in study.routings:
            for t in study.traffics:
                for load in study.loads:
                    for seed in study.seeds:
                        specs.append(make(r, t, load, seed))
                        keys.append((r, t, load, seed))
        results = simulate_batch(specs, bandwidth=study.bandwidth, buffer=study.buffer,
                                 measurement=Measurement(window=study.window), progress=progress)
        exact = {}
        if study.units == "capacity" and study.buffer is None:
            exact = {(r, t): analytic_throughput(net, r, t) for r in study.routings for t in study.traffics}
        for (r, t, load, seed), res in zip(keys, results):
            value = exact.get((r, t))
            report.rows.append({**_row_base(r, t, seed), "offered": load, **_measured(res, scale),
                                "analytic_value": None if value is None else float(value)})
            for text, (s, d) in zip(study.pairs, pairs):
                got = res.pair_latency(s, d)
                report.pairs.append({**_row_base(r, t, seed), "offered": load, "pair": text,
                                     "latency_mean": got[0] if got else None, "hops_mean": got[1] if got else None,
                                     "packets": got[2] if got else 0})
        return report

    # saturation: one search per cell and seed, plus one batch of zero-load runs
    cells = [(r, t, seed) for r in study.routings for t in study.traffics for seed in study.seeds]
    zero = simulate_batch([make(r, t, ZERO_LOAD, seed) for r, t, seed in cells],
                          bandwidth=study.bandwidth, buffer=study.buffer,
                          measurement=Measurement(window=study.window or 3000, drain=True), progress=progress)
    for (r, t, seed), z in zip(cells, zero):
        sat = find_saturation(make(r, t, 1.0, seed), tolerance=study.tolerance, bandwidth=study.bandwidth,
                              buffer=study.buffer, progress=progress,
                              measurement=Measurement(window=study.window, latency_limit=500, drain=False,
                                                      overload="stop"))
        theta = sat.theta / scale
        exact = analytic_throughput(net, r, t) if study.units == "capacity" and study.buffer is None else None
        report.rows.append({**_row_base(r, t, seed), "saturation": theta, "upper": sat.upper / scale,
                            "limited": sat.limited, "analytic": None if exact is None else str(exact),
                            "analytic_value": None if exact is None else float(exact),
                            "ratio": None if exact is None or exact == 0 else theta / float(exact),
                            "zero_load_latency": z.latency_mean, "hops_mean": z.hops_mean,
                            "runs": len(sat.runs)})
    return report


def _parse_pair(net, text: str) -> tuple[int, int]:
    """``"0,0->1,3"``: a source and a destination by their labels."""
    if "->" not in text:
        raise UserError(f"pair {text!r}: expected SOURCE->DESTINATION, e.g. 0,0->1,3")
    a, b = text.split("->", 1)
    return net.node(a), net.node(b)
