"""Capture golden scores with the PRE-refactor evaluators (run once, before the #13 harness; kept for provenance).

    TIKTOKEN_CACHE_DIR=... python tests/data/golden/capture.py

Writes `tests/data/golden/<case>.json`: the score parts of each run's results.json (counts and floats; no
timestamps, paths, versions). `tests/test_eval_golden.py` reruns the same cases through the new runner and
compares: counts exactly, floats to 1e-12. The FinIndices rows are frozen in `finindices_rows/test.jsonl`
(tests/eval_fixtures.make_rows(32, seed=7)) so a change to the fixture generator cannot move the golden.
Captured at commit 03d9f97 (old `ledgerlm eval --benchmark NAME ...` per-benchmark loops).
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO / "tests"))

# the cases: name -> (old argv, extractor key)
FININDICES_ROWS = HERE / "finindices_rows"
EPS_CONFIG = REPO / "tests" / "data" / "epsbench_official" / "glm-4.5-air__opencode__default__full" / "records.jsonl"


def finindices_part(results: dict) -> dict:
    return {"n": results["n"], "metrics": results["metrics"]}


def macrolens_part(results: dict) -> dict:
    return {"metrics": results["metrics"],
            "counts": {f"{t}/{lv}": s["counts"] for t, lvs in results["tasks"].items() for lv, s in lvs.items()}}


EPS_KEYS = ("n_records", "n_instances", "n_format_failures", "format_compliance", "pde_median", "pde_median_ci", "coverage",
            "above_rate", "below_rate")


def epsbench_part(results: dict) -> dict:
    return {k: results[k] for k in EPS_KEYS if k in results}


def sample_key(sample: dict) -> str:
    """id, or id@run for benchmarks with several runs per instance (EPSBench s1..s3)."""
    return f"{sample['id']}@{sample['run']}" if sample.get("run") else str(sample["id"])


def main() -> int:
    from eval_fixtures import make_rows, write_dataset

    from ledgerlm.cli import main as ledgerlm
    from ledgerlm.evaluate.macrolens.fixture import cached_fixture_dir
    from ledgerlm.evaluate.runfiles import read_run

    write_dataset(FININDICES_ROWS, make_rows(32, seed=7))
    cases = {
        "finindices_oracle": (["eval", "--benchmark", "finindices", "--model", "oracle", "--data", str(FININDICES_ROWS), "--n-boot", "200",
                               "--no-cache"], finindices_part),
        "finindices_wrong_unit": (["eval", "--benchmark", "finindices", "--model", "wrong_unit", "--data", str(FININDICES_ROWS),
                                   "--n-boot", "200", "--no-cache"], finindices_part),
        "macrolens_naive": (["eval", "--benchmark", "macrolens", "--tasks", "T1,T2,T3,T4,T5,T6,T7", "--ladder", "A,E", "--model",
                             "baseline:naive", "--data", str(cached_fixture_dir()), "--budget", "T1=12,T4=12,T7=40", "--horizon", "5",
                             "--t3-instances", "test", "--b-min", "100", "--b-max", "100"], macrolens_part),
        "epsbench_glm_score": (["score", "--benchmark", "epsbench", "--predictions", str(EPS_CONFIG), "--runs", "3"], epsbench_part),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, (argv, part) in cases.items():
            out = Path(tmp) / name
            assert ledgerlm([*argv, "--out", str(out)]) == 0, name
            results, samples = read_run(out)
            golden = {"case": name, "argv": [a.replace(str(REPO) + "/", "").replace(str(cached_fixture_dir()), "FIXTURE(seed=42)") for a in argv], **part(results),
                      "sample_scores": {sample_key(s): s.get("score") for s in samples}}
            (HERE / f"{name}.json").write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            print(f"golden {name}: {len(samples)} samples")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
