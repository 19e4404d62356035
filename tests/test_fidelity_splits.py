"""Issue #11 classes 1, 4, 6 and the FSDS scope rule, on the embedded real filings.

    nice -n 10 python -m pytest -q tests/test_fidelity_splits.py

Expected figures are the filers' own, as companyfacts records them (form / filing date in comments);
each test also reads that figure from the raw JSON, so a changed data file cannot silently pass.
"""
from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest

from ledgerlm.synth.indices.compute import compute
from ledgerlm.synth.statements import fsds, splits
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore

SEC = Path(__file__).resolve().parents[1] / "synth" / "data" / "sec"
FILES = {"NVDA": "CIK0001045810_NVDA.json.gz", "AAPL": "CIK0000320193_AAPL.json.gz",
         "GOOGL": "CIK0001652044_GOOGL.json.gz", "TSM": "CIK0001046179_TSM.json.gz"}


@lru_cache(maxsize=None)
def store(ticker: str) -> FactStore:
    return FactStore(load_facts([str(SEC / "companyfacts" / FILES[ticker])]))


@lru_cache(maxsize=None)
def raw(ticker: str) -> dict:
    return json.load(gzip.open(SEC / "companyfacts" / FILES[ticker]))


def filed_value(ticker: str, tag: str, start: str | None, end: str, accn_filed: str, unit: str = "USD/shares") -> float:
    """The value a given filing (by filing date) reported for `tag` over start..end, from the raw JSON."""
    facts = raw(ticker)["facts"]
    taxonomy = "us-gaap" if tag in facts.get("us-gaap", {}) else "ifrs-full"
    hits = {f["val"] for f in facts[taxonomy][tag]["units"][unit]
            if f.get("start") == start and f["end"] == end and f["filed"] == accn_filed}
    assert len(hits) == 1, (tag, start, end, accn_filed, hits)
    return float(hits.pop())


@pytest.mark.parametrize("ticker,index,period,now,before", [
    # NVIDIA 10-Q filed 2024-05-29 (before the June 2024 10-for-1 split): Q1 FY2025 5.98, Q1 FY2024 0.82
    ("NVDA", "eps_diluted_yoy", "FY2025Q1", ("2024-01-29", "2024-04-28", "2024-05-29"), ("2023-01-30", "2023-04-30", "2024-05-29")),
    # NVIDIA Q2 FY2022 0.94 (10-Q filed 2021-08-20, after the 4-for-1 split of July 2021) vs Q2 FY2021 0.99 (10-Q filed 2020-08-19)
    ("NVDA", "eps_diluted_yoy", "FY2022Q2", ("2021-05-03", "2021-08-01", "2021-08-20"), ("2020-04-27", "2020-07-26", "2020-08-19")),
    ("NVDA", "eps_diluted_yoy", "FY2022Q3", ("2021-08-02", "2021-10-31", "2021-11-22"), ("2020-07-27", "2020-10-25", "2020-11-18")),
    # Apple Q4 FY2020 0.73 (10-K filed 2020-10-30, after the August 2020 4-for-1 split) vs Q4 FY2019 3.03 (10-K filed 2019-10-31)
    ("AAPL", "eps_diluted_yoy", "FY2020Q4", ("2020-06-28", "2020-09-26", "2020-10-30"), ("2019-06-30", "2019-09-28", "2019-10-31")),
    # Alphabet Q3 2022 1.06 (10-Q filed 2022-10-26, after the July 2022 20-for-1 split) vs Q3 2021 27.99 (10-Q filed 2021-10-27)
    ("GOOGL", "eps_diluted_yoy", "FY2022Q3", ("2022-07-01", "2022-09-30", "2022-10-26"), ("2021-07-01", "2021-09-30", "2021-10-27")),
])
def test_eps_growth_across_a_split_is_on_one_basis(ticker, index, period, now, before):
    s = store(ticker)
    events = [e for e in splits_of(ticker)]
    cur, prev = filed_value(ticker, "EarningsPerShareDiluted", *now), filed_value(ticker, "EarningsPerShareDiluted", *before)
    # the split factor between the two filings, from the filer's own split-ratio facts
    ratio_facts = {float(f["val"]) for f in raw(ticker)["facts"]["us-gaap"]["StockholdersEquityNoteStockSplitConversionRatio1"]["units"]["pure"]}
    k = 1.0
    for e in events:
        if before[2] < e.first_new <= now[2]:
            assert e.factor in ratio_facts
            k *= e.factor
    expected = cur / (prev / k) - 1
    got = compute(s, ticker, index, period)
    assert got.value == pytest.approx(expected, abs=1e-9)
    assert any("share basis" in step for t in got.trace if t["kind"] == "fact" for step in t["steps"])


@lru_cache(maxsize=None)
def splits_of(ticker: str) -> tuple:
    df = load_facts([str(SEC / "companyfacts" / FILES[ticker])], latest_only=False)
    return tuple(splits.detect_splits(df, splits._kinds(df)))


