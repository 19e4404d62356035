"""Fact tables for the indices tests (not collected by pytest).

- `embedded_facts()`: the embedded SEC data as `load_facts()` gives it (what `ledgerlm compute` reads).
- `cas_demo_facts()`: a hand-built CAS company (calendar fiscal year, YTD interim reports FY2021..FY2024)
  carrying every CAS line the registry uses; values follow a simple stated rule, rounded to cents.
- `fute_case1_facts()`: the paper's Appendix A.1 consolidated balance sheet (Fute Technology, 2024Y).
- `dongtian_case2_facts()`: the paper's Appendix A.2 income-statement lines (Dongtian Micro, 2024H1/2024Y/2025H1).
"""
from __future__ import annotations

import datetime as dt
from functools import lru_cache
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
COMPANYFACTS = sorted((REPO / "synth" / "data" / "sec" / "companyfacts").glob("*.json.gz"))

FLOW_BASE = {  # standalone-quarter amount in FY2021 Q1 (CNY)
    "revenue": 250e6, "cost_of_revenue": 170e6, "taxes_and_surcharges": 2.1e6, "selling_expense": 9.5e6,
    "admin_expense": 12.3e6, "rd_expense": 15.7e6, "financial_expense": -1.9e6, "interest_expense": 1.2e6,
    "investment_income": 3.4e6, "operating_income": 40e6, "nonoperating_income": 0.6e6, "pretax_income": 40.6e6,
    "income_tax": 5.1e6, "net_income": 35.5e6, "net_income_parent": 33.2e6, "operating_expenses": 38e6,
    "sga_expense": 21.8e6, "operating_cash_flow": 45e6, "investing_cash_flow": -30e6, "financing_cash_flow": -8e6,
    "capex": 22e6, "depreciation_amortization": 11e6, "stock_based_compensation": 1.5e6, "dividends_paid": 10e6,
    "share_repurchase": 2e6, "eps_basic": 0.33, "eps_diluted": 0.32,
}
SHARES = {"shares_basic": 100e6, "shares_diluted": 101e6}  # weighted averages, constant every period
STOCK_BASE = {  # balance at FY2021 year end (CNY)
    "total_assets": 3.2e9, "current_assets": 1.6e9, "noncurrent_assets": 1.6e9, "cash": 0.5e9,
    "short_term_investments": 0.1e9, "notes_receivable": 0.05e9, "accounts_receivable": 0.4e9, "inventory": 0.3e9,
    "ppe_net": 0.9e9, "intangible_assets": 0.12e9, "goodwill": 0.08e9, "deferred_tax_assets": 0.02e9,
    "total_liabilities": 1.3e9, "current_liabilities": 0.9e9, "noncurrent_liabilities": 0.4e9, "short_term_debt": 0.15e9,
    "notes_payable": 0.2e9, "accounts_payable": 0.3e9, "advances_from_customers": 0.03e9, "contract_liabilities": 0.06e9,
    "payroll_payable": 0.04e9, "taxes_payable": 0.02e9, "current_portion_long_term_debt": 0.035e9, "long_term_debt": 0.05e9,
    "bonds_payable": 0.1e9, "lease_liabilities": 0.017e9, "lease_liabilities_current": 0.008e9, "long_term_payables": 0.054e9,
    "share_capital": 100e6, "capital_reserve": 0.6e9, "surplus_reserve": 0.09e9, "retained_earnings": 0.9e9,
    "equity_parent": 1.8e9, "minority_interest": 0.1e9, "total_equity": 1.9e9, "shares_outstanding": 100e6,
}
STATEMENT = {**{k: "income" for k in FLOW_BASE}, **{k: "income" for k in SHARES}, **{k: "balance" for k in STOCK_BASE},
             **{k: "cashflow" for k in ["operating_cash_flow", "investing_cash_flow", "financing_cash_flow", "capex",
                                         "depreciation_amortization", "stock_based_compensation", "dividends_paid", "share_repurchase"]}}
QUARTER_END = {1: (3, 31), 2: (6, 30), 3: (9, 30), 4: (12, 31)}


def _row(company, name, concept, value, start, end, fy, fp, source, scope="consolidated", unit="CNY"):
    return {"company": company, "company_name": name, "scope": scope, "statement": STATEMENT.get(concept, "balance"),
            "concept": concept, "label": concept, "value": float(value), "unit": unit,
            "start": start.isoformat() if start else "", "end": end.isoformat(), "fiscal_year": fy, "fiscal_period": fp,
            "form": "annual" if fp == "FY" else "interim", "filed": (end + dt.timedelta(days=40)).isoformat(),
            "source": source, "tag": concept}


