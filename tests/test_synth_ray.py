"""`ledgerlm synth --ray-tasks N`: the `--shard i/n` jobs as Ray tasks, merged, byte-identical to one process.

    python -m pytest tests/test_synth_ray.py -q                                    # flags and errors, no Ray needed
    pip install 'ledgerlm[ray]' && python -m pytest tests/test_synth_ray.py -q -m slow   # a real local Ray instance
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from ledgerlm import cli as ledgerlm_cli

SRC = ["synth/data/sec/companyfacts/CIK0001640147_SNOW.json.gz", "synth/data/sec/companyfacts/CIK0001046179_TSM.json.gz"]


def _sha(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def _synth(argv: list[str], capsys) -> tuple[int, list[str]]:
    code = ledgerlm_cli.main(["synth", *argv])
    return code, [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_ray_tasks_without_ray_is_one_line_naming_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, installed or not
    code, err = _synth(["--out", str(tmp_path / "out"), "--ray-tasks", "2", "--no-progress"], capsys)
    assert code == 1
    assert err == ["ledgerlm synth: error: field 'ray-tasks': Ray is not installed: pip install 'ledgerlm[ray]'"]
    assert list(tmp_path.iterdir()) == []  # nothing half-written


@pytest.mark.parametrize("extra, message", [
    (["--ray-tasks", "0"], "field 'ray-tasks': --ray-tasks 0: need >= 1"),
    (["--ray-tasks", "2", "--shard", "0/2"], "field 'ray-tasks': --ray-tasks runs every shard job and merges: drop --shard"),
    (["--ray-address", "auto"], "field 'ray-address': --ray-address needs --ray-tasks N"),
    (["--cpus-per-task", "2"], "field 'cpus-per-task': --cpus-per-task needs --ray-tasks N"),
    (["--ray-tasks", "2", "--cpus-per-task", "0"], "field 'cpus-per-task': --cpus-per-task 0.0: need > 0"),
])
def test_bad_ray_flags_are_one_line(extra, message, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # flag errors come before the Ray check
    code, err = _synth(["--out", str(tmp_path / "out"), *extra], capsys)
    assert (code, err) == (1, [f"ledgerlm synth: error: {message}"])
    assert list(tmp_path.iterdir()) == []


def test_synth_help_documents_the_ray_flags(capsys):
    assert ledgerlm_cli.main(["synth", "--help"]) == 0
    out = capsys.readouterr().out
    for flag in ("--ray-tasks", "--ray-address", "--cpus-per-task", "pip install 'ledgerlm[ray]'"):
        assert flag in out, flag


def test_ray_runner_has_no_command_line_of_its_own():
    """`ledgerlm synth` is synth's one entry point: ray_runner keeps run(), not a main()/__main__."""
    from ledgerlm.synth.finindices import ray_runner

    source = Path(ray_runner.__file__).read_text(encoding="utf-8")
    assert callable(ray_runner.run) and not hasattr(ray_runner, "main")
    assert "__main__" not in source and "argparse" not in source


@pytest.mark.slow  # a local Ray instance takes 20-60 s to start on the 2-core dev machine
def test_ray_tasks_then_merge_equal_one_process(tmp_path, monkeypatch, repo_root, capsys):
    pytest.importorskip("ray")
    monkeypatch.chdir(repo_root)
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path / "cache"))
    args = ["--num", "60", "--seed", "4", "--no-progress"] + [a for s in SRC for a in ("--source", s)]
    assert ledgerlm_cli.main(["synth", "--out", str(tmp_path / "one")] + args) == 0
    code, err = _synth(["--out", str(tmp_path / "ray"), "--ray-tasks", "3"] + args, capsys)
    assert code == 0, err
    assert any(line.startswith("ray: 3 tasks wrote ") for line in err), err
    assert _sha(tmp_path / "ray") == _sha(tmp_path / "one")
    assert sorted(p.name for p in (tmp_path / "ray.work" / "shards").glob("*.done")) == \
        sorted(p.name for p in (tmp_path / "one.work" / "shards").glob("*.done"))
