"""A/B of FinIndices Φ's number grammar: the scorer with session 22's grammar vs the grammar before it, same outputs.

    python tests/bench/scorer_grammar_ab.py [--rounds 2]

Scores the scorer_speed fixtures (1,000 rows, each solution and its x1000 slip, 20,000 outputs) with
`extract.number_tokens` as shipped and with the old regex (no currency codes, a token could restart inside
itself), interleaved, and prints outputs per CPU-second of each. The old grammar is reconstructed here only to
time it; its readings are not the scorer's.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/eval_fixtures.py
from eval_fixtures import make_rows  # noqa: E402

from ledgerlm.evaluate.finindices import extract  # noqa: E402
from ledgerlm.evaluate.finindices.reference import scale_final_answer  # noqa: E402
from ledgerlm.evaluate.finindices.scoring import score_response  # noqa: E402

_OLD_BODY = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+"
_OLD = re.compile(r"(?<![A-Za-z_\d.])[-+]?(?:" + _OLD_BODY + r")(?:[eE][-+]?\d+)?(?![A-Za-z_\d年月日季]|\.\d)")


def old_tokens(text: str) -> list[str]:
    return [m.group() for m in _OLD.finditer(text)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rows = make_rows(1000, seed=0)
    work = [(r, r["solution"]) for r in rows] + [(r, scale_final_answer(r["solution"], r["answer_format"], 1000)) for r in rows]
    work = (work * 10)[:20_000]
    shipped = extract.number_tokens
    for rnd in range(args.rounds):
        for name, tokens in (("old grammar", old_tokens), ("new grammar", shipped)):
            extract.number_tokens = tokens
            began = time.process_time()
            for row, text in work:
                score_response(row, text)
            print(f"round {rnd + 1} {name}: {len(work) / (time.process_time() - began):,.0f} outputs per CPU-second")
    extract.number_tokens = shipped


if __name__ == "__main__":
    main()
