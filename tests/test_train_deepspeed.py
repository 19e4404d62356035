"""configs/sft/tiny-cpu.yaml under DeepSpeed ZeRO-2 on CPU, through `accelerate launch` (slow: ~1 min g++ build
of DeepSpeed's shm op on first use, then ~1 min per step on 2 cores).

    python -m pytest tests/test_train_deepspeed.py -m slow -q
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # with or without tests/__init__.py
from train_rows import write_dataset  # noqa: E402


@pytest.mark.slow
def test_tiny_config_trains_under_deepspeed_zero2_on_cpu(repo_root, tokenizer_json, tmp_path):
    from ledgerlm.train.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "model", tokenizer_json=tokenizer_json)
    data = write_dataset(tmp_path / "data")
    out = tmp_path / "run"
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--config_file", "configs/accelerate/zero2.yaml",
        "--num_processes", "1", "train/sft.py", "--config", "configs/sft/tiny-cpu.yaml",
        "--model_name_or_path", str(model), "--dataset_name", str(data), "--eval_dataset", str(data),
        "--output_dir", str(out), "--max_steps", "3", "--save_steps", "3", "--eval_every_n_steps", "3",
        "--eval_num_samples", "4", "--eval_max_new_tokens", "8", "--max_length", "256", "--learning_rate", "5e-3",
        "--report_to", "none",
    ]
    env = {**os.environ, "DS_ACCELERATOR": "cpu"}
    done = subprocess.run(command, cwd=repo_root, env=env, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    # a DeepSpeed ZeRO checkpoint (engine-sharded optimizer state), not a plain Trainer one
    shards = list((out / "checkpoint-3").rglob("*zero_pp_rank_0_mp_rank_00_optim_states.pt"))
    assert shards, sorted(p.name for p in (out / "checkpoint-3").rglob("*"))
    history = json.loads((out / "checkpoint-3" / "trainer_state.json").read_text())["log_history"]
    losses = [e["loss"] for e in history if "loss" in e]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert [e["step"] for e in history if "finindices/em" in e] == [0, 3]
    assert (out / "adapter_model.safetensors").is_file()
