"""The one completion cache (evaluate and distill): an append-only JSONL file that survives SIGKILL.

    python -c "from ledgerlm.inference.cache import CompletionCache as C; print(len(C('runs/x/cache.jsonl')))"

Key = sha256 of the canonical JSON of (model id, rendered prompt, generation params incl. seed, and
any extra fields such as distill's sample index) — `cache_key`. The rendered prompt is the
chat-template string for backends that render one (`hf:`), else the messages (+ tools).

Only clean completions are stored (`cacheable`): errors, truncations (finish_reason "length") and
empty completions (no text, no tool call) never are, so a rerun asks for them again.

Crash safety: the file is opened with O_APPEND and every record is one `os.write` of one whole
line, followed by `fsync` before `put` returns, so a SIGKILL leaves at most one torn last line; the
reader ignores it and the next writer cuts it off. Lone surrogates are stored as U+FFFD. A line
that does not read back as a clean Completion (damaged, written by another version) is a miss,
never a crash. Only the key -> (offset, length) index is held in memory; `get` reads one line.
From an event loop, `aput` hands records to one writer thread that fsyncs once per group (group
commit); a record that cannot be written fails alone, and the thread keeps serving.

Older caches are not read: the SQLite `cache.sqlite` of earlier `ledgerlm eval` versions (opening
one is an error naming it) and distill caches keyed before this module (their keys differ: misses).
"""
from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ledgerlm.errors import InputError
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages, Sampler
from ledgerlm.inference.text import clean_text

_RESERVED = frozenset({"model", "prompt", "params"})
_FIELDS = {f.name: f for f in dataclasses.fields(Completion)}
_SQLITE_MAGIC = b"SQLite format 3\x00"


def cache_key(model_id: str, prompt: Any, params: GenerationParams | Mapping[str, Any], **extra: Any) -> str:
    """sha256 over the canonical JSON of everything that determines a completion."""
    if _RESERVED & set(extra):
        raise ValueError(f"cache_key: extra fields may not be named {sorted(_RESERVED & set(extra))}")
    params_dict = params.as_dict() if isinstance(params, GenerationParams) else dict(params)
    payload = {"model": model_id, "prompt": prompt, "params": params_dict, **extra}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", errors="surrogatepass")).hexdigest()


def cacheable(completion: Completion | Mapping[str, Any] | None) -> bool:
    """Clean, finished and non-empty: errors, truncations and empty answers are asked again next run."""
    if isinstance(completion, Completion):  # attribute checks: no asdict copy on the event loop
        if completion.error or completion.finish_reason in ("length", "error") or not isinstance(completion.text, str):
            return False
        return bool(completion.text.strip() or completion.tool_calls)
    if not isinstance(completion, Mapping):
        return False
    if completion.get("error") or completion.get("finish_reason") in ("length", "error"):
        return False
    text = completion.get("text")
    if not isinstance(text, str):
        return False
    return bool(text.strip() or completion.get("tool_calls"))


def completion_from_dict(data: Any) -> Completion | None:
    """A stored completion back as a Completion, or None when it is not a clean one of this version's shape."""
    if not isinstance(data, Mapping) or not cacheable(data):
        return None
    kwargs = {name: data[name] for name in _FIELDS if name in data}
    types = {"text": str, "finish_reason": str, "prompt_tokens": int, "completion_tokens": int, "tool_calls": list}
    for name, kind in types.items():
        if name in kwargs and not isinstance(kwargs[name], kind):
            return None
    if kwargs.get("reasoning") is not None and not isinstance(kwargs["reasoning"], str):
        return None
    return Completion(**kwargs)


