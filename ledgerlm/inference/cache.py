"""Response cache and resumable generation: a run killed half-way restarts where it stopped.

    python -c "from ledgerlm.inference.cache import ResponseCache; print(len(ResponseCache('runs/x/cache.sqlite')))"

Key = sha256 of (model id, rendered prompt, generation params, seed) — the rendered prompt is the
chat-template string for `hf:` backends and the canonical JSON of the messages (+ tools) for the
others. Stored in SQLite (one committed row per completion, WAL journal: a crash never corrupts
it). Only clean completions are stored: errors, `finish_reason == "length"` (truncated) and empty
completions (no text, no tool call) never are, so they are retried on the next run. Text is stored
with lone surrogates replaced by U+FFFD (SQLite's UTF-8 cannot hold them), and a row that no longer
reads back as a Completion is a cache miss, never a crash.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Sequence

from ledgerlm.evaluate.runfiles import clean_text
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages, Sampler


def cache_key(model_id: str, prompt: str, params: GenerationParams) -> str:
    payload = json.dumps({"model": model_id, "prompt": prompt, "params": params.as_dict()}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", errors="surrogatepass")).hexdigest()


def cacheable(completion: Completion) -> bool:
    """Clean, finished and non-empty: errors, truncations and empty answers are asked again next run."""
    if completion.error is not None or completion.finish_reason in ("length", "error"):
        return False
    return bool((completion.text or "").strip() or completion.tool_calls)


class ResponseCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, completion TEXT, created REAL)")

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        try:
            completion = Completion(**json.loads(row[0]))
        except (TypeError, ValueError):  # a row written by another version, or damaged: ask again
            return None
        return completion if isinstance(completion.text, str) and cacheable(completion) else None

    def put(self, key: str, model_id: str, completion: Completion) -> bool:
        """Store a clean completion; returns False (and stores nothing) for errors and truncations."""
        if not cacheable(completion):
            return False
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                             (key, clean_text(model_id), clean_text(json.dumps(asdict(completion), ensure_ascii=False)), time.time()))
        return True

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()


def rendered_prompt(sampler: Sampler, messages: Messages, tools: list[dict] | None = None) -> str:
    render = getattr(sampler, "render", None)
    if render is not None:
        return render(messages, tools)
    return json.dumps({"messages": messages, "tools": tools}, sort_keys=True, ensure_ascii=False)


def generate_cached(sampler: Sampler, batch: Sequence[Messages], params: GenerationParams, *, cache: ResponseCache | None = None,
                    items: Sequence[dict] | None = None, tools: list[dict] | None = None, chunk_size: int = 32,
                    on_chunk: Callable[[int, int], None] | None = None) -> tuple[list[Completion], dict[str, Any]]:
    """Completions for `batch` in order, reusing cached ones; new ones are generated `chunk_size` at a
    time and cached as soon as each chunk returns. Returns (completions, stats)."""
    if cache is not None:
        keys = [cache_key(sampler.model_id, rendered_prompt(sampler, m, tools), params) for m in batch]
        out: list[Completion | None] = [cache.get(k) for k in keys]
    else:
        keys, out = [], [None] * len(batch)
    todo = [i for i, c in enumerate(out) if c is None]
    stats = {"cached": len(batch) - len(todo), "generated": 0, "uncacheable": 0, "generate_s": 0.0}
    for start in range(0, len(todo), chunk_size):
        chunk = todo[start : start + chunk_size]
        kwargs: dict[str, Any] = {"tools": tools} if tools else {}
        if items is not None:
            kwargs["items"] = [items[i] for i in chunk]
        began = time.perf_counter()
        completions = sampler.generate([batch[i] for i in chunk], params, **kwargs)
        stats["generate_s"] += time.perf_counter() - began
        for i, completion in zip(chunk, completions):
            out[i] = completion
            stats["generated"] += 1
            if cache is not None and not cache.put(keys[i], sampler.model_id, completion):
                stats["uncacheable"] += 1
        if on_chunk:
            on_chunk(start + len(chunk), len(todo))
    return out, stats  # type: ignore[return-value]
