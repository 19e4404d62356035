"""Company-affine workers (`synth/finindices/affine.py`): same bytes as one process, each company's slots
on one worker, worker errors and deaths surface in the parent and the run resumes.

    python -m pytest tests/test_synth_affine.py -q
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import random
import time
from pathlib import Path

import pytest

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import affine, dataset
from ledgerlm.synth.finindices.pipeline import Stats
from ledgerlm.synth.finindices.split import assign_splits

COMPANIES = ["AAA", "BBB", "CCC", "DDD", "EEE", "FFF", "GGG"]
SPLITS = assign_splits(COMPANIES, seed=3)
FP = {"seed": 3, "num": 300, "shard_size": 7, "hint_variants": ["hint", "no_hint"], "tokenizer": "fake", "max_tokens": 10}


class FakeBuilder:
    """A slot function with `affinity`, like contexts.Builder: slot i's rows depend on i only. `log` (a folder)
    records which process drafted which company; `fail_at` raises or kills the worker at that slot (`kill`: the
    shards folder; the worker first waits, up to 30 s, for a finished shard there, so the rerun has one to resume
    from however the machine's load orders the tasks)."""

    def __init__(self, affinity=None, log: Path | None = None, fail_at: int | None = None, kill: Path | None = None):
        self.log, self.fail_at, self.kill = log, fail_at, kill
        if affinity is not None:
            self.affinity = affinity

    def company(self, slot: int) -> str:
        return random.Random(f"3:{slot}").choice(COMPANIES)

    def __call__(self, slot: int, stats: Stats) -> list[dict]:
        if slot == self.fail_at and multiprocessing.parent_process() is not None:  # only inside a worker
            if self.kill:
                deadline = time.monotonic() + 30
                while not any(self.kill.glob("*.done")) and time.monotonic() < deadline:
                    time.sleep(0.01)
                os._exit(3)
            raise InputError("bad facts for this slot", path=f"slot-{slot}.json")
        company = self.company(slot)
        if self.log is not None:
            with open(self.log / f"{os.getpid()}.log", "a") as f:
                f.write(company + "\n")
        if slot % 11 == 5:
            stats.drop("no_derivable_target", 2)
            return []
        base = {"paradigm": "single", "axis": "domain", "company": company, "split": SPLITS[company],
                "target_periods": [f"FY{2018 + slot % 5}"], "indices": ["x"], "context_periods": ["FY2020"], "traps": [],
                "context_formats": ["json"], "answer_format": "number", "unit": "millions", "decimals": 2,
                "messages": [{"role": "user", "content": f"q{slot} {company}"}], "answer": float(slot % 13),
                "solution": "s", "n_tokens": 3, "tokenizer": "fake", "provenance": [], "language": "en"}
        stats.kept += 2
        return [dict(base, id=f"s{slot}-{v}", hint=v == "h") for v in ("h", "n")]


def build(out: Path, fn, num_proc: int) -> dict:
    dataset.generate(out, FP, fn, num_slots=150, shard_size=7, num_proc=num_proc, progress=False)
    dataset.merge(out, [out])
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.is_file()}


def test_affine_workers_write_the_bytes_of_one_process(tmp_path):
    plain = FakeBuilder()
    one = build(tmp_path / "one", plain, 1)
    fn = FakeBuilder(affinity=plain.company)
    assert build(tmp_path / "two", fn, 2) == one
    assert build(tmp_path / "three", fn, 3) == one
    # a wrong hint (not the company the slot draws) costs time, never bytes
    assert build(tmp_path / "wrong", FakeBuilder(affinity=lambda s: str(s % 4)), 2) == one


