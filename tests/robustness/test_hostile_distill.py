"""`ledgerlm distill` end to end against a hostile loopback server (#14.1, .2, .3): ReDoS-shaped outputs,
odd 200 bodies, lone surrogates and empty completions in one run — it finishes within a bound, loses
nothing finished, caches no bad body, and the rerun asks again only for what was not cached.

    python -m pytest tests/robustness/test_hostile_distill.py -q
"""
from __future__ import annotations

import json
import threading
import time

from distill_fixtures import answer_text, make_items, read_jsonl, write_dataset

from ledgerlm.synth.distill.cli import main

from .fake_openai import RawServer

REDOS = "The answer" + " " * 20_000 + "is" + " " * 20_000 + "<table" * 5000  # cubic/quadratic before the fix


def body(content) -> bytes:
    return json.dumps({"choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 5, "completion_tokens": 5}}).encode()


def test_distill_survives_a_hostile_teacher(tmp_path):
    items = make_items(6)
    data = write_dataset(tmp_path / "data", items)
    hostile = [body(REDOS), b'{"choices": [null]}', b"[]", body(7), body("Final answer: 1 \ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace")),
               b'{"choices": [{"message": {"content": "x \\ud800 y"}, "finish_reason": "stop"}]}', body(""), body(["a"]),
               b'{"choices": "x"}', body(answer_text(items[0])), body(REDOS), body("")]
    args = ["--data", str(data), "--teacher", "openai:fake", "--samples-per-item", "2", "--out", str(tmp_path / "out"),
            "--max-retries", "0", "--concurrency", "4", "--no-progress", "--max-failed-fraction", "1.0", "--temperature", "0.7"]
    with RawServer(hostile) as server:
        done: list[int] = []
        began = time.monotonic()
        worker = threading.Thread(target=lambda: done.append(main(args + ["--base-url", server.url])), daemon=True)
        worker.start()
        worker.join(60)  # bounded: before the fix, one ReDoS output took minutes and a surrogate hung the writer thread
        assert done == [0], "distill hung or failed"
        elapsed = time.monotonic() - began
        assert server.hits == 12 and elapsed < 60
    cached = read_jsonl(tmp_path / "out" / "cache.jsonl")
    texts = [r["completion"]["text"] for r in cached]
    assert all(t.strip() for t in texts)  # no empty completion and no bad body is cached
    assert not any("\ud800" in t for t in texts) and any("\ufffd" in t for t in texts)
    rejects = read_jsonl(tmp_path / "out" / "rejects.jsonl")
    rows = read_jsonl(tmp_path / "out" / "train.jsonl")
    assert len(rejects) + sum(1 for _ in rows) >= 12 - 1  # every sample lands in one file (near-duplicates aside)
    assert sum(r["reason"] == "transport_error" for r in rejects) == 5  # the 5 bad bodies: per-item errors
    with RawServer([body("Final answer: 0")]) as server:  # rerun: only the uncached samples are asked again
        assert main(args + ["--base-url", server.url]) == 0
        assert server.hits == 12 - len(cached)
