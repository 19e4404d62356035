"""The one statistics module of `evaluate/`: intervals and paired tests for every benchmark (numpy + scipy).

    python -c "from ledgerlm.evaluate.stats import wilson_ci; print(wilson_ci(32, 32))"
    python -m pytest -q tests/test_stats.py

Intervals
- `wilson_ci(k, n)` / `proportion_ci(scores)`: Wilson score interval of a proportion (closed form; equals
  `scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`). Never zero-width for 0 < n, also at 0/n and n/n.
- `score_ci(scores)`: the interval a single run reports for a mean score: Wilson for 0/1 scores (accuracy),
  else the percentile bootstrap of the mean. (A bootstrap of 32/32 correct is [1, 1]: zero width.)
- `bootstrap_ci`: percentile bootstrap CI of a mean or median over iid items. `scheme="epsbench-release"`
  is the EPSBench release's common.boot_ci instead (JadeXu16/epsbench bbf98810: medians of resamples drawn by
  `random.Random(seed).choices`, the CI the order statistics at int(alpha/2 * B) and int((1 - alpha/2) * B)).
- `cluster_bootstrap`: resamples whole clusters (company, scenario, item with its variants; Cameron, Gelbach &
  Miller 2008), optionally with MacroLens' adaptive B (paper §5.1: B from `b_min` doubling to `b_max` while the
  CI is wider than `rel_width` x |estimate|); `stratified` / `stratified_points` apply it per stratum.
Paired tests (two runs, items paired by id)
- `paired_bootstrap`: CI of the mean (or median) of b - a, pairs resampled together.
- `mcnemar_exact`: two-sided binomial test on the discordant pairs (`scipy.stats.binomtest(b01, b01 + b10, 0.5)`).
- `wilcoxon_signed_rank`: `scipy.stats.wilcoxon(b - a)` (zero differences dropped), for losses.
All numpy randomness comes from `numpy.random.default_rng(seed)`; `seed` may also be a Generator, so that
several intervals can share one stream (EPSBench's results draw its two CIs from one).
"""
from __future__ import annotations

import math
import random
import statistics as pystats
from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping, Sequence, Union

import numpy as np
from scipy.stats import binomtest, norm, wilcoxon

N_BOOT = 10_000  # bootstrap resamples
_CHUNK = 500  # resamples drawn at once (bounds memory: CHUNK × n indices; the draws equal one (n_boot, n) draw)
SCHEMES = ("numpy", "epsbench-release")

Seed = Union[int, np.random.Generator]
Data = Union[np.ndarray, Mapping[str, np.ndarray]]  # one array, or named arrays indexed together (MacroLens' metric arrays)


@dataclass(frozen=True)
class Estimate:
    value: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ClusterEstimate:
    value: float  # the statistic on the full sample
    ci_low: float
    ci_high: float
    B: int  # replicates drawn
    n: int  # rows
    n_clusters: int
    converged: bool  # CI width <= rel_width * |value| when B stopped

    def as_dict(self) -> dict:
        return asdict(self)


STATISTICS = {"mean": np.mean, "median": np.median}


