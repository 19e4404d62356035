"""FinIndices scoring pieces (per-sample row, detailed results) and the pre-harness `--benchmark finindices` eval flags.

    ledgerlm eval --model oracle --tasks finindices --data runs/data --output_path runs/oracle --limit 50
    ledgerlm eval --benchmark finindices --model oracle --data runs/data --out runs/oracle   # pre-harness flags, same runner
    ledgerlm score --benchmark finindices --predictions preds.jsonl --out runs/scored   # benchmark.run_score

`ledgerlm eval` runs FinIndices through the harness runner (`evaluate/finindices/benchmark.py`,
`evaluate/harness/`); `add_eval_args` are the pre-harness flags, translated onto it by
`ledgerlm.evaluate.cli.legacy_finindices_config`.

Paper: FinIndices (../shared/papers/finindices.txt §2.2.2). Accuracy is reported with Wilson
95% CIs (positional accuracy: percentile bootstrap) per paradigm × axis × hint (Tables 3, 11, 12), plus the positional variant, parse/format
failure rates, tokens and time. Scoring: `ledgerlm.evaluate.finindices.scoring.score_response`.
"""
from __future__ import annotations

import argparse
import platform
import time
from collections import Counter
from typing import Any

import ledgerlm
from ledgerlm.evaluate import stats
from ledgerlm.evaluate.finindices.scoring import DEFICIENT, FORMAT_ERRORS, PARSE_ERRORS, SCORER_VERSION, score_response
from ledgerlm.inference.reasoning import split_reasoning
from ledgerlm.inference.sampling import Completion, GenerationParams
from ledgerlm.evaluate.tasks import TaskSpec


def add_eval_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="hf:PATH | vllm:PATH | openai:MODEL | oracle | wrong_unit")
    parser.add_argument("--data", required=True, help="dataset folder, JSONL file, or Findata/Finindice")
    parser.add_argument("--out", required=True, help="run folder: results.json, samples.jsonl, cache.sqlite")
    parser.add_argument("--task", default="finindices", help="task YAML name (evaluate/tasks/finindices/) or path")
    parser.add_argument("--split", default=None, help="dataset file in a folder (default: the task's, test)")
    hint = parser.add_mutually_exclusive_group()
    hint.add_argument("--hint", dest="hint_mode", action="store_const", const="hint", help="only with-hint items")
    hint.add_argument("--no-hint", dest="hint_mode", action="store_const", const="nohint", help="only without-hint items")
    hint.add_argument("--both", dest="hint_mode", action="store_const", const="both", help="both (default, unless the task selects one)")
    parser.add_argument("--limit", type=float, default=None, help="first N items after filtering (a value below 1: that fraction)")
    gen = parser.add_argument_group("generation (defaults from the task YAML)")
    gen.add_argument("--max-tokens", type=int)
    gen.add_argument("--temperature", type=float)
    gen.add_argument("--top-p", type=float)
    gen.add_argument("--seed", type=int)
    backend = parser.add_argument_group("backend")
    backend.add_argument("--base-url", help="openai: server URL, e.g. http://127.0.0.1:8000/v1")
    backend.add_argument("--api-key-env", help="openai: env var holding the key (default OPENAI_API_KEY)")
    backend.add_argument("--concurrency", type=int, help="openai: requests in flight (default 8)")
    backend.add_argument("--max-retries", type=int, help="openai: retries on 429/5xx/timeouts (default 6)")
    backend.add_argument("--timeout", type=float, help="openai: seconds per request (default 600)")
    backend.add_argument("--peft", help="hf: PEFT adapter folder")
    backend.add_argument("--device", help="hf: cpu | cuda | cuda:1 (default: cuda when available)")
    backend.add_argument("--dtype", help="hf: bfloat16 | float16 | float32")
    backend.add_argument("--batch-size", type=int, help="hf: conversations per generate call (default 8)")
    backend.add_argument("--tensor-parallel-size", type=int, help="vllm: GPUs per model")
    backend.add_argument("--trust-remote-code", action="store_true", default=None, help="hf/vllm: run the model repo's code")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write OUT/cache.sqlite")
    parser.add_argument("--n-boot", type=int, default=stats.N_BOOT, help="bootstrap resamples for CIs")
    parser.add_argument("--field-map", default=None,
                        help="JSON file correcting the official release's column names: {contract-4 field: [columns]} (see adapter.OFFICIAL_FIELDS)")
    parser.add_argument("--lenient-precision", action="store_true",
                        help="round predictions to the asked decimals before comparing (ledgerlm's variant; the paper's ≈ is symbolic "
                             "equality, so extra non-zero decimals are wrong). Recorded in results.json")


def select_rows(rows: list[dict], task: TaskSpec, hint_mode: str | None, limit: int | None) -> list[dict]:
    """Rows matching the task's `select` and the CLI hint flag, first `limit` of them."""
    overrides = {"hint": hint_mode == "hint"} if hint_mode in ("hint", "nohint") else {"hint": None} if hint_mode == "both" else {}
    return task.select_rows(rows, overrides, limit)


