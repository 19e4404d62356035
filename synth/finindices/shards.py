"""Shards, completion markers, resume and deterministic merge.

    python -m pytest tests/test_synth_finindices_shards.py -q

Item slots 0..n-1 are cut into fixed-size shards (`shard_size`, not the number of processes, so
`--num-proc` and `--shard i/n` never change what is generated). A shard is written to a temp file,
renamed, and only then marked done (`shard-K.done`, which also holds its stats); a rerun skips marked shards and
redoes the rest, so a SIGKILLed run resumes without duplicates. Company-affine workers (affine.py) append their rows
to one stream pair per worker (`PartWriter`) and a shard's done marker lists where its parts are. The merge reads shards in index order,
drops duplicate signatures (the earliest slot wins) and writes each split file atomically.
A run that fails before any shard is done leaves nothing (`discard_failed_start`: run.json and
shards/ are removed), and a leftover run.json with no finished shard (a start killed with SIGKILL)
is replaced, so a corrected rerun starts clean instead of refusing a "different config".

One process, one job (`--num-proc 1`, no `--shard`): shards are written in their final form instead (`StreamWriter`):
each shard's rows, duplicates already dropped, are appended to three streams (`shards/shard-stream-SPLIT.jsonl`)
and its done marker records the streams' ends, so a rerun truncates them to the last finished shard and goes on;
its meta lines say where each row went (`at`). The merge then finds every row of train/dev/test already in place:
it links the streams as the split files (no byte copied) whenever a split is exactly its stream, and copies spans
otherwise (a merge across folders, or a run resumed with more processes); the bytes are those of the classic merge.
A stream a published split file shares is copied before a resumed run changes it.
"""
from __future__ import annotations

import contextlib
import json
import mmap
import multiprocessing
import os
from pathlib import Path
from typing import Callable, Iterator

from ledgerlm.contracts import Sample, dumps, dumps_lines, line_pieces
from ledgerlm.errors import InputError
from ledgerlm.synth.finindices.pipeline import Stats
from ledgerlm.synth.finindices.split import signature

SPLITS = ("train", "dev", "test")
SlotFn = Callable[[int, Stats], list[dict]]  # slot index -> kept samples (drops counted into Stats); may offer .many(range, stats)

_SLOT_FN: SlotFn | None = None  # set before forking workers (fork start method shares it)


def n_shards(n_slots: int, shard_size: int) -> int:
    return (n_slots + shard_size - 1) // shard_size


def shard_slots(k: int, n_slots: int, shard_size: int) -> range:
    return range(k * shard_size, min(n_slots, (k + 1) * shard_size))


def shard_path(out: Path, k: int) -> Path:
    """Shard k's rows file in work dir `out`."""
    return _paths(out, k)[0]


def _paths(out: Path, k: int) -> tuple[Path, Path, Path]:
    base = out / "shards" / f"shard-{k:05d}"
    return base.with_suffix(".jsonl"), base.with_suffix(".stats.json"), base.with_suffix(".done")


# the fields the merge needs (dedup signature, split, manifest counts): kept in a small sidecar per shard so
# the merge copies row lines verbatim instead of parsing and re-encoding every prompt
META_FIELDS = ("id", "split", "paradigm", "axis", "hint", "company", "target_periods", "indices", "traps",
               "context_formats", "answer_format", "unit", "decimals", "n_tokens", "language")


def _meta(row: dict, size: int) -> dict:
    """What the merge needs of a row, and `line_bytes`: the byte length of its line (newline included) in the rows file,
    so the merge finds each row without scanning the file for newlines."""
    meta = {k: row.get(k) for k in META_FIELDS}
    meta["answer"] = row["answer"] if isinstance(row["answer"], str) else 0
    meta["line_bytes"] = size
    return meta