def encode_line(record: Mapping[str, Any]) -> bytes:
    """One JSONL line as UTF-8 bytes; lone surrogates become U+FFFD (json.dumps keeps them, UTF-8 cannot)."""
    return clean_text(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def read_jsonl_lines(path: str | Path) -> Iterator[Any]:
    """Every complete JSON line of `path`; a torn (unterminated) last line and unparsable lines are skipped."""
    for _, _, value in _scan_lines(path):
        yield value


def _scan_lines(path: str | Path) -> Iterator[tuple[int, int, Any]]:
    """(offset, length, parsed value) of every complete, parsable line."""
    path = Path(path)
    if not path.is_file():
        return
    offset = 0
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                return  # torn last line: the writer was killed mid-append
            try:
                yield offset, len(raw), json.loads(raw)
            except (ValueError, RecursionError):
                pass
            offset += len(raw)


def cut_torn_tail(path: str | Path) -> int:
    """Truncate `path` after its last newline; returns the number of bytes removed."""
    path = Path(path)
    if not path.is_file():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as handle:
        back = min(size, 1 << 20)
        while True:
            handle.seek(size - back)
            tail = handle.read(back)
            cut = tail.rfind(b"\n")
            if cut >= 0 or back == size:
                keep = size - back + cut + 1 if cut >= 0 else 0
                break
            back = min(size, back * 2)
        if keep < size:
            handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())
        return size - keep


class AppendLog:
    """An append-only JSONL file: each record is one write() of one whole line; one fsync per call."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._lock = threading.Lock()

    def append(self, record: Mapping[str, Any]) -> None:
        self.append_lines([encode_line(record)])

    def append_many(self, records: Iterable[Mapping[str, Any]]) -> None:
        self.append_lines([encode_line(record) for record in records])

    def append_lines(self, lines: Sequence[bytes]) -> list[int]:
        """Write each encoded line with its own write(), fsync once; returns each line's file offset."""
        offsets = []
        with self._lock:
            for line in lines:
                written = os.write(self._fd, line)
                if written != len(line):  # a short write on a regular file means the disk is full
                    raise OSError(f"short write to {self.path}: {written} of {len(line)} bytes")
                offsets.append(os.lseek(self._fd, 0, os.SEEK_CUR) - len(line))  # O_APPEND: the fd sits at this line's end
            if lines:
                os.fsync(self._fd)
        return offsets

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class CompletionCache:
    """Clean completions by cache key; `put`/`put_many`/`aput` are durable (fsynced) before they return."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir():
            raise InputError("the completion cache path is a folder, not a file", path=str(self.path))
        if self.path.is_file():
            with open(self.path, "rb") as handle:
                if handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC:
                    raise InputError("an SQLite cache of an older ledgerlm version; the cache is JSONL now "
                                     "(give a new cache path, e.g. cache.jsonl)", path=str(self.path))
        self._index: dict[str, tuple[int, int]] = {}
        for offset, length, record in _scan_lines(self.path):
            if isinstance(record, dict) and isinstance(record.get("key"), str) and completion_from_dict(record.get("completion")):
                self._index.setdefault(record["key"], (offset, length))  # first write wins
        self._log: AppendLog | None = None
        self._reader: int = -1
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue | None = None
        self._writer: threading.Thread | None = None

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def __enter__(self) -> "CompletionCache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def get(self, key: str) -> Completion | None:
        """The cached completion for `key`, or None (absent, or no longer readable: ask again)."""
        record = self.get_record(key)
        return completion_from_dict(record.get("completion")) if record else None

    def get_record(self, key: str) -> dict[str, Any] | None:
        """The whole stored record (key, completion, and whatever metadata the writer added)."""
        where = self._index.get(key)
        if where is None:
            return None
        offset, length = where
        try:
            if self._reader < 0:
                self._reader = os.open(self.path, os.O_RDONLY)
            record = json.loads(os.pread(self._reader, length, offset))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) and record.get("key") == key else None

    def put(self, key: str, completion: Completion, **meta: Any) -> bool:
        """Store a clean completion (with optional JSON metadata); False (nothing stored) when it must not be cached."""
        return self.put_many([(key, completion, meta)])[0]

    def put_many(self, entries: Iterable[tuple[str, Completion, Mapping[str, Any]]]) -> list[bool]:
        """`put` for several completions with one fsync; one bool per entry."""
        entries = list(entries)
        results = [cacheable(completion) for _, completion, _ in entries]
        with self._lock:
            fresh: dict[str, bytes] = {}
            for (key, completion, meta), ok in zip(entries, results):
                if ok and key not in self._index and key not in fresh:
                    fresh[key] = encode_line(_record(key, completion, meta))
            self._append(fresh)
        return results

    async def aput(self, key: str, completion: Completion, **meta: Any) -> bool:
        """`put` from an event loop: returns once the record is on disk, without blocking the loop."""
        if not cacheable(completion):
            return False
        if key in self._index:
            return True
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        with self._lock:
            if self._writer is None:
                self._queue = queue.SimpleQueue()
                self._writer = threading.Thread(target=self._write_groups, name="completion-cache", daemon=True)
                self._writer.start()
        self._queue.put((key, completion, meta, loop, done))
        await done
        return True

    def _append(self, lines: dict[str, bytes]) -> None:
        """Append encoded lines and index them (caller holds the lock)."""
        if not lines:
            return
        if self._log is None:
            self._log = AppendLog(self.path)
        offsets = self._log.append_lines(list(lines.values()))
        for (key, line), offset in zip(lines.items(), offsets):
            self._index[key] = (offset, len(line))

    def _write_groups(self) -> None:
        """Writer thread: take everything queued, write it line by line, fsync once, wake the waiters."""
        stop = False
        while not stop:
            group = [self._queue.get()]
            while True:
                try:
                    group.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(entry is None for entry in group)
            group = [entry for entry in group if entry is not None]
            if not group:
                continue
            lines, failed, error = {}, {}, None
            with self._lock:
                for key, completion, meta, _, _ in group:
                    if key in self._index or key in lines or key in failed:
                        continue
                    try:  # a record that cannot be encoded fails alone
                        lines[key] = encode_line(_record(key, completion, meta))
                    except (TypeError, ValueError, RecursionError) as err:
                        failed[key] = err
                try:
                    self._append(lines)
                except Exception as err:  # noqa: BLE001 - handed to every waiter; the thread lives on
                    error = err
            for key, _, _, loop, done in group:
                try:
                    loop.call_soon_threadsafe(_resolve, done, failed.get(key, error))
                except RuntimeError:  # that event loop is closed: nobody waits any more
                    pass

    def close(self) -> None:
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
            self._writer = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._reader >= 0:
            os.close(self._reader)
            self._reader = -1


ResponseCache = CompletionCache  # the name evaluate used before the two caches became one


def _record(key: str, completion: Completion, meta: Mapping[str, Any]) -> dict[str, Any]:
    return {**meta, "key": key, "completion": {name: getattr(completion, name) for name in _FIELDS}}


def _resolve(future: asyncio.Future, error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


def rendered_prompt(sampler: Sampler, messages: Messages, tools: list[dict] | None = None) -> Any:
    """What the key covers: the backend's rendered prompt string when it has `render`, else messages (+ tools)."""
    render = getattr(sampler, "render", None)
    if render is not None:
        return render(messages, tools)
    return {"messages": messages, "tools": tools}


