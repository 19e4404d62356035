"""`ledgerlm synth` end to end on the embedded real data: manifest coverage, byte-identical reruns,
SIGKILL + resume, --drop-work, fidelity of a 2,000-sample run (slow).

    python -m pytest tests/test_synth_finindices_cli.py -q            # default checks
    python -m pytest tests/test_synth_finindices_cli.py -q -m slow    # 2,000-sample fidelity + full default run
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import cli, dataset

OUTPUTS = ("train.jsonl", "dev.jsonl", "test.jsonl", "manifest.json", "README.md")


def sha(folder: Path) -> dict:
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in OUTPUTS}


@pytest.fixture(scope="module")
def small_config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "small.yaml"
    path.write_text("# ledgerlm synth --config small.yaml --out OUT\nnum: 120\nseed: 5\nshard_size: 4\n")
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory, small_config) -> Path:
    out = tmp_path_factory.mktemp("ref") / "ds"
    assert cli.main(["--config", str(small_config), "--out", str(out), "--no-progress"]) == 0
    return out


def test_same_seed_same_bytes_and_num_proc_does_not_matter(tmp_path, small_config, reference):
    out = tmp_path / "again"
    assert cli.main(["--config", str(small_config), "--out", str(out), "--num-proc", "2", "--no-progress"]) == 0
    assert sha(out) == sha(reference)
    other = tmp_path / "seed6"
    assert cli.main(["--config", str(small_config), "--out", str(other), "--seed", "6", "--no-progress"]) == 0
    assert sha(other)["train.jsonl"] != sha(reference)["train.jsonl"]


KILL_SHARDS = 150  # num 300 = 150 item slots (two hint variants each), one slot per shard: seconds of shard work


def test_sigkill_then_rerun_equals_uninterrupted_run(tmp_path):
    # many small shards, so the kill lands while shards are still being written (with 15 shards of 4 the whole run
    # could finish, and remove its shard folder, between two polls: the kill then hit nothing)
    config = tmp_path / "kill.yaml"
    config.write_text(f"num: {2 * KILL_SHARDS}\nseed: 5\nshard_size: 1\n")
    reference = tmp_path / "reference"
    assert cli.main(["--config", str(config), "--out", str(reference), "--no-progress"]) == 0
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "ledgerlm.synth.finindices.cli", "--config", str(config), "--out", str(out), "--no-progress"]
    env = dict(os.environ)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    shards_dir = tmp_path / "killed.work" / "shards"  # resume state lives beside the dataset folder
    while time.time() < deadline and proc.poll() is None and not (shards_dir.is_dir() and len(list(shards_dir.glob("*.done"))) >= 3):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list(shards_dir.glob("*.done")))
    assert proc.returncode == -signal.SIGKILL, f"the run ended (exit {proc.returncode}) before the kill: not a mid-run kill"
    assert 3 <= done < KILL_SHARDS, f"the kill must land mid-run ({done} of {KILL_SHARDS} shards done)"
    assert not (out / "manifest.json").exists()
    assert subprocess.run(cmd, env=env, capture_output=True).returncode == 0
    assert sha(out) == sha(reference)
    rows = [json.loads(l) for s in ("train", "dev", "test") for l in open(out / f"{s}.jsonl")]
    assert len({r["id"] for r in rows}) == len(rows)


def test_manifest_of_a_default_config_run_covers_every_axis(tmp_path):
    out = tmp_path / "default"
    assert cli.main(["--config", "configs/synth/default.yaml", "--out", str(out), "--num", "400", "--no-progress"]) == 0
    m = json.loads((out / "manifest.json").read_text())
    c = m["counts"]
    assert set(c["by_axis"]) == {"domain", "caliber", "temporal+caliber", "temporal+domain"}
    assert set(c["by_paradigm"]) == {"single", "table"}
    # no parent distractor: the embedded data has no genuine parent-only statements (issue #11; the FSDS
    # ParentCompany rows of multi-registrant filings are the registrants' consolidated statements)
    assert {"distractor_period", "deficiency"} <= set(c["by_trap"]) and "parent_distractor" not in c["by_trap"]
    assert set(c["by_context_format"]) == {"text", "json", "tuples", "html", "markdown", "latex"}
    assert set(c["by_hint"]) == {"hint", "no_hint"} and set(c["by_language"]) == {"en", "zh"}
    assert set(c["by_answer_format"]) == {"number", "html_table", "json", "tuple_list"}
    assert m["kept"] + sum(m["drops"].values()) == 400 and c["total"] == m["kept"]
    splits = {s: {json.loads(l)["company"] for l in open(out / f"{s}.jsonl")} for s in ("train", "dev", "test")}
    assert not (splits["train"] & splits["test"]) and not (splits["train"] & splits["dev"]) and splits["test"]
    card = (out / "README.md").read_text()
    assert "half away from zero" in card and "sec.gov" in card
    import datasets

    ds = datasets.load_dataset("json", data_files={s: str(out / f"{s}.jsonl") for s in ("train", "dev", "test")})
    assert sum(len(d) for d in ds.values()) == c["total"]


def test_help_and_card_say_num_is_attempted_and_drops_are_counted(reference, capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    assert "attempt" in helptext and "fewer" in helptext and "manifest.json" in helptext and "by reason" in helptext
    m = json.loads((reference / "manifest.json").read_text())
    attempted = m["kept"] + sum(m["drops"].values())
    assert attempted >= m["config"]["num"]  # N rounded up to whole items (one row per hint variant)
    card = " ".join((reference / "README.md").read_text().split())
    assert f"attempted: {attempted:,} samples (--num {m['config']['num']:,}" in card
    assert f"kept: {m['kept']:,}" in card and "fewer rows than --num" in card


def test_bad_flags_fail_with_one_line_errors(tmp_path):
    with pytest.raises(InputError, match="shard"):
        cli.main(["--out", str(tmp_path / "x"), "--shard", "3/2"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("nmu: 3\n")
    with pytest.raises(InputError, match="nmu"):
        cli.main(["--config", str(bad), "--out", str(tmp_path / "y")])


@pytest.mark.slow
def test_fidelity_of_a_2000_sample_default_run(tmp_path):
    from ledgerlm.synth.finindices import fidelity

    out = tmp_path / "big"
    assert cli.main(["--out", str(out), "--num", "2000", "--num-proc", "2", "--no-progress"]) == 0
    assert fidelity.main([str(out)]) == 0
    m = json.loads((out / "manifest.json").read_text())
    assert {"distractor_period", "deficiency"} <= set(m["counts"]["by_trap"])  # no genuine parent-only data (issue #11)


# --drop-work: after a full build or a merge the resume state (OUT.work/) is removed, the published dataset is
# unchanged (a 1-process split is a hard link to its stream), and nothing that holds published files is removed.
@pytest.mark.parametrize("procs", ["1", "2"])
def test_build_then_drop_work_keeps_the_same_bytes(tmp_path, small_config, reference, procs, capsys):
    out = tmp_path / "ds"
    assert cli.main(["--config", str(small_config), "--out", str(out), "--num-proc", procs, "--drop-work", "--no-progress"]) == 0
    assert not dataset.work_dir(out).exists()
    assert sha(out) == sha(reference)
    assert f"removed the resume state {dataset.work_dir(out)}" in capsys.readouterr().err
    # a rerun starts over (no resume state) and publishes the same bytes again
    assert cli.main(["--config", str(small_config), "--out", str(out), "--no-progress"]) == 0
    assert sha(out) == sha(reference)


def test_merge_of_shard_jobs_then_drop_work(tmp_path, small_config, reference):
    jobs = [tmp_path / "job0", tmp_path / "job1"]
    for i, job in enumerate(jobs):
        assert cli.main(["--config", str(small_config), "--out", str(job), "--shard", f"{i}/2", "--no-progress"]) == 0
    merged = tmp_path / "merged"
    assert cli.main(["--merge", *map(str, jobs), "--out", str(merged), "--drop-work"]) == 0
    assert sha(merged) == sha(reference)
    assert not any(dataset.work_dir(job).exists() for job in jobs)


def test_drop_work_refuses_a_shard_job(tmp_path, small_config):
    with pytest.raises(InputError, match="--drop-work with --shard"):
        cli.main(["--config", str(small_config), "--out", str(tmp_path / "x"), "--shard", "0/2", "--drop-work"])
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


@pytest.mark.parametrize("procs", ["1", "2"])
def test_reruns_into_the_same_folder_keep_the_published_bytes(tmp_path, small_config, reference, procs):
    """New-user audit: a second run left train.jsonl.tmp as a link to the published split (rename(2) of two links to
    one file does nothing) and a third run opened it with truncation, emptying the dataset and its resume streams."""
    out = tmp_path / "d"
    for _ in range(3):
        assert cli.main(["--config", str(small_config), "--out", str(out), "--num-proc", procs, "--no-progress"]) == 0
        assert sha(out) == sha(reference) and not list(out.glob("*.tmp"))
    (out / "train.jsonl.tmp").hardlink_to(out / "train.jsonl")  # what a killed run may leave behind
    assert cli.main(["--config", str(small_config), "--out", str(out), "--num-proc", procs, "--no-progress"]) == 0
    assert sha(out) == sha(reference) and not list(out.glob("*.tmp"))


def test_out_that_is_a_file_is_refused_before_any_work(tmp_path, small_config, capsys):
    """New-user audit: --out naming a file failed with a FileExistsError traceback after the whole build, leaving OUT.work/."""
    from ledgerlm import cli as ledgerlm_cli

    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    assert ledgerlm_cli.main(["synth", "--config", str(small_config), "--out", str(afile), "--no-progress"]) == 1
    assert capsys.readouterr().err == f"ledgerlm synth: error: --out {afile} is an existing file: give a folder for the dataset\n"
    assert afile.read_text() == "mine\n" and not dataset.work_dir(afile).exists()


def test_out_holding_unrelated_files_is_refused_before_any_work(tmp_path, small_config):
    """New-user audit: the dataset was written silently beside a folder's own files. Only a folder holding what a run
    publishes (a rerun: test_reruns_into_the_same_folder_keep_the_published_bytes) is written into."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    (folder / "train.jsonl").write_text("")
    with pytest.raises(InputError, match=rf"--out {folder} already holds files a synth run does not write \(notes.txt\)"):
        cli.main(["--config", str(small_config), "--out", str(folder), "--no-progress"])
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "train.jsonl"] and not dataset.work_dir(folder).exists()


def test_out_dot_and_dot_files(tmp_path, small_config, reference, monkeypatch):
    """Review of faa684e: `--out .` raised ValueError from Path('.').with_name (the work dir is named after the folder),
    and a Finder .DS_Store or an NFS .nfsXXXX beside a published dataset blocked the rerun."""
    folder = tmp_path / "here"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert cli.main(["--config", str(small_config), "--out", ".", "--no-progress"]) == 0
    assert sha(folder) == sha(reference) and (tmp_path / "here.work").is_dir()
    (folder / ".DS_Store").write_bytes(b"\0")
    assert cli.main(["--config", str(small_config), "--out", str(folder), "--no-progress"]) == 0
    assert sha(folder) == sha(reference)
