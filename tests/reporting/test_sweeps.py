"""The one-line conclusions under a sweep's table."""

from __future__ import annotations

import re

from universal.experiment import Experiment
from universal.reporting.sweeps import growth_exponent, sweep_conclusion
from universal.sweep import Sweep, run_sweep


def test_growth_is_fitted_within_one_network_family():
    """A sweep over butterflies and meshes reports T's growth per family, never one power law
    across both (the fit over unlike networks would mix their constants into the exponent)."""
    sweep = Sweep("mixed", Experiment("{net}", "h-relation:h=1", ["valiant"], ["fifo"]),
                  {"net": ["butterfly:d=3", "butterfly:d=4", "mesh:k=3,n=2", "mesh:k=4,n=2"]})
    result = run_sweep(sweep)
    line = sweep_conclusion(result)
    powers = re.findall(r"N\^(-?[\d.]+) \(C like N\^-?[\d.]+\) on (\w+)", line)
    assert [family for _, family in powers] == ["butterfly", "mesh"]
    for (power, family) in powers:
        cells = [c for c in result.cells if c.network["name"].startswith(family)]
        times = [c.rows[0].T for c in cells]
        assert float(power) == round(growth_exponent([c.network["nodes"] for c in cells], times), 2)


def test_one_family_is_not_named():
    sweep = Sweep("bf", Experiment("butterfly:d={d}", "h-relation:h=1", ["valiant"], ["fifo"]), {"d": [3, 4]})
    line = sweep_conclusion(run_sweep(sweep))
    assert re.search(r"T grows like N\^[\d.]+ \(C like N\^[\d.]+\)\.", line)
    assert " on butterfly" not in line
