"""The one evaluation runner: tasks x model -> samples.jsonl + results.json (see harness/README.md for the layout).

    python -c "from ledgerlm.evaluate.harness.runner import RunConfig, evaluate; \
evaluate(RunConfig(model='oracle', tasks=['finindices'], data='runs/data', output_path='runs/oracle'))"

It owns everything a benchmark should not: building the sampler once, the completion cache
(OUT/cache.sqlite, `ledgerlm.inference.cache`), batching, resume (ids already in the task's
samples.jsonl with no backend error are skipped when the run configuration is unchanged), a rich
progress bar, one seed for everything (generation, bootstrap, benchmark sampling), per-sample logs
appended as each batch is scored, results.json written last and atomically, and the backend-failure
rule (samples with no answer mark results.json partial; more than `max_failed_fraction` -> exit 3).
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ledgerlm.atomic import check_folder, make_folder
from ledgerlm.contracts import EvalRecord, append_jsonl, dumps
from ledgerlm.errors import InputError
from ledgerlm.evaluate.harness.args import generation_params, model_spec
from ledgerlm.evaluate.harness.base import Benchmark, Request, RunContext, Summary
from ledgerlm.evaluate.harness.modelinfo import git_hash, library_versions, model_fingerprint
from ledgerlm.evaluate.harness.registry import resolve_task
from ledgerlm.evaluate.harness.routing import TaskRef, route_data, route_task_args
from ledgerlm.evaluate.runfiles import RESULTS, SAMPLES, SAMPLE_FIELDS, atomic_write_text, redact_text, write_run
from ledgerlm.inference.backends.prompt import chat_template_option
from ledgerlm.inference.cache import CompletionCache, generate_cached
from ledgerlm.inference.sampling import Completion, GenerationParams, Sampler, make_sampler

CACHE = "cache.jsonl"  # OUT/cache.jsonl: the completion cache, shared by the tasks of a run
FINGERPRINT = ".harness_run.json"  # the configuration a task folder's samples.jsonl belongs to (resume guard)
MAX_FAILED_FRACTION = 0.5  # of samples; a dead base_url fails every one
BACKEND_FAILED = 3  # exit status of a run whose backend failed
SECRET_ARGS = ("api_key",)


@dataclass
class RunConfig:
    """Everything `ledgerlm eval` takes; the same for every benchmark."""
    model: str
    tasks: list[str]
    output_path: str | Path
    model_args: dict[str, Any] = field(default_factory=dict)
    data: str | Path | dict[str, str] | None = None  # one value, `NAME=V,...` or {NAME: V} (harness/routing.py)
    task_args: dict[str, Any] = field(default_factory=dict)  # `key` (every task taking it) or `NAME.key` (task/benchmark NAME)
    batch_size: int | None = None
    limit: int | float | None = None
    seed: int = 0
    gen_kwargs: dict[str, Any] = field(default_factory=dict)
    log_samples: bool = True
    apply_chat_template: bool | str = True  # lm-eval's flag; ledgerlm's default is on (False: plain text; NAME: a named template)
    use_cache: bool = True
    resume: bool = True
    bootstrap_iters: int = 10_000
    max_failed_fraction: float = MAX_FAILED_FRACTION
    progress: bool = True


@dataclass
class TaskRun:
    task: str
    benchmark: Benchmark
    folder: Path
    results: dict[str, Any]
    exit_code: int


def evaluate(config: RunConfig) -> tuple[dict[str, Any], int]:
    """Run every task; returns (the aggregate results.json dict, exit code: 0, or BACKEND_FAILED)."""
    if not config.tasks:
        raise InputError("no tasks given", field="--tasks")
    if config.limit is not None and not config.limit > 0:
        raise InputError(f"must be positive (a number of instances, or a fraction below 1), not {config.limit:g}",
                         field="--limit")
    out = Path(config.output_path)
    if out.exists() and not out.is_dir():
        raise InputError("--output_path must be a folder (results.json, samples.jsonl, cache.jsonl go there)", path=str(out))
    check_folder(out)  # a file above it: one error before any work
    refs = [TaskRef(task, *resolve_task(task)) for task in dict.fromkeys(config.tasks)]  # a task named twice runs once
    data, task_args = route_data(config.data, refs), route_task_args(config.task_args, refs)  # harness/routing.py
    benchmarks = [(r.task, r.cls(r.task, seed=config.seed, data=data[r.task], **task_args[r.task])) for r in refs]
    spec, options = model_spec(config.model, config.model_args, config.batch_size)
    options, template = _with_chat_template(spec, options, config.apply_chat_template)
    config = replace(config, apply_chat_template=template)  # the value in effect, as results.json records it
    shared: dict[str, Sampler] = {}
    runs = []
    for task, bench in benchmarks:
        sampler = bench.make_sampler(spec, options)
        if sampler is None:
            if "model" not in shared:
                shared["model"] = _make_sampler(spec, options)
            sampler = shared["model"]
        folder = out if len(benchmarks) == 1 else out / bench.task
        runs.append(run_task(bench.task, bench, sampler, spec, options, folder, config, cache_path=out / CACHE))
    aggregate = _aggregate(runs, config, spec, options)
    if len(runs) > 1:
        atomic_write_text(out / RESULTS, json.dumps(aggregate, ensure_ascii=False, indent=2) + "\n")
    return aggregate, max(r.exit_code for r in runs)


def _with_chat_template(spec: str, options: dict[str, Any], flag_value: bool | str) -> tuple[dict[str, Any], bool | str]:
    """(backend options, the value in effect) for `--apply_chat_template` (or model_args chat_template=): the hf/vllm
    `chat_template` option. On (the default) adds nothing, so default runs keep their cache keys and resume fingerprints.
    An OpenAI chat endpoint renders with the server's template: off or a template name there is an error."""
    try:
        flag = chat_template_option(flag_value)
        given = chat_template_option(options["chat_template"]) if "chat_template" in options else None
    except ValueError as err:
        raise InputError(str(err), field="--apply_chat_template") from None
    if given is not None and flag is not True and given != flag:
        raise InputError(f"--apply_chat_template {flag_value} and model_args chat_template={options['chat_template']} disagree",
                         field="--apply_chat_template")
    effective = given if given is not None else flag
    kind = spec.partition(":")[0]
    out = {k: v for k, v in options.items() if k != "chat_template"}
    if effective is True:
        return out, effective
    if kind == "openai":
        raise InputError(f"--apply_chat_template {effective}: an OpenAI-compatible chat endpoint always applies the server's chat "
                         "template; run the model with hf or vllm for plain-text prompts", field="--apply_chat_template")
    if kind in ("hf", "vllm"):
        out["chat_template"] = effective
    return out, effective  # oracle and reference models render no prompt: nothing to change


