"""Interleaved A/B of end-to-end CPU: `python -m ledgerlm synth --num N` of an older commit vs the working tree.

    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_ab.py --old 97908c2 [--num 10000] [--rounds 3]
    ... --source bulk.zip   # another input (e.g. `synth_bulk.py`'s 100-company zip: the per-company cold work)
    ... --source bulk.zip --cache-build [--workers 2]   # time the store cache builds instead (each into a fresh folder)

This machine's CPU seconds drift by ±15 % between runs of the same code, so two code versions are only compared
run by run, interleaved (old, new, old, new, ...). The old commit is exported with `git archive` into a temp folder
laid out as the installed package (`ledgerlm/` with `synth`, `evaluate`, `train` inside) and put first on PYTHONPATH;
the working tree is laid out the same way (symlinks), and both run from a temp folder, never the repository root (from
there `-m` imported the working tree for both versions: A/B figures made with this script before that fix compared the
tree with itself).
Each version's store cache is built first and not timed; CPU seconds of each synth process come from wait4, and the
sha256 of train/dev/test/manifest shows whether both versions wrote the same bytes.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FILES = ("train.jsonl", "dev.jsonl", "test.jsonl", "manifest.json")


def export(rev: str, into: Path) -> Path:
    """The package of commit `rev` under `into/pkg` (importable as `ledgerlm` with PYTHONPATH=into/pkg)."""
    src = into / "src"
    src.mkdir(parents=True)
    tar = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True).stdout
    tarfile.open(fileobj=io.BytesIO(tar)).extractall(src)
    pkg = into / "pkg"
    pkg.mkdir()
    (pkg / "ledgerlm").symlink_to(src / "ledgerlm")
    for sub in ("synth", "evaluate", "train"):
        link = src / "ledgerlm" / sub
        if not link.exists():
            link.symlink_to(src / sub)
    return pkg


def tree(into: Path) -> Path:
    """The working tree laid out as the installed package (symlinks), under `into/pkg`, like `export`."""
    pkg = into / "pkg" / "ledgerlm"
    pkg.mkdir(parents=True)
    for entry in (REPO / "ledgerlm").iterdir():
        (pkg / entry.name).symlink_to(entry)
    for sub in ("synth", "evaluate", "train"):
        (pkg / sub).symlink_to(REPO / sub)
    return pkg.parent


# `python -m MODULE ARGS` with the package from PYTHONPATH, run outside the repository: from its root, `-m` puts the
# root first on sys.path, so `ledgerlm` came from the working tree for both versions and an editable install's import
# hook supplied `ledgerlm.synth` (until this fix every A/B compared the working tree with itself); any editable hook
# is dropped too, and the process checks which `ledgerlm` it runs
BOOT = ("import os, runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in "
        "(getattr(f, '__module__', '') + getattr(f, '__name__', type(f).__name__)).lower()]; import ledgerlm; "
        "assert ledgerlm.__file__.startswith(os.environ['PYTHONPATH'].split(os.pathsep)[0]), ledgerlm.__file__; "
        "del sys.argv[0]; runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)")


def run(env: dict, out: Path, num: int, source: str | None = None) -> tuple[float, str]:
    src = [source] if source else []
    subprocess.run([sys.executable, "-c", BOOT, "ledgerlm.synth.finindices.storecache", *src], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=out.parent)
    proc = subprocess.Popen([sys.executable, "-c", BOOT, "ledgerlm", "synth", "--num", str(num), "--out", str(out),
                             "--no-progress", *(["--source", source] if source else [])],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=out.parent)
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"synth failed: {proc.stderr.read().decode(errors='replace')[-2000:]}")
    digest = hashlib.sha256(b"".join((out / f).read_bytes() for f in FILES)).hexdigest()[:12]
    return ru.ru_utime + ru.ru_stime, digest


def build(env: dict, root: Path, source: str | None, workers: int) -> tuple[float, float, float, str]:
    """One store cache build into the empty cache root `root`: wall s, CPU s, peak RSS MB (wait4) and the sha256 of its
    files (names and bytes, in name order)."""
    env = dict(env, LEDGERLM_CACHE_DIR=str(root))
    cmd = [sys.executable, "-c", BOOT, "ledgerlm.synth.finindices.storecache", *([source] if source else []),
           "--workers", str(workers)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=root.parent)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"cache build failed: {proc.stderr.read().decode(errors='replace')[-2000:]}")
    (folder,) = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    digest = hashlib.sha256()
    for f in sorted(folder.iterdir()):
        digest.update(f.name.encode() + b"\0" + f.read_bytes())
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, digest.hexdigest()[:12]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--old", required=True, help="the commit to compare the working tree with")
    p.add_argument("--num", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--source", help="input file or folder for both versions (default: the embedded data)")
    p.add_argument("--cache-build", action="store_true", help="time each version's store cache build instead of synth")
    p.add_argument("--workers", type=int, default=2, help="--workers of the cache builds (--cache-build)")
    args = p.parse_args()
    source = str(Path(args.source).resolve()) if args.source else None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        versions = {"old": dict(os.environ, PYTHONPATH=str(export(args.old, tmp / "old"))),
                    "new": dict(os.environ, PYTHONPATH=str(tree(tmp / "new")))}
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        digests = set()
        for i in range(args.rounds):
            for name, env in versions.items():
                if args.cache_build:
                    (tmp / f"cache-{name}{i}").mkdir()
                    wall, seconds, rss, digest = build(env, tmp / f"cache-{name}{i}", source, args.workers)
                    cpu[name].append(seconds)
                    digests.add(digest)
                    print(f"round {i + 1} {name} ({args.old if name == 'old' else 'working tree'}): cache build {wall:.1f} s "
                          f"wall, {seconds:.1f} s CPU, peak RSS {rss:.0f} MB, files sha256 {digest}, load "
                          f"{os.getloadavg()[0]:.2f}", flush=True)
                    continue
                seconds, digest = run(env, tmp / f"{name}{i}", args.num, source)
                cpu[name].append(seconds)
                digests.add(digest)
                print(f"round {i + 1} {name} ({args.old if name == 'old' else 'working tree'}): {seconds:.2f} s CPU, "
                      f"sha256 {digest}, load {os.getloadavg()[0]:.2f}", flush=True)
    mean = {k: sum(v) / len(v) for k, v in cpu.items()}
    print(f"mean CPU: old {mean['old']:.2f} s, new {mean['new']:.2f} s ({100 * (mean['new'] / mean['old'] - 1):+.1f} %); "
          f"same bytes: {len(digests) == 1}")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
