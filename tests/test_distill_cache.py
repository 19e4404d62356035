"""The distillation cache: keys, what is never cached, atomic appends, torn last lines, group commit."""
from __future__ import annotations

import asyncio
import json
import os
import threading

import pytest

from ledgerlm.synth.distill.cache import AppendLog, CompletionCache, cache_key, cut_torn_tail, read_jsonl_lines

MESSAGES = [{"role": "user", "content": "AAPL FY2023 gross margin?"}]
PARAMS = {"temperature": 0.7, "top_p": 1.0, "max_tokens": 512}


def record(text="Final answer: 44.13", finish="stop", error=None):
    return {"item_id": "d-001", "sample_index": 0,
            "completion": {"text": text, "finish_reason": finish, "error": error, "prompt_tokens": 5, "completion_tokens": 3}}


def test_key_changes_with_every_part_and_only_with_them():
    base = cache_key("openai:m", MESSAGES, PARAMS, 0, 7)
    assert base == cache_key("openai:m", [dict(MESSAGES[0])], dict(reversed(list(PARAMS.items()))), 0, 7)
    variants = [
        cache_key("openai:other", MESSAGES, PARAMS, 0, 7),
        cache_key("openai:m", [{"role": "user", "content": "AAPL FY2023 gross margin? "}], PARAMS, 0, 7),
        cache_key("openai:m", MESSAGES, {**PARAMS, "temperature": 0.8}, 0, 7),
        cache_key("openai:m", MESSAGES, PARAMS, 1, 7),
        cache_key("openai:m", MESSAGES, PARAMS, 0, 8),
    ]
    assert len({base, *variants}) == 6


def test_transport_errors_and_truncations_are_never_cached(tmp_path):
    cache = CompletionCache(tmp_path / "c.jsonl")
    assert cache.put("a", record(finish="length")) is False
    assert cache.put("b", record(finish="error", error="HTTP 500")) is False
    assert cache.put("c", record(error="ReadTimeout")) is False
    assert cache.put("d", record()) is True
    cache.close()
    assert [r["key"] for r in read_jsonl_lines(tmp_path / "c.jsonl")] == ["d"]
    assert "d" in CompletionCache(tmp_path / "c.jsonl") and len(CompletionCache(tmp_path / "c.jsonl")) == 1


def test_torn_last_line_is_ignored_then_cut_before_the_next_append(tmp_path):
    path = tmp_path / "c.jsonl"
    cache = CompletionCache(path)
    cache.put("a", record())
    cache.close()
    full = path.read_bytes()
    with open(path, "ab") as handle:  # a writer killed half way through a line
        handle.write(json.dumps({"key": "b", **record()}).encode()[:40])
    assert [r["key"] for r in read_jsonl_lines(path)] == ["a"]
    reopened = CompletionCache(path)
    assert len(reopened) == 1 and "b" not in reopened
    reopened.put("c", record())
    reopened.close()
    assert path.read_bytes().startswith(full)
    assert [r["key"] for r in read_jsonl_lines(path)] == ["a", "c"]
    assert all(line.endswith(b"}") for line in path.read_bytes().split(b"\n")[:-1])


def test_cut_torn_tail_handles_files_without_any_newline(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"key": "half')
    assert cut_torn_tail(path) == 13 and path.read_bytes() == b""


def test_concurrent_appends_never_interleave(tmp_path):
    log = AppendLog(tmp_path / "log.jsonl")
    big = "x" * 20000  # larger than a pipe buffer: still one write()

    def writer(n):
        for i in range(50):
            log.append({"writer": n, "i": i, "pad": big})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    rows = list(read_jsonl_lines(tmp_path / "log.jsonl"))
    assert len(rows) == 200 and all(r["pad"] == big for r in rows)
    assert sorted((r["writer"], r["i"]) for r in rows) == [(n, i) for n in range(4) for i in range(50)]


def test_async_group_commit_is_durable_and_deduplicated(tmp_path):
    path = tmp_path / "c.jsonl"
    cache = CompletionCache(path)

    async def put_all():
        keys = [f"k{i % 40}" for i in range(100)]  # 60 repeats of already-queued keys
        return await asyncio.gather(*(cache.aput(k, record()) for k in keys),
                                    cache.aput("trunc", record(finish="length")))

    results = asyncio.run(put_all())
    assert results[-1] is False and all(results[:-1])
    cache.close()
    keys = [r["key"] for r in read_jsonl_lines(path)]
    assert sorted(keys) == sorted(f"k{i}" for i in range(40))


def test_appends_are_fsynced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    cache = CompletionCache(tmp_path / "c.jsonl")
    cache.put("a", record())
    assert synced, "put returned before fsync"
    cache.close()


@pytest.mark.parametrize("bad", [b"not json\n", b'{"no_key": 1}\n'])
def test_reader_skips_lines_it_cannot_use(tmp_path, bad):
    path = tmp_path / "c.jsonl"
    good = (json.dumps({"key": "a", **record()}) + "\n").encode()
    path.write_bytes(bad + good)
    assert "a" in CompletionCache(path) and len(CompletionCache(path)) == 1
