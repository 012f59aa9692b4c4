"""The synchronous packet engine: the one engine's batch front end (paths fixed in advance, the
survey's protocols) and its pure-Python reference.

``simulate`` routes a path collection on the one engine (:mod:`universal.engine.runs`, through
:func:`universal.engine.batch.simulate`; large batches on its compiled kernel where numba is
installed); ``simulate_reference`` is the slow, obvious oracle it must equal.

>>> import numpy as np
>>> from universal.networks import build_network
>>> from universal.workloads import build_problem
>>> from universal.paths import route_paths
>>> from universal.engine import simulate
>>> net = build_network("butterfly:d=5")
>>> prob = build_problem("h-relation:h=2", net, np.random.default_rng(1))
>>> paths = route_paths("valiant", prob, net, np.random.default_rng(2))
>>> simulate(paths, "growing-rank", np.random.default_rng(3)).delivered == paths.size
True
"""

from universal.engine.batch import simulate
from universal.engine.result import RoutingResult


def _reference(*args, **kwargs) -> RoutingResult:
    """:func:`universal.engine.reference.simulate_reference`, imported when first called: a route
    on the one engine never loads the reference."""
    from universal.engine.reference import simulate_reference as run

    return run(*args, **kwargs)


def __getattr__(name: str):
    # ``from universal.engine import simulate_reference`` imports the reference then
    if name == "simulate_reference":
        from universal.engine.reference import simulate_reference

        return simulate_reference
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Engines by name (``route --engine``, a scenario's ``engine``): ``fast`` is kept as a name of the
#: one engine for the scenarios and scripts that name the retired vectorised batch engine.
ENGINES = {"one": simulate, "fast": simulate, "reference": _reference}
simulate_one = simulate

__all__ = ["ENGINES", "RoutingResult", "simulate", "simulate_one", "simulate_reference"]
