"""Balance sheets stay one presentation: lines of another filing that the arithmetic proves counted twice are withheld,
a filer's non-current line under a current tag and a section subtotal under a total's tag are not read as those lines.

    python -m pytest tests/test_fidelity_sheets.py -q

Seed-6061 helper audit (its own parser over every rendered statement): Apple's FY2017 sheet showed current-liability
lines of 126,558 M under a total of 100,814 M, Alphabet's FY2022 current assets were 2,670 M over their total, NVIDIA's
FY2012/FY2018 other current assets were its non-current "Other assets", and Con Edison's "total non-current
liabilities" left out 9.2 B of long-term debt. Expected figures come from the raw companyfacts JSON and the filers'
face statements (Apple's FY2018 10-K comparative column), not from ledgerlm.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ledgerlm.errors import NotDerivable

ROOT = Path(__file__).resolve().parents[1] / "synth" / "data" / "sec" / "companyfacts"
CURRENT_LIABILITY_LINES = ("short_term_debt", "accounts_payable", "accrued_liabilities", "deferred_revenue",
                           "other_current_liabilities", "current_portion_long_term_debt")
CURRENT_ASSET_LINES = ("cash", "short_term_investments", "accounts_receivable", "inventory", "other_current_assets")


def raw(company: str, tag: str, end: str, accn: str | None = None) -> set[float]:
    path = next(ROOT.glob(f"*_{company}.json.gz"))
    rows = json.loads(gzip.open(path).read())["facts"]["us-gaap"][tag]["units"]["USD"]
    return {float(r["val"]) for r in rows if r["end"] == end and (accn is None or r["accn"] == accn)}


@pytest.fixture(scope="module")
def stores():
    from ledgerlm.synth.finindices.storecache import company_stores

    return company_stores(None)


def shown(store, company: str, period: str) -> dict[str, float]:
    """The balance sheet a prompt shows for the report (the store's report view)."""
    return {i["concept"]: i["value"] for i in store.report_statement(company, period, "balance")["items"]}


def test_apple_fy2017_sheet_is_its_fy2018_10k_presentation(stores):
    sheet = shown(stores["AAPL"], "AAPL", "FY2017")
    # Apple's FY2018 10-K, 2017-09-30 column: commercial paper 11,977 + accounts payable 44,242 + deferred revenue 7,548
    # + other current liabilities 30,551 + current term debt 6,496 = total current liabilities 100,814 (M)
    assert raw("AAPL", "LiabilitiesCurrent", "2017-09-30", "0000320193-18-000145") == {100_814e6}
    assert sum(sheet.get(k, 0) for k in CURRENT_LIABILITY_LINES) == sheet["current_liabilities"] == 100_814e6
    assert "accrued_liabilities" not in sheet  # 25,744 M: the FY2017 10-K's line, folded into other current liabilities
    noncurrent = sum(sheet.get(k, 0) for k in ("long_term_investments", "ppe_net", "intangible_assets", "goodwill",
                                               "other_noncurrent_assets"))
    assert noncurrent == sheet["noncurrent_assets"] == 246_674e6
    assert raw("AAPL", "Goodwill", "2017-09-30") == {5_717e6}  # a fact of the earlier presentation, in other assets here


def test_a_withheld_line_is_unknown_not_zero(stores):
    from ledgerlm.synth.indices.compute import compute

    store = stores["AAPL"]
    with pytest.raises(NotDerivable) as err:
        store.value("AAPL", "goodwill", "FY2017")
    assert err.value.missing == ["FY2017"] and "withheld" in str(err.value)
    # tangible assets = total assets - goodwill - intangibles: not total assets - 0 - 0
    with pytest.raises(NotDerivable):
        compute(store, "AAPL", "tangible_assets", "FY2017")
    assert compute(store, "AAPL", "tangible_assets", "FY2016").value > 0  # a sheet of one presentation still answers


def test_alphabet_fy2022_current_assets_add_up(stores):
    sheet = shown(stores["GOOGL"], "GOOGL", "FY2022")
    assert "inventory" not in sheet  # 2,670 M in the FY2022 10-K; the FY2023 10-K folds it into other current assets
    assert sum(sheet.get(k, 0) for k in CURRENT_ASSET_LINES) <= sheet["current_assets"] * 1.001


@pytest.mark.parametrize(("period", "end"), [("FY2018", "2018-01-28"), ("FY2013H1", "2012-07-29"), ("FY2012", "2012-01-29")])
def test_nvidia_other_current_assets_are_not_its_noncurrent_other_assets(stores, period, end):
    # NVIDIA's 10-Qs tag its non-current "Other assets" OtherAssetsCurrent beside "Prepaid expenses and other current
    # assets" (PrepaidExpenseAndOtherAssetsCurrent), the face line
    prepaid = raw("NVDA", "PrepaidExpenseAndOtherAssetsCurrent", end)
    assert len(prepaid) == 1 and prepaid != raw("NVDA", "OtherAssetsCurrent", end)
    sheet = shown(stores["NVDA"], "NVDA", period)
    assert sheet["other_current_assets"] == prepaid.pop()
    assert sum(sheet.get(k, 0) for k in CURRENT_ASSET_LINES) <= sheet["current_assets"] * 1.001


def test_con_edison_section_subtotal_is_not_total_noncurrent_liabilities(stores):
    from ledgerlm.synth.indices.compute import compute

    store = stores["ED"]
    sheet = shown(store, "ED", "FY2009")
    assert "noncurrent_liabilities" not in sheet  # LiabilitiesNoncurrent 4,118 M beside long-term debt 9,854 M
    assert sheet["long_term_debt"] > 9e9 and sheet["current_liabilities"] + sheet["total_equity"] + 9e9 < sheet["total_assets"]
    with pytest.raises(NotDerivable):
        compute(store, "ED", "long_term_capital_debt_ratio", "FY2009")


def test_what_the_embedded_data_withholds(stores):
    """Measured on the embedded filings: four balance sheets, each with a later filing that reclassified."""
    got = {(k[0], k[3].label) for c in ("AAPL", "GOOGL", "NVDA", "TSM", "SNOW") for k in stores[c].index.withheld}
    assert got == {("AAPL", "FY2017"), ("AAPL", "FY2018"), ("GOOGL", "FY2022"), ("NVDA", "FY2018")}
