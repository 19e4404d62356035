"""EPSBench CIs unchanged by the move to evaluate/stats.py: numbers pinned from the pre-refactor scorer.

    python -m pytest -q tests/test_epsbench_ci_golden.py

The three schemes EPSBench uses (numpy percentile bootstrap of the median, company cluster bootstrap with
companies numbered in first-seen order, both drawn from ONE default_rng(seed); the release's
random.Random(0) order-statistic bootstrap of paired differences) were computed by
evaluate/epsbench/scoring.py at commit 03d9f97 (before the shared stats module) on the synthetic release
below; tickers A, AB, A_B, c, ... make sorted and first-seen company order differ.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ledgerlm.evaluate.epsbench.release import Instance, Release, Truth
from ledgerlm.evaluate.epsbench.scoring import paired, score_records

PINNED = {  # (seed, n_boot) -> (pde_median_ci, pde_median_ci_company), at 03d9f97
    (0, 2000): ([0.0019960280568859256, 0.003176212300810699], [0.0019168367809284904, 0.0032354041911367877]),
    (3, 777): ([0.0019960280568859256, 0.003176212300810699], [0.0019168367809284904, 0.003176212300810699]),
}
CONSENSUS_CI = [0.0013574994356335612, 0.002619591964423744]
PAIRED = {"ci": [-0.2604072221794196, 0.09137828655279578], "median_diff": -0.08064839522090073, "wins": 22, "losses": 18}


def _synthetic():
    rng = np.random.default_rng(5)
    tickers = ["A", "AB", "A_B", "Z", "ZZ", "B", "BA", "C", "c", "MM"]
    ids = [f"{t}_{2020 + q // 4}Q{q % 4 + 1}" for t in tickers for q in range(4)]
    inst = [Instance(i.rsplit("_", 1)[0], i.rsplit("_", 1)[1], "2026-04-20", "2026-04-19", "2026-01-20") for i in ids]
    truth = {i: Truth(1.0, None, None, None, 0.8, 0.9) for i in ids}
    release = Release(Path("/nonexistent"), inst, truth, {i: 100.0 for i in ids}, {i: 1.0 + rng.normal(0, .1) for i in ids})
    records = []
    for run in ("s1", "s2", "s3"):
        for i in ids:
            t, q = i.rsplit("_", 1)
            if rng.random() < 0.1:
                continue
            e = 1.0 + rng.normal(0, 0.3)
            records.append((run, {"ticker": t, "fiscal_quarter": q, "eps_gaap_pred": e, "eps_p10": e - .2, "eps_p90": e + .2}))
    return release, records, ids, rng


@pytest.mark.parametrize("seed,n_boot", sorted(PINNED))
def test_epsbench_cis_equal_the_pre_refactor_numbers(seed, n_boot):
    release, records, _, _ = _synthetic()
    results, _ = score_records(release, records, [], seed=seed, n_boot=n_boot)
    assert results["pde_median"] == 0.0025704943851901007
    assert (results["pde_median_ci"], results["pde_median_ci_company"]) == PINNED[seed, n_boot]
    assert results["consensus"]["pde_diff_ci"] == CONSENSUS_CI


def test_release_paired_bootstrap_equals_the_pre_refactor_numbers():
    _, _, ids, rng = _synthetic()  # rng continues after the release's draws, as when the numbers were pinned
    a = {i: float(rng.random()) for i in ids}
    b = {i: float(rng.random()) for i in ids}
    got = paired(a, b, ids, n_boot=3001)
    assert {k: got[k] for k in PAIRED} == PAIRED
