"""train/sft.py for real on CPU: the tiny random model from configs/sft/tiny-cpu.yaml, LoRA, packing, eval callback.

    python -m pytest tests/test_train_sft.py -q
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from ledgerlm.train.sft import main, make_parser
from ledgerlm.train.tiny_model import build_tiny_model
sys.path.insert(0, str(Path(__file__).resolve().parent))  # with or without tests/__init__.py
from train_rows import SYSTEM, write_dataset  # noqa: E402

FAST = ["--max_steps", "4", "--save_steps", "2", "--eval_every_n_steps", "2", "--eval_num_samples", "4",
        "--eval_batch_size", "4", "--eval_max_new_tokens", "8", "--max_length", "256", "--learning_rate", "5e-3",
        "--report_to", "none"]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory, tokenizer_json):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", tokenizer_json=tokenizer_json)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("data"))


def parse(repo_root, *overrides):
    return make_parser().parse_args_and_config(args=["--config", str(repo_root / "configs/sft/tiny-cpu.yaml"), *overrides])


@pytest.fixture(scope="module")
def run(repo_root, tiny_dir, data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("sft") / "run"
    args = parse(repo_root, "--model_name_or_path", str(tiny_dir), "--dataset_name", str(data_dir),
                 "--eval_dataset", str(data_dir), "--output_dir", str(out), *FAST)
    return main(*args), out, args


def test_loss_decreases_and_tokens_per_second_is_logged(run):
    trainer, _, _ = run
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    assert len(losses) == 4
    assert losses[-1] < losses[0]
    speeds = [e["tokens_per_second"] for e in trainer.state.log_history if "loss" in e]
    assert all(s > 0 for s in speeds)


def test_eval_callback_logs_a_baseline_and_later_scores_by_paradigm_and_hint(run):
    trainer, _, _ = run
    evals = [e for e in trainer.state.log_history if "finindices/em" in e]
    assert [e["step"] for e in evals] == [0, 2, 4]
    for entry in evals:
        cells = {k for k in entry if k.startswith("finindices/em/")}
        assert cells == {"finindices/em/single/hint", "finindices/em/single/nohint",
                         "finindices/em/table/hint", "finindices/em/table/nohint"}
        assert all(0.0 <= entry[k] <= 1.0 for k in cells)
    # the eval at step 2 does not swallow that step's loss entry
    assert any(e.get("step") == 2 and "loss" in e for e in trainer.state.log_history)


def test_lora_parameters_changed_and_adapter_reloads(run, tiny_dir):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    trainer, out, _ = run
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    lora_b = [p for n, p in trainer.model.named_parameters() if "lora_B" in n]
    assert lora_b and all(p.abs().sum() > 0 for p in lora_b)  # LoRA B starts at zero: training moved it
    reloaded = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_dir), out).eval()
    base = AutoModelForCausalLM.from_pretrained(tiny_dir).eval()
    ids = trainer.processing_class("Net sales 383,285; FY2022 394,328.", return_tensors="pt")["input_ids"]
    trainer.model.eval()
    with torch.no_grad():
        live, again, untrained = trainer.model(ids).logits, reloaded(ids).logits, base(ids).logits
    assert torch.allclose(live, again, atol=1e-5)
    assert not torch.allclose(again, untrained, atol=1e-4)


def test_rerun_resumes_from_the_last_checkpoint(repo_root, run, tiny_dir, data_dir):
    _, out, _ = run
    assert (out / "checkpoint-4").is_dir()
    args = parse(repo_root, "--model_name_or_path", str(tiny_dir), "--dataset_name", str(data_dir),
                 "--eval_dataset", str(data_dir), "--output_dir", str(out), *FAST, "--max_steps", "5")
    trainer = main(*args)
    assert trainer.state.global_step == 5
    steps = [e["step"] for e in trainer.state.log_history if "loss" in e]
    assert steps == [1, 2, 3, 4, 5]  # steps 1-4 restored from checkpoint-4, not retrained


def test_labels_are_ignored_everywhere_outside_assistant_turns(tiny_dir, tmp_path):
    """Token by token on a rendered two-turn example, against spans found in the rendered text."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    row = {"messages": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "AAPL FY2023 net sales 383,285; FY2022 394,328. Revenue growth, %, 2 decimals?"},
        {"role": "assistant", "content": "-2.80", "reasoning_content": "(383,285 - 394,328) / 394,328 = -2.80%"},
        {"role": "user", "content": "And the gross margin ratio, with gross margin 169,148?"},
        {"role": "assistant", "content": "44.13", "reasoning_content": "169,148 / 383,285 = 44.13%"},
    ]}
    args = SFTConfig(output_dir=str(tmp_path), assistant_only_loss=True, packing=False, max_length=None,
                     report_to="none", bf16=False, use_cpu=True, gradient_checkpointing=False)
    trainer = SFTTrainer(model=str(tiny_dir), args=args, train_dataset=Dataset.from_list([row]))
    batch = trainer.data_collator([trainer.train_dataset[0]])
    input_ids, labels = batch["input_ids"][0].tolist(), batch["labels"][0].tolist()

    tokenizer = trainer.processing_class
    text = tokenizer.apply_chat_template(row["messages"], tokenize=False)
    spans, cursor = [], 0
    for message in row["messages"]:
        if message["role"] == "assistant":
            output = f"<think>\n{message['reasoning_content']}\n</think>\n\n{message['content']}{tokenizer.eos_token}"
            start = text.index(output, cursor)
            spans.append((start, start + len(output)))
            cursor = start + len(output)
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    assert enc["input_ids"] == input_ids
    for token_id, label, (start, _) in zip(input_ids, labels, enc["offset_mapping"]):
        in_assistant = any(a <= start < b for a, b in spans)
        assert label == (token_id if in_assistant else -100), (tokenizer.decode([token_id]), start)
    assert sum(label != -100 for label in labels) > 20


