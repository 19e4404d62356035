"""`vllm:PATH` — an in-process vLLM engine; vLLM is imported only when this backend is used.

    pip install 'ledgerlm[vllm]' && ledgerlm eval --benchmark finindices --model vllm:Qwen/Qwen3-8B --data runs/data --out runs/q8

For a separate server (`vllm serve MODEL`), use `openai:MODEL --base-url http://HOST:8000/v1`.
"""
from __future__ import annotations

from typing import Any

from ledgerlm.errors import LedgerError
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages


class VLLMSampler:
    def __init__(self, path: str, *, tensor_parallel_size: int = 1, max_model_len: int | None = None,
                 gpu_memory_utilization: float = 0.9, trust_remote_code: bool = False):
        try:
            from vllm import LLM
        except ImportError as err:
            raise LedgerError(f"vllm:{path}: vLLM is not installed ({err}); pip install 'ledgerlm[vllm]' or use openai:MODEL with `vllm serve`") from err
        self.model_id = f"vllm:{path}"
        kwargs: dict[str, Any] = dict(tensor_parallel_size=tensor_parallel_size, gpu_memory_utilization=gpu_memory_utilization, trust_remote_code=trust_remote_code)
        if max_model_len:
            kwargs["max_model_len"] = max_model_len
        self.llm = LLM(model=path, **kwargs)

    def generate(self, batch: list[Messages], params: GenerationParams, *, tools: list[dict] | None = None, **kwargs: Any) -> list[Completion]:
        from vllm import SamplingParams

        sampling = SamplingParams(max_tokens=params.max_tokens, temperature=params.temperature, top_p=params.top_p,
                                  seed=params.seed, stop=list(params.stop) or None)
        outputs = self.llm.chat(batch, sampling, tools=tools, use_tqdm=False)
        completions = []
        for request in outputs:
            best = request.outputs[0]
            completions.append(Completion(text=best.text, finish_reason=best.finish_reason or "stop",
                                          prompt_tokens=len(request.prompt_token_ids or []), completion_tokens=len(best.token_ids)))
        return completions