def test_each_company_is_drafted_by_one_worker(tmp_path, monkeypatch):
    monkeypatch.setattr(affine, "FIRST_EPOCH_SHARDS", 20)  # every shard in the first epoch: owners never re-dealt
    log = tmp_path / "log"
    log.mkdir()
    plain = FakeBuilder()
    build(tmp_path / "out", FakeBuilder(affinity=plain.company, log=log), 2)
    workers_of = {}
    for path in log.glob("*.log"):
        for company in set(path.read_text().split()):
            workers_of.setdefault(company, set()).add(path.stem)
    assert len(list(log.glob("*.log"))) == 2
    assert all(len(pids) == 1 for pids in workers_of.values()), workers_of
    assert len(workers_of) == len(COMPANIES)


def test_workers_are_kept_one_per_cpu_when_as_many_as_the_cpus(tmp_path, monkeypatch):
    pinned = []
    monkeypatch.setattr(affine.os, "sched_getaffinity", lambda pid: {5, 3}, raising=False)
    monkeypatch.setattr(affine.os, "sched_setaffinity", lambda pid, cpus: pinned.append((pid, cpus)), raising=False)
    assert affine.worker_cpus(2) == [3, 5]
    assert affine.worker_cpus(1) is None and affine.worker_cpus(3) is None  # fewer or more workers than CPUs: never pinned
    log = tmp_path / "log"
    log.mkdir()
    plain = FakeBuilder()
    assert build(tmp_path / "two", FakeBuilder(affinity=plain.company, log=log), 2) == build(tmp_path / "one", plain, 1)
    assert [cpus for _, cpus in pinned] == [{3}, {5}]  # worker w on the w-th CPU, each pinned by its pid
    assert {str(pid) for pid, _ in pinned} == {path.stem for path in log.glob("*.log")}
    pinned.clear()
    build(tmp_path / "three", FakeBuilder(affinity=plain.company), 3)
    assert pinned == []


def test_epochs_start_short_then_grow():
    assert [len(e) for e in affine.epochs(list(range(45)), 2)] == [4, 4, 16, 16, 5]
    assert sum(affine.epochs(list(range(45)), 3), []) == list(range(45))


def test_a_worker_with_nothing_queued_gets_the_next_epoch_early(tmp_path):
    """Two epochs are in flight; a third goes out while a worker has no task queued (it would sit idle until the
    oldest epoch is done), and none beyond that."""

    class Inbox(list):
        put = list.append

    def handed_out(affinity) -> tuple[int, list[int]]:
        state = affine._Run(tmp_path, FakeBuilder(affinity=affinity), list(range(40)), 80, 2, 2, None)
        state.inboxes = [Inbox(), Inbox()]
        state.send_more()
        return state.sent, [sum(m[0] == "task" for m in inbox) for inbox in state.inboxes]

    assert handed_out(lambda s: "AAA" if s % 2 else "BBB") == (2, [8, 8])  # both busy: epochs 0 and 1 (4 shards each)
    sent, tasks = handed_out(lambda s: "AAA" if s < 100 else "BBB")  # BBB's worker has nothing in the first epochs
    assert sent == 3 and tasks == [24, 0]


def test_owners_are_dealt_by_cost_largest_first():
    assert affine.even_cut(["E", "A", "C", "B", "D"], 2) == {"A": 0, "B": 0, "C": 0, "D": 1, "E": 1}
    costs = {"A": 10.0, "B": 9.0, "C": 1.0, "D": 1.0, "E": 1.0, "F": 1.0}
    owners = affine.deal(costs, 2, {"G": 1})
    assert owners["A"] != owners["B"] and owners["G"] == 1
    load = [sum(c for k, c in costs.items() if owners[k] == w) for w in (0, 1)]
    assert sorted(load) == [11.0, 12.0]