def test_unfit_chat_template_stops_before_training(repo_root, tiny_dir, data_dir, tmp_path):
    from ledgerlm.errors import InputError

    plain = tmp_path / "plain.jinja"
    plain.write_text("{% for m in messages %}{{ m['content'] }}{% generation %}x{% endgeneration %}{% endfor %}")
    args = parse(repo_root, "--model_name_or_path", str(tiny_dir), "--dataset_name", str(data_dir),
                 "--eval_dataset", str(data_dir), "--chat_template", str(plain), "--output_dir", str(tmp_path / "out"), *FAST)
    with pytest.raises(InputError, match="reasoning_content is not rendered"):
        main(*args)
    assert not (tmp_path / "out" / "checkpoint-2").exists()


def test_the_yaml_config_reads_with_cli_overrides(repo_root):
    script_args, training_args, model_args = parse(repo_root, "--lora_r", "4")
    assert (training_args.packing, training_args.packing_strategy, training_args.padding_free) == (True, "bfd", True)
    assert training_args.assistant_only_loss and model_args.use_peft and model_args.lora_r == 4
    assert script_args.chat_template == "deepseek_v3_reasoning"
    json.dumps(training_args.to_dict())  # serialisable into checkpoints


def test_merged_model_matches_the_adapter(run, tiny_dir, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from ledgerlm.train.checkpoints import merge_adapter

    trainer, out, _ = run
    merged = AutoModelForCausalLM.from_pretrained(merge_adapter(out, tmp_path / "merged")).eval()
    assert not any("lora" in name for name, _ in merged.named_parameters())
    adapter = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_dir), out).eval()
    ids = trainer.processing_class("Gross margin 169,148 on net sales 383,285.", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert torch.allclose(merged(ids).logits, adapter(ids).logits, atol=1e-4)


def test_missing_config_is_a_one_line_error(tmp_path):
    import subprocess
    import sys

    missing = tmp_path / "nope.yaml"
    proc = subprocess.run([sys.executable, "train/sft.py", "--config", str(missing)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert proc.returncode == 1 and proc.stderr.strip() == f"train/sft.py: error: file {missing}: config not found"
