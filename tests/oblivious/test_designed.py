"""Routings given by data: flow routings, saved routing files, mixtures (TDB eqs. 11-14)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from universal.errors import UserError
from universal.oblivious import Torus, get_routing, pair_loads, worst_case
from universal.paths.torus.designed import FlowRouting, integer_flows
from universal.paths.torus.routingfile import read_routing, routing_to_json, write_routing


def dor_as_flows(torus: Torus, den: int) -> FlowRouting:
    """DOR's exact pair loads written as a flow routing (a second description of DOR)."""
    pl = pair_loads("dor", torus)
    num = pl.full_numerators() * (den // pl.den[:, None])
    return FlowRouting(torus, num, den, "dor-as-flows")


@pytest.mark.parametrize("k", [4, 5])
def test_flow_routing_of_dor_has_dors_loads_and_worst_case(k):
    t = Torus(k, 2)
    r = dor_as_flows(t, 4)
    assert worst_case(k, 2, r).max_load_exact == worst_case(k, 2, "dor").max_load_exact
    assert pair_loads(r, t).mean_length() == pair_loads("dor", t).mean_length()


def test_walk_samples_routes_along_the_flow():
    t = Torus(5, 2)
    r = dor_as_flows(t, 4)
    rng = np.random.default_rng(3)
    src = rng.integers(0, t.N, 4000)
    dst = rng.integers(0, t.N, 4000)
    routes = r.sample_routes(t, src, dst, rng)
    for s, d, p in zip(src, dst, routes):
        assert p[0] == s and p[-1] == d
        assert len(p) - 1 == t.min_distance(t.sub(d, s))       # DOR is minimal
    # DOR corrects x first: every route from 0 to (1,1) starts on the channel 0->1
    p = r.sample_routes(t, np.zeros(200, dtype=np.int64), np.full(200, t.node((1, 1))), rng)
    assert all(q[1] == 1 for q in p)


def test_walk_frequencies_match_split_flow():
    t = Torus(4, 1)
    r = dor_as_flows(t, 2)           # offset 2 is a tie: half each way
    rng = np.random.default_rng(0)
    p = r.sample_routes(t, np.zeros(4000, dtype=np.int64), np.full(4000, 2), rng)
    share = np.mean([q[1] == 1 for q in p])
    assert abs(share - 0.5) < 0.05


def test_integer_flows_cancel_cycles_and_conserve():
    t = Torus(3, 1)
    f = np.zeros((3, 6))
    f[1, 0] = 1.0                    # 0 -> 1 directly ...
    f[1, 2] = f[1, 4] = 0.5          # ... plus a half-unit circulation 1->2->0->1
    f[1, 0] += 0.5
    f[2, 1] = 1.0                    # 0 -> 2 the short way
    num = integer_flows(t, f, den=8)
    assert num[1].tolist() == [8, 0, 0, 0, 0, 0]


def test_saved_routing_round_trip(tmp_path):
    t = Torus(4, 2)
    r = dor_as_flows(t, 8)
    path = write_routing(tmp_path / "dor.routing", r)
    back = get_routing(f"lp:file={path}")
    assert np.array_equal(back.num, r.num) and back.den == 8
    assert worst_case(4, 2, f"lp:file={path}").throughput_exact == Fraction(1, 3)


def _broken(tmp_path, edit) -> str:
    data = routing_to_json(dor_as_flows(Torus(4, 2), 8))
    edit(data)
    p = tmp_path / "bad.routing"
    p.write_text(json.dumps(data))
    return str(p)


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["flows"]["1,0"].update({"0,0->1,0": 7}), "not conserved"),
    (lambda d: d["flows"]["1,0"].update({"0,0->1,0": -8}), "negative"),
    (lambda d: d.update(network="torus:k=5,n=2"), "not conserved|not a node|not a channel"),
    (lambda d: d.update(network="mesh:k=4,n=2"), "torus"),
    (lambda d: d["flows"]["1,0"].update({"0,0->2,0": 8}), "not a channel"),
    (lambda d: d["flows"]["1,0"].update({"0,0->1,0": 0.5}), "integer"),
    (lambda d: d.update(denominator=0), "denominator"),
    (lambda d: d.pop("format"), "not a saved routing"),
])
def test_broken_files_are_user_errors(tmp_path, edit, message):
    with pytest.raises(UserError, match=message):
        read_routing(_broken(tmp_path, edit))


def test_cycles_are_refused(tmp_path):
    def add_cycle(d):   # a full ring in x at row y=1 for offset (1,0) keeps conservation
        d["flows"]["1,0"].update({f"{x},1->{(x + 1) % 4},1": 8 for x in range(4)})
    with pytest.raises(UserError, match="cycle"):
        read_routing(_broken(tmp_path, add_cycle))


