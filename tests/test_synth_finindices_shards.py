"""Shard / resume / merge machinery of `ledgerlm synth`, driven by a fake item generator.

    python -m pytest tests/test_synth_finindices_shards.py -q
"""
from __future__ import annotations

import gc
import hashlib
import json
import os
import random
from pathlib import Path

import pytest

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import dataset, shards
from ledgerlm.synth.finindices.config import SynthConfig
from ledgerlm.synth.finindices.pipeline import Drop, Stats, run_steps
from ledgerlm.synth.finindices.split import assign_splits

COMPANIES = ["AAA", "BBB", "CCC", "DDD", "EEE"]
SPLITS = assign_splits(COMPANIES, seed=7)


def fake_slot(slot: int, stats: Stats) -> list[dict]:
    """Two variants per slot; every 7th slot is dropped; rows repeat signatures so dedup has work."""
    rng = random.Random(f"7:{slot}")
    company = rng.choice(COMPANIES)
    if slot % 7 == 3:
        stats.drop("no_derivable_target", 2)
        return []
    base = {"paradigm": rng.choice(["single", "table"]), "axis": rng.choice(["domain", "caliber"]), "company": company,
            "split": SPLITS[company], "target_periods": [f"FY{rng.randint(2020, 2022)}"], "indices": [rng.choice("xy")],
            "context_periods": ["FY2020"], "traps": [], "context_formats": ["json"], "answer_format": "number",
            "unit": "millions", "decimals": 2, "messages": [{"role": "user", "content": f"q{slot}"}], "answer": 1.0,
            "solution": "1.00", "n_tokens": 3, "tokenizer": "fake", "provenance": [], "language": "en"}
    if base["paradigm"] == "table":  # a contract-4 table answer is a list of rows (shards check every row)
        base.update(answer=[[1.0]], answer_format="json")
    rows = [dict(base, id=f"s{slot}-{v}", hint=v == "h") for v in ("h", "n")]
    return run_steps([("keep", lambda r: r)], rows, stats)


def sha(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


FP = {"seed": 7, "num": 120, "shard_size": 8, "hint_variants": ["hint", "no_hint"], "tokenizer": "fake", "max_tokens": 10}


def build(out: Path, **kw) -> dict:
    dataset.generate(out, FP, fake_slot, num_slots=60, shard_size=8, progress=False, **kw)
    dataset.merge(out, [out])
    return sha(out)


def test_rerun_and_num_proc_are_byte_identical(tmp_path):
    a = build(tmp_path / "a")
    b = build(tmp_path / "b", num_proc=2)
    assert a == b and {"train.jsonl", "dev.jsonl", "test.jsonl", "manifest.json", "README.md"} <= set(a)
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    # every attempted sample is either kept or dropped with a named reason
    assert manifest["kept"] + sum(manifest["drops"].values()) == 120
    assert manifest["drops"]["no_derivable_target"] == 2 * len([s for s in range(60) if s % 7 == 3])
    assert manifest["drops"].get("duplicate", 0) > 0
    assert manifest["counts"]["total"] == manifest["kept"]


def test_merge_copies_rows_in_the_kernel_or_through_the_process_to_the_same_bytes(tmp_path, monkeypatch):
    a = build(tmp_path / "a", num_proc=2)  # rows copied with os.copy_file_range where the system has it
    monkeypatch.setattr(shards, "_KERNEL_COPY", True)

    def unsupported(*args):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(shards.os, "copy_file_range", unsupported, raising=False)
    dataset.merge(tmp_path / "b", [tmp_path / "a"])  # the same shards merged again, read and written instead
    assert shards._KERNEL_COPY is False
    assert sha(tmp_path / "b") == a


@pytest.mark.parametrize("kernel", [True, False])
def test_a_row_past_the_end_of_its_shard_file_is_an_error_not_a_hang(tmp_path, monkeypatch, kernel):
    monkeypatch.setattr(shards, "_KERNEL_COPY", kernel and hasattr(shards.os, "copy_file_range"))
    src, dst = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    src.write_bytes(b'{"a": 1}\n')
    with open(src, "rb") as f, open(dst, "wb", buffering=0) as out:
        with pytest.raises(InputError, match="ended at byte 9"):
            shards.copy_span((f.fileno(), 0, 20), out.fileno())  # the file shrank after its rows were listed
    assert dst.read_bytes() == b'{"a": 1}\n'


def test_merge_finds_rows_by_their_meta_lengths_or_by_newlines_in_shards_without_them(tmp_path):
    a = build(tmp_path / "a", num_proc=2)  # shards as rows files (not streams)
    shard_dir = dataset.work_dir(tmp_path / "a") / "shards"
    metas = sorted(shard_dir.glob("*.meta"))
    assert metas and all("line_bytes" in json.loads(line) for p in metas for line in p.read_text().splitlines())
    for p in metas:  # shards written before metas held line lengths: the merge scans for newlines
        p.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "line_bytes"}) + "\n"
                             for line in p.read_text().splitlines()))
    dataset.merge(tmp_path / "b", [tmp_path / "a"])
    assert sha(tmp_path / "b") == a
    rows = metas[0].with_suffix(".jsonl")
    rows.write_bytes(rows.read_bytes() + b'{"id": "extra"}\n')
    with pytest.raises(InputError, match="not written by ledgerlm synth"):
        dataset.merge(tmp_path / "c", [tmp_path / "a"])
    build(tmp_path / "d", num_proc=2)
    shard_dir = dataset.work_dir(tmp_path / "d") / "shards"
    rows = sorted(shard_dir.glob("*.meta"))[0].with_suffix(".jsonl")
    rows.write_bytes(rows.read_bytes() + b'{"id": "extra"}\n')  # lengths listed: the file no longer matches them
    with pytest.raises(InputError, match="its meta file lists"):
        dataset.merge(tmp_path / "e", [tmp_path / "d"])


