"""A standalone quarter is never YTD - prior YTD across filing vintages (issue 11).

    python -m pytest tests/test_fidelity_quarter_vintage.py -q

FSDS 2009Q2: Ford's H1 2009 revenue 51,967 M comes from the original 2009 Q2 10-Q, its Q1 24,390 M from the 2010
10-Q's restated comparative; 51,967 - 24,390 = 27,577 M, but the 10-Q's three-month figure is 27,189 M. The full
store answers with the filed three-month figure; a synth store (prompts show YTD reports only) refuses the quarter.
"""
from __future__ import annotations

import pytest


def test_ford_q2_2009_is_the_filed_three_month_figure():
    from ledgerlm.synth.indices.cli import load_store
    from ledgerlm.synth.indices.compute import compute

    store = load_store(None, None)
    assert compute(store, "F", "revenue", "FY2009Q2").value == 27_189e6
    assert compute(store, "GE", "revenue", "FY2009Q2").value == 39_082e6


def test_synth_store_refuses_a_mixed_vintage_quarter():
    from ledgerlm.errors import LedgerError
    from ledgerlm.synth.finindices.storecache import company_stores
    from ledgerlm.synth.indices.compute import compute

    with pytest.raises(LedgerError):
        compute(company_stores(None)["F"], "F", "revenue", "FY2009Q2")


# Seed-9191 cross-source audit (2026-12-03): YTD - prior YTD missing the three-month figure the filer reports, the
# reports otherwise of one vintage order. Alphabet FY2015 capex: 9M 7,848 M (restated, Nov 2016 10-Q) - H1 5,442 M
# (restated, Aug 2016 10-Q) = 2,406 M, the Nov 2016 filing's own Q3 2,383 M (its 9M less 2,383 M is 5,465 M);
# NVIDIA FY2016Q2 operating income H1 250 M - Q1 176 M = 74 M, filed 76 M (2 M: more than rounding to the million).
# Within rounding (NVIDIA FY2016Q3 net income 246 M derived, 247 M filed) the derivation stands.
QUARTERS_THE_FILER_CONTRADICTS = [("GOOGL", "capex", "FY2015Q3", 2_383e6), ("NVDA", "operating_income", "FY2016Q2", 76e6)]


@pytest.mark.parametrize("company, concept, period, filed", QUARTERS_THE_FILER_CONTRADICTS)
def test_quarter_the_filer_reports_otherwise_is_its_filed_figure(company, concept, period, filed):
    from ledgerlm.synth.indices.cli import load_store

    store = load_store(None, None)
    d = store.value(company, concept, period)
    assert d.value == filed
    assert "misses the three-month figure the filer reports" in " ".join(d.steps)


@pytest.mark.parametrize("company, concept, period, filed", QUARTERS_THE_FILER_CONTRADICTS)
def test_synth_store_refuses_a_quarter_the_filer_reports_otherwise(company, concept, period, filed):
    from ledgerlm.errors import NotDerivable
    from ledgerlm.synth.finindices.storecache import company_stores

    with pytest.raises(NotDerivable, match="misses the three-month figure"):
        company_stores(None)[company].value(company, concept, period)


def test_quarter_within_rounding_of_the_filed_figure_stays_derived():
    """Each YTD figure rounded to the million: a quarter 1 M off the filed one is the same figure, derived."""
    from ledgerlm.synth.finindices.storecache import company_stores
    from ledgerlm.synth.statements.periods import Period

    store = company_stores(None)["NVDA"]
    filed = store.index.quarter_reported[("NVDA", "consolidated", "net_income", 2016, 3)].value
    d = store.value("NVDA", "net_income", Period(2016, "Q", 3))
    assert (d.value, filed) == (246e6, 247e6)


# Seed-5353 TTM audit (2026-12-03): TTM = YTD(y,q) + FY(y-1) - YTD(y-1,q) with FY(y-1) restated after YTD(y-1,q) was
# last filed (and YTD(y-1,q) never restated) is on neither basis. 36 such TTM values in the embedded data, all refused.
MIXED_TTMS = [
    ("AAPL", "revenue", "FY2009Q3TTM"),  # FY2008 32,479 -> 37,491 M (2010 revenue-recognition restatement), 9M FY2008 original
    ("GOOGL", "operating_cash_flow", "FY2015Q3TTM"),  # FY2014 22,376 -> 23,024 M (2016 recast), 9M FY2014 original
    ("F", "revenue", "FY2009Q2TTM"),  # FY2008 from the May-2010 8-K recast, H1 2008 from the Aug-2009 10-Q
    ("AAPL", "dividends_paid", "FY2016Q1TTM"),  # FY2015 11,431 -> 11,561 M (dividend equivalents), Q1 FY2015 never re-filed
]
ONE_BASIS = [
    ("NVDA", "revenue", "FY2018Q2", 2_230e6),  # H1 first tagged 2,230 M (the quarter's own three months): a mis-tag, not a restatement
    ("GOOGL", "operating_income", "FY2019Q3TTM", 33_186e6),  # FY2018 and 9M FY2018 both restated (2019 reclassification)
]


