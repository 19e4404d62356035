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
