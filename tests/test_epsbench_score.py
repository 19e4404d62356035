"""EPSBench scoring: hand-computed PDE / interval score, malformed records, release validation flags."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from ledgerlm.evaluate.cli import score_main
from ledgerlm.evaluate.epsbench.release import EMBEDDED_RELEASE, load_release
from ledgerlm.evaluate.epsbench.scoring import interval_score, pde, score_records, signed_error
from ledgerlm.evaluate.epsbench.validation import validate_release

RELEASE = load_release()


def test_pde_and_signed_error_hand_computed():
    assert pde(2.5, 2.7, 100.0) == pytest.approx(0.002)
    assert signed_error(2.5, 2.7, 100.0) == pytest.approx(0.002)  # positive = forecast too low
    assert signed_error(3.0, 2.7, 50.0) == pytest.approx(-0.006)
    assert pde(None, 2.7, 100.0) == math.inf


def test_interval_score_hand_computed():
    # width 1, alpha 0.2 -> misses cost 10x their distance; deflated by price 50
    assert interval_score(2.0, 3.0, 2.5, 50.0) == pytest.approx(1 / 50)
    assert interval_score(2.0, 3.0, 3.5, 50.0) == pytest.approx((1 + 10 * 0.5) / 50)
    assert interval_score(2.0, 3.0, 1.5, 50.0) == pytest.approx((1 + 10 * 0.5) / 50)
    assert interval_score(2.0, 3.0, 3.0, 50.0) == pytest.approx(1 / 50)  # on the bound = covered


def _record(iid: str, eps, p10, p90, **extra):
    ticker, fq = iid.rsplit("_", 1)
    return {"ticker": ticker, "fiscal_quarter": fq, "eps_gaap_pred": eps, "eps_p10": p10, "eps_p90": p90, **extra}


def test_validation_flags_the_known_bad_rows():
    flags = validate_release(RELEASE)
    assert {f.id for f in flags} == {"CMG_2026Q1", "COIN_2026Q1", "NFLX_2026Q1", "PLTR_2026Q1", "SMCI_2026Q3"}
    nflx = {f.check for f in flags if f.id == "NFLX_2026Q1"}
    assert {"pretax_scale", "shares_scale", "eps_split_scale"} <= nflx
    assert all(f.check == "pretax_scale" for f in flags if f.id in ("PLTR_2026Q1", "SMCI_2026Q3", "COIN_2026Q1"))


def test_year_ago_forecaster_scores_match_a_direct_computation(tmp_path: Path):
    """Forecast = year-ago EPS with a ±20% band, on all 149 real instances, two runs."""
    records = []
    for run in ("s1", "s2"):
        for inst in RELEASE.instances:
            ya = RELEASE.truth[inst.id].eps_year_ago
            records.append((run, _record(inst.id, ya, ya - 0.2 * abs(ya), ya + 0.2 * abs(ya))))
    results, rows = score_records(RELEASE, records, validate_release(RELEASE), n_boot=200)
    ids = [i.id for i in RELEASE.instances]
    t, p = RELEASE.truth, RELEASE.prices
    expected = [abs(t[i].eps_year_ago - t[i].eps) / p[i] for i in ids]
    assert results["pde_median"] == pytest.approx(float(np.median(expected)))
    lo, hi = results["pde_median_ci"]
    assert lo <= results["pde_median"] <= hi
    covered = [t[i].eps_year_ago - 0.2 * abs(t[i].eps_year_ago) <= t[i].eps <= t[i].eps_year_ago + 0.2 * abs(t[i].eps_year_ago) for i in ids]
    assert results["coverage"] == pytest.approx(np.mean(covered))
    assert results["above_rate"] + results["below_rate"] == pytest.approx(1 - np.mean(covered))
    assert results["format_compliance"] == 1.0 and results["n_records"] == 298 and results["n_instances"] == 149
    assert results["validation"]["flagged_instances"] == ["CMG_2026Q1", "COIN_2026Q1", "NFLX_2026Q1", "PLTR_2026Q1", "SMCI_2026Q3"]
    excluded, _ = score_records(RELEASE, records, validate_release(RELEASE), exclude_flagged=True, n_boot=50)
    assert excluded["n_instances"] == 144


def test_malformed_records_are_format_failures_not_crashes(tmp_path: Path):
    good = _record("GOOGL_2026Q1", 5.0, 4.5, 5.5)
    bad = [
        _record("AMAT_2026Q2", 1.9, None, 2.1),  # missing p10
        _record("ABBV_2025Q4", float("nan"), 0.9, 1.1),  # NaN
        _record("ADBE_2025Q4", "4.4", "4", "5"),  # strings
        _record("ADBE_2026Q1", 4.6, 5.0, 4.0),  # flipped interval
        {"ticker": "AMD", "fiscal_quarter": "2025Q4"},  # nothing
    ]
    preds = tmp_path / "preds"
    for rec in [good] + bad:
        path = preds / "s1" / "records" / rec["ticker"] / rec["fiscal_quarter"] / "t-1.record.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(rec))  # NaN is written as the bare token NaN, as Python does
    broken = preds / "s1" / "records" / "AMAT" / "2026Q1" / "t-1.record.json"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"ticker": "AMAT", "eps_gaap_pred": 2.5,')
    assert score_main(["--benchmark", "epsbench", "--predictions", str(preds), "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    samples = [json.loads(x) for x in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert len(bad) == 5 and results["n_records"] == 7
    assert results["n_format_failures"] == len(bad) + 1
    assert results["format_compliance"] == pytest.approx(1 / (len(bad) + 2))
    by_id = {s["id"]: s for s in samples}
    assert by_id["GOOGL_2026Q1"]["format_ok"] and by_id["GOOGL_2026Q1"]["interval_covered"] is True
    assert by_id["GOOGL_2026Q1"]["pde"] == pytest.approx(abs(5.0 - 5.11) / RELEASE.prices["GOOGL_2026Q1"])
    assert by_id["AMAT_2026Q1"]["format_ok"] is False and "not JSON" in by_id["AMAT_2026Q1"]["error"]
    # numeric strings are read as the release's common.f reads them (float(x)), but stay a format failure
    assert by_id["ADBE_2025Q4"]["eps_pred"] == 4.4 and "string" in by_id["ADBE_2025Q4"]["error"]
    assert by_id["ADBE_2025Q4"]["pde"] == pytest.approx(abs(4.4 - RELEASE.truth["ADBE_2025Q4"].eps) / RELEASE.prices["ADBE_2025Q4"])
    # a flipped interval is a compliance failure but is scored as given (main_tables Table 2): not covered, IS with negative width
    y, price = RELEASE.truth["ADBE_2026Q1"].eps, RELEASE.prices["ADBE_2026Q1"]
    assert "flipped" in by_id["ADBE_2026Q1"]["error"] and by_id["ADBE_2026Q1"]["interval_covered"] is False
    assert by_id["ADBE_2026Q1"]["interval_score"] == pytest.approx(((4.0 - 5.0) + 10 * max(5.0 - y, 0) + 10 * max(y - 4.0, 0)) / price)
    assert by_id["ADBE_2026Q1"]["pde"] == pytest.approx(abs(4.6 - RELEASE.truth["ADBE_2026Q1"].eps) / RELEASE.prices["ADBE_2026Q1"])
    assert {"id", "pde", "interval_covered", "interval_score", "eps_pred"} <= set(samples[0])


def test_jsonl_lines_that_are_not_json_objects_count_as_format_failures_with_line_numbers(tmp_path: Path):
    good = _record("GOOGL_2026Q1", 5.0, 4.5, 5.5)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps(good) + "\n" + '{"ticker": "AMAT", "eps_gaap_pred": 2.5,' + "\n\n" + "[1, 2]\n")
    assert score_main(["--benchmark", "epsbench", "--predictions", str(preds), "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["n_records"] == 3 and results["n_format_failures"] == 2
    assert results["format_compliance"] == pytest.approx(1 / 3)
    assert results["n_instances"] == 1  # unreadable lines name no instance: they do not add one
    lines = results["unreadable_lines"]
    assert [x["line"] for x in lines] == [2, 4]
    assert all(x["path"] == str(preds) for x in lines)
    assert "not JSON" in lines[0]["error"] and "not a JSON object" in lines[1]["error"]


def test_consensus_win_loss(tmp_path: Path):
    root = tmp_path / "release"
    shutil.copytree(EMBEDDED_RELEASE, root)
    ids = ["GOOGL_2026Q1", "ADBE_2025Q4", "AMD_2025Q4"]
    truth = load_release(root).truth
    lines = ["ticker,fiscal_quarter,eps_gaap_consensus"] + [f"{i.rsplit('_', 1)[0]},{i.rsplit('_', 1)[1]},{truth[i].eps + 0.10}" for i in ids]
    (root / "data" / "consensus.csv").write_text("\n".join(lines) + "\n")
    release = load_release(root)
    offsets = {"GOOGL_2026Q1": 0.05, "ADBE_2025Q4": -0.2, "AMD_2025Q4": 0.0}  # wins, loses, wins
    records = [("s1", _record(i, truth[i].eps + d, truth[i].eps - 1, truth[i].eps + 1)) for i, d in offsets.items()]
    results, _ = score_records(release, records, [], n_boot=100)
    cons = results["consensus"]
    assert (cons["wins"], cons["losses"], cons["n_paired"]) == (2, 1, 3)
    assert cons["sign_test_p"] == pytest.approx(1.0)
    expected = np.median([(abs(d) - 0.10) / release.prices[i] for i, d in offsets.items()])
    assert cons["pde_diff_median"] == pytest.approx(expected)
