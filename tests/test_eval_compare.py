"""Paired comparison, statistics, run files and the report: deltas, CIs and p-values checked
against values computed by hand and by scipy."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import binomtest

from ledgerlm.evaluate import stats
from ledgerlm.evaluate.compare import compare_runs, main as compare_main
from ledgerlm.evaluate.report import main as report_main
from ledgerlm.evaluate.runfiles import read_run, write_run


def sample(i, score, paradigm, hint, axis="caliber"):
    return {"id": f"q{i}", "prompt": [], "response": "", "reasoning": None, "answer_text": "", "extracted": None,
            "score": score, "positional": score, "error_reason": None if score else "wrong_value",
            "paradigm": paradigm, "axis": axis, "hint": hint}


def make_pair(tmp_path):
    """60 paired items. Single (30): A right on 10, B right on those 10 + 12 more. Table (30): A right on
    20, B loses 5 of them and gains 1. Plus an id only in B."""
    a, b = [], []
    for i in range(30):
        a.append(sample(i, int(i < 10), "single", True))
        b.append(sample(i, int(i < 22), "single", True))
    for i in range(30, 60):
        k = i - 30
        a.append(sample(i, int(k < 20), "table", False, axis="domain"))
        b.append(sample(i, int(5 <= k < 21), "table", False, axis="domain"))
    b.append(sample(999, 1, "table", False))
    write_run(tmp_path / "A", {"model": "a"}, a)
    write_run(tmp_path / "B", {"model": "b"}, b)
    return tmp_path / "A", tmp_path / "B"


def test_compare_reports_hand_computed_delta_ci_and_pvalue(tmp_path):
    run_a, run_b = make_pair(tmp_path)
    result = compare_runs(run_a, run_b, n_boot=4000, seed=1)
    assert (result["n_paired"], result["only_a"], result["only_b"]) == (60, 0, 1)
    overall, *groups = result["rows"]
    # by hand: A 30/60, B 38/60 -> +13.33 pts; discordant pairs b01 = 12 + 1, b10 = 5
    assert overall["acc_a"] == pytest.approx(0.5) and overall["acc_b"] == pytest.approx(38 / 60)
    assert overall["delta"] == pytest.approx(8 / 60)
    assert (overall["b01"], overall["b10"]) == (13, 5)
    assert overall["p_value"] == pytest.approx(binomtest(13, 18, 0.5).pvalue)
    assert overall["p_value"] == pytest.approx(2 * sum(__import__("math").comb(18, k) for k in range(6)) / 2**18)
    # the paired-bootstrap CI matches the normal approximation of the paired differences
    diff = np.array([0] * 10 + [1] * 12 + [0] * 8 + [-1] * 5 + [0] * 15 + [1] + [0] * 9)
    se = diff.std(ddof=0) / np.sqrt(60)
    assert overall["ci_low"] == pytest.approx(diff.mean() - 1.96 * se, abs=0.02)
    assert overall["ci_high"] == pytest.approx(diff.mean() + 1.96 * se, abs=0.02)
    single = next(r for r in groups if r["group"] == {"paradigm": "single", "hint": True})
    assert single["delta"] == pytest.approx(12 / 30) and single["ci_low"] > 0 and single["b10"] == 0
    assert single["p_value"] == pytest.approx(binomtest(12, 12, 0.5).pvalue)
    table = next(r for r in groups if r["group"] == {"paradigm": "table", "axis": "domain", "hint": False})
    assert table["delta"] == pytest.approx(-4 / 30) and (table["b01"], table["b10"]) == (1, 5)


def test_compare_cli_writes_markdown_and_json(tmp_path, capsys):
    run_a, run_b = make_pair(tmp_path)
    assert compare_main([str(run_a), str(run_b), "--out", str(tmp_path / "cmp.md"), "--json", str(tmp_path / "cmp.json"), "--n-boot", "500"]) == 0
    printed = capsys.readouterr().out
    assert printed == (tmp_path / "cmp.md").read_text()
    assert "| **all** | 60 | 50.0% (30/60) | 63.3% (38/60) | +13.3 |" in printed  # n beside every accuracy
    assert json.loads((tmp_path / "cmp.json").read_text())["rows"][0]["b01"] == 13


def test_bootstrap_is_seeded_and_covers_the_mean():
    scores = [1] * 30 + [0] * 70
    first, again = stats.bootstrap_ci(scores, seed=7), stats.bootstrap_ci(scores, seed=7)
    assert first == again and first.ci_low < 0.3 < first.ci_high
    assert first.ci_high - first.ci_low == pytest.approx(2 * 1.96 * (0.3 * 0.7 / 100) ** 0.5, abs=0.03)
    assert stats.bootstrap_ci([], seed=0).n == 0
    with pytest.raises(ValueError, match="pair the runs"):
        stats.paired_bootstrap([1, 0], [1])


def test_run_files_round_trip_and_reject_incomplete_rows(tmp_path):
    rows = [sample(1, 1, "single", True)]
    write_run(tmp_path / "run", {"model": "m", "n": 1}, rows)
    assert read_run(tmp_path / "run") == ({"model": "m", "n": 1}, rows)
    assert not list((tmp_path / "run").glob(".*tmp"))  # no temp files left behind
    from ledgerlm.errors import InputError

    with pytest.raises(InputError, match="lacks"):
        write_run(tmp_path / "bad", {}, [{"id": "x"}])
    with pytest.raises(InputError, match="not a finished run"):
        read_run(tmp_path / "bad")


def test_report_writes_markdown_and_three_plots(tmp_path):
    run_a, run_b = make_pair(tmp_path)
    assert report_main([str(run_a), str(run_b), "--out", str(tmp_path / "rep"), "--n-boot", "200"]) == 0
    for name in ("hint_vs_nohint.png", "single_vs_table.png", "deltas.png"):
        data = (tmp_path / "rep" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "![deltas](deltas.png)" in text and "| **all** | 60 |" in text


def test_multitask_runs_are_compared_task_by_task(tmp_path, capsys):
    """Two harness runs with OUT/<task>/ folders: one table per task, each the single-folder comparison."""
    run_a, run_b = make_pair(tmp_path)
    for side, run in (("MA", run_a), ("MB", run_b)):
        results, samples = read_run(run)
        for task in ("task_x", "task_y"):
            write_run(tmp_path / side / task, results, samples)
        (tmp_path / side / "results.json").write_text(json.dumps({"task_folders": {"task_x": "task_x", "task_y": "task_y"}}))
    assert compare_main([str(tmp_path / "MA"), str(tmp_path / "MB"), "--json", str(tmp_path / "m.json"), "--n-boot", "300"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("| **all** | 60 | 50.0% (30/60) | 63.3% (38/60) | +13.3 |") == 2 and "## task_x" in printed and "## task_y" in printed
    per_task = json.loads((tmp_path / "m.json").read_text())
    single = compare_runs(run_a, run_b, n_boot=300)
    assert [r["task"] for r in per_task] == ["task_x", "task_y"] and per_task[0]["rows"] == json.loads(json.dumps(single["rows"]))
    (tmp_path / "MB" / "results.json").write_text(json.dumps({"task_folders": {"task_x": "task_x"}}))
    from ledgerlm.errors import InputError

    with pytest.raises(InputError, match="different tasks"):
        compare_main([str(tmp_path / "MA"), str(tmp_path / "MB")])


def test_cluster_option_resamples_whole_clusters(tmp_path):
    """20 companies x 3 items; B beats A on every item of 6 companies and loses on every item of 4 (others tie):
    items within a company move together, so the company-cluster CI is wider than the item CI, and equals
    stats.cluster_bootstrap of the per-item differences."""
    a, b = [], []
    for c in range(20):
        for k in range(3):
            i = 3 * c + k
            a.append({**sample(i, 0 if c < 6 else (1 if c < 10 else 0), "single", True), "company": f"C{c}"})
            b.append({**sample(i, 1 if c < 6 else 0, "single", True), "company": f"C{c}"})
    write_run(tmp_path / "A", {"model": "a"}, a)
    write_run(tmp_path / "B", {"model": "b"}, b)
    items = compare_runs(tmp_path / "A", tmp_path / "B", n_boot=2000, seed=0)["rows"][0]
    clustered = compare_runs(tmp_path / "A", tmp_path / "B", n_boot=2000, seed=0, cluster="company")
    row = clustered["rows"][0]
    assert row["delta"] == items["delta"] == pytest.approx((18 - 12) / 60) and "company" in clustered["ci_method"]
    assert (row["ci_high"] - row["ci_low"]) > 1.4 * (items["ci_high"] - items["ci_low"])  # ~sqrt(3) for clusters of 3
    diff = [s_b["score"] - s_a["score"] for s_a, s_b in zip(a, b)]
    ref = stats.cluster_bootstrap(diff, [s["company"] for s in a], "mean", n_boot=2000, seed=0)
    assert (row["ci_low"], row["ci_high"]) == (ref.ci_low, ref.ci_high)
    from ledgerlm.errors import InputError

    with pytest.raises(InputError, match="no 'sector' field"):
        compare_runs(tmp_path / "A", tmp_path / "B", n_boot=100, cluster="sector")
