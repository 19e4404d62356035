"""Confidence intervals and paired significance for 0/1 scores and for losses (seeded, numpy + scipy).

    python -c "from ledgerlm.evaluate.stats import bootstrap_ci; print(bootstrap_ci([1,0,1,1,0,1]))"

- `bootstrap_ci`: percentile bootstrap 95% CI of a mean (or a median: `statistic="median"`).
- `paired_bootstrap`: CI of the mean (or median) of b - a, resampling the same items for both runs.
- `mcnemar_exact`: McNemar's exact test = two-sided binomial test on the discordant pairs
  (`scipy.stats.binomtest(b01, b01 + b10, 0.5)`), for 0/1 scores.
- `wilcoxon_signed_rank`: `scipy.stats.wilcoxon(b - a)` (zero differences dropped), for losses.
All randomness comes from `numpy.random.default_rng(seed)`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
from scipy.stats import binomtest, wilcoxon

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


STATISTICS = {"mean": np.mean, "median": np.median}


def _boot_stats(values: np.ndarray, n_boot: int, seed: int, statistic: str = "mean") -> np.ndarray:
    rng = np.random.default_rng(seed)
    n, fn = len(values), STATISTICS[statistic]
    draws = np.empty(n_boot)
    for start in range(0, n_boot, _CHUNK):
        size = min(_CHUNK, n_boot - start)
        draws[start : start + size] = fn(values[rng.integers(0, n, size=(size, n))], axis=1)
    return draws


def bootstrap_ci(scores: Sequence[float], *, n_boot: int = N_BOOT, seed: int = 0, level: float = 0.95,
                 statistic: str = "mean") -> Estimate:
    """Mean (or median) of `scores` with a percentile bootstrap CI (NaN bounds for an empty list)."""
    values = np.asarray(scores, dtype=float)
    if len(values) == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    draws = _boot_stats(values, n_boot, seed, statistic)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Estimate(float(STATISTICS[statistic](values)), float(low), float(high), len(values))


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, n_boot: int = N_BOOT, seed: int = 0, level: float = 0.95,
                     statistic: str = "mean") -> Estimate:
    """mean (or median) of b - a over paired items, with a bootstrap CI that resamples items (pairs stay together)."""
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if np.asarray(a).shape != np.asarray(b).shape:
        raise ValueError(f"paired_bootstrap: {len(a)} vs {len(b)} scores; pair the runs by id first")
    return bootstrap_ci(diff, n_boot=n_boot, seed=seed, level=level, statistic=statistic)


def wilcoxon_signed_rank(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """(statistic, two-sided p) of the Wilcoxon signed-rank test on b - a; (nan, 1.0) when every pair ties."""
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if not np.any(diff != 0):
        return float("nan"), 1.0
    result = wilcoxon(diff)
    return float(result.statistic), float(result.pvalue)


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
