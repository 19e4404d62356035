"""The one completion cache (evaluate + distill): keys, what is never cached, atomic appends, torn
last lines, group commit, reading back only clean completions.

    python -m pytest tests/test_inference_cache.py -q
"""
from __future__ import annotations

import asyncio
import json
import os
import threading

import pytest

from ledgerlm.errors import InputError
from ledgerlm.inference.cache import AppendLog, CompletionCache, cache_key, cacheable, cut_torn_tail, read_jsonl_lines
from ledgerlm.inference.sampling import Completion, GenerationParams

MESSAGES = [{"role": "user", "content": "AAPL FY2023 gross margin?"}]
PARAMS = GenerationParams(temperature=0.7, top_p=1.0, max_tokens=512, seed=7)
META = {"item_id": "d-001", "sample_index": 0}


def completion(text="Final answer: 44.13", finish="stop", error=None, tool_calls=()):
    return Completion(text=text, finish_reason=finish, error=error, prompt_tokens=5, completion_tokens=3, tool_calls=list(tool_calls))


def line(key, **fields):
    """A stored record as the cache writes it."""
    return {"key": key, **META, "completion": {"text": "Final answer: 44.13", "finish_reason": "stop", "error": None,
                                               "prompt_tokens": 5, "completion_tokens": 3, **fields}}


def test_key_changes_with_every_part_and_only_with_them():
    base = cache_key("openai:m", MESSAGES, PARAMS, sample_index=0)
    assert base == cache_key("openai:m", [dict(MESSAGES[0])], dict(reversed(list(PARAMS.as_dict().items()))), sample_index=0)
    variants = [
        cache_key("openai:other", MESSAGES, PARAMS, sample_index=0),
        cache_key("openai:m", [{"role": "user", "content": "AAPL FY2023 gross margin? "}], PARAMS, sample_index=0),
        cache_key("openai:m", MESSAGES, GenerationParams(temperature=0.8, max_tokens=512, seed=7), sample_index=0),
        cache_key("openai:m", MESSAGES, PARAMS, sample_index=1),
        cache_key("openai:m", MESSAGES, GenerationParams(temperature=0.7, max_tokens=512, seed=8), sample_index=0),
        cache_key("openai:m", MESSAGES, GenerationParams(temperature=0.7, max_tokens=512, seed=7, stop=("\n",)), sample_index=0),
        cache_key("openai:m", MESSAGES, PARAMS),  # evaluate's key: no sample index
    ]
    assert len({base, *variants}) == 8
    with pytest.raises(ValueError, match="model"):
        cache_key("openai:m", MESSAGES, PARAMS, model="x")


def test_errors_truncations_and_empty_completions_are_never_cached(tmp_path):
    cache = CompletionCache(tmp_path / "c.jsonl")
    assert cache.put("a", completion(finish="length"), **META) is False
    assert cache.put("b", completion(finish="error", error="HTTP 500"), **META) is False
    assert cache.put("c", completion(error="ReadTimeout"), **META) is False
    assert cache.put("e", completion(text="  \n"), **META) is False
    assert cache.put("d", completion(), **META) is True
    tool = {"id": "c1", "type": "function", "function": {"name": "calc", "arguments": "{}"}}
    assert cache.put("t", completion(text="", finish="tool_calls", tool_calls=[tool])) is True  # a tool call is an answer
    cache.close()
    assert [r["key"] for r in read_jsonl_lines(tmp_path / "c.jsonl")] == ["d", "t"]
    reread = CompletionCache(tmp_path / "c.jsonl")
    assert "d" in reread and len(reread) == 2
    assert reread.get("d") == completion() and reread.get("t").tool_calls == [tool]
    assert reread.get_record("d")["item_id"] == "d-001" and reread.get("a") is None
    assert not cacheable(None) and not cacheable({"text": 5}) and cacheable({"text": "x", "finish_reason": "stop"})


def test_torn_last_line_is_ignored_then_cut_before_the_next_append(tmp_path):
    path = tmp_path / "c.jsonl"
    cache = CompletionCache(path)
    cache.put("a", completion())
    cache.close()
    full = path.read_bytes()
    with open(path, "ab") as handle:  # a writer killed half way through a line
        handle.write(json.dumps(line("b")).encode()[:40])
    assert [r["key"] for r in read_jsonl_lines(path)] == ["a"]
    reopened = CompletionCache(path)
    assert len(reopened) == 1 and "b" not in reopened
    reopened.put("c", completion(text="third"))
    assert reopened.get("c").text == "third" and reopened.get("a").text == "Final answer: 44.13"  # offsets after the cut
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
        return await asyncio.gather(*(cache.aput(k, completion(text=k), **META) for k in keys),
                                    cache.aput("trunc", completion(finish="length")))

    results = asyncio.run(put_all())
    assert results[-1] is False and all(results[:-1])
    cache.close()
    keys = [r["key"] for r in read_jsonl_lines(path)]
    assert sorted(keys) == sorted(f"k{i}" for i in range(40))
    assert all(CompletionCache(path).get(f"k{i}").text == f"k{i}" for i in range(40))


def test_appends_are_fsynced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    cache = CompletionCache(tmp_path / "c.jsonl")
    cache.put("a", completion())
    assert synced, "put returned before fsync"
    synced.clear()
    assert cache.put_many([("b", completion(), {}), ("c", completion(finish="length"), {}), ("d", completion(), {})]) == [True, False, True]
    assert len(synced) == 1, "one fsync per group"
    cache.close()


BAD_LINES = [b"not json\n", b'{"no_key": 1}\n', b"[1, 2]\n", b'"x"\n', b'{"key": "k1", "completion": null}\n',
             b'{"key": "k2", "completion": {"text": 7, "finish_reason": "stop"}}\n',
             b'{"key": "k3", "completion": {"text": "", "finish_reason": "stop"}}\n',
             b'{"key": "k4", "completion": {"text": "x", "finish_reason": "length"}}\n',
             b'{"key": "k5", "completion": {"text": "x", "prompt_tokens": "many"}}\n']


@pytest.mark.parametrize("bad", BAD_LINES)
def test_reader_skips_lines_it_cannot_use(tmp_path, bad):
    """Lines an older version wrote from bad bodies, or damaged ones, are misses, never crashes."""
    path = tmp_path / "c.jsonl"
    good = (json.dumps(line("a")) + "\n").encode()
    path.write_bytes(bad + good)
    cache = CompletionCache(path)
    assert "a" in cache and len(cache) == 1 and cache.get("a").text == "Final answer: 44.13"


def test_lone_surrogates_are_stored_as_replacement_characters(tmp_path):
    cache = CompletionCache(tmp_path / "c.jsonl")
    assert cache.put("k", completion(text="x\ud800y"), note="a\udfff")
    assert cache.get("k").text == "x\ufffdy" and cache.get_record("k")["note"] == "a\ufffd"
    cache.close()
    assert CompletionCache(tmp_path / "c.jsonl").get("k").text == "x\ufffdy"


def test_an_old_sqlite_cache_is_one_clear_error(tmp_path):
    import sqlite3

    sqlite3.connect(tmp_path / "cache.sqlite").execute("CREATE TABLE responses (key TEXT)")
    with pytest.raises(InputError, match="SQLite cache of an older"):
        CompletionCache(tmp_path / "cache.sqlite")
    with pytest.raises(InputError, match="folder"):
        CompletionCache(tmp_path)
