"""Teachers for distillation: the inference layer's sampler backends, called from one asyncio loop.

    python -c "from ledgerlm.synth.distill.teachers import make_teacher; print(make_teacher('oracle').model_id)"

`openai:` teachers send one request per sample through the backend's own async request path
(`OpenAISampler.request`: retries on 429/5xx/timeouts/dropped connections with backoff, jitter
and Retry-After) on long-lived HTTP clients (`OpenAISampler.open_slots`), so `--concurrency 32` means 32 requests in flight.
Every other sampler (`hf:`, `vllm:`, `oracle`) runs its blocking batched `generate` in a worker thread.
Which of the two a spec gets is the `protocol` column of the one backend table
(`ledgerlm.inference.backends.BACKENDS`); there is no second factory here.
"""
from __future__ import annotations

import asyncio
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ledgerlm.inference.backends import make_backend, split_spec
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages


class BatchTeacher:
    """Any `Sampler`: one blocking `generate(batch, params, items=...)` call per batch, off the loop."""

    def __init__(self, sampler, workers: int = 1):
        self.sampler = sampler
        self.model_id = sampler.model_id
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="teacher")

    def render(self, messages: Messages) -> Any:
        """What the cache keys on: the exact prompt string when the backend can render it."""
        render = getattr(self.sampler, "render", None)
        return render(messages) if render else messages

    async def generate(self, batch: list[Messages], params: GenerationParams, items: list[dict]) -> list[Completion]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: self.sampler.generate(batch, params, items=items))

    async def aclose(self) -> None:
        self._pool.shutdown(wait=True)


class OpenAITeacher:
    """`openai:` — one request per conversation on long-lived keep-alive HTTP clients.

    The in-flight slots come from `OpenAISampler.open_slots`: small clients of 4 connections each
    (httpcore's pool scans every connection on every event, which at 32+ connections in one pool
    costs more CPU than the requests themselves), sharing one SSL context.
    """

    def __init__(self, sampler, concurrency: int):
        self.sampler = sampler
        self.model_id = sampler.model_id
        self.concurrency = concurrency
        self._jitter = random.Random(0)  # backoff jitter only: distinct per request so retries do not stampede
        self._slots = sampler.open_slots(concurrency)  # clients are made up front, outside the timed run

    def render(self, messages: Messages) -> Any:
        return messages

    async def generate(self, batch: list[Messages], params: GenerationParams, items: list[dict]) -> list[Completion]:
        if self._slots is None:
            self._slots = self.sampler.open_slots(self.concurrency)
        if len(batch) == 1:  # the usual case (--batch-size 1): no extra Task per request
            return [await self._one(batch[0], params)]
        return list(await asyncio.gather(*(self._one(m, params) for m in batch)))

    async def _one(self, messages: Messages, params: GenerationParams) -> Completion:
        async with self._slots.client() as client:
            return await self.sampler.request(client, messages, params, random.Random(self._jitter.getrandbits(64)))

    async def aclose(self) -> None:
        if self._slots is not None:
            await self._slots.aclose()
        self._slots = None  # a teacher serves one run


def make_teacher(spec: str, *, concurrency: int = 8, **options: Any):
    """A teacher for `spec` (any row of the backend table: openai:MODEL, hf:PATH, vllm:PATH, oracle);
    options go to the backend (retries: max_retries, backoff_base, backoff_max -> the one RetryPolicy)."""
    _, row, _, _ = split_spec(spec, options)
    sampler = make_backend(spec, **options)
    if row.protocol == "async":
        return OpenAITeacher(sampler, concurrency)
    return BatchTeacher(sampler, workers=concurrency)
