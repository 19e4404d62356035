"""Crash safety: `ledgerlm distill` killed with SIGKILL at five random points, then rerun to the end,
writes exactly what one uninterrupted run writes (same rows, same rejects, no duplicates)."""
from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # distill_fixtures, with or without tests/__init__.py
from distill_fixtures import answer_text, item_of, make_items, malformed_text, read_jsonl, stub_server, write_dataset  # noqa: E402

from ledgerlm.inference.cache import read_jsonl_lines  # noqa: E402
from ledgerlm.synth.distill.pipeline import sample_seed  # noqa: E402

K = 3
SEED_TO_INDEX = {sample_seed(0, k): k for k in range(K)}


def deterministic_teacher(items):
    """Outcome fixed by (item, sample); latency random, so completion order differs run to run."""
    by_id = {item["id"]: item for item in items}
    jitter = random.Random(7)

    def respond(body):
        item = item_of(body, by_id)
        k = SEED_TO_INDEX[body["seed"]]
        roll = hashlib.sha256(f"{item['id']}/{k}".encode()).digest()[0] % 5
        latency = jitter.uniform(0.03, 0.09)
        if roll == 0:
            return {"content": f"<think>off by one ({k})</think>{answer_text(item, offset=1.0)}", "latency": latency}
        if roll == 1:
            return {"content": "<think>still going", "finish_reason": "length", "latency": latency}
        if roll == 2:
            return {"content": malformed_text(item), "latency": latency}
        return {"content": f"<think>sample {k} of {item['id']}</think>{answer_text(item)}", "latency": latency}

    return respond


def command(data, out, url):
    return [sys.executable, "-m", "ledgerlm.cli", "distill", "--data", str(data), "--teacher", "openai:stub",
            "--base-url", url, "--out", str(out), "--samples-per-item", str(K), "--policy", "all",
            "--concurrency", "4", "--no-progress", "--mix-solutions", "unsolved"]


def cache_lines(out):
    path = out / "cache.jsonl"
    return len(list(read_jsonl_lines(path))) if path.exists() else 0


def test_sigkill_five_times_then_resume_equals_an_uninterrupted_run(tmp_path):
    items = make_items(60)
    data = write_dataset(tmp_path / "data", items)
    rng = random.Random(2024)
    crashed, clean = tmp_path / "crashed", tmp_path / "clean"
    with stub_server(responder=deterministic_teacher(items)) as server:
        kills = 0
        for _ in range(5):
            before = cache_lines(crashed)
            proc = subprocess.Popen(command(data, crashed, server.url), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 60
            while cache_lines(crashed) <= before and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.4))  # a random point after the run has made progress
            assert proc.poll() is None, f"the run finished before the kill: {proc.stderr.read().decode()[-500:]}"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stderr.close()
            kills += 1
            assert proc.returncode == -signal.SIGKILL
            assert not (crashed / "train.jsonl").exists()  # outputs appear only when a run completes
        assert kills == 5 and 0 < cache_lines(crashed) < len(items) * K
        resumed = subprocess.run(command(data, crashed, server.url), capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        reference = subprocess.run(command(data, clean, server.url), capture_output=True, text=True, timeout=300)
        assert reference.returncode == 0, reference.stderr[-2000:]

    for name in ("train.jsonl", "rejects.jsonl"):
        assert (crashed / name).read_bytes() == (clean / name).read_bytes(), name
    manifest = (crashed / "manifest.json").read_text()
    assert manifest.replace(str(crashed), "OUT") == (clean / "manifest.json").read_text().replace(str(clean), "OUT")
    rows = read_jsonl(crashed / "train.jsonl")
    rejects = read_jsonl(crashed / "rejects.jsonl")
    ids = [r["id"] for r in rows + rejects]
    assert len(ids) == len(set(ids))  # no duplicated rows
    teacher_ids = {r["id"] for r in rows + rejects if r["source"] == "teacher"}
    assert teacher_ids == {f"{item['id']}#{k}" for item in items for k in range(K)}  # no lost samples
    keys = [r["key"] for r in read_jsonl_lines(crashed / "cache.jsonl")]
    assert len(keys) == len(set(keys))  # the cache never stored a completion twice
    assert {"wrong_value", "truncated"} <= {r["reason"] for r in rejects} and rows
