"""`ledgerlm.cli.gc_paused`: no collection inside the block, what it made frozen at its end (never scanned by later
collections), collection restored (or left off when it was off); synth's start-up runs inside it.

    python -m pytest -q tests/test_cli_gc_paused.py
"""
from __future__ import annotations

import contextlib
import gc

from ledgerlm import cli
from ledgerlm.synth.finindices import cli as synth_cli


def test_block_makes_no_collection_and_freezes_what_it_made():
    collections = []
    gc.callbacks.append(lambda phase, info: phase == "stop" and collections.append(info["generation"]))
    try:
        with cli.gc_paused():
            assert not gc.isenabled()
            kept = [[i] for i in range(20_000)]  # tracked containers: 28 young collections under the default thresholds
            frozen_before = gc.get_freeze_count()
        assert gc.isenabled() and not collections
        assert gc.get_freeze_count() >= frozen_before + len(kept)
        gc.disable()
        with cli.gc_paused():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()
        gc.callbacks.pop()
        gc.unfreeze()


def test_synth_start_up_runs_without_young_collections(tmp_path, monkeypatch, repo_root):
    monkeypatch.chdir(repo_root)
    runs = []

    def count(paused) -> int:
        monkeypatch.setattr(synth_cli, "gc_paused", paused)
        collections = []
        gc.callbacks.append(lambda phase, info: phase == "stop" and collections.append(1))
        try:
            runs.append(1)
            synth_cli.main(["--out", str(tmp_path / f"out{len(runs)}"), "--num", "1", "--no-progress"])
        finally:
            gc.callbacks.pop()
            gc.unfreeze()
        return len(collections)

    count(cli.gc_paused)  # warm the caches of this process (stores, tiktoken ranks)
    assert count(cli.gc_paused) * 3 < count(contextlib.nullcontext)  # 0 and 54 at --num 1


def test_synth_generates_without_collections(tmp_path, monkeypatch, repo_root):
    monkeypatch.chdir(repo_root)
    seen = []
    build = synth_cli.dataset.build
    monkeypatch.setattr(synth_cli.dataset, "build", lambda *a, **k: seen.append(gc.isenabled()) or build(*a, **k))
    try:
        synth_cli.main(["--out", str(tmp_path / "out"), "--num", "1", "--no-progress"])
    finally:
        gc.unfreeze()
    assert seen == [False] and gc.isenabled()  # off while generating, on again after
