"""Period grammar and the period algebra of FactStore, on small hand-made facts.

Real-data checks of the same algebra live in tests/test_statements_algebra_real.py.
"""
from __future__ import annotations

import pandas as pd
import pytest

from ledgerlm.errors import InputError, NotDerivable
from ledgerlm.synth.statements.periods import Period, ReportKey, parse_period, parse_report
from ledgerlm.synth.statements.store import FactStore


@pytest.mark.parametrize(
    "label,kind,quarter,months",
    [("FY2023", "FY", 4, 12), ("FY2023Q1", "Q", 1, 3), ("FY2023Q4", "Q", 4, 3), ("FY2023H1", "YTD", 2, 6),
     ("FY2023Q3YTD", "YTD", 3, 9), ("FY2023Q2TTM", "TTM", 2, 12), ("fy2023q2ytd", "YTD", 2, 6)],
)
def test_parse_period_round_trips(label, kind, quarter, months):
    p = parse_period(label)
    assert (p.kind, p.quarter, p.months) == (kind, quarter, months)
    assert parse_period(p.label) == p


def test_ytd_over_one_quarter_is_q1_and_over_four_is_fy():
    assert parse_period("FY2023Q1YTD") == Period(2023, "Q", 1)
    assert parse_period("FY2023Q4YTD") == Period(2023, "FY", 4)


@pytest.mark.parametrize("bad", ["2023", "FY23", "FY2023Q5", "FY2023H2", "CY2023Q1", ""])
def test_bad_period_names_the_value(bad):
    with pytest.raises(InputError, match="bad period"):
        parse_period(bad)


def test_neighbours_and_balance_reports():
    assert parse_period("FY2023Q1").prior_quarter() == parse_period("FY2022Q4")
    assert parse_period("FY2023Q3").prior_year() == parse_period("FY2022Q3")
    assert parse_period("FY2023Q3YTD").begin_report() == ReportKey(2022, 4)
    assert parse_period("FY2023Q2").begin_report() == ReportKey(2023, 1)
    assert parse_period("FY2023Q1").begin_report() == ReportKey(2022, 4)
    assert parse_period("FY2023Q2TTM").begin_report() == ReportKey(2022, 2)
    assert parse_report("FY2023Q3YTD").label == "FY2023Q3YTD"
    with pytest.raises(InputError, match="not a report"):
        parse_report("FY2023Q3")


def _row(concept, value, start, end, fy, fp, statement="income", unit="USD", src="acc-1", filed="2024-01-01"):
    return {"company": "TEST", "company_name": "Test Corp", "scope": "consolidated", "statement": statement,
            "concept": concept, "label": concept, "value": value, "unit": unit, "start": start, "end": end,
            "fiscal_year": fy, "fiscal_period": fp, "form": "10-K" if fp == "FY" else "10-Q", "filed": filed,
            "source": src, "tag": concept}


@pytest.fixture
def store_53_week():
    """A retailer-like calendar: FY2022 is a 53-week year ending 2023-01-01 (labelled 2022 by the filer)."""
    rows = [
        # FY2021: 2021-01-03 .. 2022-01-02 (52 weeks); FY2022: 2022-01-03 .. 2023-01-01 (52 weeks + 0)
        _row("revenue", 400.0, "2021-01-04", "2022-01-02", 2021, "FY", src="k21"),
        _row("revenue", 90.0, "2021-01-04", "2021-04-04", 2021, "Q1", src="q121"),
        _row("revenue", 190.0, "2021-01-04", "2021-07-04", 2021, "Q2", src="q221"),
        _row("revenue", 300.0, "2021-01-04", "2021-10-03", 2021, "Q3", src="q321"),
        _row("revenue", 530.0, "2022-01-03", "2023-01-01", 2022, "FY", src="k22"),
        _row("revenue", 120.0, "2022-01-03", "2022-04-03", 2022, "Q1", src="q122"),
        _row("revenue", 250.0, "2022-01-03", "2022-07-03", 2022, "Q2", src="q222"),
        _row("revenue", 130.0, "2022-04-04", "2022-07-03", 2022, "Q2", src="q222"),  # reported 3-month
        _row("revenue", 390.0, "2022-01-03", "2022-10-02", 2022, "Q3", src="q322"),
        _row("shares_diluted", 10.0, "2022-01-03", "2022-04-03", 2022, "Q1", unit="shares", src="q122"),
        _row("shares_diluted", 11.0, "2022-01-03", "2022-07-03", 2022, "Q2", unit="shares", src="q222"),
        _row("total_assets", 1000.0, "", "2022-01-02", 2021, "FY", statement="balance", src="k21"),
        _row("total_assets", 1100.0, "", "2022-04-03", 2022, "Q1", statement="balance", src="q122"),
        _row("total_assets", 1300.0, "", "2023-01-01", 2022, "FY", statement="balance", src="k22"),
    ]
    return FactStore(pd.DataFrame(rows))


