"""#17 goal 4: `--shard i/n` jobs as Ray tasks on a local Ray instance, merged, byte-identical to one process.

    pip install 'ledgerlm[ray]' && python -m pytest tests/test_synth_ray.py -q -m slow
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

SRC = ["synth/data/sec/companyfacts/CIK0001640147_SNOW.json.gz", "synth/data/sec/companyfacts/CIK0001046179_TSM.json.gz"]


def _sha(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.slow  # a local Ray instance takes 20-60 s to start on the 2-core dev machine
def test_ray_tasks_then_merge_equal_one_process(tmp_path, monkeypatch, repo_root):
    from ledgerlm.synth.finindices import cli, ray_runner
    from ledgerlm.synth.finindices.config import load_config

    monkeypatch.chdir(repo_root)
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path / "cache"))
    args = ["--num", "60", "--seed", "4", "--no-progress"] + [a for s in SRC for a in ("--source", s)]
    cli.main(["--out", str(tmp_path / "one")] + args)
    cfg = load_config(None, sources=SRC, num=60, seed=4)
    manifest = ray_runner.run(cfg, tmp_path / "ray", 3, init_kwargs={"num_cpus": 2})
    assert manifest["shards"] >= 1 and manifest["counts"]["total"] > 0
    assert _sha(tmp_path / "ray") == _sha(tmp_path / "one")
    assert sorted(p.name for p in (tmp_path / "ray.work" / "shards").glob("*.done")) == \
        sorted(p.name for p in (tmp_path / "one.work" / "shards").glob("*.done"))
