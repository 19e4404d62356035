"""Rejection sampling with a scripted in-process teacher: policies, near-duplicates, worked solutions,
manifest, resume from the cache, and output independent of completion order."""
from __future__ import annotations

import json
import random
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # distill_fixtures, with or without tests/__init__.py
from distill_fixtures import answer_text, make_items, read_jsonl, write_dataset  # noqa: E402

from ledgerlm.errors import InputError  # noqa: E402
from ledgerlm.inference.sampling import Completion  # noqa: E402
from ledgerlm.synth.distill import teachers  # noqa: E402
from ledgerlm.inference.cache import CompletionCache  # noqa: E402
from ledgerlm.synth.distill.cli import main  # noqa: E402
from ledgerlm.synth.distill.pipeline import DistillConfig, assemble, load_items, normalized_hash, plan_jobs, run_jobs, sample_seed  # noqa: E402
from ledgerlm.synth.distill.teachers import BatchTeacher  # noqa: E402

SEED_TO_INDEX = {sample_seed(0, k): k for k in range(8)}


class ScriptedSampler:
    """Sample k of item n: `script(item, k)` -> Completion; optional random delay; counts calls."""

    model_id = "scripted"

    def __init__(self, script, delay_seed=None):
        self.script, self.calls = script, []
        self.rng = random.Random(delay_seed) if delay_seed is not None else None
        self.lock = threading.Lock()

    def generate(self, batch, params, *, items=None, **kwargs):
        with self.lock:
            self.calls += [(item["id"], SEED_TO_INDEX[params.seed]) for item in items]
            delay = self.rng.uniform(0, 0.01) if self.rng else 0
        time.sleep(delay)
        return [self.script(item, SEED_TO_INDEX[params.seed]) for item in items]


def varied(item, k):
    """Correct on even samples (with lengths growing with k), wrong on odd ones."""
    if k % 2:
        return Completion(text=answer_text(item, offset=2.0), completion_tokens=10)
    return Completion(text=f"<think>{'step ' * (5 - k)}{k}</think>{answer_text(item)}", completion_tokens=20 - k)


def run(tmp_path, sampler, items, *args, out="out", workers=1):
    data = write_dataset(tmp_path / "data", items)
    teachers_make = teachers.make_teacher
    teachers.make_teacher = lambda spec, **kw: BatchTeacher(sampler, workers=workers)
    try:
        code = main(["--data", str(data), "--teacher", "scripted:x", "--out", str(tmp_path / out), "--no-progress", *args])
    finally:
        teachers.make_teacher = teachers_make
    assert code == 0
    return (read_jsonl(tmp_path / out / "train.jsonl"), read_jsonl(tmp_path / out / "rejects.jsonl"),
            json.loads((tmp_path / out / "manifest.json").read_text()))


@pytest.fixture(autouse=True)
def _patch_cli_teacher(monkeypatch):
    """cli.main imported make_teacher by name: route it through the module attribute the tests swap."""
    import ledgerlm.synth.distill.cli as cli

    monkeypatch.setattr(cli, "make_teacher", lambda spec, **kw: teachers.make_teacher(spec, **kw))


@pytest.mark.parametrize("policy, kept", [("first", [0]), ("all", [0, 2, 4]), ("shortest", [4])])
def test_policy_picks_which_verified_samples_become_rows(tmp_path, policy, kept):
    items = make_items(4)
    rows, rejects, manifest = run(tmp_path, ScriptedSampler(varied), items, "--samples-per-item", "5", "--policy", policy)
    for item in items:
        assert [r["sample_index"] for r in rows if r["item_id"] == item["id"]] == kept
        reasons = {r["sample_index"]: r["reason"] for r in rejects if r["item_id"] == item["id"]}
        assert {k for k, reason in reasons.items() if reason == "wrong_value"} == {1, 3}
        assert {k for k, reason in reasons.items() if reason == "not_selected"} == {0, 2, 4} - set(kept)
    assert manifest["counts"]["acceptance_rate"] == 0.6 and manifest["counts"]["rows"] == len(kept) * 4


