"""The oblivious routings of the load analysis as engine path systems (issue 4): ``route --paths
romm`` works, and the link loads of many sampled paths match the exact channel loads.

The comparison follows tests/oblivious/test_sampling.py (sampled frequency against the exact
pair loads within 5 standard deviations), but goes through the engine's registry, a whole
permutation and the network's own link numbering.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from universal.cli import main
from universal.errors import UserError
from universal.networks import build_network
from universal.oblivious import ROUTINGS, Torus, channel_loads, make_traffic, pair_loads
from universal.paths import PATH_SYSTEMS, route_paths
from universal.workloads import Problem, build_problem


def exact_link_loads(name: str, net, perm: np.ndarray) -> np.ndarray:
    """Exact expected number of paths of ``perm`` on every link of ``net`` (network link ids)."""
    k, n = net.params["k"], net.params["n"]
    torus = Torus(k, n)
    loads = channel_loads(pair_loads(name, torus), np.eye(torus.N)[perm])
    tails, heads = net.link_tail, net.link_head
    diff = (torus.coords[heads] - torus.coords[tails]) % k
    dims = np.argmax(diff != 0, axis=1)
    signs = np.where(diff[np.arange(len(diff)), dims] == 1, 1, -1)
    return np.array([loads[(int(d), int(s))][int(t)] for t, d, s in zip(tails, dims, signs)])


@pytest.mark.parametrize("name", ["romm", "val", "ival"])
@pytest.mark.parametrize("traffic", ["transpose", "random"])
def test_sampled_link_loads_match_exact_channel_loads(name, traffic):
    net = build_network("torus:k=6,n=2")                     # even k: ties are split both ways
    torus = Torus(6, 2)
    if traffic == "random":
        perm = np.random.default_rng(4).permutation(torus.N)
    else:
        perm = make_traffic(torus, traffic).perm
    reps = 600
    problem = Problem(f"{traffic} x {reps}", np.tile(np.arange(torus.N), reps), np.tile(perm, reps))
    coll = route_paths(name, problem, net, np.random.default_rng(7))
    assert coll.system == name
    sampled = coll.link_loads / reps
    exact = exact_link_loads(name, net, perm)
    assert exact.sum() > 0
    # A path crosses a link at most twice (the two phases), so one repetition's count X on a
    # link has Var X <= E[X^2] <= 2 E[X]; the mean of `reps` repetitions has sd <= sqrt(2 E / reps).
    sigma = np.sqrt(2 * exact / reps)
    assert np.all(np.abs(sampled - exact) <= 5 * sigma + 1e-12), np.max(np.abs(sampled - exact) / (sigma + 1e-12))
    assert np.all(sampled[exact == 0] == 0)                 # never a link the routing cannot use
    assert sampled.max() == pytest.approx(exact.max(), abs=5 * np.sqrt(2 * exact.max() / reps))


@pytest.mark.parametrize("name", list(ROUTINGS))
def test_every_routing_is_a_registered_path_system(name):
    assert name in PATH_SYSTEMS
    net = build_network("torus:k=5,n=2")
    prob = build_problem("permutation:random", net, np.random.default_rng(0))
    coll = route_paths(name, prob, net, np.random.default_rng(1))
    assert coll.size == net.num_nodes
    for i in range(coll.size):
        path = coll.node_path(i)
        assert path[0] == prob.sources[i] and path[-1] == prob.dests[i]
    if ROUTINGS[name].minimal:
        assert coll.is_shortest


def test_route_command_with_oblivious_path_systems(capsys):
    """The issue's example: tornado on the 8-ary 2-cube (offset 3 in x) with ROMM, DOR and VAL.
    Tornado's minimal quadrant is a single row, so ROMM and DOR both give C = D = 3."""
    status = main(["route", "--network", "torus:k=8,n=2", "--problem", "permutation:tornado",
                   "--paths", "romm,dor,val", "--protocols", "random-rank", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    rows = {r["paths"]: r for r in json.loads(out)["rows"]}
    assert list(rows) == ["romm", "dor", "val"]
    assert (rows["romm"]["C"], rows["romm"]["D"]) == (3, 3)
    assert (rows["dor"]["C"], rows["dor"]["D"]) == (3, 3)
    assert rows["val"]["D"] > 3
    assert all(r["delivered"] == 64 for r in rows.values())


@pytest.mark.parametrize("argv, fragment", [
    (["--network", "hypercube:d=4", "--paths", "romm"], "tori"),
    (["--network", "mesh:k=4,n=2", "--paths", "dor"], "tori"),
    (["--network", "torus:k=4,n=2", "--paths", "val:x=1"], "unknown parameter 'x'"),
    (["--network", "torus:k=2,n=3", "--paths", "romm"], "k >= 3"),
    (["--network", "torus:k=80,n=2", "--paths", "ival"], "at most 4096"),
])
def test_oblivious_path_system_bad_input(argv, fragment, capsys):
    status = main(["route", "--problem", "permutation:random", *argv])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and fragment in err, err


def test_oblivious_paths_refuse_other_networks_from_python():
    from universal.paths.systems import oblivious_paths
    net = build_network("mesh:k=4,n=2")
    prob = build_problem("permutation:random", net, np.random.default_rng(0))
    with pytest.raises(UserError, match="tori"):
        oblivious_paths("romm", prob, net, np.random.default_rng(0))
