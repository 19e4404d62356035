"""#17 goal 3: flat memory, linear time over many filers. Builds SEC-bulk-style companyfacts zips from the
embedded filers (each replicated under distinct CIKs / tickers; generated here, never committed) and runs
`ledgerlm synth --num N` on the 5-company zip and on the 500-company zip.

    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_bulk.py [--num 100000] [--replicas 100] [--distinct-figures]

Reduced stand-in (~1/5 of the time): --replicas 20 --num 20000, 100 companies with ~190 samples each as in the full
run. At 08d023b (frozen copy, the three runs at once, load ~8) it read 1.69 (small 2.42, bulk 4.09 ms CPU/sample;
the full run at 3561af8: 1.68), and 2.04 with --distinct-figures (4.93 ms CPU/sample, same 19,049 samples).

Replicas share their figures unless --distinct-figures: a table line such as "Total current assets | 4,312,283,000"
then recurs in every replica, and the token counter's line memo (keyed by text) counts it once per run, which real
filers (all figures distinct) never allow. --distinct-figures multiplies replica r's currency and share amounts by
r + 1 (per-share values and ratios unchanged, so every row stays consistent), making each replica's figures its own.

Prints, per input: store-cache build (streamed from the zip, one company at a time) and synth wall / CPU /
peak RSS (each its own process, from wait4), then the ratios the goal names: peak RSS of the 500-company
run (< 2 GB) and its time per emitted sample over the 5-company run's (<= 1.3). Both caches are built at
once, then both synth runs go at once (same code, same machine load; `--sequential`: one at a time).
Then, with `--linear R1 R2 ...` (e.g. 1 4 10 20 with the stand-in), whether time is linear in companies at a fixed
number of samples per company: inputs of 5 x R companies (the first R replicas), each run at the bulk run's samples per
company (`--num` N x 5R / bulk companies), twice, interleaved; a least-squares line CPU = a + b x samples over every
run (a: start-up and per-run warm-up) and the marginal CPU per sample between consecutive company counts. The goal's
ratio compares ~3,500 samples per company (stand-in) with ~190: each company's index values and renderings are made
once per run and shared by all its samples. `--config FILE` runs every build with that synth config (e.g. one
language and one statement format: how much of the cold cost is each company's presentation variety).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"


def timed(cmd: list[str], env: dict | None = None) -> dict:
    """wall s, CPU s (the process and every descendant it waited for) and peak RSS MB of one command, from wait4.
    The peak counts the pages the child shared with this process when it started, so this process stays small."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode(errors="replace")  # read before waiting: a chatty child never blocks on a full pipe
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}

EMBEDDED = Path(__file__).resolve().parents[2] / "synth" / "data" / "sec" / "companyfacts"


def _amount_unit(unit: str) -> bool:
    """Units whose values are amounts (a currency code such as USD / TWD, or shares): scaled together, they keep
    every sum, difference and per-share figure (USD/shares) of a filing consistent."""
    return unit == "shares" or (len(unit) == 3 and unit.isalpha() and unit.isupper())


def scaled_figures(doc: dict, factor: int) -> dict:
    """A companyfacts document with every amount (currency and share values) multiplied by `factor`."""
    if factor == 1:
        return doc
    facts = {taxonomy: {concept: dict(body, units={unit: [dict(v, val=v["val"] * factor) if _amount_unit(unit)
                                                             and isinstance(v.get("val"), (int, float)) else v for v in values]
                                                       for unit, values in body["units"].items()})
                        for concept, body in concepts.items()}
             for taxonomy, concepts in doc.get("facts", {}).items()}
    return dict(doc, facts=facts)


def bulk_zip(path: Path, replicas: int, distinct_figures: bool = False) -> int:
    """companyfacts.zip-style archive: the embedded filers, replica r under CIK 9,000,000,000 + r*100 + i and
    ticker TICKER-r (replica 0 keeps the real names); with `distinct_figures` replica r's amounts are multiplied
    by r + 1 (`scaled_figures`). Returns the number of members."""
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
                body = scaled_figures(doc, r + 1) if distinct_figures else doc
                z.writestr(f"CIK{cik:010d}_{name}.json", json.dumps(dict(body, cik=cik, entityName=f"{doc.get('entityName', ticker)} {name}")))
                n += 1
    return n


