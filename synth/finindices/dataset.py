"""Build a dataset folder: generate shards (resumable, parallel, job-array friendly), then merge them
into train/dev/test.jsonl + manifest.json + README.md.

    python -m ledgerlm.synth.finindices.cli --out out/synth --num 200

`generate` and `merge` take any slot function `slot_fn(slot, stats) -> [rows]`, so the machinery is
tested with a fake generator (tests/test_synth_finindices_shards.py) and used with the real one (contexts.py).
"""
from __future__ import annotations

import contextlib
import gc
import json
import threading
from pathlib import Path
from typing import Callable, Iterable

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import affine, shards
from ledgerlm.synth.finindices.card import dataset_card
from ledgerlm.synth.finindices.manifest import Counts, build_manifest
from ledgerlm.synth.finindices.pipeline import Stats
from ledgerlm.synth.finindices.split import signature


@contextlib.contextmanager
def long_lived_caches():
    """Generation keeps large caches (stores, computed indices, rendered blocks) for the whole run while
    making many short-lived objects; the default garbage-collector thresholds rescan the caches over and
    over (about 1 s CPU of a 10,000-sample run). Freeze what exists now and collect less often; restored on exit.
    On exit the run's survivors (millions of objects still in the middle generation: it is collected only every 50
    young collections here) are moved to the oldest generation with the rest, as a collection would have moved
    them, without scanning them: under the default thresholds restored, the next middle-generation collection
    scanned them all (0.42 s CPU in the summary after a --num 10000 run, gc callbacks)."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.freeze()  # every tracked object, the run's included, into the permanent generation ...
        gc.set_threshold(*thresholds)
        gc.unfreeze()  # ... and from there into the oldest one


PUBLISHED = tuple(f"{s}.jsonl" for s in shards.SPLITS) + ("manifest.json", "README.md")  # what a run writes into OUT


def work_dir(out: Path) -> Path:
    """Where a dataset folder's resume state (`shards/`, `run.json`) lives: the sibling `<out>.work/`, so the
    published folder holds only train/dev/test.jsonl, manifest.json and README.md. A folder that already
    holds run.json (a work dir given directly, or one written by an older version) is its own work dir."""
    out = Path(out)
    if (out / "run.json").is_file() or out.name.endswith(".work"):
        return out
    return out.with_name(out.name + ".work")


def n_slots(num: int, variants: int) -> int:
    return (num + variants - 1) // variants


def build(out: Path, fingerprint: dict, slot_fn: shards.SlotFn, *, num_slots: int, shard_size: int, num_proc: int = 1,
          progress: bool = True) -> dict:
    """`generate` then `merge` for a whole run (one job); returns the manifest. With `num_proc` > 1 the merge runs
    in a thread beside the worker processes, taking each shard as soon as it and every shard before it are
    written (this process is otherwise mostly waiting), so merging is no longer a serial step after generation."""
    if num_proc <= 1:
        generate(out, fingerprint, slot_fn, num_slots=num_slots, shard_size=shard_size, progress=progress)
        return merge(out, [out])
    work = work_dir(out)
    shards.check_run_file(work, fingerprint)
    total = shards.n_shards(num_slots, shard_size)
    written = set(range(total)) - set(shards.pending_shards(work, num_slots, shard_size))
    ready, failed, result = threading.Condition(), [], {}

    def on_shard(k: int) -> None:
        with ready:
            written.add(k)
            ready.notify_all()

    def in_order():
        for k in range(total):
            with ready:
                ready.wait_for(lambda: k in written or failed)
            if failed:
                raise _Stopped
            yield shards.shard_path(work, k)

    def merging() -> None:
        try:
            result["manifest"] = merge(out, [out], shard_files=in_order())
        except _Stopped:
            pass
        except BaseException as err:  # noqa: BLE001 - raised in the caller's thread below
            result["error"] = err

    thread = threading.Thread(target=merging, name="ledgerlm-synth-merge", daemon=True)
    thread.start()
    try:
        generate(out, fingerprint, slot_fn, num_slots=num_slots, shard_size=shard_size, num_proc=num_proc,
                 progress=progress, on_shard=on_shard)
    except BaseException:
        with ready:
            failed.append(True)
            ready.notify_all()
        thread.join()
        raise
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["manifest"]


class _Stopped(Exception):
    """Generation failed: the merge thread stops (the caller raises the generation's error)."""


def generate(out: Path, fingerprint: dict, slot_fn: shards.SlotFn, *, num_slots: int, shard_size: int,
             num_proc: int = 1, select: tuple[int, int] = (0, 1), progress: bool = True,
             on_shard: Callable[[int], None] | None = None) -> int:
    """Run this job's pending shards (into `work_dir(out)`); returns how many shards it generated.
    `on_shard(k)` after each shard is written."""
    out = work_dir(out)
    shards.check_run_file(out, fingerprint)
    todo = shards.pending_shards(out, num_slots, shard_size, select)
    if not todo:
        return 0
    for k in todo:  # what a killed run's workers left of these shards, whichever way they are redone now
        shards.clear_parts(out, k)
    shards.clear_streams(out, select)
    if not progress:
        shards.run_shards(out, slot_fn, num_slots, shard_size, num_proc=num_proc, select=select, affine_run=affine.run,
                          on_done=(lambda k, _stats: on_shard(k)) if on_shard else None)
        return len(todo)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("synth"), BarColumn(), MofNCompleteColumn(), TextColumn("slots"), TimeRemainingColumn(),
                  TextColumn("generated {task.fields[kept]} (duplicates are removed at merge)")) as bar:
        task = bar.add_task("shards", total=sum(len(shards.shard_slots(k, num_slots, shard_size)) for k in todo), kept=0)
        kept = [0]

        def on_done(k: int, stats: Stats) -> None:
            kept[0] += stats.kept
            bar.update(task, advance=len(shards.shard_slots(k, num_slots, shard_size)), kept=kept[0])
            if on_shard:
                on_shard(k)

        shards.run_shards(out, slot_fn, num_slots, shard_size, num_proc=num_proc, select=select, on_done=on_done,
                          affine_run=affine.run)
    return len(todo)


