"""Training throughput: padded vs packed (bfd, padding-free) on a real synthesized dataset, and the
overhead of train/sft.py over a bare SFTTrainer script on the same rows.

    ledgerlm synth --out runs/data --num 300 --tokenizer runs/tiny-model
    python tests/bench/train_throughput.py --data runs/data                     # CPU, tiny random model
    python tests/bench/train_throughput.py --data runs/data --device cuda --scale 0.5b --max-length 16384 --steps 20

Goals: packed / padded tokens/s >= 1.5x; sft.py / bare wall time <= 1.05x. Tokens/s counts non-padding
input tokens over the timed steps (the first step is warm-up and not timed). MFU (GPU only) uses
6 * params + 12 * layers * hidden * seq flops per token against the chip's dense bf16 peak.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch
from transformers import TrainerCallback

PEAK_BF16 = {"A100": 312e12, "H100": 989e12, "H200": 989e12, "H800": 989e12, "L40S": 362e12, "A10G": 125e12}
SCALES = {  # ~0.5B is Qwen2.5-0.5B's shape (random init)
    "tiny": dict(hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, intermediate_size=128,
                 max_position_embeddings=32768),
    "0.5b": dict(hidden_size=896, num_layers=24, num_heads=14, num_kv_heads=2, intermediate_size=4864,
                 max_position_embeddings=32768),
}


class StepTimer(TrainerCallback):
    """Seconds and non-padding tokens of every optimizer step after the first."""

    def __init__(self):
        self.seconds, self.tokens, self._t0, self._tok0 = 0.0, 0, None, 0

    def on_step_begin(self, args, state, control, **kwargs):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        self._t0, self._tok0 = time.perf_counter(), state.num_input_tokens_seen

    def on_step_end(self, args, state, control, **kwargs):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        if state.global_step > 1:
            self.seconds += time.perf_counter() - self._t0
            self.tokens += state.num_input_tokens_seen - self._tok0


def sft_config(out: Path, args, *, packing: bool, **extra):
    from trl import SFTConfig

    from ledgerlm.train.chat_templates import resolve_template

    return SFTConfig(
        output_dir=str(out), max_steps=args.steps, per_device_train_batch_size=args.batch_size,
        max_length=args.max_length, packing=packing, packing_strategy="bfd", padding_free=packing,
        assistant_only_loss=True, chat_template_path=str(resolve_template("deepseek_v3_reasoning")),
        learning_rate=1e-4, lr_scheduler_type="constant", logging_steps=1, save_strategy="no", report_to="none",
        include_num_input_tokens_seen="non_padding", gradient_checkpointing=args.device == "cuda",
        bf16=args.device == "cuda", use_cpu=args.device == "cpu", dataloader_num_workers=0, seed=0,
        model_init_kwargs={"dtype": torch.bfloat16 if args.device == "cuda" else torch.float32,
                           **({"attn_implementation": args.attn} if args.attn else {})},
        **extra)


def bare_run(model_dir: Path, rows, args, *, packing: bool) -> tuple[StepTimer, float]:
    """What a user would write without ledgerlm: SFTTrainer on the same rows."""
    from datasets import Dataset
    from peft import LoraConfig
    from trl import SFTTrainer

    started, timer = time.perf_counter(), StepTimer()
    with tempfile.TemporaryDirectory() as out:
        peft = LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM") if args.lora else None
        trainer = SFTTrainer(model=str(model_dir), args=sft_config(Path(out), args, packing=packing),
                             train_dataset=Dataset.from_list(rows), peft_config=peft, callbacks=[timer])
        trainer.train()
    return timer, time.perf_counter() - started


def ledgerlm_run(model_dir: Path, data: Path, args) -> tuple[float, float]:
    """train/sft.py's main() on the same data, packed, with the same settings; returns (train_runtime, wall)."""
    from ledgerlm.train.sft import main, make_parser

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        flags = ["--model_name_or_path", str(model_dir), "--dataset_name", str(data), "--eval_dataset", "",
                 "--output_dir", out, "--max_steps", str(args.steps), "--per_device_train_batch_size", str(args.batch_size),
                 "--max_length", str(args.max_length), "--learning_rate", "1e-4", "--save_strategy", "no",
                 "--report_to", "none", "--use_peft", str(args.lora), "--auto_resume", "false",
                 "--gradient_checkpointing", str(args.device == "cuda"), "--bf16", str(args.device == "cuda"),
                 "--dtype", "bfloat16" if args.device == "cuda" else "float32"]
        if args.attn:
            flags += ["--attn_implementation", args.attn]
        parsed = make_parser().parse_args_and_config(args=["--config", "configs/sft/tiny-cpu.yaml", *flags])
        trainer = main(*parsed)
        runtime = next(e["train_runtime"] for e in reversed(trainer.state.log_history) if "train_runtime" in e)
    return runtime, time.perf_counter() - started