def generate_cached(sampler: Sampler, batch: Sequence[Messages], params: GenerationParams, *,
                    cache: CompletionCache | None = None, items: Sequence[dict] | None = None,
                    tools: list[dict] | None = None, chunk_size: int | None = None,
                    on_chunk: Callable[[int, int], None] | None = None) -> tuple[list[Completion], dict[str, Any]]:
    """Completions for `batch` in order, reusing cached ones; the rest are generated `chunk_size` at a
    time (default: the sampler's `chunk_size` attribute, else 32; None there = all at once, as vLLM
    wants) and cached as soon as each chunk returns. Returns (completions, stats)."""
    if chunk_size is None:
        chunk_size = getattr(sampler, "chunk_size", 32) or max(1, len(batch))
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
        if len(completions) != len(chunk):
            raise RuntimeError(f"{sampler.model_id}: {len(completions)} completions for {len(chunk)} requests")
        for i, completion in zip(chunk, completions):
            out[i] = completion
        stats["generated"] += len(chunk)
        if cache is not None:
            stored = cache.put_many((keys[i], c, {"model": sampler.model_id}) for i, c in zip(chunk, completions))
            stats["uncacheable"] += stored.count(False)
        if on_chunk:
            on_chunk(start + len(chunk), len(todo))
    return out, stats  # type: ignore[return-value]