def _make_sampler(spec: str, options: dict[str, Any]) -> Sampler:
    try:
        return make_sampler(spec, **options)
    except TypeError as err:  # an option the backend's constructor does not take
        raise InputError(f"{spec}: {err}", field="--model_args") from err


def _fingerprint(task: str, bench: Benchmark, spec: str, options: dict[str, Any], params: GenerationParams, config: RunConfig,
                 instances: list[dict]) -> dict:
    """What a task folder's samples.jsonl depends on; the instances' content too (all of them, before --limit, so a
    larger --limit resumes and a regenerated dataset under the same path does not)."""
    content = hashlib.sha256(json.dumps(instances, sort_keys=True, default=str).encode("utf-8", "surrogatepass")).hexdigest()
    return json.loads(json.dumps({"task": task, "version": bench.version, "model": spec, "options": _public(options),
                                  "generation": params.as_dict(), "task_config": bench.config(), "seed": config.seed,
                                  "log_samples": config.log_samples, "instances_sha256": content}, default=str))


def _public(options: dict[str, Any]) -> dict[str, Any]:
    return {k: ("***" if k in SECRET_ARGS else v) for k, v in options.items()}


def _read_done(folder: Path, fingerprint: dict, resume: bool) -> dict[str, dict]:
    """Sample rows of an interrupted run of the same configuration, by id (rows with backend errors are redone)."""
    samples, marker = folder / SAMPLES, folder / FINGERPRINT
    same = marker.is_file() and _load_json(marker) == fingerprint
    if not (resume and same and samples.is_file()):
        return {}
    done = {}
    for line in samples.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:  # the torn last line of a killed run
            continue
        try:
            row = EvalRecord.from_dict(row, f"{samples} line").to_dict()  # a row that is not a valid contract-6 row is redone
        except InputError:
            continue
        if not transport_error(row):
            done[str(row["id"])] = row
    return done


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def _progress(enabled: bool):
    """A rich progress bar on a terminal; elsewhere (logs, CI) one plain stderr line per scored batch."""
    console = Console(stderr=True)
    if enabled and not console.is_terminal:
        return _LineProgress(console)
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                    console=console, transient=True, disable=not enabled)


