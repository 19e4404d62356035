"""Benchmark task declarations (lm-eval style YAML): a base task plus small `include:` variants.

    python -c "from ledgerlm.evaluate.tasks import load_task; print(load_task('finindices_nohint_table'))"

`load_task(name)` finds `<benchmark>/<name>.yaml` under this folder (or takes a path), resolves
`include:` (relative to the including file, recursively, cycles rejected), deep-merges the child
over its base, and rejects unknown keys. Bump `version` when scoring changes.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ledgerlm.errors import InputError

TASKS_DIR = Path(__file__).resolve().parent
KEYS = frozenset({"task", "include", "benchmark", "version", "description", "dataset", "select", "generation",
                  "answer_extraction", "metrics", "group_by"})


def task_path(name: str) -> Path:
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    found = sorted(TASKS_DIR.glob(f"*/{name}.yaml"))
    if not found:
        known = sorted(p.stem for p in TASKS_DIR.glob("*/*.yaml"))
        raise InputError(f"unknown task {name!r}; known: {', '.join(known)}", field="--task")
    return found[0]


def load_task(name: str) -> dict[str, Any]:
    """The fully resolved task config for a task name or YAML path."""
    return _load(task_path(name), ())


def _load(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    path = path.resolve()
    if path in seen:
        raise InputError(f"include cycle: {' -> '.join(p.name for p in seen + (path,))}", path=str(path))
    with open(path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle) or {}
    unknown = set(config) - KEYS
    if unknown:
        raise InputError(f"unknown task keys {sorted(unknown)} (allowed: {sorted(KEYS)})", path=str(path))
    base = config.pop("include", None)
    if base is None:
        return config
    return _merge(_load(path.parent / base, seen + (path,)), config)


def _merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in child.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out
