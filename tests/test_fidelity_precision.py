"""A later filing's coarser repeat of a figure never replaces the filer's finer original, and a standalone quarter's
weighted shares derived from year-to-date averages must meet the filed three-month count within rounding.

    python -m pytest -q tests/test_fidelity_precision.py

Found by the independent recomputation (tests/independent/recompute.py) over seeds other than the default: NVIDIA's
FY2016 filings repeat FY2015 figures rounded to millions (nine-month diluted shares 566,000,000 for the 565,653,000
first filed), and a quarter derived from such rounded year-to-date figures misses the filer's own three-month figure
(FY2014Q4 revenue 1,144,056 k vs 1,144,218 k filed; FY2015Q3 diluted shares 556 M vs 558.2 M filed, so a dilution
ratio of 1.016 instead of 1.019).
"""
from __future__ import annotations

from functools import lru_cache

import pandas as pd
import pytest

from ledgerlm.errors import LedgerError
from ledgerlm.synth.indices.compute import compute
from ledgerlm.synth.statements.facts import keep_precise
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore

NVDA_FY2015_10Q3 = "0001045810-14-000188"  # the FY2015 Q3 10-Q (filed 2014-11-19): figures in thousands


@lru_cache(maxsize=1)
def stores() -> tuple[FactStore, FactStore]:
    """(a store that reads filed three-month columns, a synth store: year-to-date reports only)."""
    facts = load_facts()
    return FactStore(facts), FactStore(facts, quarter_columns=False)


def test_the_finer_original_wins_over_a_later_rounded_repeat():
    full, _ = stores()
    nine_months = full.value("NVDA", "shares_diluted", "FY2015Q3YTD")
    assert nine_months.inputs[0].source == NVDA_FY2015_10Q3
    assert nine_months.value == 565_653_000 * 40  # as filed, on the latest split basis (4-for-1, 10-for-1)
    # quarters derived from the finer figures equal the filer's own three-month figures
    assert full.value("NVDA", "revenue", "FY2014Q4").value == 1_144_218_000  # the FY2015 10-K's Q4 revenue
    assert full.value("NVDA", "net_income", "FY2015Q2").value == 127_976_000  # the FY2015 Q2 10-Q's three months


def _rows(values: list[tuple[str, str, float]], start: str = "2014-01-27") -> pd.DataFrame:
    return pd.DataFrame([{"company": "X", "scope": "consolidated", "concept": "revenue", "tag": "Revenues", "start": start,
                          "end": "2014-10-26", "unit": "USD", "filed": filed, "source": src, "value": value}
                         for filed, src, value in values])


def test_a_restatement_still_wins_and_balance_sheets_are_left_alone():
    # the later figure is the earlier one rounded to millions: dropped
    kept = keep_precise(_rows([("2014-11-19", "a", 13_702_000.0), ("2015-11-18", "b", 14_000_000.0)]))
    assert list(kept["source"]) == ["a"]
    # a sum of rounded quarters, less than one million away: still a coarser repeat
    kept = keep_precise(_rows([("2014-08-20", "a", 264_492_000.0), ("2015-08-19", "b", 265_000_000.0)]))
    assert list(kept["source"]) == ["a"]
    # more than one unit of its rounding away: a restatement, both stay (the latest filed is then selected)
    kept = keep_precise(_rows([("2014-11-19", "a", 13_702_000.0), ("2015-11-18", "b", 15_000_000.0)]))
    assert list(kept["source"]) == ["a", "b"]
    # as fine as the original: both stay
    kept = keep_precise(_rows([("2014-11-19", "a", 13_702_000.0), ("2015-11-18", "b", 13_701_000.0)]))
    assert list(kept["source"]) == ["a", "b"]
    # balance-sheet lines (instants) are read as each filing presents them
    kept = keep_precise(_rows([("2015-03-12", "a", 1_384_342_000.0), ("2016-03-17", "b", 1_384_000_000.0)], start=""))
    assert list(kept["source"]) == ["a", "b"]


def test_derived_quarter_shares_must_meet_the_filed_three_month_count():
    _, synth = stores()
    # basic shares are time-additive: the derivation meets the filed 547,789,000 (x 40) within the thousands' rounding
    basic = synth.value("NVDA", "shares_basic", "FY2015Q3")
    assert basic.value == pytest.approx(547_789_000 * 40, abs=3_000 * 40)
    # diluted shares (treasury-stock method) are not: 555.8 M derived vs 558.2 M filed, so the quarter is refused and no
    # item asks a dilution ratio of 1.015 where the filer reports 1.019
    with pytest.raises(LedgerError, match="misses the filed three-month figure"):
        synth.value("NVDA", "shares_diluted", "FY2015Q3")
    with pytest.raises(LedgerError):
        compute(synth, "NVDA", "dilution_ratio", "FY2015Q3")
    # a store that shows the filed three-month column answers it from there
    full, _ = stores()
    ratio = compute(full, "NVDA", "dilution_ratio", "FY2015Q3").value
    assert ratio == pytest.approx(558_201_000 / 547_789_000)