def generation_params(task: TaskSpec, args: argparse.Namespace) -> GenerationParams:
    """The task's generation_kwargs, with the CLI's values over them."""
    return task.generation_params(**{key: getattr(args, key, None) for key in ("max_tokens", "temperature", "top_p", "seed")})


def score_record(row: dict, completion: Completion, *, lenient_precision: bool = False, task: TaskSpec | None = None) -> dict[str, Any]:
    """One samples.jsonl row (contract 6) for a dataset row and its completion (scored with the task's answer_extraction)."""
    answer_text, reasoning = split_reasoning(completion.text, completion.reasoning)
    if completion.error:
        result_score, positional, extracted, reason = 0, 0, None, "backend_error"
    else:
        result = score_response(row, completion.text, lenient_precision=lenient_precision,
                                extraction=task.answer_extraction if task is not None else "final_answer")
        result_score, positional, extracted, reason = result.score, result.positional, result.extracted, result.error_reason
        if reason and completion.finish_reason == "length":
            reason = f"truncated:{reason}"
    return {
        "id": row["id"], "prompt": row["messages"], "response": completion.text, "reasoning": reasoning,
        "decimals": row.get("decimals"), "unit": row.get("unit"),  # so `ledgerlm score` can rescore this file
        "answer_text": answer_text, "extracted": extracted, "score": result_score, "positional": positional,
        "error_reason": reason, "answer": row.get("answer"), "paradigm": row.get("paradigm"), "axis": row.get("axis"),
        "hint": row.get("hint"), "split": row.get("split"), "answer_format": row.get("answer_format"), "deficiency": row.get("answer") == DEFICIENT,
        "finish_reason": completion.finish_reason, "backend_error": completion.error,
        "prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens,
    }


def summarize(records: list[dict], *, model: str, config: dict, n_boot: int, timing: dict,
              group_by: list[str] | None = None) -> dict[str, Any]:
    """results.json: accuracy with CIs overall and per group, failure rates, tokens and time."""
    reasons = Counter(r["error_reason"] for r in records if r["error_reason"])
    base_reason = lambda r: (r["error_reason"] or "").removeprefix("truncated:")  # noqa: E731
    n = len(records)
    overall = stats.score_ci([r["score"] for r in records], n_boot=n_boot).as_dict()  # Wilson (0/1 scores)
    return {
        "benchmark": "finindices", "task": config.get("task", "finindices"), "scorer_version": SCORER_VERSION,
        "model": model, "n": n,
        "precision_rule": "lenient (prediction rounded to the asked decimals; not the paper's)" if config.get("lenient_precision")
                          else "paper (≈: symbolic equality after normalisation; extra non-zero decimals are wrong)",
        "metrics": {
            "accuracy": overall,
            "positional_accuracy": stats.score_ci([r["positional"] for r in records], n_boot=n_boot).as_dict(),
            "parse_failure_rate": sum(base_reason(r) in PARSE_ERRORS for r in records) / n if n else 0.0,
            "format_failure_rate": sum(base_reason(r) in FORMAT_ERRORS for r in records) / n if n else 0.0,
            "backend_error_rate": sum(r["error_reason"] == "backend_error" for r in records) / n if n else 0.0,
            "truncated_rate": sum(r["finish_reason"] == "length" for r in records) / n if n else 0.0,
            "by_paradigm_hint": stats.grouped(records, ["paradigm", "hint"], n_boot=n_boot),
            "by_group": stats.grouped(records, group_by or ["paradigm", "axis", "hint"], n_boot=n_boot),  # the task's group_by
            "by_group_positional": stats.grouped(records, group_by or ["paradigm", "axis", "hint"], value="positional", n_boot=n_boot),
            "by_answer_format": stats.grouped(records, ["answer_format"], n_boot=n_boot),
            "deficiency": stats.grouped(records, ["deficiency"], n_boot=n_boot),
            "error_reasons": dict(reasons.most_common()),
        },
        "tokens": {"prompt": sum(r["prompt_tokens"] for r in records), "completion": sum(r["completion_tokens"] for r in records),
                   "completion_mean": sum(r["completion_tokens"] for r in records) / n if n else 0.0},
        "time": timing,
        "config": config,
        "versions": {"ledgerlm": ledgerlm.__version__, "python": platform.python_version()},
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def format_summary(results: dict) -> str:
    m = results["metrics"]
    acc = m["accuracy"]
    lines = [f"{results['model']}: accuracy {acc['value']:.2%} [{acc['ci_low']:.2%}, {acc['ci_high']:.2%}] on {results['n']} items; "
             f"positional {m['positional_accuracy']['value']:.2%}; parse failures {m['parse_failure_rate']:.2%}; "
             f"format failures {m['format_failure_rate']:.2%}"]
    for g in m["by_paradigm_hint"]:
        lines.append(f"  {g['paradigm']:<6} hint={g['hint']!s:<5} n={g['n']:<5} {g['value']:.2%} [{g['ci_low']:.2%}, {g['ci_high']:.2%}]")
    return "\n".join(lines)
