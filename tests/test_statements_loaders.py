"""Loaders -> canonical facts on the embedded SEC data: companyfacts, bulk zip, FSDS, XBRL, CSV/Parquet."""
from __future__ import annotations

import gzip
import json
import shutil
import time
import zipfile

import pandas as pd
import pytest

from ledgerlm.synth.statements import canonical_io, companyfacts, facts, fsds, sources, taxonomy, xbrl
from ledgerlm.synth.statements.facts import FACT_COLUMNS, select_latest

SEC = sources.DEFAULT_DATA_DIR
AAPL_CF = SEC / "companyfacts" / "CIK0000320193_AAPL.json.gz"
DESIGN_KEYS = """revenue, cost_of_revenue, gross_profit, operating_expenses, selling_expense, admin_expense,
rd_expense, financial_expense, operating_income, pretax_income, income_tax, net_income,
net_income_parent, eps_basic, eps_diluted, shares_diluted, total_assets, current_assets, cash,
inventory, accounts_receivable, total_liabilities, current_liabilities, short_term_debt,
long_term_debt, notes_payable, lease_liabilities, total_equity, equity_parent, minority_interest,
operating_cash_flow, investing_cash_flow, financing_cash_flow, capex, depreciation_amortization"""


def _assert_contract(df: pd.DataFrame) -> None:
    # loaders yield exactly the contract columns; select_latest (load_facts) appends its `adjustment` notes and the
    # other tags' values (`alternates`)
    assert list(df.columns) in (FACT_COLUMNS, FACT_COLUMNS + list(facts.EXTRA_COLUMNS))
    assert df["value"].dtype == "float64" and str(df["fiscal_year"].dtype) == "Int64"
    assert df["scope"].isin(["consolidated", "parent"]).all()
    assert df["end"].str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    assert ((df["start"] == "") | df["start"].str.fullmatch(r"\d{4}-\d{2}-\d{2}")).all()
    assert (df["start"] <= df["end"]).all()
    kinds = df["concept"].map(lambda c: taxonomy.concept_info(c).kind)
    statements = df["concept"].map(lambda c: taxonomy.concept_info(c).statement)
    assert (statements == df["statement"]).all()
    assert (df.loc[kinds == "stock", "start"] == "").all()
    assert (df.loc[kinds == "flow", "start"] != "").all()
    assert df.loc[kinds == "per_share", "unit"].str.endswith("/share").all()


@pytest.fixture(scope="module")
def aapl_raw() -> dict:
    return json.loads(gzip.decompress(AAPL_CF.read_bytes()))


def test_taxonomy_covers_design_keys_and_has_no_label_conflicts():
    keys = [k.strip() for k in DESIGN_KEYS.split(",")]
    missing = [k for k in keys if k not in taxonomy.concepts()]
    assert not missing
    assert taxonomy.label_conflicts() == []
    assert taxonomy.map_tag("us-gaap", "Revenues") == ("revenue", 0)
    ranks = [taxonomy.map_tag("us-gaap", t)[1] for t in ("Revenues", "RevenueFromContractWithCustomerExcludingAssessedTax", "SalesRevenueNet")]
    assert ranks == sorted(ranks) and len(set(ranks)) == 3
    assert {c for c, _ in taxonomy.tag_concepts("us-gaap", "NetIncomeLoss")} == {"net_income", "net_income_parent"}
    assert taxonomy.map_tag("ifrs-full", "ProfitLossBeforeTax")[0] == "pretax_income"
    assert taxonomy.map_tag("us-gaap", "NoSuchTag") is None


def test_cas_liabilities_interest_bearing_classification():
    bearing = ["短期借款", "一年内到期的非流动负债", "长期借款", "应付债券", "租赁负债"]
    free = ["应付票据", "应付账款", "合同负债", "应交税费", "应付职工薪酬", "预收款项", "其他应付款"]
    assert all(taxonomy.concept_info(taxonomy.map_label(x)).interest_bearing is True for x in bearing)
    assert all(taxonomy.concept_info(taxonomy.map_label(x)).interest_bearing is False for x in free)
    assert taxonomy.concept_info(taxonomy.map_label("负债合计")).interest_bearing is None
    assert taxonomy.map_label("归属于母公司所有者权益合计") == "equity_parent"
    assert taxonomy.map_label("  少数股东权益 ") == "minority_interest"
    assert taxonomy.map_label("减：营业成本") == "cost_of_revenue"
    # CAS's "分配股利、利润或偿付利息支付的现金" includes interest paid: not dividends (a payout ratio would count
    # interest as dividends), and the Chinese label of US-GAAP / IFRS dividends paid no longer names interest
    assert taxonomy.map_label("分配股利、利润或偿付利息支付的现金") == "dividends_and_interest_paid"
    assert taxonomy.map_label("Dividends paid") == "dividends_paid"
    assert "利息" not in taxonomy.concept_info("dividends_paid").label_zh


