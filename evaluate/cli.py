"""`ledgerlm eval` (lm-evaluation-harness flags, one runner for every benchmark) and `ledgerlm score`.

    ledgerlm eval --tasks list                                   # every task of every benchmark
    ledgerlm eval --model oracle --tasks finindices --data runs/data --output_path runs/oracle
    ledgerlm eval --model hf --model_args pretrained=runs/tiny-model,dtype=float32,peft=runs/sft \
        --tasks finindices_nohint --data runs/data --batch_size 8 --limit 50 --gen_kwargs max_gen_toks=512 --output_path runs/tuned
    ledgerlm score --benchmark finindices --predictions runs/oracle/samples.jsonl --out runs/scored

`eval` flags are lm-eval's (`--model`, `--model_args`, `--tasks`, `--batch_size`, `--output_path`,
`--log_samples`, `--apply_chat_template`, `--limit`, `--seed`, `--gen_kwargs`, `--bootstrap_iters`),
the same for every benchmark; benchmark inputs are `--data PATH` and `--task_args k=v,...`, per task or
benchmark in a run of several (`--data finindices=runs/data,macrolens=fixture --task_args macrolens.ladder=A`;
evaluate/harness/routing.py, evaluate/harness/README.md). The run goes through `ledgerlm.evaluate.harness.runner`.

The pre-harness form `ledgerlm eval --benchmark NAME ... --out RUN` still works: for finindices its
flags are translated onto the same runner; macrolens and epsbench keep their own module
(`ledgerlm.evaluate.<name>.bench`: `add_eval_args`, `run_eval`) until they are ported. `score` is per
benchmark (`add_score_args`, `run_score`).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ledgerlm.errors import InputError
from ledgerlm.evaluate import stats
from ledgerlm.evaluate.harness.args import backend_options, parse_kv
from ledgerlm.evaluate.harness.registry import all_tasks, get_benchmark
from ledgerlm.evaluate.harness.runner import (BACKEND_FAILED, MAX_FAILED_FRACTION, RunConfig, check_backend_failures,  # noqa: F401
                                              evaluate, transport_error)  # BACKEND_FAILED, transport_error: re-exported
from ledgerlm.evaluate.tasks import task_rows

BENCHMARKS = {
    "finindices": "ledgerlm.evaluate.finindices.benchmark",
    "macrolens": "ledgerlm.evaluate.macrolens.bench",
    "epsbench": "ledgerlm.evaluate.epsbench.bench",
}
ABOUT = {
    "finindices": "financial-index QA over shown statements (set-match accuracy, bootstrap CI); data: a `ledgerlm synth` folder",
    "macrolens": "7 forecasting/valuation/statement tasks (T1..T7); data: release folder, Hub id, or `fixture` (offline)",
    "epsbench": "tool-using agent forecasts quarterly EPS; data: the embedded EPSBench release (offline)",
}


def task_table() -> list[dict]:
    """One row per runnable task: the task YAMLs (evaluate/tasks/<benchmark>/*.yaml), then registered
    benchmarks' tasks that have no YAML (e.g. a benchmark registered at run time)."""
    rows = task_rows()
    seen = {r["task"] for r in rows}
    for task, bench in all_tasks().items():
        if task not in seen:
            about = {d["task"]: d["description"] for d in get_benchmark(bench).describe()}
            rows.append({"benchmark": bench, "task": task, "select": f"--tasks {task}", "description": about.get(task, "")})
    return rows


def print_tasks(benchmark: str | None = None, as_json: bool = False) -> int:
    rows = [r for r in task_table() if benchmark in (None, r["benchmark"])]
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    table = Table(title="ledgerlm eval tasks", title_justify="left")
    for column in ("benchmark", "task", "select", "description"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(r["benchmark"], r["task"], r["select"], r["description"])
    Console(width=160).print(table)
    return 0


# ---- lm-eval-style `ledgerlm eval` -----------------------------------------------------------------------

def eval_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ledgerlm eval", description="Evaluate a model on ledgerlm tasks (lm-evaluation-harness flags; the same for every benchmark). "
        "The pre-harness form `ledgerlm eval --benchmark NAME ... --out RUN` is still accepted (`--benchmark NAME --help`).")
    p.add_argument("--model", required=True, help="backend: hf | vllm | openai | oracle | wrong_unit (or a spec such as hf:PATH, baseline:naive)")
    p.add_argument("--model_args", "--model-args", default="", metavar="K=V,...",
                   help="backend options: hf: pretrained=,dtype=,peft=,device=,trust_remote_code=,revision=; vllm: pretrained=,dtype=,peft=,"
                        "max_model_len=,gpu_memory_utilization=,tensor_parallel_size=; openai: model=,base_url=,api_key_env=,concurrency=,timeout=")
    p.add_argument("--tasks", required=True, help="comma-separated task names (`--tasks list` lists them), e.g. finindices,macrolens_t2,epsbench")
    p.add_argument("--data", default=None, metavar="PATH | NAME=PATH,...",
                   help="dataset for tasks that need one (finindices: a `ledgerlm synth` folder, JSONL file or the official release; "
                        "macrolens: a release folder, Hub id or `fixture`; epsbench: the document store DOCS). One value goes to every task; "
                        "per task or benchmark: finindices=runs/data,macrolens=fixture (a task name beats its benchmark's)")
    p.add_argument("--task_args", "--task-args", default="", metavar="[NAME.]K=V,...",
                   help="benchmark options, e.g. finindices: split=dev,hint=nohint,lenient_precision=true,field_map=FILE. A bare key goes to "
                        "every task that takes it; NAME.key=v to task or benchmark NAME only (finindices.split=dev,macrolens.ladder=A)")
    p.add_argument("--batch_size", "--batch-size", type=_batch_size, default=None,
                   help="conversations per generate call (hf; default 8); `auto` = the backend's default")
    p.add_argument("--device", default=None, help="hf: cpu | cuda | cuda:1 (default: cuda when available); same as model_args device=")
    p.add_argument("--output_path", "--output-path", "-o", required=True, help="run folder: results.json, samples.jsonl, cache.jsonl")
    p.add_argument("--log_samples", "--log-samples", action="store_true",
                   help="keep each sample's prompt in samples.jsonl (the other per-sample fields are always logged: resume, compare and report read them)")
    p.add_argument("--apply_chat_template", "--apply-chat-template", nargs="?", const="true", default="true", metavar="true|false|NAME",
                   help="lm-eval's flag, but ON by default (ledgerlm tasks are chat conversations): hf/vllm render the messages with the "
                        "model's chat template; NAME = one of the tokenizer's named templates; `false` = plain text (system + blank line + "
                        "user, no special tokens), an error for openai (the server applies its template). Same as model_args "
                        "chat_template=; results.json config records apply_chat_template")
    p.add_argument("--limit", type=float, default=None, help="first N instances per task (a value below 1: that fraction)")
    p.add_argument("--seed", type=int, default=0, help="one seed for generation, bootstrap resampling and instance sampling (default 0)")
    p.add_argument("--gen_kwargs", "--gen-kwargs", default="", metavar="K=V,...",
                   help="generation over the task's defaults: max_gen_toks=,temperature=,top_p=,until=A|B,do_sample=false")
    p.add_argument("--bootstrap_iters", "--bootstrap-iters", type=int, default=None, help="bootstrap resamples for CIs (default 10000)")
    p.add_argument("--no_cache", "--no-cache", action="store_true", help="do not read or write OUTPUT_PATH/cache.jsonl")
    p.add_argument("--no_resume", "--no-resume", action="store_true", help="redo every instance even if samples.jsonl of the same run holds it")
    p.add_argument("--max_failed_fraction", "--max-failed-fraction", type=float, default=MAX_FAILED_FRACTION, metavar="F",
                   help=f"exit 3 when more than F of a task's samples got no answer from the backend (default {MAX_FAILED_FRACTION}); "
                        "any failure marks results.json partial")
    p.add_argument("--no_progress", "--no-progress", action="store_true", help="no progress bar")
    return p


def _batch_size(text: str) -> int | None:
    if text == "auto" or text.startswith("auto:"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or auto, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run_config(args: argparse.Namespace):
    """RunConfig from parsed lm-eval-style arguments."""
    limit = args.limit
    if limit is not None and limit >= 1:
        limit = int(limit)
    model_args = parse_kv(args.model_args, "--model_args")
    if args.device is not None:
        model_args.setdefault("device", args.device)
    return RunConfig(model=args.model, model_args=model_args, tasks=_task_list(args.tasks),
                     output_path=args.output_path, data=args.data, task_args=parse_kv(args.task_args, "--task_args"),
                     batch_size=args.batch_size, limit=limit, seed=args.seed, gen_kwargs=parse_kv(args.gen_kwargs, "--gen_kwargs"),
                     log_samples=args.log_samples, apply_chat_template=args.apply_chat_template, use_cache=not args.no_cache, resume=not args.no_resume,
                     bootstrap_iters=args.bootstrap_iters or stats.N_BOOT, max_failed_fraction=args.max_failed_fraction,
                     progress=not args.no_progress)


def _task_list(text: str) -> list[str]:
    tasks = [t.strip() for t in text.split(",") if t.strip()]
    if not tasks:
        raise InputError("no tasks given", field="--tasks")
    return tasks


def eval_main(argv: list[str]) -> int:
    if _wants_task_list(argv):
        pre = argparse.ArgumentParser(prog="ledgerlm eval", add_help=False)
        pre.add_argument("--benchmark", choices=sorted(BENCHMARKS))
        pre.add_argument("--json", action="store_true")
        known, _ = pre.parse_known_args(argv)
        return print_tasks(known.benchmark, known.json)
    if _has(argv, "--benchmark"):
        return _legacy_eval(argv)
    _, code = evaluate(run_config(eval_parser().parse_args(argv)))
    return code


# ---- the pre-harness form: --benchmark NAME ... --out RUN ---------------------------------------------------

def _has(argv: list[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in argv)


def _legacy_eval(argv: list[str]) -> int:
    """`--benchmark NAME` flags, run on the harness runner: finindices via `legacy_finindices_config` here, macrolens and
    epsbench via their module's `run_eval` (each builds a RunConfig from its own flags)."""
    name, module = _benchmark_module(argv, "ledgerlm eval")
    if name != "finindices":
        return _main(argv, "ledgerlm eval", "add_eval_args", "run_eval")
    translate = legacy_finindices_config
    parser = argparse.ArgumentParser(prog=f"ledgerlm eval --benchmark {name}",
                                     description="pre-harness flags, run by the harness runner; prefer `ledgerlm eval --model ... --tasks ...`")
    parser.add_argument("--benchmark", choices=sorted(BENCHMARKS), required=True)
    module.add_eval_args(parser)
    parser.add_argument("--max-failed-fraction", type=float, default=MAX_FAILED_FRACTION, metavar="F",
                        help=f"exit non-zero (3) when more than F of the samples got no answer from the backend "
                             f"(transport errors; default {MAX_FAILED_FRACTION}); any failure marks results.json partial")
    _, code = evaluate(translate(parser.parse_args(argv)))
    return code


LEGACY_BACKEND_FLAGS = ("base_url", "api_key_env", "concurrency", "max_retries", "timeout", "peft", "device", "dtype", "batch_size",
                        "tensor_parallel_size", "trust_remote_code")


def legacy_finindices_config(args: argparse.Namespace):
    """The RunConfig of `ledgerlm eval --benchmark finindices ...` (flags of another backend are dropped, as before)."""
    allowed = backend_options(args.model.partition(":")[0])
    model_args = {k: getattr(args, k) for k in LEGACY_BACKEND_FLAGS
                  if getattr(args, k) is not None and (allowed is None or k in allowed)}
    task_args = {"split": args.split, "hint": args.hint_mode, "field_map": args.field_map,
                 "lenient_precision": args.lenient_precision or None}
    gen = {"max_tokens": args.max_tokens, "temperature": args.temperature, "top_p": args.top_p}
    return RunConfig(model=args.model, model_args=model_args, tasks=[args.task], output_path=args.out, data=args.data,
                     task_args={k: v for k, v in task_args.items() if v is not None},
                     limit=int(args.limit) if args.limit is not None and args.limit >= 1 else args.limit,
                     seed=args.seed if args.seed is not None else 0, gen_kwargs={k: v for k, v in gen.items() if v is not None},
                     log_samples=True, use_cache=not args.no_cache, bootstrap_iters=args.n_boot,
                     max_failed_fraction=args.max_failed_fraction, progress=False)


def _general_help(prog: str) -> str:
    lines = [f"usage: {prog} --benchmark {{{','.join(sorted(BENCHMARKS))}}} [options]",
             "", "benchmarks:"]
    lines += [f"  {name:<11} {ABOUT[name]}" for name in BENCHMARKS]
    lines += ["", f"`{prog} --benchmark NAME --help` shows that benchmark's options."]
    return "\n".join(lines)


def _benchmark_module(argv: list[str], prog: str):
    pre = argparse.ArgumentParser(prog=prog, add_help=False)
    pre.add_argument("--benchmark", choices=sorted(BENCHMARKS), required=True)
    known, _ = pre.parse_known_args(argv)
    return known.benchmark, importlib.import_module(BENCHMARKS[known.benchmark])


def _main(argv: list[str], prog: str, add: str, run: str) -> int:
    has_benchmark = _has(argv, "--benchmark")
    if not has_benchmark and any(a in ("-h", "--help") for a in argv):
        print(_general_help(prog))
        return 0
    if not has_benchmark:
        argparse.ArgumentParser(prog=prog).error(f"--benchmark is required ({', '.join(sorted(BENCHMARKS))}); "
                                                 f"see `{prog} --help`")
    name, module = _benchmark_module(argv, prog)
    parser = argparse.ArgumentParser(prog=f"{prog} --benchmark {name}")
    parser.add_argument("--benchmark", choices=sorted(BENCHMARKS), required=True)
    getattr(module, add)(parser)
    if run == "run_eval":
        parser.add_argument("--max-failed-fraction", type=float, default=MAX_FAILED_FRACTION, metavar="F",
                            help=f"exit non-zero (3) when more than F of the samples got no answer from the backend "
                                 f"(transport errors; default {MAX_FAILED_FRACTION}); any failure marks results.json partial")
    args = parser.parse_args(argv)
    code = getattr(module, run)(args)
    if run == "run_eval" and code == 0:  # the module's RunConfig may not carry the flag: apply it to the written run
        code = check_backend_failures(Path(args.out), args.max_failed_fraction)
    return code


def _wants_task_list(argv: list[str]) -> bool:
    return any(a == "--tasks=list" or (a == "--tasks" and argv[i + 1:i + 2] == ["list"]) for i, a in enumerate(argv))


def score_main(argv: list[str]) -> int:
    return _main(argv, "ledgerlm score", "add_score_args", "run_score")


if __name__ == "__main__":
    sys.exit(eval_main(sys.argv[1:]))
