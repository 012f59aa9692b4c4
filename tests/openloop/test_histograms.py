"""Latency histograms, the router delay and the saturation throughput of random permutations
(issue 24 scope 4; Singh, Dally, Gupta & Towles, "GOAL: a load-balanced adaptive routing
algorithm for torus networks", 2003, §5.3-§5.4, Figures 9-12)."""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pytest

from universal.openloop.histograms import display_bins, latency_histogram
from universal.openloop.study import OpenLoopStudy, run_study

#: Every translate of the pair A(0,0) -> C(1,3) of GOAL §5.4 on the 8-ary 2-cube: under uniform
#: traffic the torus's translation symmetry gives them one latency distribution, so their
#: histograms pooled hold 64 times the packets of one pair in the same (short) window.
C_PAIRS = [f"{x},{y}->{(x + 1) % 8},{(y + 3) % 8}" for x in range(8) for y in range(8)]


def pooled_pair_histogram(routing: str) -> np.ndarray:
    """Counts by latency of the pooled (1,3)-offset pairs at offered 0.2 under uniform traffic."""
    rep = run_study(OpenLoopStudy("torus:k=8,n=2", [routing], ["uniform"], loads=[0.2], window=2000,
                                  histogram=True, pairs=C_PAIRS))
    counts = np.zeros(200, dtype=np.int64)
    for p in rep.pairs:
        h = p["histogram"]
        assert h["width"] == 1
        counts[h["start"]:h["start"] + len(h["counts"])] += h["counts"]
    return counts


def figure_12_shape(counts: np.ndarray, hops: int = 4) -> bool:
    """GOAL Figure 12's shape: nothing below the hop count H, the peak at H, and beyond it counts
    that fall like an exponential (a geometric queueing delay): every bin smaller than the one
    before, log counts on a line (R^2 >= 0.95 over the bins of at least 5 packets, at least 3 of
    them) whose slope loses at least half per step."""
    if counts[:hops].any() or int(np.argmax(counts)) != hops:
        return False
    tail = counts[hops:np.flatnonzero(counts)[-1] + 1]
    if not np.all(np.diff(tail) < 0):
        return False
    fit = tail[tail >= 5]
    if len(fit) < 3:
        return False
    x, y = np.arange(len(fit)), np.log(fit)
    slope, intercept = np.polyfit(x, y, 1)
    r2 = 1 - ((y - (slope * x + intercept)) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    return r2 >= 0.95 and slope <= np.log(0.5)


def test_min_adaptive_pair_histogram_peaks_at_h_and_falls_exponentially():
    counts = pooled_pair_histogram("min-adaptive")
    assert counts.sum() > 300
    assert figure_12_shape(counts), counts[:12].tolist()
    # the mean queueing delay Q = T - H is a fraction of a step (GOAL: 0.44 for MIN AD)
    q = (np.arange(len(counts)) - 4) @ counts / counts.sum()
    assert 0.1 < q < 0.8


def test_the_shape_check_fails_for_valiant():
    # VAL's packets go through a random intermediate node: H is anything from 4 to 12, so no peak
    # at 4 and no exponential fall; the check of the test above tells the two apart
    assert not figure_12_shape(pooled_pair_histogram("val"))


def test_histograms_hold_every_labelled_packet_and_match_the_summary():
    rep = run_study(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.3], window=500,
                                  histogram=True, pairs=["0,0->1,1"]))
    row, pair = rep.rows[0], rep.pairs[0]
    h = row["histogram"]
    values = np.repeat(h["start"] + np.arange(len(h["counts"])), h["counts"])
    assert h["packets"] == len(values) and values.max() == row["latency_max"]
    assert values.mean() == pytest.approx(row["latency_mean"])
    assert pair["histogram"]["packets"] == pair["packets"] > 0
    assert pair["histogram"]["start"] >= 2                   # (0,0) -> (1,1) is two hops


