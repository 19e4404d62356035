"""Supervised fine-tuning on ledgerlm training rows (DESIGN contract 5) with TRL, PEFT and accelerate.

    accelerate launch train/sft.py --config configs/sft/tiny-cpu.yaml
    accelerate launch --config_file configs/accelerate/zero2.yaml train/sft.py \
        --config configs/sft/qwen2.5-7b-lora.yaml --learning_rate 1e-4      # CLI overrides the YAML

Every option is a field of `ScriptArguments` below, TRL's `SFTConfig` (TrainingArguments + SFT:
packing, packing_strategy, padding_free, max_length, assistant_only_loss, ...) or TRL's
`ModelConfig` (model_name_or_path, dtype, use_peft, lora_*, load_in_4bit, ...). A YAML key that
is none of these fails loudly. A wrong config (empty, a value of the wrong type or out of range, a
model or dataset path that does not exist, an output_dir that is a file) is one line naming the config
file and the key, before any model loads (`check_args`). See train/README.md.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ledgerlm.configcheck import check_config_argv, normalize_config_argv
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


def _local_or_hub(value, key: str, what: str, where: dict) -> None:
    """`value` is an existing local path or a well-formed Hugging Face Hub id; else InputError. A value that can
    only be a local path (it starts with `.`, `/` or `~`, has more than one `/`, or its first component is a local
    folder such as `runs/`) must exist: it is never looked up on the Hub."""
    if value is not None and not isinstance(value, str):
        raise InputError(f"{value!r} is not a string (a local path or a Hugging Face Hub id)", field=key, **where)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"no {what}: set {key} in the YAML or --{key} (a local path or a Hugging Face Hub id)", field=key, **where)
    if Path(value).exists():
        return
    missing = InputError(f"{value!r}: no such file or folder, and not a Hugging Face Hub id", field=key, **where)
    first = value.replace("\\", "/").split("/", 1)[0]
    if value.startswith((".", "/", "~", "\\")) or value.count("/") > 1 or ("/" in value and first and Path(first).is_dir()):
        raise missing
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(value)
    except HFValidationError:
        raise missing from None


def check_args(script_args, training_args, model_args, config: str | None = None, cli: tuple[str, ...] = ()) -> None:
    """InputError naming the config file (unless `cli` overrides the key) and the key, for settings that would
    fail (or silently do something else) only after the model has loaded."""
    def where(key: str) -> dict:
        on_cli = any(a == f"--{key}" or a.startswith(f"--{key}=") for a in cli)
        return {"path": config} if config and not on_cli else {}

    def positive(key: str, value, allowed: str = "") -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InputError(f"{value!r} is not a positive integer{allowed}", field=key, **where(key))

    _local_or_hub(model_args.model_name_or_path, "model_name_or_path", "model folder", where("model_name_or_path"))
    _local_or_hub(script_args.dataset_name, "dataset_name", "training data", where("dataset_name"))
    positive("per_device_train_batch_size", training_args.per_device_train_batch_size)
    learning_rate = training_args.learning_rate
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)) or not learning_rate > 0:
        raise InputError(f"{learning_rate!r} is not a positive number", field="learning_rate", **where("learning_rate"))
    if training_args.max_length is not None:
        positive("max_length", training_args.max_length, " (or null: no limit)")
    positive("gradient_accumulation_steps", training_args.gradient_accumulation_steps)
    if training_args.max_steps != -1:
        positive("max_steps", training_args.max_steps, " (or -1: train num_train_epochs)")
    elif not training_args.num_train_epochs > 0:
        raise InputError(f"{training_args.num_train_epochs!r} is not a positive number of epochs", field="num_train_epochs",
                         **where("num_train_epochs"))
    if model_args.use_peft:
        positive("lora_r", model_args.lora_r)
    output = Path(training_args.output_dir)
    for folder in (output, *output.parents):
        if folder.exists():
            if not folder.is_dir():
                raise InputError(f"{str(folder)!r} is a file, not a folder" + (" (output_dir must be a folder)" if folder == output else ""),
                                 field="output_dir", **where("output_dir"))
            if not os.access(folder, os.W_OK):
                raise InputError(f"cannot write in {str(folder)!r}", field="output_dir", **where("output_dir"))
            break


def main(script_args, training_args, model_args, *, config: str | None = None, cli: tuple[str, ...] = ()):
    from trl import SFTTrainer, get_peft_config, get_quantization_config

    check_args(script_args, training_args, model_args, config, cli)  # before any model or data loads

    # Model: loaded by SFTTrainer from these kwargs (quantized for QLoRA)
    model_init_kwargs = dict(revision=model_args.model_revision, trust_remote_code=training_args.trust_remote_code,
                             attn_implementation=model_args.attn_implementation, dtype=model_args.dtype)
    quantization_config = get_quantization_config(model_args)  # QLoRA: load_in_4bit in the YAML
    training_args.model_init_kwargs = {**model_init_kwargs, **(training_args.model_init_kwargs or {})}
    training_args.include_num_input_tokens_seen = "non_padding"  # tokens/s counts real tokens (CLI takes only a bool)
    if script_args.chat_template:
        training_args.chat_template_path = str(resolve_template(script_args.chat_template))

    # Data: contract-5 rows (or contract-4 samples with worked solutions), validated
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

    class Parser(TrlParser):
        def error(self, message):  # a bad command-line value: one line, not ~150 lines of usage
            self.exit(2, f"train/sft.py: error: {message} (train/sft.py --help lists the options)\n")

    return Parser((ScriptArguments, SFTConfig, ModelConfig))


def cli(argv: list[str] | None = None):
    """`python train/sft.py ARGS`: a bad config or option exits with one line naming the file and the key."""
    from trl import ModelConfig, SFTConfig

    argv = normalize_config_argv(list(sys.argv[1:] if argv is None else argv))  # --config=C -> --config C (TrlParser reads only that)
    check_config_argv(argv, (ScriptArguments, SFTConfig, ModelConfig), "train/sft.py")  # one line: missing/broken/typo/type
    config = argv[argv.index("--config") + 1] if "--config" in argv[:-1] else None
    overrides = tuple(argv[:argv.index("--config")] + argv[argv.index("--config") + 2:] if config else argv)
    try:
        script_args, training_args, model_args = make_parser().parse_args_and_config(args=argv)
    except ValueError as err:  # TrainingArguments.__post_init__ (e.g. bf16 without a GPU): one line, not a traceback
        sys.exit(f"train/sft.py: error: {f'file {config}: ' if config else ''}{str(err).strip().splitlines()[0]}")
    try:
        return main(script_args, training_args, model_args, config=config, cli=overrides)
    except LedgerError as err:
        sys.exit(f"train/sft.py: error: {err}")


if __name__ == "__main__":
    cli()
