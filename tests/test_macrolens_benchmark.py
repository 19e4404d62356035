"""MacroLens as a harness Benchmark: one task per paper task, ladder/budget task args, paper seed 42 for what defines it.

    python -m pytest -q tests/test_macrolens_benchmark.py
"""
from __future__ import annotations

import pytest

from ledgerlm.errors import InputError
from ledgerlm.evaluate.harness.registry import all_tasks
from ledgerlm.evaluate.macrolens.benchmark import MacroLens, parse_ladder


def test_tasks_and_ladder_forms():
    assert {t for t, b in all_tasks().items() if b == "macrolens"} == {f"macrolens_t{k}" for k in range(1, 8)}
    assert parse_ladder("A..E") == list("ABCDE") and parse_ladder("A,C,E") == parse_ladder("ECA") == parse_ladder("A|C|E") == list("ACE")
    with pytest.raises(InputError, match="ladder"):
        parse_ladder("A..F")


def test_budget_forms_and_generation_defaults():
    t1 = MacroLens("macrolens_t1", budget=12, horizon=5, ladder="AE")
    assert t1.cfg.budgets["T1"] == 12 and t1.levels == ["A", "E"] and t1.paper_seed == 42
    assert t1.generation_defaults()["max_tokens"] == 12 * 5 + 64  # T1: 12 tokens per horizon step + 64
    t4 = MacroLens("macrolens_t4", budget="T1=3|T4=7")  # per-task budgets (commas would split --task_args)
    assert t4.cfg.budgets["T4"] == 7 and t4.levels == ["E"] and t4.generation_defaults()["max_tokens"] == 512
    assert MacroLens("macrolens_t3").levels == ["-"]  # no context ladder for T3


@pytest.mark.parametrize("task, args, message", [("macrolens", {}, "macrolens_t1"), ("macrolens_t2", {"budget": "lots"}, "budget"),
                                                 ("macrolens_t2", {"colour": 1}, "does not take"),
                                                 ("macrolens_t3", {"t3_instances": "all"}, "latest or test")])
def test_bad_task_or_args_are_one_input_error(task, args, message):
    with pytest.raises(InputError, match=message):
        MacroLens(task, **args)