def _atomic_write(path: Path, text: str | bytes | list[bytes]) -> None:
    """`text` (a str as UTF-8, bytes, or a list of bytes written in order) as the file `path`, atomically."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb", buffering=0) as f:
        if isinstance(text, list):
            _write_pieces(f.fileno(), text)
        else:
            f.write(text.encode("utf-8") if isinstance(text, str) else text)
    os.replace(tmp, path)  # atomic: a killed process leaves the old file or none, never half a file


_IOV_MAX = 1024  # buffers per writev call (POSIX guarantees at least 16; Linux allows 1024)


def _write_pieces(fd: int, pieces: list[bytes]) -> None:
    """Write `pieces` in order at the file descriptor `fd`: `os.writev` where there is one (the kernel gathers them: no
    copy of a whole shard into one bytes object first), each call's short write finished by plain writes."""
    if not hasattr(os, "writev"):
        _write_all(fd, memoryview(b"".join(pieces)))
        return
    for i in range(0, len(pieces), _IOV_MAX):
        chunk = pieces[i:i + _IOV_MAX]
        done = os.writev(fd, chunk)
        if done < sum(map(len, chunk)):
            _write_all(fd, memoryview(b"".join(chunk))[done:])


def _write_all(fd: int, data: memoryview) -> None:
    """`data` written at `fd`, however many calls it takes."""
    while data:
        data = data[os.write(fd, data):]


def sample_line(row: dict) -> str:
    """A generated row as its dataset line, checked against contract 4 first (`ledgerlm.contracts.Sample`):
    a generator bug stops the run naming the sample and field instead of writing a bad dataset."""
    return dumps(Sample.from_dict(row, f"generated sample {row.get('id')!r}"))


def check_run_file(out: Path, fingerprint: dict) -> None:
    """Record what this output folder is for; refuse to mix shards of two different configs."""
    path = out / "run.json"
    text = json.dumps(fingerprint, indent=2, sort_keys=True) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") != text and not _any_done(out):
        discard_failed_start(out)  # nothing finished under the old config: nothing to protect
    if path.is_file() and path.read_text(encoding="utf-8") != text:
        raise InputError("this folder holds shards of a run with a different config or seed; use a new --out", path=str(path))
    out.joinpath("shards").mkdir(parents=True, exist_ok=True)
    if not path.is_file():
        _atomic_write(path, text)


def _shard_rows(slot_fn: SlotFn, slots: range, stats: Stats) -> list[dict]:
    """A shard's kept rows in slot order: one `slot_fn.many(slots, stats)` call where the slot function
    offers it (the synth Builder does, to tokenize a shard's prompts in one pass), else slot by slot."""
    many = getattr(slot_fn, "many", None)
    return many(slots, stats) if many is not None else [row for slot in slots for row in slot_fn(slot, stats)]


def run_shard(out: Path, k: int, n_slots: int, shard_size: int, slot_fn: SlotFn) -> Stats:
    stats = Stats()
    rows = _shard_rows(slot_fn, shard_slots(k, n_slots, shard_size), stats)
    write_shard(out, k, *encoded_lines(rows), stats)
    return stats


def encoded_lines(rows: list[dict]) -> tuple[list[bytes], bytes]:
    """The rows' dataset lines (each checked against contract 4 first, as `sample_line`) and their meta lines, as UTF-8,
    one per line: a JSON line never holds a raw newline, so b"\n" separates rows. The dataset lines come as the pieces
    of `contracts.line_pieces` (written with `os.writev`, never joined). A checked row is dumped as it is:
    `Sample.from_dict(row).to_dict()` is the same keys in the same order, holding the same objects."""
    pieces, sizes, _ = _checked_pieces(rows)
    return pieces, dumps_lines([_meta(row, size) for row, size in zip(rows, sizes)], whole=True)


def _checked_pieces(rows: list[dict]) -> tuple[list[bytes], list[int], list[int]]:
    """The rows checked against contract 4, then their lines as `contracts.line_pieces` with each line's byte length
    and the index after its last piece. A generated row's `_shown` (the texts its prompt shares with other rows: the
    head of an item's variants, contexts.Builder.write) is taken out first and handed to `line_pieces`."""
    shown = [row.pop("_shown", ()) for row in rows]
    Sample.check_rows(rows, lambda row: f"generated sample {row.get('id')!r}")
    sizes: list[int] = []
    ends: list[int] = []
    return line_pieces(rows, sizes=sizes, ends=ends, shown=shown), sizes, ends