def _cache(label: str, replicas: int, distinct: bool, tmp: Path, env: dict) -> dict:
    """Write the input zip and build its store cache (streamed from the zip); returns the figures."""
    src = tmp / f"companyfacts-{label}.zip"
    members = bulk_zip(src, replicas, distinct)
    return dict(timed([sys.executable, "-m", "ledgerlm.synth.finindices.storecache", str(src)], env), members=members,
                zip_mb=src.stat().st_size / 1e6, src=src)


def _synth(label: str, src: Path, tmp: Path, env: dict, args, num: int | None = None) -> dict:
    """`ledgerlm synth --num NUM` (default `args.num`) over one input (its cache already built); wall / CPU / peak RSS
    and what it emitted."""
    num = args.num if num is None else num
    run = timed([sys.executable, "-m", "ledgerlm.cli", "synth", "--source", str(src), "--num", str(num), "--no-progress",
                 "--num-proc", str(args.num_proc), "--out", str(tmp / label),
                 *(["--config", args.config] if args.config else [])], env)
    n = sum(1 for s in ("train", "dev", "test") for _ in open(tmp / label / f"{s}.jsonl", "rb"))
    manifest = json.loads((tmp / label / "manifest.json").read_text())
    return dict(run, n=n, companies=len(manifest["counts"]["by_company"]))


def _linear(args, tmp: Path, env: dict, bulk: dict) -> str:
    """Inputs of 5 x R companies (`args.linear`), each at the bulk run's samples per company, run twice (interleaved,
    one at a time); a least-squares line CPU = a + b x samples over all runs, and the marginal CPU per sample between
    consecutive company counts (flat: linear in companies; rising: each company costs more as there are more)."""
    jobs = {}
    for r in sorted(set(args.linear)):
        label, src = f"lin-{r}", tmp / f"companyfacts-lin-{r}.zip"
        if r == args.replicas:  # the bulk input itself: its cache is built
            src, members = bulk["src"], bulk["members"]
        else:
            members = bulk_zip(src, r, distinct_figures=args.distinct_figures)
            subprocess.run([sys.executable, "-m", "ledgerlm.synth.finindices.storecache", str(src)],
                           env=env, check=True, stdout=subprocess.DEVNULL)
        jobs[label] = (src, members, max(2, round(args.num * members / bulk["members"])))
    runs: dict[str, list] = {label: [] for label in jobs}
    for i in range(2):
        for label in (list(jobs) if i == 0 else list(reversed(jobs))):
            src, members, num = jobs[label]
            runs[label].append(_synth(label, src, tmp, env, args, num))
            shutil.rmtree(tmp / label, ignore_errors=True)
            shutil.rmtree(tmp / f"{label}.work", ignore_errors=True)
    points = [(r["n"], r["cpu"]) for rs in runs.values() for r in rs]
    b, a = statistics.linear_regression([n for n, _ in points], [c for _, c in points])
    avg = {label: (sum(r["n"] for r in rs) / len(rs), sum(r["cpu"] for r in rs) / len(rs), rs[0]["companies"])
           for label, rs in runs.items()}
    cpus = {label: " / ".join(f"{r['cpu']:.2f}" for r in rs) for label, rs in runs.items()}
    rows = [f"{c} companies: {n:.0f} samples ({n / c:.0f} per company), CPU {cpus[label]} s "
            f"({1000 * cpu / n:.2f} ms per sample)" for label, (n, cpu, c) in avg.items()]
    labels = list(avg)
    steps = [f"{avg[x][2]} -> {avg[y][2]}: {1000 * (avg[y][1] - avg[x][1]) / max(1e-9, avg[y][0] - avg[x][0]):.2f}"
             for x, y in zip(labels, labels[1:])]
    return ("linear in companies  " + "; ".join(rows) + f"\n                     least squares over the {len(points)} runs: "
            f"CPU = {a:.2f} s + {1000 * b:.3f} ms x samples; marginal ms CPU per sample between company counts: "
            + ", ".join(steps) + " (flat: time linear in companies at a fixed number of samples per company)")