def test_a_re_deal_keeps_balanced_owners_and_moves_few_companies_otherwise():
    """A company that changes owner is loaded and memoised again by its new worker: a re-deal moves as few as it takes."""
    costs = {"A": 5.0, "B": 4.0, "C": 1.0, "D": 1.0, "E": 1.0}
    balanced = {"A": 0, "B": 1, "C": 1, "D": 0, "E": 1}
    assert affine.deal(costs, 2, balanced) == balanced
    skewed = {"A": 0, "B": 0, "C": 0, "D": 1, "E": 1}  # 10 vs 2
    owners = affine.deal(costs, 2, skewed)
    assert affine.imbalance(costs, owners, 2) <= affine.REDEAL_IMBALANCE
    assert [c for c in costs if owners[c] != skewed[c]] == ["B"]  # largest-first from scratch would move B, C and D
    costs = {"A": 9.0, "B": 1.0, "C": 1.0, "D": 1.0}
    three = affine.deal(costs, 3, dict.fromkeys(costs, 0))
    assert max(sum(c for k, c in costs.items() if three[k] == w) for w in range(3)) == 9.0  # A alone: the best there is
    assert sum(w != 0 for w in three.values()) == 1  # ... with one move


def test_real_builder_moves_slots_to_owners_and_writes_the_bytes_of_one_process(tmp_path, monkeypatch):
    """The synth Builder: attempts on another worker's company move there (Moved); every company's index values
    are computed by its owner only, and the dataset is the bytes of one process."""
    from ledgerlm.synth.finindices import cli, contexts

    log = tmp_path / "log"
    log.mkdir()
    value, draft = contexts.Builder.value, contexts.Builder._draft

    def logged(self, company, index_id, period):
        if multiprocessing.parent_process() is not None:
            with open(log / f"{os.getpid()}.log", "a") as f:
                f.write(company + "\n")
        return value(self, company, index_id, period)

    def resumed(self, slot, stats, resume=None, forced=None):
        if resume:  # a slot moved at a later attempt: the owner replays the draws of the attempts before it
            with open(log / "resumed.txt", "a") as f:
                f.write(f"{slot} {resume}\n")
        return draft(self, slot, stats, resume, forced)

    args = ["--num", "240", "--no-progress"]
    assert cli.main(args + ["--out", str(tmp_path / "one")]) == 0
    monkeypatch.setattr(contexts.Builder, "value", logged)
    monkeypatch.setattr(contexts.Builder, "_draft", resumed)
    assert cli.main(args + ["--out", str(tmp_path / "three"), "--num-proc", "3"]) == 0
    files = ("train.jsonl", "dev.jsonl", "test.jsonl", "manifest.json")
    digest = lambda d: [hashlib.sha256((d / f).read_bytes()).hexdigest() for f in files]  # noqa: E731
    assert digest(tmp_path / "one") == digest(tmp_path / "three")
    assert (log / "resumed.txt").is_file()  # the bytes above cover replayed attempts
    workers_of = {}
    for path in log.glob("*.log"):
        for company in set(path.read_text().split()):
            workers_of.setdefault(company, set()).add(path.stem)
    assert len(list(log.glob("*.log"))) == 3 and len(workers_of) >= 10
    assert all(len(pids) == 1 for pids in workers_of.values()), workers_of  # 120 slots: one epoch, no re-deal


def test_a_worker_error_stops_the_run_with_its_message_and_no_process_left(tmp_path):
    plain = FakeBuilder()
    with pytest.raises(InputError, match="bad facts for this slot") as err:
        build(tmp_path / "bad", FakeBuilder(affinity=plain.company, fail_at=40), 2)
    assert "slot-40.json" in str(err.value)
    assert multiprocessing.active_children() == []


def test_a_killed_worker_is_reported_and_the_rerun_resumes_to_the_same_bytes(tmp_path):
    plain = FakeBuilder()
    one = build(tmp_path / "one", plain, 1)
    out = tmp_path / "killed"
    with pytest.raises(affine.WorkerFailed, match="exit code 3"):
        build(out, FakeBuilder(affinity=plain.company, fail_at=100, kill=dataset.work_dir(out) / "shards"), 2)
    assert multiprocessing.active_children() == []
    done = len(list(dataset.work_dir(out).joinpath("shards").glob("*.done")))
    assert 0 < done < 22  # shards before the kill were kept, the rest are redone
    assert build(out, FakeBuilder(affinity=plain.company), 2) == one
    shard_dir = dataset.work_dir(out) / "shards"
    assert {p.name for p in shard_dir.glob("shard-wstream-*.jsonl")} == listed_streams(shard_dir)


