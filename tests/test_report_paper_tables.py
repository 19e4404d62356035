"""FinIndices paper layouts (Table 3, Tables 11-12): mean ± std over repeated runs, by split and by axis.

    python -m pytest -q tests/test_report_paper_tables.py
"""
from __future__ import annotations

from ledgerlm.evaluate.report import finindices_paper_tables


def _s(score, split="test", hint=True, paradigm="single", axis="domain"):
    return {"score": score, "split": split, "hint": hint, "paradigm": paradigm, "axis": axis}


def test_mean_and_std_over_three_runs_by_split_and_axis():
    # with-hint single test accuracy per run: 1/2, 2/2, 0/2 -> 50, 100, 0 -> mean 50.00, std (ddof 0) 40.82
    runs = [[_s(1), _s(0), _s(1, split="dev"), _s(0, hint=False, axis="temporal")],
            [_s(1), _s(1), _s(1, split="dev"), _s(1, hint=False, axis="temporal")],
            [_s(0), _s(0), _s(0, split="dev"), _s(1, hint=False, axis="temporal")]]
    md = finindices_paper_tables(runs)
    table3 = md.split("## Table 11")[0]
    assert "| with hint | single | 66.67 ± 47.14 (n=1, runs=3) | 50.00 ± 40.82 (n=2, runs=3) |" in table3  # columns: dev, test
    table12 = md.split("## Table 12")[1]
    assert "| paradigm | domain | temporal |" in table12
    assert "| single | — | 66.67 ± 47.14 (n=1, runs=3) |" in table12  # no-hint items only on the temporal axis
    assert "50.00 ± 50.00" in finindices_paper_tables(runs, ddof=1)  # sample std of 50, 100, 0 is 50
