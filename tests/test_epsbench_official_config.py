"""One whole EPSBench configuration scored by `ledgerlm score` equals the release's own scores.

    python -m pytest -q tests/test_epsbench_official_config.py

Data: tests/data/epsbench_official/glm-4.5-air__opencode__default__full/ (CC BY 4.0, see README.md there):
all 447 runs (149 instances x s1-s3) of the release's configuration glm-4.5-air__opencode__default__full,
`scores.csv` = its rows of the release's data/scores.csv, `records.jsonl` = the scored fields of its
t-1.record.json files (ticker, fiscal_quarter, run, eps_gaap_pred, eps_p10, eps_p90).
Expected values: per run, the release's scores.csv; aggregates, computed from scores.csv as
stage_3_eval/main_tables.py computes them, and the figures the release publishes for "GLM 4.5 Air" in
stage_3_eval/output_main_tables.md (Tables 1, 2 and 4).
"""
from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path

import pytest

from ledgerlm.evaluate.cli import score_main
from ledgerlm.evaluate.epsbench.scoring import wins_from_scores_csv

CONFIG = "glm-4.5-air__opencode__default__full"
DATA = Path(__file__).parent / "data" / "epsbench_official" / CONFIG


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> tuple[dict, dict, list[dict]]:
    out = tmp_path_factory.mktemp("glm") / "scored"
    argv = ["--benchmark", "epsbench", "--predictions", str(DATA / "records.jsonl"), "--runs", "3", "--config", CONFIG, "--out", str(out)]
    assert score_main(argv) == 0
    samples = {(s["id"], s["run"]): s for s in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}
    with (DATA / "scores.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return json.loads((out / "results.json").read_text()), samples, rows


def test_every_run_of_the_configuration_reproduces_scores_csv(scored):
    _, samples, rows = scored
    assert len(rows) == len(samples) == 447 and {r["config"] for r in rows} == {CONFIG}
    mismatches = []
    for row in rows:
        got = samples[(f"{row['ticker']}_{row['fiscal_quarter']}", row["run"])]
        ok = got["eps_pred"] == pytest.approx(float(row["eps_pred"]), rel=1e-12)
        ok &= got["pde"] == pytest.approx(float(row["pde"]), rel=1e-9)
        if row["eps_p10"] == "":  # no interval: the release leaves coverage and IS blank
            ok &= got["interval_covered"] is None and got["interval_score"] is None
        else:
            ok &= got["interval_covered"] == (row["interval_covered"] == "1")
            ok &= got["interval_score"] == pytest.approx(float(row["interval_score"]), rel=1e-9)
        if not ok:
            mismatches.append((row["ticker"], row["fiscal_quarter"], row["run"]))
    assert mismatches == []


def test_aggregates_equal_main_tables_computed_from_scores_csv(scored):
    results, _, rows = scored
    # main_tables.inst_pde: median over s1-s3 of the run PDE (a run without a forecast is +inf)
    per: dict[str, list[float]] = {}
    for row in rows:
        per.setdefault(f"{row['ticker']}_{row['fiscal_quarter']}", []).append(float(row["pde"]) if row["pde"] else math.inf)
    inst = {k: statistics.median(v) for k, v in per.items()}
    assert len(inst) == 149 and all(len(v) == 3 for v in per.values())
    for iid, value in inst.items():
        assert results["instance_pde"][iid] == pytest.approx(value, rel=1e-9)
    finite = [v for v in inst.values() if not math.isinf(v)]
    assert results["pde_median"] == pytest.approx(statistics.median(finite), rel=1e-9)
    # Table 2: runs with an interval pooled; coverage share, IS mean and median over those runs
    with_interval = [r for r in rows if r["eps_p10"] != "" and r["eps_p90"] != ""]
    assert results["n_with_interval"] == len(with_interval)
    assert results["coverage"] == pytest.approx(statistics.mean(r["interval_covered"] == "1" for r in with_interval), rel=1e-12)
    scores = [float(r["interval_score"]) for r in with_interval]
    assert results["interval_score_mean"] == pytest.approx(statistics.mean(scores), rel=1e-9)
    assert results["interval_score_median"] == pytest.approx(statistics.median(scores), rel=1e-9)


def test_aggregates_equal_the_figures_the_release_publishes(scored):
    """stage_3_eval/output_main_tables.md, row "GLM 4.5 Air"."""
    results, samples, _ = scored
    pp = lambda x: round(100 * x, 3)  # noqa: E731  (the tables print pp to 3 decimals)
    # Table 1: median PDE 0.215 pp, head-to-head 42/149, compliance 447/447
    assert pp(results["pde_median"]) == 0.215
    assert (results["n_runs_with_forecast"], results["n_runs_expected"]) == (447, 447)
    wins = wins_from_scores_csv(DATA / "scores.csv", CONFIG)
    assert (wins["wins"], wins["wins"] + wins["losses"]) == (42, 149)
    # Table 2: 409/447 with interval, coverage 44.0 %, below l 22.0 %, above u 34.0 %, median width 0.331,
    # mean IS 6.478, median IS 0.965 (pp)
    assert results["n_with_interval"] == 409
    assert [round(100 * results[k], 1) for k in ("coverage", "below_rate", "above_rate")] == [44.0, 22.0, 34.0]
    assert [pp(results[k]) for k in ("width_median", "interval_score_mean", "interval_score_median")] == [0.331, 6.478, 0.965]
    # Table 4: 71 runs with PDE > 1 pp
    assert sum(s["pde"] is not None and s["pde"] > 0.01 for s in samples.values()) == 71
    assert results["n_catastrophic_runs"] == 71 and round(100 * results["catastrophic_rate"], 1) == 15.9  # results.json's own


def test_records_jsonl_agrees_with_the_official_record_files():
    """The 12 t-1.record.json files copied unchanged (tests/data/epsbench_official/<config>/s*/records) carry the
    same forecast fields as records.jsonl's lines for those runs."""
    lines = {(r["ticker"], r["fiscal_quarter"], r["run"]): r for r in map(json.loads, (DATA / "records.jsonl").read_text().splitlines())}
    files = sorted(DATA.rglob("t-1.record.json"))
    assert len(lines) == 447 and len(files) == 12
    for path in files:
        record = json.loads(path.read_text())
        line = lines[(record["ticker"], record["fiscal_quarter"], path.relative_to(DATA).parts[0])]
        assert {k: record[k] for k in ("eps_gaap_pred", "eps_p10", "eps_p90")} == {k: line[k] for k in ("eps_gaap_pred", "eps_p10", "eps_p90")}