def test_detected_splits_are_the_filers_split_ratios():
    seen = {t: [(e.factor, e.first_new[:4]) for e in splits_of(t)] for t in ("NVDA", "AAPL", "GOOGL")}  # in date order
    assert seen == {"NVDA": [(4.0, "2021"), (10.0, "2024")], "AAPL": [(7.0, "2014"), (4.0, "2020")], "GOOGL": [(20.0, "2022")]}
    for t, events in seen.items():
        ratios = {float(f["val"]) for f in raw(t)["facts"]["us-gaap"]["StockholdersEquityNoteStockSplitConversionRatio1"]["units"]["pure"]}
        assert {k for k, _ in events} <= ratios


@pytest.mark.parametrize("ticker,years_needed", [("NVDA", 15), ("AAPL", 15), ("GOOGL", 4)])  # GOOGL tags totals from FY2022
def test_share_counts_never_jump_by_a_split_factor(ticker, years_needed):
    """On one basis, annual diluted share counts move by buybacks and issuance, never by 2x-20x."""
    s = store(ticker)
    years = [r for r in s.reports(ticker) if r.is_annual]
    counts = []
    for r in years:
        try:
            counts.append((r.label, s.value(ticker, "shares_diluted", r.label).value))
        except Exception:
            continue
    assert len(counts) >= years_needed
    for (a, x), (b, y) in zip(counts, counts[1:]):
        assert 0.7 < y / x < 1.4, (a, x, b, y)


def test_nvda_fy2009_scale_slip_corrected_and_eps_agrees():
    s = store("NVDA")
    # NVIDIA's 10-K filed 2010-03-18 tagged FY2009 diluted shares as 548,126 (thousands); EPS -0.05
    assert filed_value("NVDA", "WeightedAverageNumberOfDilutedSharesOutstanding", "2008-01-28", "2009-01-25", "2010-03-18", "shares") == 548126
    eps = filed_value("NVDA", "EarningsPerShareDiluted", "2008-01-28", "2009-01-25", "2010-03-18")
    shares = s.reported("NVDA", "shares_diluted", "FY2009")
    assert "scale slip x 1000" in shares.note
    computed = compute(s, "NVDA", "eps_diluted_computed", "FY2009").value
    k = 40  # 4-for-1 (2021) x 10-for-1 (2024): FY2009 on the latest basis
    assert abs(computed * k - eps) <= 0.005  # -0.0548 -> -0.05 as reported (was -54.81)
    assert s.value("NVDA", "eps_diluted", "FY2009").value * k == pytest.approx(eps)


def test_tsm_later_retagged_comparative_does_not_replace_the_line():
    s = store("TSM")
    # TSMC's 2019 20-F (filed 2020-04-15): finance income 16,606.7 M TWD; its 2021 and 2022 20-Fs tag 417.3 M
    # (= the 2019 dividend income, RevenueFromDividends) with the same tag
    first = filed_value("TSM", "FinanceIncome", "2019-01-01", "2019-12-31", "2020-04-15", "TWD")
    later = filed_value("TSM", "FinanceIncome", "2019-01-01", "2019-12-31", "2022-04-14", "TWD")
    dividends = filed_value("TSM", "RevenueFromDividends", "2019-01-01", "2019-12-31", "2020-04-15", "TWD")
    assert later == dividends and first == 16_606_700_000
    ref = s.reported("TSM", "interest_income", "FY2019")
    assert ref.value == first and "different line" in ref.note
    assert s.reported("TSM", "interest_income", "FY2018").value == filed_value("TSM", "FinanceIncome", "2018-01-01", "2018-12-31", "2019-04-17", "TWD")
    # a later comparative consistent with the original still wins (same line): FY2020 in the 2023 20-F
    assert s.reported("TSM", "interest_income", "FY2020").value == filed_value("TSM", "FinanceIncome", "2020-01-01", "2020-12-31", "2023-04-20", "TWD")


def test_genuine_restatement_still_latest_filed():
    """Apple restated FY2009 for the 2009 revenue-recognition change (totals moved): the restated value wins."""
    s = store("AAPL")
    restated = filed_value("AAPL", "NetIncomeLoss", "2008-09-28", "2009-09-26", "2011-10-26", "USD")
    original = filed_value("AAPL", "NetIncomeLoss", "2008-09-28", "2009-09-26", "2009-10-27", "USD")
    assert restated != original
    assert s.reported("AAPL", "net_income", "FY2009").value == restated


