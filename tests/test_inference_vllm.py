"""The vLLM backend against a fake `vllm` package (vLLM itself is never installed here: it swaps torch).

    python -m pytest tests/test_inference_vllm.py -q

The fake mirrors the names and signatures of the real API (vllm.LLM(model, **engine_args),
LLM.get_tokenizer(), LLM.generate(prompts, sampling_params, *, use_tqdm, lora_request),
LLM.llm_engine.model_config.max_model_len, LoRAConfig's allowed max_lora_rank values, vllm.SamplingParams(n, temperature, top_p, seed, stop,
max_tokens), vllm.lora.request.LoRARequest(lora_name, lora_int_id, lora_path), RequestOutput
.prompt_token_ids / .outputs[0].text/.token_ids/.finish_reason) and, like the real engine, raises
for a whole batch when one prompt is longer than max_model_len.
"""
from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass, field

import pytest

from ledgerlm.errors import InputError
from ledgerlm.inference.cache import CompletionCache, generate_cached
from ledgerlm.inference.sampling import GenerationParams, make_sampler


class FakeTokenizer:
    """One token per whitespace word; a chat template that tags each turn."""

    def apply_chat_template(self, messages, tools=None, add_generation_prompt=True, tokenize=False):
        assert tokenize is False and add_generation_prompt is True
        text = " ".join(f"<{m['role']}> {m['content']}" for m in messages)
        return text + (" <tools>" if tools else "") + " <assistant>"

    def encode(self, text, add_special_tokens=True):
        return [len(word) for word in text.split()]


@dataclass
class CompletionOutput:
    text: str
    token_ids: list[int]
    finish_reason: str | None


@dataclass
class RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput] = field(default_factory=list)


def make_fake_vllm(calls: dict, engine_max_len: int = 40):
    vllm = types.ModuleType("vllm")
    lora = types.ModuleType("vllm.lora")
    request = types.ModuleType("vllm.lora.request")

    @dataclass
    class LoRARequest:
        lora_name: str
        lora_int_id: int
        lora_path: str

    class SamplingParams:
        def __init__(self, *, n=1, temperature=1.0, top_p=1.0, seed=None, stop=None, max_tokens=16):
            self.n, self.temperature, self.top_p, self.seed, self.stop, self.max_tokens = n, temperature, top_p, seed, stop, max_tokens

    class LLM:
        def __init__(self, model, **kwargs):
            calls["init"] = {"model": model, **kwargs}
            if kwargs.get("enable_lora") and kwargs.get("max_lora_rank") not in (8, 16, 32, 64, 128, 256, 320, 512):
                raise ValueError(f"max_lora_rank ({kwargs.get('max_lora_rank')}) must be one of (8, 16, 32, 64, 128, 256, 320, 512).")  # LoRAConfig
            self.llm_engine = types.SimpleNamespace(model_config=types.SimpleNamespace(max_model_len=kwargs.get("max_model_len", engine_max_len)))

        def get_tokenizer(self, lora_request=None):
            return FakeTokenizer()

        def generate(self, prompts, sampling_params=None, *, use_tqdm=True, lora_request=None):
            calls.setdefault("generate", []).append({"prompts": prompts, "params": sampling_params, "use_tqdm": use_tqdm, "lora": lora_request})
            limit = self.llm_engine.model_config.max_model_len
            outputs = []
            for prompt in prompts:
                ids = prompt["prompt_token_ids"]
                if len(ids) > limit:  # the real engine rejects the whole call
                    raise ValueError(f"The decoder prompt (length {len(ids)}) is longer than the maximum model length of {limit}.")
                words = ["tok"] * min(sampling_params.max_tokens, 3 if sum(ids) % 2 else 50)
                finish = "length" if len(words) == sampling_params.max_tokens else "stop"
                outputs.append(RequestOutput(ids, [CompletionOutput(" ".join(words), list(range(len(words))), finish)]))
            return outputs

    vllm.LLM, vllm.SamplingParams, vllm.lora = LLM, SamplingParams, lora
    lora.request, request.LoRARequest = request, LoRARequest
    return {"vllm": vllm, "vllm.lora": lora, "vllm.lora.request": request}


@pytest.fixture()
def fake_vllm(monkeypatch):
    calls: dict = {}
    for name, module in make_fake_vllm(calls).items():
        monkeypatch.setitem(sys.modules, name, module)
    return calls


def conversations(*sizes):
    return [[{"role": "user", "content": " ".join(["w"] * size)}] for size in sizes]