def started_run(tmp_path: Path) -> tuple:
    """(slot function, one process's output digests, a dataset folder whose run was started and left, its shards folder)."""
    plain = FakeBuilder()
    one = build(tmp_path / "one", plain, 1)
    out = tmp_path / "resumed"
    shard_dir = dataset.work_dir(out) / "shards"
    shard_dir.mkdir(parents=True)
    dataset.shards.check_run_file(dataset.work_dir(out), FP)
    return plain, one, out, shard_dir


def listed_streams(shard_dir: Path) -> set:
    """The worker streams the finished shards' done markers list (none: the test would not be about streams)."""
    listed = {part["file"] for done in shard_dir.glob("*.done") for part in json.loads(done.read_text()).get("parts", ())}
    assert listed
    return listed


def test_a_rerun_removes_the_worker_streams_no_finished_shard_lists_and_keeps_other_jobs(tmp_path):
    """Each worker appends its rows to one stream pair per run (not a file pair per task); what a killed run's
    workers appended is never listed. A rerun of the job removes its unlisted streams, not another job's."""
    plain, one, out, shard_dir = started_run(tmp_path)
    left = [shard_dir / f"shard-wstream-0of1-dead0001-1.{suffix}" for suffix in ("jsonl", "meta")]
    other = [shard_dir / f"shard-wstream-1of2-live0002-0.{suffix}" for suffix in ("jsonl", "meta")]
    for path in left + other:
        path.write_text("appended by a worker\n")
    assert build(out, FakeBuilder(affinity=plain.company), 2) == one
    assert not any(path.exists() for path in left) and all(path.exists() for path in other)
    assert {p.name for p in shard_dir.glob("shard-wstream-0of1-*.jsonl")} == listed_streams(shard_dir)
    assert len(list(shard_dir.glob("shard-wstream-0of1-*"))) == 4  # one rows + one meta stream per worker
    stream = next(shard_dir.glob("shard-wstream-0of1-*.jsonl"))
    stream.write_bytes(stream.read_bytes()[:-10])  # cut inside the last listed part
    with pytest.raises(InputError, match="lists .* bytes at byte .* of this worker stream") as err:
        dataset.merge(tmp_path / "cut", [out])
    assert stream.name in str(err.value)


def test_shards_in_an_older_version_s_layout_merge_to_the_same_bytes(tmp_path):
    """A work dir an older version wrote (stats in `.stats.json`, an empty done marker, a worker-written shard's parts
    as files listed in `.parts.json`) still merges to the same bytes."""
    plain = FakeBuilder()
    one = build(tmp_path / "one", plain, 1)
    out = tmp_path / "old"
    dataset.generate(out, FP, FakeBuilder(affinity=plain.company), num_slots=150, shard_size=7, num_proc=2, progress=False)
    shard_dir = dataset.work_dir(out) / "shards"
    for done in sorted(shard_dir.glob("*.done")):
        record = json.loads(done.read_text())
        done.with_suffix(".stats.json").write_text(json.dumps(record["stats"]))
        parts = []
        for i, part in enumerate(record.get("parts", ())):
            stream = shard_dir / part["file"]
            name = done.with_suffix(f".part-{i}.jsonl").name
            (shard_dir / name).write_bytes(stream.read_bytes()[part["at"]:part["at"] + part["bytes"]])
            meta = stream.with_suffix(".meta").read_bytes()[part["meta_at"]:part["meta_at"] + part["meta_bytes"]]
            (shard_dir / name).with_suffix(".meta").write_bytes(meta)
            parts.append({"file": name, "slots": part["slots"]})
        if parts:
            done.with_suffix(".parts.json").write_text(json.dumps(parts))
        done.write_text("")
    for stream in shard_dir.glob("shard-wstream-*"):
        stream.unlink()
    assert len(list(shard_dir.glob("*.parts.json"))) > 10
    dataset.merge(out, [out])
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.is_file()} == one


