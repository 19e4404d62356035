"""EPSBench as a harness Benchmark: samples are (instance, run) pairs; task args validated with one clear error.

    python -m pytest -q tests/test_epsbench_benchmark.py
"""
from __future__ import annotations

import pytest

from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.benchmark import EPSBench
from ledgerlm.evaluate.harness.registry import resolve_task


def test_samples_are_instance_run_pairs_with_their_own_ids():
    assert resolve_task("epsbench")[1] is EPSBench
    bench = EPSBench("epsbench", runs=2, instances="GOOGL_2026Q1|ADBE_2025Q4")
    rows = bench.load()
    in_release_order = [i.id for i in bench.release.instances if i.id in ("GOOGL_2026Q1", "ADBE_2025Q4")]
    assert [r["id"] for r in rows] == [f"{i}@s{k}" for k in (1, 2) for i in in_release_order]  # run s1 first, then s2
    assert {(r["instance"], r["run"]) for r in rows} == {(i, f"s{k}") for i in ("GOOGL_2026Q1", "ADBE_2025Q4") for k in (1, 2)}
    assert bench.information == "none" and bench.config()["information_condition"]["release_config_suffix"] == "neither"
    assert len(EPSBench("epsbench", runs=1).load()) == len(bench.release.instances)  # default: every release instance


@pytest.mark.parametrize("args, message", [({"instances": "NOPE_2026Q1"}, "not in the release"), ({"runs": 0}, "at least 1"),
                                           ({"information": "full"}, "needs --data"), ({"color": "red"}, "does not take"),
                                           ({"runs": "three"}, "not a whole number")])
def test_bad_task_args_are_one_input_error(args, message):
    with pytest.raises(InputError, match=message):
        EPSBench("epsbench", **args).load()


@pytest.mark.parametrize("exclude_flagged", [False, True])
def test_headline_metrics_are_the_release_aggregation_with_n_and_wilson_intervals(exclude_flagged):
    """summarize on the release's own GLM records: the lm-eval headline equals score_records' numbers, n beside
    each, proportions with Wilson intervals (scipy's binomtest)."""
    from pathlib import Path

    from scipy.stats import binomtest

    from ledgerlm.evaluate.epsbench.bench import iter_records
    from ledgerlm.evaluate.harness.base import RunContext
    from ledgerlm.inference.sampling import GenerationParams

    records = Path(__file__).parent / "data" / "epsbench_official" / "glm-4.5-air__opencode__default__full"
    samples = [{"run": run, "record": rec} for run, rec in iter_records(records)]
    bench = EPSBench("epsbench", exclude_flagged=exclude_flagged)
    ctx = RunContext(seed=0, params=GenerationParams(), bootstrap_iters=200, model_id="m", generate=None)
    summary = bench.summarize(samples, ctx)
    detail, m = summary.detail, summary.metrics
    assert m["pde_median"].value == detail["pde_median"] and m["pde_median"].n == detail["n_instances_finite"]
    cov = m["coverage"]
    assert cov.value == pytest.approx(detail["coverage"]) and cov.n == detail["n_with_interval"] > 0
    k = round(detail["coverage"] * cov.n)
    ref = binomtest(k, cov.n).proportion_ci(method="wilson")
    assert cov.ci == (pytest.approx(ref.low), pytest.approx(ref.high))
    assert m["compliance"].n == detail["n_runs_expected"] and m["compliance"].value == pytest.approx(detail["compliance"])