def worker_stream(out: Path, select: tuple[int, int], run: str, worker: int) -> Path:
    """The rows stream of company-affine worker `worker` of run `run` (a random tag) of job `select` (its metas beside it,
    `.meta`): a shard-* name, so a failed start removes it with the shards."""
    return out / "shards" / f"shard-wstream-{select[0]}of{select[1]}-{run}-{worker}.jsonl"


class PartWriter:
    """A company-affine worker's rows and metas (`encoded_lines`) appended to its two stream files (`worker_stream`),
    which it creates on its first part: one file pair per worker and run instead of a pair per task (creating a file
    cost 0.3-1 ms of system CPU on this machine's ext4: ~920 files in a --num 10000 run with 2 workers). A part is
    listed (`finish_parts`) by where its bytes are; what a killed worker appended after its last listed part is
    never read, and its streams are removed by the next run (`clear_streams`) once no finished shard lists them."""

    def __init__(self, path: Path):
        self.path, self.fds, self.ends = path, None, [0, 0]

    def write(self, lines: list[bytes], metas: bytes) -> dict:
        """Append one part; returns where it is: {"file", "at", "bytes", "meta_at", "meta_bytes"}."""
        if self.fds is None:
            self.fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o666)
                        for p in (self.path, self.path.with_suffix(".meta"))]
        size = sum(map(len, lines))
        _write_pieces(self.fds[0], lines)
        _write_all(self.fds[1], memoryview(metas))
        part = {"file": self.path.name, "at": self.ends[0], "bytes": size, "meta_at": self.ends[1], "meta_bytes": len(metas)}
        self.ends = [self.ends[0] + size, self.ends[1] + len(metas)]
        return part

    def close(self) -> None:
        for fd in self.fds or ():
            os.close(fd)
        self.fds = None


def finish_parts(out: Path, k: int, parts: list[dict], stats: Stats) -> None:
    """Shard k as the parts its workers wrote ({"file", "at", "bytes", "meta_at", "meta_bytes", "slots": the slot of
    each row}: the merge reads them in slot order, `shard_rows`) and its stats, in its completion marker; no row is
    copied here."""
    _mark_done(out, k, stats, {"parts": parts})


def clear_parts(out: Path, k: int) -> None:
    """Remove the part files an older version's killed run left of shard k (only for a shard that is not done)."""
    for path in (out / "shards").glob(f"shard-{k:05d}.part-*"):
        path.unlink(missing_ok=True)


def clear_streams(out: Path, select: tuple[int, int]) -> None:
    """Remove the worker streams of job `select` that no finished shard lists (what a killed run's workers left)."""
    left = list((out / "shards").glob(f"shard-wstream-{select[0]}of{select[1]}-*"))
    if not left:
        return
    listed = {part["file"] for done in (out / "shards").glob("shard-*.done")
              for part in _done_record(done).get("parts", ())}
    for path in left:
        if path.with_suffix(".jsonl").name not in listed:
            path.unlink(missing_ok=True)


Span = tuple[int, int, int]  # a row line in a shard file: (open file descriptor, byte offset, byte length)