def _rng(seed: Seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


# --- proportions -------------------------------------------------------------------------------------------

def wilson_ci(k: int, n: int, *, level: float = 0.95) -> Estimate:
    """k successes of n: k/n with the Wilson score interval (NaN bounds for n = 0)."""
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"wilson_ci: need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    z = float(norm.ppf(1 - (1 - level) / 2))
    p, z2 = k / n, z * z
    center = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return Estimate(p, max(0.0, center - half), min(1.0, center + half), n)


def _binary(values: np.ndarray) -> bool:
    return bool(len(values)) and bool(np.all((values == 0) | (values == 1)))


def proportion_ci(scores: Sequence[float], *, level: float = 0.95) -> Estimate:
    """Wilson interval of the share of 1s in a list of 0/1 scores."""
    values = np.asarray(scores, dtype=float)
    if len(values) and not _binary(values):
        raise ValueError("proportion_ci: scores must be 0/1 (use bootstrap_ci for other scores)")
    return wilson_ci(int(values.sum()), len(values), level=level)


def score_ci(scores: Sequence[float], *, n_boot: int = N_BOOT, seed: Seed = 0, level: float = 0.95) -> Estimate:
    """A run's mean score with its CI: Wilson for 0/1 scores, percentile bootstrap of the mean otherwise."""
    values = np.asarray(scores, dtype=float)
    if _binary(values):
        return wilson_ci(int(values.sum()), len(values), level=level)
    return bootstrap_ci(values, n_boot=n_boot, seed=seed, level=level)


# --- iid bootstrap -----------------------------------------------------------------------------------------

def _boot_stats(values: np.ndarray, n_boot: int, seed: Seed, statistic: str = "mean") -> np.ndarray:
    rng = _rng(seed)
    n, fn = len(values), STATISTICS[statistic]
    draws = np.empty(n_boot)
    for start in range(0, n_boot, _CHUNK):
        size = min(_CHUNK, n_boot - start)
        draws[start : start + size] = fn(values[rng.integers(0, n, size=(size, n))], axis=1)
    return draws


def _release_ci(values: list[float], n_boot: int, seed: int, level: float, statistic: str) -> tuple[float, float]:
    """common.boot_ci of the EPSBench release: `random.Random(seed)`, statistics.median, order statistics."""
    fn = {"median": pystats.median, "mean": pystats.fmean}[statistic]
    alpha = round(1 - level, 12)  # the release passes alpha = 0.10; 1 - 0.9 is 0.0999...98 in floating point
    rng, k = random.Random(seed), len(values)
    draws = sorted(fn(rng.choices(values, k=k)) for _ in range(n_boot))
    return draws[int(alpha / 2 * n_boot)], draws[int((1 - alpha / 2) * n_boot)]


def bootstrap_ci(scores: Sequence[float], *, n_boot: int = N_BOOT, seed: Seed = 0, level: float = 0.95,
                 statistic: str = "mean", scheme: str = "numpy") -> Estimate:
    """Mean (or median) of `scores` with a bootstrap CI over items (NaN bounds for an empty list).
    scheme "numpy": percentile CI (linear interpolation) of `n_boot` resamples from default_rng(seed);
    "epsbench-release": the EPSBench release's boot_ci (see the module docstring; `seed` must be an int)."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {sorted(STATISTICS)}, got {statistic!r}")
    values = np.asarray(scores, dtype=float)
    if len(values) == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    if scheme == "epsbench-release":
        low, high = _release_ci([float(v) for v in values], n_boot, int(seed), level, statistic)
        point = {"median": pystats.median, "mean": pystats.fmean}[statistic]([float(v) for v in values])
        return Estimate(float(point), float(low), float(high), len(values))
    if scheme != "numpy":
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    draws = _boot_stats(values, n_boot, seed, statistic)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Estimate(float(STATISTICS[statistic](values)), float(low), float(high), len(values))


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, n_boot: int = N_BOOT, seed: Seed = 0, level: float = 0.95,
                     statistic: str = "mean") -> Estimate:
    """mean (or median) of b - a over paired items, with a bootstrap CI that resamples items (pairs stay together)."""
    if np.asarray(a).shape != np.asarray(b).shape:
        raise ValueError(f"paired_bootstrap: {len(a)} vs {len(b)} scores; pair the runs by id first")
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    return bootstrap_ci(diff, n_boot=n_boot, seed=seed, level=level, statistic=statistic)


# --- cluster bootstrap -------------------------------------------------------------------------------------

def _subset(data: Data, idx: np.ndarray) -> Data:
    if isinstance(data, Mapping):
        return {k: v[idx] for k, v in data.items()}
    return np.asarray(data)[idx]


def _statistic(statistic: str | Callable[[Any], float]) -> Callable[[Any], float]:
    if callable(statistic):
        return statistic
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be a function or one of {sorted(STATISTICS)}, got {statistic!r}")
    return lambda x: float(STATISTICS[statistic](x))


def cluster_bootstrap(data: Data, clusters: Sequence, statistic: str | Callable[[Any], float] = "mean", *,
                      n_boot: int | None = None, b_min: int = 1000, b_max: int = N_BOOT, rel_width: float = 0.05,
                      seed: Seed = 0, alpha: float = 0.05, cluster_order: str = "sorted") -> ClusterEstimate:
    """Percentile (1 - alpha) CI of `statistic(data)` when whole clusters are resampled with replacement.

    `data`: one array or a dict of arrays (rows aligned with `clusters`); `statistic`: "mean", "median" or a
    function of the (sub)data. `n_boot` fixes B; otherwise B starts at `b_min` and doubles (earlier replicates
    kept, capped at `b_max`) while the CI is wider than `rel_width` x |value| (MacroLens §5.1). Each replicate
    draws k cluster indices with `rng.integers(0, k, size=k)`; `cluster_order` numbers the clusters "sorted"
    (MacroLens) or by "first_seen" row (EPSBench's company bootstrap). Non-finite replicates are left out of
    the quantiles."""
    if n_boot is not None:
        b_min = b_max = n_boot
    if cluster_order not in ("sorted", "first_seen"):
        raise ValueError(f"cluster_order must be 'sorted' or 'first_seen', got {cluster_order!r}")
    fn = _statistic(statistic)
    clusters = np.asarray(clusters)
    n = len(clusters)
    if n == 0:
        return ClusterEstimate(float("nan"), float("nan"), float("nan"), 0, 0, 0, False)
    value = float(fn(data))
    if cluster_order == "sorted":
        order = np.argsort(clusters, kind="stable")
        _, starts, lens = np.unique(clusters[order], return_index=True, return_counts=True)
    else:
        first: dict = {}
        for row, c in enumerate(clusters.tolist()):
            first.setdefault(c, []).append(row)
        members = list(first.values())
        order = np.array([row for m in members for row in m])
        lens = np.array([len(m) for m in members])
        starts = np.cumsum(lens) - lens
    k = len(starts)
    rng = _rng(seed)
    reps: list[float] = []

    def draw(count: int) -> None:
        for _ in range(count):
            pick = rng.integers(0, k, size=k)
            ln = lens[pick]
            base = np.repeat(starts[pick] - (np.cumsum(ln) - ln), ln)
            reps.append(float(fn(_subset(data, order[base + np.arange(ln.sum())]))))

    B = b_min
    draw(B)
    while True:
        vals = np.asarray(reps)
        vals = vals[np.isfinite(vals)]
        lo, hi = (np.quantile(vals, [alpha / 2, 1 - alpha / 2]) if vals.size else (np.nan, np.nan))
        converged = bool(np.isfinite(value) and (hi - lo) <= rel_width * abs(value))
        if converged or B >= b_max or not vals.size:
            return ClusterEstimate(value, float(lo), float(hi), B, n, k, converged)
        step = min(B, b_max - B)  # double B, never beyond b_max
        draw(step)
        B += step


def stratified(data: Data, clusters: Sequence, labels: Sequence, statistic, **kw) -> dict[str, ClusterEstimate]:
    """One cluster-bootstrap interval per stratum label (sector, cap quartile, scenario category, ...)."""
    labels = np.asarray([str(x) for x in labels])
    clusters = np.asarray(clusters)
    return {lab: cluster_bootstrap(_subset(data, np.flatnonzero(labels == lab)), clusters[labels == lab], statistic, **kw)
            for lab in sorted(set(labels))}


def stratified_points(data: Data, labels: Sequence, statistic) -> dict[str, float]:
    """The statistic per stratum label, no interval (counts and parse rates)."""
    labels = np.asarray([str(x) for x in labels])
    fn = _statistic(statistic)
    return {lab: float(fn(_subset(data, np.flatnonzero(labels == lab)))) for lab in sorted(set(labels))}


# --- paired tests ------------------------------------------------------------------------------------------

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


def grouped(records: Sequence[dict], keys: Sequence[str], *, value: str = "score", n_boot: int = N_BOOT, seed: Seed = 0) -> list[dict]:
    """Mean of `value` with its CI per combination of `keys` (sorted), e.g. paradigm × axis × hint: Wilson for 0/1
    values (never zero-width at small n), percentile bootstrap otherwise (`score_ci`)."""
    groups: dict[tuple, list[float]] = {}
    for record in records:
        groups.setdefault(tuple(record.get(k) for k in keys), []).append(float(record.get(value) or 0))
    out = []
    for group in sorted(groups, key=lambda g: tuple(str(x) for x in g)):
        estimate = score_ci(groups[group], n_boot=n_boot, seed=seed)
        out.append({**dict(zip(keys, group)), **estimate.as_dict()})
    return out
