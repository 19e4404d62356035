"""FinIndices scorer throughput: outputs scored per second (goal >= 50,000/s).

    python tests/bench/scorer_speed.py [--n 20000] [--data out/synth/test.jsonl | --data out/synth]

Scores the worked solutions of generated contract-4 rows (every answer format, both paradigms,
deficiency items) plus the same solutions with a 1,000x unit slip, i.e. realistic final answers of
a few hundred characters. `--data` scores a synthesized dataset instead (a JSONL file, or a folder:
every *.jsonl in it), i.e. full worked solutions of a few thousand characters, English and Chinese.
Prints outputs/s per answer format and overall (single process, wall clock), the same figure per
CPU-second of this process (the machine may be shared), and the load average.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from eval_fixtures import make_rows  # noqa: E402

from ledgerlm.evaluate.finindices.reference import scale_final_answer  # noqa: E402
from ledgerlm.evaluate.finindices.scoring import score_response  # noqa: E402
from ledgerlm.evaluate.runfiles import read_jsonl  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20_000, help="outputs to score")
    parser.add_argument("--data", help="a synthesized JSONL (e.g. from `ledgerlm synth`) instead of the test fixtures")
    args = parser.parse_args()
    if args.data and Path(args.data).is_dir():
        rows = [row for path in sorted(Path(args.data).glob("*.jsonl")) for row in read_jsonl(path)]
    else:
        rows = read_jsonl(args.data) if args.data else make_rows(1000, seed=0)
    pairs = [(r, r["solution"]) for r in rows] + [(r, scale_final_answer(r["solution"], r["answer_format"], 1000)) for r in rows]
    work = (pairs * (args.n // len(pairs) + 1))[: args.n]
    chars = sum(len(t) for _, t in work) / len(work)
    by_format: dict[str, list[float]] = defaultdict(list)
    began, cpu_began = time.perf_counter(), time.process_time()
    for row, text in work:
        t0 = time.perf_counter()
        score_response(row, text)
        by_format[row["answer_format"]].append(time.perf_counter() - t0)
    total, cpu = time.perf_counter() - began, time.process_time() - cpu_began
    print(f"scored {len(work)} outputs (mean {chars:.0f} chars) in {total:.2f}s: {len(work) / total:,.0f} outputs/s (goal 50,000/s)")
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    print(f"  per CPU-second of this process: {len(work) / cpu:,.0f} outputs/s; load average {' '.join(load)}")
    for fmt, times in sorted(by_format.items()):
        print(f"  {fmt:<11} {len(times) / sum(times):>10,.0f} outputs/s")


if __name__ == "__main__":
    main()
