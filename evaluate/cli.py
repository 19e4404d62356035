"""`ledgerlm eval` and `ledgerlm score`: dispatch to one small module per benchmark.

    ledgerlm eval --tasks list                                   # every task of every benchmark
    ledgerlm eval --benchmark finindices --model oracle --data runs/data --out runs/oracle
    ledgerlm score --benchmark finindices --predictions runs/oracle/samples.jsonl --out runs/scored

A benchmark module (`ledgerlm.evaluate.<name>.bench`) exposes four functions:
`add_eval_args(parser)`, `run_eval(args) -> int`, `add_score_args(parser)`, `run_score(args) -> int`.
`--help` without `--benchmark` lists the benchmarks; with it, that benchmark's options.
"""
from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path

BENCHMARKS = {
    "finindices": "ledgerlm.evaluate.finindices.bench",
    "macrolens": "ledgerlm.evaluate.macrolens.bench",
    "epsbench": "ledgerlm.evaluate.epsbench.bench",
}
ABOUT = {
    "finindices": "financial-index QA over shown statements (set-match accuracy, bootstrap CI); data: a `ledgerlm synth` folder",
    "macrolens": "7 forecasting/valuation/statement tasks (T1..T7); data: release folder, Hub id, or `fixture` (offline)",
    "epsbench": "tool-using agent forecasts quarterly EPS; data: the embedded EPSBench release (offline)",
}


def task_table() -> list[dict]:
    """One row per task YAML (evaluate/tasks/<benchmark>/*.yaml): benchmark, task, how to select it, description."""
    from ledgerlm.evaluate.tasks import task_rows

    return task_rows()


def print_tasks(benchmark: str | None = None, as_json: bool = False) -> int:
    rows = [r for r in task_table() if benchmark in (None, r["benchmark"])]
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title="ledgerlm eval tasks", title_justify="left")
    for column in ("benchmark", "task", "select", "description"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(r["benchmark"], r["task"], r["select"], r["description"])
    Console(width=160).print(table)
    return 0


def _general_help(prog: str) -> str:
    lines = [f"usage: {prog} --benchmark {{{','.join(sorted(BENCHMARKS))}}} [options]",
             "", "benchmarks:"]
    lines += [f"  {name:<11} {ABOUT[name]}" for name in BENCHMARKS]
    lines += ["", f"`{prog} --benchmark NAME --help` shows that benchmark's options."]
    if prog.endswith("eval"):
        lines += ["`ledgerlm eval --tasks list [--benchmark NAME] [--json]` lists the tasks."]
    return "\n".join(lines)


def _benchmark_module(argv: list[str], prog: str):
    pre = argparse.ArgumentParser(prog=prog, add_help=False)
    pre.add_argument("--benchmark", choices=sorted(BENCHMARKS), required=True)
    known, _ = pre.parse_known_args(argv)
    return known.benchmark, importlib.import_module(BENCHMARKS[known.benchmark])


def _main(argv: list[str], prog: str, add: str, run: str) -> int:
    has_benchmark = any(a == "--benchmark" or a.startswith("--benchmark=") for a in argv)
    if not has_benchmark and any(a in ("-h", "--help") for a in argv):
        print(_general_help(prog))
        return 0
    if prog.endswith("eval") and _wants_task_list(argv):
        pre = argparse.ArgumentParser(prog=prog, add_help=False)
        pre.add_argument("--benchmark", choices=sorted(BENCHMARKS))
        pre.add_argument("--json", action="store_true")
        known, _ = pre.parse_known_args(argv)
        return print_tasks(known.benchmark, known.json)
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
    if run == "run_eval" and code == 0:
        code = check_backend_failures(Path(args.out), args.max_failed_fraction)
    return code


MAX_FAILED_FRACTION = 0.5  # of samples; a dead --base-url fails every one
BACKEND_FAILED = 3  # exit status of a run whose backend failed


def transport_error(row: dict) -> str | None:
    """The backend/transport error of one samples.jsonl row, whichever benchmark wrote it."""
    for key in ("backend_error", "transport_error"):
        if row.get(key):
            return str(row[key])
    for value in row.values():  # EPSBench records: the conversation's error text ("backend error: ...")
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and text.startswith("backend error:"):
                return text.removeprefix("backend error:").strip()
    return None


def check_backend_failures(out: Path, max_fraction: float) -> int:
    """Mark results.json partial when samples got no answer; BACKEND_FAILED when more than `max_fraction` did."""
    import sys

    samples, results_path = out / "samples.jsonl", out / "results.json"
    if not samples.is_file() or not results_path.is_file():
        return 0
    with open(samples, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    errors = [e for e in map(transport_error, rows) if e]
    if not errors:
        return 0
    results = json.loads(results_path.read_text(encoding="utf-8"))
    results["partial"] = True
    results["backend_failures"] = {"failed": len(errors), "n": len(rows), "first_error": errors[0][:500],
                                   "max_failed_fraction": max_fraction}
    from ledgerlm.evaluate.runfiles import atomic_write_text

    atomic_write_text(results_path, json.dumps(results, ensure_ascii=False, indent=2) + "\n")
    what = f"{len(errors)} of {len(rows)} samples got no answer from {results.get('model', 'the backend')}"
    if len(errors) > max_fraction * len(rows):
        print(f"ledgerlm eval: error: {what} (more than {max_fraction:.0%}); first transport error: {errors[0][:300]}; "
              f"results.json marked partial", file=sys.stderr)
        return BACKEND_FAILED
    print(f"ledgerlm eval: warning: {what}; results.json marked partial", file=sys.stderr)
    return 0


def _wants_task_list(argv: list[str]) -> bool:
    return any(a == "--tasks=list" or (a == "--tasks" and argv[i + 1:i + 2] == ["list"]) for i, a in enumerate(argv))


def eval_main(argv: list[str]) -> int:
    return _main(argv, "ledgerlm eval", "add_eval_args", "run_eval")


def score_main(argv: list[str]) -> int:
    return _main(argv, "ledgerlm score", "add_score_args", "run_score")