@pytest.mark.parametrize("company, concept, period", MIXED_TTMS)
def test_ttm_across_a_restatement_is_refused(company, concept, period):
    from ledgerlm.errors import NotDerivable
    from ledgerlm.synth.finindices.storecache import company_stores
    from ledgerlm.synth.indices.cli import load_store

    for store in (load_store(None, None), company_stores(None)[company]):
        with pytest.raises(NotDerivable, match="on different bases"):
            store.value(company, concept, period)


@pytest.mark.parametrize("company, concept, period, value", ONE_BASIS)
def test_figures_of_one_basis_still_combine(company, concept, period, value):
    from ledgerlm.synth.finindices.storecache import company_stores

    assert company_stores(None)[company].value(company, concept, period).value == value


def test_restatements_are_recorded_per_window():
    """facts.select_latest records the kept tag's values as first filed, oldest first (`@filed=value`)."""
    from ledgerlm.synth.finindices.storecache import company_stores
    from ledgerlm.synth.statements.periods import ReportKey
    from ledgerlm.synth.statements.store import _restatements

    cell = company_stores(None)["AAPL"].index.cells[("AAPL", "consolidated", "revenue", ReportKey(2008, 4))]
    assert _restatements(cell) == [("2009-10-27", 32_479e6), ("2010-01-25", 37_491e6)]


# Seed-6262 one-vintage audit (2026-12-03): averages of two balances, YoY and prior-year values reading one concept at two
# reports, one restated after the other was last filed and the other never re-presented (29 of its 30 mix cases refused;
# NVIDIA's FY2017Q1 OCF / net income YoY stays: its FY2016Q1 figures were re-filed after the restatement).
MIXED_PAIRS = [
    ("AAPL", "total_assets_yoy", "FY2015"),  # FY2015 re-presented by the FY2016 10-K (-134 M), FY2014 never
    ("AAPL", "payables_days", "FY2017"),  # FY2017 accounts payable 49,049 -> 44,242 M in the FY2018 10-K, FY2016 never
    ("NVDA", "payables_turnover", "FY2021"),  # FY2021 accounts payable 1,201 -> 1,149 M in the FY2022 10-K
    ("VZ", "working_capital_turnover", "FY2009"),  # FY2009 current assets re-presented by a 2010 10-Q, FY2008 from the 10-K
    ("AAPL", "free_cash_flow_yoy", "FY2016"),  # FY2016 OCF restated in FY2018 filings, FY2015 never
]


@pytest.mark.parametrize("company, index, period", MIXED_PAIRS)
def test_one_concept_at_two_reports_of_two_bases_is_refused(company, index, period):
    from ledgerlm.errors import NotDerivable
    from ledgerlm.synth.finindices.storecache import company_stores
    from ledgerlm.synth.indices.compute import compute

    with pytest.raises(NotDerivable, match="on different bases"):
        compute(company_stores(None)[company], company, index, period)


@pytest.mark.parametrize("company, index, period", [("AAPL", "total_assets_yoy", "FY2019"), ("GOOGL", "roa_avg", "FY2023"),
                                                    ("NVDA", "revenue_yoy", "FY2024")])
def test_figures_restated_together_or_never_still_compute(company, index, period):
    from ledgerlm.synth.finindices.storecache import company_stores
    from ledgerlm.synth.indices.compute import compute

    assert compute(company_stores(None)[company], company, index, period).value is not None


def test_a_filed_quarter_of_an_earlier_filing_or_another_tag_does_not_replace_the_derivation():
    """Review of 054563e: Apple's FY2017Q2 dividends 2,988 M were filed (2017-05-03) before both YTD figures were
    restated, and its Q3 under PaymentsOfDividendsCommonStock beside PaymentsOfDividends YTD figures: the quarter is the
    derivation from the two restated YTD figures (H1 6,134 M - Q1 3,130 M = 3,004 M), in both stores."""
    from ledgerlm.synth.finindices.storecache import company_stores
    from ledgerlm.synth.indices.cli import load_store

    for store in (load_store(None, None), company_stores(None)["AAPL"]):
        assert store.value("AAPL", "dividends_paid", "FY2017Q2").value == 3_004e6
        assert store.value("AAPL", "dividends_paid", "FY2017Q3").value == 3_365e6


def test_ttm_across_a_restatement_inside_the_prior_ytd_is_refused():
    """Review of e6fa91c: Apple's H1 FY2013 dividends (5,000 M, filed 2013-04-24) predate the restatement of its Q1
    (2,500 -> 2,486 M, 2013-07-24) that FY2013 (10,528 M) carries: TTM FY2014Q2 would mix the two bases."""
    from ledgerlm.errors import NotDerivable
    from ledgerlm.synth.finindices.storecache import company_stores

    with pytest.raises(NotDerivable, match="FY2013Q1 was restated"):
        company_stores(None)["AAPL"].value("AAPL", "dividends_paid", "FY2014Q2TTM")
