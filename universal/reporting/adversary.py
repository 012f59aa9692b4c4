"""Tables and JSON of Theorem 25's adversary (``universal adversary`` and ``kind = "adversary"``
scenarios): per (D, C, Q), Q's T beside random rank's with fresh ranks on the same problem."""

from __future__ import annotations

from rich.console import Console

from universal.protocols.adversary import RANKED
from universal.protocols.adversary_study import AdversaryRow, AdversaryStudy, fit_growth
from universal.reporting.layout import Col, FitTable


def adversary_table(rows: list[AdversaryRow], title: str = "Theorem 25's adversary", wide: bool = False) -> FitTable:
    """One row per (D, C, Q).

    Examples
    --------
    >>> from universal.protocols.adversary_study import run_adversary_study
    >>> from universal.reporting.layout import render_text
    >>> rows, _ = run_adversary_study(AdversaryStudy([3], [2], ["fifo"], seeds=[1]))
    >>> "fifo" in render_text(adversary_table(rows), 100)
    True
    """
    cols = [Col("Q", "left", "name"), Col("D"), Col("C"), Col("packets"), Col("T of Q"),
            Col("forced"), Col("T/(C·D)", folded_header="T/\n(C·D)"),
            Col("T fresh RR", folded_header="T fresh\nRR"), Col("T / T fresh", folded_header="T /\nT fresh")]
    body = []
    for r in rows:
        spread = f"{r.T_fresh:.1f}" if r.T_fresh_min == r.T_fresh_max else f"{r.T_fresh:.1f} ({r.T_fresh_min}–{r.T_fresh_max})"
        q = f"{r.protocol}*" if r.protocol in RANKED else r.protocol
        body.append(([q, str(r.D), str(r.C), f"{r.packets:,}", str(r.T), str(r.forced),
                      f"{r.T_over_CD:.2f}", spread, f"{r.ratio:.2f}"], None))
    seeds = rows[0].seeds if rows else []
    caption = [f"T fresh RR: random rank with fresh ranks on the same problem, mean (min–max) over seeds "
               f"{_seed_range(seeds)}",
               "forced: (D-1)(floor(C/2)+1)+C >= C(D+1)/2, the steps the construction forces on every greedy "
               "deterministic Q"]
    if any(r.protocol in RANKED for r in rows):
        caption.append("*: ranks drawn once (from the seed) and fixed, which makes the protocol deterministic")
    return FitTable(cols, body, title=title, caption=caption, wide=wide)


def growth_lines(rows: list[AdversaryRow]) -> list[str]:
    """One line per Q: least-squares fits of Q's T and of fresh random rank's T (see
    :func:`~universal.protocols.adversary_study.fit_growth`).

    >>> growth_lines([])
    []
    """
    lines = []
    for q in dict.fromkeys(r.protocol for r in rows):
        mine, fresh = fit_growth(rows, q), fit_growth(rows, q, fresh=True)
        if mine is None:
            continue
        lines.append(f"{q}: T ≈ {_linear_text(mine)}; random rank with fresh ranks: T ≈ {_linear_text(fresh)}"
                     f" (least squares)")
    return lines


def _linear_text(fit: dict) -> str:
    """``0.50·C·D + 0.50·C + 1.00·D - 1.00`` (the terms of a fit, in order)."""
    text = ""
    for term, value in fit.items():
        sign = "-" if value < 0 else "+"
        number = f"{abs(value) + 0.0:.2f}" + ("" if term == "1" else f"·{term}")
        text += (f" {sign} " if text else ("-" if value < 0 else "")) + number
    return text


def _seed_range(seeds: list[int]) -> str:
    if len(seeds) > 1 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}..{seeds[-1]}"
    return ", ".join(map(str, seeds))


def adversary_json(study: AdversaryStudy, rows: list[AdversaryRow]) -> dict:
    """The ``--json`` object: the study's settings, one row per (D, C, Q), and the growth fits."""
    def rounded(fit: dict | None) -> dict | None:
        return None if fit is None else {term: round(value, 4) + 0.0 for term, value in fit.items()}

    fits = {q: {"T": rounded(fit_growth(rows, q)), "T_fresh": rounded(fit_growth(rows, q, fresh=True))}
            for q in dict.fromkeys(r.protocol for r in rows)}
    return {"study": study.name, "dims": study.dims, "congestions": study.congestions, "protocols": study.protocols,
            "seed": study.seed, "seeds": study.seeds, "rows": [r.to_json() for r in rows], "growth": fits}


def print_adversary(console: Console, rows: list[AdversaryRow], title: str, wide: bool = False) -> None:
    """The table, then the growth lines (with two values of C or D or more)."""
    console.print(adversary_table(rows, title, wide))
    for line in growth_lines(rows):
        console.print(line)