def test_companyfacts_matches_raw_json(aapl_raw):
    df = companyfacts.load_companyfacts(AAPL_CF)
    _assert_contract(df)
    assert set(df["company"]) == {"AAPL"} and set(df["company_name"]) == {"Apple Inc."}
    raw = pd.DataFrame(aapl_raw["facts"]["us-gaap"]["RevenueFromContractWithCustomerExcludingAssessedTax"]["units"]["USD"])
    mine = df[df["tag"] == "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"]
    assert len(mine) == len(raw)
    merged = mine.merge(raw.rename(columns={"accn": "source"}), on=["source", "start", "end"])
    assert len(merged) >= len(raw) and (merged["value"] == merged["val"]).all()
    # periods come from start/end, not fy/fp: a 10-K repeats comparatives under its own fy
    tenk = mine[mine["form"] == "10-K"]
    assert (tenk.groupby("source")["end"].nunique() > 1).any()


def test_ticker_from_snapshot_or_cik(tmp_path, aapl_raw):
    plain = tmp_path / "CIK0000320193.json.gz"
    shutil.copy(AAPL_CF, plain)
    assert set(companyfacts.load_companyfacts(plain)["company"]) == {"AAPL"}
    doc = dict(aapl_raw, cik=9999999)
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps(doc))
    assert set(companyfacts.load_companyfacts(unknown)["company"]) == {"9999999"}


