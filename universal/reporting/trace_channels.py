"""Step-by-step traces of small runs on fixed paths with virtual channels or FIFO queues
(``route --trace`` with ``--vcs V``, ``--source-queue fifo`` or ``--vc-buffer fifo``).

The fixed-path trace (:mod:`universal.reporting.trace`) follows the batch reference engine, which
has one set buffer per link and routes every packet from step 1. With dateline VC classes, FIFO
source queues or FIFO VCs the row's run is the one engine's batch
(:func:`universal.engine.batch.simulate`); its reference is the open-loop reference engine
(:func:`universal.engine.reference_runs.simulate_reference` on
:func:`~universal.engine.batch_specs.fixed_paths_spec`, the same packets, paths, ranks and
classes). :func:`trace_channels_route` runs that reference with its step recorder on, checks that
it delivers every packet in the same step and makes every hop in the same step as the row's run,
and returns an :class:`~universal.reporting.trace_adaptive.AdaptiveTrace` that
:func:`~universal.reporting.trace_adaptive_text.print_adaptive_trace` prints: per step every link's
contenders with the class buffer each would enter, who crossed, who waits for a class with no
room left (or behind the head of its FIFO VC), and the buffers with every packet's class.

The dateline classes (:mod:`universal.engine.vcs`): a hop's class is ``2·level + wrapped`` on a
torus (k > 2), ``level`` on a mesh or hypercube; they are named ``c0``, ``c1``, ... The size
limits are the fixed-path trace's.

Examples
--------
>>> from universal.reporting.trace_adaptive import adaptive_trace_to_json
>>> trace = trace_channels_route("torus:k=8,n=1", "permutation:tornado", "dimension-order", "fifo",
...                              buffer=1, vcs=2)
>>> data = adaptive_trace_to_json(trace)
>>> data["classes"], data["result"]["status"], data["result"]["T"]
(['c0', 'c1'], 'delivered', 10)

References
----------
Dally & Seitz, "Deadlock-free message routing in multiprocessor interconnection networks", 1987
(dateline classes); Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks", 2003, §4.1.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from universal.errors import UserError
from universal.reporting.trace_adaptive import AdaptiveTrace

__all__ = ["trace_channels_route"]

#: Per engine rule of a survey protocol (:func:`universal.engine.batch_specs.rule_of`): what its
#: key is called and which packet wins (the open-loop reference's keys; ties to the lower id).
_FIXED_RULES = {"random-rank": ("rank", "lowest rank wins (drawn from 0..K-1, K = {K})"),
                "growing-rank": ("key", "lowest key = rank·D + hops·K wins (K = {K}, D = {D}: the rank grows "
                                        "by K/D per hop)"),
                "fifo": ("arrived", "earliest arrival at its buffer wins (step; 0 in the source)"),
                "farthest-to-go": ("key", "lowest key = -(hops left) wins: farthest to go"),
                "nearest-to-go": ("hops left", "fewest hops left wins"),
                "age": ("id", "all keys are equal (all injected at step 0): the lower packet id wins")}


def trace_channels_route(network: str, problem: str, paths: str, protocol: str = "random-rank", *, seed: int = 0,
                         bandwidth: int = 1, buffer: int | None = None, vcs: int = 1, source_queue: str = "all",
                         vc_buffer: str = "set", base_dir: Path | None = None) -> AdaptiveTrace:
    """Trace the run of ``route``'s row on fixed paths with VCs, a FIFO source queue or FIFO VCs.

    Parameters
    ----------
    network, problem, paths, protocol : str
        As ``route`` names them (``paths`` a path system, ``protocol`` a buffered one whose keys
        the open-loop reference reads: random-rank, growing-rank, fifo, farthest-to-go,
        nearest-to-go, longest-in-system).
    seed, bandwidth : int
    buffer : int or None
        b, packets per VC (None: unbounded).
    vcs, source_queue, vc_buffer : int, str, str
        ``route``'s ``--vcs``, ``--source-queue`` and ``--vc-buffer``.
    base_dir : Path, optional

    Returns
    -------
    AdaptiveTrace
        With ``kind`` ``"paths"`` (no choices: the paths are fixed).

    Raises
    ------
    UserError
        Beyond the trace's limits, for a protocol it cannot follow, or for bad options.
    RuntimeError
        If the reference's run differs from the row's (a bug).
    """
    from universal.engine.batch import BatchRun, simulate
    from universal.engine.batch_specs import fixed_paths_spec, rule_of
    from universal.engine.reference_runs import simulate_reference
    from universal.engine.vcs import classes_of_paths, plan_vcs
    from universal.engine.routes import router_for_paths
    from universal.protocols import build_protocol
    from universal.reporting.trace import traced_collection

    proto = build_protocol(protocol)
    rule = rule_of(proto)
    if proto.bufferless or rule not in _FIXED_RULES:
        raise UserError(f"--trace follows {proto.name} on fixed paths with one buffer per link and the default "
                        "source queue only; with --vcs, --source-queue or --vc-buffer fifo use random-rank, "
                        "growing-rank, fifo, farthest-to-go, nearest-to-go or longest-in-system")
    collection, protocol_ss = traced_collection(network, problem, paths, seed=seed, base_dir=base_dir)
    options = dict(bandwidth=bandwidth, buffer=buffer, vcs=vcs, source_queue=source_queue, vc_buffer=vc_buffer)
    row = simulate(collection, proto, np.random.default_rng(protocol_ss), record_hops=True, **options)
    spec = fixed_paths_spec(collection, proto, None, np.random.default_rng(protocol_ss))
    needed = classes_of_paths(collection) if vcs != 1 else None
    if needed is not None:
        spec.injection = replace(spec.injection, vc_classes=needed)
    records: list = []
    record: dict = {"steps": records}
    lengths = collection.lengths
    run = simulate_reference(spec, max(int(lengths.sum()), 1), create_until=1, record=record, **options)
    delivered = np.array(run["delivered"], dtype=np.int64)
    delivery = np.where(lengths == 0, 0, np.where(delivered >= 0, delivered + 1, -1))
    if not (np.array_equal(delivery, row.delivery) and np.array_equal(_hop_steps(collection, record["crossings"]),
                                                                       row.hop_steps)):
        raise RuntimeError(f"{paths}: the reference engine's run differs from the one engine's")
    plan = plan_vcs(router_for_paths(collection), vcs, buffer, needed)
    names = None if plan is None or buffer is None else [f"c{c}" for c in range(plan.classes)]
    key_name, text = _FIXED_RULES[rule]
    ranks = spec.injection.ranks
    text = text.format(K=ranks[1] if ranks else None, D=ranks[2] if ranks else None)
    return AdaptiveTrace(BatchRun(collection, row), records, paths, proto.name, problem, seed, bandwidth, buffer,
                         "paths", None, vcs, source_queue, vc_buffer, names, key_name=key_name, rule=text)


def _hop_steps(collection, crossings: list) -> np.ndarray:
    """The batch step of every hop, aligned with ``collection.links``, from the reference's
    ``(step, packet, link)`` crossings (engine steps from 0; -1: not made)."""
    out = np.full(len(collection.links), -1, dtype=np.int64)
    made = np.zeros(collection.size, dtype=np.int64)
    for t, p, e in sorted(crossings):
        at = collection.offsets[p] + made[p]
        out[at] = t + 1 if int(collection.links[at]) == e else -2      # -2: off its path (never equal)
        made[p] += 1
    return out
