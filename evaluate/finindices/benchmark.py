"""FinIndices as a harness `Benchmark`: one task per YAML under evaluate/tasks/finindices/.

    ledgerlm eval --model oracle --tasks finindices --data runs/data --output_path runs/oracle
    ledgerlm eval --model hf --model_args pretrained=PATH,peft=ADAPTER --tasks finindices_nohint --data runs/data \
        --task_args split=dev --output_path runs/tuned

`--data`: a `ledgerlm synth` folder, a JSONL file, or the official release (`adapter.load_rows`).
`--task_args`: split=NAME (dataset file of a folder; default the task's), hint=hint|nohint|both (over the
task's `select.hint`), field_map=FILE (official column-name corrections), lenient_precision=true.
Scoring (`scoring.score_response` with the task's `answer_extraction`), the per-sample row
(`bench.score_record`) and the detailed results (`bench.summarize`: the paper's groups, Wilson CIs for 0/1 scores)
are the pre-harness ones, so scores are unchanged (tests/test_eval_golden.py). The lm-eval `results`
view gives each proportion with its Wilson 95% interval (`<metric>_ci`) and stderr.
"""
from __future__ import annotations

import argparse
import math
import time
from typing import Any

from ledgerlm.errors import InputError
from ledgerlm.evaluate import stats
from ledgerlm.evaluate.finindices import adapter
from ledgerlm.evaluate.finindices.bench import add_eval_args, format_summary, score_record, select_rows, summarize  # noqa: F401 (add_eval_args: cli)
from ledgerlm.evaluate.harness.base import Benchmark, Metric, Request, RunContext, Summary
from ledgerlm.evaluate.harness.runner import write_scored
from ledgerlm.evaluate.runfiles import read_jsonl
from ledgerlm.evaluate.tasks import list_tasks, load_task
from ledgerlm.inference.sampling import Completion

HINT_MODES = ("hint", "nohint", "both")
TASK_ARGS = ("split", "hint", "field_map", "lenient_precision")
RATES = ("parse_failure_rate", "format_failure_rate", "backend_error_rate", "truncated_rate")


class FinIndices(Benchmark):
    """financial-index QA over shown statements (set-match accuracy, Wilson CI); --data: a `ledgerlm synth` folder"""
    name = "finindices"
    task_arg_names = TASK_ARGS  # bare --task_args keys of a several-task run go to the tasks that take them
    primary_metric = "accuracy"
    higher_is_better = {"accuracy": True, "positional_accuracy": True, **{r: False for r in RATES}}

    def __init__(self, task: str, *, seed: int = 0, data: str | None = None, **task_args: Any):
        super().__init__(task, seed=seed, data=data, **task_args)
        if not data:
            raise InputError(f"task {task!r} needs --data (a `ledgerlm synth` folder, a JSONL file or the official release)", field="--data")
        hint = task_args.get("hint")
        if hint is not None and hint not in HINT_MODES:
            raise InputError(f"hint={hint!r}: one of {', '.join(HINT_MODES)}", field="--task_args")
        self.spec = load_task(task)
        self.higher_is_better = self.spec.higher_is_better  # the task YAML's metrics and directions
        self.task = self.spec.task  # a YAML path given as the task: its name
        self.version = self.spec.version
        self.hint_mode = hint
        self.split = task_args.get("split") or self.spec.split
        self.lenient_precision = bool(task_args.get("lenient_precision", False))
        self.field_map = adapter.load_field_map(task_args.get("field_map"))

    @classmethod
    def task_names(cls) -> list[str]:
        return [t.task for t in list_tasks("finindices")]

    def generation_defaults(self) -> dict[str, Any]:
        return self.spec.generation_params().as_dict()

    def config(self) -> dict[str, Any]:
        return {"task": self.spec.task, "task_file": str(self.spec.path), "answer_extraction": self.spec.answer_extraction,
                "data": str(self.data), "split": self.split, "hint_mode": self.hint_mode or "both",
                "lenient_precision": self.lenient_precision, "field_map": self.field_map}

    def load(self) -> list[dict[str, Any]]:
        rows = adapter.load_rows(self.data, split=self.split, field_map=self.field_map)
        kept = select_rows(rows, self.spec, self.hint_mode, None)
        if not kept:
            raise InputError(f"no items match task {self.spec.task!r} (select {self.spec.select}, hint mode {self.hint_mode or 'both'})",
                             path=str(self.data))
        return kept

    def build_request(self, instance: dict[str, Any]) -> Request:
        return Request(messages=instance["messages"])

    def score(self, instance: dict[str, Any], response: Completion) -> dict[str, Any]:
        return score_record(instance, response, lenient_precision=self.lenient_precision, task=self.spec)

    def summarize(self, samples: list[dict[str, Any]], ctx: RunContext) -> Summary:
        detail = summarize(samples, model=ctx.model_id, config=self.config(), n_boot=ctx.bootstrap_iters, timing={},
                           group_by=list(self.spec.group_by))
        m, n = detail["metrics"], detail["n"]
        counts = {"accuracy": sum(s["score"] for s in samples), "positional_accuracy": sum(s["positional"] for s in samples)}
        counts.update({name: round(m[name] * n) for name in RATES})  # rates are k / n
        known = {name: _proportion(counts[name], n) for name in counts}
        metrics = {spec.name: known[spec.name] for spec in self.spec.metrics}  # the task YAML's `metrics`, in its order
        return Summary(metrics=metrics, detail=detail, text=format_summary(detail))


