"""Build EPSBench schemas from canonical SEC facts (the release's own extractor is no longer served).

    ledgerlm epsbench build-schema --company GOOGL --quarter 2026Q1 --out GOOGL_2026Q1.json

A schema for target quarter T (the company's own fiscal label, e.g. NVDA 2026Q4 = the quarter
ending January 2026) holds:
  variables_baseline  the year-ago quarter's income-statement leaves in USD millions (Q4 derived as
                      FY - nine-month YTD), built from the filing's own items: revenue, cost of
                      revenue, the operating-expense lines it reports (R&D, selling, G&A or SG&A),
                      a residual other operating line when operating income needs one, interest
                      income / expense, the remaining non-operating line, tax rate, diluted shares
  formulas            gross profit -> operating income -> pretax -> tax -> net income -> eps
  prediction_schema   yoy (revenue, R&D, interest), bps (cost of revenue and SG&A-type lines as a
                      share of revenue), absolute (residual and non-operating lines, shares),
                      rate_override (tax rate); tax-rate and share-count references last_q / ttm /
                      q4 (year-ago) with their median as default (the paper's rule, App. B.1)
  _validation         year-ago and target EPS and the target's pretax income, from the filings
Diluted shares and EPS for a fourth quarter are not filed (10-Ks give annual figures): the fact
store derives Q4 shares as 4 x FY - 3 x nine-month average and Q4 EPS as FY - nine-month EPS.
"""
from __future__ import annotations

import re
import statistics
from typing import Any

import pandas as pd

from ledgerlm.errors import InputError, NotDerivable
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore

OPEX_LINES = ("rd_expense", "selling_expense", "admin_expense", "sga_expense")
MILLION = 1e6


def load_store(paths: list[str] | None = None):
    facts = load_facts(paths or None)
    store = FactStore(facts)
    store._epsbench_facts = facts  # the raw rows give the filer's own fiscal-year labels
    return store


def _store_labels(store, company: str) -> dict[int, int]:
    """The filer's own fiscal-year label -> the store's label for the same year (matched by end date;
    the first 10-K that reports a year carries its own `fy`, later ones carry it as a comparative)."""
    facts = getattr(store, "_epsbench_facts", None)
    years = store.fiscal_years(company)
    if facts is None:
        return {fy.label: fy.label for fy in years}
    annual = facts[(facts["company"] == company) & (facts["fiscal_period"] == "FY") & (facts["form"].astype(str).str.startswith("10-K"))]
    # a 10-K labelled `fy` covers the year ending at its latest end date; a comparative year k years
    # earlier is fy - k (the embedded facts may keep a year only from a later 10-K's comparatives)
    own: dict = {}
    for (fy, _filed), rows in annual.groupby(["fiscal_year", "filed"]):
        latest = pd.Timestamp(rows["end"].max())
        for end in rows["end"].unique():
            label = int(fy) - round((latest - pd.Timestamp(end)).days / 365.25)
            own.setdefault(pd.Timestamp(end).date(), set()).add(label)
    own = {end: min(labels) for end, labels in own.items()}
    mapping, previous = {}, None
    for fy in years:
        label = own.get(fy.end) if fy.end else None
        label = label if label is not None else (previous + 1 if previous is not None else None)
        if label is not None:
            mapping[label] = fy.label
        previous = label
    return mapping


