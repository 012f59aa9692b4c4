"""The torus routings' names, filed in PATH_SYSTEMS without loading the routings, mirror the
routing tables themselves: name for name, in order, summary for summary."""

from __future__ import annotations

from universal.paths.systems import PATH_SYSTEMS
from universal.paths.torus import ROUTING_FACTORIES, ROUTINGS
from universal.paths.torus_names import DATA_GIVEN, OBLIVIOUS


def test_the_oblivious_names_mirror_the_routings():
    assert OBLIVIOUS == {name: routing.summary for name, routing in ROUTINGS.items()}
    assert list(OBLIVIOUS) == list(ROUTINGS)


def test_the_data_given_names_mirror_the_factories():
    assert DATA_GIVEN == {name: summary for name, (summary, _) in ROUTING_FACTORIES.items()}
    assert list(DATA_GIVEN) == list(ROUTING_FACTORIES)


def test_every_torus_routing_is_a_path_system_with_its_summary():
    for name, summary in (OBLIVIOUS | DATA_GIVEN).items():
        assert PATH_SYSTEMS.entry(name).summary == f"{summary} (tori only)"
