"""A new benchmark is one folder (tests/harness_example/) + one registry line, run end to end by the one runner.

    python -m pytest -q tests/test_harness_example.py
"""
from __future__ import annotations

import json

import pytest

from ledgerlm.cli import main as ledgerlm
from ledgerlm.evaluate.harness import REGISTRY, register
from ledgerlm.evaluate.runfiles import read_run


@pytest.fixture()
def arith():
    """The registry line, added the way a plugin would (`register`); removed afterwards."""
    register("arith", "harness_example.benchmark:Arith")
    yield
    REGISTRY.pop("arith", None)


def test_example_benchmark_runs_end_to_end_through_the_cli(arith, tmp_path, capsys):
    out = tmp_path / "run"
    assert ledgerlm(["eval", "--model", "oracle", "--tasks", "arith", "--output_path", str(out), "--log_samples", "--no_progress"]) == 0
    assert "arith: exact match 100.00% on 6" in capsys.readouterr().out
    results, samples = read_run(out)
    assert results["results"]["arith"] == {"alias": "arith", "n": 6, "exact_match": 1.0, "exact_match_n": 6,
                                           "exact_match_stderr": None, "exact_match_ci": None}
    assert results["versions"] == {"arith": 1} and results["higher_is_better"] == {"arith": {"exact_match": True}}
    assert results["config"]["model"] == "oracle" and results["model"] == "oracle" and results["config"]["seed"] == 0
    assert [s["id"] for s in samples] == [f"add-{k}" for k in range(1, 7)]
    assert [s["extracted"] for s in samples] == [5, 42, 0, 1234, 42, -7]  # the items' a + b
    assert samples[0]["prompt"] == [{"role": "user", "content": "What is 2 + 3? Answer with the number."}]
    cached = [json.loads(line) for line in (out / "cache.jsonl").read_text().splitlines()]
    assert len(cached) == 6  # every clean completion cached by the runner, none by the benchmark


def test_tasks_list_shows_a_registered_benchmark(arith, capsys):
    assert ledgerlm(["eval", "--tasks", "list", "--json"]) == 0
    rows = {r["task"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["arith"]["benchmark"] == "arith" and rows["arith"]["description"] == "add two integers (example benchmark)"
    assert "finindices" in rows


def test_unregistered_task_is_one_error_line(tmp_path, capsys):
    assert ledgerlm(["eval", "--model", "oracle", "--tasks", "arith", "--output_path", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "ledgerlm eval: error: field '--tasks': unknown task 'arith'; `ledgerlm eval --tasks list` lists them"
    assert not (tmp_path / "x").exists()
