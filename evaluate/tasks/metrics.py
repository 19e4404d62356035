"""Metric registry for task YAMLs: which metric names each benchmark (task) knows, and their direction.

    python -c "from ledgerlm.evaluate.tasks.metrics import metrics_for; print(sorted(metrics_for('macrolens', 'macrolens_t2')))"

A task YAML's `metrics:` entries are resolved here; an unknown name is an error naming the file.
- FinIndices metrics are means of one per-sample value (a samples.jsonl record -> float), so
  `TaskSpec.compute_metrics` / `TaskSpec.breakdown` compute them and the lm-eval export's
  `process_results` returns them per document (aggregation `mean`).
- MacroLens metrics are the per-task tables of `ledgerlm.evaluate.macrolens.metrics.METRICS`
  (computed over arrays by that benchmark, with its cluster bootstrap); direction from its
  `LOWER_IS_BETTER` (failure counts such as `n_nonresponse` are lower-is-better too).
- EPSBench metrics are the headline figures of `ledgerlm.evaluate.epsbench.benchmark.EPSBench.summarize`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ledgerlm.evaluate.finindices.scoring import FORMAT_ERRORS, PARSE_ERRORS
from ledgerlm.evaluate.macrolens import metrics as macrolens_metrics


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool | None  # None: the registry does not know; the task YAML must say
    per_sample: Callable[[dict], float] | None = None  # from one samples.jsonl record; None = computed by the benchmark
    description: str = ""


def _reason(record: dict) -> str:
    return (record.get("error_reason") or "").removeprefix("truncated:")


FININDICES = {m.name: m for m in (
    Metric("accuracy", True, lambda r: float(r["score"]), "set match at the asked precision (paper eq. 1-2)"),
    Metric("positional_accuracy", True, lambda r: float(r["positional"]), "every value at its own row and column"),
    Metric("parse_failure_rate", False, lambda r: float(_reason(r) in PARSE_ERRORS), "no answer could be read"),
    Metric("format_failure_rate", False, lambda r: float(_reason(r) in FORMAT_ERRORS), "no block of the asked format"),
    Metric("backend_error_rate", False, lambda r: float(r.get("error_reason") == "backend_error"), "the backend gave no answer"),
    Metric("truncated_rate", False, lambda r: float(r.get("finish_reason") == "length"), "generation hit max_gen_toks"),
)}

EPSBENCH = {m.name: m for m in (  # what the EPSBench benchmark reports (evaluate/epsbench/benchmark.py summarize)
    Metric("pde_median", False, description="median over instances of |forecast - EPS| / price (finite instances)"),
    Metric("compliance", True, description="runs with a parseable forecast / expected runs"),
    Metric("format_compliance", True, description="final message in the asked format"),
    Metric("interval_score_mean", False, description="interval score of the p10-p90 interval / price, mean"),
    Metric("coverage", None, description="share of actual EPS inside [p10, p90] (nominal 0.8: the YAML states a direction)"),
    Metric("catastrophic_rate", False, description="runs with a forecast whose PDE > 1 pp / expected runs (Table 4)"),
)}

MACROLENS_TASKS = ("T1", "T2", "T3", "T4", "T5", "T6", "T7")


def _macrolens(task_code: str) -> dict[str, Metric]:
    table = macrolens_metrics.METRICS[task_code]
    out = {}
    for name in table:
        if name.startswith("mape_"):  # T3/T6 per-field and pooled MAPEs: results.json detail only (no interval)
            continue
        if name in macrolens_metrics.LOWER_IS_BETTER or name in macrolens_metrics.COUNTS:
            direction = False  # losses and failure counts (n_nonresponse, n_unparsed_fields)
        else:
            direction = True  # parse_pct, da, anchor_da, spearman, balance_accuracy
        out[name] = Metric(name, direction, description=f"MacroLens {task_code} ({'primary' if name == macrolens_metrics.PRIMARY[task_code] else 'secondary'})")
    return out


def metrics_for(benchmark: str, task: str) -> dict[str, Metric]:
    """The metrics a task of `benchmark` may list (`task` picks the MacroLens table: macrolens_t1 -> T1)."""
    if benchmark == "finindices":
        return FININDICES
    if benchmark == "epsbench":
        return EPSBENCH
    if benchmark == "macrolens":
        code = task.rsplit("_", 1)[-1].upper()
        if code not in MACROLENS_TASKS:
            raise KeyError(f"MacroLens task names end in _t1 .. _t7, got {task!r}")
        return _macrolens(code)
    raise KeyError(f"no metric registry for benchmark {benchmark!r} (known: finindices, macrolens, epsbench)")
