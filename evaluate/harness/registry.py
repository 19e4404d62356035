"""Benchmark registry: one line per benchmark, `name -> "module:Class"` (imported only when used).

    python -c "from ledgerlm.evaluate.harness.registry import resolve_task; print(resolve_task('finindices_hint'))"

Adding a benchmark = one folder with a `Benchmark` subclass + one line here (or `register(name, cls)` at
run time, e.g. from a test or a plugin). A benchmark may answer to several task names
(`Benchmark.task_names()`: FinIndices' YAML variants, MacroLens' `macrolens_t2`, ...).
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Union

from ledgerlm.errors import InputError
from ledgerlm.evaluate.harness.base import Benchmark
from ledgerlm.evaluate.tasks import load_task

REGISTRY: dict[str, Union[str, type[Benchmark]]] = {
    "finindices": "ledgerlm.evaluate.finindices.benchmark:FinIndices",
    "macrolens": "ledgerlm.evaluate.macrolens.benchmark:MacroLens",
    "epsbench": "ledgerlm.evaluate.epsbench.benchmark:EPSBench",
}


def register(name: str, benchmark: Union[str, type[Benchmark]]) -> None:
    """Add (or replace) a benchmark: a `Benchmark` subclass or its "module:Class" path."""
    REGISTRY[name] = benchmark


def get_benchmark(name: str) -> type[Benchmark]:
    """The Benchmark class registered as `name`."""
    if name not in REGISTRY:
        raise InputError(f"unknown benchmark {name!r}; registered: {', '.join(sorted(REGISTRY))}", field="--tasks")
    entry = REGISTRY[name]
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module), attr)
        REGISTRY[name] = entry
    return entry


def all_tasks() -> dict[str, str]:
    """task name -> benchmark name, over every registered benchmark."""
    out: dict[str, str] = {}
    for name in REGISTRY:
        for task in get_benchmark(name).task_names():
            out.setdefault(task, name)
    return out


def resolve_task(task: str) -> tuple[str, type[Benchmark]]:
    """(benchmark name, class) for a `--tasks` entry: a benchmark name, one of its task names, or a task YAML path."""
    if task in REGISTRY:
        return task, get_benchmark(task)
    if Path(task).suffix in (".yaml", ".yml") and Path(task).is_file():  # a task YAML outside evaluate/tasks/
        owner = load_task(task).benchmark
        return owner, get_benchmark(owner)
    owner = all_tasks().get(task)
    if owner is None:
        raise InputError(f"unknown task {task!r}; `ledgerlm eval --tasks list` lists them", field="--tasks")
    return owner, get_benchmark(owner)
