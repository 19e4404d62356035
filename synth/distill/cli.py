"""`ledgerlm distill`: teacher trajectories for a synthesized dataset, kept only if the scorer verifies them.

    ledgerlm distill --data runs/data --split train --teacher openai:gpt-4o-mini --samples-per-item 4 \\
        --temperature 0.7 --out runs/distill --policy first --mix-solutions unsolved --concurrency 32

Writes OUT/{split}.jsonl (contract-5 rows + provenance), OUT/rejects.jsonl (one reason each),
OUT/manifest.json (acceptance per paradigm x axis x hint, tokens, cost) and keeps OUT/cache.jsonl (`ledgerlm.inference.cache`):
rerun the same command after a crash and only the missing samples are requested again.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ledgerlm.contracts import TrainingRow, write_jsonl
from ledgerlm.errors import InputError
from ledgerlm.inference.cache import AppendLog, CompletionCache
from ledgerlm.synth.distill.manifest import build_manifest
from ledgerlm.synth.distill.pipeline import POLICIES, DistillConfig, Progress, assemble, load_items, plan_jobs, run_jobs
from ledgerlm.synth.distill.teachers import make_teacher


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ledgerlm distill", description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="dataset folder from `ledgerlm synth` (or a .jsonl file)")
    p.add_argument("--split", default="train", help="which split file to distill (default: train)")
    p.add_argument("--teacher", required=True, help="openai:MODEL | vllm:PATH | hf:PATH | oracle")
    p.add_argument("--base-url", help="OpenAI-compatible server URL, e.g. http://127.0.0.1:8000/v1 (openai: only)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    p.add_argument("--out", required=True, help="output folder (holds the cache: rerun to resume)")
    p.add_argument("--cache", help="cache file to use instead of OUT/cache.jsonl (share one across runs)")
    hint = p.add_mutually_exclusive_group()
    hint.add_argument("--hint", dest="hint_mode", action="store_const", const="hint", help="only with-hint items")
    hint.add_argument("--no-hint", dest="hint_mode", action="store_const", const="no_hint", help="only no-hint items")
    hint.add_argument("--both", dest="hint_mode", action="store_const", const="both", help="both variants (default)")
    p.set_defaults(hint_mode="both")
    p.add_argument("--samples-per-item", type=int, default=4, help="K teacher samples per item")
    p.add_argument("--temperature", type=float, default=0.7, help="> 0 so the K samples differ")
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--max-tokens", type=int, default=4096, help="new tokens per sample; longer ones are rejected as truncated")
    p.add_argument("--seed", type=int, default=0, help="run seed: per-sample teacher seeds and solution mixing derive from it")
    p.add_argument("--policy", choices=POLICIES, default="first", help="which verified samples of an item become rows")
    p.add_argument("--mix-solutions", metavar="F", help="'unsolved' (worked solutions of never-solved items) or a fraction F of all items")
    p.add_argument("--concurrency", type=int, help="requests in flight (default 8 for openai:, 1 for local teachers)")
    p.add_argument("--batch-size", type=int, help="conversations per sampler call (default 1 for openai:, 256 for vllm:, 16 for hf:)")
    p.add_argument("--rps", type=float, help="requests per second limit")
    p.add_argument("--tpm", type=float, help="tokens per minute limit (prompt estimate + max tokens, corrected by usage)")
    p.add_argument("--max-failed-fraction", type=float, default=0.5, metavar="F",
                   help="exit 3 without writing rows when more than F of the teacher requests fail (transport errors)")
    p.add_argument("--max-retries", type=int, help="openai: retries on 429/5xx/timeouts (backend default 6)")
    p.add_argument("--backoff-base", type=float, help="openai: first backoff in seconds when no Retry-After (default 1)")
    p.add_argument("--backoff-max", type=float, help="openai: longest wait between retries, Retry-After included (default 60)")
    p.add_argument("--timeout", type=float, help="openai: seconds per request")
    p.add_argument("--dtype", help="hf: torch dtype (float32 on CPU by default)")
    p.add_argument("--price-in", type=float, help="USD per million prompt tokens (for the manifest's cost)")
    p.add_argument("--price-out", type=float, help="USD per million completion tokens")
    p.add_argument("--limit", type=int, help="only the first N items (smoke runs)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}", args.split) or ".." in args.split:
        # the split names a file inside --data and --out: `../x` or `/tmp/x` would write outside --out
        raise InputError(f"--split {args.split!r} is not a plain split name (letters, digits, _ . -)", field="split")
    remote = args.teacher.startswith("openai:")
    config = DistillConfig(
        teacher=args.teacher, samples_per_item=args.samples_per_item, temperature=args.temperature, top_p=args.top_p,
        max_tokens=args.max_tokens, seed=args.seed, policy=args.policy, mix_solutions=args.mix_solutions,
        concurrency=args.concurrency or (8 if remote else 1),
        batch_size=args.batch_size or (1 if remote else 256 if args.teacher.startswith("vllm:") else 16),
        rps=args.rps, tpm=args.tpm,
    )
    out = Path(args.out)
    items = load_items(args.data, args.split, args.hint_mode, args.limit)
    teacher = make_teacher(args.teacher, concurrency=config.concurrency, base_url=args.base_url,
                           api_key_env=args.api_key_env, max_retries=args.max_retries, backoff_base=args.backoff_base,
                           backoff_max=args.backoff_max,
                           timeout=args.timeout, batch_size=config.batch_size, dtype=args.dtype)
    out.mkdir(parents=True, exist_ok=True)  # after the teacher: a missing API key or model folder leaves no --out behind
    jobs = plan_jobs(items, config, teacher.render)
    cache = CompletionCache(args.cache or out / "cache.jsonl")
    started = time.monotonic()
    try:
        with progress_bar(len(jobs), disable=args.no_progress) as update:
            outcomes = run_jobs(teacher, jobs, cache, config, {item["id"]: item for item in items}, on_update=update)
    finally:
        cache.close()  # everything finished so far is on disk: rerun to resume
    rows, rejects = assemble(items, jobs, outcomes, config)
    manifest = build_manifest(items, rows, rejects, config=asdict(config), data_path=str(args.data),
                              price_in=args.price_in, price_out=args.price_out)
    failed = [r for r in rejects if r["reason"] == "transport_error"]  # a dead --base-url fails every request
    if failed:
        manifest["partial"] = True
    if failed and len(failed) > args.max_failed_fraction * len(jobs):
        write_text(out / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        print(f"ledgerlm distill: error: {len(failed)} of {len(jobs)} teacher requests failed (more than "
              f"{args.max_failed_fraction:.0%}); first transport error: {str(failed[0].get('detail'))[:300]}; no "
              f"{args.split}.jsonl written, manifest.json marked partial (rerun to resume)", file=sys.stderr)
        return 3
    write_jsonl(out / f"{args.split}.jsonl", [TrainingRow.from_dict(r, f"distill row {r.get('id')!r}") for r in rows], sort_keys=True)
    write_jsonl(out / "rejects.jsonl", rejects, sort_keys=True)
    write_text(out / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    elapsed = time.monotonic() - started
    requested = len(outcomes) - update.progress.cached
    AppendLog(out / "runs.jsonl").append({"elapsed_s": round(elapsed, 3), "requested": requested,
                                          "cached": update.progress.cached, "rows": len(rows)})
    counts = manifest["counts"]
    print(f"distill: {counts['items']} items, {counts['samples']} samples ({update.progress.cached} cached), "
          f"acceptance {counts['acceptance_rate']}, {counts['rows']} rows "
          f"({counts['rows_solution']} worked solutions), rejects {manifest['rejects']} -> {out}")
    return 0


class progress_bar:
    """A rich progress bar with the live acceptance rate; `update(progress)` is the run's callback."""

    def __init__(self, total: int, disable: bool = False):
        console = Console(stderr=True)
        self.progress = Progress()
        self._bar = RichProgress(
            TextColumn("distill"), BarColumn(), MofNCompleteColumn(),
            TextColumn("accepted {task.fields[rate]:.1%}"), TextColumn("{task.fields[tokens]} tok"),
            TimeElapsedColumn(), TimeRemainingColumn(), console=console, refresh_per_second=4,
            disable=disable or not console.is_terminal,
        )
        self._task = self._bar.add_task("distill", total=total, rate=0.0, tokens=0)
        self._shown_at = 0.0  # counters reach the bar at most 4 times a second (and once at the end)

    def __enter__(self) -> "progress_bar":
        self._bar.start()
        return self

    def __exit__(self, *exc) -> None:
        self._show()
        self._bar.stop()

    def __call__(self, progress: Progress) -> None:
        self.progress = progress
        now = time.monotonic()
        if now - self._shown_at >= 0.25:
            self._shown_at = now
            self._show()

    def _show(self) -> None:
        progress = self.progress
        self._bar.update(self._task, completed=progress.done, rate=progress.acceptance,
                         tokens=progress.prompt_tokens + progress.completion_tokens)



def write_text(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", errors="replace") as handle:  # a lone surrogate is written as '?'
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