def _each(fn, jobs: dict, sequential: bool) -> dict:
    """fn(label, *args) for every job: one after the other, or all at once (each thread waits for its own child)."""
    if sequential:
        return {label: fn(label, *a) for label, a in jobs.items()}
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = {label: pool.submit(fn, label, *a) for label, a in jobs.items()}
        return {label: f.result() for label, f in futures.items()}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--num", type=int, default=100_000)
    p.add_argument("--replicas", type=int, default=100)
    p.add_argument("--num-proc", type=int, default=1)
    p.add_argument("--sequential", action="store_true",
                   help="one process at a time (default: both caches at once, then both synth runs at once, so the two "
                        "runs share the same code and machine load; CPU seconds and peak RSS are per process either way)")
    p.add_argument("--distinct-figures", action="store_true",
                   help="replica r's currency and share amounts x (r + 1): no figure recurs across replicas (real filers); "
                        "default: replicas repeat the embedded figures, so lines they share are counted once per run")
    p.add_argument("--config", help="a synth config YAML for every run (default: the default config), e.g. fewer "
                   "languages / formats to see how much of the ratio is each company's presentation variety")
    p.add_argument("--linear", type=int, nargs="*", default=[], metavar="R",
                   help="replica counts for the linearity check (5 x R companies each, at the bulk run's samples per "
                        "company, two interleaved runs each; e.g. 1 4 10 20); none: skip")
    args = p.parse_args()
    print(f"load average before: {loadavg()}  (cores: {os.cpu_count()})")
    print(f"bulk input: {args.replicas} replicas of the embedded filers under distinct CIKs / tickers / names; figures "
          + ("distinct per replica (amounts x (r + 1))" if args.distinct_figures else
             "the same in every replica (a line they share is a memo hit after the first; --distinct-figures: none is)"))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, LEDGERLM_CACHE_DIR=str(tmp / "cache"))
        caches = _each(_cache, {"small": (1, False, tmp, env), "bulk": (args.replicas, args.distinct_figures, tmp, env)},
                       args.sequential)
        print(f"load average after the caches: {loadavg()}", flush=True)
        built = set((tmp / "cache").iterdir())
        results = _each(_synth, {label: (c["src"], tmp, env, args) for label, c in caches.items()}, args.sequential)
        linear = _linear(args, tmp, env, caches["bulk"]) if args.linear else None
        rebuilt = sorted(p.name for p in set((tmp / "cache").iterdir()) - built if "stores-" in p.name)
    if rebuilt:  # the cache key covers synth/statements/: an edit there mid-bench makes a synth run rebuild its cache
        print(f"WARNING: a synth run built a store cache itself ({', '.join(rebuilt)}): code under synth/statements/ "
              "changed during the bench, so its CPU includes a cache build; run the bench from a frozen copy")
    for label, r in results.items():
        c = caches[label]
        print(f"{c['members']:>4} companies in zip ({c['zip_mb']:.0f} MB): cache build {c['wall']:.0f} s wall / "
              f"{c['cpu']:.0f} s CPU, peak RSS {c['rss_mb']:.0f} MB; synth {r['wall']:.0f} s wall / {r['cpu']:.0f} s CPU, "
              f"peak RSS {r['rss_mb']:.0f} MB, {r['n']} samples from {r['companies']} companies, "
              f"{1000 * r['cpu'] / r['n']:.2f} ms CPU/sample, {1000 * r['wall'] / r['n']:.2f} ms wall/sample")
    small, bulk = results["small"], results["bulk"]
    print(f"load average after:  {loadavg()}")
    print(f"GOAL 3 peak RSS      {bulk['rss_mb']:.0f} MB for {bulk['companies']} companies (goal < 2048)")
    extra = bulk["cpu"] - bulk["n"] * small["cpu"] / small["n"]  # CPU beyond the small run's rate per sample
    print(f"cold cost per company {extra / max(1, bulk['companies'] - small['companies']):.3f} s CPU  (the bulk run's CPU "
          f"beyond {bulk['n']} samples at the {small['companies']}-company rate, over the companies it adds)")
    print(f"GOAL 3 ratio         time per sample {bulk['companies']} / {small['companies']} companies = "
          f"{(bulk['cpu'] / bulk['n']) / (small['cpu'] / small['n']):.2f} CPU, "
          f"{(bulk['wall'] / bulk['n']) / (small['wall'] / small['n']):.2f} wall  (goal <= 1.30)")
    if linear:
        print(linear)
    return 0


if __name__ == "__main__":
    sys.exit(main())
