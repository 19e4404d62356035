"""`ledgerlm synth`: build a FinIndices-style dataset from real filings.

    ledgerlm synth --out out/synth                      # default config, embedded SEC sample, no network
    ledgerlm synth --config configs/synth/default.yaml --out out/synth --num 10000 --num-proc 2
    ledgerlm synth --out out/synth --shard 3/8          # one job of a SLURM array (launch/synth_array.slurm)
    ledgerlm synth --merge out/synth --out out/synth    # merge the finished shards
    ledgerlm synth --out out/synth --num-proc 16 --drop-work   # keep no resume state (with workers: a second copy of the rows)
    ledgerlm synth --out out/synth --ray-tasks 64 --ray-address auto   # shard jobs as Ray tasks, then merge (ray_runner.py)
    ledgerlm synth --task macrolens-t3 …                # MacroLens T3 data (ledgerlm.synth.macrolens_t3)
    ledgerlm synth --out out/synth --push-to-hub me/finindices-sec   # publish with its card (synth/finindices/publish.py)
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ledgerlm.atomic import check_folder
from ledgerlm.cli import exit_early, gc_paused
from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import dataset, ray_runner
from ledgerlm.synth.finindices.config import load_config
from ledgerlm.synth.finindices.contexts import Builder
from ledgerlm.synth.finindices.publish import push

# Imported where used, not here: macrolens_t3 (it pulls pandas). A plain `ledgerlm synth` does not need it, and
# every module imported before the workers fork is serial start-up that caps `--num-proc` scaling (issue 17;
# tests/test_synth_startup.py checks the warm path). ray_runner and publish import Ray / datasets only when run.


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ledgerlm synth", description=__doc__.splitlines()[0])
    p.add_argument("--task", default="finindices", help="finindices (default) | macrolens-t3")
    p.add_argument("--config", help="YAML config (fields of SynthConfig); flags override it")
    p.add_argument("--source", action="append", dest="sources", help="facts file/folder (repeatable); default: embedded SEC sample")
    p.add_argument("--out", help="output dataset folder: new, empty or an earlier synth output (resume state: shards/ + "
                   "run.json in the sibling OUT.work/)")
    p.add_argument("--num", type=int, help="N, the number of samples to attempt (default 2000; rounded up to whole items, one "
                   "sample per hint variant). Samples dropped as duplicates, over the token cap or without a derivable target "
                   "are counted by reason under `drops` in manifest.json, so the dataset can hold fewer than N rows")
    p.add_argument("--seed", type=int, help="random seed (default 0)")
    p.add_argument("--num-proc", type=int, dest="num_proc", help="worker processes on this machine")
    p.add_argument("--shard", help="i/n: run only shards k with k %% n == i (a job-array member); merge later")
    p.add_argument("--ray-tasks", type=int, dest="ray_tasks", metavar="N", help="run the shard jobs 0/N .. N-1/N as N Ray "
                   "tasks, then merge (needs `pip install 'ledgerlm[ray]'`; OUT on a filesystem every node sees)")
    p.add_argument("--ray-address", dest="ray_address", metavar="ADDR", help="with --ray-tasks: the Ray cluster "
                   "('auto' inside one); default: start a local Ray instance")
    p.add_argument("--cpus-per-task", type=float, dest="cpus_per_task", metavar="C",
                   help="with --ray-tasks: CPUs Ray reserves per task (default 1; with --num-proc P use P)")
    p.add_argument("--merge", nargs="+", metavar="DIR", help="merge finished shards from these folders into --out")
    p.add_argument("--tokenizer", help="tiktoken encoding (o200k_base, cl100k_base) or a Hugging Face tokenizer path")
    p.add_argument("--max-tokens", type=int, dest="max_tokens", help="token cap per prompt (default 32768)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (logs, batch jobs)")
    p.add_argument("--push-to-hub", metavar="REPO", help="after building, publish OUT with its card as the Hugging Face "
                   "dataset REPO (datasets' push_to_hub; token from HF_TOKEN or `hf auth login`)")
    p.add_argument("--private", action="store_true", help="with --push-to-hub: create the dataset repo private")
    p.add_argument("--drop-work", action="store_true", dest="drop_work", help="after a full build or a merge, remove the "
                   "resume state (OUT.work/: shards, worker streams, run.json; with --merge each merged DIR's too): with "
                   "--num-proc > 1, shard jobs or Ray it holds a second copy of every row; a rerun then starts over")
    return p


def kept_line(manifest: dict) -> str:
    """How the progress bar's 'generated' count becomes the dataset's rows: generated - duplicates = kept."""
    dups = int(manifest["drops"].get("duplicate", 0))
    return f"synth: {manifest['kept'] + dups} generated - {dups} duplicates = {manifest['kept']} kept (manifest.json)"


def _select(text: str | None) -> tuple[int, int]:
    if not text:
        return (0, 1)
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise InputError(f"--shard {text!r}: expected i/n, e.g. 0/8", field="shard") from None
    if not (n >= 1 and 0 <= i < n):
        raise InputError(f"--shard {text!r}: need 0 <= i < n", field="shard")
    return (i, n)


def _check_ray_flags(args: argparse.Namespace) -> None:
    """--ray-* flags only with --ray-tasks N >= 1, never with --shard/--merge; Ray itself must be importable."""
    if args.ray_tasks is None:
        for flag, value in (("--ray-address", args.ray_address), ("--cpus-per-task", args.cpus_per_task)):
            if value is not None:
                raise InputError(f"{flag} needs --ray-tasks N", field=flag.lstrip("-"))
        return
    if args.ray_tasks < 1:
        raise InputError(f"--ray-tasks {args.ray_tasks}: need >= 1", field="ray-tasks")
    for flag, value in (("--shard", args.shard), ("--merge", args.merge)):
        if value:
            raise InputError(f"--ray-tasks runs every shard job and merges: drop {flag}", field="ray-tasks")
    if args.cpus_per_task is not None and args.cpus_per_task <= 0:
        raise InputError(f"--cpus-per-task {args.cpus_per_task}: need > 0", field="cpus-per-task")
    ray_runner.require_ray()


def _check_out(out: Path) -> None:
    """Before any work: OUT is new, or a folder holding only what a synth run publishes there (a rerun or resume
    overwrites those), or a work dir itself (`dataset.work_dir`). A file, or a folder of other files, is refused."""
    if len(out.name.encode()) > 240:  # the work dir adds '.work' and temp names more (a file name holds 255 bytes)
        raise InputError(f"--out: the folder name is {len(out.name.encode())} bytes long; file systems take 255, and "
                         "synth adds '.work' and temp suffixes: give a name of at most 240 bytes")
    if out.is_symlink() and not out.exists():
        raise InputError(f"--out {out} is a link to nothing ({os.readlink(out)}): give a folder for the dataset")
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is an existing file: give a folder for the dataset")
    if out.resolve().parent == out.resolve():
        raise InputError(f"--out {out} is the file system's root: give a folder of its own for the dataset")
    check_folder(out, "--out folder")  # a folder above it that is a file
    if not out.is_dir():
        _probe_writable(next(p for p in out.absolute().parents if p.exists()), out)
    if not out.is_dir() or dataset.work_dir(out) == out:
        return
    # (NAME.tmp: what a killed run leaves of NAME; dot files: .DS_Store, NFS's .nfsXXXX of a split a reader holds open)
    others = sorted(p.name for p in out.iterdir()
                    if p.name.removesuffix(".tmp") not in dataset.PUBLISHED and not p.name.startswith("."))
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise InputError(f"--out {out} already holds files a synth run does not write ({shown}): give a new or empty "
                         f"folder, or one an earlier `ledgerlm synth` wrote ({', '.join(dataset.PUBLISHED)})")


def _probe_writable(folder: Path, out: Path) -> None:
    """The dataset and its work dir are made beside OUT: a folder that cannot hold a new folder (/proc, a read-only
    mount) is refused before any work, naming OUT (the probe folder is removed at once)."""
    try:
        os.rmdir(tempfile.mkdtemp(dir=folder, prefix=".ledgerlm-probe-"))
    except OSError as err:
        raise InputError(f"--out {out}: cannot create folders in {folder} ({err.strerror or err})", path=str(out)) from None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--task" in argv and argv[argv.index("--task") + 1:][:1] == ["macrolens-t3"]:
        from ledgerlm.synth import macrolens_t3

        i = argv.index("--task")
        return int(macrolens_t3.main(argv[:i] + argv[i + 2:]) or 0)
    args = make_parser().parse_args(argv)
    if args.task != "finindices":
        raise InputError(f"unknown --task {args.task!r}: finindices | macrolens-t3", field="task")
    if not args.out:
        raise InputError("--out DIR is required", field="out")
    _check_ray_flags(args)
    from rich.console import Console

    out = Path(args.out)
    if not out.name:  # ".", "..": the work dir is named after the folder (`dataset.work_dir`)
        out = out.resolve()
    _check_out(out)
    if args.drop_work and args.shard:
        raise InputError("--drop-work with --shard: a shard job's work dir is what the merge reads; pass --drop-work "
                         "to the --merge", field="drop-work")
    if args.merge:
        manifest = dataset.merge(out, [Path(d) for d in args.merge])
        Console(stderr=True).print(dataset.summary_table(manifest))
        if args.drop_work:
            drop_work(out, [Path(d) for d in args.merge])
        if args.push_to_hub:
            _push(out, args)
        return 0
    select = _select(args.shard)
    with gc_paused():  # the start-up state (config, registry, stores, tokenizer) lives for the whole run
        cfg = load_config(args.config, sources=args.sources, num=args.num, seed=args.seed, num_proc=args.num_proc,
                          tokenizer=args.tokenizer, max_tokens=args.max_tokens)
        builder = None if args.ray_tasks else Builder.from_config(cfg)
    if args.ray_tasks:
        manifest = ray_runner.run(cfg, out, args.ray_tasks, address=args.ray_address,
                                  cpus_per_task=1 if args.cpus_per_task is None else args.cpus_per_task)
        print(f"ray: {args.ray_tasks} tasks wrote {manifest['shards']} shards; merged", file=sys.stderr)
        return _finish(out, manifest, args)
    slots = dataset.n_slots(cfg.num, len(cfg.hint_variants))
    # Nor while generating (forked workers inherit it): the young collections long_lived_caches still allows find
    # little garbage (--num 10000: ~10,000 cyclic objects for 0.14 s CPU; peak RSS 411 MB either way); what is left
    # is collected after the run.
    with dataset.long_lived_caches(), gc_paused():
        fingerprint = {**cfg.fingerprint(), "split_rule": builder.split_rule}  # recorded in run.json -> manifest
        if select[1] > 1:
            dataset.generate(out, fingerprint, builder, num_slots=slots, shard_size=cfg.shard_size,
                             num_proc=cfg.num_proc, select=select, progress=not args.no_progress)
            print(f"shard job {select[0]}/{select[1]} done; merge with: ledgerlm synth --merge {out} --out {out}", file=sys.stderr)
            return 0
        manifest = dataset.build(out, fingerprint, builder, num_slots=slots, shard_size=cfg.shard_size,
                                 num_proc=cfg.num_proc, progress=not args.no_progress)
    return exit_early(_finish(out, manifest, args))  # the `ledgerlm` program leaves here, without freeing the builder's caches


def _finish(out: Path, manifest: dict, args: argparse.Namespace) -> int:
    """After a full build (one process or Ray): the summary table, the kept line, OUT; then the optional push."""
    from rich.console import Console

    Console(stderr=True).print(dataset.summary_table(manifest))
    print(kept_line(manifest), file=sys.stderr)
    if args.drop_work:
        drop_work(out, [])
    print(out)
    if args.push_to_hub:
        _push(out, args)
    return 0


def drop_work(out: Path, merged: list[Path]) -> list[Path]:
    """--drop-work, after OUT is published: remove the sibling work dirs (`<dir>.work/`) of OUT and of the merged
    folders; returns them. A published split made by one process is a hard link to its stream, so it stays whole.
    Never a folder that holds published files: an older version's layout (run.json beside the dataset) and a work
    dir that OUT lies in are left as they are. A removal that fails is reported on stderr (the dataset is complete)."""
    published, removed = Path(out).resolve(), []
    for folder in [Path(out), *merged]:
        work = dataset.work_dir(folder)
        if not work.name.endswith(".work") or not work.is_dir():  # (a folder named twice is gone the second time)
            continue
        if published == work.resolve() or work.resolve() in published.parents:
            continue
        if (work / "manifest.json").is_file():  # a dataset published into a folder named *.work (`--out d.work`)
            print(f"synth: --drop-work left {work}: it holds a published dataset (manifest.json)", file=sys.stderr)
            continue
        try:
            shutil.rmtree(work)
        except OSError as err:
            print(f"synth: --drop-work could not remove {work}: {err}", file=sys.stderr)
            continue
        removed.append(work)
        print(f"synth: removed the resume state {work} (--drop-work)", file=sys.stderr)
    return removed


def _push(out: Path, args: argparse.Namespace) -> None:
    """--push-to-hub: publish OUT with its card (publish.py)."""
    print(f"pushed to {push(out, args.push_to_hub, private=args.private)}")


if __name__ == "__main__":
    sys.exit(main())
