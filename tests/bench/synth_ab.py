"""Interleaved A/B of end-to-end CPU: `python -m ledgerlm synth --num N` of an older commit vs the working tree.

    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_ab.py --old 97908c2 [--num 10000] [--rounds 3]

This machine's CPU seconds drift by ±15 % between runs of the same code, so two code versions are only compared
run by run, interleaved (old, new, old, new, ...). The old commit is exported with `git archive` into a temp folder
laid out as the installed package (`ledgerlm/` with `synth`, `evaluate`, `train` inside) and put first on PYTHONPATH.
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


def run(env: dict, out: Path, num: int) -> tuple[float, str]:
    subprocess.run([sys.executable, "-m", "ledgerlm.synth.finindices.storecache"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc = subprocess.Popen([sys.executable, "-m", "ledgerlm", "synth", "--num", str(num), "--out", str(out), "--no-progress"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"synth failed: {proc.stderr.read().decode(errors='replace')[-2000:]}")
    digest = hashlib.sha256(b"".join((out / f).read_bytes() for f in FILES)).hexdigest()[:12]
    return ru.ru_utime + ru.ru_stime, digest


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--old", required=True, help="the commit to compare the working tree with")
    p.add_argument("--num", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        versions = {"old": dict(os.environ, PYTHONPATH=str(export(args.old, tmp / "old"))), "new": dict(os.environ)}
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        digests = set()
        for i in range(args.rounds):
            for name, env in versions.items():
                seconds, digest = run(env, tmp / f"{name}{i}", args.num)
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