def flops_per_token(model_dir: Path, seq_len: float) -> float:
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(model_dir)
    h, layers, v = cfg.hidden_size, cfg.num_hidden_layers, cfg.vocab_size
    kv_width = cfg.num_key_value_heads * (h // cfg.num_attention_heads)
    per_layer = 2 * h * h + 2 * h * kv_width + 3 * h * cfg.intermediate_size  # q, o; k, v; gate, up, down
    params = layers * per_layer + v * h  # matmul weights incl. the LM head (embedding lookup is free)
    return 6 * params + 12 * layers * h * seq_len


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a `ledgerlm synth` dataset folder (train.jsonl)")
    parser.add_argument("--model", help="model folder; default: a random model of --scale with the real tokenizer")
    parser.add_argument("--scale", default="tiny", choices=sorted(SCALES))
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--attn", default=None, help="attn_implementation, e.g. flash_attention_2 / kernels-community/flash-attn")
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps per run (first one untimed)")
    parser.add_argument("--batch-size", type=int, default=2, help="sequences per step (padded rows or packed bins)")
    parser.add_argument("--max-length", type=int, default=4096, help="tokens per row / packed bin")
    parser.add_argument("--rows", type=int, default=64, help="training rows used")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved repeats for the overhead comparison")
    parser.add_argument("--lora", action="store_true", help="LoRA (as tiny-cpu.yaml) instead of full fine-tuning")
    parser.add_argument("--only", choices=["packing", "overhead"], help="run one of the two comparisons")
    args = parser.parse_args()

    from ledgerlm.train.data import read_rows
    from ledgerlm.train.tiny_model import build_tiny_model, build_tokenizer

    rows = read_rows(args.data, "train")[: args.rows]
    tokenizer = build_tokenizer()
    lengths = [len(tokenizer(tokenizer.apply_chat_template(r["messages"], tokenize=False), add_special_tokens=False)["input_ids"])
               for r in rows]
    print(f"rows {len(rows)} from {args.data}: tokens mean {statistics.mean(lengths):.0f}, median "
          f"{statistics.median(lengths):.0f}, max {max(lengths)}; {sum(n > args.max_length for n in lengths)} rows over "
          f"max_length {args.max_length} are truncated")
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(args.model) if args.model else build_tiny_model(Path(tmp) / "model", **SCALES[args.scale])
        subset = Path(tmp) / "data"
        subset.mkdir()
        (subset / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

        if args.only != "overhead":
            compare_packing(model_dir, rows, lengths, args)
        if args.only != "packing":
            compare_overhead(model_dir, rows, subset, args)


def padding_bound(lengths: list[int], cap: int, batch: int, seeds: int = 20) -> float:
    """Padded tokens / real tokens for shuffled batches of `batch` rows cut at `cap`: the most packing can gain
    when compute is proportional to tokens (the attention term aside)."""
    import random

    ratios = []
    for seed in range(seeds):
        cut = [min(n, cap) for n in lengths]
        random.Random(seed).shuffle(cut)
        padded = sum(batch * max(cut[i:i + batch]) for i in range(0, len(cut), batch))
        ratios.append(padded / sum(cut))
    return statistics.mean(ratios)


def compare_packing(model_dir: Path, rows, lengths, args) -> None:
    for cap in sorted({args.max_length, 32768}):
        bounds = ", ".join(f"batch {b}: {padding_bound(lengths, cap, b):.2f}x" for b in (1, 2, 4, 8, 16))
        print(f"padded/real tokens at max_length {cap} (packing's ceiling): {bounds}")
    padded, _ = bare_run(model_dir, rows, args, packing=False)
    packed, _ = bare_run(model_dir, rows, args, packing=True)
    rate_pad, rate_pack = padded.tokens / padded.seconds, packed.tokens / packed.seconds
    print(f"padded        : {rate_pad:10.1f} tokens/s ({padded.tokens} tokens in {padded.seconds:.1f} s)")
    print(f"packed (bfd)  : {rate_pack:10.1f} tokens/s ({packed.tokens} tokens in {packed.seconds:.1f} s)")
    print(f"packed/padded : {rate_pack / rate_pad:.2f}x  (goal >= 1.5x)")
    if args.device == "cuda":
        name = torch.cuda.get_device_name()
        peak = next((v for k, v in PEAK_BF16.items() if k in name), None)
        for label, rate, seq in (("padded", rate_pad, statistics.mean(lengths)), ("packed", rate_pack, args.max_length)):
            mfu = rate * flops_per_token(model_dir, min(seq, args.max_length)) / peak if peak else float("nan")
            print(f"MFU {label:7s}: {100 * mfu:.1f}% of {name} dense bf16 peak")


def compare_overhead(model_dir: Path, rows, subset: Path, args) -> None:
    bare_walls, ours_walls, bare_loop, ours_loop = [], [], [], []
    for _ in range(args.repeats):  # interleaved so load drift hits both
        timer, wall = bare_run(model_dir, rows, args, packing=True)
        bare_walls.append(wall)
        bare_loop.append(timer.seconds)
        runtime, wall = ledgerlm_run(model_dir, subset, args)
        ours_walls.append(wall)
        ours_loop.append(runtime)
    print(f"bare SFTTrainer wall : {min(bare_walls):.1f} s (min of {args.repeats}; all {[round(w, 1) for w in bare_walls]})")
    print(f"train/sft.py wall    : {min(ours_walls):.1f} s (min of {args.repeats}; all {[round(w, 1) for w in ours_walls]})")
    print(f"sft.py / bare (wall) : {min(ours_walls) / min(bare_walls):.3f}x  (goal <= 1.05x)")


if __name__ == "__main__":
    main()
