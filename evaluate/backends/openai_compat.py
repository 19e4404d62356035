"""`openai:MODEL` — any OpenAI-compatible chat server (OpenAI, vLLM `vllm serve`, SGLang, llama.cpp).

    OPENAI_API_KEY=... ledgerlm eval --benchmark finindices --model openai:gpt-4o-mini --data runs/data --out runs/g4m
    ledgerlm eval --benchmark finindices --model openai:Qwen/Qwen3-8B --base-url http://127.0.0.1:8000/v1 ...

Requests run concurrently (asyncio + httpx, at most `concurrency` in flight, spread over small
clients of CONNECTIONS_PER_CLIENT connections). Only 429, 5xx, timeouts and dropped connections are
retried, with exponential backoff and jitter; a `Retry-After` header, when sent, sets the wait. The
API key comes from the environment variable `api_key_env` (default OPENAI_API_KEY) and never
appears in logs or errors. Native `tool_calls` and `reasoning_content` (or `reasoning`) are returned on the Completion.

Callers with their own event loop (distillation) use the single-request path directly:
    slots = sampler.open_slots(32)
    async with slots.client() as client:
        completion = await sampler.request(client, messages, params, random.Random(seed))
    await slots.aclose()
"""
from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import os
import random
import time
from typing import Any, AsyncIterator

import httpx

from ledgerlm.evaluate.sampling import Completion, GenerationParams, Messages

log = logging.getLogger(__name__)
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
RETRYABLE_ERRORS = (httpx.TimeoutException, httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
CONNECTIONS_PER_CLIENT = 4  # httpcore scans a client's whole pool on every event: keep pools small


class ClientSlots:
    """In-flight slots spread over several small keep-alive clients: `async with slots.client() as c:`."""

    def __init__(self, clients: list[tuple[httpx.AsyncClient, int]]):
        self.clients = [client for client, _ in clients]
        self._free: asyncio.Queue = asyncio.Queue()
        for client, size in clients:
            for _ in range(size):
                self._free.put_nowait(client)

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        client = await self._free.get()
        try:
            yield client
        finally:
            self._free.put_nowait(client)

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


class OpenAISampler:
    def __init__(self, model: str, *, base_url: str = "https://api.openai.com/v1", api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 8, max_retries: int = 6, timeout: float = 600.0,
                 backoff_base: float = 1.0, backoff_max: float = 60.0):
        self.model = model
        self.model_id = f"openai:{model}@{base_url.rstrip('/')}"
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key_env = api_key_env
        self.concurrency, self.max_retries, self.timeout = int(concurrency), int(max_retries), float(timeout)
        self.backoff_base, self.backoff_max = float(backoff_base), float(backoff_max)
        self.retries_done = 0  # total retried requests over this sampler's life (for run stats)

    def generate(self, batch: list[Messages], params: GenerationParams, *, tools: list[dict] | None = None, **kwargs: Any) -> list[Completion]:
        return asyncio.run(self._generate_all(batch, params, tools))

    async def _generate_all(self, batch: list[Messages], params: GenerationParams, tools: list[dict] | None) -> list[Completion]:
        slots = self.open_slots(self.concurrency)
        try:
            async def one(index: int, messages: Messages) -> Completion:
                async with slots.client() as client:
                    return await self.request(client, messages, params, random.Random(params.seed * 1_000_003 + index), tools=tools)

            return list(await asyncio.gather(*(one(i, m) for i, m in enumerate(batch))))
        finally:
            await slots.aclose()

    def make_client(self, connections: int, *, verify: Any = True) -> httpx.AsyncClient:
        """One keep-alive client of at most `connections` connections, with the API key header."""
        key = os.environ.get(self.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        return httpx.AsyncClient(headers=headers, timeout=self.timeout, limits=limits, verify=verify)

    def open_slots(self, concurrency: int) -> "ClientSlots":
        """`concurrency` in-flight slots over small clients (CONNECTIONS_PER_CLIENT each, one shared SSL context)."""
        ssl_context = httpx.create_ssl_context()
        per = CONNECTIONS_PER_CLIENT
        sizes = [min(per, concurrency - start) for start in range(0, concurrency, per)]
        return ClientSlots([(self.make_client(size, verify=ssl_context), size) for size in sizes])

    def body(self, messages: Messages, params: GenerationParams, tools: list[dict] | None = None) -> dict[str, Any]:
        """The JSON body of one chat-completions request."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": params.max_tokens,
                                "temperature": params.temperature, "top_p": params.top_p, "seed": params.seed}
        if params.stop:
            body["stop"] = list(params.stop)
        if tools:
            body["tools"] = tools
        return body

    async def request(self, client: httpx.AsyncClient, messages: Messages, params: GenerationParams, rng: random.Random,
                      *, tools: list[dict] | None = None) -> Completion:
        """One conversation -> one Completion on `client`, with the retry policy above (`rng`: backoff jitter)."""
        return await self._post(client, self.body(messages, params, tools), rng)

    async def _post(self, client: httpx.AsyncClient, body: dict[str, Any], rng: random.Random) -> Completion:
        last_error = ""
        for attempt in range(self.max_retries + 1):
            retry_after = None
            try:
                response = await client.post(self.url, json=body)
            except RETRYABLE_ERRORS as err:
                last_error = f"{type(err).__name__}: {err}"
            else:
                if response.status_code == 200:
                    try:
                        return _completion(response.json())
                    except ValueError as err:
                        return Completion(text="", finish_reason="error", error=f"malformed response body: {err}")
                last_error = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code not in RETRYABLE_STATUS:
                    return Completion(text="", finish_reason="error", error=last_error)
                retry_after = _retry_after(response.headers.get("retry-after"))
            if attempt == self.max_retries:
                break
            wait = retry_after if retry_after is not None else min(self.backoff_max, self.backoff_base * 2**attempt) * rng.uniform(0.5, 1.5)
            self.retries_done += 1
            log.info("%s: retry %d in %.2fs after %s", self.model, attempt + 1, wait, last_error[:80])
            await asyncio.sleep(wait)
        return Completion(text="", finish_reason="error", error=f"gave up after {self.max_retries} retries: {last_error}")


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _completion(payload: dict[str, Any]) -> Completion:
    choice = (payload.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    usage = payload.get("usage") or {}
    return Completion(
        text=message.get("content") or "",
        reasoning=message.get("reasoning_content") or message.get("reasoning"),
        finish_reason=choice.get("finish_reason") or "stop",
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        tool_calls=list(message.get("tool_calls") or []),
    )