class Streams:
    """The streams a merge reads, each opened once (read-only) for the whole merge: path -> fd and fd -> path."""

    def __init__(self):
        self.fds: dict[Path, int] = {}
        self.paths: dict[int, Path] = {}

    def fd(self, path: Path) -> int:
        if path not in self.fds:
            fd = self.fds[path] = os.open(path, os.O_RDONLY | _BINARY)
            self.paths[fd] = path
        return self.fds[path]

    def close(self) -> None:
        for fd in self.paths:
            os.close(fd)
        self.fds, self.paths = {}, {}

    def __enter__(self) -> "Streams":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def shard_rows(rows_path: Path, streams: Streams | None = None) -> Iterator[tuple[Span | None, dict]]:
    """(row span, meta) of a finished shard in slot order: its one rows file, its workers' parts put back in slot
    order (a slot's rows keep their order), or its rows in the streams (span None: a row dropped as a duplicate when
    it was written). A span is valid until the next shard's rows are asked for (a stream's: while `streams` is open):
    the merge copies each row from its file without reading it into this process (`write_splits`)."""
    ends = _stream_ends(rows_path.with_suffix(".done"))
    if ends is not None:
        if streams is None:
            raise ValueError("shard_rows: a stream shard needs the merge's Streams")
        out = rows_path.parent.parent
        fds = {split: streams.fd(stream_path(out, split)) for split in ends}
        for meta in _read_metas(rows_path.with_suffix(".meta")):
            at = meta["at"]
            if at is not None and at + meta["line_bytes"] > ends[meta["split"]]:
                raise InputError(f"meta of {meta.get('id')!r} points past its stream's recorded end (not written by "
                                 "ledgerlm synth?)", path=str(rows_path.with_suffix(".meta")))
            yield (None if at is None else (fds[meta["split"]], at, meta["line_bytes"])), meta
        return
    parts = _shard_parts(rows_path)
    with contextlib.ExitStack() as files:
        rows = []
        for part in parts:
            path = rows_path.with_name(part["file"])
            if "at" in part:  # a span of a worker's streams (PartWriter)
                fd = streams.fd(path) if streams is not None else files.enter_context(open(path, "rb")).fileno()
                metas = _read_metas_at(path.with_suffix(".meta"), part["meta_at"], part["meta_bytes"], streams)
                spans = _meta_spans(fd, path, metas, part["at"], part["bytes"])
            else:
                fd = files.enter_context(open(path, "rb")).fileno()
                metas = _read_metas(path.with_suffix(".meta"))
                spans = _meta_spans(fd, path, metas)
            rows += zip(part["slots"] or range(len(spans)), spans, metas)
        if len(parts) > 1 or parts[0]["slots"] is not None:
            rows.sort(key=lambda r: r[0])
        for _, span, meta in rows:
            yield span, meta


def _shard_parts(rows_path: Path) -> list[dict]:
    """A finished classic shard's parts: listed in its done marker (workers' streams), in `.parts.json` (written by an
    older version), or its one rows file."""
    parts = _done_record(rows_path.with_suffix(".done")).get("parts")
    if parts is not None:
        return parts
    index = rows_path.with_suffix(".parts.json")
    return json.loads(index.read_text(encoding="utf-8")) if index.is_file() else [{"file": rows_path.name, "slots": None}]


def _read_metas(path: Path) -> list[dict]:
    """The meta lines of a rows file (`_parse_metas`)."""
    return _parse_metas(path.read_text(encoding="utf-8"))


def _parse_metas(text: str) -> list[dict]:
    """Meta lines (each ending in a newline) as one JSON array (a JSON line never holds a raw newline)."""
    return json.loads("[" + text[:-1].replace("\n", ",") + "]") if text else []


def _read_metas_at(path: Path, offset: int, size: int, streams: "Streams | None") -> list[dict]:
    """The meta lines of one part in a worker's meta stream (`size` bytes at `offset`), parsed as one JSON array."""
    if streams is not None:
        data = os.pread(streams.fd(path), size, offset)
    else:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read(size)
    if len(data) != size:
        raise InputError(f"meta stream holds fewer bytes than a finished shard lists ({offset}+{size}; not written by "
                         "ledgerlm synth?)", path=str(path))
    return _parse_metas(data.decode("utf-8"))


def _meta_spans(fd: int, path: Path, metas: list[dict], at: int = 0, size: int | None = None) -> list[Span]:
    """(fd, offset, length) of every line of a rows file open at `fd` from its metas' `line_bytes`: the whole file, or
    the `size` bytes from `at` a part was listed with; a file written before metas had them is scanned for newlines
    (`_line_spans`)."""
    if not metas or "line_bytes" not in metas[0]:
        spans = _line_spans(fd, path)
        if len(spans) != len(metas):
            raise InputError(f"shard file holds {len(spans)} rows, its meta file {len(metas)} (not written by ledgerlm "
                             "synth?)", path=str(path))
        return spans
    spans, start = [], at
    for meta in metas:
        length = meta["line_bytes"]
        spans.append((fd, start, length))
        start += length
    held = os.fstat(fd).st_size
    if size is None and start != held:
        raise InputError(f"shard file holds {held} bytes, its meta file lists {start} (not written by ledgerlm synth?)",
                         path=str(path))
    if size is not None and (start - at != size or start > held):
        raise InputError(f"a finished shard lists {size} bytes at byte {at} of this worker stream ({held} bytes), its "
                         f"metas {start - at} (not written by ledgerlm synth?)", path=str(path))
    return spans