def test_build_merges_beside_the_workers_and_a_failure_leaves_no_split_file(tmp_path):
    plain = FakeBuilder()
    one = build(tmp_path / "one", plain, 1)
    out = tmp_path / "two"
    manifest = dataset.build(out, FP, FakeBuilder(affinity=plain.company), num_slots=150, shard_size=7, num_proc=2,
                             progress=False)
    assert manifest["counts"]["total"] == json.loads((tmp_path / "one" / "manifest.json").read_text())["counts"]["total"]
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.is_file()} == one
    bad = tmp_path / "bad"
    with pytest.raises(InputError, match="bad facts"):
        dataset.build(bad, FP, FakeBuilder(affinity=plain.company, fail_at=120), num_slots=150, shard_size=7, num_proc=2,
                      progress=False)
    assert not bad.exists() or not [p.name for p in bad.iterdir()]  # no split file, no .tmp, no manifest


def test_imbalance_of_owners():
    costs = {"A": 3.0, "B": 1.0}
    assert affine.imbalance(costs, {"A": 0, "B": 1}, 2) == 0.5
    assert affine.imbalance(costs, {"A": 0, "B": 0}, 2) == 1.0
    assert affine.imbalance({"A": 1.0, "B": 1.0}, {"A": 0, "B": 1}, 2) == 0.0


def test_job_array_members_with_affine_workers_merge_to_one_run(tmp_path):
    plain = FakeBuilder()
    one = build(tmp_path / "one", plain, 1)
    fn = FakeBuilder(affinity=plain.company)
    for i in range(2):  # two --shard i/2 jobs, each with 2 workers, each in its own folder
        dataset.generate(tmp_path / f"job{i}", FP, fn, num_slots=150, shard_size=7, num_proc=2, select=(i, 2), progress=False)
    assert listed_streams(tmp_path / "job0.work" / "shards")  # shards written as worker parts
    merged = tmp_path / "merged"
    dataset.merge(merged, [tmp_path / "job0", tmp_path / "job1"])
    got = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(merged.iterdir()) if p.is_file()}
    assert got == one


def test_draws_read_the_cache_summary_without_loading_stores(tmp_path, monkeypatch):
    """A worker's attempts reach companies other workers own: their reports, concepts and standard come from the
    store cache's index (equal to what the stores say), so no store is loaded for them."""
    from ledgerlm.synth.finindices import storecache
    from ledgerlm.synth.finindices.config import load_config
    from ledgerlm.synth.finindices.contexts import Builder

    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path / "cache"))
    b = Builder.from_config(load_config(None, num=10))
    assert isinstance(b.stores, storecache.LazyStores)
    for company in b.companies:
        for axis in b.by_axis:
            b.eligible(company, axis)
        b._periods[company], b._series[company]  # noqa: B018
    assert b.stores.loads == 0
    for company in b.companies[:8]:
        store = b.stores[company]
        assert b.reports[company] == store.reports(company)
        assert b.stores.summary(company) == storecache.summary(store, company)


def test_a_rerun_clears_worker_parts_of_the_shards_it_redoes_in_one_process(tmp_path):
    """A killed run with workers leaves part files of unfinished shards; a rerun that redoes them without workers
    (one process, or one shard left) removes them too: nothing unlisted stays beside the shards."""
    plain, one, out, shard_dir = started_run(tmp_path)
    for suffix in ("jsonl", "meta"):
        (shard_dir / f"shard-00003.part-1-4.{suffix}").write_text("left by a killed worker\n")
    assert build(out, plain, 1) == one
    assert not list(shard_dir.glob("*.part-*"))


