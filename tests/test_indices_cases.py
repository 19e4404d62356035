"""Hand-computed headline cases: the paper's Appendix A.1 / A.2 and two real filings.

    python -m pytest tests/test_indices_cases.py -q
"""
from __future__ import annotations

import gzip
import json
import sys
from decimal import Decimal
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from indices_fixtures import REPO, dongtian_case2_facts, embedded_facts, fute_case1_facts  # noqa: E402

from ledgerlm.errors import NotDerivable  # noqa: E402
from ledgerlm.synth.indices.compute import compute, format_answer  # noqa: E402
from ledgerlm.synth.statements.store import FactStore  # noqa: E402

COMPANYFACTS = REPO / "synth" / "data" / "sec" / "companyfacts"


def raw_value(file: str, tag: str, start: str, end: str) -> float:
    """A value straight from the companyfacts JSON: the (start, end) window of a us-gaap tag."""
    doc = json.loads(gzip.open(COMPANYFACTS / file).read())
    vals = {x["val"] for x in doc["facts"]["us-gaap"][tag]["units"]["USD"] if x.get("start") == start and x["end"] == end}
    assert len(vals) == 1, (tag, start, end, vals)
    return float(vals.pop())


@pytest.fixture(scope="module")
def sec_store():
    return FactStore(embedded_facts())


def test_case1_invested_capital_fute_2024(tmp_path):
    """Paper A.1: 1,000,020,938.49 + (34,943,585.84 + 48,296,660.07 + 16,566,591.38 + 54,160,000.00) = 1,153,987,775.78."""
    store = FactStore(fute_case1_facts())
    got = compute(store, "301607", "invested_capital_equity", "FY2024")
    assert format_answer(got.value, got.result, "thousands", 2) == Decimal("1153987.78")
    interest_bearing = 34_943_585.84 + 48_296_660.07 + 16_566_591.38 + 54_160_000.00
    assert got.value == pytest.approx(1_000_020_938.49 + interest_bearing, abs=1e-4)
    # Notes payable (215,022,707.38) is operating: treating it as interest-bearing would add it back.
    # (Interest-bearing debt is now the registry index `interest_bearing_debt`, issue 11, not a taxonomy-flag sum.)
    ib = next(s for s in got.trace if s["kind"] == "index" and s["index"] == "interest_bearing_debt")
    assert ib["value"] == pytest.approx(interest_bearing, abs=1e-4)
    assert "notes_payable" not in {f.concept for f in got.facts}
    assert {f.report for f in got.facts} == {"FY2024"}


def test_case2_operating_expenses_ttm_dongtian_2025h1():
    """Paper A.2 figures, formula selling + admin + financial (TTM = 2025H1 + 2024Y − 2024H1):
    selling 2,789,101.10 + 4,958,105.99 − 2,236,714.86 = 5,510,492.23; admin 16,554,534.56 + 34,543,848.50 −
    12,031,506.74 = 39,066,876.32; financial −2,457,530.39 − 6,779,324.49 + 3,844,353.30 = −5,392,501.58;
    sum 39,184,866.97 = 3918.49 ten-thousands. (The paper prints 3606.24 after unstated 'netting adjustments'.)"""
    store = FactStore(dongtian_case2_facts())
    got = compute(store, "301183", "operating_expenses_ttm", "FY2025Q2TTM")
    assert got.value == pytest.approx(5_510_492.23 + 39_066_876.32 - 5_392_501.58, abs=1e-6)
    assert format_answer(got.value, got.result, "ten_thousands", 2) == Decimal("3918.49")
    assert {f.report for f in got.facts} == {"FY2025H1", "FY2024", "FY2024H1"}


def test_nvidia_fy2026q4_revenue_yoy(sec_store):
    """Q4 FY2026 = FY2026 − 9M FY2026; Q4 FY2025 = FY2025 − 9M FY2025; YoY = (Q4'26 − Q4'25) / Q4'25."""
    f = "CIK0001045810_NVDA.json.gz"
    q4_2026 = raw_value(f, "Revenues", "2025-01-27", "2026-01-25") - raw_value(f, "Revenues", "2025-01-27", "2025-10-26")
    q4_2025 = raw_value(f, "Revenues", "2024-01-29", "2025-01-26") - raw_value(f, "Revenues", "2024-01-29", "2024-10-27")
    assert (q4_2026, q4_2025) == (215_938e6 - 147_811e6, 130_497e6 - 91_166e6)  # 68,127M and 39,331M
    got = compute(sec_store, "NVDA", "revenue_yoy", "FY2026Q4")
    assert got.value == pytest.approx((q4_2026 - q4_2025) / q4_2025, rel=1e-12)
    assert format_answer(got.value, "percent", "percent", 2) == Decimal("73.21")
    assert {r.label for r in got.reports} == {"FY2026", "FY2026Q3YTD", "FY2025", "FY2025Q3YTD"}
    assert all(f.source for f in got.facts)


