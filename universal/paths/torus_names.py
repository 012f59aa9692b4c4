"""The torus routings' public names and one-line summaries, without the routings.

:data:`universal.paths.systems.PATH_SYSTEMS` files every routing of :mod:`universal.paths.torus`
under its name, so that ``--paths`` accepts it and ``--help`` and an unknown name's message list
it; the routings themselves load when one is first built. A butterfly ``route`` then never imports
the torus package (start-up). The table mirrors :data:`universal.paths.torus.ROUTINGS` (closed
forms) and :data:`universal.paths.torus.ROUTING_FACTORIES` (data-given routings), in their order,
name for name and word for word (``tests/paths/test_torus_names.py``): a new routing is added there
and here.

>>> list(OBLIVIOUS)[:3], "lp" in DATA_GIVEN
(['dor', 'val', 'romm'], True)
"""

from __future__ import annotations

#: The closed-form oblivious routings, :data:`universal.paths.torus.ROUTINGS`: name -> summary.
OBLIVIOUS: dict[str, str] = {
    "dor": "dimension order (x first), minimal, ties split evenly between both directions",
    "val": "Valiant: DOR to a uniformly random intermediate node, then DOR to the destination",
    "romm": "two-phase ROMM: uniform intermediate in the minimal quadrant, random dimension orders",
    "rlb": "randomized local balance: short way with prob (k-D)/k per dimension, ROMM in the quadrant",
    "rlbth": "RLB threshold: like RLB, but always the short way where the distance is below k/4",
    "ival": ("improved Valiant: VAL with the second phase in the reverse of a random first "
             "dimension order, loops removed (order=xy: always x first)"),
}

#: The routings given by data (designed, mixed, read from a file),
#: :data:`universal.paths.torus.ROUTING_FACTORIES`: name -> summary.
DATA_GIVEN: dict[str, str] = {
    "mix": "interpolated routing: mix:dor=0.25,ival=0.75 (weights sum to 1)",
    "2turn": "2TURN: at most two turns, worst-case optimal then shortest (LP, cached)",
    "2turna": "2TURNA: at most two turns, average-case optimal then shortest (LP, cached)",
    "lp": "a saved designed routing: lp:file=PATH (see universal design --save)",
}