def _line_spans(fd: int, path: Path) -> list[Span]:
    """(fd, offset, length) of every line of a rows file open at `fd`, found in a read-only map of it (no copy)."""
    size = os.fstat(fd).st_size
    if size == 0:
        return []
    spans, start = [], 0
    with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as mapped:
        while start < size:
            end = mapped.find(b"\n", start) + 1
            if end == 0:
                raise InputError("shard file ends inside a row (not written by ledgerlm synth?)", path=str(path))
            spans.append((fd, start, end - start))
            start = end
    return spans


def copy_span(span: Span, dst: int) -> None:
    """Append a row (a span of a shard file) to the file open at `dst`: `os.copy_file_range` copies it in the kernel
    (merge of a --num 10000 run: 0.26-0.35 s CPU to copy 236 MB in slot order instead of 0.45-0.58 s read and
    written line by line); where that is not available (other systems, some file systems) it is read and written."""
    global _KERNEL_COPY
    src, offset, length = span
    while length and _KERNEL_COPY:
        try:
            n = os.copy_file_range(src, dst, length, offset)
        except OSError:
            n = 0
        if n == 0:  # unsupported here: copy through this process from now on
            _KERNEL_COPY = False
            break
        offset, length = offset + n, length - n
    while length:
        data = os.pread(src, length, offset)
        if not data:  # the file is shorter than when its rows were listed: an error, not an endless loop
            raise InputError(f"a shard file ended at byte {offset} inside a row being merged (changed during the merge?)")
        written = os.write(dst, data)
        offset, length = offset + written, length - written


_KERNEL_COPY = hasattr(os, "copy_file_range")
_BINARY = getattr(os, "O_BINARY", 0)  # no newline translation where the system has text-mode descriptors


def _finish_split(tmp: Path, stream: Path, fd: int, size: int) -> None:
    """The split file `tmp` as the first `size` bytes of `stream` (open at `fd`): a hard link to it when that is all of
    it (no byte copied; the stream is never written again: a resumed run copies it first, `StreamWriter`), else, or
    where links fail (another file system), a copy."""
    opened, named = os.fstat(fd), os.stat(stream)
    if opened.st_size == size and (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino):
        tmp.unlink()
        try:
            os.link(stream, tmp)
            return
        except OSError:
            pass
    with open(tmp, "wb", buffering=0) as f:
        copy_span((fd, 0, size), f.fileno())


def write_shard(out: Path, k: int, lines: bytes | list[bytes], metas: bytes, stats: Stats) -> None:
    """Shard k's rows, meta sidecar (both UTF-8, a line each) and stats, each written atomically, then its completion marker."""
    rows_path = _paths(out, k)[0]
    _atomic_write(rows_path, lines)
    _atomic_write(rows_path.with_suffix(".meta"), metas)
    _mark_done(out, k, stats)


def _mark_done(out: Path, k: int, stats: Stats, record: dict | None = None) -> None:
    """Shard k's completion marker, written last, once its rows are in place: its stats, and a stream shard's stream
    ends ("streams") or a worker-written shard's parts ("parts"). One file (not a stats file beside it): creating a
    file is what costs here (`PartWriter`)."""
    _atomic_write(_paths(out, k)[2], json.dumps({**(record or {}), "stats": stats.as_dict()}, sort_keys=True) + "\n")


def _done_record(done_path: Path) -> dict:
    """A done marker's record ({} for the empty marker of an older version's classic shard)."""
    text = done_path.read_text(encoding="utf-8")
    return json.loads(text) if text.strip() else {}