def merge(out: Path, dirs: list[Path], shard_files: Iterable[Path] | None = None) -> dict:
    """Merge finished shards found in `dirs` (dataset folders or their work dirs) into `out`; returns the manifest.
    `shard_files`: the shards' rows files in order, given as they are written (`build`), instead of looked up."""
    dirs = [work_dir(d) for d in dirs]
    runs = [d / "run.json" for d in dirs]
    texts = {p.read_text(encoding="utf-8") for p in runs if p.is_file()}
    if not texts:
        raise InputError("no run.json found: nothing to merge", path=", ".join(map(str, dirs)))
    if len(texts) > 1:
        raise InputError("shard folders come from runs with different configs or seeds", path=", ".join(map(str, dirs)))
    config = json.loads(texts.pop())
    variants = len(config["hint_variants"])
    num_slots = n_slots(config["num"], variants)
    files = shards.find_shards(dirs, num_slots, config["shard_size"]) if shard_files is None else shard_files
    stats, counts = Stats(), Counts()
    with shards.Streams() as streams:
        shards.write_splits(out, shards.merged_rows(files, signature, stats, streams), counts.add, streams)
    manifest_text = build_manifest(config, counts, stats, {"slots": num_slots, "shards": shards.n_shards(num_slots, config["shard_size"]),
                                                           "tokenizer": config.get("tokenizer")})
    (out / "manifest.json").write_text(manifest_text, encoding="utf-8")
    manifest = json.loads(manifest_text)
    (out / "README.md").write_text(dataset_card(manifest), encoding="utf-8")
    return manifest


def summary_table(manifest: dict):
    """A rich table of what was built: samples by split / paradigm / trap, drops by reason."""
    from rich.table import Table

    counts = manifest["counts"]
    table = Table(title=f"ledgerlm synth: {counts['total']} samples (seed {manifest['seed']})")
    table.add_column("group")
    table.add_column("value")
    table.add_column("count", justify="right")
    for group in ("split", "paradigm", "axis", "trap", "answer_format", "context_format", "hint", "language"):
        for key, n in counts.get(f"by_{group}", {}).items():
            table.add_row(group, key, str(n))
    for reason, n in manifest["drops"].items():
        table.add_row("dropped", reason, str(n))
    return table
