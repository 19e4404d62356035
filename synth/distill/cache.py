"""Crash-safe completion cache: an append-only JSONL file, one fsynced write() per full line.

    python -c "from ledgerlm.synth.distill.cache import CompletionCache as C; print(len(C('runs/distill/cache.jsonl')))"

A record is one teacher completion, keyed by (teacher, rendered prompt, generation params, sample
index, seed). Only finished completions are stored: transport errors and truncated responses
(finish_reason = length) are never cached, so a rerun asks for them again. Appends open the file
with O_APPEND and write each line with a single `os.write` followed by `fsync`, so a SIGKILL
leaves at most one torn last line; the reader ignores it and the next writer cuts it off.
From an event loop, `aput` hands records to one writer thread that writes each line with its own
write() and fsyncs once per group (group commit), so fsync latency never stalls the requests.
The writer thread never dies silently: any error while writing a group (disk full, a record that
cannot be serialised) is handed to every waiter of that group, and the thread keeps serving. Lone
surrogates (a teacher's `"\\ud800"` escape, not encodable as UTF-8) are stored as U+FFFD. Empty
completions (no text) are not cached: a rerun asks again.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import queue
import re
import threading
from pathlib import Path
from typing import Any, Iterator


def cache_key(teacher: str, prompt: Any, params: dict[str, Any], sample_index: int, seed: int) -> str:
    """sha256 over the canonical JSON of everything that determines a completion.

    `prompt` is the rendered prompt string when the backend renders one (hf:), else the messages."""
    payload = {"teacher": teacher, "prompt": prompt, "params": params, "sample_index": sample_index, "seed": seed}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", errors="surrogatepass")).hexdigest()


def is_cacheable(completion: Any) -> bool:
    """Transport errors, truncated responses and empty completions are never cached."""
    if not isinstance(completion, dict) or completion.get("error") or completion.get("finish_reason") in ("length", "error"):
        return False
    text = completion.get("text")
    return isinstance(text, str) and bool(text.strip())


_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_line(record: dict[str, Any]) -> bytes:
    """One JSONL line as UTF-8 bytes; lone surrogates become U+FFFD (json.dumps keeps them, UTF-8 cannot)."""
    line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
    if not line.isascii():
        line = _SURROGATE.sub("\ufffd", line)
    return line.encode("utf-8")


def read_jsonl_lines(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every complete JSON line of `path`; a torn (unterminated or unparsable) line is skipped."""
    path = Path(path)
    if not path.is_file():
        return
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                return  # torn last line: the writer was killed mid-append
            try:
                yield json.loads(raw)
            except json.JSONDecodeError:
                continue


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
    """An append-only JSONL file: each `append` is one write() of one whole line, then fsync."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._lock = threading.Lock()  # one write per line is atomic; the lock keeps fsync ordering simple

    def append(self, record: dict[str, Any]) -> None:
        self.append_many([record])

    def append_many(self, records: list[dict[str, Any]]) -> None:
        """One write() per record's full line, then one fsync for the group."""
        self.append_lines([encode_line(record) for record in records])

    def append_lines(self, lines: list[bytes]) -> None:
        """One write() per encoded line, then one fsync for the group."""
        with self._lock:
            for line in lines:
                written = os.write(self._fd, line)
                if written != len(line):  # a short write on a regular file means the disk is full
                    raise OSError(f"short write to {self.path}: {written} of {len(line)} bytes")
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class CompletionCache:
    """Finished teacher completions by cache key; `put` is durable before it returns."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._records: dict[str, dict[str, Any]] = {}
        for record in read_jsonl_lines(self.path):
            if isinstance(record, dict) and isinstance(record.get("key"), str) and is_cacheable(record.get("completion")):
                self._records.setdefault(record["key"], record)  # first write wins; later duplicates ignored
        self._log: AppendLog | None = None
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue | None = None
        self._writer: threading.Thread | None = None

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def get(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def put(self, key: str, record: dict[str, Any]) -> bool:
        """Store a finished completion; returns False (and stores nothing) when it must not be cached."""
        if not is_cacheable(record.get("completion", {})):
            return False
        with self._lock:
            if key not in self._records:
                record = {**record, "key": key}
                self._open_log().append(record)
                self._records[key] = record
        return True

    async def aput(self, key: str, record: dict[str, Any]) -> bool:
        """`put` from an event loop: returns once the record is on disk (fsynced), without blocking the loop."""
        if not is_cacheable(record.get("completion", {})):
            return False
        if key in self._records:
            return True
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        with self._lock:
            if self._writer is None:
                self._queue = queue.SimpleQueue()
                self._writer = threading.Thread(target=self._write_groups, name="distill-cache", daemon=True)
                self._writer.start()
        self._queue.put(({**record, "key": key}, loop, done))
        await done
        return True

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
            with self._lock:
                fresh = {}
                for record, _, _ in group:
                    if record["key"] not in self._records:
                        fresh.setdefault(record["key"], record)
                lines, failed = {}, {}
                for key, record in fresh.items():  # a record that cannot be encoded fails alone
                    try:
                        lines[key] = encode_line(record)
                    except (TypeError, ValueError, RecursionError) as err:
                        failed[key] = err
                error = None
                try:
                    self._open_log().append_lines(list(lines.values()))
                    self._records.update((key, fresh[key]) for key in lines)
                except Exception as err:  # noqa: BLE001 - handed to every waiter; the thread lives on
                    error = err
            for record, loop, done in group:
                try:
                    loop.call_soon_threadsafe(_resolve, done, failed.get(record["key"], error))
                except RuntimeError:  # that event loop is closed: nobody waits any more
                    pass

    def _open_log(self) -> AppendLog:
        if self._log is None:
            self._log = AppendLog(self.path)
        return self._log

    def close(self) -> None:
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
            self._writer = None
        if self._log is not None:
            self._log.close()
            self._log = None


def _resolve(future: asyncio.Future, error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
