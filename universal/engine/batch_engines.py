"""How :func:`universal.engine.batch.simulate` runs a batch on paths fixed in advance beside the
general numpy engine: its hand-offs to the compiled kernels (:mod:`universal.engine.compiled`,
:mod:`universal.engine.compiled_dynamic`) and to the numpy batch engines
(:mod:`universal.engine.static_numpy`, :mod:`universal.engine.dynamic_numpy`), each drawing the
ranks as the protocol draws them; the result of a batch that moves nothing; and the step of every
hop from the general engine's crossings. Which engine runs is decided in
:func:`universal.engine.batch.simulate` (its switches, which tests set, live there).
"""

from __future__ import annotations

import numpy as np

from universal.engine.result import RoutingResult
from universal.paths import PathCollection

def _unmoved(collection: PathCollection, record_hops: bool, buffer: int | None) -> RoutingResult:
    """The result of a batch that moves nothing: every packet without a hop to make is delivered in
    step 0; if some have hops, no step was allowed (a step limit of 0)."""
    lengths = collection.lengths
    return RoutingResult(np.where(lengths == 0, 0, -1).astype(np.int64),
                         "step-limit" if lengths.any() else "delivered", 0, 0, 0,
                         hop_steps=np.full(len(collection.links), -1, dtype=np.int64) if record_hops else None,
                         buffer=buffer)


def _simulate_compiled(collection: PathCollection, protocol, rng: np.random.Generator, bandwidth: int,
                       buffer: int | None, step_limit: int | None, record_hops: bool) -> RoutingResult | None:
    """:func:`~universal.engine.batch.simulate` on a compiled kernel (the ranks drawn as the
    protocol draws them), or None (nothing drawn) when the kernel cannot pack the protocol's keys."""
    from universal.engine.compiled import route_static
    from universal.engine.compiled_dynamic import fits, route_dynamic

    lengths = collection.lengths
    dynamic = protocol.dynamic != "static"
    if dynamic and not fits(protocol, collection, step_limit):
        return None
    state = protocol.setup(rng, lengths, collection.congestion, collection.dilation)
    release = protocol.release_steps(state)
    if release is not None and protocol.dynamic != "on-move":
        raise TypeError(f"{protocol.name}: release steps need keys that change on moves")
    latest = int(release.max()) if release is not None and len(release) else 0
    hops = int(collection.offsets[-1] - collection.offsets[0])      # the sum of the lengths
    limit = hops + latest if step_limit is None else int(step_limit)
    if not hops or limit <= 0:    # nothing to move, or no step to move it in
        return _unmoved(collection, record_hops, buffer)
    if dynamic:
        return route_dynamic(collection, protocol, state, rng, bandwidth=bandwidth, buffer=buffer, limit=limit,
                             record_hops=record_hops)
    return route_static(collection, protocol, state, bandwidth=bandwidth, buffer=buffer, limit=limit,
                        record_hops=record_hops)


def _simulate_static_numpy(collection: PathCollection, protocol, rng: np.random.Generator, bandwidth: int,
                           buffer: int | None, step_limit: int | None, record_hops: bool) -> RoutingResult:
    """:func:`~universal.engine.batch.simulate` of a static priority on
    :mod:`universal.engine.static_numpy` (the ranks drawn as the protocol draws them)."""
    from universal.engine.static_numpy import route_static_numpy

    lengths = collection.lengths
    state = protocol.setup(rng, lengths, collection.congestion, collection.dilation)
    limit = int(lengths.sum()) if step_limit is None else int(step_limit)
    if not lengths.any() or limit <= 0:    # nothing to move, or no step to move it in
        return _unmoved(collection, record_hops, buffer)
    return route_static_numpy(collection, protocol, state, bandwidth=bandwidth, buffer=buffer, limit=limit,
                              record_hops=record_hops)


def _simulate_dynamic_numpy(collection: PathCollection, protocol, rng: np.random.Generator, bandwidth: int,
                            buffer: int | None, step_limit: int | None, record_hops: bool) -> RoutingResult | None:
    """:func:`~universal.engine.batch.simulate` of changing keys on
    :mod:`universal.engine.dynamic_numpy` (the ranks and delays drawn as the protocol draws them),
    or None (nothing drawn) when its keys do not pack into 64 bits."""
    from universal.engine.dynamic_numpy import fits, route_dynamic_numpy

    lengths = collection.lengths
    if not fits(protocol, collection):
        return None
    state = protocol.setup(rng, lengths, collection.congestion, collection.dilation)
    release = protocol.release_steps(state)
    latest = int(release.max()) if release is not None and len(release) else 0
    limit = int(lengths.sum()) + latest if step_limit is None else int(step_limit)
    if not lengths.any() or limit <= 0:    # nothing to move, or no step to move it in
        return _unmoved(collection, record_hops, buffer)
    return route_dynamic_numpy(collection, protocol, state, rng, bandwidth=bandwidth, buffer=buffer, limit=limit,
                               record_hops=record_hops)


def _fill_hop_steps(hop_steps: np.ndarray, offsets: np.ndarray, crossings: np.ndarray) -> None:
    """Write the step of every hop (batch numbering) at its place in the flat path array: a
    packet's crossings, in step order, are its path's links in order."""
    order = np.lexsort((crossings[:, 0], crossings[:, 1]))
    step, packet = crossings[order, 0], crossings[order, 1]
    hop = np.arange(len(packet)) - np.searchsorted(packet, packet)
    hop_steps[offsets[packet] + hop] = step + 1
