"""#17 goal 3: flat memory, linear time over many filers. Builds SEC-bulk-style companyfacts zips from the
embedded filers (each replicated under distinct CIKs / tickers; generated here, never committed) and runs
`ledgerlm synth --num N` on the 5-company zip and on the 500-company zip.

    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_bulk.py [--num 100000] [--replicas 100]

Prints, per input: store-cache build (streamed from the zip, one company at a time) and synth wall / CPU /
peak RSS (each its own process, from wait4), then the ratios the goal names: peak RSS of the 500-company
run (< 2 GB) and its time per emitted sample over the 5-company run's (<= 1.3).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth_scale import loadavg, rows, timed  # noqa: E402

EMBEDDED = Path(__file__).resolve().parents[2] / "synth" / "data" / "sec" / "companyfacts"


def bulk_zip(path: Path, replicas: int) -> int:
    """companyfacts.zip-style archive: the embedded filers, replica r under CIK 9,000,000,000 + r*100 + i and
    ticker TICKER-r (replica 0 keeps the real names). Returns the number of members."""
    docs = []
    for i, f in enumerate(sorted(EMBEDDED.glob("CIK*_*.json.gz"))):
        ticker = f.name.split("_", 1)[1].split(".")[0]
        docs.append((i, ticker, json.loads(gzip.decompress(f.read_bytes()))))
    n = 0
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for r in range(replicas):
            for i, ticker, doc in docs:
                cik = 9_000_000_000 + r * 100 + i
                name = ticker if r == 0 else f"{ticker}-{r:03d}"
                z.writestr(f"CIK{cik:010d}_{name}.json", json.dumps(dict(doc, cik=cik, entityName=f"{doc.get('entityName', ticker)} {name}")))
                n += 1
    return n


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--num", type=int, default=100_000)
    p.add_argument("--replicas", type=int, default=100)
    p.add_argument("--num-proc", type=int, default=1)
    args = p.parse_args()
    print(f"load average before: {loadavg()}  (cores: {os.cpu_count()})")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, LEDGERLM_CACHE_DIR=str(tmp / "cache"))
        for label, replicas in (("small", 1), ("bulk", args.replicas)):
            src = tmp / f"companyfacts-{label}.zip"
            members = bulk_zip(src, replicas)
            cache = timed([sys.executable, "-m", "ledgerlm.synth.finindices.storecache", str(src)], env)
            run = timed([sys.executable, "-m", "ledgerlm.cli", "synth", "--source", str(src), "--num", str(args.num), "--no-progress",
                         "--num-proc", str(args.num_proc), "--out", str(tmp / label)], env)
            n = len(rows(tmp / label))
            manifest = json.loads((tmp / label / "manifest.json").read_text())
            companies = len(manifest["counts"]["by_company"])
            results[label] = dict(run, n=n)
            print(f"{members:>4} companies in zip ({src.stat().st_size / 1e6:.0f} MB): cache build {cache['wall']:.0f} s wall / "
                  f"{cache['cpu']:.0f} s CPU, peak RSS {cache['rss_mb']:.0f} MB; synth {run['wall']:.0f} s wall / {run['cpu']:.0f} s CPU, "
                  f"peak RSS {run['rss_mb']:.0f} MB, {n} samples from {companies} companies, "
                  f"{1000 * run['cpu'] / n:.2f} ms CPU/sample, {1000 * run['wall'] / n:.2f} ms wall/sample")
            (tmp / label).rename(tmp / f"{label}-done")  # free the name; rows are not needed any more
    small, bulk = results["small"], results["bulk"]
    print(f"load average after:  {loadavg()}")
    print(f"GOAL 3 peak RSS      {bulk['rss_mb']:.0f} MB for {args.replicas * 5} companies (goal < 2048)")
    print(f"GOAL 3 ratio         time per sample {args.replicas * 5} / 5 companies = {(bulk['cpu'] / bulk['n']) / (small['cpu'] / small['n']):.2f} CPU, "
          f"{(bulk['wall'] / bulk['n']) / (small['wall'] / small['n']):.2f} wall  (goal <= 1.30)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