def test_router_delay_adds_t_per_hop_and_leaves_throughput_alone():
    def run(delay):
        return run_study(OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.3], window=500,
                                       histogram=True, router_delay=delay, pairs=["0,0->1,1"]))
    plain, slow = run(0), run(3)
    a, b = plain.rows[0], slow.rows[0]
    assert b["accepted"] == a["accepted"] and b["accepted_min"] == a["accepted_min"]
    assert b["latency_mean"] == pytest.approx(a["latency_mean"] + 3 * a["hops_mean"])
    assert slow.pairs[0]["latency_mean"] == pytest.approx(plain.pairs[0]["latency_mean"] + 3 * 2)
    assert slow.pairs[0]["histogram"]["start"] == plain.pairs[0]["histogram"]["start"] + 6
    assert slow.to_json()["router_delay"] == 3 and "router_delay" not in plain.to_json()


def test_a_router_delay_shifts_the_zero_load_latency_of_a_saturation_table():
    def run(delay):
        return run_study(OpenLoopStudy("torus:k=8,n=1", ["dor"], ["tornado"], saturation=True, window=1000,
                                       tolerance=0.1, router_delay=delay)).rows[0]
    plain, slow = run(0), run(2)
    assert slow["saturation"] == plain["saturation"]
    assert slow["zero_load_latency"] == pytest.approx(plain["zero_load_latency"] + 2 * 3)


def test_histogram_format_and_display_bins():
    h = latency_histogram(np.array([3, 3, 4, 9]))
    assert h == {"start": 3, "width": 1, "counts": [2, 1, 0, 0, 0, 0, 1], "packets": 4}
    assert sum(c for _, _, c in display_bins(h, max_bins=2, tail=0.5)) == 4


def test_a_results_file_with_histograms_resumes_and_refuses_a_bad_one(tmp_path):
    from universal.errors import UserError

    study = OpenLoopStudy("torus:k=4,n=2", ["dor"], ["uniform"], loads=[0.2, 0.3], window=300, histogram=True)
    path = tmp_path / "r.jsonl"
    whole = run_study(study, results_file=path)
    again = run_study(study, results_file=path, resume=True)
    assert again.resumed == 2 and json.dumps(again.rows) == json.dumps(whole.rows)
    lines = path.read_text().splitlines()
    line = json.loads(lines[1])
    line["row"]["histogram"]["packets"] += 1
    path.write_text("\n".join([lines[0], json.dumps(line)]) + "\n")
    with pytest.raises(UserError, match="histogram"):
        run_study(study, results_file=path, resume=True)


# ----------------------------------------------------------------- random permutations (Figure 9)

def perms_study(**kw) -> OpenLoopStudy:
    return OpenLoopStudy("torus:k=4,n=2", ["dor"], ["random-perms:3"], saturation=True, window=400,
                         tolerance=0.05, **kw)


@cache
def perms_report(seed: int = 0):
    """One study per seed for the tests that only read it (each is a few saturation searches)."""
    return run_study(perms_study(seeds=[seed]))


def test_random_perms_give_one_theta_per_permutation_beside_its_exact_value():
    rep = perms_report(0)
    rows = rep.rows
    assert [r["permutation"] for r in rows] == [0, 1, 2]
    for r in rows:       # the simulation and the analysis of one permutation agree
        assert 0.9 <= r["ratio"] <= 1.1
    s, = rep.to_json()["random_perms"]
    thetas = [r["saturation"] for r in rows]
    assert (s["permutations"], s["min"], s["max"]) == (3, min(thetas), max(thetas))
    assert s["mean"] == pytest.approx(np.mean(thetas))


def test_random_perms_are_the_permutations_load_analyses(capsys):
    # the exact values are of the permutations `universal load` draws with the same seed
    from universal.cli import main

    rep = perms_report(4)
    assert main(["load", "--network", "torus:k=4,n=2", "--routing", "dor", "--traffic", "random-perms:3",
                 "--seed", "4", "--json"]) == 0
    row, = json.loads(capsys.readouterr().out)["rows"]
    assert min(r["analytic_value"] for r in rep.rows) == pytest.approx(row["throughput"])


def test_random_perms_are_reproducible_and_seeded():
    a, b = perms_report(0), run_study(perms_study(seeds=[0]))
    assert json.dumps(a.rows) == json.dumps(b.rows)
    c = perms_report(4)
    assert [r["analytic_value"] for r in c.rows] != [r["analytic_value"] for r in a.rows] or \
        [r["saturation"] for r in c.rows] != [r["saturation"] for r in a.rows]
