"""`vllm:PATH` — an in-process vLLM engine (continuous batching); vLLM is imported only when used.

    pip install 'ledgerlm[vllm]'
    python -c "from ledgerlm.inference.sampling import make_sampler; s = make_sampler('vllm', pretrained='Qwen/Qwen3-8B', max_model_len=8192)"

For a separate server (`vllm serve MODEL`), use `openai:MODEL` with `base_url=http://HOST:8000/v1`.

What survives a real run:
- The whole request list goes to one `LLM.generate` call (vLLM schedules it with continuous batching
  and shows its own progress bar, `use_tqdm`); `chunk_size = None` tells `generate_cached` so.
- Prompts are rendered with the model's chat template here (`render`, also the cache key's prompt)
  and tokenized once; a prompt that leaves no room in `max_model_len` becomes one error Completion
  (finish_reason "error", naming the item and both lengths) instead of failing the whole batch.
- `peft=ADAPTER_DIR` serves a LoRA adapter through `vllm.lora.request.LoRARequest`: the engine is
  built with `enable_lora=True` and `max_lora_rank` from the adapter's `adapter_config.json` (`r`),
  rounded up to the next rank vLLM accepts (its LoRAConfig allows only VLLM_LORA_RANKS: r=2 -> 8).
- `chat_template=false` (`ledgerlm eval --apply_chat_template false`): plain text instead of the chat template
  (backends/prompt.py); `chat_template=NAME`: one of the tokenizer's named templates.
- Sampling: temperature, top_p, max_tokens, seed and stop from GenerationParams, per request.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ledgerlm.errors import InputError, LedgerError
from ledgerlm.inference.backends import require_model_folder
from ledgerlm.inference.backends.prompt import render as render_prompt, template_name
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages


VLLM_LORA_RANKS = (8, 16, 32, 64, 128, 256, 320, 512)  # vllm.config.LoRAConfig: max_lora_rank must be one of these


def lora_rank_for_vllm(rank: int) -> int:
    """The smallest max_lora_rank vLLM accepts that holds an adapter of rank `rank`."""
    for allowed in VLLM_LORA_RANKS:
        if rank <= allowed:
            return allowed
    raise InputError(f"LoRA rank r={rank} is above the largest rank vLLM serves ({VLLM_LORA_RANKS[-1]})", field="peft")


def adapter_rank(adapter: str) -> int:
    """The LoRA rank `r` of a PEFT adapter folder (adapter_config.json)."""
    path = Path(adapter) / "adapter_config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        rank = int(config["r"])
    except FileNotFoundError as err:
        raise InputError("no adapter_config.json: not a PEFT adapter folder", path=str(Path(adapter)), field="peft") from err
    except (ValueError, KeyError, TypeError) as err:
        raise InputError(f"adapter_config.json has no integer rank `r` ({err})", path=str(path), field="peft") from err
    if rank < 1:
        raise InputError(f"adapter_config.json: rank r={rank} is not positive", path=str(path), field="peft")
    return rank


class VLLMSampler:
    chunk_size = None  # generate_cached: submit every uncached request at once

    def __init__(self, path: str, *, tensor_parallel_size: int = 1, max_model_len: int | None = None,
                 gpu_memory_utilization: float = 0.9, trust_remote_code: bool = False, dtype: str | None = None,
                 peft: str | None = None, max_lora_rank: int | None = None, revision: str | None = None,
                 enforce_eager: bool | None = None, enable_prefix_caching: bool | None = None,
                 chunk_size: int | None = None, use_tqdm: bool = True, chat_template: bool | str = True):
        require_model_folder(path)  # a mistyped local folder fails now, not as a Hub id
        try:
            import vllm
        except ImportError as err:
            raise LedgerError(f"vllm:{path}: vLLM is not installed ({err}); pip install 'ledgerlm[vllm]' or use openai:MODEL with `vllm serve`") from err
        self._vllm = vllm
        self.model_id = f"vllm:{path}" + (f"+peft:{peft}" if peft else "") + (f"@{revision}" if revision else "")
        if chunk_size:
            self.chunk_size = int(chunk_size)
        self.use_tqdm = use_tqdm
        self.chat_template = chat_template
        kwargs: dict[str, Any] = dict(tensor_parallel_size=tensor_parallel_size, gpu_memory_utilization=gpu_memory_utilization,
                                      trust_remote_code=trust_remote_code)
        optional = dict(max_model_len=max_model_len, dtype=dtype, revision=revision, enforce_eager=enforce_eager,
                        enable_prefix_caching=enable_prefix_caching)
        kwargs.update({k: v for k, v in optional.items() if v is not None})
        self.lora_request = None
        if peft:
            rank = adapter_rank(peft)
            if max_lora_rank is not None and max_lora_rank < rank:
                raise InputError(f"max_lora_rank={max_lora_rank} is below the adapter's rank r={rank}", path=peft, field="max_lora_rank")
            kwargs.update(enable_lora=True, max_lora_rank=max_lora_rank or lora_rank_for_vllm(rank), max_loras=1)
            from vllm.lora.request import LoRARequest

            self.lora_request = LoRARequest("adapter", 1, str(peft))
        self.llm = vllm.LLM(model=path, **kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        template_name(self.tokenizer, chat_template)  # an unknown template name is one error
        self.max_model_len = int(max_model_len or _engine_max_len(self.llm) or getattr(self.tokenizer, "model_max_length", 0) or 0) or None

    def render(self, messages: Messages, tools: list[dict] | None = None) -> str:
        """The exact prompt string the model sees (also the cache key's prompt)."""
        return render_prompt(self.tokenizer, messages, tools, self.chat_template)

    def sampling_params(self, params: GenerationParams) -> Any:
        return self._vllm.SamplingParams(n=1, max_tokens=params.max_tokens, temperature=params.temperature,
                                         top_p=params.top_p, seed=params.seed, stop=list(params.stop) or None)

    def generate(self, batch: list[Messages], params: GenerationParams, *, tools: list[dict] | None = None,
                 items: list[dict] | None = None, **kwargs: Any) -> list[Completion]:
        results: list[Completion | None] = [None] * len(batch)
        prompts, slots = [], []
        for i, messages in enumerate(batch):
            ids = self.tokenizer.encode(self.render(messages, tools), add_special_tokens=False)  # the template has them
            if self.max_model_len and len(ids) >= self.max_model_len:
                name = (items[i].get("id") if items and isinstance(items[i], dict) else None) or f"request {i}"
                results[i] = Completion(text="", finish_reason="error", prompt_tokens=len(ids),
                                        error=f"{name}: prompt of {len(ids)} tokens does not fit max_model_len {self.max_model_len}")
                continue
            prompts.append({"prompt_token_ids": ids})  # a vllm.inputs.TokensPrompt
            slots.append(i)
        if prompts:
            outputs = self.llm.generate(prompts, self.sampling_params(params), use_tqdm=self.use_tqdm, lora_request=self.lora_request)
            for i, request in zip(slots, outputs, strict=True):
                best = request.outputs[0]
                finish = best.finish_reason or "stop"
                results[i] = Completion(text=best.text, finish_reason="length" if finish == "length" else ("error" if finish == "abort" else "stop"),
                                        error="request aborted by the engine" if finish == "abort" else None,
                                        prompt_tokens=len(request.prompt_token_ids or []), completion_tokens=len(best.token_ids))
        return results  # type: ignore[return-value]


def _engine_max_len(llm: Any) -> int | None:
    """The engine's max_model_len (vLLM's model config), when it exposes one."""
    engine = getattr(llm, "llm_engine", None)
    config = getattr(engine, "model_config", None)
    if config is None and hasattr(engine, "get_model_config"):
        config = engine.get_model_config()
    return getattr(config, "max_model_len", None)
