"""Sampler backends end to end: a tiny random Llama through `hf:`, a scripted OpenAI-compatible
server through `openai:` (latency, 429 + Retry-After, 500, dropped connections), and the cache."""
from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # eval_fixtures, openai_stub_server
from eval_fixtures import build_tiny_model, make_rows, write_dataset  # noqa: E402
from openai_stub_server import StubServer  # noqa: E402

from ledgerlm.errors import InputError  # noqa: E402
from ledgerlm.inference.backends import make_backend  # noqa: E402
from ledgerlm.inference.cache import CompletionCache, generate_cached  # noqa: E402
from ledgerlm.evaluate.cli import eval_main  # noqa: E402
from ledgerlm.evaluate.runfiles import SAMPLE_FIELDS, read_run  # noqa: E402
from ledgerlm.inference.sampling import Completion, GenerationParams  # noqa: E402


@pytest.fixture(scope="module")
def tiny_model(tokenizer_json, tmp_path_factory):
    return build_tiny_model(tokenizer_json, tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture()
def dataset(tmp_path):
    rows = make_rows(24, seed=11)
    write_dataset(tmp_path / "data", rows)
    return tmp_path / "data", rows


def assert_valid_run(run, n):
    results, samples = read_run(run)
    assert results["n"] == n == len(samples)
    assert all(f in s for s in samples for f in SAMPLE_FIELDS)
    assert all(s["score"] in (0, 1) for s in samples)
    acc = results["metrics"]["accuracy"]
    assert acc["ci_low"] <= acc["value"] <= acc["ci_high"]
    assert {(g["paradigm"], g["hint"]) for g in results["metrics"]["by_paradigm_hint"]} == {(s["paradigm"], s["hint"]) for s in samples}
    return results, samples


def test_hf_tiny_model_end_to_end(tiny_model, dataset, tmp_path):
    data, _ = dataset
    run = tmp_path / "run-hf"
    assert eval_main(["--benchmark", "finindices", "--model", f"hf:{tiny_model}", "--data", str(data), "--out", str(run),
                      "--limit", "20", "--max-tokens", "6", "--batch-size", "8", "--n-boot", "200"]) == 0
    results, samples = assert_valid_run(run, 20)
    assert all(s["prompt_tokens"] > 10 and 0 < s["completion_tokens"] <= 6 for s in samples)
    assert results["model"] == f"hf:{tiny_model}" and results["config"]["generation"]["max_tokens"] == 6
    assert results["metrics"]["truncated_rate"] > 0  # a random model rarely emits EOS within 6 tokens


def test_hf_batched_equals_sequential_greedy(tiny_model):
    sampler = make_backend(f"hf:{tiny_model}", batch_size=4, dtype="float32")  # bf16 (the CPU default) has batch effects
    batch = [r["messages"] for r in make_rows(5, seed=5)]
    params = GenerationParams(max_tokens=4)
    batched = [c.text for c in sampler.generate(batch, params)]
    sampler.batch_size = 1
    assert [c.text for c in sampler.generate(batch, params)] == batched  # left padding does not change greedy outputs
    sampler.batch_size, sampler.sort_by_length = 4, False  # batches in input order instead of by prompt length
    assert [c.text for c in sampler.generate(batch, params)] == batched  # sorting restores each result to its item


def test_hf_cpu_default_dtype_is_bf16_only_where_native(tiny_model, monkeypatch):
    from ledgerlm.inference.backends import hf

    monkeypatch.setattr(hf.torch.cpu, "_is_avx512_bf16_supported", lambda: True, raising=False)
    assert hf.default_cpu_dtype() == "bfloat16"
    sampler = make_backend(f"hf:{tiny_model}", device="cpu")
    assert sampler.dtype == "bfloat16" and next(sampler.model.parameters()).dtype == hf.torch.bfloat16
    monkeypatch.setattr(hf.torch.cpu, "_is_avx512_bf16_supported", lambda: False, raising=False)
    monkeypatch.setattr(hf.torch.cpu, "_is_amx_tile_supported", lambda: False, raising=False)
    assert hf.default_cpu_dtype() == "float32"
    assert make_backend(f"hf:{tiny_model}", device="cpu", dtype="float32").dtype == "float32"  # an explicit dtype wins
    with pytest.raises(InputError, match="unknown dtype 'bf16'"):
        make_backend(f"hf:{tiny_model}", dtype="bf16")


def test_hf_prompt_over_max_model_len_is_one_item_error(tiny_model):
    sampler = make_backend(f"hf:{tiny_model}", max_model_len="40", batch_size=4)
    batch = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "word " * 60}], [{"role": "user", "content": "ok"}]]
    out = sampler.generate(batch, GenerationParams(max_tokens=2), items=[{"id": "a"}, {"id": "fi-long"}, {"id": "c"}])
    assert out[1].finish_reason == "error" and "fi-long" in out[1].error and "max_model_len 40" in out[1].error
    assert out[1].prompt_tokens >= 40 and out[0].error is None and out[2].error is None and 0 < out[0].completion_tokens <= 2
    assert make_backend(f"hf:{tiny_model}").max_model_len == 2048  # default: the config's max_position_embeddings