def test_a_prompt_view_allows_the_same_rounding_as_the_store():
    """`ledgerlm fidelity` reads a row's figures back out of its prompt (`with_reported_values`). NVIDIA's FY2022 H1 and
    Q1 diluted shares were filed in millions before a 10-for-1 split (2,529 M x 10, 2,528 M x 10): the store allows that
    rounding x 10 when it holds the derived Q2 (25,300 M) against the filed three-month 25,320 M, but the prompt view
    lost the note and allowed only the shown figure's, refusing two rows of a seed-2718 run as not computable."""
    _, synth = stores()
    derived = synth.value("NVDA", "shares_diluted", "FY2022Q2")
    shown = {("consolidated", f.concept, f.report): f.value for f in derived.inputs}
    assert {f.report for f in derived.inputs} == {"FY2022H1", "FY2022Q1"} and all("x 10 =" in f.note for f in derived.inputs)
    view = synth.with_reported_values("NVDA", shown)
    assert view.value("NVDA", "shares_diluted", "FY2022Q2").value == derived.value == 25_300_000_000
    off = {k: v + 1_000_000 for k, v in shown.items()}  # a figure the prompt does not show exactly: its own rounding only
    with pytest.raises(LedgerError, match="misses the filed three-month figure"):
        synth.with_reported_values("NVDA", off).value("NVDA", "shares_diluted", "FY2022Q2")


def test_depreciation_is_the_cash_flow_line_not_a_notes_figure():
    """Apple's FY2017 10-K tags 9,200 M of PP&E depreciation for FY2015 as DepreciationDepletionAndAmortization (a note)
    beside the cash-flow line DepreciationAmortizationAndAccretionNet 11,257 M (as in the FY2015 10-K); the note figure
    gave FY2015 EBITDA YoY 33.05 % instead of 36.46 % (a helper audit of a seed-31 run, 4 item pairs)."""
    full, _ = stores()
    assert full.value("AAPL", "depreciation_amortization", "FY2015").value == 11_257_000_000
    assert full.value("AAPL", "depreciation_amortization", "FY2014").value == 7_946_000_000
    assert full.value("AAPL", "depreciation_amortization", "FY2018").value == 10_903_000_000  # later 10-Ks: the other tag


def test_capex_of_a_utility_adds_its_construction_expenditures():
    """Con Edison's 2009 10-K (FSDS 0001193125-10-036116) shows two capex lines on its cash-flow statement: non-utility
    PaymentsToAcquirePropertyPlantAndEquipment 9 M and utility construction expenditures PaymentsForConstructionInProcess
    2,184 M; capex was 9 M and free cash flow overstated by 2.2 B (9 item pairs of a seed-31 run; helper audit)."""
    full, _ = stores()
    capex = full.value("ED", "capex", "FY2009")
    assert capex.value == 9_000_000 + 2_184_000_000
    assert "PaymentsForConstructionInProcess" in capex.inputs[0].note
    assert full.value("ED", "capex", "FY2007").value == 6_000_000 + 1_928_000_000
    # a filer with one capex line is unchanged
    assert full.value("AAPL", "capex", "FY2023").value == 10_959_000_000


def test_a_payment_tagged_negative_is_an_outflow():
    """Kellogg's 2009 10-Q/A tags PaymentsToAcquirePropertyPlantAndEquipment -179 M for H1 2008 (its 10-K: +472 M for
    FY2007), Honeywell's 2009 filings likewise: subtracting a negative capex added it to free cash flow (HON FY2008 FCF
    margin 12.79 % instead of 7.95 %; 7 item pairs of a seed-57 run, helper audit)."""
    full, _ = stores()
    capex = full.value("K", "capex", "FY2008H1")
    assert capex.value == 179_000_000 and "Payments elements are positive" in capex.inputs[0].note
    assert full.value("HON", "capex", "FY2008").value == 884_000_000
    assert compute(full, "HON", "fcf_margin_ttm", "FY2008").value == pytest.approx((3_791 - 884) / 36_556)
