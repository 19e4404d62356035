"""`hf:PATH_OR_ID` — transformers generation: chat template, left padding, batches; CPU or GPU.

    ledgerlm eval --benchmark finindices --model hf:Qwen/Qwen3-0.6B --data runs/data --out runs/qwen --batch-size 8

A prompt that leaves no room in `max_model_len` (default: the model config's max_position_embeddings)
becomes one error Completion naming the item and both lengths; the rest of the batch runs.
A PEFT adapter is applied with `peft=ADAPTER_DIR`. Remote code is never trusted unless
`trust_remote_code=True` is passed explicitly. On CPU the default dtype is bfloat16 where the CPU has native bf16
(AVX512-BF16/AMX), else float32; batches group prompts of similar token length (results keep input order).
Sampling (temperature > 0) seeds torch with the params' seed before each batch; greedy decoding is deterministic without it.
`chat_template=false` (`ledgerlm eval --apply_chat_template false`) sends plain text instead of the chat template,
`chat_template=NAME` one of the tokenizer's named templates (backends/prompt.py).
"""
from __future__ import annotations

from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from ledgerlm.errors import InputError
from ledgerlm.inference.backends import require_model_folder
from ledgerlm.inference.backends.prompt import render as render_prompt, template_name
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages


def default_cpu_dtype() -> str:
    """bfloat16 where the CPU computes it natively (AVX512-BF16 / AMX), else float32.

    Measured on SmolLM2-135M, 2 cores with AVX512-BF16/AMX (tests/bench/hf_generation_cpu.py, 8 real prompts x 64 new
    tokens): bf16 weights 2.05x float32 end to end (prefill 117 vs 60 tokens/s, decode 0.56 vs 1.22 s per batch-8 step);
    fp32 weights under bf16 autocast only 1.06x. Elsewhere bf16 matmuls are emulated (not measured here): float32 stays.
    """
    native = getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)() or getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)()
    return "bfloat16" if native else "float32"


class HFSampler:
    def __init__(self, path: str, *, peft: str | None = None, device: str | None = None, dtype: str | None = None,
                 batch_size: int = 8, trust_remote_code: bool = False, revision: str | None = None,
                 max_model_len: int | None = None, sort_by_length: bool = True, chat_template: bool | str = True):
        require_model_folder(path)  # a mistyped local folder fails now, not after the Hub's retries
        if peft:
            require_model_folder(peft, field="peft")
        self.sort_by_length = sort_by_length
        self.chat_template = chat_template
        self.model_id = f"hf:{path}" + (f"+peft:{peft}" if peft else "")
        self.batch_size = int(batch_size)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code, revision=revision)
        except (OSError, ValueError) as err:  # no such folder / not on the Hub / offline
            raise InputError(f"cannot load model {path!r}: {str(err).strip().splitlines()[0]}", field="--model") from err
        self.tokenizer.padding_side = "left"  # decoder-only: new tokens must follow the prompt directly
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        template_name(self.tokenizer, chat_template)  # an unknown template name fails here, before the model loads
        self.dtype = dtype or ("auto" if self.device != "cpu" else default_cpu_dtype())
        torch_dtype = getattr(torch, self.dtype, None) if self.dtype != "auto" else "auto"
        if not isinstance(torch_dtype, (torch.dtype, str)):
            raise InputError(f"unknown dtype {self.dtype!r} (bfloat16, float16, float32 or auto)", field="dtype")
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype, trust_remote_code=trust_remote_code, revision=revision)
        if peft:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, peft)
        self.model = model.to(self.device).eval()
        self.max_model_len = max_model_len or getattr(self.model.config, "max_position_embeddings", None)
        eos = self.model.generation_config.eos_token_id
        eos = eos if isinstance(eos, list) else [eos if eos is not None else self.tokenizer.eos_token_id]
        self.eos_ids = {int(e) for e in eos if e is not None}

    def render(self, messages: Messages, tools: list[dict] | None = None) -> str:
        """The exact prompt string the model sees (also the cache key's prompt)."""
        return render_prompt(self.tokenizer, messages, tools, self.chat_template)

    def generate(self, batch: list[Messages], params: GenerationParams, *, tools: list[dict] | None = None,
                 items: list[dict] | None = None, **kwargs: Any) -> list[Completion]:
        prompts = [self.render(m, tools) for m in batch]
        results: list[Completion | None] = [None] * len(prompts)
        lengths = [len(ids) for ids in self.tokenizer(prompts, add_special_tokens=False)["input_ids"]]
        # similar lengths share a batch (less left padding); results go back in input order
        order = sorted(range(len(prompts)), key=lambda i: -lengths[i]) if self.sort_by_length else list(range(len(prompts)))
        if self.max_model_len:
            for i, n in enumerate(lengths):
                if n >= self.max_model_len:
                    name = (items[i].get("id") if items and isinstance(items[i], dict) else None) or f"request {i}"
                    results[i] = Completion(text="", finish_reason="error", prompt_tokens=n,
                                            error=f"{name}: prompt of {n} tokens does not fit max_model_len {self.max_model_len}")
            order = [i for i in order if results[i] is None]
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            for i, completion in zip(chunk, self._generate_batch([prompts[i] for i in chunk], params)):
                results[i] = completion
        return results  # type: ignore[return-value]

    @torch.inference_mode()
    def _generate_batch(self, prompts: list[str], params: GenerationParams) -> list[Completion]:
        enc = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        sampling = params.temperature > 0
        if sampling:
            torch.manual_seed(params.seed)
        out = self.model.generate(
            **enc,
            max_new_tokens=params.max_tokens,
            do_sample=sampling,
            temperature=params.temperature if sampling else None,
            top_p=params.top_p if sampling else None,
            top_k=None,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        new_tokens = out[:, enc["input_ids"].shape[1] :].tolist()
        prompt_lens = enc["attention_mask"].sum(dim=1).tolist()
        completions = []
        for ids, n_prompt in zip(new_tokens, prompt_lens):
            stop_at = next((k for k, t in enumerate(ids) if t in self.eos_ids), None)
            finish = "stop" if stop_at is not None else ("length" if len(ids) >= params.max_tokens else "stop")
            ids = ids if stop_at is None else ids[:stop_at]
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            for stop in params.stop:
                if stop in text:
                    text, finish = text.split(stop, 1)[0], "stop"
            completions.append(Completion(text=text, finish_reason=finish, prompt_tokens=int(n_prompt), completion_tokens=len(ids)))
        return completions