def oracle_responder(rows):
    by_prompt = {r["messages"][-1]["content"]: r for r in rows}
    return lambda body: {"content": by_prompt[body["messages"][-1]["content"]]["solution"]}


def test_openai_backend_end_to_end_with_faults(dataset, tmp_path, monkeypatch, caplog):
    data, rows = dataset
    monkeypatch.setenv("LEDGER_TEST_KEY", "sk-secret-value")
    script = [{"status": 429, "retry_after": "0.2"}, {"status": 500}, {"drop": True}, {"status": 503, "latency": 0.05}]
    caplog.set_level(logging.DEBUG)
    with StubServer(script=script, responder=oracle_responder(rows), latency=0.02) as server:
        run = tmp_path / "run-openai"
        began = time.perf_counter()
        assert eval_main(["--benchmark", "finindices", "--model", "openai:stub-model", "--base-url", server.url,
                          "--api-key-env", "LEDGER_TEST_KEY", "--concurrency", "4", "--data", str(data), "--out", str(run),
                          "--limit", "20", "--n-boot", "200"]) == 0
        elapsed = time.perf_counter() - began
    results, samples = assert_valid_run(run, 20)
    assert results["metrics"]["accuracy"]["value"] == 1.0  # every scripted fault was retried away
    assert len(server.requests) == 24 and elapsed >= 0.2  # 20 answers + 4 faults; the Retry-After wait was honoured
    assert all(r["model"] == "stub-model" and r["max_tokens"] == 8192 for r in server.requests)
    assert "sk-secret-value" not in caplog.text and "sk-secret-value" not in (run / "results.json").read_text()


