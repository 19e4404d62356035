"""Supervised fine-tuning on ledgerlm training rows (DESIGN contract 5) with TRL, PEFT and accelerate.

    accelerate launch train/sft.py --config configs/sft/tiny-cpu.yaml
    accelerate launch --config_file configs/accelerate/zero2.yaml train/sft.py \
        --config configs/sft/qwen2.5-7b-lora.yaml --learning_rate 1e-4      # CLI overrides the YAML

Every option is a field of `ScriptArguments` below, TRL's `SFTConfig` (TrainingArguments + SFT:
packing, packing_strategy, padding_free, max_length, assistant_only_loss, ...) or TRL's
`ModelConfig` (model_name_or_path, dtype, use_peft, lora_*, load_in_4bit, ...). A YAML key that
is none of these fails loudly. See train/README.md.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from ledgerlm.configcheck import check_config_argv
from ledgerlm.errors import InputError, LedgerError
from ledgerlm.train.callbacks import FinIndicesEvalCallback, TokensPerSecondCallback
from ledgerlm.train.chat_templates import check_training_template, resolve_template
from ledgerlm.train.checkpoints import last_checkpoint, merge_adapter
from ledgerlm.train.data import drop_overlong, load_training_dataset, read_samples

@dataclass
class ScriptArguments:
    dataset_name: str | None = field(
        default=None, metadata={"help": "training rows: a .jsonl/.parquet file, a dataset folder (train.jsonl) or a Hub id"})
    dataset_config: str | None = field(default=None, metadata={"help": "Hub dataset config name"})
    dataset_train_split: str = field(default="train", metadata={"help": "split (file prefix in a folder) to train on"})
    chat_template: str | None = field(default=None, metadata={
        "help": "training chat template: a name in train/templates (deepseek_v3_reasoning, qwen2_5_reasoning, "
                "llama3_reasoning) or a .jinja path; default: the model's own (TRL swaps in a marked copy if it knows it)"})
    eval_dataset: str | None = field(default=None, metadata={
        "help": "FinIndices samples (contract 4) scored during training: a .jsonl or a dataset folder"})
    eval_split: str = field(default="dev", metadata={"help": "split of eval_dataset (file prefix in a folder)"})
    eval_every_n_steps: int = field(default=50, metadata={"help": "optimizer steps between FinIndices evals (also once before step 1)"})
    eval_num_samples: int = field(default=64, metadata={"help": "fixed dev subset size, stratified over paradigm x hint"})
    eval_batch_size: int = field(default=8, metadata={"help": "prompts per generate() call, left padded"})
    eval_max_new_tokens: int = field(default=512, metadata={"help": "generated tokens per dev prompt"})
    auto_resume: bool = field(default=True, metadata={"help": "resume from the last checkpoint-N in output_dir if any"})
    merge_adapter: bool = field(default=False, metadata={"help": "after LoRA training also write output_dir/merged"})
    drop_overlong: bool = field(default=True, metadata={
        "help": "drop rows longer than max_length (model tokenizer + template) instead of letting TRL cut off their answer"})


def main(script_args, training_args, model_args):
    from trl import SFTTrainer, get_peft_config, get_quantization_config

    # Model: loaded by SFTTrainer from these kwargs (quantized for QLoRA)
    model_init_kwargs = dict(revision=model_args.model_revision, trust_remote_code=training_args.trust_remote_code,
                             attn_implementation=model_args.attn_implementation, dtype=model_args.dtype)
    quantization_config = get_quantization_config(model_args)  # QLoRA: load_in_4bit in the YAML
    training_args.model_init_kwargs = {**model_init_kwargs, **(training_args.model_init_kwargs or {})}
    training_args.include_num_input_tokens_seen = "non_padding"  # tokens/s counts real tokens (CLI takes only a bool)
    if script_args.chat_template:
        training_args.chat_template_path = str(resolve_template(script_args.chat_template))

    # Data: contract-5 rows (or contract-4 samples with worked solutions), validated
    if not script_args.dataset_name:
        raise InputError("no training data: set dataset_name in the YAML or --dataset_name", field="dataset_name")
    train_dataset = load_training_dataset(script_args.dataset_name, script_args.dataset_train_split, script_args.dataset_config)
    if script_args.drop_overlong:  # a row longer than max_length would be truncated: no answer, no end-of-turn token
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, revision=model_args.model_revision,
                                                  trust_remote_code=training_args.trust_remote_code)
        template = Path(training_args.chat_template_path).read_text(encoding="utf-8") if training_args.chat_template_path else None
        train_dataset, dropped = drop_overlong(train_dataset, tokenizer, template, training_args.max_length)
        if dropped:
            print(f"train/sft.py: dropped {dropped} training rows longer than max_length={training_args.max_length} tokens "
                  f"({model_args.model_name_or_path} tokenizer + template); synth with --tokenizer MODEL and a lower --max-tokens",
                  file=sys.stderr)
        if not len(train_dataset):
            raise InputError(f"every training row is longer than max_length={training_args.max_length} tokens", field="max_length")

    trainer = SFTTrainer(model=model_args.model_name_or_path, args=training_args, train_dataset=train_dataset,
                         quantization_config=quantization_config, peft_config=get_peft_config(model_args))
    if training_args.assistant_only_loss:
        problems = check_training_template(trainer.processing_class, trainer.chat_template)
        if problems:
            raise InputError("; ".join(problems) + " (pick --chat_template from train/templates)", field="chat_template")

    # Callbacks: tokens/s first so TensorBoard / W&B see it; FinIndices EM beside the loss
    trainer.callback_handler.callbacks.insert(0, TokensPerSecondCallback())
    if script_args.eval_dataset:
        trainer.add_callback(FinIndicesEvalCallback(
            trainer, read_samples(script_args.eval_dataset, script_args.eval_split),
            every_n_steps=script_args.eval_every_n_steps, num_samples=script_args.eval_num_samples,
            batch_size=script_args.eval_batch_size, max_new_tokens=script_args.eval_max_new_tokens,
            seed=training_args.seed))

    # Train, resuming from the last checkpoint unless told otherwise
    resume = training_args.resume_from_checkpoint
    if resume is None and script_args.auto_resume:
        resume = last_checkpoint(training_args.output_dir)
    if resume:
        trainer.accelerator.print(f"resuming from {resume}")
    trainer.train(resume_from_checkpoint=resume)

    # Save: the adapter (LoRA) or the full model, plus the tokenizer; optionally a merged copy
    trainer.save_model(training_args.output_dir)
    trainer.save_state()  # trainer_state.json: loss, tokens/s and FinIndices EM history for reports
    trainer.accelerator.print(f"model saved to {training_args.output_dir}")
    if script_args.merge_adapter and model_args.use_peft:
        trainer.accelerator.wait_for_everyone()
        if trainer.accelerator.is_main_process:
            merged = merge_adapter(training_args.output_dir, Path(training_args.output_dir) / "merged")
            trainer.accelerator.print(f"merged model saved to {merged}")
    if training_args.push_to_hub:
        trainer.push_to_hub(dataset_name=script_args.dataset_name)
    if hasattr(trainer, "end"):  # transformers >= 5.18: finish trackers, destroy the process group
        trainer.end()
    return trainer


def make_parser():
    from trl import ModelConfig, SFTConfig, TrlParser

    return TrlParser((ScriptArguments, SFTConfig, ModelConfig))


if __name__ == "__main__":
    from trl import ModelConfig, SFTConfig

    check_config_argv(sys.argv, (ScriptArguments, SFTConfig, ModelConfig), "train/sft.py")  # one line: missing/broken/typo
    script_args, training_args, model_args = make_parser().parse_args_and_config()
    try:
        main(script_args, training_args, model_args)
    except LedgerError as err:
        sys.exit(f"train/sft.py: error: {err}")