def test_pieces_are_written_whole_after_a_short_writev(tmp_path, monkeypatch):
    pieces = [b"a" * 10, b"", b"b" * 3, b"c" * 7] * 600  # more than one writev call's worth of buffers
    if hasattr(os, "writev"):
        def short(fd, chunk):  # the kernel took only the first buffer
            return os.write(fd, chunk[0])
        monkeypatch.setattr(shards.os, "writev", short)
    shards._atomic_write(tmp_path / "x", pieces)
    assert (tmp_path / "x").read_bytes() == b"".join(pieces)


def _failing_at(slot_fail: int):
    def slot_fn(slot, stats):
        if slot == slot_fail:
            raise RuntimeError("killed")
        return fake_slot(slot, stats)
    return slot_fn


def test_one_process_writes_streams_that_become_the_split_files(tmp_path):
    """One process: shards in final form (streams), the split files are the streams linked, not copied; the bytes
    equal shards written as rows files (2 processes) and merged by copying."""
    one, two = build(tmp_path / "one"), build(tmp_path / "two", num_proc=2)
    assert one == two
    work = dataset.work_dir(tmp_path / "one")
    assert not list((work / "shards").glob("shard-0*.jsonl"))  # no rows file per shard
    for split in shards.SPLITS:
        published, stream = tmp_path / "one" / f"{split}.jsonl", shards.stream_path(work, split)
        assert os.stat(published).st_ino == os.stat(stream).st_ino
    dataset.merge(tmp_path / "again", [work])  # merged again from the work dir: the same bytes
    assert sha(tmp_path / "again") == one
    for k in range(4, 8):  # shards 0-3 from the streams, 4-7 from the rows files of the 2-process run
        (work / "shards" / f"shard-{k:05d}.done").unlink()
    dataset.merge(tmp_path / "mixed", [work, dataset.work_dir(tmp_path / "two")])
    assert sha(tmp_path / "mixed") == one


def test_streams_are_copied_where_links_fail(tmp_path, monkeypatch):
    one = build(tmp_path / "one")

    def no_links(src, dst):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(shards.os, "link", no_links)
    dataset.merge(tmp_path / "copied", [tmp_path / "one"])
    assert sha(tmp_path / "copied") == one
    work = dataset.work_dir(tmp_path / "one")
    assert all(os.stat(tmp_path / "copied" / f"{s}.jsonl").st_ino != os.stat(shards.stream_path(work, s)).st_ino
               for s in shards.SPLITS)