class _Quarters:
    """Standalone-quarter values in USD millions for one company, addressed by the filer's labels."""

    def __init__(self, store, company: str):
        self.store, self.company, self.labels = store, company, _store_labels(store, company)
        self.concepts = set(store.concepts(company))

    def year(self, year: int) -> str:
        if year not in self.labels:
            raise InputError(f"{self.company}: no fiscal year {year} in the facts", field="quarter")
        return f"FY{self.labels[year]}"

    def period(self, fq: str) -> str:
        return f"{self.year(int(fq[:4]))}Q{int(fq[-1])}"

    def flow(self, concept: str, fq: str) -> float | None:
        if concept not in self.concepts:
            return None
        try:
            return self.store.value(self.company, concept, self.period(fq)).value / MILLION
        except NotDerivable:
            return None

    def shares(self, fq: str) -> float:
        """Diluted weighted-average shares (millions): the 10-Q's three-month figure when filed, else the
        store's derivation (Q4 = 4 x FY - 3 x nine-month average)."""
        ref = self.store.reported_quarter(self.company, "shares_diluted", self.period(fq))
        try:
            return (ref.value if ref is not None else self.store.value(self.company, "shares_diluted", self.period(fq)).value) / MILLION
        except NotDerivable:
            raise InputError(f"no diluted share count for {self.company} {fq}", field="shares_diluted") from None

    def eps(self, fq: str) -> float | None:
        """Reported diluted EPS of the quarter (Q4: FY - nine-month EPS, an approximation)."""
        ref = self.store.reported_quarter(self.company, "eps_diluted", self.period(fq))
        if ref is not None:
            return ref.value
        try:
            return round(self.store.value(self.company, "eps_diluted", self.period(fq)).value, 4)
        except NotDerivable:
            return None


def _shift(fq: str, quarters: int) -> str:
    index = int(fq[:4]) * 4 + int(fq[-1]) - 1 + quarters
    return f"{index // 4}Q{index % 4 + 1}"


def quarter_leaves(data: _Quarters, fq: str) -> dict[str, float]:
    """The income-statement leaves of one standalone quarter (USD millions; tax rate; shares)."""
    get = lambda c: data.flow(c, fq)  # noqa: E731
    revenue, operating, pretax, tax = get("revenue"), get("operating_income"), get("pretax_income"), get("income_tax")
    if None in (revenue, operating, pretax, tax):
        missing = [c for c, v in (("revenue", revenue), ("operating_income", operating), ("pretax_income", pretax), ("income_tax", tax)) if v is None]
        raise InputError(f"{data.company} {fq}: the filings lack {missing}", field="company")
    leaves = {"revenue": revenue}
    cost = get("cost_of_revenue")
    if cost is not None:
        leaves["cost_of_revenue"] = cost
    for line in OPEX_LINES:
        if (value := get(line)) is not None and not (line == "sga_expense" and {"selling_expense", "admin_expense"} <= set(leaves)):
            leaves[line] = value
    residual = revenue - sum(v for k, v in leaves.items() if k != "revenue") - operating
    leaves["other_operating_expense"] = round(residual, 6)
    nonop = pretax - operating
    income, expense = get("interest_income"), get("interest_expense")
    if income is not None and expense is not None:
        leaves["interest_income"], leaves["interest_expense"] = income, expense
        nonop -= income - expense
    leaves["other_nonoperating_income"] = round(nonop, 6)
    leaves["tax_rate"] = tax / pretax if pretax else 0.0
    leaves["shares"] = data.shares(fq)
    return leaves


def _formulas(leaves: dict[str, float]) -> dict[str, str]:
    costs = [k for k in ("cost_of_revenue", *OPEX_LINES, "other_operating_expense") if k in leaves]
    nonop = "interest_income - interest_expense + other_nonoperating_income" if "interest_income" in leaves else "other_nonoperating_income"
    return {
        "gross_profit": "revenue - cost_of_revenue" if "cost_of_revenue" in leaves else "revenue",
        "total_costs_and_expenses": " + ".join(costs),
        "operating_income": "revenue - total_costs_and_expenses",
        "nonoperating_income": nonop,
        "pretax_income": "operating_income + nonoperating_income",
        "tax_provision": "pretax_income * tax_rate",
        "net_income": "pretax_income - tax_provision",
        "eps": "net_income / shares",
    }


