"""Batched vs sequential generation through the `hf:` backend with a tiny random model (goal >= 4x tokens/s).

    python tests/bench/hf_batching.py [--items 32] [--max-tokens 32] [--batch-size 16]

Builds a random-initialised 2-layer Llama (hidden 64) with the real tokenizer
(shipped in train/tokenizers/deepseek-v3, MIT), then generates greedy completions for the same
prompts with batch_size=1 and batch_size=N (left padding). EOS is suppressed so every completion
has exactly --max-tokens tokens and both runs do the same work. Prints tokens/s and the ratio.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from eval_fixtures import build_tiny_model, make_rows  # noqa: E402

from ledgerlm.inference.backends import make_backend  # noqa: E402
from ledgerlm.inference.sampling import GenerationParams  # noqa: E402



def timed(sampler, batch, params, batch_size: int) -> tuple[float, int, list[str]]:
    sampler.batch_size = batch_size
    began = time.perf_counter()
    out = sampler.generate(batch, params)
    return time.perf_counter() - began, sum(c.completion_tokens for c in out), [c.text for c in out]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ledgerlm-hf-bench-") as tmp:
        from ledgerlm.train.tiny_model import write_tokenizer_json

        build_tiny_model(write_tokenizer_json(Path(tmp) / "tok" / "tokenizer.json"), tmp)
        sampler = make_backend(f"hf:{tmp}", batch_size=args.batch_size)
        sampler.eos_ids = set()  # never stop early: equal work in both modes
        sampler.model.generation_config.eos_token_id = None
        batch = [r["messages"] for r in make_rows(args.items, seed=1)]
        params = GenerationParams(max_tokens=args.max_tokens)
        timed(sampler, batch[:2], params, 2)  # warm-up
        seq_s, seq_tokens, seq_texts = timed(sampler, batch, params, 1)
        bat_s, bat_tokens, bat_texts = timed(sampler, batch, params, args.batch_size)
    same = sum(a == b for a, b in zip(seq_texts, bat_texts))
    print(f"sequential: {seq_tokens} tokens in {seq_s:.2f}s = {seq_tokens / seq_s:,.0f} tokens/s")
    print(f"batched x{args.batch_size}: {bat_tokens} tokens in {bat_s:.2f}s = {bat_tokens / bat_s:,.0f} tokens/s")
    print(f"speed-up: {(bat_tokens / bat_s) / (seq_tokens / seq_s):.1f}x (goal 4x); identical greedy outputs: {same}/{len(batch)}")


if __name__ == "__main__":
    main()
