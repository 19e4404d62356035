"""A report cell holds its figure in the company's reporting currency, whatever the order of the input rows.

    python -m pytest -q tests/test_fidelity_currency.py

TSMC (TSM) tags most figures twice, in TWD and as a USD convenience translation in the same filing. Cells were keyed
without a unit and the first row reaching one won, so the input's row order chose the currency: the same facts with
their USD rows first gave FY2024 revenue growth 88,268 M USD / 2,161,735.8 M TWD - 1 = -95.9 % (review 2026-12-04).
Expected figures are read from the filer's companyfacts JSON here, not from the code under test.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ledgerlm.synth.indices.compute import compute
from ledgerlm.synth.statements.indexing import reporting_currency
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore

TSM = Path(__file__).resolve().parents[1] / "synth" / "data" / "sec" / "companyfacts" / "CIK0001046179_TSM.json.gz"


def _annual(tag: str, unit: str, end: str) -> float:
    """The filer's own annual figure (the last 20-F filing of it)."""
    doc = json.loads(gzip.decompress(TSM.read_bytes()))
    rows = [f for taxonomy in doc["facts"].values() for t, body in taxonomy.items() if t == tag
            for f in body["units"].get(unit, ()) if f["end"] == end and f.get("fp") == "FY" and f.get("form", "").startswith("20-F")]
    return float(max(rows, key=lambda f: f["filed"])["val"])


@pytest.fixture(scope="module")
def stores():
    raw = load_facts([str(TSM)], latest_only=False)
    assert {"TWD", "USD"} <= set(raw["unit"])  # the data holds both currencies (else the test shows nothing)
    usd_first = raw.sort_values("unit", ascending=False, kind="stable").reset_index(drop=True)
    return FactStore(raw), FactStore(usd_first)


def test_cells_are_in_the_reporting_currency_whatever_the_row_order(stores):
    loaded, usd_first = stores
    assert reporting_currency(loaded.facts["unit"]) == "TWD"
    cells = {k: (c.value, c.unit) for k, c in loaded.index.cells.items()}
    assert cells == {k: (c.value, c.unit) for k, c in usd_first.index.cells.items()}
    assert not any(unit.startswith("USD") for _, unit in cells.values())


@pytest.mark.parametrize("which", [0, 1])
def test_tsm_growth_and_margin_read_twd_figures(stores, which):
    store = stores[which]
    revenue = {y: _annual("Revenue", "TWD", f"{y}-12-31") for y in (2023, 2024)}
    growth = compute(store, "TSM", "revenue_yoy", "FY2024")
    assert growth.value == pytest.approx(revenue[2024] / revenue[2023] - 1, rel=1e-12)
    assert {f.unit for f in growth.facts} == {"TWD"}
    eps = compute(store, "TSM", "eps_diluted_yoy", "FY2024")
    assert {f.unit for f in eps.facts} == {"TWD/share"}
    assert eps.value == pytest.approx(_annual("DilutedEarningsLossPerShare", "TWD/shares", "2024-12-31")
                                      / _annual("DilutedEarningsLossPerShare", "TWD/shares", "2023-12-31") - 1, rel=1e-12)


def test_reporting_currency_is_the_most_used_one():
    assert reporting_currency(["EUR", "EUR/share", "USD", "shares", "pure"]) == "EUR"
    assert reporting_currency(["USD", "EUR"]) == "EUR"  # a tie: the first by code
    assert reporting_currency(["shares", "pure", "Stock_options"]) is None
    assert reporting_currency(["usd", "iso4217:EUR", "iso4217:eur/share", "USD/share"]) == "EUR"  # units as a CSV may hold them
    assert reporting_currency([float("nan"), None, "nan", "NaN/share", "USD"]) == "USD"  # a missing unit is no currency


