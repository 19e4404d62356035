"""`ledgerlm report` plots show n and CIs: every bar has an error bar and an `n=` label; accuracy CIs are
Wilson intervals (never zero-width at small n), checked against scipy's binomtest.

    python -m pytest -q tests/test_report_ci_labels.py
"""
from __future__ import annotations

import pytest
from scipy.stats import binomtest

from ledgerlm.evaluate.report import main as report_main, plot_single_vs_table


def _row(i, score, paradigm, hint):
    return {"id": f"q{i}", "score": score, "paradigm": paradigm, "hint": hint, "axis": "domain"}


def _bars_with_errors(ax):
    """(height, lower error end, upper error end) of each bar, read back from the drawn figure."""
    patches = [p for p in ax.patches if p.get_height() is not None]
    caps = [line for container in ax.containers if hasattr(container, "errorbar") and container.errorbar
            for line in container.errorbar.lines[2]]
    segs = [seg for coll in caps for seg in coll.get_segments()]
    return [p.get_height() for p in patches], [(seg[0][1], seg[1][1]) for seg in segs]


def test_single_vs_table_bars_carry_n_and_wilson_intervals(tmp_path):
    # single+hint: 32/32 right (the old bootstrap CI was [1, 1]); single+no hint: 3/7; table+hint: 0/5; table+no hint: none
    samples = ([_row(i, 1, "single", True) for i in range(32)] + [_row(100 + i, int(i < 3), "single", False) for i in range(7)]
               + [_row(200 + i, 0, "table", True) for i in range(5)])
    fig = plot_single_vs_table([("run", {}, samples)], tmp_path / "p.png", n_boot=100)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["n=32", "n=7", "n=5", "n=0"]
    heights, intervals = _bars_with_errors(ax)
    assert heights == pytest.approx([1.0, 3 / 7, 0.0, 0.0])
    for (k, n), (low, high) in zip([(32, 32), (3, 7), (0, 5)], intervals):
        ref = binomtest(k, n).proportion_ci(method="wilson")
        assert (low, high) == (pytest.approx(ref.low, abs=1e-9), pytest.approx(ref.high, abs=1e-9))
        assert high - low > 0.1  # not zero-width
    assert "Wilson" in ax.get_title() and (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_report_summary_uses_wilson_and_names_n(tmp_path):
    from ledgerlm.evaluate.runfiles import write_run

    rows = [{"id": f"q{i}", "prompt": [], "response": "", "reasoning": None, "answer_text": "", "extracted": None, "score": 1,
             "error_reason": None, "paradigm": "single", "axis": "domain", "hint": True} for i in range(20)]
    write_run(tmp_path / "A", {"model": "a"}, rows)
    assert report_main([str(tmp_path / "A"), "--out", str(tmp_path / "rep"), "--n-boot", "100"]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    low = binomtest(20, 20).proportion_ci(method="wilson").low
    assert f"| A | a | 20 | 100.0% [{low:.1%}, 100.0%] |" in text and "95% Wilson CI" in text


def test_multitask_runs_get_one_report_per_task(tmp_path):
    from ledgerlm.evaluate.runfiles import write_run

    rows = [{"id": f"q{i}", "prompt": [], "response": "", "reasoning": None, "answer_text": "", "extracted": None, "score": i % 2,
             "error_reason": None, "paradigm": "single", "axis": "domain", "hint": True} for i in range(10)]
    for run in ("A", "B"):
        for task in ("t_one", "t_two"):
            write_run(tmp_path / run / task, {"model": run}, rows)
        (tmp_path / run / "results.json").write_text('{"task_folders": {"t_one": "t_one", "t_two": "t_two"}}')
    assert report_main([str(tmp_path / "A"), str(tmp_path / "B"), "--out", str(tmp_path / "rep"), "--n-boot", "100"]) == 0
    assert (tmp_path / "rep" / "report.md").read_text().count("/report.md)") == 2
    for task in ("t_one", "t_two"):
        text = (tmp_path / "rep" / task / "report.md").read_text()
        assert text.startswith(f"# {task}: Evaluation report: A, B") and "| A | A | 10 | 50.0% [" in text
        assert (tmp_path / "rep" / task / "deltas.png").is_file()