def test_whole_list_in_one_call_with_vllms_progress_bar_and_the_cache(fake_vllm, tmp_path):
    sampler = make_sampler("vllm", pretrained="org/model", max_model_len="128", gpu_memory_utilization="0.5",
                           tensor_parallel_size="2", dtype="bfloat16", trust_remote_code="false")
    assert fake_vllm["init"] == {"model": "org/model", "tensor_parallel_size": 2, "gpu_memory_utilization": 0.5,
                                 "trust_remote_code": False, "max_model_len": 128, "dtype": "bfloat16"}
    batch = conversations(*range(1, 71))  # 70 requests: more than the default chunk of 32
    params = GenerationParams(max_tokens=8, temperature=0.6, top_p=0.9, seed=5, stop=("###",))
    with CompletionCache(tmp_path / "c.jsonl") as cache:
        out, stats = generate_cached(sampler, batch, params, cache=cache)
    [call] = fake_vllm["generate"]
    assert len(call["prompts"]) == 70 and call["use_tqdm"] is True and call["lora"] is None
    p = call["params"]
    assert (p.n, p.max_tokens, p.temperature, p.top_p, p.seed, p.stop) == (1, 8, 0.6, 0.9, 5, ["###"])
    assert call["prompts"][0] == {"prompt_token_ids": FakeTokenizer().encode(sampler.render(batch[0]))}
    assert {c.finish_reason for c in out} == {"stop", "length"}  # max_tokens 8 truncates the 50-word answers
    assert stats["uncacheable"] == sum(c.finish_reason == "length" for c in out) > 0
    with CompletionCache(tmp_path / "c.jsonl") as cache:  # a rerun asks again only for the truncated ones, in one call
        generate_cached(sampler, batch, params, cache=cache)
    assert len(fake_vllm["generate"]) == 2 and len(fake_vllm["generate"][1]["prompts"]) == stats["uncacheable"]


def test_a_prompt_over_max_model_len_is_one_item_error(fake_vllm, tmp_path):
    sampler = make_sampler("vllm:m", max_model_len=12)
    batch = conversations(2, 30, 3)
    items = [{"id": "a"}, {"id": "fi-0042"}, {"id": "c"}]
    with CompletionCache(tmp_path / "c.jsonl") as cache:
        out, stats = generate_cached(sampler, batch, GenerationParams(max_tokens=4), cache=cache, items=items)
    assert out[0].finish_reason != "error" and out[2].finish_reason != "error" and out[1].finish_reason == "error"
    assert "fi-0042" in out[1].error and "32 tokens" in out[1].error and "max_model_len 12" in out[1].error
    assert out[1].prompt_tokens == 32 and out[0].error is None and out[2].error is None
    assert [len(p["prompt_token_ids"]) for p in fake_vllm["generate"][0]["prompts"]] == [4, 5]  # the long one never reached the engine
    assert stats["uncacheable"] >= 1 and len(cache) + stats["uncacheable"] == 3


def test_engine_max_len_is_used_when_not_given(fake_vllm):
    sampler = make_sampler("vllm:m")  # the fake engine's max_model_len is 40
    assert sampler.max_model_len == 40 and "max_model_len" not in fake_vllm["init"]
    [c] = sampler.generate(conversations(45), GenerationParams())
    assert c.finish_reason == "error" and "max_model_len 40" in c.error


def test_lora_adapter_through_lorarequest(fake_vllm, tmp_path):
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"r": 16, "lora_alpha": 32, "peft_type": "LORA"}))
    sampler = make_sampler("vllm:base", peft=str(adapter))
    assert fake_vllm["init"]["enable_lora"] is True and fake_vllm["init"]["max_lora_rank"] == 16 and fake_vllm["init"]["max_loras"] == 1
    sampler.generate(conversations(2), GenerationParams(max_tokens=2))
    lora = fake_vllm["generate"][0]["lora"]
    assert (lora.lora_name, lora.lora_int_id, lora.lora_path) == ("adapter", 1, str(adapter))
    assert sampler.model_id == f"vllm:base+peft:{adapter}"
    assert make_sampler("vllm:base", peft=str(adapter), max_lora_rank="64") and fake_vllm["init"]["max_lora_rank"] == 64
    with pytest.raises(InputError, match="below the adapter's rank"):
        make_sampler("vllm:base", peft=str(adapter), max_lora_rank=8)
    with pytest.raises(InputError, match="not a PEFT adapter"):
        make_sampler("vllm:base", peft=str(tmp_path))


@pytest.mark.parametrize("rank, engine_rank", [(2, 8), (8, 8), (16, 16), (17, 32), (300, 320), (512, 512)])
def test_lora_rank_rounds_up_to_a_rank_vllm_accepts(fake_vllm, tmp_path, rank, engine_rank):
    (tmp_path / "adapter_config.json").write_text(json.dumps({"r": rank}))
    make_sampler("vllm:base", peft=str(tmp_path))
    assert fake_vllm["init"]["max_lora_rank"] == engine_rank


def test_lora_rank_above_vllms_largest_is_one_clear_error(fake_vllm, tmp_path):
    (tmp_path / "adapter_config.json").write_text(json.dumps({"r": 1024}))
    with pytest.raises(InputError, match="largest rank vLLM serves"):
        make_sampler("vllm:base", peft=str(tmp_path))
