"""A small MacroLens-schema release for tests and demos, real SEC data wherever the repo has it.

    python -m ledgerlm.evaluate.macrolens.fixture --out runs/ml_fixture

Which columns are real and which are synthetic (seeded, `numpy.random.default_rng(seed)`):
- REAL (embedded SEC companyfacts of AAPL, NVDA, GOOGL, SNOW; USD filers): the 11 statement fields and
  the other raw fundamentals (as first filed, visible from each report's real filing date), the
  nearest-filing keys (accession, filing date, period end), filing dates / forms / accessions in the
  `filings` table and the numbers quoted in their excerpts, company names, GICS sector, industry, exchange.
- DERIVED from real fundamentals: cogs_ratio, current_ratio, debt_to_equity, ebitda_margin (operating
  income / revenue, no D&A in the sample), effective_tax_rate, gross_margin, net_margin, revenue_growth_yoy.
- SYNTHETIC (no real data in the repo): OHLCV prices (geometric random walk), and everything computed
  from them (market cap = close x real shares outstanding, the 8 blacklisted valuation columns, beta,
  WACC, cost of debt); macro series; the scenario layer and scenario flags; news; company descriptions
  (hand-written one-liners); the T7 property records.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from ledgerlm.cachedir import temp_folder
from ledgerlm.evaluate.macrolens.data import SPLIT_DATES, company_holdout
from ledgerlm.evaluate.macrolens.release_layout import EIA_SERIES, FOLDERS, FRED_SERIES
from ledgerlm.evaluate.macrolens.schema import load_schema
from ledgerlm.synth.macrolens_t3 import FIELD_CONCEPTS, FLOW_FIELDS, filed_reports, load_all_filings

START, END = "2021-01-04", "2026-03-31"
COMPANIES = {  # ticker: (GICS sector, industry, exchange, synthetic start price, hand-written description)
    "AAPL": ("Information Technology", "Technology Hardware, Storage & Peripherals", "NASDAQ", 130.0,
             "Designs and sells smartphones, personal computers, tablets, wearables and related services."),
    "NVDA": ("Information Technology", "Semiconductors & Semiconductor Equipment", "NASDAQ", 13.0,
             "Designs graphics processors and data-center accelerated computing platforms."),
    "GOOGL": ("Communication Services", "Interactive Media & Services", "NASDAQ", 87.0,
              "Operates internet search, advertising, video, cloud computing and other services."),
    "SNOW": ("Information Technology", "Software", "NYSE", 280.0,
             "Provides a cloud-based data platform sold on a consumption basis."),
}
EXTRA_FIELDS = {"shares_outstanding": "shares_outstanding", "gross_profit": "gross_profit", "cost_of_revenue": "cost_of_revenue",
                "income_tax": "income_tax", "current_assets": "current_assets", "current_liabilities": "current_liabilities",
                "capex": "capex", "_shares_diluted": "shares_diluted"}
EXTRA_FLOWS = {"gross_profit", "cost_of_revenue", "income_tax", "capex", "_shares_diluted"}
CATEGORIES = {"rates": ["fed_rate_change", "treasury_move"], "equity_volatility": ["vix_spike", "sp500_drawdown"],
              "commodities": ["oil_shock"], "currencies": ["usd_shock"], "inflation": ["cpi_shock"], "labor": ["payroll_shock"],
              "credit": ["hy_spread_event"], "housing": ["housing_starts_shock"], "money_supply": ["m2_shock"],
              "composites": ["real_yield_shift"]}
METROS = {"Austin": "TX", "Dallas": "TX", "Denver": "CO", "Phoenix": "AZ", "Atlanta": "GA", "Seattle": "WA"}


def _reports_frame(facts: pd.DataFrame, ticker: str) -> pd.DataFrame:
    fields = {**FIELD_CONCEPTS, **EXTRA_FIELDS}
    reps = filed_reports(facts, ticker, fields=fields, flows=FLOW_FIELDS | EXTRA_FLOWS)
    rows = []
    for r in reps:
        if not r.provenance:
            continue
        acc = next(iter(r.provenance.values()))["source"]
        rows.append({"filing_date": pd.Timestamp(r.filed), "period_end": pd.Timestamp(r.period_end), "filing_accession": acc,
                     "quarters": r.quarters, **r.values})
    df = pd.DataFrame(rows).reindex(columns=[*rows[0].keys(), *fields]).loc[:, lambda d: ~d.columns.duplicated()]
    df = df.sort_values("filing_date").drop_duplicates("filing_date", keep="last")
    # GOOGL reports share classes separately: fall back to weighted diluted shares when no total is tagged
    df["shares_outstanding"] = df["shares_outstanding"].fillna(df["_shares_diluted"]).ffill()
    annual = 4 / df["quarters"]  # annualise year-to-date flows for ratios
    df["cogs_ratio"] = df["cost_of_revenue"] / df["revenue"]
    df["current_ratio"] = df["current_assets"] / df["current_liabilities"]
    df["debt_to_equity"] = df["long_term_debt"] / df["stockholders_equity"]
    df["ebitda_margin"] = df["operating_income"] / df["revenue"]
    df["effective_tax_rate"] = df["income_tax"] / (df["net_income"] + df["income_tax"])
    df["gross_margin"] = df["gross_profit"] / df["revenue"]
    df["net_margin"] = df["net_income"] / df["revenue"]
    prev = df[["period_end", "quarters", "revenue"]].assign(period_end=df["period_end"] + pd.DateOffset(years=1))
    df = pd.merge_asof(df.sort_values("period_end"), prev.sort_values("period_end").rename(columns={"revenue": "_rev_prev"}),
                       on="period_end", by="quarters", tolerance=pd.Timedelta(days=10), direction="nearest")
    df["revenue_growth_yoy"] = df["revenue"] / df["_rev_prev"] - 1
    df["_ni_annual"] = df["net_income"] * annual
    df["_ocf_annual"] = (df["operating_cash_flow"] - df["capex"].fillna(0)) * annual
    df["_rev_annual"] = df["revenue"] * annual
    df["_oi_annual"] = df["operating_income"] * annual
    return df.drop(columns=["_rev_prev"]).sort_values("filing_date")


def _prices(rng: np.random.Generator, dates: pd.DatetimeIndex, start: float, market: np.ndarray) -> pd.DataFrame:
    beta = rng.uniform(0.8, 1.6)
    ret = beta * market + rng.normal(0.0002, 0.015, len(dates))
    close = start * np.exp(np.cumsum(ret))
    open_ = close * np.exp(rng.normal(0, 0.005, len(dates)))
    high = np.maximum(open_, close) * np.exp(np.abs(rng.normal(0, 0.007, len(dates))))
    low = np.minimum(open_, close) * np.exp(-np.abs(rng.normal(0, 0.007, len(dates))))
    vol = rng.lognormal(16, 0.4, len(dates)).round()
    return pd.DataFrame({"date": dates, "open": open_, "high": high, "low": low, "close": close, "volume": vol, "beta": beta})


def _scenarios(rng: np.random.Generator, dates: pd.DatetimeIndex) -> pd.DataFrame:
    rows = []
    days = np.sort(rng.choice(len(dates), size=48, replace=False))
    cats = list(CATEGORIES)
    for n, d in enumerate(days):
        cat = cats[n % len(cats)]
        etype = CATEGORIES[cat][n % len(CATEGORIES[cat])]
        day = dates[d]
        size = float(rng.normal(0, 2.5))
        rows.append({"event_id": f"EV{n:04d}", "event_type": etype, "category": cat, "event_date": day,
                     "pre_start": day - pd.Timedelta(days=63), "post_end": day + pd.Timedelta(days=63),
                     "description": f"On {day:%Y-%m-%d}, a {etype.replace('_', ' ')} was detected "
                                    f"(standardized move {size:+.2f}) [scenario {n:04d}]."})
    return pd.DataFrame(rows)


def _filings(facts: pd.DataFrame, reports: dict[str, pd.DataFrame]) -> pd.DataFrame:
    rows = []
    for ticker, rep in reports.items():
        forms = facts[facts["company"] == ticker].drop_duplicates("source").set_index("source")["form"]
        for r in rep.itertuples():
            rev = f"${r.revenue:,.0f}" if pd.notna(r.revenue) else "not reported"
            cover = (f"As of {r.filing_date:%Y-%m-%d}, {r.shares_outstanding:,.0f} shares of common stock were outstanding. "
                     if pd.notna(getattr(r, "shares_outstanding", None)) else "")  # as a real 10-K/10-Q cover page states
            rows.append({"ticker": ticker, "filing_date": r.filing_date, "form": forms.get(r.filing_accession, ""),
                         "accession": r.filing_accession,
                         "text": f"[filing {r.filing_accession}] {cover}For the period ended {r.period_end:%Y-%m-%d}, revenue was {rev}; "
                                 f"total assets were ${r.total_assets:,.0f}." if pd.notna(r.total_assets) else
                                 f"[filing {r.filing_accession}] {cover}For the period ended {r.period_end:%Y-%m-%d}, revenue was {rev}."})
    return pd.DataFrame(rows)


def _news(rng: np.random.Generator, dates: pd.DatetimeIndex) -> pd.DataFrame:
    rows = []
    for ticker in COMPANIES:
        for n, d in enumerate(dates[::42]):
            day = d + pd.Timedelta(days=int(rng.integers(0, 20)))
            rows.append({"ticker": ticker, "published": day, "headline": f"[news {ticker}-{n:03d}] {ticker} update dated {day:%Y-%m-%d}",
                         "text": "Synthetic news item for tests."})
    return pd.DataFrame(rows)


def _properties(rng: np.random.Generator, n: int = 400) -> pd.DataFrame:
    metros = list(METROS)
    metro = rng.choice(metros, n)
    level = {m: rng.uniform(0.8, 1.6) for m in metros}
    ptype = rng.choice(["Single Family", "Condo", "Townhouse"], n, p=[0.6, 0.25, 0.15])
    sqft = rng.integers(600, 4000, n)
    beds = np.clip((sqft / 600).round(), 1, 6)
    mult = np.array([level[m] for m in metro]) * np.where(ptype == "Condo", 0.9, 1.0)
    price = (sqft * 220 * mult * rng.lognormal(0, 0.15, n)).round(-2)
    rent = (price * 0.0065 * rng.lognormal(0, 0.1, n)).round()
    last_sale = pd.Timestamp("2005-01-01") + pd.to_timedelta(rng.integers(0, 7000, n), unit="D")
    return pd.DataFrame({
        "address": [f"addr-{i:05d}" for i in range(n)], "metro": metro, "city": metro, "county": [f"{m} County" for m in metro],
        "state": [METROS[m] for m in metro], "zip": [f"{700 + metros.index(m)}xx" for m in metro], "property_type": ptype,
        "square_footage": sqft, "lot_size": (sqft * rng.uniform(1.5, 4, n)).round(), "bedrooms": beds,
        "bathrooms": np.clip(beds - 1, 1, 4), "year_built": rng.integers(1950, 2022, n), "latitude": rng.uniform(30, 47, n).round(4),
        "longitude": rng.uniform(-122, -84, n).round(4), "last_sale_date": last_sale,
        "years_since_last_sale": ((pd.Timestamp("2025-01-01") - last_sale).days / 365.25).round(1), "rent": rent, "price": price})


def build_fixture(seed: int = 42) -> dict[str, pd.DataFrame]:
    """All release tables (logical column names)."""
    rng = np.random.default_rng(seed)
    schema = load_schema()
    facts = load_all_filings()
    facts = facts[facts["company"].isin(COMPANIES)]
    dates = pd.bdate_range(START, END)
    market = rng.normal(0.0003, 0.01, len(dates))
    macro = pd.DataFrame({"date": dates, **{k: np.round(base + np.cumsum(rng.normal(0, step, len(dates))), 3) for k, (base, step) in {
        "fed_funds_rate": (0.1, 0.02), "treasury_10y": (1.0, 0.03), "treasury_2y": (0.2, 0.03), "cpi_yoy": (1.5, 0.02),
        "unemployment_rate": (6.5, 0.02), "vix": (22, 0.6), "wti_oil": (50, 0.8), "hy_spread": (4.0, 0.03)}.items()}})
    scen = _scenarios(rng, dates)
    flags = pd.DataFrame({"date": dates})
    for cat in CATEGORIES:
        ev = scen.loc[scen["category"] == cat, "event_date"].to_numpy()
        flags[cat] = [int(((ev <= d) & (ev > d - np.timedelta64(63, "D"))).any()) for d in dates.to_numpy()]
    reports, panels = {}, []
    for ticker, (sector, industry, exchange, p0, _) in COMPANIES.items():
        reports[ticker] = rep = _reports_frame(facts, ticker)
        px = _prices(rng, dates, p0, market)
        df = pd.merge_asof(px, rep, left_on="date", right_on="filing_date", direction="backward")  # visible from its filing date
        df["ticker"], df["sector"], df["industry"], df["exchange"], df["label"] = ticker, sector, industry, exchange, "operating"
        df["split"] = np.where(df["date"] >= pd.Timestamp(SPLIT_DATES["daily"]), "test", "train")
        mc = df["close"] * df["shares_outstanding"]
        ev = mc + df["long_term_debt"].fillna(0) - df["cash"].fillna(0)
        df["market_cap"], df["enterprise_value"] = mc, ev
        df["pe_ratio"] = (mc / df["_ni_annual"]).where(df["_ni_annual"] > 0)
        df["ev_to_revenue"], df["ev_to_ebitda"] = ev / df["_rev_annual"], ev / df["_oi_annual"]
        df["price_to_book"] = mc / df["stockholders_equity"]
        df["price_to_book_mrq"] = df["price_to_book"] * rng.uniform(0.97, 1.03)
        df["fcf_yield"] = df["_ocf_annual"] / mc
        df["cost_of_debt"] = round(float(rng.uniform(0.02, 0.06)), 4)
        df["wacc"] = 0.04 + df["beta"] * 0.055
        panels.append(df.merge(macro, on="date").merge(flags, on="date"))
    daily = pd.concat(panels, ignore_index=True).drop(columns=[c for c in panels[0].columns if c.startswith("_") or c == "quarters"])
    keep = list(dict.fromkeys(["ticker", "date", *schema.panel_columns()]))
    daily = daily[[c for c in keep if c in daily.columns]].sort_values(["ticker", "date"]).reset_index(drop=True)
    static = pd.DataFrame([{"ticker": t, "name": str(facts.loc[facts["company"] == t, "company_name"].iloc[0]), "sector": c[0],
                            "industry": c[1], "description": c[4]} for t, c in COMPANIES.items()])
    out = {"panel_daily": daily, "static": static, "scenarios": scen, "filings": _filings(facts, reports),
           "news": _news(rng, dates), "properties": _properties(rng)}
    for gran, rule in (("weekly", "W-FRI"), ("monthly", "ME")):
        last = daily.groupby(["ticker", pd.Grouper(key="date", freq=rule)])["date"].transform("max")
        out[f"panel_{gran}"] = daily[daily["date"] == last].reset_index(drop=True)
        out[f"panel_{gran}"]["split"] = np.where(out[f"panel_{gran}"]["date"] >= pd.Timestamp(SPLIT_DATES[gran]), "test", "train")
    return out


def write_fixture(out: str | Path, seed: int = 42) -> Path:
    """Write the fixture as Parquet files with the release's column names (via `columns.yaml`)."""
    schema, out = load_schema(), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for table, df in build_fixture(seed).items():
        df = schema.to_release(df, table)
        df.to_parquet(out / schema.tables[table]["file"], index=False)
    return out