class _LineProgress:
    """The subset of rich.progress.Progress the runner uses, printing `TASK: done/total scored (s)` lines."""

    def __init__(self, console):
        self.console, self.jobs, self.began = console, {}, time.perf_counter()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def add_task(self, description: str, total: int, completed: int = 0) -> int:
        self.jobs[len(self.jobs)] = [description, total, completed]
        if completed:
            self._line(len(self.jobs) - 1, "resumed")
        return len(self.jobs) - 1

    def advance(self, job: int, n: int = 1) -> None:
        self.jobs[job][2] += n
        self._line(job, "scored")

    def _line(self, job: int, what: str) -> None:
        description, total, done = self.jobs[job]
        self.console.print(f"{description}: {done}/{total} {what} ({time.perf_counter() - self.began:.0f} s)", highlight=False, markup=False)


def run_task(task: str, bench: Benchmark, sampler: Sampler, spec: str, options: dict[str, Any], folder: Path, config: RunConfig,
             *, cache_path: Path) -> TaskRun:
    """One task through the model: resume, generate (cached), score, log, summarize, write."""
    began = time.perf_counter()
    instances = bench.load()
    n_original = len(instances)
    every_instance = instances
    if config.limit is not None:  # lm-eval: a value below 1 is a fraction of the instances
        keep = math.ceil(len(instances) * config.limit) if config.limit < 1 else int(config.limit)
        instances = instances[:keep]
    if not instances:
        raise InputError(f"task {task!r}: no instances to evaluate", path=str(bench.data) if bench.data else None)
    ids = [str(i["id"]) for i in instances]
    if len(set(ids)) != len(ids):
        dup = next(x for x in ids if ids.count(x) > 1)
        raise InputError(f"task {task!r}: instance id {dup!r} is not unique", path=str(bench.data) if bench.data else None)
    params = generation_params(bench.generation_defaults(), config.gen_kwargs, config.seed)
    fingerprint = _fingerprint(task, bench, spec, options, params, config, every_instance)
    make_folder(folder)
    done = _read_done(folder, fingerprint, config.resume)
    (folder / RESULTS).unlink(missing_ok=True)  # results.json marks a finished run: not until this one is
    atomic_write_text(folder / FINGERPRINT, json.dumps(fingerprint, indent=1) + "\n")
    atomic_write_text(folder / SAMPLES, "".join(_line(done[i]) for i in ids if i in done))
    cache = CompletionCache(cache_path) if config.use_cache else None
    counts = {"cached": 0, "generated": 0, "uncacheable": 0, "generate_s": 0.0, "resumed": len(done)}

    def generate(batch, params_: GenerationParams | None = None, *, tools=None, items=None) -> list[Completion]:
        completions, stats = generate_cached(sampler, batch, params_ or params, cache=cache, items=items, tools=tools,
                                             chunk_size=max(1, len(batch)))
        for key in ("cached", "generated", "uncacheable", "generate_s"):
            counts[key] += stats[key]
        return completions

    todo = [inst for inst, i in zip(instances, ids) if i not in done]
    scored: dict[str, dict] = dict(done)
    with _progress(config.progress) as bar, open(folder / SAMPLES, "a", encoding="utf-8") as log:
        job = bar.add_task(f"{task} ({getattr(sampler, 'model_id', spec)})", total=len(instances), completed=len(done))

        def record(instance: dict, response: Any, prompt: Any = None) -> dict:
            row = _sample_row(bench.score(instance, response), config.log_samples, prompt)
            scored[str(instance["id"])] = row
            return row

        def append(rows: list[dict]) -> None:  # one write + flush per batch: a killed run loses at most the batch in flight
            append_jsonl(log, rows, EvalRecord, where=f"{task}: {folder / SAMPLES}", transform=redact_text)

        ctx = RunContext(seed=config.seed, params=params, bootstrap_iters=config.bootstrap_iters,
                         model_id=getattr(sampler, "model_id", spec), generate=generate, print=bar.console.print, sampler=sampler)
        if bench.multi_turn:
            for instance, response in bench.converse(todo, ctx):
                append([record(instance, response)])
                bar.advance(job)
        else:
            for chunk in _chunks(todo, _chunk_size(sampler, config.batch_size, len(todo))):
                rows = []
                for group in _same_request_kind(chunk, [bench.build_request(i) for i in chunk]):
                    insts, reqs = zip(*group)
                    completions = generate([r.messages for r in reqs], reqs[0].params, tools=reqs[0].tools,
                                           items=bench.instance_items(insts))
                    rows += [record(instance, completion, request.messages) for instance, request, completion in zip(insts, reqs, completions)]
                append(rows)
                bar.advance(job, len(chunk))
    if cache is not None:
        cache.close()
    samples = [scored[i] for i in ids]
    summary = bench.summarize(samples, ctx)
    timing = {"wall_s": round(time.perf_counter() - began, 3), **counts}
    results = _task_results(bench.task, bench, summary, samples, n_original, config, spec, options, params, timing, ctx.model_id)
    results["config"].update(data=bench.data, task_args=bench.task_args)  # what this task got of --data / --task_args (routing.py)
    write_run(folder, results, samples)
    if summary.text:
        print(summary.text)
    failed = [e for e in map(transport_error, samples) if e]
    if failed:
        print(f"warning: {len(failed)} of {len(samples)} items got no answer from {ctx.model_id} (scored 0, not cached); "
              f"first error: {failed[0][:200]}", file=sys.stderr)
    code = check_backend_failures(folder, config.max_failed_fraction)
    return TaskRun(task, bench, folder, _load_json(folder / RESULTS) or results, code)