def dor_as_paths(torus: Torus) -> FlowRouting:
    """DOR given by its weighted paths (a third description of DOR)."""
    fams = {t: get_routing("dor").family(torus, t) for t in range(torus.N)}
    den = int(np.lcm.reduce([f.den for f in fams.values()]))
    fams = {t: type(f)(f.dims, f.steps, f.weights * (den // f.den)) for t, f in fams.items()}
    return FlowRouting.from_paths(torus, fams, den, "dor-as-paths")


def test_path_routing_keeps_its_paths_through_a_saved_file(tmp_path):
    t = Torus(4, 2)
    r = dor_as_paths(t)
    assert np.array_equal(r.num, dor_as_flows(t, r.den).num)
    back = read_routing(write_routing(tmp_path / "p.routing", r))
    assert back.paths is not None
    def routes(fam):
        return sorted((tuple((int(d), int(s)) for d, s in zip(dd, ss) if s), int(w))
                      for dd, ss, w in zip(fam.dims, fam.steps, fam.weights))
    assert all(routes(r.family(t, off)) == routes(back.family(t, off)) for off in range(t.N))
    assert worst_case(4, 2, back).throughput_exact == Fraction(1, 3)


def test_path_routing_draws_its_paths_by_weight():
    t = Torus(4, 1)
    r = dor_as_paths(t)              # offset 2 is a tie: +2 or -2, half each
    rng = np.random.default_rng(0)
    p = r.sample_routes(t, np.zeros(4000, dtype=np.int64), np.full(4000, 2), rng)
    assert {tuple(q.tolist()) for q in p} == {(0, 1, 2), (0, 3, 2)}
    assert abs(np.mean([q[1] == 1 for q in p]) - 0.5) < 0.05


def _broken_paths(tmp_path, edit) -> str:
    data = routing_to_json(dor_as_paths(Torus(4, 2)))
    edit(data)
    p = tmp_path / "bad.routing"
    p.write_text(json.dumps(data))
    return str(p)


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["paths"]["1,0"][0][1].__setitem__(0, [0, 2]), "ends at"),
    (lambda d: d["paths"]["1,0"][0].__setitem__(0, 3), "sum to"),
    (lambda d: d["paths"]["1,0"].append([0, [[0, 1]]]), "not positive"),
    (lambda d: d["paths"]["1,1"][0].__setitem__(1, [[0, 1], [1, 1], [0, 3], [0, -3]]),
     "visits a node twice|not the flows"),
    (lambda d: d["paths"]["1,0"][0][1].__setitem__(0, [5, 1]), "leg"),
    (lambda d: d["paths"]["1,0"][0].__setitem__(0, 10 ** 400), "too large"),
    (lambda d: d["paths"].update({"1,0": "x"}), "non-empty list"),
    (lambda d: d["paths"].update({"2,0": [[d["denominator"], [[0, 2]]]]}), "not the flows"),
])
def test_broken_path_entries_are_user_errors(tmp_path, edit, message):
    with pytest.raises(UserError, match=message):
        read_routing(_broken_paths(tmp_path, edit))


def test_not_json(tmp_path):
    p = tmp_path / "x.routing"
    p.write_text("{nope")
    with pytest.raises(UserError, match="not valid JSON"):
        read_routing(p)


@pytest.mark.parametrize("alpha", [Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)])
def test_dor_ival_mixture_meets_the_harmonic_bound_exactly(alpha):
    # TDB eq. (14), with equality because DOR and IVAL share a worst-case permutation (§5.3)
    dor = worst_case(8, 2, "dor").throughput_exact
    ival = worst_case(8, 2, "ival").throughput_exact
    bound = 1 / (alpha / dor + (1 - alpha) / ival)
    mix = worst_case(8, 2, f"mix:dor={alpha},ival={1 - alpha}")
    assert mix.throughput_exact == bound


def test_mixture_locality_is_the_weighted_sum():
    t = Torus(6, 2)
    L = {r: pair_loads(r, t).mean_length() for r in ("dor", "val")}
    mixed = pair_loads("mix:dor=1/3,val=2/3", t).mean_length()
    assert mixed == Fraction(1, 3) * L["dor"] + Fraction(2, 3) * L["val"]


@pytest.mark.parametrize("name,message", [
    ("mix:dor=0.5,ival=0.4", "sum to 1"),
    ("mix:dor=0.5,nope=0.5", "unknown"),
    ("mix:dor=x,ival=0.5", "not a number"),
    ("mix", "mix:ROUTING=WEIGHT"),
    ("lp", "lp:file=PATH"),
])
def test_bad_routing_names(name, message):
    with pytest.raises(UserError, match=message):
        get_routing(name)
