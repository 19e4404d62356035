"""The `Benchmark` interface every evaluation implements; the runner (`harness.runner`) does everything else.

    python -c "from ledgerlm.evaluate.harness import get_benchmark; print(get_benchmark('finindices'))"

A benchmark is one folder under evaluate/ with a `Benchmark` subclass plus one line in
`harness.registry.REGISTRY`. It answers four questions; the runner owns batching, the completion
cache, resume, progress, seeds, samples.jsonl and results.json:

1. `load()`                      -> instances (dicts, each with a unique string `id`), in a fixed order
2. `build_request(instance)`     -> a `Request` (chat messages, optional tools/params override)
3. `score(instance, response)`   -> one samples.jsonl row (must carry `id` and `score`)
4. `summarize(samples, ctx)`     -> a `Summary`: {metric: Metric(value, n, stderr, ci)} + benchmark detail

Multi-turn benchmarks (EPSBench's tool-using agent) set `multi_turn = True` and implement
`converse(instances, ctx)` instead of `build_request`: a generator that drives its own conversations,
asks for completions through `ctx.generate(...)` (cached, batched, counted like single-turn requests),
and yields `(instance, response)` as each conversation ends; `score` then gets that response object.

Constructor: `Benchmark(task, *, seed, data=None, **task_args)`: `task` is the registered task name
(a benchmark may offer several, see `task_names`), `data` the `--data` path, `task_args` the parsed
`--task_args k=v,...` (reject unknown keys with `InputError`) - in a run of several tasks, the ones routed to this
task (`harness/routing.py`: `NAME=` / `NAME.key=` prefixes, bare keys to the tasks whose `task_arg_names` hold them).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Iterator

from ledgerlm.errors import InputError
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages, Sampler


@dataclass
class Request:
    """One model call: chat messages, optional OpenAI tool specs and a per-request params override."""
    messages: Messages
    tools: list[dict] | None = None
    params: GenerationParams | None = None  # None: the run's generation params


@dataclass
class Metric:
    """One score with its sample size and uncertainty; written as `m`, `m_stderr`, `m_ci`, `m_n` in results.json."""
    value: float | None
    n: int
    stderr: float | None = None
    ci: tuple[float, float] | None = None  # 95% interval (bootstrap or Wilson), as the benchmark computes it

    def flat(self, name: str) -> dict[str, Any]:
        out: dict[str, Any] = {name: _finite(self.value), f"{name}_n": self.n}
        out[f"{name}_stderr"] = _finite(self.stderr)
        out[f"{name}_ci"] = None if self.ci is None else [_finite(self.ci[0]), _finite(self.ci[1])]
        return out


def _finite(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


@dataclass
class Summary:
    """What `summarize` returns: the headline metrics (lm-eval `results` entry) and the benchmark's own
    detailed results (merged at the top level of the task's results.json, e.g. FinIndices `metrics`)."""
    metrics: dict[str, Metric]
    detail: dict[str, Any] = field(default_factory=dict)
    text: str = ""  # printed at the end of the run


@dataclass
class RunContext:
    """What a benchmark may use from the runner."""
    seed: int
    params: GenerationParams  # the run's generation params (task defaults + --gen_kwargs)
    bootstrap_iters: int
    model_id: str
    generate: Callable[..., list[Completion]]  # generate(batch_messages, params=None, *, tools=None, items=None)
    print: Callable[[str], None] = print  # progress-safe console print
    sampler: Sampler | None = None


class Benchmark:
    """Base class; see the module docstring for the contract."""
    name: ClassVar[str] = ""
    version: ClassVar[str | int] = 0
    primary_metric: ClassVar[str] = "score"
    higher_is_better: ClassVar[dict[str, bool]] = {}
    multi_turn: ClassVar[bool] = False
    # what `--data` / `--task_args` of a several-task run are routed to (harness/routing.py):
    takes_data: ClassVar[bool] = True  # False: a bare `--data X` skips this benchmark's tasks, `--data NAME=X` is an error
    task_arg_names: ClassVar[tuple[str, ...] | None] = None  # the --task_args keys it takes; None: undeclared, gets every bare key

    def __init__(self, task: str, *, seed: int = 0, data: str | None = None, **task_args: Any):
        """Keeps the arguments; a benchmark that declares `task_arg_names` gets unknown `--task_args` keys refused here."""
        if self.task_arg_names is not None:
            unknown = sorted(set(task_args) - set(self.task_arg_names))
            if unknown:
                raise InputError(f"{self.name} does not take {unknown} (it takes: {', '.join(self.task_arg_names)})",
                                 field="--task_args")
        self.task, self.seed, self.data, self.task_args = task, seed, data, task_args

    @classmethod
    def task_names(cls) -> list[str]:
        """Task names this benchmark answers to in `--tasks` (default: its own name)."""
        return [cls.name]

    @classmethod
    def describe(cls) -> list[dict[str, str]]:
        """Rows for `ledgerlm eval --tasks list`: {task, description}."""
        return [{"task": t, "description": (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""} for t in cls.task_names()]

    def generation_defaults(self) -> dict[str, Any]:
        """GenerationParams fields for this task (before --gen_kwargs)."""
        return {}

    def config(self) -> dict[str, Any]:
        """Task configuration recorded in results.json under config.tasks[task]."""
        return {"data": self.data, **self.task_args}

    def make_sampler(self, spec: str, options: dict[str, Any]) -> Sampler | None:
        """A benchmark-specific reference model for `spec` (e.g. MacroLens `baseline:naive`), or None."""
        return None

    def load(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def build_request(self, instance: dict[str, Any]) -> Request:
        raise NotImplementedError

    def converse(self, instances: list[dict[str, Any]], ctx: RunContext) -> Iterator[tuple[dict[str, Any], Any]]:
        """Multi-turn protocol: yield (instance, response) per finished conversation (see module docstring)."""
        raise NotImplementedError

    def score(self, instance: dict[str, Any], response: Completion | Any) -> dict[str, Any]:
        raise NotImplementedError

    def summarize(self, samples: list[dict[str, Any]], ctx: RunContext) -> Summary:
        raise NotImplementedError

    def instance_items(self, instances: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """What reference backends (`oracle`) receive as `items=`: the instances themselves by default."""
        return list(instances)
