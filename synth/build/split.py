"""Company-level train/dev/test split and the dedup signature.

    python -c "from ledgerlm.synth.build.split import assign_splits; print(assign_splits(['AAPL','NVDA','GOOGL','SNOW','TSM'], seed=0))"

Every company belongs to exactly one split, so test companies never appear in train. The order is
a seeded hash (stable across Python versions and processes), then at least one company goes to
test and, with three or more companies, one to dev.
"""
from __future__ import annotations

import hashlib
import math

from ledgerlm.errors import InputError


def _rank(company: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{company}".encode()).hexdigest()


def assign_splits(companies: list[str], *, seed: int, dev_fraction: float = 0.1, test_fraction: float = 0.2,
                  test_companies: list[str] = (), dev_companies: list[str] = ()) -> dict[str, str]:
    """company -> 'train' | 'dev' | 'test'. Pinned companies keep their split; the rest are drawn by hash."""
    pinned = {c: "test" for c in test_companies} | {c: "dev" for c in dev_companies}
    both = set(test_companies) & set(dev_companies)
    if both:
        raise InputError(f"companies {sorted(both)} are pinned to both dev and test", field="test_companies")
    free = sorted((c for c in companies if c not in pinned), key=lambda c: _rank(c, seed))
    n = len(companies)
    n_test = max(0 if test_companies else 1, math.ceil(n * test_fraction) - len(test_companies)) if n else 0
    n_dev = max(0 if (dev_companies or n < 3) else 1, math.ceil(n * dev_fraction) - len(dev_companies)) if n else 0
    n_test, n_dev = min(n_test, len(free)), min(n_dev, max(0, len(free) - n_test - 1))
    out = dict(pinned)
    for i, c in enumerate(free):
        out[c] = "test" if i < n_test else "dev" if i < n_test + n_dev else "train"
    return {c: out[c] for c in sorted(companies)}


def signature(row: dict) -> tuple:
    """Two rows with this signature ask the same question: keep the first."""
    deficient = any(t["kind"] == "deficiency" for t in row["traps"])
    return (row["company"], tuple(row["indices"]), tuple(row["target_periods"]), row["answer_format"], row["hint"], deficient)
