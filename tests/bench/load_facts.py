"""Benchmark: load every embedded source into canonical facts (target: < 5 s in total).

    python tests/bench/load_facts.py

Prints rows, seconds and rows/s per source kind and for `load_facts()` end to end (cold cache).
"""
from __future__ import annotations

import time

from ledgerlm.synth.statements import companyfacts, fsds, sources, xbrl


def timed(name, fn):
    start = time.perf_counter()
    df = fn()
    seconds = time.perf_counter() - start
    print(f"{name:<28} rows={len(df):>7}  seconds={seconds:6.2f}  rows/s={len(df) / seconds:>9.0f}")
    return seconds


def main() -> None:
    sec = sources.DEFAULT_DATA_DIR
    import pandas as pd

    timed("companyfacts (5 files)", lambda: pd.concat([companyfacts.load_companyfacts(p) for p in sorted((sec / "companyfacts").glob("*.json.gz"))]))
    timed("fsds (3 quarters)", lambda: fsds.load_fsds_tree(sec / "fsds"))
    timed("xbrl (5 instances)", lambda: pd.concat([xbrl.load_xbrl(p) for p in sorted((sec / "xbrl").glob("*.xml.gz"))]))
    sources._cached.cache_clear()
    total = timed("load_facts() cold, latest", sources.load_facts)
    timed("load_facts() warm, latest", sources.load_facts)
    print(f"target < 5 s: {'met' if total < 5 else 'MISSED'} ({total:.2f} s)")


if __name__ == "__main__":
    main()
