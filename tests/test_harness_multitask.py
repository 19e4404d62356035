"""One `ledgerlm eval` over tasks of different benchmarks: `--data` / `--task_args` per task or benchmark
(evaluate/harness/routing.py), the multi-task layout OUT/<task>/results.json + OUT/results.json, one-line errors.

    python -m pytest -q tests/test_harness_multitask.py
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgerlm.cli import main as ledgerlm
from ledgerlm.errors import InputError
from ledgerlm.evaluate.harness.base import Benchmark
from ledgerlm.evaluate.harness.registry import resolve_task
from ledgerlm.evaluate.harness.routing import TaskRef, route_data, route_task_args
from ledgerlm.evaluate.runfiles import read_run
from ledgerlm.inference import backends
from ledgerlm.inference.sampling import Completion

ROWS = Path(__file__).resolve().parent / "data" / "golden" / "finindices_rows"  # 32 FinIndices rows (make_rows(32, seed=7))


class Scripted:
    """A deterministic backend that knows the answers: FinIndices rows' worked `solution`, MacroLens' `target`."""
    model_id = "scripted"

    def __init__(self, **_options):
        pass

    def generate(self, batch, params, *, items=None, **_kwargs):
        assert items is not None and len(items) == len(batch)
        return [Completion(text=item["solution"] if "solution" in item else f"Answer: {item['target']}") for item in items]


@pytest.fixture()
def scripted(monkeypatch):
    monkeypatch.setitem(backends.BACKENDS, "scripted", backends.Backend(__name__, "Scripted", {}, needs_target=False))


def test_one_run_over_finindices_and_macrolens_routes_data_and_task_args(scripted, tmp_path):
    out = tmp_path / "both"
    rc = ledgerlm(["eval", "--model", "scripted", "--tasks", "finindices,macrolens_t4",
                   "--data", f"finindices={ROWS},macrolens=fixture",
                   "--task_args", "split=test,macrolens.budget=T4=6,b_min=50,b_max=50",  # bare split: FinIndices only; b_*: MacroLens only
                   "--bootstrap_iters", "200", "--no_progress", "--output_path", str(out)])
    assert rc == 0
    aggregate = json.loads((out / "results.json").read_text())
    assert aggregate["task_folders"] == {"finindices": "finindices", "macrolens_t4": "macrolens_t4"}
    fin, ml = aggregate["results"]["finindices"], aggregate["results"]["macrolens_t4"]
    assert fin["n"] == 32 and fin["accuracy"] == 1.0  # every worked solution scores
    assert ml["n"] == 6 and ml["mae"] == pytest.approx(0.0, abs=1e-9)  # T4 answered with its target: zero error
    tasks = aggregate["config"]["tasks"]
    assert tasks["finindices"]["data"] == str(ROWS) and tasks["finindices"]["split"] == "test" and "b_min" not in tasks["finindices"]
    assert tasks["macrolens_t4"]["data"] == "fixture" and "split" not in tasks["macrolens_t4"]
    assert tasks["finindices"]["task_args"] == {"split": "test"}  # per task: what it got; the aggregate keeps the flags as given
    assert tasks["macrolens_t4"]["task_args"] == {"budget": "T4=6", "b_min": 50, "b_max": 50}
    assert aggregate["config"]["data"] == f"finindices={ROWS},macrolens=fixture"
    for task, n in (("finindices", 32), ("macrolens_t4", 6)):
        results, samples = read_run(out / task)  # each task folder is a complete run
        assert results["results"][task]["n"] == n == len(samples) and results["results"][task] == aggregate["results"][task]


def refs(*tasks: str) -> list[TaskRef]:
    return [TaskRef(t, *resolve_task(t)) for t in tasks]


class NoData(Benchmark):
    name = "nodata"
    takes_data = False
    task_arg_names = ("depth",)


class Undeclared(Benchmark):
    name = "undeclared"


def test_task_name_beats_benchmark_name_beats_bare():
    run = refs("finindices", "finindices_nohint", "macrolens_t2", "macrolens_t4")
    data = route_data("finindices=a,finindices_nohint=b,macrolens_t4=c,d", run)
    assert data == {"finindices": "a", "finindices_nohint": "b", "macrolens_t2": "d", "macrolens_t4": "c"}
    assert route_data("runs/data", run) == dict.fromkeys(data, "runs/data")
    assert route_data("runs/x=1/data", run) == dict.fromkeys(data, "runs/x=1/data")  # a path with '=' is one value
    args = route_task_args({"ladder": "A", "macrolens_t4.ladder": "E", "finindices.split": "dev", "finindices_nohint.split": "val"}, run)
    assert args == {"finindices": {"split": "dev"}, "finindices_nohint": {"split": "val"},
                    "macrolens_t2": {"ladder": "A"}, "macrolens_t4": {"ladder": "E"}}


def test_benchmarks_without_data_or_declared_args():
    run = [*refs("finindices"), TaskRef("nodata", "nodata", NoData), TaskRef("undeclared", "undeclared", Undeclared)]
    assert route_data("d", run) == {"finindices": "d", "nodata": None, "undeclared": "d"}
    with pytest.raises(InputError, match="nodata .nodata. takes no data"):
        route_data({"nodata": "d"}, run)
    with pytest.raises(InputError, match="no task of this run takes data"):
        route_data("d", [TaskRef("nodata", "nodata", NoData)])
    args = route_task_args({"depth": 2, "split": "dev"}, run)  # an undeclared benchmark gets every bare key
    assert args == {"finindices": {"split": "dev"}, "nodata": {"depth": 2}, "undeclared": {"depth": 2, "split": "dev"}}


@pytest.mark.parametrize("flag, value, message", [
    ("--data", "finindices=rows,macrolens_t9=fixture",
     "field '--data': 'macrolens_t9=fixture': 'macrolens_t9' is no task or benchmark of this run "
     "(tasks: finindices, macrolens_t4; benchmarks: finindices, macrolens)"),
    ("--data", "finindices=a,finindices=b", "field '--data': 'finindices' is given twice"),
    ("--task_args", "epsbench.runs=1", "'epsbench.runs=1': 'epsbench' is no task or benchmark of this run"),
    ("--task_args", "colour=red", "colour=red: no task of this run takes 'colour' (finindices takes split, hint, field_map, "
                                  "lenient_precision; macrolens_t4 takes granularity, ladder"),
    ("--task_args", "macrolens.split=dev", "macrolens.split=dev: macrolens_t4 (macrolens) does not take 'split' (it takes: granularity"),
])
def test_misrouted_inputs_are_one_line_errors(flag, value, message, tmp_path, capsys):
    out = tmp_path / "bad"
    argv = ["eval", "--model", "oracle", "--tasks", "finindices,macrolens_t4", "--data", f"finindices={ROWS},macrolens=fixture",
            "--no_progress", "--output_path", str(out), flag, value]
    assert ledgerlm(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("ledgerlm eval: error: ") and message in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()  # nothing written before the inputs are routed