def test_openai_retry_policy_and_native_fields(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    tool_call = {"id": "call_1", "type": "function", "function": {"name": "calc", "arguments": "{\"x\": 1}"}}
    script = [{"status": 400}, {"content": None, "tool_calls": [tool_call]},
              {"content": "42", "reasoning_content": "think hard"}, {"content": "4", "finish_reason": "length"}]
    with StubServer(script=script) as server:
        sampler = make_backend("openai:m", base_url=server.url, concurrency=1, backoff_base=0.01)
        out = sampler.generate([[{"role": "user", "content": str(i)}] for i in range(4)], GenerationParams(max_tokens=4),
                               tools=[{"type": "function", "function": {"name": "calc", "parameters": {}}}])
    assert out[0].finish_reason == "error" and "HTTP 400" in out[0].error  # 4xx is not retried
    assert len(server.requests) == 4 and sampler.retries_done == 0
    assert out[1].tool_calls == [tool_call] and out[1].finish_reason == "tool_calls"
    assert (out[2].text, out[2].reasoning) == ("42", "think hard")
    assert out[3].finish_reason == "length"
    assert "tools" in server.requests[0]


def test_openai_gives_up_after_max_retries():
    with StubServer(responder=lambda body: {"status": 500}) as server:
        sampler = make_backend("openai:m", base_url=server.url, max_retries=2, backoff_base=0.01)
        [completion] = sampler.generate([[{"role": "user", "content": "x"}]], GenerationParams())
    assert completion.finish_reason == "error" and "gave up after 2 retries" in completion.error
    assert len(server.requests) == 3


class CountingSampler:
    model_id = "counting"

    def __init__(self, replies):
        self.replies, self.calls = replies, []

    def generate(self, batch, params, **kwargs):
        self.calls.append(len(batch))
        return [self.replies(m) for m in batch]


def test_cache_skips_errors_and_truncations_and_resumes(tmp_path):
    def reply(messages):
        content = messages[-1]["content"]
        if content == "bad":
            return Completion(text="", finish_reason="error", error="HTTP 500")
        if content == "long":
            return Completion(text="partial", finish_reason="length")
        return Completion(text=f"answer {content}")

    batch = [[{"role": "user", "content": c}] for c in ("a", "bad", "long", "b")]
    cache = CompletionCache(tmp_path / "cache.jsonl")
    first = CountingSampler(reply)
    out, stats = generate_cached(first, batch, GenerationParams(), cache=cache, chunk_size=2)
    assert [c.text for c in out] == ["answer a", "", "partial", "answer b"]
    assert (stats["generated"], stats["uncacheable"], len(cache)) == (4, 2, 2)
    second = CountingSampler(reply)  # a rerun: only the error and the truncation are asked again
    out2, stats2 = generate_cached(second, batch, GenerationParams(), cache=CompletionCache(tmp_path / "cache.jsonl"))
    assert second.calls == [2] and stats2["cached"] == 2 and out2[0].text == "answer a"
    other_seed = CountingSampler(reply)  # a different seed is a different key
    generate_cached(other_seed, batch, GenerationParams(seed=1), cache=cache)
    assert other_seed.calls == [4]


def test_interrupted_run_resumes_from_cache(dataset, tmp_path, monkeypatch):
    data, rows = dataset
    run = tmp_path / "run"
    with StubServer(responder=oracle_responder(rows)) as server:
        args = ["--benchmark", "finindices", "--model", "openai:m", "--base-url", server.url, "--data", str(data), "--out", str(run), "--n-boot", "100"]
        import ledgerlm.evaluate.harness.runner as cache_module  # the runner's generate_cached (ledgerlm.inference.cache)

        real = cache_module.generate_cached

        def crash_after_first_chunk(*a, **kw):
            kw["chunk_size"] = 8
            kw["on_chunk"] = lambda done, total: (_ for _ in ()).throw(KeyboardInterrupt) if done >= 8 else None
            return real(*a, **kw)

        monkeypatch.setattr(cache_module, "generate_cached", crash_after_first_chunk)
        with pytest.raises(KeyboardInterrupt):
            eval_main(args)
        assert not (run / "results.json").exists() and len(server.requests) == 8
        monkeypatch.setattr(cache_module, "generate_cached", real)
        assert eval_main(args) == 0
    assert len(server.requests) == 24  # 8 before the crash + the 16 missing ones, nothing twice
    results, _ = assert_valid_run(run, 24)
    assert results["time"]["cached"] == 8


def test_unknown_backend_and_options_fail_loudly():
    from ledgerlm.errors import InputError

    with pytest.raises(InputError, match="unknown backend"):
        make_backend("foo:bar")
    with pytest.raises(TypeError, match="colour"):
        make_backend("openai:m", colour="blue")
    import ledgerlm.evaluate.finindices  # noqa: F401  (its package adds the wrong_unit row)

    assert json.dumps(make_backend("wrong_unit").model_id) == '"wrong_unit_x1000"'


def test_hf_backend_applies_a_peft_adapter(tiny_model, tmp_path):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    model = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny_model), LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    model.save_pretrained(tmp_path / "adapter")
    sampler = make_backend(f"hf:{tiny_model}", peft=str(tmp_path / "adapter"), batch_size=2)
    assert sampler.model_id == f"hf:{tiny_model}+peft:{tmp_path / 'adapter'}"
    from peft import PeftModel

    assert isinstance(sampler.model, PeftModel)
    [completion] = sampler.generate([[{"role": "user", "content": "hi"}]], GenerationParams(max_tokens=2))
    assert completion.completion_tokens <= 2 and completion.prompt_tokens > 0


def test_vllm_backend_is_optional():
    import importlib.util

    from ledgerlm.errors import LedgerError

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here; this checks the message when it is not")
    with pytest.raises(LedgerError, match="vLLM is not installed"):
        make_backend("vllm:some/model")


