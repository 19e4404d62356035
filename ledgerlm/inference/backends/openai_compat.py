"""`openai:MODEL` — any OpenAI-compatible chat server (OpenAI, vLLM `vllm serve`, SGLang, llama.cpp).

    OPENAI_API_KEY=... ledgerlm eval --benchmark finindices --model openai:gpt-4o-mini --data runs/data --out runs/g4m
    ledgerlm eval --benchmark finindices --model openai:Qwen/Qwen3-8B --base-url http://127.0.0.1:8000/v1 ...

Requests run concurrently (asyncio + httpx, at most `concurrency` in flight, spread over small
clients of CONNECTIONS_PER_CLIENT connections). Only 408, 429, 5xx, timeouts and dropped connections
are retried, by the one retry policy (`ledgerlm.inference.retry.RetryPolicy`: exponential backoff with
jitter, `Retry-After` as seconds or an HTTP date, every wait capped at `backoff_max`). The
API key comes from the environment variable `api_key_env` (default OPENAI_API_KEY) and never
appears in logs or errors (`OpenAISampler.redact`: a server that echoes the Authorization header in an
error body gets *** in its place); OpenAI's own API (the default base_url) with the variable unset is one
error before any request (a server of your own, e.g. a local `vllm serve`, may need no key).
Credentials written into `base_url` (`https://user:key@host/v1?api_key=…`) are redacted from the
model id, errors and logs (`redact_url`). Native `tool_calls` and `reasoning_content` (or
`reasoning`) are returned on the Completion.

Every HTTP 200 body is validated (pydantic models of the chat-completions response): a body that is
not an object with a non-empty `choices` list whose first choice has a string (or null) `content`
is a per-item error (finish_reason "error", never cached), not an exception. Lone surrogates
(`"\\ud800"` escapes) and other unencodable text are replaced by U+FFFD at this boundary.

Callers with their own event loop (distillation) use the single-request path directly:
    slots = sampler.open_slots(32)
    async with slots.client() as client:
        completion = await sampler.request(client, messages, params, random.Random(seed))
    await slots.aclose()
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import re
import urllib.parse
from typing import Any, AsyncIterator

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ledgerlm.errors import InputError
from ledgerlm.inference.retry import RetryPolicy
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages
from ledgerlm.inference.text import clean_text, redact_text

log = logging.getLogger(__name__)
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
RETRYABLE_ERRORS = (httpx.TimeoutException, httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
OPENAI_HOST = "api.openai.com"  # the default base_url's host: it refuses every request without a key
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
        self.api_key_env = api_key_env
        key = self.api_key()  # a key no HTTP header can carry: one line before any request (never the key itself)
        if _host(base_url) == OPENAI_HOST and not key:  # before any request or output
            raise InputError(f"openai:{model} needs an API key: the environment variable {api_key_env} is not set "
                             "(set it, or point --base-url / base_url= at a server that needs none)", field="api_key_env")
        self.model = model
        self.model_id = f"openai:{model}@{redact_url(base_url.rstrip('/'))}"
        self.url = chat_completions_url(base_url)
        self.concurrency, self.max_retries, self.timeout = int(concurrency), int(max_retries), float(timeout)
        self.retry = RetryPolicy(max_retries=int(max_retries), base=float(backoff_base), cap=float(backoff_max))
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
        key = self.api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        return httpx.AsyncClient(headers=headers, timeout=self.timeout, limits=limits, verify=verify)

    def api_key(self) -> str:
        """The key in `api_key_env` without surrounding whitespace (a pasted key often ends in \\r or \\n); "" when
        unset or blank. InputError naming the variable (never the key) when a control character, or any character
        outside printable ASCII, is left inside: no HTTP header can carry it."""
        key = (os.environ.get(self.api_key_env) or "").strip()
        bad = next((c for c in key if not " " <= c <= "~"), None)
        if bad is not None:
            what = "a control character" if ord(bad) < 32 or ord(bad) == 127 else "a character that is not ASCII"
            raise InputError(f"the environment variable {self.api_key_env} holds {what} ({ord(bad):#04x}) inside the API key: "
                             "an HTTP header cannot carry it (set the key alone, on one line)", field="api_key_env")
        return key

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

    def redact(self, text: str, client: httpx.AsyncClient | None = None) -> str:
        """`text` (an error a server or httpx produced) without the API key: the key the client sent and
        the one in `api_key_env` become ***, as does any `Bearer <token>`; URL credentials as `redact_text`."""
        env_key = os.environ.get(self.api_key_env) or ""
        keys = {env_key, env_key.strip()}
        if client is not None:
            keys.add(re.sub(r"(?i)^\s*Bearer\s+", "", client.headers.get("authorization", "")).strip())
        for key in sorted(keys, key=len, reverse=True):
            if key:
                text = text.replace(key, "***")
        return redact_text(_BEARER.sub("Bearer ***", text))

    async def _post(self, client: httpx.AsyncClient, body: dict[str, Any], rng: random.Random) -> Completion:
        last_error = ""
        for attempt in range(self.max_retries + 1):
            retry_after: str | None = None
            try:
                async with client.stream("POST", self.url, json=body) as response:
                    raw = await read_capped(response, MAX_BODY_BYTES if response.status_code == 200 else 4096)
            except RETRYABLE_ERRORS as err:
                last_error = self.redact(f"{type(err).__name__}: {err}", client)
            except httpx.DecodingError as err:  # a broken gzip/deflate body: this item fails, the run goes on
                return _bad_body(f"undecodable content encoding ({err})")
            else:
                if response.status_code == 200:
                    if raw is None:
                        return _bad_body(f"over {MAX_BODY_BYTES} bytes after decompression")
                    return parse_body(raw)
                text = (raw or b"").decode("utf-8", errors="replace")
                last_error = f"HTTP {response.status_code}: {clean_text(self.redact(text, client)[:300])}"
                if response.status_code not in RETRYABLE_STATUS:
                    return Completion(text="", finish_reason="error", error=last_error)
                retry_after = response.headers.get("retry-after")
            if attempt == self.max_retries:
                break
            wait = self.retry.delay(attempt, rng, retry_after)
            self.retries_done += 1
            log.info("%s: retry %d in %.2fs after %s", self.model, attempt + 1, wait, last_error[:80])
            await asyncio.sleep(wait)
        return Completion(text="", finish_reason="error", error=f"gave up after {self.max_retries} retries: {last_error}")


MAX_BODY_BYTES = 64 << 20  # a 200 body larger than this is an error, not parsed


async def read_capped(response: httpx.Response, limit: int) -> bytes | None:
    """The (decompressed) body, read in chunks; None once it passes `limit` bytes (a gzip bomb costs
    at most `limit` bytes of memory: the rest is never decompressed). Error bodies are cut at `limit`."""
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            if response.status_code == 200:
                return None
            break
    return b"".join(chunks)[: max(limit, 0)] if size > limit else b"".join(chunks)


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[dict[str, Any]] | None = None


class _Choice(BaseModel):
    model_config = ConfigDict(extra="ignore")
    message: _Message | None = None
    finish_reason: str | None = None


class _Usage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None


def parse_body(raw: bytes) -> Completion:
    """One HTTP 200 body -> a Completion; any malformed body -> an error Completion (never cached)."""
    if len(raw) > MAX_BODY_BYTES:
        return _bad_body(f"{len(raw)} bytes (limit {MAX_BODY_BYTES})")
    try:
        payload = json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as err:
        return _bad_body(f"not JSON ({str(err)[:120]})")
    try:
        body = _Body.model_validate(payload)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        return _bad_body(f"{where}: {first['msg']}")
    except RecursionError:
        return _bad_body("nested too deeply")
    choice = body.choices[0]
    message = choice.message or _Message()
    usage = body.usage or _Usage()
    try:
        tool_calls = json.loads(clean_text(json.dumps(message.tool_calls or [], ensure_ascii=False)))
    except (ValueError, RecursionError):
        return _bad_body("tool_calls: not serialisable")
    return Completion(
        text=clean_text(message.content or ""),
        reasoning=clean_text(message.reasoning_content or message.reasoning or "") or None,
        finish_reason=clean_text(choice.finish_reason or "stop"),
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        tool_calls=tool_calls,
    )


def _bad_body(detail: str) -> Completion:
    return Completion(text="", finish_reason="error", error=f"malformed response body: {clean_text(detail)}")


_BEARER = re.compile(r"(?i)\bBearer\s+[^\s\"',;]*")
_SECRET_PARAM = re.compile(r"key|token|secret|password|passwd|auth|sig|credential", re.IGNORECASE)


def _host(url: str) -> str | None:
    try:
        return urllib.parse.urlsplit(url).hostname
    except ValueError:
        return None


def chat_completions_url(base_url: str) -> str:
    """`base_url` with /chat/completions appended to its path; a query (`?api-version=…`) stays a query."""
    try:
        url = httpx.URL(base_url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return base_url.rstrip("/") + "/chat/completions"  # unusable: the request fails as a per-item error
    if not url.query and not url.fragment:
        return base_url.rstrip("/") + "/chat/completions"
    return str(url.copy_with(path=url.path.rstrip("/") + "/chat/completions", fragment=None))


def redact_url(url: str) -> str:
    """`url` without credentials: user:password@ becomes ***@, secret-looking query values become ***."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        query = "&".join(f"{k}=***" if _SECRET_PARAM.search(k) else f"{k}={v}" for k, v in pairs)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
