"""evaluate/stats.py checked against scipy and against numbers by hand (not against itself).

    python -m pytest -q tests/test_stats.py
"""
from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest
from scipy.stats import binomtest, wilcoxon

from ledgerlm.evaluate import stats


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (0, 5), (3, 7), (0, 32), (32, 32), (31, 32), (16, 32), (50, 100), (1, 1000)])
@pytest.mark.parametrize("level", [0.95, 0.90])
def test_wilson_interval_equals_scipy_binomtest(k, n, level):
    est = stats.wilson_ci(k, n, level=level)
    ref = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    assert est.value == k / n and est.n == n
    assert est.ci_low == pytest.approx(ref.low, abs=1e-12) and est.ci_high == pytest.approx(ref.high, abs=1e-12)


def test_accuracy_ci_is_not_zero_width_at_small_n():
    """32/32 correct: the percentile bootstrap says [1, 1]; Wilson says [0.893, 1] (by hand: z^2 / (n + z^2))."""
    boot = stats.bootstrap_ci([1] * 32, n_boot=500)
    assert boot.ci_low == boot.ci_high == 1.0  # the old zero-width interval
    for scores in ([1] * 32, [0] * 32, [1] * 5, [0, 1] * 3):
        est = stats.score_ci(scores)
        assert est.ci_high - est.ci_low > 0.05, scores
    z2 = 1.959963984540054 ** 2
    assert stats.score_ci([1] * 32).ci_low == pytest.approx(32 / (32 + z2), abs=1e-12)
    assert stats.score_ci([0] * 32).ci_high == pytest.approx(z2 / (32 + z2), abs=1e-12)
    assert stats.proportion_ci([1, 0, 1, 1]).as_dict() == stats.wilson_ci(3, 4).as_dict()
    # non-binary scores (losses) keep the bootstrap
    assert stats.score_ci([0.5, 2.0, 3.0], n_boot=200, seed=1) == stats.bootstrap_ci([0.5, 2.0, 3.0], n_boot=200, seed=1)
    assert stats.score_ci([]).n == 0 and math.isnan(stats.score_ci([]).value)
    with pytest.raises(ValueError, match="0/1"):
        stats.proportion_ci([0.5, 1])
    with pytest.raises(ValueError, match="0 <= k <= n"):
        stats.wilson_ci(5, 4)


def test_wilcoxon_equals_scipy_directly():
    rng = np.random.default_rng(3)
    a = rng.normal(1.0, 0.5, 40)
    b = a + rng.normal(0.2, 0.3, 40)
    ref = wilcoxon(b - a)
    assert stats.wilcoxon_signed_rank(a, b) == (pytest.approx(float(ref.statistic)), pytest.approx(float(ref.pvalue)))
    tied = stats.wilcoxon_signed_rank([1.0, 2.0], [1.0, 2.0])
    assert math.isnan(tied[0]) and tied[1] == 1.0


def test_mcnemar_equals_binomtest_on_discordant_pairs():
    a = [1] * 10 + [0] * 12 + [1] * 5 + [0] * 3
    b = [1] * 10 + [1] * 12 + [0] * 5 + [0] * 3
    p, b01, b10 = stats.mcnemar_exact(a, b)
    assert (b01, b10) == (12, 5) and p == pytest.approx(binomtest(12, 17, 0.5).pvalue)


def _clustered(k=15, m=20, seed=0):
    rng = np.random.default_rng(seed)
    return np.repeat(rng.normal(10, 3, k), m) + rng.normal(0, 0.1, k * m), np.repeat(np.arange(k), m)


def test_cluster_bootstrap_is_wider_than_iid_bootstrap_on_clustered_data():
    x, clusters = _clustered()
    iid = stats.bootstrap_ci(x, n_boot=2000, seed=0)
    by_cluster = stats.cluster_bootstrap(x, clusters, "mean", n_boot=2000, seed=0)
    assert by_cluster.value == pytest.approx(iid.value) and by_cluster.B == 2000 and by_cluster.n_clusters == 15
    assert (by_cluster.ci_high - by_cluster.ci_low) > 3 * (iid.ci_high - iid.ci_low)
    # the cluster CI is about the CI of the mean of 15 cluster means: +-1.96 sd / sqrt(15)
    means = x.reshape(15, 20).mean(axis=1)
    half = 1.96 * means.std() / math.sqrt(15)
    assert (by_cluster.ci_high - by_cluster.ci_low) / 2 == pytest.approx(half, rel=0.15)
    # independent rows: cluster = row gives about the iid width
    rows = stats.cluster_bootstrap(x, np.arange(len(x)), "mean", n_boot=2000, seed=0)
    assert (rows.ci_high - rows.ci_low) == pytest.approx(iid.ci_high - iid.ci_low, rel=0.15)


def test_cluster_order_and_shared_generator():
    """first_seen vs sorted numbering changes which cluster each draw picks; a Generator seed continues its stream."""
    values = np.array([1.0, 2.0, 5.0, 9.0, 3.0, 4.0, 8.0])
    clusters = ["b", "b", "a", "c", "a", "d", "c"]
    pick = np.random.default_rng(3).integers(0, 4, size=4)  # the first replicate's 4 cluster draws: [3, 0, 0, 0]
    draws = []
    for order, names in (("sorted", ["a", "b", "c", "d"]), ("first_seen", ["b", "a", "c", "d"])):
        seen: list = []
        est = stats.cluster_bootstrap(values, clusters, lambda v: seen.append(sorted(v)) or float(np.median(v)),
                                      n_boot=5, seed=3, cluster_order=order)
        expected = sorted(float(v) for p in pick for v, c in zip(values, clusters) if c == names[p])
        assert seen[1] == expected and est.value == 4.0 and est.n_clusters == 4  # seen[0] is the full-sample value
        draws.append(expected)
    assert draws[0] != draws[1]  # cluster 0 is "a" in one numbering and "b" in the other
    rng = np.random.default_rng(9)
    first = stats.bootstrap_ci(values, n_boot=100, seed=rng)
    second = stats.bootstrap_ci(values, n_boot=100, seed=rng)
    assert first == stats.bootstrap_ci(values, n_boot=100, seed=9) and second != first
    with pytest.raises(ValueError, match="cluster_order"):
        stats.cluster_bootstrap(values, clusters, n_boot=10, cluster_order="random")


def test_epsbench_release_scheme_by_hand():
    """Two values: a resample's median is 1, 1.5 or 2 with p = 1/4, 1/2, 1/4, so the 5th/95th order statistics
    of 10,000 medians are 1 and 2; and the scheme is Python's random.Random(seed), not numpy."""
    est = stats.bootstrap_ci([1.0, 2.0], n_boot=10_000, seed=0, level=0.90, statistic="median", scheme="epsbench-release")
    assert (est.value, est.ci_low, est.ci_high) == (1.5, 1.0, 2.0)
    values = [0.3, 0.1, 0.7, 0.2, 0.9, 0.4]
    rng = random.Random(5)
    medians = sorted(statistics.median(rng.choices(values, k=6)) for _ in range(200))
    est = stats.bootstrap_ci(values, n_boot=200, seed=5, level=0.90, statistic="median", scheme="epsbench-release")
    assert (est.ci_low, est.ci_high) == (medians[10], medians[190])  # alpha/2 * 200 = 10, (1 - alpha/2) * 200 = 190
    with pytest.raises(ValueError, match="scheme"):
        stats.bootstrap_ci(values, scheme="scipy")