def test_fsds_multi_registrant_parent_rows_are_consolidated():
    folder = SEC / "fsds" / "2010q2"
    df = fsds.load_fsds(folder)
    duk = df[(df["company"] == "DUK") & (df["concept"] == "total_assets") & (df["end"] == "2009-12-31")]
    assert set(duk["scope"]) == {"consolidated"} and set(duk["value"]) == {57_040_000_000.0}
    num = pd.read_csv(folder / "num.txt.gz", sep="\t", dtype=str, keep_default_na=False)
    rows = num[(num["adsh"] == duk["source"].iloc[0])]
    assert (rows["segments"] == "").sum() == 0  # the filing has no undimensioned row: every registrant under LegalEntity
    # no embedded filing has parent-only (Schedule I) rows: every LegalEntity=ParentCompany row is in such a filing
    all_facts = pd.concat([fsds.load_fsds(SEC / "fsds" / q) for q in ("2009q3", "2010q1", "2010q2")])
    assert set(all_facts["scope"]) == {"consolidated"}


def test_revenue_per_share_and_ttm_across_the_2020_apple_split():
    """Per-share indices read shares on the latest basis: FY2019 shares were filed as 4,648,913,000 (10-K
    filed 2019-10-31) before the 4-for-1 split of August 2020."""
    s = store("AAPL")
    revenue = filed_value("AAPL", "RevenueFromContractWithCustomerExcludingAssessedTax", "2018-09-30", "2019-09-28", "2019-10-31", "USD")
    shares = filed_value("AAPL", "WeightedAverageNumberOfDilutedSharesOutstanding", "2018-09-30", "2019-09-28", "2019-10-31", "shares")
    assert compute(s, "AAPL", "revenue_per_share", "FY2019").value == pytest.approx(revenue / (shares * 4), rel=1e-6)
    # TTM ending Q3 FY2020 mixes a pre-split 10-Q (9M FY2020, filed 2020-07-31) with the post-split 10-K comparative
    nine = filed_value("AAPL", "WeightedAverageNumberOfDilutedSharesOutstanding", "2019-09-29", "2020-06-27", "2020-07-31", "shares")
    nine_prior = filed_value("AAPL", "WeightedAverageNumberOfDilutedSharesOutstanding", "2018-09-30", "2019-06-29", "2019-07-31", "shares")
    ttm_shares = (nine * 4 * 273 + shares * 4 * 364 - nine_prior * 4 * 273) / 364
    got = s.value("AAPL", "shares_diluted", "FY2020Q3TTM").value
    assert got == pytest.approx(ttm_shares, rel=1e-6)


def _two_currency_rows(company: str, usd_first: bool) -> list[dict]:
    """Ten annual 20-F windows of a filer that reports net income and EPS in its own currency (CNY) and in USD, with
    its weighted share count filed in thousands (500,000 for 500 M shares): CNY 1e9 / 5e8 = 2.00, USD 1.46e8 / 5e8 =
    0.29."""
    def row(concept, tag, value, unit, y):
        return dict(company=company, company_name=company, scope="consolidated", statement="income", concept=concept,
                    label=tag, value=float(value), unit=unit, start=f"{y}-01-01", end=f"{y}-12-31", fiscal_year=y,
                    fiscal_period="FY", form="20-F", filed=f"{y + 1}-03-01", source=f"f{y}", tag=f"us-gaap:{tag}")
    rows = []
    for y in range(2000, 2010):
        ni = [row("net_income_parent", "NetIncomeLoss", 1e9, "CNY", y), row("net_income_parent", "NetIncomeLoss", 1.46e8, "USD", y)]
        eps = [row("eps_basic", "EarningsPerShareBasic", 2.0, "CNY/share", y), row("eps_basic", "EarningsPerShareBasic", 0.29, "USD/share", y)]
        rows += (ni[::-1] + eps[::-1] if usd_first else ni + eps)
        rows.append(row("shares_basic", "WeightedAverageNumberOfSharesOutstandingBasic", 5e5, "shares", y))
    return rows


@pytest.mark.parametrize("usd_first", [False, True])
def test_scale_slip_proof_compares_eps_with_net_income_in_its_own_currency(usd_first):
    """Review: the EPS check of a share count took whichever net income an unstable sort put first, so a CNY EPS was
    compared with USD net income (1.46e8 / 5e5 = 292 against 2.00: no factor proves it) depending on row order and on
    the other companies selected with it. Now EPS and net income of one currency: every window's count is restored
    to 500 M whatever the order or the neighbours."""
    import pandas as pd

    from ledgerlm.synth.statements.facts import conform, select_latest

    frame = conform(pd.DataFrame(_two_currency_rows("AAA", usd_first)))
    others = conform(pd.DataFrame([dict(r, company="BBB", company_name="BBB", value=r["value"] * 3)
                                   for r in _two_currency_rows("BBB", not usd_first)]))
    for raw in (frame, pd.concat([others, frame], ignore_index=True), pd.concat([frame, others], ignore_index=True)):
        selected = select_latest(raw)
        counts = selected[(selected["company"] == "AAA") & (selected["concept"] == "shares_basic")]
        assert len(counts) == 10 and set(counts["value"]) == {5e8}, counts[["end", "value", "adjustment"]]
        assert all("scale slip x 1000" in note for note in counts["adjustment"])
