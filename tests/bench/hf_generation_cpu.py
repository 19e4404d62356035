"""Where CPU generation time goes for a real small model (SmolLM2-135M): one run, every variant, ratios.

    OMP_WAIT_POLICY=PASSIVE nice -n 10 python tests/bench/hf_generation_cpu.py \
        --model runs/smollm2-135m --data runs/real-model-cpu-40/lookup/data/test.jsonl --n 8 --max-new-tokens 64

Real prompts (chat template applied) from a ledgerlm test split; greedy; EOS is suppressed
(min_new_tokens = max_new_tokens) so every variant does the same work. For each variant it times a
prefill-only pass (max_new_tokens=1) and the full generation, and prints prefill tokens/s, new tokens/s,
seconds per decode step, CPU seconds (less sensitive to other jobs than wall time) and the wall-time ratio to the first variant — all measured in this one run,
variants interleaved over --repeats rounds (median kept) because a shared machine is noisy.
`--variants` picks a subset (names below); `--list` prints them.

    ... --check-order 16 --max-new-tokens 300

instead runs the `hf:` backend (its CPU defaults) on the first 16 rows with batches sorted by prompt length
and in input order, and prints how many texts and extracted FinIndices answers agree per item.

    ... --backend-run 16 --max-new-tokens 300 --batch-size 8

times the `hf:` backend as `ledgerlm eval` runs it (EOS honoured) on 16 rows: wall and CPU seconds per sample.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from dataclasses import dataclass, replace

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


@dataclass(frozen=True)
class Variant:
    dtype: str = "bfloat16"        # weights (torch_dtype)
    autocast: bool = False         # torch.autocast("cpu", bfloat16) around generate (weights stay as dtype)
    batch: int = 8
    sort: bool = True              # batches of similar prompt length (less left padding)
    attn: str = "sdpa"
    inference_mode: bool = True    # else torch.no_grad
    cache: str | None = None       # "static" = preallocated KV cache (no per-step torch.cat)
    compile: bool = False          # torch.compile the forward (only with cache="static")
    threads: int = 0               # 0 = torch's default


BASE = Variant()
VARIANTS = {
    "fp32": replace(BASE, dtype="float32"),          # the backend's CPU default before issue #15
    "bf16": BASE,                                     # --dtype bfloat16 (the recipe's setting before #15)
    "fp32+autocast": replace(BASE, dtype="float32", autocast=True),
    "bf16-b1": replace(BASE, batch=1),
    "bf16-b4": replace(BASE, batch=4),
    "bf16-b16": replace(BASE, batch=16),
    "bf16-unsorted": replace(BASE, sort=False),
    "bf16-eager": replace(BASE, attn="eager"),
    "bf16-no_grad": replace(BASE, inference_mode=False),
    "bf16-static": replace(BASE, cache="static"),
    "bf16-static-compile": replace(BASE, cache="static", compile=True),
    "bf16-1thread": replace(BASE, threads=1),
}
DEFAULT = ["fp32", "bf16", "fp32+autocast", "bf16-b1", "bf16-b4", "bf16-unsorted", "bf16-eager", "bf16-no_grad",
           "bf16-static", "bf16-1thread"]


def load_prompts(tokenizer, path: str, n: int) -> list[str]:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()][:n]
    return [tokenizer.apply_chat_template(r["messages"], add_generation_prompt=True, tokenize=False) for r in rows]


class Runner:
    def __init__(self, model_dir: str):
        self.model_dir = model_dir
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.tokenizer.padding_side = "left"
        self.models: dict[tuple, torch.nn.Module] = {}

    def model(self, v: Variant):
        key = (v.dtype, v.attn, v.compile)
        if key not in self.models:
            m = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=getattr(torch, v.dtype), attn_implementation=v.attn).eval()
            if v.compile:
                m.forward = torch.compile(m.forward, dynamic=False)
            self.models[key] = m
        return self.models[key]

    def generate(self, v: Variant, prompts: list[str], new_tokens: int) -> tuple[float, int, int, float]:
        """Wall seconds, prompt tokens (incl. padding), new tokens, and CPU seconds of this process for all prompts."""
        model = self.model(v)
        lengths = [len(ids) for ids in self.tokenizer(prompts, add_special_tokens=False)["input_ids"]]
        order = sorted(range(len(prompts)), key=lambda i: -lengths[i]) if v.sort else list(range(len(prompts)))
        threads = torch.get_num_threads()
        if v.threads:
            torch.set_num_threads(v.threads)
        padded = made = 0
        began, cpu = time.perf_counter(), time.process_time()
        try:
            for start in range(0, len(order), v.batch):
                enc = self.tokenizer([prompts[i] for i in order[start : start + v.batch]], return_tensors="pt", padding=True,
                                     add_special_tokens=False)
                grad = torch.inference_mode() if v.inference_mode else torch.no_grad()
                amp = torch.autocast("cpu", dtype=torch.bfloat16) if v.autocast else contextlib.nullcontext()
                extra = {"cache_implementation": v.cache} if v.cache else {}
                with grad, amp:
                    out = model.generate(**enc, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                                         pad_token_id=self.tokenizer.pad_token_id, **extra)
                padded += enc["input_ids"].numel()
                made += (out.shape[1] - enc["input_ids"].shape[1]) * out.shape[0]
        finally:
            torch.set_num_threads(threads)
        return time.perf_counter() - began, padded, made, time.process_time() - cpu


def check_order(args: argparse.Namespace) -> None:
    from ledgerlm.evaluate.finindices.bench import score_record
    from ledgerlm.inference.backends import make_backend
    from ledgerlm.inference.sampling import GenerationParams

    rows = [json.loads(line) for line in open(args.data, encoding="utf-8") if line.strip()][: args.check_order]
    sampler = make_backend(f"hf:{args.model}", device="cpu", batch_size=args.batch_size)
    params = GenerationParams(max_tokens=args.max_new_tokens)
    runs = {}
    for sort in (True, False):
        sampler.sort_by_length = sort
        began = time.perf_counter()
        out = sampler.generate([r["messages"] for r in rows], params)
        runs[sort] = [score_record(r, c) for r, c in zip(rows, out)]
        print(f"sorted={sort}: {time.perf_counter() - began:.0f} s, {sum(c.completion_tokens for c in out)} new tokens, "
              f"dtype {sampler.dtype}, batch {sampler.batch_size}", flush=True)
    same_text = sum(a["response"] == b["response"] for a, b in zip(runs[True], runs[False]))
    same_answer = sum(a["extracted"] == b["extracted"] for a, b in zip(runs[True], runs[False]))
    same_score = sum(a["score"] == b["score"] for a, b in zip(runs[True], runs[False]))
    print(f"{len(rows)} items: identical text {same_text}, identical extracted answer {same_answer}, identical score {same_score}")
    for a, b in zip(runs[True], runs[False]):
        if a["extracted"] != b["extracted"]:
            print(f"  {a['id']}: sorted {a['extracted']!r} vs input order {b['extracted']!r}")


def backend_run(args: argparse.Namespace) -> None:
    from ledgerlm.inference.backends import make_backend
    from ledgerlm.inference.sampling import GenerationParams

    rows = [json.loads(line) for line in open(args.data, encoding="utf-8") if line.strip()][: args.backend_run]
    sampler = make_backend(f"hf:{args.model}", device="cpu", batch_size=args.batch_size)
    began, cpu = time.perf_counter(), time.process_time()
    out = sampler.generate([r["messages"] for r in rows], GenerationParams(max_tokens=args.max_new_tokens))
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    print(f"{len(rows)} samples, dtype {sampler.dtype}, batch {sampler.batch_size}, max_tokens {args.max_new_tokens}: "
          f"{sum(c.prompt_tokens for c in out)} prompt + {sum(c.completion_tokens for c in out)} new tokens "
          f"({sum(c.finish_reason == 'length' for c in out)} hit max_tokens); wall {wall:.0f} s ({wall / len(rows):.1f} s/sample), "
          f"CPU {cpu:.0f} s ({cpu / len(rows):.1f} s/sample), torch threads {torch.get_num_threads()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/smollm2-135m")
    parser.add_argument("--data", default="runs/real-model-cpu-40/lookup/data/test.jsonl")
    parser.add_argument("--n", type=int, default=8, help="prompts (the first N rows of --data)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--variants", default=",".join(DEFAULT), help="comma-separated names; the first is the ratio's base")
    parser.add_argument("--repeats", type=int, default=1, help="interleaved rounds; the median wall time is kept")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--check-order", type=int, default=0, metavar="N", help="sorted vs input-order batches on N rows (backend)")
    parser.add_argument("--backend-run", type=int, default=0, metavar="N", help="time the backend as `ledgerlm eval` runs it on N rows")
    parser.add_argument("--batch-size", type=int, default=8, help="--check-order / --backend-run batch size")
    args = parser.parse_args()
    if args.check_order:
        return check_order(args)
    if args.backend_run:
        return backend_run(args)
    if args.list:
        for name, v in VARIANTS.items():
            print(f"{name:22s} {v}")
        return
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant(s) {unknown}; choose from {sorted(VARIANTS)}")
    runner = Runner(args.model)
    prompts = load_prompts(runner.tokenizer, args.data, args.n)
    real = sum(len(ids) for ids in runner.tokenizer(prompts, add_special_tokens=False)["input_ids"])
    print(f"{len(prompts)} prompts, {real} prompt tokens (mean {real / len(prompts):.0f}), {args.max_new_tokens} new tokens each, "
          f"torch threads {torch.get_num_threads()}, {args.repeats} round(s)", flush=True)
    prefill: dict[str, list[float]] = {n: [] for n in names}
    full: dict[str, list[float]] = {n: [] for n in names}
    info: dict[str, tuple[int, int]] = {}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    for name in names:  # load (and warm up / compile) every model before timing
        runner.generate(VARIANTS[name], prompts[:1], 2)
    for _ in range(args.repeats):
        for name in names:
            v = VARIANTS[name]
            prefill[name].append(runner.generate(v, prompts, 1)[0])
            seconds, padded, made, cpu_s = runner.generate(v, prompts, args.max_new_tokens)
            full[name].append(seconds)
            cpu[name].append(cpu_s)
            info[name] = (padded, made)
            print(f"  {name}: prefill {prefill[name][-1]:.1f} s, generate {seconds:.1f} s (CPU {cpu_s:.1f} s)", flush=True)
    base = statistics.median(full[names[0]])
    print(f"\n{'variant':22s} {'prefill tok/s':>13s} {'decode s/step':>13s} {'new tok/s':>10s} {'wall s':>8s} {'CPU s':>8s} {'speed vs ' + names[0]:>16s}")
    for name in names:
        v, p, f = VARIANTS[name], statistics.median(prefill[name]), statistics.median(full[name])
        padded, made = info[name]
        batches = -(-len(prompts) // v.batch)
        step = (f - p) / (batches * (args.max_new_tokens - 1))
        print(f"{name:22s} {real / p:13.0f} {step:13.3f} {made / f:10.1f} {f:8.1f} {statistics.median(cpu[name]):8.1f} {base / f:15.2f}x")


if __name__ == "__main__":
    main()
