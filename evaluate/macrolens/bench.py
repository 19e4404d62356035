"""MacroLens in the shared evaluator (paper: ../shared/papers/macrolens.txt, §3-5, App. C-E).

    ledgerlm eval --benchmark macrolens --tasks T1,T2,T3,T4,T5,T6,T7 --granularity daily --ladder A..E \
        --model baseline:naive --data DeepAuto-AI/MacroLens --out runs/ml_naive
    ledgerlm score --benchmark macrolens --predictions runs/ml_naive/samples.jsonl --out runs/ml_rescored

`--data` is a local folder of release Parquet files, a Hub id, or `fixture` (builds the test fixture
panel into OUT/fixture). `--model` is `hf:PATH`, `vllm:PATH`, `openai:MODEL` or a reference baseline
(`baseline:naive`, `baseline:persistence`, ...). With more than one ladder level the within-model
trend table (the paper's Table 11) is printed and stored under `ladder` in results.json.
"""
from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ledgerlm.errors import InputError
from ledgerlm.evaluate.macrolens import data as D
from ledgerlm.evaluate.macrolens.instances import TASKS, TaskConfig, build
from ledgerlm.evaluate.macrolens.prompts import LADDER, LADDER_TASKS, build_messages
from ledgerlm.evaluate.macrolens.sampling_plan import parse_budgets
from ledgerlm.evaluate.macrolens.scoring import score_rows
from ledgerlm.evaluate.runfiles import read_jsonl, write_run
from ledgerlm.inference.sampling import GenerationParams


def add_eval_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", default=",".join(TASKS), help="comma-separated subset of T1..T7")
    p.add_argument("--granularity", default="daily", choices=["daily", "weekly", "monthly"])
    p.add_argument("--ladder", default="E", help="ladder levels for T1/T2/T4/T5: 'A..E', 'A,C,E' or one letter")
    p.add_argument("--model", required=True, help="hf:PATH | vllm:PATH | openai:MODEL | baseline:naive|persistence|sector_median|...")
    p.add_argument("--data", default="fixture", help="local release folder, Hub id (DeepAuto-AI/MacroLens) or 'fixture'")
    p.add_argument("--out", required=True, help="run folder (results.json, samples.jsonl)")
    p.add_argument("--budget", default="", help="per-task N over the defaults, e.g. 'T1=200,T4=200' or 'all=20' (T2=full)")
    p.add_argument("--lookback", type=int, default=None, help="T1/T4 lookback rows (default 63 daily)")
    p.add_argument("--horizon", type=int, default=None, help="T1 horizon (default 252 daily / 52 weekly / 12 monthly)")
    p.add_argument("--t3-instances", default="latest", choices=["latest", "test"], help="latest filing per holdout company (paper) or all test-window filings")
    p.add_argument("--max-tokens", type=int, default=None, help="new tokens (default: 12 per T1 step + 64; 512 otherwise)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--b-min", type=int, default=1000, help="bootstrap replicates to start with")
    p.add_argument("--b-max", type=int, default=10_000, help="bootstrap replicates at most")
    p.add_argument("--base-url", default=None, help="openai: server URL")


def add_score_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--predictions", required=True, help="sample rows (samples.jsonl of a run) with `response`")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--b-min", type=int, default=1000)
    p.add_argument("--b-max", type=int, default=10_000)


def parse_ladder(text: str) -> list[str]:
    text = text.strip().upper()
    if ".." in text:
        a, b = text.split("..")
        if a not in LADDER or b not in LADDER or LADDER.index(a) > LADDER.index(b):
            raise InputError(f"bad ladder range {text!r}", field="--ladder")
        return list(LADDER[LADDER.index(a): LADDER.index(b) + 1])
    levels = [x.strip() for x in text.split(",") if x.strip()]
    if not levels or any(x not in LADDER for x in levels):
        raise InputError(f"ladder levels must be among {LADDER}, got {text!r}", field="--ladder")
    return levels


