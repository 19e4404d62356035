"""The one sampler interface every backend implements: chat messages in, text (+ reasoning) out.

    from ledgerlm.inference.sampling import make_sampler, GenerationParams
    sampler = make_sampler("openai:gpt-4o-mini", base_url="http://127.0.0.1:8000/v1")
    [completion] = sampler.generate([[{"role": "user", "content": "2+2?"}]], GenerationParams(max_tokens=16))

Backends come from one table, `ledgerlm.inference.backends.BACKENDS` (hf, vllm, openai, oracle; FinIndices
adds wrong_unit). `make_sampler("hf:PATH", **options)` and lm-eval's form `make_sampler("hf", pretrained=PATH,
**options)` are the same; option strings (from `--model_args`) are typed by the table row.

Optional sampler attributes: `render(messages, tools)` -> the exact prompt string (then the cache key
covers it; hf and vllm have it) and `chunk_size` (how many requests `generate_cached` hands over per
call; None = all at once, as vllm wants). Completions are cached by `ledgerlm.inference.cache`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ledgerlm.inference.backends import make_backend

Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class GenerationParams:
    max_tokens: int = 1024  # new tokens per completion
    temperature: float = 0.0  # 0 = greedy
    top_p: float = 1.0
    seed: int = 0
    stop: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Completion:
    text: str  # the raw response text (may contain <think>...</think>)
    reasoning: str | None = None  # reasoning_content when the backend returns it separately
    finish_reason: str = "stop"  # "stop" | "length" | "error"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None  # transport error message; such completions are never cached
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # OpenAI-style tool calls, if any


class Sampler(Protocol):
    model_id: str

    def generate(self, batch: list[Messages], params: GenerationParams, **kwargs: Any) -> list[Completion]:
        """One completion per conversation, in order. kwargs may carry `tools` (OpenAI tool specs)
        and `items` (the dataset rows, used only by reference backends such as `oracle`)."""
        ...


def make_sampler(spec: str, **options: Any) -> Sampler:
    """Build a sampler from a model spec (`hf:PATH`, `vllm:PATH`, `openai:MODEL`, `oracle`, or `hf` +
    `pretrained=PATH`) and its options, through the backend table."""
    return make_backend(spec, **options)