def write_scored(bench: Benchmark, samples: list[dict], out: str | Path, *, model_id: str, seed: int = 0,
                 bootstrap_iters: int = 10_000, extra_config: dict[str, Any] | None = None, began: float | None = None) -> dict[str, Any]:
    """`ledgerlm score`: results.json (same layout as `ledgerlm eval`'s) + samples.jsonl for rows scored offline."""
    def no_generation(*_a: Any, **_k: Any) -> list[Completion]:
        raise RuntimeError("offline scoring generates nothing")

    params = GenerationParams()
    ctx = RunContext(seed=seed, params=params, bootstrap_iters=bootstrap_iters, model_id=model_id, generate=no_generation)
    summary = bench.summarize(samples, ctx)
    config = RunConfig(model=model_id, tasks=[bench.task], output_path=out, seed=seed, bootstrap_iters=bootstrap_iters)
    timing = {"wall_s": round(time.perf_counter() - began, 3)} if began is not None else {}
    results = _task_results(bench.task, bench, summary, samples, len(samples), config, model_id, {}, params, timing, model_id)
    results["config"].update(extra_config or {})
    write_run(out, results, samples)
    if summary.text:
        print(summary.text)
    return results


def _line(row: dict) -> str:
    """A resumed row's line: contract 6 (EvalRecord) through the contracts module's dumps, URL credentials redacted."""
    return redact_text(dumps(row)) + "\n"


def _sample_row(row: dict, log_samples: bool, prompt: Any = None) -> dict:
    if "id" not in row or "score" not in row:
        raise TypeError(f"Benchmark.score must return a row with 'id' and 'score', got keys {sorted(row)}")
    out = {k: row.get(k) for k in SAMPLE_FIELDS} | row
    if out["prompt"] is None:
        out["prompt"] = prompt  # the request's messages, when the benchmark's row does not carry them
    if not log_samples:
        out["prompt"] = None  # prompts are the bulk of a log; --log_samples keeps them
    return out


def _chunk_size(sampler: Sampler, batch_size: int | None, todo: int) -> int:
    """Instances per generate call (each call's rows are scored and logged before the next: the resume unit).
    A sampler's own `chunk_size` wins; None there (vLLM: continuous batching over the whole list) = all at once."""
    if hasattr(sampler, "chunk_size"):
        return max(1, sampler.chunk_size or todo)
    return max(32, 4 * (batch_size or 8))


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start: start + size]


def _same_request_kind(instances: list[dict], requests: list[Request]):
    """Consecutive runs of requests sharing params and tools (one generate call each)."""
    group: list[tuple[dict, Request]] = []
    key = None
    for inst, req in zip(instances, requests):
        k = (req.params, json.dumps(req.tools, sort_keys=True) if req.tools else None)
        if group and k != key:
            yield group
            group = []
        group.append((inst, req))
        key = k
    if group:
        yield group


