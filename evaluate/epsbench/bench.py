"""EPSBench's pre-harness flags and offline scoring: `ledgerlm eval/score --benchmark epsbench`.

    ledgerlm eval --tasks epsbench --model openai --model_args model=gpt-4o-mini --data DOCS --output_path runs/eps  # harness
    ledgerlm eval --benchmark epsbench --model openai:gpt-4o-mini --docs DOCS --out runs/eps --runs 3               # same run
    ledgerlm score --benchmark epsbench --predictions runs/eps --out runs/eps/scored [--exclude-flagged]

Paper: "EPSBench: Benchmarking LLM Agents for Earnings Forecasting" (release JadeXu16/epsbench,
data CC BY 4.0, embedded under release/). The benchmark is `benchmark.EPSBench` on the one runner
(the agent loop is its request/response protocol); `--benchmark epsbench` flags are translated onto it
(`legacy_config`) and the run is then also written in the release's layout, `RUN/<s1..sN>/records/<TICKER>/
<FQ>/t-1.record.json` + trajectory.json, with tables.md. score reads such a folder, a JSONL of records or a
run's samples.jsonl and writes results.json + samples.jsonl + tables.md (the paper's far-instance,
stage-decomposition and naive-baseline tables, evaluate/epsbench/analyses.py).

Defaults follow the paper: 3 runs per instance (instance PDE = their median), no turn cap beyond the
context (App. B.3; `--max-turns N` is an opt-in cap, recorded in results.json).

--docs DOCS (the release's document store, distributed separately from its GitHub repository):
    DOCS/filings/<TICKER>/financial_report/<TICKER>_<FORM>_<FILED>_Q<n>_<YYYY>/<section>.md   10-K / 10-Q sections
    DOCS/filings/<TICKER>/earnings_call_transcript/<CALL-DATE>_<TICKER>_Q<n>_<YYYY>_Earnings_Call_Transcript.txt
    DOCS/news/<TICKER>.jsonl  (or DOCS/news.jsonl with a `ticker` field): {"date", "title", "text", "url"?}
Without --docs the agent sees only the schema: that is the paper's source-removal condition with both
sources removed ("neither", Table 3), and results.json says so under `information_condition`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator

from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.analyses import to_markdown
from ledgerlm.evaluate.epsbench.benchmark import CONDITIONS, finish_results, information_condition, summary_line  # noqa: F401 (re-exported)
from ledgerlm.evaluate.epsbench.release import load_release
from ledgerlm.evaluate.epsbench.scoring import N_BOOT, sample_row, score_records, unreadable_line
from ledgerlm.evaluate.epsbench.validation import validate_release
from ledgerlm.evaluate.harness.args import backend_options
from ledgerlm.evaluate.harness.runner import RunConfig
from ledgerlm.evaluate.harness.runner import evaluate
from ledgerlm.evaluate.runfiles import read_jsonl, write_run

RECORD_NAME = "t-1.record.json"


def add_eval_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release", default=None, help="release folder (default: the embedded EPSBench release)")
    parser.add_argument("--model", required=True, help="hf:PATH | vllm:PATH | openai:MODEL")
    parser.add_argument("--out", required=True, help="run folder")
    parser.add_argument("--docs", default=None, help="document folder laid out like the release's (filings/<TICKER>/...); none = schema only")
    parser.add_argument("--information", choices=["full", "filings", "news", "none"], default=None,
                        help="sources the agent may use (default: full with --docs, none without)")
    parser.add_argument("--runs", type=int, default=3, help="independent runs per instance (paper: 3; instance PDE = their median)")
    parser.add_argument("--instances", nargs="*", default=None, help="instance ids (TICKER_FQ) to run; default all")
    parser.add_argument("--limit", type=int, default=None, help="first N instances only (smoke tests)")
    parser.add_argument("--max-turns", type=int, default=None,
                        help="cap on model requests per conversation (default: none, as the paper: 'no turn limit beyond context')")
    parser.add_argument("--max-tokens", type=int, default=2048, help="new tokens per model request")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible server URL (openai: models)")
    parser.add_argument("--tool-protocol", choices=["auto", "native", "text"], default="auto")
    parser.add_argument("--exclude-flagged", action="store_true", help="leave instances with inconsistent ground truth out of the metrics")
    parser.add_argument("--seed", type=int, default=0)


def legacy_config(args: argparse.Namespace):
    """The RunConfig of `ledgerlm eval --benchmark epsbench ...` (pre-harness flags; 2,000 bootstrap draws as before)."""
    information = args.information or ("full" if args.docs else "none")
    if information != "none" and not args.docs:
        raise InputError(f"--information {information} needs --docs (a document folder laid out like the release's)", field="docs")
    if args.limit is not None and args.limit < 1:
        raise InputError(f"must be a positive number of instances, not {args.limit}", field="--limit")
    release = load_release(args.release)
    chosen = [i.id for i in release.instances if not args.instances or i.id in set(args.instances)][: args.limit]
    if not chosen:
        raise InputError("no instances selected", field="instances")
    allowed = backend_options(args.model.partition(":")[0])
    model_args = {"base_url": args.base_url} if args.base_url and allowed is not None and "base_url" in allowed else {}
    task_args = {"release": args.release, "information": information, "runs": args.runs,
                 "instances": chosen if (args.instances or args.limit) else None, "max_turns": args.max_turns,
                 "tool_protocol": args.tool_protocol, "exclude_flagged": args.exclude_flagged or None}
    return RunConfig(model=args.model, model_args=model_args, tasks=["epsbench"], output_path=args.out, data=args.docs,
                     task_args={k: v for k, v in task_args.items() if v is not None}, seed=args.seed,
                     gen_kwargs={"max_gen_toks": args.max_tokens, "temperature": args.temperature}, bootstrap_iters=N_BOOT,
                     log_samples=True, progress=False)


def run_eval(args: argparse.Namespace) -> int:
    _, code = evaluate(legacy_config(args))
    write_release_layout(Path(args.out))
    return code


def write_release_layout(out: Path) -> int:
    """The release's layout from a run's samples.jsonl: <run>/records/<TICKER>/<FQ>/t-1.record.json + trajectory.json, and tables.md."""
    n = 0
    for row in read_jsonl(out / "samples.jsonl"):
        record = row.get("record")
        if not isinstance(record, dict):
            continue
        path = out / row["run"] / "records" / str(record["ticker"]) / str(record["fiscal_quarter"]) / RECORD_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2), encoding="utf-8")
        (path.parent / "trajectory.json").write_text(json.dumps(row.get("trajectory") or [], indent=1), encoding="utf-8")
        n += 1
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    if results.get("tables"):
        (out / "tables.md").write_text(to_markdown(results["tables"]), encoding="utf-8")
    return n


def add_score_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release", default=None, help="release folder (default: the embedded EPSBench release)")
    parser.add_argument("--predictions", required=True, help="a records folder (…/t-1.record.json) or a JSONL of records")
    parser.add_argument("--out", required=True)
    parser.add_argument("--exclude-flagged", action="store_true", help="leave instances with inconsistent ground truth out of the metrics")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs the configuration had (s1..sN; a missing run counts as failed, as main_tables.py does); default: those present")
    parser.add_argument("--config", default=None,
                        help="a release configuration name (e.g. gpt-5.5__opencode__default__full): without data/consensus.csv, "
                             "wins/losses vs consensus are read from the release's data/scores.csv, as main_tables.py does")


def run_score(args: argparse.Namespace) -> int:
    release = load_release(args.release)
    runs = [f"s{k}" for k in range(1, args.runs + 1)] if args.runs else None
    return _score_and_write(release, Path(args.predictions), Path(args.out), args.exclude_flagged, args.seed,
                            {"predictions": args.predictions, "release_config": args.config}, runs=runs)


def iter_records(path: Path) -> Iterator[tuple[str, Any]]:
    """(run label, record) from a folder of t-1.record.json files or a JSONL file; unreadable
    records become format failures named by their path (JSONL: by file and line number, see `unreadable_line`)."""
    if path.is_file():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                record = unreadable_line(path, n, f"line is not JSON ({err.msg})")
            if not isinstance(record, dict):
                record = unreadable_line(path, n, f"line is not a JSON object ({type(record).__name__})")
            elif isinstance(record.get("record"), dict):  # a harness run's samples.jsonl row: the record it carries
                record = {**record["record"], "run": record.get("run", record["record"].get("run", "s1"))}
            yield str(record.get("run", "s1")), record
        return
    if not path.is_dir():
        raise InputError("predictions not found (expected a records folder or a JSONL file)", path=str(path))
    for file in sorted(path.rglob(RECORD_NAME)):
        parts = file.relative_to(path).parts
        run = parts[parts.index("records") - 1] if "records" in parts and parts.index("records") > 0 else "s1"
        try:
            record = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            record = {"ticker": parts[-3], "fiscal_quarter": parts[-2], "format_failure": True, "format_error": f"record is not JSON ({err.msg})"}
        yield run, record


def _score_and_write(release, predictions: Path, out: Path, exclude_flagged: bool, seed: int, config: dict, runs=None) -> int:
    flags = validate_release(release)
    results, rows = score_records(release, iter_records(predictions), flags, exclude_flagged=exclude_flagged, seed=seed, runs=runs)
    results = finish_results(release, results, rows, config, seed, exclude_flagged, config.get("release_config"))
    (Path(out)).mkdir(parents=True, exist_ok=True)
    (Path(out) / "tables.md").write_text(to_markdown(results["tables"]), encoding="utf-8")
    write_run(out, results, [sample_row(row) for row in rows])  # atomic; results.json last
    print(f"{summary_line(results)} -> {out / 'results.json'}", file=sys.stderr)
    for bad in results["unreadable_lines"]:
        print(f"epsbench: {bad['path']}:{bad['line']}: {bad['error']} (counted as a format failure)", file=sys.stderr)
    return 0