def test_near_duplicates_of_an_item_are_dropped_but_distinct_ones_kept(tmp_path):
    def script(item, k):
        reasoning = ["Gross margin = 169,148 / 383,285.", "gross  MARGIN = 169,148 / 383,285 !", "Another route."][k]
        return Completion(text=f"<think>{reasoning}</think>{answer_text(item)}")

    items = make_items(2)
    rows, rejects, _ = run(tmp_path, ScriptedSampler(script), items, "--samples-per-item", "3", "--policy", "all")
    assert [(r["item_id"], r["sample_index"]) for r in rows] == [("d-000", 0), ("d-000", 2), ("d-001", 0), ("d-001", 2)]
    assert [(r["item_id"], r["sample_index"], r["reason"]) for r in rejects] == [("d-000", 1, "near_duplicate"), ("d-001", 1, "near_duplicate")]
    assert normalized_hash("44.13", "A, b") == normalized_hash("44.13", "a b") != normalized_hash("44.14", "a b")


def test_mix_solutions_adds_verified_worked_solutions_of_unsolved_items(tmp_path):
    items = make_items(8)
    items[5]["solution"] = "Worked solution with a slip.\n" + answer_text(items[5], offset=3.0)
    solved = {"d-000", "d-002", "d-004"}

    def script(item, k):
        return Completion(text=answer_text(item, offset=0.0 if item["id"] in solved else 1.0))

    rows, rejects, manifest = run(tmp_path, ScriptedSampler(script), items, "--samples-per-item", "1", "--mix-solutions", "unsolved")
    teacher_ids = {r["item_id"] for r in rows if r["source"] == "teacher"}
    solution_ids = {r["item_id"] for r in rows if r["source"] == "solution"}
    assert teacher_ids == solved
    assert solution_ids == {i["id"] for i in items} - solved - {"d-005"}  # d-005's solution fails the scorer
    assert [r["item_id"] for r in rejects if r["reason"] == "solution_unverified"] == ["d-005"]
    row = next(r for r in rows if r["source"] == "solution")
    solution = items[int(row["item_id"][2:])]["solution"]  # "steps\nFinal answer: ..." -> reasoning + answer
    assistant = row["messages"][-1]
    assert f"{assistant['reasoning_content']}\n{assistant['content']}" == solution
    assert assistant["content"].startswith("Final answer") or assistant["content"].startswith(("<table", "```json", "["))
    assert manifest["counts"]["rows_solution"] == len(solution_ids)

    rows_f, _, _ = run(tmp_path, ScriptedSampler(script), items, "--samples-per-item", "1", "--mix-solutions", "0.5", out="f")
    mixed = [r["item_id"] for r in rows_f if r["source"] == "solution"]
    assert sorted(mixed) == ["d-001", "d-003", "d-006", "d-007"]  # the unsolved items first; d-005 skipped
    rows_all, _, _ = run(tmp_path, ScriptedSampler(script), items, "--samples-per-item", "1", "--mix-solutions", "1.0", out="all")
    assert len([r for r in rows_all if r["source"] == "solution"]) == 7  # every item but the one whose solution is wrong


def test_output_does_not_depend_on_completion_order(tmp_path):
    items = make_items(12)
    outputs = []
    for n, seed in enumerate((1, 2)):
        sampler = ScriptedSampler(varied, delay_seed=seed)
        run(tmp_path, sampler, items, "--samples-per-item", "3", "--policy", "all", "--concurrency", "6",
            "--batch-size", "1", out=f"o{n}", workers=6)
        outputs.append([(tmp_path / f"o{n}" / name).read_bytes() for name in ("train.jsonl", "rejects.jsonl", "manifest.json")])
        order = sampler.calls
        assert sorted(order) == sorted((i["id"], k) for i in items for k in range(3))
    assert outputs[0][0] == outputs[1][0] and outputs[0][1] == outputs[1][1]
    assert outputs[0][2] == outputs[1][2].replace(b"/o1", b"/o0") or outputs[0][2] == outputs[1][2]