def test_workers_take_an_epoch_in_rotated_orders_and_a_shard_s_queued_tasks_together(tmp_path):
    """Worker w starts each epoch but the last w/P of the way in, so slots moved to it mostly find their shard's own
    task still queued; a worker then drafts the queued tasks of a shard in one pass and answers them at once."""

    class Inbox(list):
        put = list.append

    state = affine._Run(tmp_path, FakeBuilder(affinity=lambda s: "AAA" if s % 2 else "BBB"), list(range(12)), 24, 2, 2, None)
    state.inboxes = [Inbox(), Inbox()]
    state.send_more()  # epochs 0 and 1 (shards 0-3, 4-7); the last one (8-11) is not rotated
    order = [[m[1] for m in inbox if m[0] == "task"] for inbox in state.inboxes]
    assert order == [[0, 1, 2, 3, 4, 5, 6, 7], [2, 3, 0, 1, 6, 7, 4, 5]]
    state.send_more()
    state.left[0] = state.left[1] = 0
    state.send_more()
    assert [m[1] for m in state.inboxes[1] if m[0] == "task"][-4:] == [8, 9, 10, 11]

    from collections import deque
    queue = deque([("task", 3, [7], False), ("task", 5, [11], False), ("task", 3, [(6, 1, "AAA")], True)])
    items, covered = affine._coalesce(queue, 3, [(9, 2, "BBB")], 1)
    assert items == [(9, 2, "BBB"), 7, (6, 1, "AAA")] and covered == 3 and list(queue) == [("task", 5, [11], False)]


def test_the_merge_copies_rows_that_follow_each_other_in_a_worker_stream_in_one_call(tmp_path, monkeypatch):
    plain = FakeBuilder()
    one = build(tmp_path / "one", plain, 1)
    out = tmp_path / "two"
    dataset.generate(out, FP, FakeBuilder(affinity=plain.company), num_slots=150, shard_size=7, num_proc=2, progress=False)
    calls = []
    copy = dataset.shards.copy_span
    monkeypatch.setattr(dataset.shards, "copy_span", lambda span, dst: (calls.append(span), copy(span, dst)))
    manifest = dataset.merge(out, [out])
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.is_file()} == one
    assert 0 < len(calls) < manifest["counts"]["total"] / 2


def test_companies_first_seen_together_are_dealt_across_the_workers_by_expected_cost():
    """A company draw group's companies arrive in one epoch: they are spread by their slots times CPU per slot, not
    all given to the worker that owned the fewest companies when the group began."""
    owners = {"A": 0, "B": 1}
    slots = {"A": 10, "C": 10, "D": 10, "E": 10, "F": 10}
    new = affine.deal_new(slots, owners, 2, rates={"A": 1.0, "B": 1.0})
    load = [sum(slots[c] for c, w in {**owners, **new}.items() if w == i and c in slots) for i in (0, 1)]
    assert set(new) == {"C", "D", "E", "F"} and sorted(load) == [20, 30]  # A (10 slots) already on worker 0
    costly = affine.deal_new({"C": 10, "D": 10, "E": 10}, {}, 2, rates={"C": 3.0, "X": 1.0})
    assert costly["C"] != costly["D"] == costly["E"]  # C: 30; D and E at the mean rate, 20 each

    class Inbox(list):
        put = list.append

    groups = lambda s: ["AAA", "BBB"][s % 2] if s < 40 else ["CCC", "DDD", "EEE", "FFF"][s % 4]
    state = affine._Run(Path("unused"), FakeBuilder(affinity=groups), list(range(24)), 48, 2, 2, None)
    state.inboxes = [Inbox(), Inbox()]
    state.send_more()
    state.left[0] = state.left[1] = 0
    state.send_more()  # epoch 2: slots 16-47, the second group's companies first seen
    assert sorted(state.owners[c] for c in ("CCC", "DDD", "EEE", "FFF")) == [0, 0, 1, 1]
