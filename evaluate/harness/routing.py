"""Which task of a run gets which `--data` and which `--task_args` (one `ledgerlm eval` over several benchmarks).

    ledgerlm eval --model hf --model_args pretrained=PATH --tasks finindices,macrolens_t2,epsbench \
        --data finindices=runs/data,macrolens=fixture \
        --task_args finindices.split=dev,macrolens.ladder=A..E,runs=1 --output_path runs/x

`--data`: one value (`--data runs/data`) goes to every task whose benchmark takes data (`Benchmark.takes_data`);
`NAME=VALUE` pieces go to the task or benchmark NAME (a task name beats its benchmark's name), a bare piece beside
them to the tasks no piece names. `--task_args`: `NAME.key=v` goes to task or benchmark NAME (task beats
benchmark beats bare); a bare `key=v` goes to every task whose benchmark takes `key` (`Benchmark.task_arg_names`;
a benchmark that declares none gets every bare key) and is an error only when no task of the run takes it.
A NAME that is no task or benchmark of the run is one error naming the flag, the piece and the run's names.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ledgerlm.errors import InputError
from ledgerlm.evaluate.harness.base import Benchmark
from ledgerlm.evaluate.tasks import load_task

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")  # what a `NAME=` of --data may look like (a path piece has / or .)


@dataclass(frozen=True)
class TaskRef:
    """One `--tasks` entry: the entry, its benchmark's registered name and class."""
    task: str
    benchmark: str
    cls: type[Benchmark]

    @property
    def names(self) -> set[str]:
        """Names that address this task itself: the entry and, for a task YAML path, the YAML's task name."""
        out = {self.task}
        if Path(self.task).suffix in (".yaml", ".yml") and Path(self.task).is_file():
            out.add(load_task(self.task).task)
        return out


def _run_names(refs: list[TaskRef]) -> str:
    tasks = ", ".join(r.task for r in refs)
    benchmarks = ", ".join(dict.fromkeys(r.benchmark for r in refs))
    return f"tasks: {tasks}; benchmarks: {benchmarks}"


def _addressed(name: str, refs: list[TaskRef], flag: str, piece: str) -> list[tuple[TaskRef, int]]:
    """(task, rank) for each task `name` addresses: rank 0 by its task name, 1 by its benchmark's name (finindices
    is both: the task `finindices` by name, `finindices_nohint` through its benchmark); one error when none."""
    out = [(r, 0 if name in r.names else 1) for r in refs if name in r.names or r.benchmark == name]
    if not out:
        raise InputError(f"{piece!r}: {name!r} is no task or benchmark of this run ({_run_names(refs)})", field=flag)
    return out


def route_data(data: str | Path | Mapping[str, Any] | None, refs: list[TaskRef]) -> dict[str, str | None]:
    """--tasks entry -> the --data value its benchmark gets (None: none)."""
    if data is None:
        return {r.task: None for r in refs}
    named = dict(data) if isinstance(data, Mapping) else _named_pieces(str(data), refs)
    if named is None:  # one value for every task that takes data
        if not any(r.cls.takes_data for r in refs):
            raise InputError(f"{str(data)!r}: no task of this run takes data ({_run_names(refs)})", field="--data")
        return {r.task: (str(data) if r.cls.takes_data else None) for r in refs}
    default = named.pop(None, None)
    chosen: dict[str, tuple[int, str]] = {}
    for name, value in named.items():
        for ref, rank in _addressed(str(name), refs, "--data", f"{name}={value}"):
            if not ref.cls.takes_data:
                raise InputError(f"{name}={value}: {ref.task} ({ref.benchmark}) takes no data", field="--data")
            if ref.task not in chosen or rank < chosen[ref.task][0]:
                chosen[ref.task] = (rank, str(value))
    return {r.task: chosen[r.task][1] if r.task in chosen else (default if r.cls.takes_data else None) for r in refs}


def _named_pieces(text: str, refs: list[TaskRef]) -> dict[str | None, str] | None:
    """`NAME=V,NAME=V[,DEFAULT]` as {NAME: V, None: DEFAULT}; None when `text` is one plain value (a path may hold , or =)."""
    known = {n for r in refs for n in r.names} | {r.benchmark for r in refs}
    pieces = [p.strip() for p in text.split(",") if p.strip()]

    def name_of(piece: str) -> str | None:
        key, eq, _ = piece.partition("=")
        return key.strip() if eq and (key.strip() in known or NAME.fullmatch(key.strip())) else None

    if not any(name_of(p) for p in pieces):
        return None
    out: dict[str | None, str] = {}
    for piece in pieces:
        key = name_of(piece)
        value = piece.partition("=")[2].strip() if key else piece
        if key in out:
            what = f"{key!r} is given twice" if key else f"two values name no task ({out[None]!r}, {piece!r})"
            raise InputError(what, field="--data")
        if not value:
            raise InputError(f"{piece!r}: no value after '='", field="--data")
        out[key] = value
    return out


def route_task_args(task_args: Mapping[str, Any], refs: list[TaskRef]) -> dict[str, dict[str, Any]]:
    """--tasks entry -> the --task_args its benchmark gets."""
    chosen: dict[str, dict[str, tuple[int, Any]]] = {r.task: {} for r in refs}
    for key, value in task_args.items():
        prefix, dot, arg = key.rpartition(".")
        if dot:
            if not arg:
                raise InputError(f"{key}={value}: no option name after {prefix!r}.", field="--task_args")
            targets = _addressed(prefix, refs, "--task_args", f"{key}={value}")
            for ref, _ in targets:
                takes = ref.cls.task_arg_names
                if takes is not None and arg not in takes:
                    raise InputError(f"{key}={value}: {ref.task} ({ref.benchmark}) does not take {arg!r} "
                                     f"(it takes: {', '.join(takes) or 'no options'})", field="--task_args")
        else:
            arg = key
            targets = [(r, 2) for r in refs if r.cls.task_arg_names is None or key in r.cls.task_arg_names]
            if not targets:
                takes = "; ".join(f"{r.task} takes {', '.join(r.cls.task_arg_names or ()) or 'no options'}" for r in refs)
                raise InputError(f"{key}={value}: no task of this run takes {key!r} ({takes})", field="--task_args")
        for ref, rank in targets:
            if arg not in chosen[ref.task] or rank < chosen[ref.task][arg][0]:
                chosen[ref.task][arg] = (rank, value)
    return {task: {arg: value for arg, (_, value) in args.items()} for task, args in chosen.items()}
