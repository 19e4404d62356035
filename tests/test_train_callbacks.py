"""The pieces of the training callbacks that need no model: dev subset, EM cells, tokens/s arithmetic."""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from ledgerlm.train import callbacks
from ledgerlm.train.callbacks import TokensPerSecondCallback, dev_subset, em_by_cell, finindices_exact_match

sys.path.insert(0, str(Path(__file__).resolve().parent))  # with or without tests/__init__.py
from train_rows import dev_samples  # noqa: E402


def test_dev_subset_is_fixed_and_covers_every_paradigm_hint_cell():
    samples = dev_samples() * 5
    first, again = dev_subset(samples, 4, seed=3), dev_subset(samples, 4, seed=3)
    assert [s["id"] for s in first] == [s["id"] for s in again]
    assert {(s["paradigm"], s["hint"]) for s in first} == {("single", False), ("single", True), ("table", False), ("table", True)}
    assert len(dev_subset(samples, 1000)) == len(samples)


def test_em_by_cell_averages_per_paradigm_and_hint():
    records = [("single", True, 1), ("single", True, 0), ("single", False, 0), ("table", False, 1)]
    assert em_by_cell(records) == {"finindices/em": 0.5, "finindices/em/single/hint": 0.5,
                                   "finindices/em/single/nohint": 0.0, "finindices/em/table/nohint": 1.0}


def test_exact_match_uses_the_shared_scorer_on_real_answers():
    growth, deficient = dev_samples()[0], dev_samples()[5]
    assert finindices_exact_match(growth, "<think>(383,285-394,328)/394,328</think>The answer is -2.80.") == 1
    assert finindices_exact_match(growth, "The answer is -2.81.") == 0
    assert finindices_exact_match(growth, "<think>still thinking about 383,285") == 0
    assert finindices_exact_match(deficient, "Insufficient information") == 1


def test_tokens_per_second_counts_only_step_time(monkeypatch):
    clock = iter([0.0, 2.0, 100.0, 104.0])  # step 1: 2 s; an eval of 96 s in between; step 2: 4 s
    monkeypatch.setattr(callbacks.time, "perf_counter", lambda: next(clock))
    cb, state = TokensPerSecondCallback(), SimpleNamespace(num_input_tokens_seen=0, log_history=[], global_step=0)
    cb.on_train_begin(None, state, None)
    for step, tokens in ((1, 600), (2, 1200)):
        cb.on_step_begin(None, state, None)
        state.num_input_tokens_seen, state.global_step = tokens, step
        cb.on_step_end(None, state, None)
    state.log_history.append({"loss": 1.0, "step": 2})
    logs = {"loss": 1.0}
    cb.on_log(None, state, None, logs=logs)
    assert logs["tokens_per_second"] == 200.0 == state.log_history[-1]["tokens_per_second"]  # 1200 tokens / 6 s
