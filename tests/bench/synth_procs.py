"""#17 goal 1 on a machine with many cores: `ledgerlm synth --num-proc P` for several P on the same input, measured
(not projected): wall-clock, CPU seconds (the process and its workers, from wait4), speed-up and efficiency over
P = 1, and whether every build wrote the same bytes.

    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_procs.py --procs 1 2 4 8 16 [--source companyfacts.zip] [--num 20000]

The input's store cache is built first, by a small untimed build. Efficiency = speed-up / P; it is only meaningful where the machine
has at least P free cores (the script prints os.cpu_count() and the load average). For an input with many companies
(company-affine workers need companies >> P) use tests/bench/synth_bulk.py's zip, e.g.
`python -c "import sys; sys.path.insert(0, 'tests/bench'); from synth_bulk import bulk_zip; from pathlib import Path;
bulk_zip(Path('bulk.zip'), 20, True)"` (100 companies, each replica's figures its own).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from synth_bulk import timed  # noqa: E402  (wall, CPU from wait4, peak RSS of one command)


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for split in ("train", "dev", "test"):
        h.update((folder / f"{split}.jsonl").read_bytes())
    return h.hexdigest()[:16]


def build(src: list[str], num: int, procs: int, out: Path) -> dict:
    run = timed([sys.executable, "-m", "ledgerlm.cli", "synth", *src, "--num", str(num), "--num-proc", str(procs),
                 "--no-progress", "--out", str(out)])
    rows = sum(1 for s in ("train", "dev", "test") for _ in open(out / f"{s}.jsonl", "rb"))
    return dict(run, rows=rows, sha=digest(out))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    p.add_argument("--num", type=int, default=20_000)
    p.add_argument("--source", help="companyfacts zip / file (default: the embedded data)")
    args = p.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["n/a"]
    print(f"cores {os.cpu_count()}, load average {' '.join(load)}, --num {args.num}, source {args.source or 'embedded'}")
    src = ["--source", args.source] if args.source else []
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        build(src, 200, 1, Path(tmp) / "warm")  # the input's store cache, bytecode, tiktoken ranks: built before timing
        for procs in args.procs:
            out = Path(tmp) / f"p{procs}"
            results[procs] = r = build(src, args.num, procs, out)
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(Path(f"{out}.work"), ignore_errors=True)
            base = results[args.procs[0]]
            speedup = base["wall"] / r["wall"]
            print(f"P = {procs:>3}: {r['wall']:7.2f} s wall, {r['cpu']:7.2f} s CPU, {r['rows']} rows, sha256 {r['sha']}; "
                  f"speed-up over P = {args.procs[0]} {speedup:5.2f}x, efficiency {speedup * args.procs[0] / procs:5.2f}, "
                  f"CPU {r['cpu'] / base['cpu']:4.2f}x", flush=True)
    same = len({r["sha"] for r in results.values()}) == 1
    print(f"byte-identical across P: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
