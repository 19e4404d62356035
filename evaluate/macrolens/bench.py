"""MacroLens through the one runner (paper: ../shared/papers/macrolens.txt, §3-5, App. C-E).

    ledgerlm eval --model baseline:naive --tasks macrolens_t1,macrolens_t2 --task_args ladder=A..E --output_path runs/ml_naive
    ledgerlm eval --benchmark macrolens --tasks T1,T2 --ladder A..E --model baseline:naive --out runs/ml_naive   # pre-harness flags
    ledgerlm score --benchmark macrolens --predictions runs/ml_naive/macrolens_t1/samples.jsonl --out runs/ml_rescored

The benchmark itself is `benchmark.MacroLens` (tasks macrolens_t1 .. macrolens_t7); this module keeps the
pre-harness flags of `ledgerlm eval --benchmark macrolens`, translated onto the runner (`legacy_config`:
one task -> OUT/results.json, several -> OUT/<task>/results.json + OUT/results.json), and offline
re-scoring of saved sample rows (`ledgerlm score`).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from ledgerlm.errors import InputError
from ledgerlm.evaluate.harness.args import backend_options
from ledgerlm.evaluate.harness.runner import RunConfig
from ledgerlm.evaluate.harness.runner import evaluate
from ledgerlm.evaluate.macrolens.benchmark import parse_ladder, results_detail, summary_text, task_name
from ledgerlm.evaluate.macrolens.instances import TASKS
from ledgerlm.evaluate.macrolens.scoring import BOOTSTRAP_SEED, score_rows
from ledgerlm.evaluate.runfiles import read_jsonl, write_run


def add_eval_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", default=",".join(TASKS), help="comma-separated subset of T1..T7")
    p.add_argument("--granularity", default="daily", choices=["daily", "weekly", "monthly"])
    p.add_argument("--ladder", default="E", help="ladder levels for T1/T2/T4/T5: 'A..E', 'A,C,E' or one letter")
    p.add_argument("--model", required=True, help="hf:PATH | vllm:PATH | openai:MODEL | baseline:naive|persistence|sector_median|...")
    p.add_argument("--data", default="fixture", help="local release folder, Hub id (DeepAuto-AI/MacroLens) or 'fixture'")
    p.add_argument("--out", required=True, help="run folder (results.json, samples.jsonl; one subfolder per task when several)")
    p.add_argument("--budget", default="", help="per-task N over the defaults, e.g. 'T1=200,T4=200' or 'all=20' (T2=full)")
    p.add_argument("--lookback", type=int, default=None, help="T1/T4 lookback rows (default 63 daily)")
    p.add_argument("--horizon", type=int, default=None, help="T1 horizon (default 252 daily / 52 weekly / 12 monthly)")
    p.add_argument("--t3-instances", default="latest", choices=["latest", "test"], help="latest filing per holdout company (paper) or all test-window filings")
    p.add_argument("--max-tokens", type=int, default=None, help="new tokens (default: 12 per T1 step + 64; 512 otherwise)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--seed", type=int, default=BOOTSTRAP_SEED, help="the paper's seed (holdout, sampling, baselines, bootstrap) and the generation seed")
    p.add_argument("--b-min", type=int, default=1000, help="bootstrap replicates to start with")
    p.add_argument("--b-max", type=int, default=10_000, help="bootstrap replicates at most")
    p.add_argument("--base-url", default=None, help="openai: server URL")


def add_score_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--predictions", required=True, help="sample rows (samples.jsonl of a run) with `response`")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=BOOTSTRAP_SEED)
    p.add_argument("--b-min", type=int, default=1000)
    p.add_argument("--b-max", type=int, default=10_000)


def legacy_config(args: argparse.Namespace):
    """The RunConfig of `ledgerlm eval --benchmark macrolens ...` (the pre-harness flags)."""
    tasks = [t.strip().upper() for t in args.tasks.split(",") if t.strip()]
    bad = [t for t in tasks if t not in TASKS]
    if bad or not tasks:
        raise InputError(f"unknown task(s) {bad}; choose from {', '.join(TASKS)}", field="--tasks")
    task_args = {"granularity": args.granularity, "ladder": "".join(parse_ladder(args.ladder)), "budget": args.budget or None,
                 "lookback": args.lookback, "horizon": args.horizon, "t3_instances": args.t3_instances, "b_min": args.b_min,
                 "b_max": args.b_max, "paper_seed": args.seed}
    allowed = backend_options(args.model.partition(":")[0])
    model_args = {k: v for k, v in (("base_url", args.base_url), ("batch_size", args.batch_size))
                  if v is not None and allowed is not None and k in allowed}
    gen = {"max_gen_toks": args.max_tokens, "temperature": args.temperature}
    return RunConfig(model=args.model, model_args=model_args, tasks=[task_name(t) for t in tasks], output_path=args.out,
                     data=args.data, task_args={k: v for k, v in task_args.items() if v is not None}, batch_size=args.batch_size,
                     seed=args.seed, gen_kwargs={k: v for k, v in gen.items() if v is not None}, log_samples=True)


def run_eval(args: argparse.Namespace) -> int:
    _, code = evaluate(legacy_config(args))
    return code


def run_score(args: argparse.Namespace) -> int:
    t0 = time.time()
    rows = read_jsonl(args.predictions)
    need = ("id", "task", "target", "meta", "cluster", "strata", "response")
    for r in rows:
        missing = [k for k in need if k not in r]
        if missing:
            raise InputError(f"row {r.get('id')!r} lacks {missing}", path=args.predictions)
        r.setdefault("prompt", "")
        r.setdefault("reasoning", None)
    summary = score_rows(rows, b_min=args.b_min, b_max=args.b_max, seed=args.seed)
    results = results_detail(summary, "scored:" + args.predictions, {"predictions": args.predictions, "seed": args.seed,
                                                                      "b_min": args.b_min, "b_max": args.b_max})
    results["time"] = {"wall_s": round(time.time() - t0, 2)}
    write_run(Path(args.out), results, rows)
    print(summary_text(summary, results["ladder_text"]))
    return 0