def test_apply_chat_template_false_sends_plain_text_through_hf(tiny_model, dataset, tmp_path):
    """`--apply_chat_template false` (lm-eval's flag): hf renders system + blank line + user, no template tokens; generation runs
    and results.json records the value; the default run renders the chat template (the prompts differ)."""
    data, rows = dataset
    messages = rows[0]["messages"]
    plain = make_backend(f"hf:{tiny_model}", chat_template="false")
    templated = make_backend(f"hf:{tiny_model}")
    assert plain.render(messages) == messages[0]["content"] + "\n\n" + messages[1]["content"]
    assert templated.render(messages) != plain.render(messages) and messages[1]["content"] in templated.render(messages)
    runs = {}
    for flag in ("false", None):
        out = tmp_path / f"run-{flag}"
        argv = ["--model", "hf", "--model_args", f"pretrained={tiny_model},dtype=float32", "--tasks", "finindices", "--data", str(data),
                "--output_path", str(out), "--limit", "4", "--gen_kwargs", "max_gen_toks=4", "--bootstrap_iters", "50",
                "--log_samples", "--no_progress"] + (["--apply_chat_template", flag] if flag else [])
        assert eval_main(argv) == 0
        runs[flag] = read_run(out)
    (res_plain, s_plain), (res_chat, s_chat) = runs["false"], runs[None]
    assert res_plain["config"]["apply_chat_template"] is False and res_chat["config"]["apply_chat_template"] is True
    assert all(0 < s["completion_tokens"] <= 4 for s in s_plain)
    # same messages logged, fewer prompt tokens without the template's role markers
    assert [s["prompt"] for s in s_plain] == [s["prompt"] for s in s_chat]
    assert all(p["prompt_tokens"] < c["prompt_tokens"] for p, c in zip(s_plain, s_chat))


def test_apply_chat_template_errors_are_one_line(tiny_model, dataset, tmp_path):
    from ledgerlm.evaluate.harness.runner import RunConfig, evaluate

    data = dataset[0]
    with pytest.raises(InputError, match="OpenAI-compatible chat endpoint"):
        evaluate(RunConfig(model="openai", model_args={"model": "m", "base_url": "http://127.0.0.1:9/v1"}, tasks=["finindices"],
                           data=data, output_path=tmp_path / "o", apply_chat_template=False))
    with pytest.raises(InputError, match="no chat template named 'chatml'"):
        make_backend(f"hf:{tiny_model}", chat_template="chatml")
    with pytest.raises(InputError, match="disagree"):
        evaluate(RunConfig(model="hf", model_args={"pretrained": str(tiny_model), "chat_template": "false"}, tasks=["finindices"],
                           data=data, output_path=tmp_path / "h", apply_chat_template="chatml"))
    with pytest.raises(InputError, match="tool"):
        make_backend(f"hf:{tiny_model}", chat_template=False).render([{"role": "user", "content": "x"}], tools=[{"type": "function"}])


def test_vllm_without_chat_template_sends_plain_text_tokens(monkeypatch):
    from test_inference_vllm import FakeTokenizer, make_fake_vllm  # the fake vllm package of the vLLM backend tests

    calls: dict = {}
    for name, module in make_fake_vllm(calls).items():
        monkeypatch.setitem(sys.modules, name, module)
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "two plus two"}]
    plain = make_backend("vllm:m", chat_template="false", max_model_len=64)
    templated = make_backend("vllm:m", max_model_len=64)
    assert plain.render(messages) == "be brief\n\ntwo plus two" != templated.render(messages)
    plain.generate([messages], GenerationParams(max_tokens=4))
    assert calls["generate"][-1]["prompts"] == [{"prompt_token_ids": FakeTokenizer().encode("be brief\n\ntwo plus two")}]


def test_a_named_chat_template_is_used_and_an_unknown_name_is_refused(tiny_model):
    from ledgerlm.inference.backends.prompt import render

    sampler = make_backend(f"hf:{tiny_model}")
    tok = sampler.tokenizer
    default = tok.chat_template
    tok.chat_template = {"default": default, "terse": "{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{% endfor %}"}
    messages = [{"role": "user", "content": "hi"}]
    assert render(tok, messages, None, "terse") == "[user]hi"
    assert render(tok, messages, None, True) == render(tok, messages, None, "default") != "[user]hi"
    with pytest.raises(InputError, match=r"no chat template named '\{\{ 1 \}\}' \(named templates: default, terse\)"):
        render(tok, messages, None, "{{ 1 }}")  # transformers would run an unknown name as a Jinja template
