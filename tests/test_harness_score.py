"""`ledgerlm score` writes the same results.json as `ledgerlm eval` (one layout), and rescoring an eval's
samples.jsonl reproduces its scores; a log without prompts is one clear error.

    python -m pytest -q tests/test_harness_score.py
"""
from __future__ import annotations

from pathlib import Path

from ledgerlm.cli import main as ledgerlm
from ledgerlm.evaluate.runfiles import read_run

ROWS = Path(__file__).resolve().parent / "data" / "golden" / "finindices_rows"


def test_rescoring_an_eval_log_gives_the_same_scores_and_layout(tmp_path):
    run, again = tmp_path / "run", tmp_path / "again"
    assert ledgerlm(["eval", "--model", "wrong_unit", "--tasks", "finindices", "--data", str(ROWS), "--log_samples", "--no_cache",
                     "--bootstrap_iters", "200", "--no_progress", "--output_path", str(run)]) == 0
    assert ledgerlm(["score", "--benchmark", "finindices", "--predictions", str(run / "samples.jsonl"), "--model", "wrong_unit_x1000",
                     "--n-boot", "200", "--out", str(again)]) == 0
    evaluated, eval_samples = read_run(run)
    rescored, score_samples = read_run(again)
    assert rescored["metrics"] == evaluated["metrics"] and rescored["results"] == evaluated["results"]
    assert [s["score"] for s in score_samples] == [s["score"] for s in eval_samples]
    assert {"versions", "higher_is_better", "n-samples", "library_versions", "date"} <= set(rescored)
    assert rescored["model"] == "wrong_unit_x1000" and rescored["config"]["predictions"] == str(run / "samples.jsonl")


def test_a_log_without_prompts_names_the_flag(tmp_path, capsys):
    run = tmp_path / "run"
    assert ledgerlm(["eval", "--model", "oracle", "--tasks", "finindices", "--data", str(ROWS), "--limit", "2", "--no_progress",
                     "--output_path", str(run)]) == 0
    capsys.readouterr()
    assert ledgerlm(["score", "--benchmark", "finindices", "--predictions", str(run / "samples.jsonl"), "--out", str(tmp_path / "s")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "rerun `ledgerlm eval` with --log_samples" in err and "fx-00000" in err
    assert not (tmp_path / "s").exists()
