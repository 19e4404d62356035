"""Scores on the golden fixtures are unchanged by the #13 harness: each case of tests/data/golden/ (captured with the
pre-harness evaluators, see its README) rerun through the new runner gives the same numbers — counts exactly,
floats within 1e-12 — and the same per-sample scores.

    python -m pytest -q tests/test_eval_golden.py

`assert_same(golden, new)` is the comparison; MacroLens/EPSBench cases are added with their ports.
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
    assert_same(golden["metrics"], results["metrics"], "metrics")
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
