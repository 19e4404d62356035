"""`ledgerlm eval` and `ledgerlm score`: dispatch to one small module per benchmark.

    ledgerlm eval --benchmark finindices --model oracle --data runs/data --out runs/oracle
    ledgerlm score --benchmark finindices --predictions preds.jsonl --out runs/scored

A benchmark module (`ledgerlm.evaluate.<name>.bench`) exposes four functions:
`add_eval_args(parser)`, `run_eval(args) -> int`, `add_score_args(parser)`, `run_score(args) -> int`.
"""
from __future__ import annotations

import argparse
import importlib

BENCHMARKS = {
    "finindices": "ledgerlm.evaluate.finindices.bench",
    "macrolens": "ledgerlm.evaluate.macrolens.bench",
    "epsbench": "ledgerlm.evaluate.epsbench.bench",
}


def _benchmark_module(argv: list[str], prog: str):
    pre = argparse.ArgumentParser(prog=prog, add_help=False)
    pre.add_argument("--benchmark", choices=sorted(BENCHMARKS), required=True)
    known, _ = pre.parse_known_args(argv)
    return known.benchmark, importlib.import_module(BENCHMARKS[known.benchmark])


def _main(argv: list[str], prog: str, add: str, run: str) -> int:
    if not any(a == "--benchmark" or a.startswith("--benchmark=") for a in argv):
        argparse.ArgumentParser(prog=prog).error(f"--benchmark is required ({', '.join(sorted(BENCHMARKS))})")
    name, module = _benchmark_module(argv, prog)
    parser = argparse.ArgumentParser(prog=f"{prog} --benchmark {name}")
    parser.add_argument("--benchmark", choices=sorted(BENCHMARKS), required=True)
    getattr(module, add)(parser)
    return getattr(module, run)(parser.parse_args(argv))


def eval_main(argv: list[str]) -> int:
    return _main(argv, "ledgerlm eval", "add_eval_args", "run_eval")


def score_main(argv: list[str]) -> int:
    return _main(argv, "ledgerlm score", "add_score_args", "run_score")
