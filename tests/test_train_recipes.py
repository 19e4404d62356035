"""The recipes end to end on CPU at tiny scale (slow: ~6 minutes on 2 cores).

    python -m pytest tests/test_train_recipes.py -m slow -q
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_finindices_sft_then_hint_ablation_write_reports(repo_root, tmp_path):
    out = tmp_path / "sft-recipe"
    subprocess.run([sys.executable, "recipes/finindices_sft.py", "--config", "recipes/configs/finindices_sft.yaml",
                    "--out_dir", str(out)], cwd=repo_root, check=True, timeout=1800)
    report = (out / "REPORT.md").read_text()
    assert "| paradigm | hint | before | after |" in report and "Paired deltas" in report
    before = json.loads((out / "eval-before" / "results.json").read_text())
    after = json.loads((out / "eval-after" / "results.json").read_text())
    assert before["n"] == after["n"] > 0  # the same held-out items before and after
    assert (out / "sft" / "adapter_model.safetensors").is_file()
    history = json.loads((out / "sft" / "trainer_state.json").read_text())["log_history"]
    assert [e["step"] for e in history if "finindices/em" in e][0] == 0  # baseline before the first step

    ablation = tmp_path / "ablation"
    subprocess.run([sys.executable, "recipes/hint_ablation.py", "--config", "recipes/configs/hint_ablation.yaml",
                    "--out_dir", str(ablation), "--data", str(out / "data"), "--base_model", str(out / "base-model"),
                    "--tuned_model", str(out / "sft")], cwd=repo_root, check=True, timeout=1800)
    text = (ablation / "REPORT.md").read_text()
    assert "| Model | Single w/ Hint | Single w/o Hint | Δ |" in text and "| Absolute Improvement (Δ) |" in text