def test_a_killed_stream_run_resumes_to_the_same_bytes_and_never_changes_a_published_file(tmp_path):
    reference = build(tmp_path / "ref")
    out = tmp_path / "r"
    with pytest.raises(RuntimeError, match="killed"):
        dataset.generate(out, FP, _failing_at(30), num_slots=60, shard_size=8, progress=False)
    work = dataset.work_dir(out)
    done = sorted(p.name for p in (work / "shards").glob("*.done"))
    assert done == [f"shard-{k:05d}.done" for k in range(3)]
    with open(shards.stream_path(work, "train"), "ab") as f:
        f.write(b'{"id": "half a row written before the kill' * 10_000)  # killed after appending, before the marker
    dataset.generate(out, FP, fake_slot, num_slots=60, shard_size=8, progress=False)
    dataset.merge(out, [out])
    assert sha(out) == reference
    for split in shards.SPLITS:  # the streams were cut back: each is exactly its split file
        assert os.stat(out / f"{split}.jsonl").st_ino == os.stat(shards.stream_path(work, split)).st_ino
    # the published files are the streams: a rerun that has to redo a shard copies a stream before changing it
    published = {s: (out / f"{s}.jsonl").read_bytes() for s in shards.SPLITS}
    (work / "shards" / "shard-00007.done").unlink()
    with pytest.raises(RuntimeError, match="killed"):  # killed again, after the streams were cut back to shard 6
        dataset.generate(out, FP, _failing_at(58), num_slots=60, shard_size=8, progress=False)
    assert {s: (out / f"{s}.jsonl").read_bytes() for s in shards.SPLITS} == published
    dataset.generate(out, FP, fake_slot, num_slots=60, shard_size=8, progress=False)
    dataset.merge(out, [out])
    assert sha(out) == reference


def test_stream_shards_then_more_processes_merge_to_the_same_bytes(tmp_path):
    reference = build(tmp_path / "ref")
    out = tmp_path / "m"
    with pytest.raises(RuntimeError, match="killed"):
        dataset.generate(out, FP, _failing_at(45), num_slots=60, shard_size=8, progress=False)
    assert len(list((dataset.work_dir(out) / "shards").glob("*.done"))) == 5  # stream shards 0-4
    dataset.generate(out, FP, fake_slot, num_slots=60, shard_size=8, num_proc=2, progress=False)  # rows files 5-7
    dataset.merge(out, [out])
    assert sha(out) == reference


def test_shard_jobs_then_merge_equal_one_run(tmp_path):
    whole = build(tmp_path / "whole")
    for i in range(3):  # three independent jobs writing to their own folders
        dataset.generate(tmp_path / f"job{i}", FP, fake_slot, num_slots=60, shard_size=8, select=(i, 3), progress=False)
    with pytest.raises(InputError, match="not finished"):
        dataset.merge(tmp_path / "merged", [tmp_path / "job0", tmp_path / "job1"])
    dataset.merge(tmp_path / "merged", [tmp_path / f"job{i}" for i in range(3)])
    merged = sha(tmp_path / "merged")
    assert {k: merged[k] for k in whole if k != "run.json"} == {k: whole[k] for k in whole if k != "run.json"}


def test_resume_skips_finished_shards_and_redoes_half_written_ones(tmp_path):
    out = tmp_path / "r"
    calls = []

    def counting(slot, stats):
        calls.append(slot)
        return fake_slot(slot, stats)

    dataset.generate(out, FP, counting, num_slots=60, shard_size=8, select=(0, 2), progress=False)  # half the shards
    (dataset.work_dir(out) / "shards" / "shard-00001.jsonl.tmp").write_text("garbage from a killed run\n")  # a kill mid-shard
    calls.clear()
    dataset.generate(out, FP, counting, num_slots=60, shard_size=8, progress=False)
    assert sorted(calls) == [s for k in range(1, 8, 2) for s in shards.shard_slots(k, 60, 8)]  # only the missing shards
    dataset.merge(out, [out])
    assert sha(out) == build(tmp_path / "fresh")