def shard_stats(rows_path: Path) -> Stats:
    """A finished shard's stats: in its done marker, or (an older version's) `.stats.json` beside it."""
    record = _done_record(rows_path.with_suffix(".done"))
    if "stats" in record:
        return Stats.from_dict(record["stats"])
    return Stats.from_dict(json.loads(rows_path.with_suffix(".stats.json").read_text(encoding="utf-8")))


def stream_path(out: Path, split: str) -> Path:
    """The stream of `split` in work dir `out` (a shard-* name: removed with the shards of a failed start)."""
    return out / "shards" / f"shard-stream-{split}.jsonl"


def _stream_ends(done_path: Path) -> dict[str, int] | None:
    """A stream shard's done marker: the byte length of each split's stream once it was written; None: a classic shard."""
    return _done_record(done_path).get("streams")


class StreamWriter:
    """Shards written in final form by one process in shard order (module docstring). Made for a job whose finished
    shards are exactly the first ones and all stream shards (`for_pending`, else None): the signatures of their rows
    are read back from their metas and each stream is cut to the ends the last of them recorded."""

    def __init__(self, out: Path, done: int):
        self.out, self.seen, self.fds = out, set(), {}
        ends = _stream_ends(_paths(out, done - 1)[2]) if done else {}
        self.ends = {s: ends.get(s, 0) for s in SPLITS}
        for k in range(done):
            self.seen.update(map(signature, _read_metas(_paths(out, k)[0].with_suffix(".meta"))))
        try:
            for split in SPLITS:
                path = stream_path(out, split)
                if path.exists() and os.stat(path).st_nlink > 1:
                    _unshare(path, self.ends[split])  # a published split file is this stream: leave it as it is
                fd = self.fds[split] = os.open(path, os.O_WRONLY | os.O_CREAT | _BINARY, 0o666)  # open()'s mode: as a copied split
                if os.fstat(fd).st_size < self.ends[split]:
                    raise InputError(f"stream {path.name} is shorter than its last finished shard recorded "
                                     "(changed outside ledgerlm synth?); use a new --out", path=str(path))
                os.ftruncate(fd, self.ends[split])  # what a killed run appended after its last finished shard
                os.lseek(fd, self.ends[split], os.SEEK_SET)
        except BaseException:
            self.close()
            raise

    @classmethod
    def for_pending(cls, out: Path, todo: list[int], total: int) -> "StreamWriter | None":
        if not todo or todo != list(range(todo[0], total)):
            return None
        if any(_stream_ends(_paths(out, k)[2]) is None for k in range(todo[0])):
            return None  # shards of a classic run: go on as it did
        return cls(out, todo[0])

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}

    def run_shard(self, k: int, n_slots: int, shard_size: int, slot_fn: SlotFn) -> Stats:
        """Shard k generated, its new rows appended to the streams, its metas, stats and done marker written."""
        stats = Stats()
        rows = _shard_rows(slot_fn, shard_slots(k, n_slots, shard_size), stats)
        pieces, sizes, ends = _checked_pieces(rows)
        metas, out, start = [], {s: [] for s in SPLITS}, 0
        for row, size, end in zip(rows, sizes, ends):
            meta = _meta(row, size)
            sig = signature(meta)
            if sig in self.seen:  # the merge drops it too (the earlier row is in an earlier shard or this one)
                meta["at"] = None
            else:
                self.seen.add(sig)
                split = meta["split"]
                if split not in out:
                    raise InputError(f"generated sample {row.get('id')!r}: split {split!r} is not one of {list(SPLITS)}",
                                     field="split")
                meta["at"] = self.ends[split]
                self.ends[split] += size
                out[split] += pieces[start:end]
            metas.append(meta)
            start = end
        for split, written in out.items():
            if written:
                _write_pieces(self.fds[split], written)
        _atomic_write(_paths(self.out, k)[0].with_suffix(".meta"), dumps_lines(metas, whole=True))
        _mark_done(self.out, k, stats, {"streams": dict(self.ends)})
        return stats