def test_companyfacts_zip_streams_without_unpacking(tmp_path):
    bulk = tmp_path / "companyfacts.zip"
    with zipfile.ZipFile(bulk, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((SEC / "companyfacts").glob("*.json.gz")):
            cik = path.name[3:13]
            zf.writestr(f"CIK{cik}.json", gzip.decompress(path.read_bytes()))
    frames = list(companyfacts.iter_companyfacts_zip(bulk))
    assert sorted(f["company"].iloc[0] for f in frames) == ["AAPL", "GOOGL", "NVDA", "SNOW", "TSM"]
    only = list(companyfacts.iter_companyfacts_zip(bulk, ciks=[1045810]))
    assert len(only) == 1
    expected = companyfacts.load_companyfacts(SEC / "companyfacts" / "CIK0001045810_NVDA.json.gz")
    pd.testing.assert_frame_equal(only[0].drop(columns="source"), expected.drop(columns="source"))
    assert list(tmp_path.iterdir()) == [bulk]  # nothing unpacked


def _row(**kw) -> dict:
    base = dict(company="X", company_name="X Inc", scope="consolidated", statement="income", concept="revenue", label="Revenue",
                value=1.0, unit="USD", start="2023-01-01", end="2023-12-31", fiscal_year=2023, fiscal_period="FY",
                form="10-K", filed="2024-02-01", source="a1", tag="us-gaap:Revenues")
    return base | kw


def test_select_latest_restatements_precedence_and_as_of():
    df = facts.conform(pd.DataFrame([
        _row(value=100.0, filed="2024-02-01", source="a1"),
        _row(value=105.0, filed="2025-02-01", source="a2", fiscal_year=2024),  # restated next year
        _row(value=99.0, filed="2024-02-01", source="a1", tag="us-gaap:SalesRevenueNet"),  # lower precedence, same period
        _row(value=80.0, start="2022-01-01", end="2022-12-31", filed="2023-02-01", tag="us-gaap:SalesRevenueNet"),  # fills a gap
    ]))
    latest = select_latest(df).set_index("end")["value"]
    assert latest.to_dict() == {"2023-12-31": 105.0, "2022-12-31": 80.0}
    pit = select_latest(df, as_of="2024-06-30").set_index("end")["value"]
    assert pit.to_dict() == {"2023-12-31": 100.0, "2022-12-31": 80.0}
    assert select_latest(df, as_of="2023-01-01").empty


def test_point_in_time_on_real_data():
    all_facts = sources.load_facts([str(AAPL_CF)], latest_only=False)
    fy23 = dict(concept="revenue", start="2022-09-25", end="2023-09-30")
    mask = lambda d: (d["concept"] == fy23["concept"]) & (d["start"] == fy23["start"]) & (d["end"] == fy23["end"])  # noqa: E731
    first_filed = all_facts.loc[mask(all_facts), "filed"].min()
    before = sources.load_facts([str(AAPL_CF)], as_of=(pd.Timestamp(first_filed) - pd.Timedelta(days=1)).strftime("%Y-%m-%d"))
    after = sources.load_facts([str(AAPL_CF)], as_of=first_filed)
    assert not mask(before).any() and mask(after).sum() == 1
    assert before["filed"].max() < first_filed


def test_fsds_google_quarter_vs_half_year():
    df = fsds.load_fsds(SEC / "fsds" / "2009q3")
    _assert_contract(df)
    ni = df[(df["company"] == "GOOG") & (df["concept"] == "net_income") & (df["end"] == "2009-06-30")]
    by_start = ni.set_index("start")["value"].to_dict()
    assert by_start == {"2009-04-01": 1_484_545_000.0, "2009-01-01": 2_907_373_000.0}
    assert set(ni["fiscal_period"]) == {"Q2"} and set(ni["form"]) == {"10-Q"}


def test_fsds_sempra_registrant_balance_sheet_is_consolidated():
    """Sempra's 10-K is a multi-registrant filing: its LegalEntity=ParentCompany rows are Sempra's own
    consolidated statements (total assets 28,512 M at 2009-12-31), not Schedule I parent-only ones."""
    folder = SEC / "fsds" / "2010q1"
    df = fsds.load_fsds(folder)
    sre = df[(df["company"] == "SRE") & (df["end"] == "2009-12-31") & (df["statement"] == "balance")]
    assert len(sre) > 10 and set(sre["scope"]) == {"consolidated"}
    num = pd.read_csv(folder / "num.txt.gz", sep="\t", dtype=str, keep_default_na=False)
    expected = num[(num["tag"] == "Assets") & (num["ddate"] == "20091231") & (num["segments"] == "LegalEntity=ParentCompany;")
                   & (num["adsh"] == "0000086521-10-000019")]["value"].astype(float)
    got = sre[(sre["concept"] == "total_assets") & (sre["source"] == "0000086521-10-000019")]["value"]
    assert list(got) == list(expected)  # the subsidiaries' (co-registrant) totals were dropped
    assert not df["label"].eq("").any()


def test_fsds_start_dates_by_quarters():
    starts = fsds._starts(pd.Series(["20090630"] * 5 + ["20100228"]), pd.Series([0, 1, 2, 3, 4, 1]))
    assert list(starts) == ["", "2009-04-01", "2009-01-01", "2008-10-01", "2008-07-01", "2009-12-01"]


@pytest.mark.parametrize("name,form,end", [("aapl-20230701_htm.xml.gz", "10-Q", "2023-07-01"), ("aapl-20230930_htm.xml.gz", "10-K", "2023-09-30")])
def test_xbrl_revenue_agrees_with_companyfacts(name, form, end):
    inst = xbrl.load_xbrl(SEC / "xbrl" / name)
    _assert_contract(inst)
    assert set(inst["company"]) == {"AAPL"} and set(inst["form"]) == {form} and set(inst["scope"]) == {"consolidated"}
    rev = inst[inst["concept"] == "revenue"]
    assert rev["end"].eq(end).any()
    assert not rev.duplicated(["start", "end"]).any()  # segment (iPhone, Americas ...) facts dropped
    cf = select_latest(companyfacts.load_companyfacts(AAPL_CF))
    cf_rev = cf[cf["concept"] == "revenue"].set_index(["start", "end"])["value"]
    for r in rev.itertuples():
        assert cf_rev[(r.start, r.end)] == r.value


def test_canonical_csv_and_parquet_round_trip(tmp_path):
    df = sources.load_facts([str(SEC / "fsds" / "2009q3")])
    for name in ("facts.csv", "facts.parquet", "facts.csv.gz"):
        path = canonical_io.write_canonical(df, tmp_path / name)
        back = sources.load_facts([str(path)])
        # contract 1 carries the corrected values, not the notes of the corrections (`adjustment`, e.g. Kellogg's and
        # Honeywell's negative capex made positive) nor the other tags' values (`alternates`, one value per window is
        # written): the values round-trip, a corrected file needs no correction again
        extra = list(facts.EXTRA_COLUMNS)
        pd.testing.assert_frame_equal(back.drop(columns=extra), df.drop(columns=extra))
        assert (back["adjustment"] == "").all() and (df["adjustment"] != "").any()
        assert (back["alternates"] == "").all() and (df["alternates"] != "").any()


def test_load_facts_default_embedded_and_cached():
    start = time.perf_counter()
    df = sources.load_facts()
    _assert_contract(df)
    assert {"AAPL", "NVDA", "GOOGL", "SNOW", "TSM", "NFLX", "GOOG", "SRE"} <= set(df["company"])
    assert not df.duplicated(facts.PERIOD_KEY).any()
    again_start = time.perf_counter()
    again = sources.load_facts()
    assert time.perf_counter() - again_start < max(0.5, (again_start - start) / 2)
    again.loc[0, "value"] = -1.0  # callers get a copy, the cache is untouched
    assert sources.load_facts().loc[0, "value"] == df.loc[0, "value"]


@pytest.mark.parametrize("ticker,not_reported", [("AAPL", set()), ("NVDA", set()), ("GOOGL", {"gross_profit", "depreciation_amortization"}), ("SNOW", set())])  # Alphabet: cash flow shows depreciation only
def test_latest_10k_statements_are_complete(ticker, not_reported):
    df = sources.load_facts()
    df = df[df["company"] == ticker]
    annual = df[(df["form"] == "10-K") & (df["concept"] == "revenue")]
    annual = annual[(pd.to_datetime(annual["end"]) - pd.to_datetime(annual["start"])).dt.days > 350]
    end = annual["end"].max()
    have = set(df.loc[df["end"] == end, "concept"])
    needed = {"revenue", "cost_of_revenue", "gross_profit", "operating_income", "pretax_income", "income_tax", "net_income",
              "eps_basic", "eps_diluted", "shares_diluted", "total_assets", "current_assets", "cash", "accounts_receivable",
              "current_liabilities", "accounts_payable", "total_equity", "operating_cash_flow", "investing_cash_flow",
              "financing_cash_flow", "capex", "depreciation_amortization", "rd_expense"}
    assert needed - not_reported - have == set()