def test_googl_fy2026q1_gross_margin(sec_store):
    """Q1 2026: (Revenues − CostOfRevenue) / Revenues = (109,896M − 41,271M) / 109,896M."""
    f = "CIK0001652044_GOOGL.json.gz"
    revenue = raw_value(f, "Revenues", "2026-01-01", "2026-03-31")
    cost = raw_value(f, "CostOfRevenue", "2026-01-01", "2026-03-31")
    assert (revenue, cost) == (109_896e6, 41_271e6)
    got = compute(sec_store, "GOOGL", "gross_margin", "FY2026Q1")
    assert got.value == pytest.approx((revenue - cost) / revenue, rel=1e-12)
    assert format_answer(got.value, "percent", "percent", 2) == Decimal("62.45")


def test_deficiency_names_the_missing_report(sec_store):
    """Without the Q3 YTD report, standalone Q4 revenue cannot be unrolled: NotDerivable names FY2026Q3YTD."""
    full = compute(sec_store, "NVDA", "revenue_yoy", "FY2026Q4")
    kept = {r for r in full.reports if r.label != "FY2026Q3YTD"}
    with pytest.raises(NotDerivable) as err:
        compute(sec_store.restrict({"NVDA": kept}), "NVDA", "revenue_yoy", "FY2026Q4")
    assert err.value.missing == ["FY2026Q3YTD"]
    assert "revenue_yoy" in str(err.value)


def test_trace_records_facts_and_intermediates(sec_store):
    got = compute(sec_store, "AAPL", "inventory_turnover", "FY2023")
    facts = [s for s in got.trace if s["kind"] == "fact"]
    assert {(s["concept"], s["basis"]) for s in facts} == {("cost_of_revenue", "end"), ("inventory", "begin"), ("inventory", "end")}
    assert all(i["source"] for s in facts for i in s["inputs"])
    calc = [s for s in got.trace if s["kind"] == "calc"]
    assert calc[-1]["value"] == got.value and calc[-1]["expr"] == "cost_of_revenue / avg(inventory)"
    assert got.trace[-1]["kind"] == "result"


def test_cli_json_output(capsys):
    from ledgerlm.synth.indices.cli import main

    assert main(["--company", "NVDA", "--index", "revenue_yoy", "--period", "FY2026Q4", "--decimals", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["company", "index", "period", "value", "unit", "decimals", "answer", "trace"]
    assert (out["company"], out["unit"], out["decimals"], out["answer"]) == ("NVDA", "percent", 1, 73.2)
    assert out["value"] == pytest.approx((68_127e6 - 39_331e6) / 39_331e6)


def test_cli_insufficient_information(capsys):
    """No FY2001 reports are embedded: the answer is the exact string and the missing report is named."""
    from ledgerlm.synth.indices.cli import main

    assert main(["--company", "NVDA", "--index", "revenue_yoy", "--period", "FY2001Q4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answer"] == "Insufficient information" and out["value"] is None
    assert out["trace"][0]["missing"] and "FY2001" in out["trace"][0]["message"]


def test_cli_text_trace_writes_every_number_with_thousands_separators(capsys, sec_store):
    """AAPL FY2024 FCFF chains non-integer intermediates of 1e11 (the JSON trace abbreviates them `1.049768053e+11`):
    the text trace writes them out in full, with separators, and never in e-notation."""
    import re

    from ledgerlm.synth.indices.cli import main

    assert main(["--company", "AAPL", "--index", "fcff", "--period", "FY2024"]) == 0
    text = capsys.readouterr().out
    assert not re.search(r"\de[+-]?\d", text, re.IGNORECASE), text
    trace = re.sub(r"\[[^\]]*\]", "", text.split("\n", 2)[2])  # past title and formula; [accession numbers] are ids
    numbers = re.findall(r"(?<![\w.,])-?\d[\d,]*(?:\.\d+)?", trace)
    big = [n for n in numbers if abs(float(n.replace(",", ""))) >= 1000]
    assert big and all("," in n for n in big), big
    nopat = compute(sec_store, "AAPL", "nopat", "FY2024").value
    assert not float(nopat).is_integer() and f"= {nopat:,.2f} + " in text  # the operand, exact, as its own step shows it
    fcff = compute(sec_store, "AAPL", "fcff", "FY2024").value
    assert f"value: {fcff:,.2f}" in text
