"""A small, plainly written reference engine: the test oracle for :mod:`universal.engine.fast`.

It follows SPEC §2 literally, one packet at a time: every step, each waiting packet names the
link it wants; each link sorts its contenders by (key, id) and lets the first B cross. It is
slow on purpose and shares nothing with the fast engine but the protocols' random draws (the
same generator calls in the same order), so the two must agree step for step.
"""

from __future__ import annotations

import numpy as np

from universal.engine.result import RoutingResult
from universal.paths import PathCollection
from universal.protocols import Protocol, build_protocol


def simulate_reference(collection: PathCollection, protocol: str | Protocol, rng: np.random.Generator, *,
                       bandwidth: int = 1, step_limit: int | None = None,
                       record_hops: bool = False) -> RoutingResult:
    """Same contract as :func:`universal.engine.fast.simulate`, in pure Python.

    Examples
    --------
    >>> import numpy as np
    >>> from universal.networks import butterfly
    >>> from universal.workloads import build_problem
    >>> from universal.paths import route_paths
    >>> net = butterfly(3)
    >>> prob = build_problem("permutation:random", net, np.random.default_rng(0))
    >>> paths = route_paths("dimension-order", prob, net, np.random.default_rng(0))
    >>> simulate_reference(paths, "fifo", np.random.default_rng(0)).status
    'delivered'
    """
    protocol = build_protocol(protocol)
    if bandwidth < 1:
        raise ValueError("bandwidth must be >= 1")
    paths = [collection.links[collection.offsets[i]:collection.offsets[i + 1]].tolist()
             for i in range(collection.size)]
    n = len(paths)
    lengths = np.array([len(p) for p in paths], dtype=np.int64)
    state = protocol.setup(rng, lengths, collection.congestion, collection.dilation)
    limit = int(lengths.sum()) if step_limit is None else int(step_limit)

    hops = [0] * n
    hop_steps = [[-1] * len(p) for p in paths]
    arrival = [0] * n
    delivery = [0 if len(p) == 0 else -1 for p in paths]
    step = 0
    max_buffer = 0
    total = 0
    status = "delivered"
    while True:
        waiting = [i for i in range(n) if delivery[i] < 0]
        if not waiting:
            break
        if step >= limit:
            status = "step-limit"
            break
        step += 1
        if protocol.dynamic == "per-step":
            fresh = protocol.draw_step_keys(rng, len(waiting))
            key = {i: int(k) for i, k in zip(waiting, fresh)}
        else:
            key = {i: protocol.reference_key(state, i, hops[i], arrival[i]) for i in waiting}

        contenders: dict[int, list[tuple[int, int]]] = {}
        for i in waiting:
            contenders.setdefault(paths[i][hops[i]], []).append((key[i], i))
        for link in contenders:
            for _, i in sorted(contenders[link])[:bandwidth]:
                hop_steps[i][hops[i]] = step
                hops[i] += 1
                arrival[i] = step
                total += 1
                if hops[i] == len(paths[i]):
                    delivery[i] = step

        buffers: dict[int, int] = {}
        for i in range(n):
            if delivery[i] < 0 and hops[i] > 0:
                last = paths[i][hops[i] - 1]
                buffers[last] = buffers.get(last, 0) + 1
        max_buffer = max([max_buffer, *buffers.values()])
    flat_steps = np.array([s for per_path in hop_steps for s in per_path], dtype=np.int64)
    return RoutingResult(delivery=np.array(delivery, dtype=np.int64), status=status, steps=step,
                         max_buffer=max_buffer, hops=total, hop_steps=flat_steps if record_hops else None)