def _drivers(leaves: dict[str, float], refs: dict[str, dict[str, float]]) -> dict[str, dict[str, Any]]:
    drivers: dict[str, dict[str, Any]] = {"revenue_yoy": {"variable": "revenue", "type": "yoy", "constituents": ["revenue"],
                                                          "description": "Revenue YoY growth rate vs Q-4"}}
    for leaf in leaves:
        if leaf in ("cost_of_revenue", "selling_expense", "admin_expense", "sga_expense"):
            drivers[f"{leaf}_margin_delta_bps"] = {"variable": leaf, "type": "bps", "anchor": "revenue", "constituents": [leaf],
                                                   "description": f"{leaf} as a share of revenue, delta vs Q-4 in basis points"}
        elif leaf in ("rd_expense", "interest_income", "interest_expense"):
            drivers[f"{leaf}_yoy"] = {"variable": leaf, "type": "yoy", "constituents": [leaf], "description": f"{leaf} YoY growth rate vs Q-4"}
        elif leaf in ("other_operating_expense", "other_nonoperating_income"):
            drivers[f"{leaf}_abs"] = {"variable": leaf, "type": "absolute",
                                      "description": f"{leaf}: amount for the target quarter, USD millions (0 if none expected)"}
    drivers["tax_rate"] = {"variable": "tax_rate", "type": "rate_override", "constituents": ["tax_rate"],
                           "default": statistics.median(refs["tax_rate"].values()), "references": refs["tax_rate"],
                           "description": "Effective GAAP tax rate for the target quarter (decimal)"}
    drivers["shares_abs"] = {"variable": "shares", "type": "absolute", "default": statistics.median(refs["shares"].values()),
                             "references": refs["shares"], "description": "Diluted weighted-average shares, millions"}
    return drivers


def build_schema(store, company: str, target_fq: str) -> dict[str, Any]:
    """One schema dict in the release's format for `company` (ticker/CIK/name) and `target_fq`."""
    if not re.fullmatch(r"\d{4}Q[1-4]", str(target_fq)):
        raise InputError(f"quarter {target_fq!r} is not a fiscal quarter like 2026Q1", field="quarter")
    ticker = store.resolve_company(company)
    data = _Quarters(store, ticker)
    year_ago, last_q = _shift(target_fq, -4), _shift(target_fq, -1)
    leaves = quarter_leaves(data, year_ago)
    ttm_quarters = [_shift(last_q, -k) for k in range(4)]
    ttm = {c: [data.flow(c, q) for q in ttm_quarters] for c in ("pretax_income", "income_tax")}
    for concept, values in ttm.items():
        if None in values:
            missing = [q for q, v in zip(ttm_quarters, values) if v is None]
            raise InputError(f"{ticker} {target_fq}: no {concept} for {', '.join(missing)} (TTM reference)", field=concept)
    pretax_ttm, tax_ttm = sum(ttm["pretax_income"]), sum(ttm["income_tax"])
    last = quarter_leaves(data, last_q)
    refs = {
        "tax_rate": {"last_q": round(last["tax_rate"], 6), "ttm": round(tax_ttm / pretax_ttm, 6), "q4": round(leaves["tax_rate"], 6)},
        "shares": {"last_q": round(last["shares"], 4), "ttm": round(statistics.mean(data.shares(q) for q in ttm_quarters), 4),
                   "q4": round(leaves["shares"], 4)},
    }
    validation = {"baseline_fq_eps": data.eps(year_ago)}
    target_pretax = data.flow("pretax_income", target_fq)
    if target_pretax is not None:
        validation.update(target_fq_eps=data.eps(target_fq), target_fq_pretax=target_pretax)
    return {"ticker": ticker, "target_fq": target_fq, "baseline_fq": year_ago, "revenue_field": "revenue",
            "variables_baseline": leaves, "formulas": _formulas(leaves), "prediction_schema": _drivers(leaves, refs),
            "_validation": {k: v for k, v in validation.items() if v is not None}}


def actual_drivers(store, schema: dict[str, Any]) -> dict[str, float]:
    """The drivers the target quarter's filings imply (for checking a schema against reported EPS)."""
    data = _Quarters(store, schema["ticker"])
    actual, base = quarter_leaves(data, schema["target_fq"]), schema["variables_baseline"]
    out = {}
    for name, meta in schema["prediction_schema"].items():
        var = meta["variable"]
        if meta["type"] == "yoy":
            out[name] = actual[var] / base[var] - 1 if base[var] else 0.0
        elif meta["type"] == "bps":
            out[name] = (actual[var] / actual[meta["anchor"]] - base[var] / base[meta["anchor"]]) * 10_000
        else:
            out[name] = actual[var]
    return out
