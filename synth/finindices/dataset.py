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
from pathlib import Path
from typing import Callable

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
    over (about 1 s CPU of a 10,000-sample run). Freeze what exists now and collect less often; restored on exit."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


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


def generate(out: Path, fingerprint: dict, slot_fn: shards.SlotFn, *, num_slots: int, shard_size: int,
             num_proc: int = 1, select: tuple[int, int] = (0, 1), progress: bool = True) -> int:
    """Run this job's pending shards (into `work_dir(out)`); returns how many shards it generated."""
    out = work_dir(out)
    shards.check_run_file(out, fingerprint)
    todo = shards.pending_shards(out, num_slots, shard_size, select)
    if not todo:
        return 0
    if not progress:
        shards.run_shards(out, slot_fn, num_slots, shard_size, num_proc=num_proc, select=select, affine_run=affine.run)
        return len(todo)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("synth"), BarColumn(), MofNCompleteColumn(), TextColumn("slots"), TimeRemainingColumn(),
                  TextColumn("generated {task.fields[kept]} (duplicates are removed at merge)")) as bar:
        task = bar.add_task("shards", total=sum(len(shards.shard_slots(k, num_slots, shard_size)) for k in todo), kept=0)
        kept = [0]

        def on_done(k: int, stats: Stats) -> None:
            kept[0] += stats.kept
            bar.update(task, advance=len(shards.shard_slots(k, num_slots, shard_size)), kept=kept[0])

        shards.run_shards(out, slot_fn, num_slots, shard_size, num_proc=num_proc, select=select, on_done=on_done,
                          affine_run=affine.run)
    return len(todo)


def merge(out: Path, dirs: list[Path]) -> dict:
    """Merge finished shards found in `dirs` (dataset folders or their work dirs) into `out`; returns the manifest."""
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
    files = shards.find_shards(dirs, num_slots, config["shard_size"])
    stats, counts = Stats(), Counts()
    shards.write_splits(out, shards.merged_rows(files, signature, stats), counts.add)
    manifest_text = build_manifest(config, counts, stats, {"slots": num_slots, "shards": len(files),
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
