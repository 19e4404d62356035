"""#17 goals 1 and 2, measured in one run on the embedded data: `--num-proc 2` vs `--num-proc 1`
(samples/s, byte-identity, per-worker overhead and merge cost, efficiency extrapolated to 16 / 64
processes) and end-to-end CPU time vs tokenizing every emitted prompt from scratch.

    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_scale.py [--num 10000] [--tokenizer o200k_base]

Each build runs as its own `ledgerlm synth` process (CPU time of it and its workers from wait4); the
store cache is built first and not timed. Prints the load average before and after: on a shared
machine the wall-clock ratio is only meaningful when the load stays below the core count.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES = ("train.jsonl", "dev.jsonl", "test.jsonl", "manifest.json", "README.md")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"


def timed(cmd: list[str], env: dict | None = None) -> dict:
    """wall s, CPU s (the process and every descendant it waited for) and peak RSS MB of one command."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}


def digest(folder: Path) -> dict:
    return {f: hashlib.sha256((folder / f).read_bytes()).hexdigest() for f in FILES}


def rows(folder: Path) -> list[dict]:
    return [json.loads(line) for s in ("train", "dev", "test") for line in open(folder / f"{s}.jsonl", encoding="utf-8")]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--num", type=int, default=10_000)
    p.add_argument("--tokenizer", default="o200k_base")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    env = dict(os.environ)
    py = [sys.executable, "-m", "ledgerlm.cli", "synth", "--num", str(args.num), "--seed", str(args.seed),
          "--tokenizer", args.tokenizer, "--no-progress"]
    print(f"load average before: {loadavg()}  (cores: {os.cpu_count()})")
    subprocess.run([sys.executable, "-m", "ledgerlm.synth.finindices.storecache"], env=env, check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        one = timed(py + ["--out", str(tmp / "p1"), "--num-proc", "1"], env)
        two = timed(py + ["--out", str(tmp / "p2"), "--num-proc", "2"], env)
        same = digest(tmp / "p1") == digest(tmp / "p2")
        start = timed([sys.executable, "-c", "from ledgerlm.synth.finindices.config import load_config; from ledgerlm.synth.finindices.contexts "
                       f"import Builder; b = Builder.from_config(load_config(None, num={args.num}, tokenizer={args.tokenizer!r})); "
                       "b.warm(range(10 ** 6))"], env)
        m0 = time.process_time()
        from ledgerlm.synth.finindices import dataset

        dataset.merge(tmp / "merged", [tmp / "p1"])
        merge_cpu = time.process_time() - m0
        emitted = rows(tmp / "p1")
    from ledgerlm.synth.finindices.tokens import TokenCounter

    counter = TokenCounter(args.tokenizer)
    counter.count("warm up")
    c0 = time.process_time()
    tokens = sum(counter.count(m["content"]) for r in emitted for m in r["messages"])
    floor = time.process_time() - c0
    assert tokens == sum(r["n_tokens"] for r in emitted), "n_tokens differ from a full encode"
    n = len(emitted)
    print(f"load average after:  {loadavg()}")
    print(f"samples emitted      {n} of {args.num} attempted; tokens {tokens} ({args.tokenizer}); byte-identical num_proc 1 vs 2: {same}")
    print(f"num_proc 1           {one['wall']:.1f} s wall, {one['cpu']:.1f} s CPU, {n / one['wall']:.0f} samples/s, peak RSS {one['rss_mb']:.0f} MB")
    print(f"num_proc 2           {two['wall']:.1f} s wall, {two['cpu']:.1f} s CPU, {n / two['wall']:.0f} samples/s, peak RSS {two['rss_mb']:.0f} MB (largest process)")
    print(f"GOAL 1 ratio         samples/s 2 procs / 1 proc = {one['wall'] / two['wall']:.2f}  (goal >= 1.70); "
          f"CPU 1 proc / 2 procs = {one['cpu'] / two['cpu']:.2f}")
    # extrapolation (a model, not a measurement): serial start-up S and merge M, generation G split over P
    # workers, plus a per-worker overhead w = the extra CPU the 2-process run spent, per worker
    s_cpu, m_cpu = start["cpu"], merge_cpu
    g_cpu = max(0.0, one["cpu"] - s_cpu - m_cpu)
    w = max(0.0, (two["cpu"] - one["cpu"]) / 2)
    print(f"start-up (serial)    {s_cpu:.1f} s CPU (process start, imports, Builder, stores for the workers); merge {m_cpu:.2f} s CPU; "
          f"per-worker overhead {w:.2f} s CPU (2-proc CPU - 1-proc CPU, per worker: fork, copy-on-write, duplicated memo work)")
    for procs in (2, 16, 64):
        t = s_cpu + m_cpu + g_cpu / procs + w
        print(f"extrapolated P={procs:<3}    efficiency {(s_cpu + g_cpu + m_cpu) / (procs * t):.2f}  "
              f"(T(P) = S + M + G/P + w = {t:.1f} s at this --num; assumes P free cores, {args.num} samples)")
    print(f"tokenize alone       {floor:.1f} s CPU ({tokens / max(floor, 1e-9) / 1e6:.2f} M tokens/s), every emitted prompt from scratch")
    print(f"GOAL 2 ratio         end-to-end CPU / tokenize-alone CPU = {one['cpu'] / floor:.2f}  (goal <= 0.70; "
          f"{one['cpu']:.1f} s / {floor:.1f} s, 1 process, includes start-up and merge)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