def _unshare(path: Path, size: int) -> None:
    """Replace the file `path` by a copy of its first `size` bytes (the old file stays as it is under its other names)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(path, "rb") as src, open(tmp, "wb", buffering=0) as dst:
        copy_span((src.fileno(), 0, size), dst.fileno())
    os.replace(tmp, path)


def _worker(args: tuple) -> tuple[int, dict]:
    out, k, n_slots, shard_size = args
    return k, run_shard(Path(out), k, n_slots, shard_size, _SLOT_FN).as_dict()


def pending_shards(out: Path, n_slots: int, shard_size: int, select: tuple[int, int] = (0, 1)) -> list[int]:
    """Shards this job owns (k % n == i) that have no completion marker yet."""
    i, n = select
    return [k for k in range(n_shards(n_slots, shard_size)) if k % n == i and not _paths(out, k)[2].exists()]


def _any_done(out: Path) -> bool:
    return any((out / "shards").glob("*.done"))


def discard_failed_start(out: Path) -> None:
    """Remove run.json, shards/ and (when then empty) the work dir itself — only while no shard is done."""
    if _any_done(out):
        return
    shard_dir = out / "shards"
    if shard_dir.is_dir():
        for path in shard_dir.glob("shard-*"):  # rows, meta, stats and .tmp files of unfinished shards
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            shard_dir.rmdir()
    (out / "run.json").unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        out.rmdir()  # only when nothing else is in it


def run_shards(out: Path, slot_fn: SlotFn, n_slots: int, shard_size: int, *, num_proc: int = 1,
               select: tuple[int, int] = (0, 1), on_done: Callable[[int, Stats], None] | None = None,
               affine_run: Callable | None = None) -> None:
    """Generate every pending shard of this job, in `num_proc` forked processes; `on_done(k, stats)` per shard.
    With `affine_run` (`affine.run`) and a slot function that has `affinity`, the workers are company-affine;
    otherwise each worker takes whole shards in turn. A single job (select 0/1) that fails before its first
    shard is done leaves no resume state behind."""
    try:
        _run_shards(out, slot_fn, n_slots, shard_size, num_proc=num_proc, select=select, on_done=on_done, affine_run=affine_run)
    except BaseException:
        if select[1] == 1:  # job-array members share the folder: another member's start is not ours to remove
            discard_failed_start(out)
        raise


def _run_shards(out: Path, slot_fn: SlotFn, n_slots: int, shard_size: int, *, num_proc: int,
                select: tuple[int, int], on_done: Callable[[int, Stats], None] | None, affine_run: Callable | None) -> None:
    global _SLOT_FN
    todo = pending_shards(out, n_slots, shard_size, select)
    if num_proc <= 1 or len(todo) <= 1:
        streams = StreamWriter.for_pending(out, todo, n_shards(n_slots, shard_size)) if select == (0, 1) else None
        try:
            for k in todo:
                if streams:
                    stats = streams.run_shard(k, n_slots, shard_size, slot_fn)
                else:
                    stats = run_shard(out, k, n_slots, shard_size, slot_fn)
                if on_done:
                    on_done(k, stats)
        finally:
            if streams:
                streams.close()
        return
    if affine_run is not None and getattr(slot_fn, "affinity", None) is not None:
        affine_run(out, slot_fn, todo, n_slots, shard_size, num_proc, on_done, select)  # company-affine workers (affine.py)
        return
    _SLOT_FN = slot_fn
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(num_proc) as pool:
        for k, stats in pool.imap_unordered(_worker, [(str(out), k, n_slots, shard_size) for k in todo]):
            if on_done:
                on_done(k, Stats.from_dict(stats))


def find_shards(dirs: list[Path], n_slots: int, shard_size: int) -> list[Path]:
    """The finished rows file of every shard, looked up across `dirs`; error naming the ones missing."""
    found, missing = [], []
    for k in range(n_shards(n_slots, shard_size)):
        hit = next((d for d in dirs if _paths(d, k)[2].exists()), None)
        (found if hit else missing).append(_paths(hit, k)[0] if hit else k)
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
        raise InputError(f"{len(missing)} shard(s) not finished: {shown} — run the remaining --shard jobs first",
                         path=", ".join(map(str, dirs)))
    return found


def merged_rows(rows_files: list[Path], signature: Callable[[dict], tuple], stats: Stats,
                streams: Streams | None = None) -> Iterator[tuple[dict, Span]]:
    """(meta, row span, copied verbatim) of every shard in order, first occurrence of each signature only (drops
    counted as `duplicate`). `streams`: where the streams of stream shards are opened (the caller closes it)."""
    seen = set()
    for path in rows_files:
        stats.add(shard_stats(path))
        for span, meta in shard_rows(path, streams):
            sig = signature(meta)
            if sig in seen:
                stats.kept -= 1
                stats.drop("duplicate")
                continue
            if span is None:
                raise InputError(f"row {meta.get('id')!r} was dropped as a duplicate when written but no earlier row "
                                 "here has its signature (shards of different runs?)", path=str(path))
            seen.add(sig)
            yield meta, span


def write_splits(out: Path, rows: Iterator[tuple[dict, Span]], on_row: Callable[[dict], None],
                 streams: Streams | None = None) -> None:
    """Copy rows (spans of shard files, `copy_span`) into train/dev/test.jsonl (temp files renamed at the end, so a
    kill leaves no half file). A split whose rows are one stream of `streams` from its first byte to its last is that
    stream, linked (`_finish_split`): while its rows continue a stream nothing is copied; the first row that does not
    copies the stream's part so far and the split is copied from then on. Rows that follow each other in one stream
    are copied in one call (a worker's consecutive slots of one split: 8,673 rows of a --num 10000 run with 2 workers
    took 3,534 calls)."""
    out.mkdir(parents=True, exist_ok=True)
    for s in SPLITS:  # a temp file left by a killed run may be a link to a stream or a published split: never truncated
        (out / f"{s}.jsonl.tmp").unlink(missing_ok=True)
    handles = {s: open(out / f"{s}.jsonl.tmp", "xb", buffering=0) for s in SPLITS}  # unbuffered: written by fd
    linkable = streams.paths if streams is not None else {}
    runs: dict[str, list | None] = {s: [None, 0] for s in SPLITS}  # split -> [stream fd, its bytes so far]; None: copied
    pending: dict[str, list] = {}  # split -> [fd, offset, length] of rows not copied yet (one span of one file)
    try:
        for meta, span in rows:
            on_row(meta)
            split = meta["split"]
            run = runs[split]
            fd, offset, length = span
            if run is not None:
                if offset == run[1] and (fd == run[0] or (run[0] is None and fd in linkable)):
                    run[0], run[1] = fd, offset + length
                    continue
                if run[1]:
                    pending[split] = [run[0], 0, run[1]]
                runs[split] = None
            held = pending.get(split)
            if held is not None and held[0] == fd and held[1] + held[2] == offset:
                held[2] += length
                continue
            if held is not None:
                copy_span(tuple(held), handles[split].fileno())
                del pending[split]
            if fd in linkable:  # open for the whole merge (a shard's own files close after its rows)
                pending[split] = [fd, offset, length]
            else:
                copy_span(span, handles[split].fileno())
        for split, held in pending.items():
            copy_span(tuple(held), handles[split].fileno())
        for split, run in runs.items():
            if run is not None and run[1]:
                handles[split].close()
                _finish_split(out / f"{split}.jsonl.tmp", linkable[run[0]], run[0], run[1])
    except BaseException:
        for s, f in handles.items():
            f.close()
            (out / f"{s}.jsonl.tmp").unlink(missing_ok=True)  # no half-written split file is left behind
        raise
    finally:
        for f in handles.values():
            f.close()
    for s in SPLITS:
        tmp, final = out / f"{s}.jsonl.tmp", out / f"{s}.jsonl"
        if final.exists() and os.path.samefile(tmp, final):
            tmp.unlink()  # a rerun linked the same stream: rename(2) of two links to one file does nothing, leaving tmp
        else:
            os.replace(tmp, final)