def test_fiscal_labels_come_from_the_filer(store_53_week):
    years = store_53_week.fiscal_years("TEST")
    assert [(y.label, str(y.end)) for y in years] == [(2021, "2022-01-02"), (2022, "2023-01-01")]


def test_standalone_quarters_q4_and_ttm(store_53_week):
    s = store_53_week
    assert s.value("TEST", "revenue", "FY2022Q1").value == 120.0
    assert s.value("TEST", "revenue", "FY2022Q2").value == 130.0  # 250 - 120
    assert s.value("TEST", "revenue", "FY2022Q2").value == s.reported_quarter("TEST", "revenue", "FY2022Q2").value
    assert s.value("TEST", "revenue", "FY2022Q3").value == 140.0  # 390 - 250
    assert s.value("TEST", "revenue", "FY2022Q4").value == 140.0  # 530 - 390
    assert s.value("TEST", "revenue", "FY2022Q2TTM").value == 250.0 + 400.0 - 190.0
    ttm = s.value("TEST", "revenue", "FY2022Q2TTM")
    assert {f.report for f in ttm.inputs} == {"FY2022H1", "FY2021", "FY2021H1"}


def test_weighted_average_shares_quarter(store_53_week):
    # H1 average 11 over two quarters, Q1 average 10 -> Q2 average 12
    assert store_53_week.value("TEST", "shares_diluted", "FY2022Q2").value == 12.0


def test_balances_begin_end_average(store_53_week):
    s = store_53_week
    assert s.value("TEST", "total_assets", "FY2022").value == 1300.0
    assert s.value("TEST", "total_assets", "FY2022", basis="begin").value == 1000.0
    assert s.value("TEST", "total_assets", "FY2022", basis="avg").value == 1150.0
    assert s.value("TEST", "total_assets", "FY2022Q1", basis="avg").value == 1050.0


def test_missing_report_is_named(store_53_week):
    s = store_53_week
    with pytest.raises(NotDerivable) as err:
        s.value("TEST", "revenue", "FY2021Q2TTM")  # needs FY2020, absent
    assert err.value.missing == ["FY2020"]
    restricted = s.restrict({"TEST": ["FY2022", "FY2022H1"]})
    with pytest.raises(NotDerivable) as err:
        restricted.value("TEST", "revenue", "FY2022Q4")
    assert err.value.missing == ["FY2022Q3YTD"]
    assert restricted.value("TEST", "revenue", "FY2022").value == 530.0
    assert restricted.reports("TEST") == [ReportKey(2022, 2), ReportKey(2022, 4)]


def test_resolve_company_by_ticker_and_name(store_53_week):
    assert store_53_week.resolve_company("test") == "TEST"
    assert store_53_week.resolve_company("Test Corp") == "TEST"
    with pytest.raises(InputError, match="unknown company 'NOPE'"):
        store_53_week.resolve_company("NOPE")


def test_statement_for_a_derived_quarter(store_53_week):
    stmt = store_53_week.statement("TEST", "FY2022Q4", "income")
    assert stmt["period"] == "FY2022Q4"
    assert {i["concept"]: i["value"] for i in stmt["items"]}["revenue"] == 140.0