def _task_results(task: str, bench: Benchmark, summary: Summary, samples: list[dict], n_original: int, config: RunConfig,
                  spec: str, options: dict[str, Any], params: GenerationParams, timing: dict, model_id: str) -> dict[str, Any]:
    flat: dict[str, Any] = {"alias": task, "n": len(samples)}
    for name, metric in summary.metrics.items():
        flat.update(metric.flat(name))
    detail = dict(summary.detail)
    bench_config = detail.pop("config", None) or bench.config()
    run_config = {**bench_config, **_run_config(config, spec, options), "generation": params.as_dict()}
    return {
        "model": model_id,  # the sampler's id (a benchmark's detail may name it too)
        **detail,
        "task": task,
        "results": {task: flat},
        "versions": {task: bench.version},
        "higher_is_better": {task: {m: bench.higher_is_better.get(m, True) for m in summary.metrics}},
        "n-samples": {task: {"original": n_original, "effective": len(samples)}},
        "primary_metric": {task: bench.primary_metric},
        "config": run_config,
        "n-shot": {task: 0},
        "library_versions": library_versions(),
        "git_hash": git_hash(),
        "model_info": _model_info(spec, options),
        "time": {**(detail.get("time") or {}), **timing},
        "total_evaluation_time_seconds": timing.get("wall_s"),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _run_config(config: RunConfig, spec: str, options: dict[str, Any]) -> dict[str, Any]:
    return {"model": config.model, "model_spec": spec, "model_args": _public(config.model_args), "backend_options": _public(options),
            "batch_size": config.batch_size, "limit": config.limit, "seed": config.seed, "gen_kwargs": config.gen_kwargs,
            "apply_chat_template": config.apply_chat_template, "log_samples": config.log_samples,
            "bootstrap_iters": config.bootstrap_iters, "data": config.data if config.data is None or isinstance(config.data, dict) else str(config.data),
            "task_args": config.task_args}


def _model_info(spec: str, options: dict[str, Any]) -> dict[str, Any]:
    kind, _, target = spec.partition(":")
    info: dict[str, Any] = {"spec": spec}
    if kind in ("hf", "vllm"):
        info.update(model_fingerprint(target, options.get("peft")))
        if options.get("revision"):
            info["revision"] = options["revision"]
    return info


def _aggregate(runs: list[TaskRun], config: RunConfig, spec: str, options: dict[str, Any]) -> dict[str, Any]:
    if len(runs) == 1:
        return runs[0].results
    keys = ("results", "versions", "higher_is_better", "n-samples", "n-shot", "primary_metric")
    out: dict[str, Any] = {k: {} for k in keys}
    for run in runs:
        for k in keys:
            out[k].update(run.results.get(k, {}))
    out["task_folders"] = {r.task: str(r.folder.name) for r in runs}
    out["config"] = {**_run_config(config, spec, options), "tasks": {r.task: r.results.get("config") for r in runs}}
    out["library_versions"] = library_versions()
    out["git_hash"] = git_hash()
    out["total_evaluation_time_seconds"] = round(sum(r.results.get("total_evaluation_time_seconds") or 0 for r in runs), 3)
    out["model_info"] = runs[0].results.get("model_info")
    out["date"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    if any(r.results.get("partial") for r in runs):
        out["partial"] = True
    return out


# ---- backend failures (samples with no answer) ------------------------------------------------------------

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


def check_backend_failures(out: Path, max_fraction: float, warn: Callable[[str], None] | None = None) -> int:
    """Mark results.json partial when samples got no answer; BACKEND_FAILED when more than `max_fraction` did."""
    samples, results_path = Path(out) / SAMPLES, Path(out) / RESULTS
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
    atomic_write_text(results_path, json.dumps(results, ensure_ascii=False, indent=2) + "\n")
    what = f"{len(errors)} of {len(rows)} samples got no answer from {results.get('model', 'the backend')}"
    if len(errors) > max_fraction * len(rows):
        print(f"ledgerlm eval: error: {what} (more than {max_fraction:.0%}); first transport error: {errors[0][:300]}; "
              f"results.json marked partial", file=sys.stderr)
        return BACKEND_FAILED
    print(f"ledgerlm eval: warning: {what}; results.json marked partial", file=sys.stderr)
    return 0
