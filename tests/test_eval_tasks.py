"""Task YAMLs: every variant loads, `include:` resolves, the declared filter chain and version match the scorer."""
from __future__ import annotations

import pytest

from ledgerlm.errors import InputError
from ledgerlm.evaluate.finindices.bench import select_rows
from ledgerlm.evaluate.finindices.scoring import FILTER_CHAIN, SCORER_VERSION
from ledgerlm.evaluate.tasks import TASKS_DIR, load_task


@pytest.mark.parametrize("path", sorted(TASKS_DIR.glob("finindices/*.yaml")), ids=lambda p: p.stem)
def test_every_finindices_task_loads_and_matches_the_scorer(path):
    task = load_task(path.stem)
    assert task["task"] == path.stem and "include" not in task
    assert task["version"] == SCORER_VERSION  # bump both together when scoring changes
    assert tuple(task["answer_extraction"]) == FILTER_CHAIN
    assert task["generation"]["max_tokens"] > 0 and task["group_by"] == ["paradigm", "axis", "hint"]


def test_variants_select_their_rows():
    rows = [{"paradigm": p, "hint": h} for p in ("single", "table") for h in (True, False)]
    assert select_rows(rows, load_task("finindices_nohint_table"), None, None) == [{"paradigm": "table", "hint": False}]
    assert len(select_rows(rows, load_task("finindices_hint"), None, None)) == 2
    assert select_rows(rows, load_task("finindices"), "nohint", 1) == [{"paradigm": "single", "hint": False}]


def test_unknown_keys_cycles_and_names_fail_loudly(tmp_path):
    (tmp_path / "a.yaml").write_text("include: b.yaml\ntask: a\n")
    (tmp_path / "b.yaml").write_text("include: a.yaml\ntask: b\n")
    with pytest.raises(InputError, match="cycle"):
        load_task(str(tmp_path / "a.yaml"))
    (tmp_path / "c.yaml").write_text("task: c\ntemprature: 0.5\n")
    with pytest.raises(InputError, match="temprature"):
        load_task(str(tmp_path / "c.yaml"))
    with pytest.raises(InputError, match="finindices_hint_single"):
        load_task("no_such_task")


def test_cli_hint_flags_override_the_task():
    rows = [{"paradigm": p, "hint": h} for p in ("single", "table") for h in (True, False)]
    task = load_task("finindices_hint_single")
    assert select_rows(rows, task, "both", None) == [{"paradigm": "single", "hint": True}, {"paradigm": "single", "hint": False}]
    assert select_rows(rows, task, "nohint", None) == [{"paradigm": "single", "hint": False}]
