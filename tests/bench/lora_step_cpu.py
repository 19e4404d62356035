"""Seconds per LoRA forward + backward + AdamW step of a real model on CPU, by weight dtype / autocast / batch:
where the training time of recipes/real_model_cpu.py goes (issue #15).

    OMP_WAIT_POLICY=PASSIVE python tests/bench/lora_step_cpu.py --model runs/smollm2-135m [--seq 800] [--steps 3] [--profile]

Random token ids of length --seq (the slices' prompt + solution length), LoRA r16 on all linear layers as in
configs/sft/smollm2-135m-lora-cpu.yaml. The first step is warm-up and not timed. Prints tokens/s per variant and,
with --profile, the top CPU ops of one autocast step. Run it on a quiet machine: ratios between variants of one run.
"""
from __future__ import annotations

import argparse
import time

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

VARIANTS = {  # name: (weight dtype, batch, bf16 autocast)
    "fp32": (torch.float32, 1, False),
    "fp32+autocast": (torch.float32, 1, True),
    "bf16 weights+autocast": (torch.bfloat16, 1, True),
    "fp32+autocast, batch 4": (torch.float32, 4, True),
}


def build(model_dir: str, dtype: torch.dtype):
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype, attn_implementation="sdpa")
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear"))
    for param in model.parameters():  # adapters train in fp32 whatever the frozen weights are
        if param.requires_grad:
            param.data = param.data.float()
    return model


def step(model, optimizer, ids: torch.Tensor, autocast: bool) -> None:
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="runs/smollm2-135m", help="prepared HF folder (ledgerlm model prepare smollm2-135m)")
    parser.add_argument("--seq", type=int, default=800)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, seq {args.seq}")
    for name, (dtype, batch, autocast) in VARIANTS.items():
        model = build(args.model, dtype)
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
        ids = torch.randint(0, model.config.vocab_size, (batch, args.seq))
        step(model, optimizer, ids, autocast)  # warm-up
        start = time.perf_counter()
        for _ in range(args.steps):
            step(model, optimizer, ids, autocast)
        seconds = (time.perf_counter() - start) / args.steps
        print(f"{name:26s} {seconds:6.2f} s/step  {batch * args.seq / seconds:6.0f} tokens/s", flush=True)
        if args.profile and name == "fp32+autocast":
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                step(model, optimizer, ids, autocast)
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))


if __name__ == "__main__":
    main()
