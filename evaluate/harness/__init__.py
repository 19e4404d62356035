"""One evaluation harness for every benchmark: the `Benchmark` interface, a registry and one runner.

    ledgerlm eval --model oracle --tasks finindices --data runs/data --output_path runs/oracle
    python -c "from ledgerlm.evaluate.harness import REGISTRY; print(sorted(REGISTRY))"

`base` (Benchmark, Request, Metric, Summary, RunContext) · `registry` (name -> Benchmark class) ·
`runner` (RunConfig, evaluate) · `args` (lm-eval style k=v strings) · `routing` (which task gets which --data /
--task_args) · `modelinfo` (versions, hashes).
results.json / samples.jsonl layout: evaluate/harness/README.md.
"""
from ledgerlm.evaluate.harness.base import Benchmark, Metric, Request, RunContext, Summary
from ledgerlm.evaluate.harness.registry import REGISTRY, get_benchmark, register, resolve_task

__all__ = ["Benchmark", "Metric", "Request", "RunContext", "Summary", "REGISTRY", "get_benchmark", "register", "resolve_task"]