def test_an_index_over_figures_of_two_currencies_is_refused():
    """Where a filing gives a figure in another currency only, the cell holds it; an index that would combine it with
    reporting-currency figures is refused (no exchange rate in the reports), never answered."""
    import pandas as pd

    from ledgerlm.synth.indices.compute import IndexUndefined
    from ledgerlm.synth.statements.facts import conform

    def row(concept, tag, value, unit, y):
        return dict(company="FPI", company_name="FPI", scope="consolidated", statement="income", concept=concept,
                    label=tag, value=float(value), unit=unit, start=f"{y}-01-01", end=f"{y}-12-31", fiscal_year=y,
                    fiscal_period="FY", form="20-F", filed=f"{y + 1}-03-01", source=f"f{y}", tag=f"ifrs-full:{tag}")

    rows = [row("revenue", "Revenue", 1000 + y, "EUR", y) for y in (2020, 2021, 2022)]
    rows += [row("net_income", "ProfitLoss", 100, "EUR", y) for y in (2020, 2021)] + [row("net_income", "ProfitLoss", 9, "USD", 2022)]
    store = FactStore(conform(pd.DataFrame(rows)))
    assert compute(store, "FPI", "net_margin", "FY2021").value == pytest.approx(100 / 3021)
    assert compute(store, "FPI", "revenue_yoy", "FY2022").value == pytest.approx(3022 / 3021 - 1)
    with pytest.raises(IndexUndefined, match="EUR and USD"):
        compute(store, "FPI", "net_margin", "FY2022")


def test_a_currency_switch_keeps_the_latest_filings_restated_figures():
    """Review: a filer that moved from USD to EUR (FY2022 20-F, comparatives restated in EUR) has most of its rows in
    USD; the reporting currency decides only between rows of one filing, so FY2021 revenue is the latest filing's EUR
    comparative and FY2022 growth is EUR over EUR (an older USD figure beat it while the currency came first)."""
    import pandas as pd

    from ledgerlm.synth.statements.facts import conform
    from ledgerlm.synth.statements.periods import ReportKey

    def row(concept, tag, value, unit, y, filed):
        return dict(company="SW", company_name="SW", scope="consolidated", statement="income", concept=concept,
                    label=tag, value=float(value), unit=unit, start=f"{y}-01-01", end=f"{y}-12-31", fiscal_year=filed - 1,
                    fiscal_period="FY", form="20-F", filed=f"{filed}-03-01", source=f"f{filed}", tag=f"ifrs-full:{tag}")

    rows = []
    for fy in range(2016, 2024):  # each 20-F shows its year and the one before
        unit, k = ("USD", 1.0) if fy <= 2021 else ("EUR", 0.9)
        for y in (fy, fy - 1):
            rows.append(row("revenue", "Revenue", round(1000 * 1.1 ** (y - 2015) * k, 3), unit, y, fy + 1))
            rows.append(row("net_income", "ProfitLoss", round(100 * 1.1 ** (y - 2015) * k, 3), unit, y, fy + 1))
    frame = conform(pd.DataFrame(rows))
    assert reporting_currency(frame["unit"]) == "USD"  # by row count: the old currency
    store = FactStore(frame)
    cell = store.index.cells[("SW", "consolidated", "revenue", ReportKey(2021, 4))]
    assert (cell.unit, cell.filed) == ("EUR", "2023-03-01") and cell.value == pytest.approx(round(1000 * 1.1 ** 6 * 0.9, 3))
    growth = compute(store, "SW", "revenue_yoy", "FY2022")
    assert {f.unit for f in growth.facts} == {"EUR"} and growth.value == pytest.approx(1.1 - 1, rel=1e-5)


@pytest.mark.parametrize("fmt", ["markdown", "html", "latex", "text", "tuples", "json"])
def test_a_line_in_another_currency_says_so_under_the_unit_header(fmt):
    """A statement's unit header names one currency; a line whose figure is in another (a cell the latest filing gives
    in that currency only) carries it after its label, in every format and language; per-share and share lines, and
    the header's own currency however it is spelled, do not."""
    from ledgerlm.synth.statements.render import render_statement

    stmt = {"company": "X", "period": "FY2022", "statement": "income", "scope": "consolidated", "unit": "USD", "items": [
        {"concept": "revenue", "label": "Revenue", "value": 3e9, "unit": "EUR"},
        {"concept": "net_income", "label": "Net income", "value": 1e8, "unit": "usd"},
        {"concept": "eps_basic", "label": "EPS", "value": 1.2, "unit": "USD/share"},
        {"concept": "shares_basic", "label": "Shares", "value": 1e8, "unit": "shares"}]}
    en = render_statement(stmt, fmt, scale=1e6 if fmt != "json" else 1)
    zh = render_statement(stmt, fmt, scale=1e6 if fmt != "json" else 1, language="zh")
    assert "Revenue (EUR)" in en and "（EUR）" in zh
    assert en.count("(EUR)") == 1 and "USD)" not in en.replace("of USD,", "").replace("(in USD)", "")
