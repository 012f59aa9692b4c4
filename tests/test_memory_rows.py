"""The memory estimate of a butterfly's level paths kept as rows: it says, before the run, whether
the path array will be written, and where it will not, counts the arrays the run keeps instead.

Oracles: the run itself (whether its :class:`~universal.paths.level_rows.LevelRowsCollection`
wrote its path array, with the thresholds lowered so that a small butterfly keeps rows), and the
sizes of the arrays a kept-rows run holds (no memory is measured here; docs/engine.md, "Memory", gives the peaks
``/usr/bin/time -v`` measured).
"""

from __future__ import annotations

import numpy as np
import pytest

from universal import memory
from universal.engine import batch
from universal.experiment import Experiment, _estimate_bytes, _plan, _writes_path_array, run_experiment
from universal.networks import build_network
from universal.paths import level_loads, route_paths, systems
from universal.paths.level_rows import LevelRowsCollection
from universal.workloads import build_problem

pytestmark = pytest.mark.skipif(not level_loads.NUMBA, reason="numba is not installed: no path collection keeps "
                                                               "rows, every path array is written")


@pytest.fixture
def small_keeps_rows(monkeypatch):
    """Small butterflies keep their level paths as rows and route them on the compiled kernels;
    returns the list every LevelRowsCollection built is appended to."""
    monkeypatch.setattr(systems, "CLOSED_MIN_HOPS", 1)
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_COLD", 1)
    monkeypatch.setattr(batch, "COMPILED_MIN_HOPS_WARM", 1)
    built = []
    init = LevelRowsCollection.__init__

    def keep(self, *args, **kwargs):
        init(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(LevelRowsCollection, "__init__", keep)
    return built


# BF(10) with an 8-relation over Valiant paths: 163,840 hops, above the in-cache kernel's 2^17
CASES = [
    ("valiant", ["random-rank"], {}, {}, False),
    ("valiant", ["longest-in-system"], {}, {}, False),
    ("dimension-order", ["random-rank"], {}, {}, False),
    ("valiant:base=shortest", ["random-rank"], {}, {}, False),
    ("valiant", ["random-rank"], {"bandwidth": 2}, {}, True),        # the general loop reads the links
    ("valiant", ["random-rank"], {"buffer": 1}, {}, True),           # buffers that can refuse
    ("valiant", ["random-rank", "fifo"], {}, {}, True),              # keys that change
    ("valiant", ["growing-rank"], {}, {}, True),
    ("valiant", ["trial-and-failure"], {}, {}, True),                # bufferless rounds
    ("valiant", ["random-rank"], {"analyze": True}, {}, False),     # the loads kept, not recounted
    ("valiant", ["random-rank"], {"analyze": True}, {"large": True}, True),
    ("valiant", ["random-rank"], {"engine": "reference"}, {}, True),
    ("valiant", ["random-rank"], {}, {"keep_runs": True}, True),     # hop steps (--html)
    ("valiant", ["random-rank"], {}, {"keep_link_loads": True}, False),    # --links
    ("valiant", ["random-rank"], {}, {"keep_link_loads": True, "large": True}, True),
]


@pytest.mark.parametrize("system,protocols,options,keep,written", CASES)
def test_the_estimate_knows_whether_the_run_writes_the_path_array(small_keeps_rows, monkeypatch, system, protocols,
                                                                  options, keep, written):
    """``large``: a host above the size that keeps the link loads (they are counted again from the
    path array when --analyze or --links reads them)."""
    keep = dict(keep)
    if keep.pop("large", False):
        from universal.paths import collection
        for module in (memory, collection, systems):
            monkeypatch.setattr(module, "KEEP_LOADS_LINKS", 1000)
    d, h = (10, 8) if system.startswith("valiant") else (12, 4)
    exp = Experiment(f"butterfly:d={d}", f"h-relation:h={h}", [system], protocols, **options)
    plan = _plan(exp, **keep)
    packets = h << d
    assert _writes_path_array(plan.network, packets, system, plan.runs) is written
    run_experiment(exp, **keep)
    collection = small_keeps_rows[0]        # the routed one (--analyze draws more for E[C])
    assert collection.links_written is written
    # with C known (the check made again once the paths exist) the answer is the same
    assert _writes_path_array(plan.network, packets, system, plan.runs, collection.congestion) is written


def test_a_congestion_too_large_for_the_node_words_writes_the_path_array(small_keeps_rows, monkeypatch):
    """Before the paths exist C is taken to fit the words; once known, a C above it says written,
    as the run does."""
    from universal.engine import compiled, node_words

    exp = Experiment("butterfly:d=10", "h-relation:h=8", ["valiant"], ["random-rank"])
    plan = _plan(exp)
    monkeypatch.setattr(node_words, "LEVELS_MAX_CONGESTION", 2)
    assert not _writes_path_array(plan.network, 8 << 10, "valiant", plan.runs)
    run_experiment(exp)
    collection, = small_keeps_rows
    assert collection.congestion > 2 and collection.links_written
    assert _writes_path_array(plan.network, 8 << 10, "valiant", plan.runs, collection.congestion)
    assert compiled.node_words_take is node_words.node_words_take     # the engine asks the same function


@pytest.mark.parametrize("d", [18, 20])
def test_the_kept_rows_estimate_covers_the_runs_arrays_and_is_below_the_path_array_one(small_keeps_rows, d):
    """BF(18) and BF(20), a 4-relation over Valiant paths: the estimate is at least the arrays the
    run holds in its step loop, scaled from a small collection's real arrays, and below the
    estimate that counts the path array (0.55 and 1.71 GB before)."""
    net = build_network("butterfly:d=8")
    small = route_paths("valiant", build_problem("h-relation:h=4", net, np.random.default_rng(0)), net,
                        np.random.default_rng(1))
    rows = small.level_rows[1]
    # held per packet through the run: the problem's ends (the paths share the sources), the
    # rows, the paths' ends and offsets
    held = (small.sources.nbytes + small.dests.nbytes * 2 + small.offsets.nbytes
            + sum(a.nbytes for a in {id(a): a for pair in rows for a in pair}.values())) / small.size
    # the engine's: ranks (int64), the priority order and the places (int32), delivery steps
    # (int64) and the two 64-bit packet words
    engine = 8 + 4 + 4 + 8 + 16
    packets = 4 << d
    host = build_network(f"butterfly:d={d}")
    host_links = 2 * host.num_links
    words = (host_links >> 2) * 4             # 32-bit node words (C >= 16)
    levels = host_links // 4                  # a byte per node of the two butterflies
    main = (held + engine) * packets + words + levels
    exp = Experiment(f"butterfly:d={d}", "h-relation:h=4", ["valiant"], ["random-rank"])
    plan = _plan(exp)
    estimate = _estimate_bytes(plan.network, packets, "valiant", plan.runs)
    assert estimate == memory.kept_rows_bytes(packets, host_links)
    assert estimate - memory.BASE_BYTES >= main
    old = memory.route_bytes(packets * 2 * d, host_links, packets, copied=False)
    assert estimate < old
    assert _estimate_bytes(plan.network, packets, "valiant", None) == old     # runs unknown: the path array


def test_route_refuses_with_the_kept_rows_estimate(monkeypatch, capsys):
    """With 0.5 GB available, BF(20) with a 4-relation over Valiant paths is refused at its kept
    rows' 0.9 GB (1.7 GB with B = 2, which writes the path array), before anything is allocated."""
    from tests.test_cli import assert_user_error
    from universal.cli import main

    monkeypatch.setattr(memory, "available_bytes", lambda: 500_000_000)
    command = ["route", "--network", "butterfly:d=20", "--problem", "h-relation:h=4", "--paths", "valiant",
               "--protocols", "random-rank"]
    assert_user_error(main(command), *capsys.readouterr(), "would need about 0.9 GB of memory")
    assert_user_error(main(command + ["--bandwidth", "2"]), *capsys.readouterr(), "would need about 1.7 GB of memory")


def test_buffers_at_least_c_count_the_path_array_until_c_is_known(small_keeps_rows):
    """b >= C never refuses, so the run routes from the rows; before the paths exist C is not
    known and the estimate counts the array (an upper bound), once known it does not."""
    exp = Experiment("butterfly:d=10", "h-relation:h=8", ["valiant"], ["random-rank"], buffer=64)
    plan = _plan(exp)
    assert _writes_path_array(plan.network, 8 << 10, "valiant", plan.runs)
    run_experiment(exp)
    collection, = small_keeps_rows
    assert collection.congestion <= 64 and not collection.links_written
    assert not _writes_path_array(plan.network, 8 << 10, "valiant", plan.runs, collection.congestion)
