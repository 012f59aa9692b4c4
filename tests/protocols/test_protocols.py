"""The protocol registry (SPEC §6, §8): names, parameters, bound expressions and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from universal.errors import UserError
from universal.protocols import PROTOCOLS, Protocol, build_protocol

BUFFERED = ["random-rank", "growing-rank", "fifo", "farthest-to-go", "nearest-to-go", "longest-in-system", "random"]
RANKED = ["random-rank", "growing-rank"]
GREEDY = ["fifo", "farthest-to-go", "nearest-to-go", "longest-in-system", "random"]


def test_the_buffered_protocols_are_registered():
    """The seven buffered protocols of SPEC §8 are all in the registry."""
    assert set(BUFFERED) <= set(PROTOCOLS.names())


@pytest.mark.parametrize("name", PROTOCOLS.names())
def test_every_registered_protocol_builds_by_name(name):
    """Each registered name builds a Protocol that knows its name and has a one-line summary."""
    protocol = build_protocol(name)
    assert isinstance(protocol, Protocol)
    assert protocol.name == name
    assert protocol.summary and "\n" not in protocol.summary
    assert name in PROTOCOLS


@pytest.mark.parametrize("name", BUFFERED)
def test_underscore_and_case_forms_are_accepted(name):
    """Python may use ``farthest_to_go`` for ``farthest-to-go`` (and any letter case)."""
    assert build_protocol(name.replace("-", "_")).name == name
    assert build_protocol(name.upper()).name == name


def test_a_protocol_object_is_returned_as_is():
    protocol = build_protocol("fifo")
    assert build_protocol(protocol) is protocol


@pytest.mark.parametrize("name", RANKED)
def test_rank_protocols_report_their_bound(name):
    """Random and growing rank: bound C + D + log n (log base 2)."""
    protocol = build_protocol(name)
    assert protocol.bound_expr == "C + D + log n"
    for C, D, n in [(4, 6, 64), (10, 3, 1024), (1, 1, 2), (7, 9, 1000)]:
        assert protocol.bound(C, D, n) == pytest.approx(C + D + math.log2(n))


@pytest.mark.parametrize("name", GREEDY)
def test_greedy_protocols_have_no_bound(name):
    protocol = build_protocol(name)
    assert protocol.bound_expr is None
    assert protocol.bound(4, 6, 64) is None


@pytest.mark.parametrize("name", RANKED)
def test_rank_range_parameter(name):
    """``NAME:K=64`` fixes K (also as lower-case ``k``); without it K = C + D + ceil(log2 n)."""
    assert build_protocol(f"{name}:K=64").K == 64
    assert build_protocol(f"{name}:k=5").K == 5
    default = build_protocol(name)
    assert default.K is None
    assert default.rank_range(3, 4, 100) == 3 + 4 + 7
    state = build_protocol(f"{name}:K=64").setup(np.random.default_rng(0), np.array([2, 3, 1]), 2, 3)
    assert state.K == 64
    assert state.ranks.shape == (3,) and state.ranks.min() >= 0 and state.ranks.max() < 64


@pytest.mark.parametrize("name", BUFFERED)
def test_every_protocol_draws_the_same_initial_ranks(name):
    """All protocols draw their ranks first, so runs of different protocols with one seed
    consume the generator alike up to the first step."""
    lengths = np.array([3, 1, 4, 1, 5])
    got = build_protocol(name).setup(np.random.default_rng(9), lengths, 2, 5).ranks
    want = np.random.default_rng(9).integers(0, 2 + 5 + 3, size=5)
    np.testing.assert_array_equal(got, want)


def test_unknown_protocol_is_a_one_line_user_error():
    """An unknown name names the known ones, on one line."""
    with pytest.raises(UserError) as info:
        build_protocol("smallest-rank")
    message = str(info.value)
    assert "\n" not in message
    assert "smallest-rank" in message
    for name in BUFFERED:
        assert name in message


@pytest.mark.parametrize("text", ["fifo:K=3", "random-rank:depth=2", "growing-rank:K=8,x=1"])
def test_unknown_parameter_is_a_user_error(text):
    with pytest.raises(UserError) as info:
        build_protocol(text)
    assert "\n" not in str(info.value)
    assert "unknown parameter" in str(info.value)


@pytest.mark.parametrize("text", ["random-rank:K=0", "growing-rank:K=-3", "growing-rank:K=many", "random-rank:K="])
def test_bad_rank_range_is_a_user_error(text):
    """K must be a positive integer."""
    with pytest.raises(UserError):
        build_protocol(text)


def test_empty_name_is_a_user_error():
    with pytest.raises(UserError):
        build_protocol("  ")
