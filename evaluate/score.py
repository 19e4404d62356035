"""`ledgerlm score`: score saved model outputs offline (each benchmark's `add_score_args` / `run_score`).

    ledgerlm score --benchmark finindices --predictions runs/oracle/samples.jsonl --out runs/scored
    python -m ledgerlm.evaluate.score --benchmark epsbench --predictions RECORDS --out runs/eps-scored
"""
from __future__ import annotations

import sys

from ledgerlm.evaluate.cli import score_main


def main(argv: list[str] | None = None) -> int:
    return score_main(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
