"""Pooling a pair's translates (issue 24 scope 4; Singh, Dally, Gupta & Towles, "GOAL: a
load-balanced adaptive routing algorithm for torus networks", 2003, §5.4, Figure 11): on a torus
under translation-invariant traffic, the pair s->d and every (s+t)->(d+t) share one latency
distribution, so their packets can be pooled."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

from tests.test_bad_inputs import assert_refused
from universal.cli import main
from universal.errors import UserError
from universal.openloop.histograms import Translations, translate_mask, translations_of
from universal.openloop.study import OpenLoopStudy, run_study

K = 4                       # torus:k=4,n=2, 16 nodes: fast, and 16 translates per pair
NET = f"torus:k={K},n=2"


def translates_by_hand(sx: int, sy: int, dx: int, dy: int) -> list[str]:
    """Every translate of (sx,sy)->(dx,dy) on the k-ary 2-cube, by coordinate arithmetic."""
    return [f"{(sx + a) % K},{(sy + b) % K}->{(dx + a) % K},{(dy + b) % K}" for a in range(K) for b in range(K)]


def values(hist: dict) -> np.ndarray:
    """The latencies a stored width-1 histogram holds, one per packet."""
    assert hist["width"] == 1
    return np.repeat(hist["start"] + np.arange(len(hist["counts"])), hist["counts"])


def study(pairs: list[str], **kw) -> OpenLoopStudy:
    options = dict(loads=[0.45], window=3000, histogram=True)
    return OpenLoopStudy(NET, [kw.pop("routing", "dor")], [kw.pop("traffic", "uniform")], pairs=pairs,
                         **{**options, **kw})


# ---------------------------------------------------------------- the pooled counts (a second method)

@pytest.mark.parametrize("routing, traffic, pair", [
    ("dor", "uniform", "0,0->1,3"),
    ("min-adaptive", "neighbor", "2,1->3,1"),
    ("goal", "tornado", "0,0->1,0"),
])
def test_the_pooled_pair_holds_exactly_the_packets_of_its_translates_counted_one_by_one(routing, traffic, pair):
    (sx, sy), (dx, dy) = (tuple(int(c) for c in end.split(",")) for end in pair.split("->"))
    one = run_study(study([pair], routing=routing, traffic=traffic, pool_translates=True))
    each = run_study(study(translates_by_hand(sx, sy, dx, dy), routing=routing, traffic=traffic))
    pooled = one.pairs[0]
    assert pooled["translates"] == K * K == len(each.pairs)
    assert pooled["packets"] == sum(p["packets"] for p in each.pairs) > 1000
    assert sorted(values(pooled["histogram"])) == sorted(np.concatenate([values(p["histogram"]) for p in each.pairs]))
    weights = np.array([p["packets"] for p in each.pairs])
    means = np.array([p["latency_mean"] for p in each.pairs])
    assert pooled["latency_mean"] == pytest.approx(weights @ means / weights.sum())
    assert each.rows == one.rows            # pooling reads the run; it does not change it
    # so do pairs: the pair recorded alone is the first of its translates recorded together
    assert run_study(study([pair], routing=routing, traffic=traffic)).pairs[0] == each.pairs[0]


def test_translate_mask_against_pairs_listed_by_hand():
    group = translations_of(__import__("universal.networks", fromlist=["build_network"]).build_network(NET))
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 16, 2000), rng.integers(0, 16, 2000)
    label = lambda v: f"{v % K},{v // K}"                                   # noqa: E731
    wanted = set(translates_by_hand(1, 0, 3, 3))
    by_hand = np.array([f"{label(a)}->{label(b)}" in wanted for a, b in zip(src, dst)])
    assert np.array_equal(translate_mask((src, dst, None, None), group, 1, 15), by_hand)
    assert by_hand.sum() > 50


def test_a_hypercube_pools_by_xor():
    g = Translations(2, 3)
    src = np.arange(8)
    assert translate_mask((src, src ^ 0b101, None, None), g, 0, 0b101).all()
    assert not translate_mask((src, src ^ 0b100, None, None), g, 0, 0b101).any()


# ------------------------------------------------- the pooled distribution is the pair's own (sampling)

def test_the_pooled_mean_agrees_with_the_single_pair_within_sampling_error():
    # random-rank has no ties by packet id, so every translate sees the pair's distribution; a long
    # run gives the single pair about 1,100 packets and the pooled one 16 times as many
    base = dict(priority="random-rank", window=20000)
    single = random_rank_translates().pairs[0]          # (0,0)->(1,3) itself, by the run's first pair
    pooled = run_study(study(["0,0->1,3"], pool_translates=True, **base)).pairs[0]
    a, b = values(single["histogram"]), values(pooled["histogram"])
    assert len(b) > 15 * len(a) > 15_000
    se = np.sqrt(a.var() / len(a) + b.var() / len(b))
    assert abs(a.mean() - b.mean()) < 4 * se, (a.mean(), b.mean(), se)
    # the share at the hop count H = 2 (no queueing at all) agrees as well
    p, q = (a == 2).mean(), (b == 2).mean()
    assert abs(p - q) < 4 * np.sqrt(p * (1 - p) / len(a) + q * (1 - q) / len(b))
    # and pooling the translates of another pair would not: (0,0)->(2,2) is four hops
    other = values(run_study(study(["0,0->2,2"], pool_translates=True, **base)).pairs[0]["histogram"])
    assert other.mean() - b.mean() > 1.5


def translates_run(priority: str, **kw):
    """A run that records each of the 16 translates of (0,0)->(1,3) as a pair of its own."""
    return run_study(study(translates_by_hand(0, 0, 1, 3), priority=priority, **{"window": 20000, **kw}))


@functools.cache
def random_rank_translates():
    """The random-rank run of the translates, shared by the two tests above and below. Pairs only
    read a run, so its first pair, (0,0)->(1,3), holds exactly what a run of that pair alone gives."""
    return translates_run("random-rank")


def chi_square(rep) -> float:
    """Homogeneity of the mean latency over the 16 translates of a run (15 degrees of freedom)."""
    groups = [values(p["histogram"]) for p in rep.pairs]
    pooled = np.concatenate(groups).mean()
    return float(sum((g.mean() - pooled) ** 2 / (g.var() / len(g)) for g in groups))


def test_age_ties_make_translates_differ_slightly_and_random_rank_does_not():
    # Under age, packets created in the same step tie and the lower packet id wins; ids follow
    # the source node, so low-numbered sources are favoured (what the pairs table's caption says).
    # 37.7 is the 99.9% quantile of chi-square with 15 degrees of freedom.
    assert chi_square(random_rank_translates()) < 37.7
    assert chi_square(translates_run("age")) > 37.7


def test_chaos_treats_the_translates_of_a_pair_alike():
    # CHAOS is pooled on its construction (uniform draws among tied links and deflection links,
    # whatever order a node numbers its links in). With one-packet input buffers and a one-place
    # shared queue its choices follow room and queue lengths, and the 16 translates share one mean
    # latency (one seed; the statistic is a check, not a proof). Stable runs here never fill the
    # queue, so no packet of the pair is deflected (its hops are its distance, 2): deflection's
    # draws are alike by the same argument, not by this test.
    chaos = dict(routing="chaos:queue=1", buffer=1, loads=[0.4], window=6000)
    assert chi_square(translates_run("random-rank", **chaos)) < 37.7
    pooled = run_study(study(["0,0->1,3"], pool_translates=True, **chaos))
    assert pooled.pairs[0]["translates"] == K * K and pooled.pairs[0]["hops_mean"] == 2.0


# ---------------------------------------------------------------- refusals

@pytest.mark.parametrize("argv, pair, message", [
    (["--traffic", "transpose"], "0,1 1,0", "traffic transpose is not translation invariant"),
    (["--traffic", "bitcomp"], "0,0 3,3", "traffic bitcomp is not translation invariant"),
    (["--traffic", "hotspot:count=1"], "0,0 1,1", "is not translation invariant"),
    (["--network", "mesh:k=4,n=2", "--routing", "dimension-order"], "0,0 1,1",
     "(a torus or a hypercube); mesh:k=4,n=2 is not one"),
    (["--routing", "shortest"], "0,0 1,1", "routing shortest is not translation invariant: its path"),
    (["--routing", "random-shortest"], "0,0 1,1", "cannot be checked for translation invariance"),
    ([], "", "--pool-translates pools the translates of each --pair"),
    (["--saturation"], "", "--pool-translates measures the latency of a load sweep"),
])
def test_pooling_is_refused_where_translates_may_differ(argv, pair, message, tmp_path, capsys):
    base = {"--network": NET, "--routing": "dor", "--traffic": "uniform"}
    for flag, value in zip(argv[::2], argv[1::2]):
        base[flag] = value
    what = argv if argv == ["--saturation"] else ["--loads", "0.2"]
    pairs = ["--pair", *pair.split()] if pair else []
    cmd = ["openloop", *[x for kv in base.items() for x in kv], *what, *pairs, "--pool-translates"]
    line = assert_refused(cmd, tmp_path, capsys)
    assert message in line, line


def test_the_check_is_on_the_matrix_not_the_name(capsys):
    # bitcomp reflects a torus (refused above) but translates a hypercube: d = s XOR 11..1
    assert main(["openloop", "--network", "hypercube:d=4", "--routing", "dimension-order", "--traffic", "bitcomp",
                 "--loads", "0.2", "--window", "300", "--pair", "0", "15", "--pool-translates", "--json"]) == 0
    pair, = json.loads(capsys.readouterr().out)["pairs"]
    assert pair["translates"] == 16 and pair["hops_mean"] == 4


def test_the_translations_map_links_onto_links():
    from universal.networks import build_network

    for name in ("torus:k=3,n=3", "torus:k=5,n=1", "hypercube:d=5", "torus:k=2,n=2"):
        net = build_network(name)
        group = translations_of(net)
        assert group.size == net.num_nodes
    with pytest.raises(UserError, match="not one"):
        translations_of(build_network("dragonfly:p=1,a=2,h=1"))


# ---------------------------------------------------------------- output and results files

def test_the_output_says_how_many_pairs_and_packets_were_pooled(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["openloop", "--network", "torus:k=8,n=2", "--routing", "min-adaptive", "--loads", "0.2",
                 "--window", "500", "--histogram", "--pair", "0,0", "1,3", "--pool-translates"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert "pair 0,0->1,3 + 63 translates" in flat and "each pair pooled with its 63 translates" in flat
    packets = int(flat.split(" packets of 64 pairs")[0].split()[-1].replace(",", ""))
    assert f"│ {packets:,} │" in flat or f" {packets:,} │" in flat      # the pairs table's count
    assert max(len(line) for line in out.splitlines()) <= 80


def test_a_pooled_study_resumes_and_names_the_option_in_its_header(tmp_path):
    s = study(["0,0->1,3"], pool_translates=True, loads=[0.2, 0.3], window=300)
    path = tmp_path / "r.jsonl"
    whole = run_study(s, results_file=path)
    again = run_study(s, results_file=path, resume=True)
    assert again.resumed == 2 and json.dumps(again.pairs) == json.dumps(whole.pairs)
    assert json.loads(path.read_text().splitlines()[0])["settings"]["pool_translates"] is True
    with pytest.raises(UserError, match="settings|other"):      # the same file, without pooling
        run_study(study(["0,0->1,3"], loads=[0.2, 0.3], window=300), results_file=path, resume=True)
