"""Scores on the golden fixtures are unchanged by the #13 harness: each case of tests/data/golden/ (captured with the
pre-harness evaluators, see its README) rerun through the new runner gives the same numbers — counts exactly,
floats within 1e-12 — and the same per-sample scores.

    python -m pytest -q tests/test_eval_golden.py

`assert_same(golden, new)` is the comparison. The cases rerun the golden `argv` (the pre-harness flags, which now
run on the harness runner; MacroLens writes one folder per task, merged here) — EPSBench's case is offline scoring.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ledgerlm.cli import main as ledgerlm
from ledgerlm.evaluate.runfiles import read_run

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
TOL = 1e-12


def load(case: str) -> dict:
    return json.loads((GOLDEN / f"{case}.json").read_text(encoding="utf-8"))


def assert_same(golden, new, where: str = "") -> None:
    """Recursive equality: bools/ints/strings/None exactly, floats to TOL, same keys and lengths."""
    if isinstance(golden, dict):
        assert isinstance(new, dict) and set(golden) == set(new), f"{where}: keys {sorted(golden)} != {sorted(new) if isinstance(new, dict) else new}"
        for key in golden:
            assert_same(golden[key], new[key], f"{where}.{key}")
    elif isinstance(golden, list):
        assert isinstance(new, list) and len(golden) == len(new), f"{where}: {golden} != {new}"
        for k, (g, n) in enumerate(zip(golden, new)):
            assert_same(g, n, f"{where}[{k}]")
    elif isinstance(golden, float) and not isinstance(new, bool) and isinstance(new, (int, float)):
        assert (math.isnan(golden) and math.isnan(new)) or abs(golden - new) <= TOL, f"{where}: {golden!r} != {new!r}"
    else:
        assert type(golden) is type(new) and golden == new, f"{where}: {golden!r} != {new!r}"


def without_intervals(tree):
    """The same tree without `ci_low` / `ci_high` of 0/1-score means (their method changed to Wilson in #13)."""
    if isinstance(tree, dict):
        return {k: without_intervals(v) for k, v in tree.items() if k not in ("ci_low", "ci_high")}
    if isinstance(tree, list):
        return [without_intervals(v) for v in tree]
    return tree


def assert_wilson(estimate: dict) -> None:
    """`estimate` (value, n, ci_low, ci_high) carries scipy's Wilson 95% interval for round(value * n) of n."""
    from scipy.stats import binomtest

    k = round(estimate["value"] * estimate["n"])
    ci = binomtest(k, estimate["n"]).proportion_ci(confidence_level=0.95, method="wilson")
    assert abs(estimate["ci_low"] - ci.low) < 1e-9 and abs(estimate["ci_high"] - ci.high) < 1e-9, (estimate, ci)


def sample_key(sample: dict) -> str:
    return f"{sample['id']}@{sample['run']}" if sample.get("run") else str(sample["id"])


@pytest.mark.parametrize("model", ["oracle", "wrong_unit"])
def test_finindices_scores_unchanged_through_the_runner(model, tmp_path):
    golden = load(f"finindices_{model}")
    out = tmp_path / model
    assert ledgerlm(["eval", "--model", model, "--tasks", "finindices", "--data", str(GOLDEN / "finindices_rows"),
                     "--bootstrap_iters", "200", "--no_cache", "--no_progress", "--output_path", str(out)]) == 0
    results, samples = read_run(out)
    assert_same(golden["n"], results["n"], "n")
    # the scores are the golden ones; the intervals of 0/1 scores are Wilson since #13 (the golden file holds the
    # pre-harness percentile bootstrap, zero-width at 32/32), so they are checked against scipy's Wilson instead
    assert_same(without_intervals(golden["metrics"]), without_intervals(results["metrics"]), "metrics")
    assert_wilson(results["metrics"]["accuracy"])
    for group in results["metrics"]["by_group"] + results["metrics"]["by_paradigm_hint"]:
        assert_wilson(group)
    assert_same(golden["sample_scores"], {sample_key(s): s["score"] for s in samples}, "sample_scores")
    headline = results["results"]["finindices"]  # the lm-eval view carries the same numbers, with n beside them
    assert headline["accuracy"] == golden["metrics"]["accuracy"]["value"] and headline["accuracy_n"] == golden["n"] == headline["n"]
    low, high = headline["accuracy_ci"]  # Wilson 95%: never zero-width, even at 0 % or 100 %
    assert low < high and low <= headline["accuracy"] <= high


@pytest.mark.parametrize("k", [0, 5, 32])
def test_headline_interval_is_the_wilson_interval(k):
    """The headline CI of a proportion is Wilson's, as scipy computes it (`binomtest(k, n).proportion_ci("wilson")`)."""
    from scipy.stats import binomtest

    from ledgerlm.evaluate.finindices.benchmark import _proportion

    metric = _proportion(k, 32)
    reference = binomtest(k, 32).proportion_ci(confidence_level=0.95, method="wilson")
    assert metric.value == k / 32 and metric.n == 32
    assert metric.ci == pytest.approx((reference.low, reference.high), abs=1e-12) and metric.ci[0] < metric.ci[1]


def read_folders(out: Path) -> tuple[list[dict], list[dict]]:
    """(results of each task, all samples) of a run: the folder itself, or its per-task folders (several tasks)."""
    folders = [out] if (out / "samples.jsonl").is_file() else sorted(p.parent for p in out.glob("*/samples.jsonl"))
    runs = [read_run(folder) for folder in folders]
    return [r for r, _ in runs], [s for _, ss in runs for s in ss]


def golden_argv(golden: dict, out: Path) -> list[str]:
    from ledgerlm.evaluate.macrolens.fixture import cached_fixture_dir

    repo = GOLDEN.parents[2]
    argv = [str(cached_fixture_dir()) if a == "FIXTURE(seed=42)" else str(repo / a) if a.startswith("tests/") else a for a in golden["argv"]]
    return [*argv, "--out", str(out)]


@pytest.mark.slow  # builds the MacroLens fixture panel: 145 s measured on the shared 2-core machine (load 8); pytest -m slow
def test_macrolens_scores_unchanged_through_the_runner(tmp_path):
    golden = load("macrolens_naive")
    assert ledgerlm(golden_argv(golden, tmp_path / "ml")) == 0
    per_task, samples = read_folders(tmp_path / "ml")
    assert len(per_task) == 7  # T1..T7, one folder each
    metrics = {k: v for r in per_task for k, v in r["metrics"].items()}
    counts = {f"{t}/{lv}": s["counts"] for r in per_task for t, lvs in r["tasks"].items() for lv, s in lvs.items()}
    assert_same(golden["metrics"], metrics, "metrics")
    assert_same(golden["counts"], counts, "counts")
    assert_same(golden["sample_scores"], {sample_key(s): s["score"] for s in samples}, "sample_scores")


def test_epsbench_official_configuration_scores_unchanged(tmp_path):
    golden = load("epsbench_glm_score")
    assert ledgerlm(golden_argv(golden, tmp_path / "eps")) == 0
    results, samples = read_run(tmp_path / "eps")
    keys = [k for k in golden if k not in ("argv", "case", "sample_scores")]
    assert len(keys) == 9
    assert_same({k: golden[k] for k in keys}, {k: results[k] for k in keys}, "results")
    assert_same(golden["sample_scores"], {sample_key(s): s["score"] for s in samples}, "sample_scores")


def test_the_comparison_catches_a_moved_score():
    golden = load("finindices_wrong_unit")
    moved = json.loads(json.dumps(golden["metrics"]))
    moved["accuracy"]["value"] += 1e-9
    with pytest.raises(AssertionError, match="metrics.accuracy.value"):
        assert_same(golden["metrics"], moved, "metrics")
    with pytest.raises(AssertionError, match="n"):
        assert_same(golden["n"], golden["n"] + 1, "n")
    with pytest.raises(AssertionError):
        assert_same(32, 32.0, "n")  # a count must stay an int
