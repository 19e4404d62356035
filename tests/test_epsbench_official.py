"""EPSBench scored exactly as the release (JadeXu16/epsbench bbf98810) scores it.

    python -m pytest -q tests/test_epsbench_official.py

1. The release's own run records (tests/data/epsbench_official, CC BY 4.0, see ATTRIBUTION.md) give the
   release's own per-run scores (data/scores.csv: pde, interval_covered, interval_score) for every record,
   and instance PDEs equal the median of scores.csv's run PDEs (main_tables.inst_pde).
2. A crafted 4-instance set with a missing run, a failed run, a flipped interval and a missing instance:
   the expected numbers are worked out by hand from stage_3_eval/main_tables.py and common.py (comments).
"""
from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path

import pytest

from ledgerlm.evaluate.cli import score_main
from ledgerlm.evaluate.epsbench.release import Instance, Release, Truth
from ledgerlm.evaluate.epsbench.scoring import paired, score_records, sign_p, wins_from_scores_csv

OFFICIAL = Path(__file__).parent / "data" / "epsbench_official"
GLM = "glm-4.5-air__opencode__default__full"


def _official_rows() -> list[dict]:
    with (OFFICIAL / "scores_subset.csv").open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("config", [GLM, "qwen3.5__opencode__default__full"])
def test_release_records_reproduce_the_release_per_run_scores(tmp_path: Path, config: str):
    out = tmp_path / "scored"
    assert score_main(["--benchmark", "epsbench", "--predictions", str(OFFICIAL / config), "--out", str(out)]) == 0
    samples = {(s["id"], s["run"]): s for s in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}
    expected = [r for r in _official_rows() if r["config"] == config]
    assert len(samples) == len(expected) > 0  # every record of the configuration that we copied
    for row in expected:
        got = samples[(f"{row['ticker']}_{row['fiscal_quarter']}", row["run"])]
        assert got["eps_pred"] == pytest.approx(float(row["eps_pred"]), rel=1e-12)
        assert got["pde"] == pytest.approx(float(row["pde"]), rel=1e-9)
        if row["eps_p10"] == "":  # no interval: the release leaves coverage and IS blank
            assert got["interval_covered"] is None and got["interval_score"] is None
        else:
            assert got["interval_covered"] == (row["interval_covered"] == "1")
            assert got["interval_score"] == pytest.approx(float(row["interval_score"]), rel=1e-9)