def test_resume_state_lives_beside_the_published_folder(tmp_path):
    build(tmp_path / "pub")
    assert sorted(p.name for p in (tmp_path / "pub").iterdir()) == ["README.md", "dev.jsonl", "manifest.json", "test.jsonl", "train.jsonl"]
    assert (tmp_path / "pub.work" / "run.json").is_file() and (tmp_path / "pub.work" / "shards").is_dir()
    assert json.loads((tmp_path / "pub" / "manifest.json").read_text())["tokenizer"] == "fake"
    dataset.merge(tmp_path / "again", [tmp_path / "pub.work"])  # the work dir itself is accepted too
    assert sha(tmp_path / "again") == sha(tmp_path / "pub")


def test_other_config_in_same_folder_is_refused(tmp_path):
    build(tmp_path / "x")
    with pytest.raises(InputError, match="different config"):
        dataset.generate(tmp_path / "x", dict(FP, seed=8), fake_slot, num_slots=60, shard_size=8, progress=False)


def test_rows_load_with_datasets(tmp_path):
    import datasets

    build(tmp_path / "d")
    ds = datasets.load_dataset("json", data_files=str(tmp_path / "d" / "train.jsonl"), split="train")
    assert len(ds) == sum(1 for _ in open(tmp_path / "d" / "train.jsonl"))


def test_company_split_never_mixes():
    companies = [f"C{i}" for i in range(30)]
    splits = assign_splits(companies, seed=3, test_companies=["C5"])
    assert splits["C5"] == "test"
    assert set(splits.values()) == {"train", "dev", "test"}
    assert splits == assign_splits(list(reversed(companies)), seed=3, test_companies=["C5"])



def test_one_business_under_two_filers_shares_a_split():
    """Google Inc. (FSDS filer GOOG) and its successor Alphabet (GOOGL) are one business: a seed-27182 run put GOOG in test
    and GOOGL in train, so a test company's history sat in train. They now share a split, and pinning one pins both."""
    embedded = ["AAPL", "BAC", "DUK", "EBAY", "ED", "F", "GE", "GOOG", "GOOGL", "HON", "K", "NFLX", "NVDA", "SNOW", "SRE",
                "SWY", "TSM", "TXN", "UNH", "VZ"]
    for seed in range(40):
        splits = assign_splits(embedded, seed=seed)
        assert splits["GOOG"] == splits["GOOGL"], seed
        assert {"train", "dev", "test"} <= set(splits.values())
    assert {s for c, s in assign_splits(embedded, seed=1, test_companies=["GOOG"]).items() if c.startswith("GOOG")} == {"test"}
    with pytest.raises(InputError, match="GOOGL is one business with GOOG, which is pinned to test"):
        assign_splits(embedded, seed=1, test_companies=["GOOG"], dev_companies=["GOOGL"])

def test_drop_reasons_are_counted():
    stats = Stats()

    def cap(row):
        if row["n"] > 2:
            raise Drop("over_token_cap")
        return row

    kept = run_steps([("cap", cap)], [{"n": 1}, {"n": 3}, {"n": 5}], stats)
    assert kept == [{"n": 1}] and stats.as_dict() == {"kept": 1, "drops": {"over_token_cap": 2}}


def test_config_fingerprint_ignores_num_proc():
    assert SynthConfig(num_proc=1).fingerprint() == SynthConfig(num_proc=4).fingerprint()


def test_long_lived_caches_restore_the_collector_and_age_the_run_objects_without_scanning_them():
    """Inside: the raised thresholds; after: the caller's thresholds, nothing frozen, and what the run made sits in
    the oldest generation (left in the middle one, the first collection under the default thresholds scanned every
    survivor of a --num 10000 run: 0.42 s CPU)."""
    before = gc.get_threshold()
    with dataset.long_lived_caches():
        assert gc.get_threshold() == (100_000, 50, 100)
        made = [[slot] for slot in range(1000)]
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0  # also what a caller froze before (gc_paused)
    young = {id(o) for generation in (0, 1) for o in gc.get_objects(generation=generation)}
    assert not any(id(row) in young for row in made)