def test_rerun_takes_finished_samples_from_the_cache_and_asks_again_for_truncated_ones(tmp_path):
    items = make_items(6)

    def script(item, k):
        if item["id"] == "d-003":
            return Completion(text="<think>and then", finish_reason="length", completion_tokens=512)
        return Completion(text=answer_text(item), completion_tokens=5)

    first = ScriptedSampler(script)
    rows, rejects, _ = run(tmp_path, first, items, "--samples-per-item", "2")
    assert len(first.calls) == 12 and [r["reason"] for r in rejects if r["item_id"] == "d-003"] == ["truncated"] * 2
    second = ScriptedSampler(script)
    rows2, rejects2, _ = run(tmp_path, second, items, "--samples-per-item", "2")
    assert sorted(second.calls) == [("d-003", 0), ("d-003", 1)]
    assert (rows2, rejects2) == (rows, rejects)
    third = ScriptedSampler(script)
    run(tmp_path, third, items, "--samples-per-item", "2", "--temperature", "0.9")  # new params: a new cache key
    assert len(third.calls) == 12


def test_manifest_counts_acceptance_per_paradigm_axis_hint_and_cost(tmp_path):
    items = make_items(16)
    rows, rejects, manifest = run(tmp_path, ScriptedSampler(varied), items, "--samples-per-item", "2",
                                  "--price-in", "2.0", "--price-out", "8.0")
    for name, group in manifest["acceptance"].items():
        paradigm, axis, hint = name.split("|")
        members = [i for i in items if (i["paradigm"], i["axis"], "hint" if i["hint"] else "no_hint") == (paradigm, axis, hint)]
        assert group["items"] == len(members) and group["samples"] == 2 * len(members)
        assert group["verified"] == len(members) and group["acceptance_rate"] == 0.5
    assert sum(g["items"] for g in manifest["acceptance"].values()) == 16
    completion = sum(r["tokens"]["completion"] for r in rows + rejects)
    assert manifest["tokens"]["completion"] == completion == 16 * (20 + 10)
    assert manifest["cost_usd"]["total"] == pytest.approx(completion / 1e6 * 8.0)


def test_hint_selection_and_bad_items_fail_before_any_request(tmp_path):
    items = make_items(8)
    data = write_dataset(tmp_path / "data", items)
    assert {i["hint"] for i in load_items(data, hint="hint")} == {True}
    assert len(load_items(data, hint="no_hint")) + len(load_items(data, hint="hint")) == len(load_items(data)) == 8
    broken = [dict(items[0])]
    del broken[0]["decimals"]
    write_dataset(tmp_path / "bad", broken)
    with pytest.raises(InputError, match=r"train.jsonl: line 1: .*decimals"):
        load_items(tmp_path / "bad")
    del broken[0]["paradigm"]
    write_dataset(tmp_path / "bad", broken)
    with pytest.raises(InputError, match="paradigm") as err:
        load_items(tmp_path / "bad")
    assert "train.jsonl" in str(err.value)


def test_assemble_every_sample_in_exactly_one_place(tmp_path):
    items = make_items(10)
    config = DistillConfig(teacher="scripted:x", samples_per_item=4, policy="first", batch_size=3)
    jobs = plan_jobs(items, config)
    teacher = BatchTeacher(ScriptedSampler(varied))
    outcomes = run_jobs(teacher, jobs, CompletionCache(tmp_path / "c.jsonl"), config, {i["id"]: i for i in items})
    rows, rejects = assemble(items, jobs, outcomes, config)
    ids = [r["id"] for r in rows + rejects]
    assert len(ids) == len(set(ids)) == 40
    assert [(r["item_id"], r["sample_index"]) for r in rows] == sorted((r["item_id"], r["sample_index"]) for r in rows)


@pytest.mark.parametrize("bad", [["--mix-solutions", "2"], ["--mix-solutions", "some"], ["--samples-per-item", "0"]])
def test_bad_settings_fail_before_any_request(tmp_path, bad):
    sampler = ScriptedSampler(varied)
    with pytest.raises(InputError):
        run(tmp_path, sampler, make_items(2), *bad)
    assert sampler.calls == []


def test_openai_teacher_without_api_key_fails_before_any_output(tmp_path, monkeypatch):
    """New-user audit: --teacher openai:gpt-4o-mini with OPENAI_API_KEY unset retried every request, then wrote a run."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = write_dataset(tmp_path / "data", make_items(2))
    with pytest.raises(InputError, match="the environment variable OPENAI_API_KEY is not set"):
        main(["--data", str(data), "--teacher", "openai:gpt-4o-mini", "--out", str(tmp_path / "out"), "--no-progress"])
    assert not (tmp_path / "out").exists()
