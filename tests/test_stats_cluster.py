"""Cluster bootstrap (evaluate/stats.py): resamples clusters (not rows), escalates B as MacroLens specifies, seeded.

    python -m pytest -q tests/test_stats_cluster.py
"""
import numpy as np

from ledgerlm.evaluate.stats import bootstrap_ci, cluster_bootstrap, stratified

MEAN = lambda a: float(a["x"].mean())  # noqa: E731


def _clustered(k=12, m=40, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(10, 3, k)
    x = np.repeat(centers, m) + rng.normal(0, 0.1, k * m)  # strong within-cluster correlation
    return {"x": x}, np.repeat([f"c{i}" for i in range(k)], m)


def test_cluster_ci_is_wider_than_row_ci_and_keeps_clusters_whole():
    a, clusters = _clustered()
    by_cluster = cluster_bootstrap(a, clusters, MEAN, b_min=1000, b_max=1000)
    by_row = cluster_bootstrap(a, np.arange(len(clusters)), MEAN, b_min=1000, b_max=1000)
    assert by_cluster.value == by_row.value
    assert (by_cluster.ci_high - by_cluster.ci_low) > 3 * (by_row.ci_high - by_row.ci_low)
    sizes = []
    cluster_bootstrap({"c": clusters}, clusters, lambda s: sizes.append(len(s["c"])) or 0.0, b_min=50, b_max=50)
    assert all(n % 40 == 0 for n in sizes[1:])  # every replicate holds whole clusters of 40 rows


def test_b_escalates_while_ci_wider_than_5_percent_of_mean():
    a, clusters = _clustered()
    wide = cluster_bootstrap(a, clusters, MEAN)  # relative width ~ 30 %: never converges
    assert wide.B == 10_000 and not wide.converged
    tight = cluster_bootstrap({"x": np.full(100, 5.0) + np.linspace(0, 0.01, 100)}, np.arange(100), MEAN)
    assert tight.B == 1000 and tight.converged
    mid = cluster_bootstrap(a, clusters, MEAN, b_min=1000, b_max=3000)
    assert mid.B == 3000  # 1000 -> 2000 -> 3000 (capped)


def test_seeded_reproducibility_and_strata():
    a, clusters = _clustered()
    r1 = cluster_bootstrap(a, clusters, MEAN, b_max=2000)
    r2 = cluster_bootstrap(a, clusters, MEAN, b_max=2000)
    r3 = cluster_bootstrap(a, clusters, MEAN, b_max=2000, seed=7)
    assert r1 == r2 and (r1.ci_low, r1.ci_high) != (r3.ci_low, r3.ci_high)
    labels = np.where(np.arange(len(clusters)) < 240, "A", "B")
    s = stratified(a, clusters, labels, MEAN, b_max=1000)
    assert set(s) == {"A", "B"} and s["A"].n == 240 and s["A"].value == a["x"][:240].mean()
