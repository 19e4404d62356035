"""End to end with a local `hf:` teacher: a tiny random Llama (real 128k tokenizer) on 30 items; the
output rows load in TRL's SFTTrainer with the training chat template (assistant-only loss)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # distill_fixtures, with or without tests/__init__.py
from distill_fixtures import make_items, read_jsonl, write_dataset  # noqa: E402

from ledgerlm.synth.distill.cli import main  # noqa: E402

pytest.importorskip("trl")


@pytest.fixture(scope="module")
def tiny_teacher(tmp_path_factory, tokenizer_json):
    from ledgerlm.train.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", tokenizer_json=tokenizer_json)


def test_hf_teacher_30_items_rows_load_in_sft_trainer(tmp_path, tiny_teacher):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from ledgerlm.train.chat_templates import check_training_template, resolve_template
    from ledgerlm.train.data import load_training_dataset

    items = make_items(30)
    data = write_dataset(tmp_path / "data", items)
    out = tmp_path / "out"
    args = ["--data", str(data), "--teacher", f"hf:{tiny_teacher}", "--samples-per-item", "1", "--temperature", "0",
            "--max-tokens", "8", "--batch-size", "30", "--out", str(out), "--mix-solutions", "unsolved", "--no-progress"]
    assert main(args) == 0

    rejects = read_jsonl(out / "rejects.jsonl")
    manifest = json.loads((out / "manifest.json").read_text())
    teacher_rejects = [r for r in rejects if r["source"] == "teacher"]
    assert len(teacher_rejects) == 30  # a random model never gets a FinIndices answer right
    assert {r["reason"] for r in teacher_rejects} <= {"truncated", "no_answer", "wrong_value", "wrong_format"}
    for r in teacher_rejects:
        assert r["teacher"] == f"hf:{tiny_teacher}" and r["tokens"]["prompt"] > 0
        assert (r["finish_reason"] == "length") == (r["reason"] == "truncated")
        assert r["tokens"]["completion"] == 8 if r["reason"] == "truncated" else r["tokens"]["completion"] <= 8
    assert manifest["counts"]["samples"] == 30 and manifest["counts"]["rows_solution"] == 30
    assert manifest["counts"]["acceptance_rate"] == 0.0

    # truncated samples are never cached (a rerun asks for them again); the others are
    cached = 30 - sum(r["reason"] == "truncated" for r in teacher_rejects)
    cache = out / "cache.jsonl"
    assert (len(cache.read_text().splitlines()) if cache.exists() else 0) == cached

    dataset = load_training_dataset(str(out), "train")  # the training helper's loader (contract 5)
    assert len(dataset) == 30
    tokenizer = AutoTokenizer.from_pretrained(tiny_teacher)
    template = resolve_template("deepseek_v3_reasoning").read_text(encoding="utf-8")
    assert check_training_template(tokenizer, template) == []
    tokenizer.chat_template = template
    row = dataset[0]
    encoded = tokenizer.apply_chat_template(row["messages"], tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    trained = tokenizer.decode([t for t, m in zip(encoded["input_ids"], encoded["assistant_masks"]) if m])
    assert row["messages"][-1]["content"].strip() in trained and "[item" not in trained

    model = AutoModelForCausalLM.from_pretrained(tiny_teacher)
    config = SFTConfig(output_dir=str(tmp_path / "sft"), max_steps=1, per_device_train_batch_size=4,
                       assistant_only_loss=True, max_length=512, report_to=[], save_strategy="no", logging_steps=1,
                       use_cpu=True, dataloader_num_workers=0)
    trainer = SFTTrainer(model=model, args=config, train_dataset=Dataset.from_list(list(dataset)), processing_class=tokenizer)
    tokenized = trainer.train_dataset
    assert len(tokenized) == 30
    for row in tokenized:  # assistant-only loss: the prompt is masked (-100), the answer is trained
        if "assistant_masks" in row:
            trained_ids = [t for t, m in zip(row["input_ids"], row["assistant_masks"]) if m]
        else:
            trained_ids = [t for t in row["labels"] if t != -100]
        assert 0 < len(trained_ids) < len(row["input_ids"])
        assert "[item" not in tokenizer.decode(trained_ids)
    result = trainer.train()
    assert result.training_loss > 0
