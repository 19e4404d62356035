"""Odd HTTP 200 bodies, lone surrogates, empty completions, gzip bombs and credentials (#14.2, .3, .9).

    python -m pytest tests/robustness/test_hostile_server.py -q

Every body comes from a loopback fake server (tests/robustness/fake_openai.py, 127.0.0.1 only, one
request per item: max_retries=0). A bad body is a per-item error that is never cached; a lone
surrogate reaches the completion cache (both its writers) and run files as U+FFFD;
credentials written into --base-url appear nowhere (model id, errors, results.json, cache).
"""
from __future__ import annotations

import asyncio
import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledgerlm.inference.backends.openai_compat import parse_body, redact_url
from ledgerlm.inference.cache import CompletionCache, generate_cached, read_jsonl_lines
from ledgerlm.evaluate.runfiles import atomic_write_text, read_jsonl, write_run
from ledgerlm.inference.sampling import Completion, GenerationParams, make_sampler

from .fake_openai import RawServer

GOOD = {"choices": [{"message": {"content": "Final answer: 4"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
ODD_BODIES = [b"[]", b"null", b"{}", b'{"choices": []}', b'{"choices": [null]}', b'{"choices": "x"}', b'{"choices": [1]}',
              b'{"choices": [{"message": "hi"}]}', b'{"choices": [{"message": {"content": 7}}]}',
              b'{"choices": [{"message": {"content": ["a", "b"]}}]}', b'{"choices": [{"message": {"content": {"x": 1}}}]}',
              b'{"choices": [{"message": {"content": "ok", "tool_calls": "x"}}]}',
              b'{"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": "many"}}',
              b"not json", b"\xff\xfe\x00garbage", b"[" * 100_000, b'{"choices": [{"message": {"content": "ok"}}]' ]
MESSAGES = [[{"role": "user", "content": "2+2?"}]]


def sampler_for(url: str):
    return make_sampler("openai:fake", base_url=url, max_retries=0, timeout=10)


def test_odd_200_bodies_are_per_item_errors_never_cached(tmp_path):
    """All odd bodies in one batch (one request each), then a rerun against a sane server."""
    cache = CompletionCache(tmp_path / "cache.jsonl")
    batch = [[{"role": "user", "content": f"item {i}"}] for i in range(len(ODD_BODIES))]
    with RawServer(list(ODD_BODIES)) as server:
        out, stats = generate_cached(sampler_for(server.url), batch, GenerationParams(max_tokens=8), cache=cache)
        assert server.hits == len(ODD_BODIES)  # one request per item: no retry loop on a bad body
    for c in out:
        assert c.finish_reason == "error" and c.error.startswith("malformed response body"), c
        assert "\n" not in c.error
    assert len(cache) == 0 and stats["uncacheable"] == len(ODD_BODIES)
    with RawServer([json.dumps(GOOD).encode()]) as server:  # the rerun asks again and caches the good answers
        out, stats = generate_cached(sampler_for(server.url), batch, GenerationParams(max_tokens=8), cache=cache)
    assert {c.text for c in out} == {"Final answer: 4"} and len(cache) == len(ODD_BODIES) and stats["cached"] == 0


def test_lone_surrogates_through_eval_cache_and_run_files(tmp_path):
    body = b'{"choices": [{"message": {"content": "Final answer: 4 \\ud800 \\udfff", "reasoning_content": "\\udc80"}}]}'
    cache = CompletionCache(tmp_path / "cache.jsonl")
    with RawServer([body]) as server:
        [c], _ = generate_cached(sampler_for(server.url), MESSAGES, GenerationParams(max_tokens=8), cache=cache)
    assert c.text == "Final answer: 4 \ufffd \ufffd" and c.reasoning == "\ufffd"
    cache.close()
    again = CompletionCache(tmp_path / "cache.jsonl")
    [key] = [r["key"] for r in read_jsonl_lines(tmp_path / "cache.jsonl")]
    assert again.get(key).text == c.text
    # a completion made elsewhere (e.g. a local backend) with a raw lone surrogate: cached and written as U+FFFD
    assert again.put("k2", Completion(text="x\ud800y"), model="m") and again.get("k2").text == "x\ufffdy"
    atomic_write_text(tmp_path / "out.json", json.dumps({"t": "a\udfffb"}, ensure_ascii=False))
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["t"] == "a\ufffdb"
    assert not list(tmp_path.glob(".out.json.*"))  # no temp file left behind


def test_cache_writer_thread_survives_surrogates_and_bad_records(tmp_path):
    cache = CompletionCache(tmp_path / "cache.jsonl")

    async def run():
        ok = await asyncio.wait_for(cache.aput("k1", Completion(text="Final \ud800 answer: 1")), 10)
        with pytest.raises(TypeError):  # not JSON-serialisable: this waiter gets the error ...
            await asyncio.wait_for(cache.aput("k2", Completion(text="x"), bad=object()), 10)
        # ... and the thread is still alive for the next one (before the fix: a dead thread, distill hung forever)
        ok3 = await asyncio.wait_for(cache.aput("k3", Completion(text="y")), 10)
        empty = await cache.aput("k4", Completion(text=""))
        return ok, ok3, empty

    assert asyncio.run(run()) == (True, True, False)

    async def same_group():  # a bad record in the same write group fails alone; its neighbours are stored
        return await asyncio.gather(cache.aput("k5", Completion(text="z")),
                                    cache.aput("k6", Completion(text="w"), bad={1, 2}),
                                    cache.aput("k7", Completion(text="v")), return_exceptions=True)

    five, six, seven = asyncio.run(same_group())
    assert five is True and seven is True and isinstance(six, TypeError)
    cache.close()
    reread = CompletionCache(tmp_path / "cache.jsonl")
    assert set(reread._index) == {"k1", "k3", "k5", "k7"}
    assert reread.get("k1").text == "Final \ufffd answer: 1"


def test_empty_completion_with_stop_is_not_cached(tmp_path):
    cache = CompletionCache(tmp_path / "c.jsonl")
    empty = json.dumps({"choices": [{"message": {"content": ""}, "finish_reason": "stop"}]}).encode()
    with RawServer([empty]) as server:
        [c], stats = generate_cached(sampler_for(server.url), MESSAGES, GenerationParams(max_tokens=8), cache=cache)
    assert c.text == "" and stats["uncacheable"] == 1 and len(cache) == 0


def test_gzip_bomb_body_is_refused_without_inflating_it(monkeypatch):
    import ledgerlm.inference.backends.openai_compat as oc

    monkeypatch.setattr(oc, "MAX_BODY_BYTES", 1 << 20)
    bomb = gzip.compress(b" " * (16 << 20), 9)  # 16 MiB of blanks in ~16 KB (the cap: 1 MiB)
    with RawServer([(bomb, {"Content-Encoding": "gzip"})]) as server:
        [c] = sampler_for(server.url).generate(MESSAGES, GenerationParams(max_tokens=8))
    assert c.finish_reason == "error" and "after decompression" in c.error


def test_credentials_in_base_url_are_redacted_everywhere(tmp_path, capsys):
    secret = "s3cr3t-Pa55"
    with RawServer([json.dumps(GOOD).encode()]) as server:
        url = server.url.replace("http://", f"http://bob:{secret}@") + f"?api_key={secret}&v=1"
        sampler = sampler_for(url)
        cache = CompletionCache(tmp_path / "run" / "cache.jsonl")
        [c], _ = generate_cached(sampler, MESSAGES, GenerationParams(max_tokens=8), cache=cache)
        cache.close()
    assert c.text == "Final answer: 4"
    assert secret not in sampler.model_id and "***" in sampler.model_id
    write_run(tmp_path / "run", {"model": sampler.model_id, "config": {"backend_options": {"base_url": url}}},
              [{"id": "1", "prompt": "", "response": c.text, "reasoning": None, "answer_text": c.text, "extracted": 4,
                "score": 1, "error_reason": None}])
    for path in (tmp_path / "run").iterdir():
        assert secret.encode() not in path.read_bytes(), path
    dead = sampler_for(f"http://bob:{secret}@127.0.0.1:9/v1?token={secret}")  # nothing listens on port 9
    [err] = dead.generate(MESSAGES, GenerationParams(max_tokens=8))
    assert err.error and secret not in err.error
    assert secret not in capsys.readouterr().err
    assert redact_url(f"https://u:{secret}@h/v1?key={secret}&x=1") == "https://***@h/v1?key=***&x=1"


json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                          lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
                          max_leaves=20)
choice = st.fixed_dictionaries({}, optional={"message": json_value | st.fixed_dictionaries({}, optional={"content": json_value, "tool_calls": json_value, "reasoning_content": json_value}),
                                             "finish_reason": json_value})
body = st.one_of(json_value, st.fixed_dictionaries({"choices": json_value | st.lists(choice | json_value, max_size=3)},
                                                   optional={"usage": json_value}))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body)
def test_fuzz_bodies_never_raise(payload):
    """Any JSON body: a Completion, either clean (str text) or an error that is never cacheable."""
    from ledgerlm.inference.cache import cacheable

    c = parse_body(json.dumps(payload).encode())
    assert isinstance(c.text, str)
    if c.error:
        assert c.finish_reason == "error" and not cacheable(c)
    json.dumps(c.tool_calls)  # what is kept is serialisable


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_raw_bytes_never_raise(raw):
    assert isinstance(parse_body(raw).text, str)


def test_score_cli_with_lone_surrogates_in_predictions(tmp_path, capsys):
    """`ledgerlm score` crashed in atomic_write_text on a `"\\ud800"` escape; now it writes U+FFFD."""
    from eval_fixtures import make_rows

    from ledgerlm.cli import main as ledgerlm_main

    rows = make_rows(4, seed=3)
    for row in rows:
        row["response"] = "Final answer: 1 \ud800"
    text = "".join(json.dumps(r) + "\n" for r in rows)  # ensure_ascii: the lone surrogate travels as an escape
    assert "\\ud800" in text
    (tmp_path / "pred.jsonl").write_text(text, encoding="utf-8")
    code = ledgerlm_main(["score", "--benchmark", "finindices", "--predictions", str(tmp_path / "pred.jsonl"), "--out", str(tmp_path / "run")])
    assert code == 0, capsys.readouterr().err
    samples = read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert len(samples) == 4 and all("\ufffd" in s["response"] for s in samples)


def test_caches_poisoned_by_an_older_version_are_misses_not_crashes(tmp_path):
    """Rows an older version cached from bad bodies (the issue: every rerun then crashed loading them)."""
    lines = ['{"key": "k1", "completion": null}', '{"key": "k2", "completion": {"text": 7, "finish_reason": "stop"}}',
             '{"key": "k3", "completion": {"text": "", "finish_reason": "stop"}}', '[1, 2]', '"x"',
             '{"key": "k4", "completion": {"text": "Final answer: 1", "finish_reason": "stop"}}']
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cache = CompletionCache(tmp_path / "d.jsonl")
    assert set(cache._index) == {"k4"} and [cache.get(k) for k in ("k1", "k2", "k3")] == [None] * 3


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(body)
def test_fuzz_bodies_many(payload):
    """The fuzz above with 3000 examples (`pytest -m slow`)."""
    test_fuzz_bodies_never_raise.hypothesis.inner_test(payload)


def test_eval_cli_never_writes_credentials(tmp_path, capsys):
    """`ledgerlm eval --base-url http://user:secret@host/v1?api_key=secret`: not in stderr, results.json or the cache."""
    from eval_fixtures import make_rows, write_dataset

    from ledgerlm.cli import main as ledgerlm_main

    secret = "hunter2-Secret"
    write_dataset(tmp_path / "data", make_rows(2, seed=1))
    with RawServer([json.dumps(GOOD).encode()]) as server:
        url = server.url.replace("http://", f"http://bob:{secret}@") + f"?api_key={secret}"
        code = ledgerlm_main(["eval", "--benchmark", "finindices", "--model", "openai:m", "--base-url", url, "--max-retries", "0",
                              "--data", str(tmp_path / "data"), "--out", str(tmp_path / "run"), "--limit", "2"])
    dead = ledgerlm_main(["eval", "--benchmark", "finindices", "--model", "openai:m", "--base-url", f"http://bob:{secret}@127.0.0.1:9/v1",
                          "--max-retries", "0", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "dead"), "--limit", "2"])
    out, err = capsys.readouterr()
    assert code == 0 and dead in (0, 3) and secret not in out + err
    files = [p for p in tmp_path.rglob("*") if p.is_file() and "data" not in p.parts]
    assert any(p.name == "results.json" for p in files) and any(p.name.startswith("cache.") for p in files)
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