def _stderr(p: float, n: int) -> float | None:
    """Standard error of a mean of 0/1 scores (sample variance, as lm-eval's `mean_stderr`)."""
    return math.sqrt(p * (1 - p) / (n - 1)) if n > 1 else None


def _proportion(k: int, n: int) -> Metric:
    """k of n with lm-eval's stderr and the Wilson 95% interval (not zero-width at 0 % or 100 %; the same interval
    as `metrics.accuracy`)."""
    estimate = stats.wilson_ci(int(k), n)
    return Metric(value=k / n if n else None, n=n, stderr=_stderr(k / n, n) if n else None, ci=(estimate.ci_low, estimate.ci_high))


# ---- `ledgerlm score --benchmark finindices` (and the pre-harness eval flags, for `ledgerlm eval --benchmark finindices`) ----

def add_score_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--predictions", required=True, help="JSONL: contract-4 rows, each with the model's raw text in `response`, or the samples.jsonl of a `ledgerlm eval` run")
    parser.add_argument("--out", required=True, help="folder for results.json and samples.jsonl")
    parser.add_argument("--model", default="predictions", help="model name recorded in results.json")
    parser.add_argument("--n-boot", type=int, default=stats.N_BOOT)
    parser.add_argument("--lenient-precision", action="store_true",
                        help="round predictions to the asked decimals before comparing (not the paper's ≈); recorded in results.json")


def run_score(args: argparse.Namespace) -> int:
    began = time.perf_counter()
    rows = read_jsonl(args.predictions)
    records = []
    for n, raw in enumerate(rows):
        if "response" not in raw:
            raise InputError(f"row {raw.get('id', n)!r} has no model output", path=str(args.predictions), field="response")
        if "messages" not in raw and "prompt" in raw and raw.get("prompt") is None and "decimals" in raw:
            raise InputError(f"row {raw.get('id', n)!r} is a samples.jsonl row without its prompt: rerun `ledgerlm eval` with "
                             "--log_samples to rescore it", path=str(args.predictions), field="prompt")
        if "messages" not in raw and isinstance(raw.get("prompt"), list):  # a samples.jsonl written by `ledgerlm eval`
            if raw.get("decimals") is None:
                raise InputError(f"row {raw.get('id', n)!r} looks like an eval samples.jsonl row but has no 'decimals' (written "
                                 "by an older ledgerlm); give the dataset rows with the model text in `response`",
                                 path=str(args.predictions), field="decimals")
            raw = {**raw, "messages": raw["prompt"]}
        row = raw if "messages" in raw else {**adapter.from_official(raw, n, "test", file=args.predictions), "response": raw.get("response")}
        adapter._checked(row, args.predictions)
        completion = Completion(text=row.get("response") or "", reasoning=row.get("reasoning_content"))
        records.append(score_record(row, completion, lenient_precision=args.lenient_precision))
    bench = FinIndices("finindices", data=str(args.predictions), lenient_precision=args.lenient_precision)
    write_scored(bench, records, args.out, model_id=args.model, bootstrap_iters=args.n_boot, began=began,
                 extra_config={"predictions": str(args.predictions), "lenient_precision": args.lenient_precision})
    return 0
