"""EPSBench schema builder on the embedded SEC companyfacts: baselines vs the release, actual drivers vs reported EPS."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgerlm.evaluate.epsbench.calculator import calculate, load_schema, neutral_drivers, schema_from_dict
from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.cli import main as epsbench_main
from ledgerlm.evaluate.epsbench.release import load_release
from ledgerlm.evaluate.epsbench.schema_builder import actual_drivers, build_schema, load_store

RELEASE = load_release()
# built leaf -> release leaf (names differ; the economic content is the same)
MAPS = {
    "GOOGL_2026Q1": {"revenue": "revenues", "cost_of_revenue": "cost_of_revenues", "rd_expense": "research_and_development",
                     "selling_expense": "sales_and_marketing", "admin_expense": "general_and_administrative", "tax_rate": "tax_rate", "shares": "shares"},
    "NVDA_2026Q4": {"revenue": "revenue", "cost_of_revenue": "cost_of_revenue", "rd_expense": "research_and_development",
                    "sga_expense": "sales_general_and_administrative", "interest_income": "interest_income",
                    "interest_expense": "interest_expense", "other_nonoperating_income": "other_net", "tax_rate": "tax_rate", "shares": "shares"},
    "NVDA_2027Q1": {"revenue": "revenue", "cost_of_revenue": "cost_of_revenue", "rd_expense": "rd", "sga_expense": "sga",
                    "interest_income": "interest_income", "interest_expense": "interest_expense", "tax_rate": "tax_rate", "shares": "shares"},
}
# known, explained differences: {id: {built leaf: relative tolerance}}
LOOSE = {"NVDA_2026Q4": {"shares": 0.01}}  # Q4 diluted shares are not filed: 4 x FY - 3 x 9M = 24,705 vs 24,940 in the release


@pytest.fixture(scope="module")
def store():
    return load_store()


@pytest.mark.parametrize("iid", sorted(MAPS))
def test_built_baseline_matches_release(store, iid):
    ticker, fq = iid.split("_")
    built = build_schema(store, ticker, fq)
    release = RELEASE.schema(iid)
    assert built["baseline_fq"] == release.baseline_fq
    for ours, theirs in MAPS[iid].items():
        rel = LOOSE.get(iid, {}).get(ours, 0.0)
        tol = max(1.0, abs(release.baseline[theirs]) * rel) if ours != "tax_rate" else 1e-5  # filings round to $1M / 1M shares
        assert built["variables_baseline"][ours] == pytest.approx(release.baseline[theirs], abs=tol), ours
    # the non-operating total agrees even where the release keeps one line and we split interest out
    nodes = calculate(schema_from_dict(built), neutral_drivers(schema_from_dict(built)))
    rel_nodes = calculate(release, neutral_drivers(release))
    assert nodes["pretax_income"] == pytest.approx(rel_nodes["pretax_income"], abs=0.5)
    assert nodes["eps"] == pytest.approx(release.validation["baseline_fq_eps"], abs=0.011)
    refs = built["prediction_schema"]["tax_rate"]["references"]
    assert built["prediction_schema"]["tax_rate"]["default"] == sorted(refs.values())[1]  # median of last_q, ttm, q4
    # ttm: the store takes a quarter whose prior YTD was restated in a later filing as the filed 3-month figure (NVDA
    # FY2026Q2 pretax 31,206 M as the 10-Q reports it), the release H1 - restated Q1; the $1M-rounding gap moves the
    # four-quarter rate by < 2e-5
    assert refs["ttm"] == pytest.approx(release.drivers["tax_rate"]["references"]["ttm"], abs=2e-5)


@pytest.mark.parametrize("iid", sorted(MAPS))
def test_actual_drivers_reproduce_reported_eps(store, iid):
    ticker, fq = iid.split("_")
    built = build_schema(store, ticker, fq)
    eps = calculate(schema_from_dict(built), actual_drivers(store, built))["eps"]
    print(f"\n{iid}: built schema + actual drivers -> EPS {eps:.4f}, reported {RELEASE.truth[iid].eps}")
    assert eps == pytest.approx(RELEASE.truth[iid].eps, abs=0.01)
    assert built["_validation"]["target_fq_pretax"] == pytest.approx(RELEASE.truth[iid].pretax, abs=0.5)


def test_cli_build_schema(tmp_path: Path, capsys):
    out = tmp_path / "GOOGL_2026Q1.json"
    assert epsbench_main(["build-schema", "--company", "GOOGL", "--quarter", "2026Q1", "--out", str(out)]) == 0
    schema = load_schema(out)
    assert {d["type"] for d in schema.drivers.values()} == {"yoy", "bps", "absolute", "rate_override"}
    assert json.loads(out.read_text())["_validation"]["target_fq_eps"] == 5.11


def test_aapl_labels_from_comparatives(store):
    """AAPL's embedded 10-K facts keep FY2024 only as a later 10-K's comparative: the builder must still
    map the filer's fiscal labels (Q4 FY2025 = the September 2025 quarter, reported diluted EPS $1.85;
    the year-ago Q4 FY2024 carried the EU State Aid tax charge: $0.97)."""
    built = build_schema(store, "AAPL", "2025Q4")
    assert built["baseline_fq"] == "2024Q4"
    assert built["variables_baseline"]["revenue"] == pytest.approx(94930.0, abs=1.0)  # Q4 FY2024 = FY - 9M: $94,930M
    sc = schema_from_dict(built)
    assert calculate(sc, neutral_drivers(sc))["eps"] == pytest.approx(0.97, abs=0.011)
    assert calculate(sc, actual_drivers(store, built))["eps"] == pytest.approx(1.85, abs=0.011)


@pytest.mark.parametrize("quarter, field", [("2026Q9", "quarter"), ("banana", "quarter"), ("2027Q1", "pretax_income")])
def test_cli_build_schema_bad_quarter_is_one_line(tmp_path: Path, capsys, quarter, field):
    out = tmp_path / "s.json"
    with pytest.raises(InputError) as err:
        epsbench_main(["build-schema", "--company", "GOOGL", "--quarter", quarter, "--out", str(out)])
    assert err.value.field == field and not out.exists()
    assert epsbench_main(["build-instances", "--companies", "GOOGL", "--quarters", quarter, "2026Q1", "--out", str(tmp_path / "many")]) == 0
    assert [p.name for p in (tmp_path / "many").iterdir()] == ["GOOGL_2026Q1.json"]
