"""EPSBench in the shared evaluator: `ledgerlm eval` and `ledgerlm score --benchmark epsbench`.

    ledgerlm eval --benchmark epsbench --model openai:gpt-4o-mini --docs DOCS --out runs/eps --runs 3
    ledgerlm score --benchmark epsbench --predictions runs/eps --out runs/eps/scored [--exclude-flagged]

Paper: "EPSBench: Benchmarking LLM Agents for Earnings Forecasting" (release JadeXu16/epsbench,
data CC BY 4.0, embedded under release/). eval writes, per run, `RUN/<s1..sN>/records/<TICKER>/<FQ>/
t-1.record.json` (the release's layout and record format) and then scores them; score reads such a
folder (or a JSONL of records) and writes results.json + samples.jsonl + tables.md (the paper's far-instance,
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
import time
from pathlib import Path
from typing import Any, Iterator

from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.release import load_release
from ledgerlm.evaluate.epsbench.scoring import sample_row, score_records, unreadable_line, wins_from_scores_csv
from ledgerlm.evaluate.epsbench.validation import validate_release
from ledgerlm.evaluate.runfiles import write_run

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


def run_eval(args: argparse.Namespace) -> int:
    from ledgerlm.evaluate.epsbench.agent import AgentConfig, make_record, run_conversations, start_conversation, use_native_tools
    from ledgerlm.evaluate.epsbench.tools import Toolbox
    from ledgerlm.inference.sampling import GenerationParams, make_sampler

    release = load_release(args.release)
    information = args.information or ("full" if args.docs else "none")
    if information != "none" and not args.docs:
        raise InputError(f"--information {information} needs --docs (a document folder laid out like the release's)", field="docs")
    instances = [i for i in release.instances if not args.instances or i.id in set(args.instances)][: args.limit]
    if not instances:
        raise InputError("no instances selected", field="instances")
    options = {"base_url": args.base_url} if args.base_url else {}
    sampler = make_sampler(args.model, **options)
    native = use_native_tools(args.model, args.tool_protocol)
    config = AgentConfig(information=information, max_turns=args.max_turns, protocol=args.tool_protocol)
    out = Path(args.out)
    for k in range(1, args.runs + 1):
        run = f"s{k}"
        params = GenerationParams(max_tokens=args.max_tokens, temperature=args.temperature, seed=args.seed + k - 1)
        convs = [start_conversation(i, release.schema(i.id), Toolbox(release.schema(i.id), i, args.docs, information), run, native)
                 for i in instances]
        began = time.time()
        progress = lambda r, active, done, run=run: print(  # noqa: E731  one line per round: long runs show progress
            f"epsbench: run {run} round {r}: {active} conversations active, {done}/{len(convs)} finished "
            f"({time.time() - began:.0f} s)", file=sys.stderr, flush=True)
        for conv in run_conversations(sampler, convs, params, config, native, on_round=progress):
            iid = conv.instance.id
            record = make_record(conv, release.truth.get(iid), args.model, (release.consensus or {}).get(iid))
            path = out / run / "records" / conv.instance.ticker / conv.instance.fiscal_quarter / RECORD_NAME
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record, indent=2), encoding="utf-8")
            (path.parent / "trajectory.json").write_text(json.dumps(conv.messages, indent=1), encoding="utf-8")
    config_info = {"model": args.model, "information": information, "runs": args.runs, "max_turns": args.max_turns,
                   "max_tokens": args.max_tokens, "temperature": args.temperature, "native_tools": native, "docs": args.docs}
    config_info["information_condition"] = information_condition(information)
    return _score_and_write(release, out, out, args.exclude_flagged, args.seed, config_info, runs=[f"s{k}" for k in range(1, args.runs + 1)])


# the paper's information conditions (Table 3) and the release's configuration suffixes
CONDITIONS = {
    "full": ("full", "all sources: filings, the prior earnings call and news (the main experiment)"),
    "filings": ("filings_only", "source removal: news removed (filings and transcripts only)"),
    "news": ("news_only", "source removal: filings and transcripts removed (news only)"),
    "none": ("neither", "source removal: news and filings/transcripts both removed (schema only)"),
}


def information_condition(information: str) -> dict[str, str]:
    name, text = CONDITIONS[information]
    return {"information": information, "release_config_suffix": name, "paper_condition": text,
            "source_removal": information != "full"}


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
    from ledgerlm.evaluate.epsbench.analyses import all_tables, to_markdown

    flags = validate_release(release)
    results, rows = score_records(release, iter_records(predictions), flags, exclude_flagged=exclude_flagged, seed=seed, runs=runs)
    results["config"] = {**config, "release": str(release.root), "exclude_flagged": exclude_flagged, "seed": seed}
    if "information_condition" in config:
        results["information_condition"] = config["information_condition"]
    if release.consensus is None and config.get("release_config"):
        results["consensus_from_scores_csv"] = wins_from_scores_csv(release.root / "data" / "scores.csv", config["release_config"])
    grid = [i.id for i in release.instances if not (exclude_flagged and i.id in results["validation"]["flagged_instances"])]
    results["tables"] = all_tables(release, rows, results["runs"], grid)
    (Path(out)).mkdir(parents=True, exist_ok=True)
    (Path(out) / "tables.md").write_text(to_markdown(results["tables"]), encoding="utf-8")
    results["score_direction"] = "lower is better (score = PDE, a fraction of price)"
    # for `ledgerlm compare/report`: score is a loss; runs s1..sN of an instance fold by median (null = +inf)
    results.update(score_kind="loss", score_name="PDE", score_aggregate="median", group_by=[])
    write_run(out, results, [sample_row(row) for row in rows])  # atomic; results.json last
    pct = lambda v: "n/a" if v is None else f"{100 * v:.3f}%"  # noqa: E731
    print(f"epsbench: {results['n_records']} records, {results['n_instances']} instances, median PDE {pct(results['pde_median'])}, "
          f"coverage {results['coverage']}, format compliance {results['format_compliance']}, "
          f"flagged {len(results['validation']['flagged_instances'])} -> {out / 'results.json'}", file=sys.stderr)
    for bad in results["unreadable_lines"]:
        print(f"epsbench: {bad['path']}:{bad['line']}: {bad['error']} (counted as a format failure)", file=sys.stderr)
    return 0
