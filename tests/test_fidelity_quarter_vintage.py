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
