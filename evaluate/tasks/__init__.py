"""Task YAMLs that drive behaviour: `load_task(name) -> TaskSpec`, one frozen dataclass per task.

    python -c "from ledgerlm.evaluate.tasks import load_task; print(load_task('finindices_nohint_table'))"
    python -c "from ledgerlm.evaluate.tasks import list_tasks; print([t.task for t in list_tasks()])"

STABLE API (the runner, `ledgerlm eval --tasks list` and the lm-eval export call these):
  load_task(name_or_path) -> TaskSpec      every key validated; bad key/value = InputError naming file + key
  list_tasks(benchmark=None) -> [TaskSpec] every YAML under evaluate/tasks/<benchmark>/, sorted by name
  task_path(name) -> Path                  the YAML file of a task name (or the path itself)
  TaskSpec.select_rows(rows, overrides=None, limit=None)   rows whose fields equal `select` (None = any)
  TaskSpec.generation_params(**overrides) -> GenerationParams   `generation_kwargs`, CLI values over them
  TaskSpec.score(row, response, lenient_precision=False)   FinIndices ScoreResult with `answer_extraction`
  TaskSpec.compute_metrics(records) -> {metric: {"value", "n"}}   per-sample metrics, mean
  TaskSpec.breakdown(records, metric=primary) -> [{**group, "n", "value"}]   by `group_by`
  TaskSpec.higher_is_better -> {metric: bool}, TaskSpec.primary_metric (first of `metrics`)

YAML keys (nothing else is accepted):
  task, benchmark, version (int; FinIndices: == scoring.SCORER_VERSION), description,
  include (a base YAML, relative, merged under this one; cycles rejected),
  dataset: {split}           which file of a dataset folder (FinIndices: test -> test.jsonl)
  select: {field: value}     keep rows whose field equals value; null = any (MacroLens: {task: T1..T7})
  answer_extraction: NAME    FinIndices: a key of finindices.extract.ANSWER_SPANS (final_answer |
                             strict | last_number); other benchmarks: absent (their parsers are fixed)
  metrics: [NAME | {metric: NAME, higher_is_better: BOOL, aggregation: mean}]   names from
                             tasks.metrics.metrics_for; a stated direction must agree with the registry
  group_by: [field, ...]     fields of the per-sample records that scores are broken down by
  generation_kwargs: {max_gen_toks, temperature, top_p, stop}   (lm-eval names; max_gen_toks
                             null = the benchmark's own default, e.g. MacroLens T1's horizon rule). No seed:
                             the run's one --seed seeds every task (the runner owns it, as lm-eval's --seed)
Bump `version` when scoring changes.

A Benchmark (evaluate/harness) reads its task's YAML: `generation_defaults()` returns
`spec.generation_params(...)` (when `max_gen_toks` is null, pass the benchmark's own rule as `max_tokens`),
`higher_is_better = spec.higher_is_better`, and `summarize` reports `spec.metrics` in their order
(evaluate/finindices/benchmark.py does all three).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ledgerlm.errors import InputError
from ledgerlm.evaluate.finindices import extract
from ledgerlm.evaluate.finindices.scoring import ScoreResult, score_response
from ledgerlm.evaluate.tasks.metrics import Metric, metrics_for
from ledgerlm.inference.sampling import GenerationParams

TASKS_DIR = Path(__file__).resolve().parent
BENCHMARKS = ("finindices", "macrolens", "epsbench")
KEYS = frozenset({"task", "include", "benchmark", "version", "description", "dataset", "select", "answer_extraction",
                  "metrics", "group_by", "generation_kwargs"})
GENERATION_KEYS = ("max_gen_toks", "temperature", "top_p", "stop")
DATASET_KEYS = frozenset({"split"})
METRIC_KEYS = frozenset({"metric", "higher_is_better", "aggregation"})
AGGREGATIONS = ("mean",)
EXTRACTORS = {"finindices": extract.ANSWER_SPANS}  # benchmark -> answer extractors a task may name


@dataclass(frozen=True)
class GenerationKwargs:
    max_gen_toks: int | None = None  # None: the benchmark decides
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"max_gen_toks": self.max_gen_toks, "temperature": self.temperature, "top_p": self.top_p, "stop": list(self.stop)}


@dataclass(frozen=True)
class MetricSpec:
    name: str
    higher_is_better: bool
    aggregation: str = "mean"
    metric: Metric | None = field(default=None, compare=False, repr=False)  # the registry entry


@dataclass(frozen=True)
class TaskSpec:
    task: str
    benchmark: str
    version: int
    description: str
    path: Path
    split: str = "test"
    select: dict[str, Any] = field(default_factory=dict)
    answer_extraction: str | None = None
    metrics: tuple[MetricSpec, ...] = ()
    group_by: tuple[str, ...] = ()
    generation_kwargs: GenerationKwargs = GenerationKwargs()

    @property
    def primary_metric(self) -> str:
        return self.metrics[0].name

    @property
    def higher_is_better(self) -> dict[str, bool]:
        return {m.name: m.higher_is_better for m in self.metrics}

    def select_rows(self, rows: list[dict], overrides: dict[str, Any] | None = None, limit: int | None = None) -> list[dict]:
        """Rows whose fields equal `select` (overrides, e.g. the CLI's --hint, replace entries; None = any); first `limit`."""
        wanted = {**self.select, **(overrides or {})}
        kept = [r for r in rows if all(v is None or r.get(k) == v for k, v in wanted.items())]
        return kept[:limit] if limit is not None else kept

    def generation_params(self, **overrides: Any) -> GenerationParams:
        """GenerationParams from `generation_kwargs`; a non-None override (max_tokens / max_gen_toks, temperature,
        top_p, seed, stop) wins. `max_gen_toks: null` with no override keeps GenerationParams' default."""
        g = self.generation_kwargs
        values = {"max_tokens": g.max_gen_toks, "temperature": g.temperature, "top_p": g.top_p, "stop": g.stop, "seed": None}
        for key, value in overrides.items():
            key = "max_tokens" if key == "max_gen_toks" else key
            if key not in values:
                raise TypeError(f"unknown generation override {key!r}")
            if value is not None:
                values[key] = tuple(value) if key == "stop" else value
        return GenerationParams(**{k: v for k, v in values.items() if v is not None})

    def score(self, row: dict, response: str | None, *, lenient_precision: bool = False) -> ScoreResult:
        """FinIndices: score one response with this task's `answer_extraction`."""
        if self.benchmark != "finindices":
            raise TypeError(f"task {self.task}: only FinIndices tasks score single responses here")
        return score_response(row, response, lenient_precision=lenient_precision, extraction=self.answer_extraction or "final_answer")

    def compute_metrics(self, records: list[dict]) -> dict[str, dict[str, Any]]:
        """{metric: {"value": mean of its per-sample values, "n"}} for every listed metric that has a per-sample form."""
        out = {}
        for m in self.metrics:
            if m.metric is not None and m.metric.per_sample is not None:
                values = [m.metric.per_sample(r) for r in records]
                out[m.name] = {"value": sum(values) / len(values) if values else math.nan, "n": len(values)}
        return out

    def breakdown(self, records: list[dict], metric: str | None = None) -> list[dict[str, Any]]:
        """One row per combination of the `group_by` fields present in `records`: the fields, n and the metric's mean."""
        name = metric or self.primary_metric
        spec = next((m for m in self.metrics if m.name == name), None)
        if spec is None or spec.metric is None or spec.metric.per_sample is None:
            raise KeyError(f"task {self.task}: metric {name!r} is not a listed per-sample metric")
        groups: dict[tuple, list[float]] = {}
        for r in records:
            groups.setdefault(tuple(r.get(k) for k in self.group_by), []).append(spec.metric.per_sample(r))
        rows = [{**dict(zip(self.group_by, key)), "n": len(v), "value": sum(v) / len(v)} for key, v in groups.items()]
        return sorted(rows, key=lambda row: tuple(str(row[k]) for k in self.group_by))


def task_path(name: str | Path) -> Path:
    """The YAML of a task name (searched under evaluate/tasks/*/) or an existing .yaml path."""
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    found = sorted(TASKS_DIR.glob(f"*/{name}.yaml"))
    if not found:
        known = sorted(p.stem for p in TASKS_DIR.glob("*/*.yaml"))
        raise InputError(f"unknown task {str(name)!r}; known: {', '.join(known)}", field="--tasks")
    return found[0]


def list_tasks(benchmark: str | None = None) -> list[TaskSpec]:
    """Every task YAML (of one benchmark), loaded and validated, sorted by benchmark then name."""
    return [load_task(p) for p in sorted(TASKS_DIR.glob(f"{benchmark or '*'}/*.yaml"))]


def load_config(name: str | Path) -> dict[str, Any]:
    """The merged YAML mapping of a task (includes resolved, unknown keys rejected), before typing."""
    return _load(task_path(name), ())


def load_task(name: str | Path) -> TaskSpec:
    """The validated TaskSpec of a task name or YAML path."""
    path = task_path(name)
    return _typed(_load(path, ()), path.resolve())


def _load(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    path = path.resolve()
    if path in seen:
        raise InputError(f"include cycle: {' -> '.join(p.name for p in seen + (path,))}", path=str(path))
    try:
        with open(path, encoding="utf-8") as handle:
            config = yaml.safe_load(handle)
    except OSError as exc:
        raise InputError(f"cannot read task file: {exc.strerror}", path=str(path)) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {str(exc).splitlines()[0]}", path=str(path)) from None
    config = {} if config is None else config
    if not isinstance(config, dict):
        raise InputError(f"a task file is a mapping of keys, got {type(config).__name__}", path=str(path))
    unknown = set(config) - KEYS
    if unknown:
        raise InputError(f"unknown task keys {sorted(unknown)} (allowed: {sorted(KEYS)})", path=str(path), field=sorted(unknown)[0])
    config = dict(config)
    base = config.pop("include", None)
    if base is None:
        return config
    return _merge(_load(path.parent / base, seen + (path,)), config)


def _merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in child.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _typed(c: dict[str, Any], path: Path) -> TaskSpec:
    def bad(key: str, message: str) -> InputError:
        return InputError(message, path=str(path), field=key)

    def need(key: str, kind: type | tuple[type, ...], what: str) -> Any:
        value = c.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise bad(key, f"{key} must be {what}, got {value!r}")
        return value

    task, benchmark = need("task", str, "a task name"), need("benchmark", str, "a benchmark name")
    if benchmark not in BENCHMARKS:
        raise bad("benchmark", f"unknown benchmark {benchmark!r} (known: {', '.join(BENCHMARKS)})")
    version = need("version", int, "an integer")
    description = c.get("description") or ""
    dataset = c.get("dataset") or {}
    if not isinstance(dataset, dict) or set(dataset) - DATASET_KEYS:
        raise bad("dataset", f"dataset takes only {sorted(DATASET_KEYS)}, got {dataset!r}")
    split = dataset.get("split", "test")
    if not isinstance(split, str) or not split:
        raise bad("dataset.split", f"dataset.split must be a file stem such as test, got {split!r}")
    select = c.get("select") or {}
    if not isinstance(select, dict) or any(not isinstance(k, str) or isinstance(v, (dict, list)) for k, v in select.items()):
        raise bad("select", f"select must map field names to one value or null, got {select!r}")
    if benchmark == "macrolens" and select.get("task") not in ("T1", "T2", "T3", "T4", "T5", "T6", "T7"):
        raise bad("select.task", f"a MacroLens task selects one of T1..T7, got {select.get('task')!r}")

    extraction = c.get("answer_extraction")
    known = EXTRACTORS.get(benchmark, {})
    if extraction is not None and extraction not in known:
        if not known:
            raise bad("answer_extraction", f"{benchmark} has no selectable answer extractors (its parsers are fixed); remove the key")
        raise bad("answer_extraction", f"unknown answer_extraction {extraction!r} (known: {', '.join(known)})")
    if extraction is None and known:
        extraction = "final_answer"

    registry = metrics_for(benchmark, select.get("task") or task)
    entries = c.get("metrics")
    if not isinstance(entries, list) or not entries:
        raise bad("metrics", "metrics must be a non-empty list of metric names or {metric: NAME, ...} entries")
    metrics = []
    for entry in entries:
        entry = {"metric": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, dict) or "metric" not in entry or set(entry) - METRIC_KEYS:
            raise bad("metrics", f"a metrics entry is a name or a mapping with keys {sorted(METRIC_KEYS)}, got {entry!r}")
        name = entry["metric"]
        if name not in registry:
            raise bad("metrics", f"unknown metric {name!r} for {benchmark} task {task} (known: {', '.join(registry)})")
        stated, known_dir = entry.get("higher_is_better"), registry[name].higher_is_better
        if stated is not None and not isinstance(stated, bool):
            raise bad("metrics", f"{name}: higher_is_better must be true or false, got {stated!r}")
        if stated is not None and known_dir is not None and stated != known_dir:
            raise bad("metrics", f"{name}: higher_is_better {stated} contradicts the metric ({'higher' if known_dir else 'lower'} is better)")
        if stated is None and known_dir is None:
            raise bad("metrics", f"{name} has no known direction: state higher_is_better")
        aggregation = entry.get("aggregation", "mean")
        if aggregation not in AGGREGATIONS:
            raise bad("metrics", f"{name}: aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
        metrics.append(MetricSpec(name, known_dir if stated is None else stated, aggregation, registry[name]))
    if len({m.name for m in metrics}) != len(metrics):
        raise bad("metrics", "a metric is listed twice")

    group_by = c.get("group_by") or []
    if not isinstance(group_by, list) or not all(isinstance(g, str) and g for g in group_by):
        raise bad("group_by", f"group_by must be a list of field names, got {group_by!r}")

    return TaskSpec(task=task, benchmark=benchmark, version=version, description=str(description), path=path, split=split,
                    select=dict(select), answer_extraction=extraction, metrics=tuple(metrics), group_by=tuple(group_by),
                    generation_kwargs=_generation(c.get("generation_kwargs"), bad))


def _generation(g: Any, bad) -> GenerationKwargs:
    g = {} if g is None else g
    if not isinstance(g, dict):
        raise bad("generation_kwargs", f"generation_kwargs must be a mapping, got {g!r}")
    if "seed" in g:
        raise bad("generation_kwargs.seed", "seed is not a task setting: the run's --seed seeds every task (remove the key)")
    unknown = set(g) - set(GENERATION_KEYS)
    if unknown:
        raise bad(f"generation_kwargs.{sorted(unknown)[0]}", f"unknown generation key(s) {sorted(unknown)} (allowed: {list(GENERATION_KEYS)})")
    out = GenerationKwargs()
    max_gen_toks = g.get("max_gen_toks", out.max_gen_toks)
    if max_gen_toks is not None and (isinstance(max_gen_toks, bool) or not isinstance(max_gen_toks, int) or max_gen_toks <= 0):
        raise bad("generation_kwargs.max_gen_toks", f"max_gen_toks must be a positive integer or null, got {max_gen_toks!r}")
    numbers = {}
    for key, low, high in (("temperature", 0.0, 2.0), ("top_p", 0.0, 1.0)):
        value = g.get(key, getattr(out, key))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high or (key == "top_p" and value == 0):
            raise bad(f"generation_kwargs.{key}", f"{key} must be a number in {'(0, 1]' if key == 'top_p' else '[0, 2]'}, got {value!r}")
        numbers[key] = float(value)
    stop = g.get("stop", [])
    stop = [stop] if isinstance(stop, str) else stop
    if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
        raise bad("generation_kwargs.stop", f"stop must be a string or a list of non-empty strings, got {stop!r}")
    return GenerationKwargs(max_gen_toks=max_gen_toks, stop=tuple(stop), **numbers)


def task_rows(benchmark: str | None = None) -> list[dict[str, Any]]:
    """`ledgerlm eval --tasks list`: one row per task YAML — benchmark, task, how to select it, description."""
    rows = []
    for spec in list_tasks(benchmark):
        select, text = f"--tasks {spec.task}", spec.description
        if spec.benchmark == "finindices":
            chosen = ", ".join(f"{k}={v}" for k, v in spec.select.items() if v is not None) or "all items"
            text = f"{chosen}; {spec.answer_extraction}"
        metrics = ", ".join(f"{m.name}{'↑' if m.higher_is_better else '↓'}" for m in spec.metrics[:2])
        rows.append({"benchmark": spec.benchmark, "task": spec.task, "select": select,
                     "description": f"{text}; {metrics}; v{spec.version}"})
    return rows
