"""EPSBench analysis tables against the release's own attribution.csv and table rules.

    python -m pytest -q tests/test_epsbench_analyses.py
"""
from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest

from ledgerlm.evaluate.cli import score_main
from ledgerlm.evaluate.epsbench.analyses import CITES_NUMBER, far_instances, naive_baselines, run_attribution, stage_decomposition
from ledgerlm.evaluate.epsbench.bench import iter_records
from ledgerlm.evaluate.epsbench.release import load_release
from ledgerlm.evaluate.epsbench.scoring import score_records

OFFICIAL = Path(__file__).parent / "data" / "epsbench_official"
GLM = OFFICIAL / "glm-4.5-air__opencode__default__full"
RELEASE = load_release()


def _rows():
    _, rows = score_records(RELEASE, iter_records(GLM), [], n_boot=10)
    return rows


def _attribution():
    with (OFFICIAL / "attribution_subset.csv").open(newline="") as fh:
        return {(f"{r['ticker']}_{r['fq']}", r["run"]): r for r in csv.DictReader(fh)}


def test_per_run_stage_errors_equal_the_release_attribution_csv():
    official = _attribution()
    rows = _rows()
    assert len(rows) == len(official) == 12
    for row in rows:
        got, exp = run_attribution(RELEASE, row), official[(row.id, row.run)]
        for key in ("pde", "op_pde", "pretax_pde"):
            assert got[key] == pytest.approx(float(exp[key]), abs=1e-12), (row.id, row.run, key)


def test_stage_table_is_table14s_median_of_run_medians():
    official = _attribution()
    table = stage_decomposition(RELEASE, _rows(), [i.id for i in RELEASE.instances])
    assert table["n"] == 4
    for iid, (o, n, t) in table["instances"].items():
        runs = [official[(iid, s)] for s in ("s1", "s2", "s3")]
        f = lambda r, k: float(r[k])  # noqa: E731
        assert o == pytest.approx(statistics.median(f(r, "op_pde") for r in runs))
        assert n == pytest.approx(statistics.median(f(r, "pretax_pde") - f(r, "op_pde") for r in runs))
        assert t == pytest.approx(statistics.median(f(r, "pde") - f(r, "pretax_pde") for r in runs))
    # hand check, BLK 2025Q4: op_pde .003162/.002929/.004476 -> median .003162
    assert table["instances"]["BLK_2025Q4"][0] == pytest.approx(0.003162)
    assert sum(table["largest"].values()) == 4


def test_naive_baselines_on_the_full_release_match_a_direct_computation():
    ids = [i.id for i in RELEASE.instances]
    rows = {r["forecaster"]: r for r in naive_baselines(RELEASE, ids)}
    t, p = RELEASE.truth, RELEASE.prices
    assert rows["predict zero"]["median_pde"] == pytest.approx(statistics.median(abs(t[i].eps) / p[i] for i in ids))
    assert rows["copy year-ago quarter (q-4)"]["n"] == 149


def test_far_split_is_49_near_50_far_by_year_ago_departure():
    ids = [i.id for i in RELEASE.instances]
    table = far_instances(RELEASE, _rows(), ids)
    assert (table["n_near"], table["n_far"]) == (49, 50)
    dep = {i: abs(RELEASE.truth[i].eps - RELEASE.truth[i].eps_year_ago) / RELEASE.prices[i] for i in ids}
    assert min(dep[i] for i in table["far_ids"]) >= max(dep[i] for i in table["near_ids"])
    assert sorted(dep.values())[-50] == pytest.approx(min(dep[i] for i in table["far_ids"]))


def test_cites_a_number_rule():
    for text in ("Q3 revenue was $4.2B", "guided 12% growth", "1,250 stores", "3.5 million subscribers", "+40 bps margin"):
        assert CITES_NUMBER.search(text), text
    for text in ("management expects growth to continue", "similar to last quarter", "Q3"):
        assert not CITES_NUMBER.search(text), text


def test_score_writes_tables_md(tmp_path: Path):
    assert score_main(["--benchmark", "epsbench", "--predictions", str(GLM), "--out", str(tmp_path / "o"), "--runs", "3"]) == 0
    md = (tmp_path / "o" / "tables.md").read_text()
    assert "Near / far instances" in md and "accounting stage" in md and "predict zero" in md
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["tables"]["stage_decomposition"]["n"] == 4
