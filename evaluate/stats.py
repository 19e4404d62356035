"""Confidence intervals and paired significance for 0/1 scores (seeded, numpy + scipy).

    python -c "from ledgerlm.evaluate.stats import bootstrap_ci; print(bootstrap_ci([1,0,1,1,0,1]))"

- `bootstrap_ci`: percentile bootstrap 95% CI of a mean.
- `paired_bootstrap`: CI of mean(b) - mean(a) resampling the same items for both runs.
- `mcnemar_exact`: McNemar's exact test = two-sided binomial test on the discordant pairs
  (`scipy.stats.binomtest(b01, b01 + b10, 0.5)`).
All randomness comes from `numpy.random.default_rng(seed)`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
from scipy.stats import binomtest

N_BOOT = 10_000  # bootstrap resamples
_CHUNK = 500  # resamples drawn at once (bounds memory: CHUNK × n indices)


@dataclass(frozen=True)
class Estimate:
    value: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self) -> dict:
        return asdict(self)


def _boot_means(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = len(values)
    means = np.empty(n_boot)
    for start in range(0, n_boot, _CHUNK):
        size = min(_CHUNK, n_boot - start)
        means[start : start + size] = values[rng.integers(0, n, size=(size, n))].mean(axis=1)
    return means


def bootstrap_ci(scores: Sequence[float], *, n_boot: int = N_BOOT, seed: int = 0, level: float = 0.95) -> Estimate:
    """Mean of `scores` with a percentile bootstrap CI (NaN bounds for an empty list)."""
    values = np.asarray(scores, dtype=float)
    if len(values) == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    means = _boot_means(values, n_boot, seed)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(float(values.mean()), float(low), float(high), len(values))


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, n_boot: int = N_BOOT, seed: int = 0, level: float = 0.95) -> Estimate:
    """mean(b) - mean(a) over paired items, with a bootstrap CI that resamples items (pairs stay together)."""
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if np.asarray(a).shape != np.asarray(b).shape:
        raise ValueError(f"paired_bootstrap: {len(a)} vs {len(b)} scores; pair the runs by id first")
    return bootstrap_ci(diff, n_boot=n_boot, seed=seed, level=level)


def mcnemar_exact(a: Sequence[int], b: Sequence[int]) -> tuple[float, int, int]:
    """(p-value, b01 = items only b got right, b10 = items only a got right)."""
    x, y = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
    b01 = int(((x == 0) & (y == 1)).sum())
    b10 = int(((x == 1) & (y == 0)).sum())
    if b01 + b10 == 0:
        return 1.0, 0, 0
    return float(binomtest(b01, b01 + b10, 0.5).pvalue), b01, b10


def grouped(records: Sequence[dict], keys: Sequence[str], *, value: str = "score", n_boot: int = N_BOOT, seed: int = 0) -> list[dict]:
    """Mean of `value` with a bootstrap CI per combination of `keys` (sorted), e.g. paradigm × axis × hint."""
    groups: dict[tuple, list[float]] = {}
    for record in records:
        groups.setdefault(tuple(record.get(k) for k in keys), []).append(float(record.get(value) or 0))
    out = []
    for group in sorted(groups, key=lambda g: tuple(str(x) for x in g)):
        estimate = bootstrap_ci(groups[group], n_boot=n_boot, seed=seed)
        out.append({**dict(zip(keys, group)), **estimate.as_dict()})
    return out
