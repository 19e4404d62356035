"""Train/dev/test split (company-level, or period-based with few companies) and the dedup signature.

    python -c "from ledgerlm.synth.finindices.split import assign_splits; print(assign_splits(['AAPL','NVDA','GOOGL','SNOW','TSM'], seed=0))"

Company rule (three or more companies, or any pinned company): every company belongs to exactly one
split, so test companies never appear in train. The order is a seeded hash (stable across Python
versions and processes), then at least one company goes to test and one to dev.

Period rule (one or two companies, e.g. `ledgerlm synth --source ONE_COMPANY.json.gz`): a company
split would leave train or dev empty, so the fiscal years are split instead: the latest
ceil(test_fraction x years) fiscal years (at least one) go to test, the ceil(dev_fraction x years)
before them (at least one) to dev, the rest to train. A row belongs to the split of its fiscal years;
a row whose target or shown periods fall in two splits is dropped (`crosses_split_boundary`), so no
period label appears in two splits. Fewer than three fiscal years: a clear refusal. The rule that ran
is recorded in manifest.json under `split_rule`.
"""
from __future__ import annotations

import hashlib
import math
import re

from ledgerlm.errors import InputError


def _rank(company: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{company}".encode()).hexdigest()


# one business under two filer entities: the successor's key. Google Inc. (CIK 1288776, the FSDS filer GOOG) became
# Alphabet Inc.'s subsidiary in the 2015 reorganisation and Alphabet (CIK 1652044, GOOGL) its successor issuer, whose
# filings restate Google's history: they share a split, or a test company's figures would sit in train (seed-27182 audit)
SAME_BUSINESS = {"GOOG": "GOOGL"}


def assign_splits(companies: list[str], *, seed: int, dev_fraction: float = 0.1, test_fraction: float = 0.2,
                  test_companies: list[str] = (), dev_companies: list[str] = ()) -> dict[str, str]:
    """company -> 'train' | 'dev' | 'test'. Pinned companies keep their split; the rest are drawn by hash. Companies of
    one business (`SAME_BUSINESS`) are one unit: drawn together, and pinning one pins the other."""
    both = set(test_companies) & set(dev_companies)
    if both:
        raise InputError(f"companies {sorted(both)} are pinned to both dev and test", field="test_companies")
    unit = {c: SAME_BUSINESS.get(c, c) for c in companies}
    members: dict[str, list[str]] = {}
    for c in companies:
        members.setdefault(unit[c], []).append(c)
    pinned: dict[str, str] = {}
    for c, split in [(c, "test") for c in test_companies] + [(c, "dev") for c in dev_companies]:
        key = unit.get(c, SAME_BUSINESS.get(c, c))
        if pinned.get(key, split) != split:
            raise InputError(f"{c} is one business with {', '.join(m for m in members.get(key, []) if m != c)}, which is "
                             f"pinned to {pinned[key]}: pin them to one split", field="test_companies")
        pinned[key] = split
    n_pinned_test = sum(1 for s in pinned.values() if s == "test")
    n_pinned_dev = sum(1 for s in pinned.values() if s == "dev")
    free = sorted((k for k in members if k not in pinned), key=lambda k: _rank(k, seed))
    n = len(members)
    n_test = max(0 if n_pinned_test else 1, math.ceil(n * test_fraction) - n_pinned_test) if n else 0
    n_dev = max(0 if (n_pinned_dev or n < 3) else 1, math.ceil(n * dev_fraction) - n_pinned_dev) if n else 0
    n_test, n_dev = min(n_test, len(free)), min(n_dev, max(0, len(free) - n_test - 1))
    out = dict(pinned)
    for i, k in enumerate(free):
        out[k] = "test" if i < n_test else "dev" if i < n_test + n_dev else "train"
    return {c: out[unit[c]] for c in sorted(companies)}


def signature(row: dict) -> tuple:
    """Two rows with this signature ask the same question: keep the first."""
    deficient = any(t["kind"] == "deficiency" for t in row["traps"])
    return (row["company"], tuple(row["indices"]), tuple(row["target_periods"]), row["answer_format"], row["hint"], deficient)


MIN_COMPANIES = 3  # one company per split at least; fewer -> period rule
_FY = re.compile(r"FY(\d{4})")


def fiscal_year(label: str) -> int:
    """The fiscal year of a period/report label (FY2023, FY2023Q3YTD, FY2023Q2TTM -> 2023)."""
    found = _FY.match(label)
    if not found:
        raise InputError(f"period label {label!r} has no fiscal year (expected FY2023, FY2023Q1, ...)", field="period")
    return int(found.group(1))


def split_rule(companies: list[str], years: set[int] | list[int], *, seed: int, dev_fraction: float = 0.1,
               test_fraction: float = 0.2, test_companies: list[str] = (), dev_companies: list[str] = ()) -> dict:
    """The split rule for a run, as recorded in the manifest:
    {"rule": "company", "companies": {company: split}} or
    {"rule": "period", "train": [first, last], "dev": [first, last], "test": [first, last], ...} (fiscal years)."""
    if len(companies) >= MIN_COMPANIES or test_companies or dev_companies:
        splits = assign_splits(companies, seed=seed, dev_fraction=dev_fraction, test_fraction=test_fraction,
                               test_companies=test_companies, dev_companies=dev_companies)
        return {"rule": "company", "companies": splits}
    years = sorted(set(years))
    if len(years) < 3:
        raise InputError(f"{len(companies)} compan{'y' if len(companies) == 1 else 'ies'} ({', '.join(companies)}) with "
                         f"{len(years)} fiscal year(s) cannot be split into train/dev/test: a company-level split needs "
                         f"{MIN_COMPANIES}+ companies and the period-based fallback 3+ fiscal years; add --source files",
                         field="sources")
    n = len(years)
    n_test = max(1, math.ceil(n * test_fraction))
    n_dev = max(1, min(math.ceil(n * dev_fraction), n - n_test - 1))
    n_train = n - n_test - n_dev
    bounds = {"train": years[:n_train], "dev": years[n_train:n_train + n_dev], "test": years[n_train + n_dev:]}
    return {"rule": "period", "why": f"{len(companies)} compan{'y' if len(companies) == 1 else 'ies'} < {MIN_COMPANIES}: "
            "split by fiscal year; rows whose periods fall in two splits are dropped (crosses_split_boundary)",
            **{name: [ys[0], ys[-1]] for name, ys in bounds.items()}}


def row_split(rule: dict, company: str, labels) -> str | None:
    """The split of a row about `company` whose target and shown periods are `labels`; None when they
    fall in two splits (period rule only)."""
    if rule["rule"] == "company":
        return rule["companies"][company]
    found = set()
    for label in labels:
        year = fiscal_year(label)
        found.add("test" if year >= rule["test"][0] else "dev" if year >= rule["dev"][0] else "train")
    return found.pop() if len(found) == 1 else None
