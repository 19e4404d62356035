"""Evaluation budgets and seeded stratified subsampling (paper §5.1 "Sample Budget").

    python -c "from ledgerlm.evaluate.macrolens.sampling_plan import DEFAULT_BUDGETS; print(DEFAULT_BUDGETS)"

Defaults: N = 1,000 for T1, T4, T7; the full company holdout for T2 and T5 (None = everything);
1,058 filing-level instances for T3 and T6. Subsampling stratifies on sector x market-cap quartile,
plus event type for T4 and property type x state for T7, under one seed; every method then runs on
the identical instance ids.
"""
from __future__ import annotations

import random

import pandas as pd

from ledgerlm.errors import InputError

DEFAULT_BUDGETS: dict[str, int | None] = {"T1": 1000, "T2": None, "T3": 1058, "T4": 1000, "T5": None, "T6": 1058, "T7": 1000}
STRATA: dict[str, tuple[str, ...]] = {
    "T1": ("sector", "cap_quartile"), "T2": ("sector", "cap_quartile"), "T3": ("sector", "cap_quartile"),
    "T4": ("sector", "cap_quartile", "event_type"), "T5": ("sector", "cap_quartile"), "T6": ("sector", "cap_quartile"),
    "T7": ("property_type", "state"),
}


def parse_budgets(text: str | None) -> dict[str, int | None]:
    """`T1=200,T3=50` (or `all=20`) over the defaults; `T2=full` means no cap."""
    budgets = dict(DEFAULT_BUDGETS)
    for part in filter(None, (text or "").split(",")):
        key, _, value = part.partition("=")
        key = key.strip().upper()
        if key != "ALL" and key not in budgets:
            raise InputError(f"unknown task {key!r} in budget {part!r}", field="--budget")
        if value.strip().lower() in ("full", "all", "none"):
            n = None
        elif value.strip().isdigit():
            n = int(value)
        else:
            raise InputError(f"budget {part!r} must be TASK=N (a whole number) or TASK=full", field="--budget")
        for task in (budgets if key == "ALL" else [key]):
            budgets[task] = n
    return budgets


def stratified_sample(candidates: pd.DataFrame, budget: int | None, strata: tuple[str, ...], seed: int = 42) -> pd.DataFrame:
    """Up to `budget` rows, allocated to strata in proportion to their size (largest remainder), each
    stratum sampled with one `random.Random(seed)`; row order follows the candidates' order."""
    if budget is None or len(candidates) <= budget:
        return candidates
    rng = random.Random(seed)
    groups = {k: list(v) for k, v in candidates.groupby(list(strata), sort=True, dropna=False).indices.items()}
    n = len(candidates)
    quotas = {k: budget * len(v) / n for k, v in groups.items()}
    alloc = {k: int(q) for k, q in quotas.items()}
    for k in sorted(quotas, key=lambda k: (-(quotas[k] - alloc[k]), str(k)))[: budget - sum(alloc.values())]:
        alloc[k] += 1
    chosen = sorted(i for k, idx in groups.items() for i in rng.sample(idx, alloc[k]))
    return candidates.iloc[chosen]