def write_layout(out: str | Path, seed: int = 42, ship_instances: bool = True) -> Path:
    """The fixture (evaluate/macrolens/fixture.py) written in the release's folder layout, with 53 macro series,
    a shipped holdout list and shipped T2 instances (for tests of the reader)."""
    schema, base = load_schema(), Path(out) / "data"
    tables = build_fixture(seed)
    daily = tables["panel_daily"]
    rng = np.random.default_rng(seed)
    dates = pd.DatetimeIndex(sorted(daily["date"].unique()))
    macro = pd.DataFrame({"date": dates})
    for k, sid in enumerate(FRED_SERIES + EIA_SERIES):
        macro[sid] = np.round(1.0 + k + np.cumsum(rng.normal(0, 0.02, len(dates))), 3)
    for f in FOLDERS:
        (base / f).mkdir(parents=True, exist_ok=True)
    macro_cols = list(schema.group("macro"))
    keep = [c for c in daily.columns if c not in macro_cols]
    schema.to_release(daily[keep], "panel_daily").to_parquet(base / "daily" / "panel_daily.parquet", index=False)
    monthly = tables["panel_monthly"]
    schema.to_release(monthly[[c for c in monthly.columns if c not in macro_cols]], "panel_monthly").to_parquet(
        base / "monthly" / "panel_monthly.parquet", index=False)
    ohlcv = ["ticker", "date", *schema.group("ohlcv")]
    schema.to_release(daily[ohlcv], "panel_daily").to_parquet(base / "prices" / "prices.parquet", index=False)
    fund_cols = ["ticker", "filing_date", "period_end", "filing_accession", *schema.group("statement_fields"), *schema.group("fundamentals")]
    funds = daily[[c for c in fund_cols if c in daily.columns]].dropna(subset=["filing_accession"]).drop_duplicates(["ticker", "filing_accession"])
    schema.to_release(funds, "panel_daily").to_parquet(base / "fundamentals" / "fundamentals.parquet", index=False)
    macro.to_parquet(base / "macro" / "macro.parquet", index=False)
    for table, folder, name in (("filings", "filings", "filings"), ("properties", "real_estate", "properties"),
                                ("static", "processed", "static"), ("scenarios", "processed", "scenarios"), ("news", "processed", "news")):
        schema.to_release(tables[table], table).to_parquet(base / folder / f"{name}.parquet", index=False)
    tickers = sorted(daily["ticker"].unique())
    seeded = company_holdout(tickers, seed=seed)
    holdout = sorted(seeded | {next(t for t in tickers if t not in seeded)})  # ships a list that differs from the seeded default
    pd.DataFrame({"ticker": holdout}).to_parquet(base / "processed" / "holdout_tickers.parquet", index=False)
    if ship_instances:
        rows = []
        for t in holdout:
            g = daily[(daily["ticker"] == t) & daily["market_cap"].notna()]
            rows.append({"ticker": t, "date": g["date"].iloc[-30]})  # not the latest snapshot: visibly the release's choice
        pd.DataFrame(rows).to_parquet(base / "processed" / "instances_T2.parquet", index=False)
    return Path(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--layout", action="store_true", help="write it in the public release's folder layout (release_layout.py)")
    args = p.parse_args(argv)
    if args.layout:
        print(f"fixture in the release layout written to {write_layout(args.out, args.seed)}")
    else:
        print(f"fixture written to {write_fixture(args.out, args.seed)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


_CACHE: dict[int, Path] = {}


def cached_fixture_dir(seed: int = 42) -> Path:
    """The fixture written once per process into a temporary folder (tests share it), removed when the process exits."""
    if seed not in _CACHE:
        _CACHE[seed] = write_fixture(temp_folder("macrolens_fixture_"), seed)
    return _CACHE[seed]