@lru_cache(maxsize=1)
def cas_demo_facts() -> pd.DataFrame:
    """CASDEMO: standalone quarter flow = base x (1 + 0.08 (year-2021)) x (1 + 0.03 q), YTD = sum of quarters;
    balance at quarter t (t = 4 (year-2021) + q, t = 0 at FY2020 year end) = base x (1 + 0.02 t + 0.005 (t mod 3)).
    The FY2024 report also carries a parent-company balance sheet (0.6 x consolidated)."""
    rows = []
    for year in range(2021, 2025):
        start = dt.date(year, 1, 1)
        quarters = {}
        for q in range(1, 5):
            end = dt.date(year, *QUARTER_END[q])
            fp = "FY" if q == 4 else f"Q{q}"
            source = f"CASDEMO-{year}-{fp}"
            for concept, base in FLOW_BASE.items():
                ndp = 4 if concept.startswith("eps") else 2
                quarters[(concept, q)] = round(base * (1 + 0.08 * (year - 2021)) * (1 + 0.03 * q), ndp)
                ytd = round(sum(quarters[(concept, k)] for k in range(1, q + 1)), ndp)
                rows.append(_row("CASDEMO", "CAS Demo Co.", concept, ytd, start, end, year, fp, source,
                                 unit="CNY/share" if concept.startswith("eps") else "CNY"))
            for concept, n in SHARES.items():
                rows.append(_row("CASDEMO", "CAS Demo Co.", concept, n, start, end, year, fp, source, unit="shares"))
            t = 4 * (year - 2021) + q
            for concept, base in STOCK_BASE.items():
                value = round(base * (1 + 0.02 * t + 0.005 * (t % 3)), 2)
                unit = "shares" if concept == "shares_outstanding" else "CNY"
                rows.append(_row("CASDEMO", "CAS Demo Co.", concept, value, None, end, year, fp, source, unit=unit))
                if (year, q) == (2024, 4):
                    rows.append(_row("CASDEMO", "CAS Demo Co.", concept, round(value * 0.6, 2), None, end, year, fp, source,
                                     scope="parent", unit=unit))
        if year == 2021:  # balances at the FY2020 year end (t = 0), shown as comparatives in the FY2021 report
            for concept, base in STOCK_BASE.items():
                unit = "shares" if concept == "shares_outstanding" else "CNY"
                rows.append(_row("CASDEMO", "CAS Demo Co.", concept, base, None, dt.date(2020, 12, 31), 2021, "FY",
                                 "CASDEMO-2021-FY", unit=unit))
    return pd.DataFrame(rows)


def fute_case1_facts() -> pd.DataFrame:
    """Paper Appendix A.1: Fute Technology (301607) consolidated balance sheet at 2024-12-31 (CNY)."""
    end, start, src = dt.date(2024, 12, 31), dt.date(2024, 1, 1), "paper:FinIndices-A.1"
    items = {
        "equity_parent": 1_000_020_938.49, "total_liabilities": 1_285_210_565.03,
        "current_portion_long_term_debt": 34_943_585.84, "long_term_debt": 48_296_660.07,
        "lease_liabilities": 16_566_591.38, "long_term_payables": 54_160_000.00,
        "notes_payable": 215_022_707.38,  # operating, non-interest-bearing: must be deducted
    }
    rows = [_row("301607", "Fute Technology", c, v, None, end, 2024, "FY", src) for c, v in items.items()]
    # The store reads a fiscal calendar from annual windows; the paper gives no flow figure, so one zero
    # placeholder window (not a paper figure, used by no index here) anchors the 2024 fiscal year.
    rows.append(_row("301607", "Fute Technology", "nonoperating_income", 0.0, start, end, 2024, "FY", src + " (calendar anchor)"))
    return pd.DataFrame(rows)


def dongtian_case2_facts() -> pd.DataFrame:
    """Paper Appendix A.2: Dongtian Micro (301183) selling / administrative / financial expenses (CNY)."""
    src = "paper:FinIndices-A.2"
    figures = {  # (start, end, fiscal_year, fiscal_period) -> (selling, admin, financial)
        (dt.date(2025, 1, 1), dt.date(2025, 6, 30), 2025, "Q2"): (2_789_101.10, 16_554_534.56, -2_457_530.39),
        (dt.date(2024, 1, 1), dt.date(2024, 12, 31), 2024, "FY"): (4_958_105.99, 34_543_848.50, -6_779_324.49),
        (dt.date(2024, 1, 1), dt.date(2024, 6, 30), 2024, "Q2"): (2_236_714.86, 12_031_506.74, -3_844_353.30),
    }
    rows = []
    for (start, end, fy, fp), values in figures.items():
        for concept, v in zip(("selling_expense", "admin_expense", "financial_expense"), values):
            rows.append(_row("301183", "Dongtian Micro", concept, v, start, end, fy, fp, f"{src} {fy}{fp}"))
    return pd.DataFrame(rows)


@lru_cache(maxsize=1)
def embedded_facts() -> pd.DataFrame:
    """The canonical facts `ledgerlm compute` uses by default (load_facts(): one value per tag precedence)."""
    from ledgerlm.synth.statements.sources import load_facts

    return load_facts()
