"""`ledgerlm synth --drop-work`: after a full build or a merge the resume state (OUT.work/) is removed, the published
dataset is unchanged (a 1-process split is a hard link to its stream), and nothing that holds published files is removed.

    python -m pytest tests/test_synth_drop_work.py -q
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import cli, dataset

OUTPUTS = ("train.jsonl", "dev.jsonl", "test.jsonl", "manifest.json", "README.md")


def sha(folder: Path) -> dict:
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in OUTPUTS}


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "small.yaml"
    path.write_text("num: 80\nseed: 3\nshard_size: 4\n")
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory, config) -> Path:
    out = tmp_path_factory.mktemp("ref") / "ds"
    assert cli.main(["--config", str(config), "--out", str(out), "--no-progress"]) == 0
    assert dataset.work_dir(out).is_dir()  # kept by default: a rerun resumes from it
    return out


@pytest.mark.parametrize("procs", ["1", "2"])
def test_build_then_drop_work_keeps_the_same_bytes(tmp_path, config, reference, procs, capsys):
    out = tmp_path / "ds"
    assert cli.main(["--config", str(config), "--out", str(out), "--num-proc", procs, "--drop-work", "--no-progress"]) == 0
    assert not dataset.work_dir(out).exists()
    assert sha(out) == sha(reference)
    assert f"removed the resume state {dataset.work_dir(out)}" in capsys.readouterr().err
    # a rerun starts over (no resume state) and publishes the same bytes again
    assert cli.main(["--config", str(config), "--out", str(out), "--no-progress"]) == 0
    assert sha(out) == sha(reference)


def test_merge_of_shard_jobs_then_drop_work(tmp_path, config, reference):
    jobs = [tmp_path / "job0", tmp_path / "job1"]
    for i, job in enumerate(jobs):
        assert cli.main(["--config", str(config), "--out", str(job), "--shard", f"{i}/2", "--no-progress"]) == 0
    merged = tmp_path / "merged"
    assert cli.main(["--merge", *map(str, jobs), "--out", str(merged), "--drop-work"]) == 0
    assert sha(merged) == sha(reference)
    assert not any(dataset.work_dir(job).exists() for job in jobs)


def test_drop_work_refuses_a_shard_job(tmp_path, config):
    with pytest.raises(InputError, match="--drop-work with --shard"):
        cli.main(["--config", str(config), "--out", str(tmp_path / "x"), "--shard", "0/2", "--drop-work"])
    assert not (tmp_path / "x.work").exists()


def test_drop_work_never_removes_a_folder_holding_published_files(tmp_path):
    old = tmp_path / "old"  # an older version's layout: run.json and shards/ beside the published splits
    (old / "shards").mkdir(parents=True)
    for name in ("run.json", "train.jsonl"):
        (old / name).write_text("{}\n")
    inside = tmp_path / "state.work"  # OUT given inside a work dir
    (inside / "ds").mkdir(parents=True)
    assert cli.drop_work(old, [old]) == []
    assert cli.drop_work(inside / "ds", [inside]) == []
    assert (old / "train.jsonl").is_file() and (inside / "ds").is_dir()