def test_instance_pde_is_the_median_of_the_release_run_pdes(tmp_path: Path):
    out = tmp_path / "scored"
    assert score_main(["--benchmark", "epsbench", "--predictions", str(OFFICIAL / GLM), "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    by_instance: dict[str, list[float]] = {}
    for row in _official_rows():
        if row["config"] == GLM:
            by_instance.setdefault(f"{row['ticker']}_{row['fiscal_quarter']}", []).append(float(row["pde"]))
    assert set(by_instance) == {"BLK_2025Q4", "CCL_2026Q1", "CMG_2025Q4", "CRWD_2026Q4"}
    for iid, pdes in by_instance.items():
        assert len(pdes) == 3
        assert results["instance_pde"][iid] == pytest.approx(statistics.median(pdes), rel=1e-9)
    # the other 145 release instances have no record in any run: +inf, left out of the median (main_tables `finite`)
    assert results["scorer_version"] == 3
    assert results["n_grid"] == 149 and results["n_instances_finite"] == 4 and results["n_instances_failed"] == 145
    assert results["pde_median"] == pytest.approx(statistics.median(statistics.median(v) for v in by_instance.values()), rel=1e-9)
    # interval columns pool the 9 runs with an interval (3 of 12 have none)
    assert results["n_with_interval"] == 9
    assert results["compliance"] == pytest.approx(12 / (149 * 3))


def _crafted_release() -> Release:
    ids = ["AAA_2026Q1", "BBB_2026Q1", "CCC_2026Q1", "DDD_2026Q1"]
    instances = [Instance(i.split("_")[0], "2026Q1", "2026-04-20", "2026-04-19", "2026-01-20") for i in ids]
    truth = {i: Truth(1.00, None, None, None, 0.8, 0.9) for i in ids}
    return Release(Path("/nonexistent"), instances, truth, {i: 100.0 for i in ids}, {i: 1.15 for i in ids})


def _rec(iid: str, eps, p10=None, p90=None) -> dict:
    ticker, fq = iid.split("_")
    return {"ticker": ticker, "fiscal_quarter": fq, "eps_gaap_pred": eps, "eps_p10": p10, "eps_p90": p90}


def test_crafted_set_aggregates_as_main_tables():
    """y = 1.00, P = 100, consensus c = 1.15 (analyst PDE 0.0015) for all four instances; runs s1-s3.
    AAA: 1.10, 1.20, 1.30 -> run PDE .001 .002 .003 -> instance .002; intervals [.9,1.5] x2 (covered, IS .6/100),
         [1.2,1.4] (missed below: IS (0.2 + 10 x 0.2)/100 = .022)
    BBB: s1 1.05 with flipped [1.2, 0.8] (not covered; IS (-0.4 + 10 x 0.2 + 10 x 0.2)/100 = .036), s2 no record,
         s3 eps null (failed run) -> [.0005, inf, inf] -> instance inf
    CCC: s1 0.90 [0.8, 1.2] (covered, IS .004), s2 0.95 no interval, s3 no record -> [.001, .0005, inf] -> .001
    DDD: no record in any run -> inf
    main_tables: median PDE over finite instances = median(.002, .001) = .0015 (0.15 %);
    Table 2 pools the 5 runs with numeric p10/p90: coverage 3/5 = 0.6, mean IS (.006+.006+.022+.036+.004)/5 = .0148;
    compliance 6 forecasts / (4 x 3) = 0.5; vs consensus: AAA loss, BBB loss (inf), CCC win, DDD loss (inf):
    1 win / 3 losses, sign p = 2 x (C(4,0) + C(4,1)) / 16 = 0.625, median finite paired difference median(+.0005, -.0005) = 0."""
    release = _crafted_release()
    records = [
        ("s1", _rec("AAA_2026Q1", 1.10, 0.9, 1.5)), ("s2", _rec("AAA_2026Q1", 1.20, 0.9, 1.5)), ("s3", _rec("AAA_2026Q1", 1.30, 1.2, 1.4)),
        ("s1", _rec("BBB_2026Q1", 1.05, 1.2, 0.8)), ("s3", _rec("BBB_2026Q1", None)),
        ("s1", _rec("CCC_2026Q1", 0.90, 0.8, 1.2)), ("s2", _rec("CCC_2026Q1", 0.95)),
    ]
    results, _ = score_records(release, records, [], n_boot=50)
    assert results["pde_median"] == pytest.approx(0.0015)
    assert results["instance_pde"]["AAA_2026Q1"] == pytest.approx(0.002) and results["instance_pde"]["CCC_2026Q1"] == pytest.approx(0.001)
    assert results["instance_pde"]["BBB_2026Q1"] is None and results["instance_pde"]["DDD_2026Q1"] is None
    assert results["n_instances_failed"] == 2
    assert results["n_with_interval"] == 5 and results["n_flipped_intervals"] == 1
    assert results["coverage"] == pytest.approx(0.6)
    assert results["interval_score_mean"] == pytest.approx(0.0148)
    # tails as main_tables counts them (y < l, y > u): the flipped [1.2, 0.8] is both below l and above u
    assert results["below_rate"] == pytest.approx(2 / 5) and results["above_rate"] == pytest.approx(1 / 5)
    assert results["compliance"] == pytest.approx(0.5)
    cons = results["consensus"]
    assert (cons["wins"], cons["losses"]) == (1, 3)
    assert cons["win_rate"] == pytest.approx(0.25) and cons["sign_test_p"] == pytest.approx(0.625)
    assert cons["pde_diff_median"] == pytest.approx(0.0, abs=1e-15)
    assert cons["pde_median_consensus"] == pytest.approx(0.0015)
    # Table 1 surprise direction (main_tables.direction_acc), y = 1.00 < c = 1.15: forecasts 1.10, 1.05, 0.90, 0.95 are
    # below c (right), 1.20 and 1.30 above (wrong) -> 4 of 6 runs; Table 4: no run with PDE > 1 pp
    assert cons["surprise_direction_accuracy"] == pytest.approx(4 / 6)
    assert results["n_catastrophic_runs"] == 0 and results["catastrophic_rate"] == 0.0


def test_fewer_runs_present_than_the_configuration_had_count_as_failed_runs():
    """A configuration of 3 runs whose s2/s3 folders are empty: each instance is median(x, inf, inf) = inf."""
    release = _crafted_release()
    records = [("s1", _rec(i, 1.10)) for i in ("AAA_2026Q1", "BBB_2026Q1")]
    one, _ = score_records(release, records, [], n_boot=10)
    three, _ = score_records(release, records, [], n_boot=10, runs=["s1", "s2", "s3"])
    assert one["pde_median"] == pytest.approx(0.001)
    assert three["pde_median"] is None and three["n_instances_failed"] == 4


def test_sign_test_and_paired_rules_match_common_py():
    assert sign_p(0, 0) == 1.0
    assert sign_p(10, 0) == pytest.approx(2 / 1024)
    assert sign_p(7, 3) == pytest.approx(2 * (1 + 10 + 45 + 120) / 1024)
    r = paired({"a": math.inf, "b": 0.1, "c": 0.3}, {"a": math.inf, "b": 0.2, "c": 0.3}, ["a", "b", "c"], n_boot=100)
    assert (r["wins"], r["losses"], r["n_diffs"]) == (1, 0, 2)  # inf-inf dropped, tie excluded from wins/losses


def test_wins_without_consensus_come_from_the_release_scores_csv():
    got = wins_from_scores_csv(OFFICIAL / "scores_subset.csv", GLM)
    # instance_vs_consensus of the 4 GLM instances: BLK win, CCL loss, CMG loss, CRWD loss
    assert (got["wins"], got["losses"]) == (1, 3)
    assert wins_from_scores_csv(OFFICIAL / "scores_subset.csv", "no-such-config") is None
