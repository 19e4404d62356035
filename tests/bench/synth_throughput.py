"""Throughput of `ledgerlm synth`: 10,000 samples from the embedded real data.

    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_throughput.py [--num 10000] [--num-proc 1]

Prints samples/s, peak RSS (this process + workers) and the ratio of end-to-end time to the time it
takes to tokenize the emitted prompts alone (the floor: every build must tokenize them once).
Goal: ratio <= 2, RSS < 2 GB.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    """CPU seconds of this process and its finished children (workers of --num-proc)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--num", type=int, default=10_000)
    parser.add_argument("--num-proc", type=int, default=1)
    parser.add_argument("--tokenizer", default="o200k_base")
    args = parser.parse_args()
    from ledgerlm.synth.finindices import cli
    from ledgerlm.synth.finindices.tokens import TokenCounter

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ds"
        cpu0 = _cpu()
        t0 = time.perf_counter()
        cli.main(["--out", str(out), "--num", str(args.num), "--num-proc", str(args.num_proc),
                  "--tokenizer", args.tokenizer, "--no-progress"])
        e2e = time.perf_counter() - t0
        e2e_cpu = _cpu() - cpu0
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        prompts = [[m["content"] for m in json.loads(line)["messages"]]
                   for s in ("train", "dev", "test") for line in open(out / f"{s}.jsonl", encoding="utf-8")]
    rows = prompts
    counter = TokenCounter(args.tokenizer)
    t1, c1 = time.perf_counter(), time.process_time()
    tokens = sum(counter.count(text) for texts in prompts for text in texts)
    floor, floor_cpu = time.perf_counter() - t1, time.process_time() - c1
    print(f"samples emitted      {len(rows)} (of {args.num} attempted), num_proc {args.num_proc}")
    print(f"end-to-end           {e2e:.1f} s  ->  {len(rows) / e2e:.1f} samples/s")
    print(f"tokenize alone       {floor:.1f} s  ({tokens / len(rows):.0f} tokens/sample, {tokens / floor / 1e6:.2f} M tokens/s)")
    print(f"ratio e2e / floor    {e2e / floor:.2f} wall, {e2e_cpu / floor_cpu:.2f} CPU time "
          f"({e2e_cpu:.1f} s / {floor_cpu:.1f} s; CPU is the fair figure on a shared machine)  (goal <= 2)")
    print(f"peak RSS             {rss_kb / 1024:.0f} MB  (the build: this process + largest worker, before the floor check loads the prompts; goal < 2048)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
