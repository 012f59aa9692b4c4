"""The one-line conclusions under a routing experiment's table."""

from __future__ import annotations

from universal.cli import main


def _last_lines(capsys, *argv: str) -> str:
    assert main(["route", "--network", "torus:k=4,n=2", *argv]) == 0
    return capsys.readouterr().out


def test_rows_that_all_tie_are_said_to_tie_not_ranked(capsys):
    # Tornado on the 4-ary 2-cube moves every packet one hop over its own link: T = 1 whatever the protocol.
    out = _last_lines(capsys, "--problem", "permutation:tornado", "--protocols", "fifo,random-rank")
    assert "All 2 combinations tie at T = 1 step." in out
    assert "astest" not in out and "slowest" not in out


def test_a_tie_for_fastest_names_every_tied_row_and_then_the_slowest(capsys):
    out = _last_lines(capsys, "--problem", "permutation:tornado,permutation:random", "--protocols",
                      "fifo,random-rank", "--paths", "dimension-order,valiant", "--seed", "3")
    # dimension-order paths keep T = 1 (above); Valiant's detour through a random node cannot
    tornado = " ".join(out.split("permutation:tornado:")[1].split("permutation:random:")[0].split())
    assert tornado.startswith("fastest (tied): dimension-order paths with fifo and random-rank, T = 1 step = "
                              "0.50 x (C + D); slowest")
    assert "valiant with" in tornado.split("slowest")[1]


def test_a_bound_formula_is_named_only_where_some_row_has_the_bound(capsys):
    # Random rank's §4.1 bound needs leveled paths: on the torus every row says n/a, so the footer
    # must not name the formula; on the butterfly's (leveled) shortest paths it holds and is named.
    torus = _last_lines(capsys, "--problem", "permutation:tornado", "--protocols", "fifo,random-rank")
    assert "n/a" in torus and "Bounds (survey" not in torus
    assert main(["route", "--network", "butterfly:d=4", "--problem", "permutation:random",
                 "--paths", "shortest", "--protocols", "random-rank"]) == 0
    assert "Bounds (survey, log base 2): random-rank: C + D + log n (§4.1)." in capsys.readouterr().out