def _sampler(args, release):
    if args.model.startswith("baseline:"):
        from ledgerlm.evaluate.macrolens.baselines import BaselineSampler

        return BaselineSampler(args.model, release, args.seed), True
    from ledgerlm.inference.sampling import make_sampler

    return make_sampler(args.model, batch_size=args.batch_size, base_url=args.base_url), False


def _generate(sampler, is_baseline, rows, insts, params, batch_size, on_batch=None):
    for i in range(0, len(rows), batch_size):
        batch, items = rows[i:i + batch_size], insts[i:i + batch_size]
        kw = {"items": items} if is_baseline else {}
        for row, c in zip(batch, sampler.generate([r.pop("_messages") for r in batch], params, **kw)):
            row["response"], row["reasoning"] = c.text, c.reasoning
            if c.error:
                row["transport_error"] = c.error
        if on_batch is not None:
            on_batch(len(batch))


def _progress():
    """A rich progress bar on stderr; stage lines are printed with `bar.console.print` (also in logs)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("macrolens {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=True)


def ladder_table(summary: dict) -> tuple[dict, str]:
    """Primary metric per task x ladder level, and the text table (paper Table 11)."""
    table, lines = {}, []
    for task, levels in summary.items():
        if task not in LADDER_TASKS or len([lv for lv in levels if lv in LADDER]) < 2:
            continue
        table[task] = {lv: levels[lv]["metrics"][levels[lv]["primary"]]["value"] for lv in LADDER if lv in levels}
    if table:
        cols = [lv for lv in LADDER if any(lv in row for row in table.values())]
        lines.append("task  metric  " + "  ".join(f"{c:>12}" for c in cols) + "   best")
        for task, row in table.items():
            prim = summary[task][next(iter(row))]["primary"]
            best = min(row, key=lambda k: row[k])
            lines.append(f"{task:<5} {prim:<7} " + "  ".join(f"{row[c]:>12.4g}" if c in row else f"{'':>12}" for c in cols) + f"   {best}")
    return table, "\n".join(lines)


def _finish(out: Path, rows: list[dict], summary: dict, config: dict, model: str, t0: float) -> dict:
    table, text = ladder_table(summary)
    flat = {f"{t}/{lv}/{m}": v["value"] for t, lvs in summary.items() for lv, s in lvs.items() for m, v in s["metrics"].items()}
    from ledgerlm.evaluate.macrolens.scoring import SCORER_VERSION

    results = {"benchmark": "macrolens", "scorer_version": SCORER_VERSION, "model": model, "config": config, "tasks": summary, "ladder": table, "metrics": flat,
               "score_field": "per-instance primary loss (lower is better): T1 MSE, T2/T5 APE %, T3/T6 mean APE %, T4 |error| %, T7 mean APE %",
               "score_kind": "loss", "score_name": "primary loss", "group_by": ["task", "level"],  # for `ledgerlm compare/report`
               "versions": {"python": platform.python_version(), "ledgerlm": _version()}, "time": {"wall_s": round(time.time() - t0, 2)}}
    write_run(out, results, rows)
    for task, lvs in summary.items():
        for lv, s in lvs.items():
            m = s["metrics"][s["primary"]]
            extra = ", ".join(f"{k} {v:.4g}" for k, v in s["counts"].items() if k in ("parse_pct", "n_nonresponse", "n_unparsed_fields"))
            print(f"{task} [{lv}] n={s['counts']['n']} {s['primary']} {m['value']:.4g} [{m['ci_low']:.4g}, {m['ci_high']:.4g}] B={m['B']}; {extra}")
    if text:
        print("\nContext ladder (within-model trend, primary metric; lower is better):\n" + text)
    return results


def _version() -> str:
    from ledgerlm import __version__

    return __version__


def _load_and_check(args, tasks):
    """Release, sampler, is_baseline; with `--data fixture` the panel is built in a scratch folder and copied to
    OUT/fixture only once the model has been accepted for the tasks (a rejected run leaves nothing behind)."""
    if args.data != "fixture":
        release = D.load_release(args.data, args.granularity)
        sampler, is_baseline = _sampler(args, release)
        if is_baseline:
            sampler.check(tasks)
        return release, sampler, is_baseline
    from ledgerlm.evaluate.macrolens.fixture import write_fixture

    with tempfile.TemporaryDirectory(prefix="macrolens_fixture_") as scratch:
        release = D.load_release(str(write_fixture(scratch, seed=args.seed)), args.granularity)
        sampler, is_baseline = _sampler(args, release)
        if is_baseline:
            sampler.check(tasks)
        kept = Path(args.out) / "fixture"
        shutil.copytree(scratch, kept, dirs_exist_ok=True)
    release.source = str(kept)
    return release, sampler, is_baseline


def run_eval(args) -> int:
    t0 = time.time()
    tasks = [t.strip().upper() for t in args.tasks.split(",") if t.strip()]
    bad = [t for t in tasks if t not in TASKS]
    if bad:
        raise InputError(f"unknown task(s) {bad}; choose from {', '.join(TASKS)}", field="--tasks")
    levels = parse_ladder(args.ladder)
    cfg = TaskConfig(granularity=args.granularity, lookback=args.lookback, horizon=args.horizon, budgets=parse_budgets(args.budget),
                     t3_instances=args.t3_instances, seed=args.seed)
    if Path(args.data).exists():  # a bad path fails at once with one error line; a real load can take a minute
        print(f"macrolens: loading {args.data} and {args.model} ...", file=sys.stderr, flush=True)
    release, sampler, is_baseline = _load_and_check(args, tasks)  # validates before anything is written under OUT
    source = release.source
    rows, drops = [], {}
    with _progress() as bar:
        for task in tasks:
            job = bar.add_task(f"{task}: building instances", total=None)
            insts, drops[task] = build(task, release, cfg)
            task_levels = levels if task in LADDER_TASKS else ["-"]
            for level in task_levels:
                part = []
                for inst in insts:
                    msgs = build_messages(inst, level if level != "-" else "E", args.granularity)
                    part.append({"id": f"{inst['id']}@{level}", "task": task, "level": level, "prompt": msgs[-1]["content"], "_messages": msgs,
                                 "target": inst["target"], "meta": inst["meta"], "cluster": inst["cluster"], "strata": inst["strata"],
                                 "ticker": inst["ticker"], "anchor": inst["anchor"]})
                max_tokens = args.max_tokens or (12 * cfg.H() + 64 if task == "T1" else 512)
                params = GenerationParams(max_tokens=max_tokens, temperature=args.temperature, seed=args.seed)
                bar.update(job, description=f"{task} [{level}]", total=len(part), completed=0)
                began = time.time()
                _generate(sampler, is_baseline, part, insts, params, args.batch_size, on_batch=lambda n, j=job: bar.advance(j, n))
                bar.console.print(f"macrolens: {task} [{level}] {len(part)} instances generated in {time.time() - began:.1f} s")
                rows += part
            bar.remove_task(job)
    print("macrolens: scoring (cluster bootstrap) ...", file=sys.stderr, flush=True)
    summary = score_rows(rows, b_min=args.b_min, b_max=args.b_max, seed=args.seed)
    for task in summary:
        for s in summary[task].values():
            s["drops"] = drops.get(task, {})
    config = {k: v for k, v in vars(args).items() if k != "base_url"} | {"data": source, "tasks": tasks, "ladder": levels,
                                                                        "horizon": cfg.H(), "lookback": cfg.L()}
    _finish(Path(args.out), rows, summary, config, getattr(sampler, "model_id", args.model), t0)
    return 0


def run_score(args) -> int:
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
    models = {json.dumps(r.get("model")) for r in rows}
    _finish(Path(args.out), rows, summary, {"predictions": args.predictions, "seed": args.seed}, "scored:" + args.predictions, t0)
    return 0 if models else 1
