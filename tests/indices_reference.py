"""Independent recomputation of index values for tests/test_indices_values.py (not collected by pytest).

Reads the raw canonical facts table by DATES (start/end), not through FactStore or the formula
evaluator: flows are the reported window (a filed three-month value when there is one, else the
difference of year-to-date windows), balances are the instant facts at a date. `Ref` is one company
and period; `REFERENCE[index_id](ref)` is a hand-written Python expression of each index's meaning.
"""
from __future__ import annotations

import datetime as dt

import pandas as pd

# Interest-bearing liabilities beyond financial debt, listed by hand (paper Appendix A.1: borrowings, bonds,
# leases, long-term payables and current maturities of non-current liabilities; notes payable are not).
# Financial debt itself follows the balance-sheet presentation rule of issue 11 (`Ref.debt`).
LEASES_AND_PAYABLES = ["lease_liabilities", "lease_liabilities_current", "finance_lease_liabilities",
                       "finance_lease_liabilities_current", "long_term_payables"]
SHARES = {"shares_basic", "shares_diluted"}
EPS = {"eps_basic": "shares_basic", "eps_diluted": "shares_diluted"}


class Missing(Exception):
    """A fact the reference computation needs is not in the table."""


class Raw:
    """Facts of one company, indexed by (concept, start, end) for windows and (concept, end) for instants."""

    def __init__(self, facts: pd.DataFrame, company: str):
        df = facts[(facts["company"] == company) & (facts["scope"] == "consolidated")].copy()
        df["s"] = pd.to_datetime(df["start"].replace("", None), errors="coerce").dt.date
        df["e"] = pd.to_datetime(df["end"]).dt.date
        df = df.sort_values("filed", ascending=False, kind="stable")
        self.windows, self.instants, self.dates = {}, {}, set()
        for c, s, e, v in zip(df["concept"], df["s"], df["e"], df["value"]):
            if pd.isna(s):
                self.instants.setdefault((c, e), float(v))
                self.dates.add(e)
            else:
                self.windows.setdefault((c, s, e), float(v))
        # Fiscal calendar: annual windows (350-380 days) labelled by the year they end in.
        ann = sorted({(s, e) for (_, s, e) in self.windows if 350 <= (e - s).days <= 380}, key=lambda w: w[1])
        self.fy = {}
        for s, e in ann:
            if not any(abs((e - e2).days) <= 7 for _, e2 in self.fy.values()):
                self.fy[e.year] = (s, e)
        self.quarter_end = {}
        for label, (fs, _) in self.fy.items():
            for (_, s, e) in self.windows:
                if s == fs and 80 <= (e - s).days <= 290:
                    self.quarter_end[(label, round((e - s).days / 91.3))] = e
        for label, (fs, fe) in list(self.fy.items()):
            self.quarter_end[(label, 4)] = fe
        # A year in progress (its annual window is not filed yet): start = the day after the last year end.
        last = max(self.fy)
        nxt = self.fy[last][1] + dt.timedelta(days=1)
        for (_, s, e) in self.windows:
            if s == nxt and 80 <= (e - s).days <= 290:
                self.fy.setdefault(last + 1, (nxt, None))
                self.quarter_end[(last + 1, round((e - s).days / 91.3))] = e

    def start(self, year: int) -> dt.date:
        if year not in self.fy:
            raise Missing(f"fiscal year {year}")
        return self.fy[year][0]

    def qend(self, year: int, q: int) -> dt.date:
        if (year, q) not in self.quarter_end:
            raise Missing(f"quarter end FY{year}Q{q}")
        return self.quarter_end[(year, q)]

    def window(self, concept: str, s: dt.date, e: dt.date) -> float:
        if (concept, s, e) not in self.windows:
            raise Missing(f"{concept} {s}..{e}")
        return self.windows[(concept, s, e)]

    def instant(self, concept: str, e: dt.date) -> float:
        if (concept, e) not in self.instants:
            raise Missing(f"{concept} at {e}")
        return self.instants[(concept, e)]

    def ytd(self, concept: str, year: int, q: int) -> float:
        return self.window(concept, self.start(year), self.qend(year, q))

    def quarter(self, concept: str, year: int, q: int) -> float:
        """Standalone quarter: the filed three-month value if any, else YTD(q) - YTD(q-1); EPS and
        weighted shares are not additive (README "Conventions: splits and EPS"): EPS = the quarter's net
        income / the quarter's shares, shares = share-days of the YTD windows over the quarter's days."""
        if q == 1:
            return self.ytd(concept, year, 1)
        qs = self.qend(year, q - 1) + dt.timedelta(days=1)
        direct = self.windows.get((concept, qs, self.qend(year, q)))
        if direct is not None:
            return direct
        if concept in EPS:
            return self.quarter(self.numerator(year, q), year, q) / self.quarter(EPS[concept], year, q)
        if concept in SHARES:
            d1, d0 = self.days_to(year, q), self.days_to(year, q - 1)
            return (self.ytd(concept, year, q) * d1 - self.ytd(concept, year, q - 1) * d0) / (d1 - d0)
        return self.ytd(concept, year, q) - self.ytd(concept, year, q - 1)

    def days_to(self, year: int, q: int) -> int:
        """Days of the year-to-date window ending at quarter q (both ends included)."""
        return (self.qend(year, q) - self.start(year)).days + 1

    def numerator(self, year: int, q: int) -> str:
        """EPS numerator: net income attributable to the parent, else net income when that line is not filed."""
        try:
            self.ytd("net_income_parent", year, q)
            return "net_income_parent"
        except Missing:
            return "net_income"


class Ref:
    """One company and period (kind FY | Q | YTD | TTM, year, quarter), balances at end or begin."""

    def __init__(self, raw: Raw, kind: str, year: int, q: int, basis: str = "end"):
        self.raw, self.kind, self.year, self.q, self.basis = raw, kind, year, q, basis

    @classmethod
    def parse(cls, raw: Raw, label: str) -> "Ref":
        y = int(label[2:6])
        rest = label[6:]
        if not rest:
            return cls(raw, "FY", y, 4)
        if rest == "H1":
            return cls(raw, "YTD", y, 2)
        if rest.endswith("TTM"):
            return cls(raw, "TTM", y, int(rest[1]))
        if rest.endswith("YTD"):
            return cls(raw, "YTD", y, int(rest[1]))
        return cls(raw, "Q", y, int(rest[1]))

    # neighbours
    @property
    def py(self) -> "Ref":
        return Ref(self.raw, self.kind, self.year - 1, self.q, self.basis)

    @property
    def pq(self) -> "Ref":
        assert self.kind == "Q"
        return Ref(self.raw, "Q", self.year - 1, 4) if self.q == 1 else Ref(self.raw, "Q", self.year, self.q - 1)

    @property
    def sq(self) -> "Ref":
        return Ref(self.raw, "Q", self.year, self.q, self.basis)

    @property
    def ttm(self) -> "Ref":
        return Ref(self.raw, "FY", self.year, 4) if self.q == 4 else Ref(self.raw, "TTM", self.year, self.q)

    @property
    def ytd(self) -> "Ref":
        return Ref(self.raw, "FY", self.year, 4) if self.q == 4 else Ref(self.raw, "YTD", self.year, self.q)

    @property
    def B(self) -> "Ref":
        return Ref(self.raw, self.kind, self.year, self.q, "begin")

    @property
    def months(self) -> int:
        return {"FY": 12, "TTM": 12, "Q": 3}.get(self.kind, 3 * self.q)

    @property
    def days(self) -> int:
        return 30 * self.months

    # values
    def f(self, concept: str) -> float:
        """Flow over the period."""
        r, y, q = self.raw, self.year, self.q
        if self.kind == "FY":
            return r.ytd(concept, y, 4)
        if self.kind == "YTD":
            return r.ytd(concept, y, q)
        if self.kind == "Q":
            return r.quarter(concept, y, q)
        if concept in EPS:  # TTM EPS = TTM net income / TTM time-weighted shares
            return self.f(r.numerator(y, q)) / self.f(EPS[concept])
        if concept in SHARES:  # TTM shares: share-days of YTD(y, q) + FY(y-1) - YTD(y-1, q) over their days
            parts = [(1, y, q), (1, y - 1, 4), (-1, y - 1, q)]
            return sum(k * r.ytd(concept, a, b) * r.days_to(a, b) for k, a, b in parts) / sum(k * r.days_to(a, b) for k, a, b in parts)
        return r.ytd(concept, y, q) + r.ytd(concept, y - 1, 4) - r.ytd(concept, y - 1, q)

    def date(self) -> dt.date:
        y, q = self.year, self.q
        if self.basis == "end":
            return self.raw.qend(y, q)
        if self.kind in ("FY", "YTD"):
            return self.raw.qend(y - 1, 4)
        if self.kind == "TTM":
            return self.raw.qend(y - 1, q)
        return self.raw.qend(y - 1, 4) if q == 1 else self.raw.qend(y, q - 1)

    def s(self, concept: str) -> float:
        """Balance at the period end (or beginning, for a `.B` view)."""
        return self.raw.instant(concept, self.date())

    def o(self, concept: str) -> float:
        """Balance, or 0 when the balance sheet of that date does not show the line."""
        d = self.date()
        if d not in self.raw.dates:
            raise Missing(f"balance sheet at {d}")
        return self.raw.instants.get((concept, d), 0.0)

    def avg(self, concept: str) -> float:
        return (self.B.s(concept) + self.s(concept)) / 2

    def has(self, concept: str) -> bool:
        d = self.date()
        if d not in self.raw.dates:
            raise Missing(f"balance sheet at {d}")
        return (concept, d) in self.raw.instants

    def current_debt(self) -> float:
        """The total current-debt line when shown, else its components (never both: issue 11)."""
        if self.has("debt_current"):
            return self.s("debt_current") + self.o("vie_debt_current")
        return self.o("short_term_debt") + self.o("short_term_bank_loans") + self.o("current_portion_long_term_debt") \
            + self.o("convertible_debt_current") + self.o("vie_debt_current")

    def noncurrent_debt(self) -> float:
        """Non-current long-term debt; a long-term-debt total only when no non-current line is shown (less the
        current portion when that is reported beside it), plus bonds."""
        if self.has("long_term_debt"):
            base = self.s("long_term_debt")
        elif self.has("long_term_debt_total") and self.has("current_portion_long_term_debt"):
            base = self.s("long_term_debt_total") - self.s("current_portion_long_term_debt")
        else:
            base = self.o("long_term_debt_total")
        return base + self.o("bonds_payable") + self.o("vie_debt")

    def debt(self) -> float:
        """A single 'debt and capital lease obligations' total when the balance sheet shows one, else the lines."""
        if self.has("debt_and_lease_total"):
            return self.s("debt_and_lease_total")
        return self.current_debt() + self.noncurrent_debt()

    def ib(self) -> float:
        self.s("total_liabilities")
        return self.debt() + sum(self.o(c) for c in LEASES_AND_PAYABLES) - self.flc_inside_debt()

    def flc_inside_debt(self) -> float:
        """A current finance lease already inside a one-line short-term debt total (GOOGL 2015-16: short-term debt
        3,225 M = paper + current notes + 225 M capital leases) is not added a second time."""
        return self.o("finance_lease_liabilities_current") if self.has("debt_current") else 0.0


# ---- composite helpers (index meanings written out in Python) --------------------------------------
def first_flow(r, *concepts):
    """EPS numerator: net income available to common stockholders when filed (after preferred dividends), else to the parent."""
    for c in concepts[:-1]:
        try:
            return r.f(c)
        except Missing:
            pass
    return r.f(concepts[-1])


def gp(r): return r.f("revenue") - r.f("cost_of_revenue")
def ebit(r): return r.f("pretax_income") + r.f("interest_expense")
def ebitda(r): return r.f("operating_income") + r.f("depreciation_amortization")
def nopat(r): return r.f("operating_income") * (1 - r.f("income_tax") / r.f("pretax_income"))
def wc(r): return r.s("current_assets") - r.s("current_liabilities")
def wc_change(r): return wc(r) - wc(r.B)
def fcf(r): return r.f("operating_cash_flow") - r.f("capex")
def fcff(r): return nopat(r) + r.f("depreciation_amortization") - r.f("capex") - wc_change(r)
def ic(r): return r.s("equity_parent") + r.ib()  # = parent equity + total liabilities - non-interest-bearing
def fin_debt(r): return r.debt()
def net_fin_debt(r): return fin_debt(r) - r.s("cash") - r.o("short_term_investments")
def three(r): return r.f("selling_expense") + r.f("admin_expense") + r.f("financial_expense")
def period_exp(r): return three(r) + r.f("rd_expense")
def core(r): return gp(r) - r.f("taxes_and_surcharges") - period_exp(r)
def turnover(r, num, den): return r.f(num) / r.avg(den)
def days(r, num, den): return r.days / turnover(r, num, den)
def yoy(cur, prev): return (cur - prev) / abs(prev)
def growth(fn): return lambda r: yoy(fn(r), fn(r.py))
def reinvest(r): return r.f("capex") - r.f("depreciation_amortization") + wc_change(r)
def tangible_na(r): return r.s("equity_parent") - r.s("intangible_assets") - r.s("goodwill") - r.s("deferred_tax_assets")


def flow(c): return lambda r: r.f(c)
def stock(c): return lambda r: r.s(c)


REFERENCE = {
    # profitability
    "gross_profit_derived": gp,
    "gross_margin": lambda r: gp(r) / r.f("revenue"),
    "cost_of_revenue_ratio": lambda r: r.f("cost_of_revenue") / r.f("revenue"),
    "operating_margin": lambda r: r.f("operating_income") / r.f("revenue"),
    "pretax_margin": lambda r: r.f("pretax_income") / r.f("revenue"),
    "net_margin": lambda r: r.f("net_income") / r.f("revenue"),
    "net_margin_parent": lambda r: r.f("net_income_parent") / r.f("revenue"),
    "rd_expense_ratio": lambda r: r.f("rd_expense") / r.f("revenue"),
    "sga_expense_ratio": lambda r: r.f("sga_expense") / r.f("revenue"),
    "selling_expense_ratio": lambda r: r.f("selling_expense") / r.f("revenue"),
    "admin_expense_ratio": lambda r: r.f("admin_expense") / r.f("revenue"),
    "operating_expense_ratio": lambda r: r.f("operating_expenses") / r.f("revenue"),
    "sbc_to_revenue": lambda r: r.f("stock_based_compensation") / r.f("revenue"),
    "da_to_revenue": lambda r: r.f("depreciation_amortization") / r.f("revenue"),
    "effective_tax_rate": lambda r: r.f("income_tax") / r.f("pretax_income"),
    "tax_burden": lambda r: r.f("net_income") / r.f("pretax_income"),
    "ebit": ebit,
    "interest_burden": lambda r: r.f("pretax_income") / ebit(r),
    "ebit_margin": lambda r: ebit(r) / r.f("revenue"),
    "ebitda": ebitda,
    "ebitda_margin": lambda r: ebitda(r) / r.f("revenue"),
    "nopat": nopat,
    "nopat_margin": lambda r: nopat(r) / r.f("revenue"),
    "operating_income_to_pretax": lambda r: r.f("operating_income") / r.f("pretax_income"),
    "nonoperating_to_pretax": lambda r: r.f("nonoperating_income") / r.f("pretax_income"),
    "parent_share_of_net_income": lambda r: r.f("net_income_parent") / r.f("net_income"),
    "minority_share_of_net_income": lambda r: (r.f("net_income") - r.f("net_income_parent")) / r.f("net_income"),
    "roe_avg": lambda r: r.f("net_income_parent") / r.avg("equity_parent"),
    "roe_end": lambda r: r.f("net_income_parent") / r.s("equity_parent"),
    "roe_total_equity_avg": lambda r: r.f("net_income") / r.avg("total_equity"),
    "roe_annualized": lambda r: r.f("net_income_parent") * 12 / r.months / r.avg("equity_parent"),
    "roe_standalone_quarter": lambda r: r.sq.f("net_income_parent") / r.sq.avg("equity_parent"),
    "roe_ttm": lambda r: r.ttm.f("net_income_parent") / r.ttm.avg("equity_parent"),
    "roa_avg": lambda r: r.f("net_income") / r.avg("total_assets"),
    "roa_end": lambda r: r.f("net_income") / r.s("total_assets"),
    "roa_annualized": lambda r: r.f("net_income") * 12 / r.months / r.avg("total_assets"),
    "roa_ttm": lambda r: r.ttm.f("net_income") / r.ttm.avg("total_assets"),
    "ebit_to_avg_assets": lambda r: ebit(r) / r.avg("total_assets"),
    "roic": lambda r: nopat(r) / ((ic(r.B) + ic(r)) / 2),
    "roic_ttm": lambda r: nopat(r.ttm) / ((ic(r.ttm.B) + ic(r.ttm)) / 2),
    "roce": lambda r: r.f("operating_income") / (r.s("total_assets") - r.s("current_liabilities")),
    "gross_margin_standalone": lambda r: gp(r.sq) / r.sq.f("revenue"),
    "operating_margin_standalone": lambda r: r.sq.f("operating_income") / r.sq.f("revenue"),
    "net_margin_standalone": lambda r: r.sq.f("net_income") / r.sq.f("revenue"),
    "gross_margin_ttm": lambda r: gp(r.ttm) / r.ttm.f("revenue"),
    "operating_margin_ttm": lambda r: r.ttm.f("operating_income") / r.ttm.f("revenue"),
    "net_margin_ttm": lambda r: r.ttm.f("net_income") / r.ttm.f("revenue"),
    "ebitda_margin_ttm": lambda r: ebitda(r.ttm) / r.ttm.f("revenue"),
    "ebitda_ttm": lambda r: ebitda(r.ttm),
    "ebit_ttm": lambda r: ebit(r.ttm),
    "nopat_ttm": lambda r: nopat(r.ttm),
    # growth
    **{f"{c}_yoy": growth(flow(c)) for c in ["revenue", "cost_of_revenue", "operating_income", "pretax_income", "net_income",
                                              "net_income_parent", "eps_diluted", "eps_basic", "operating_cash_flow",
                                              "rd_expense", "operating_expenses", "capex"]},
    **{f"{c}_yoy": growth(stock(c)) for c in ["total_assets", "total_liabilities", "equity_parent", "total_equity",
                                               "inventory", "accounts_receivable", "cash"]},
    "gross_profit_derived_yoy": growth(gp),
    "free_cash_flow_yoy": growth(fcf),
    "ebitda_yoy": growth(ebitda),
    "ocf_to_net_income_yoy": growth(lambda r: r.f("operating_cash_flow") / r.f("net_income")),
    **{f"{c}_standalone_yoy": (lambda c: lambda r: yoy(r.sq.f(c), r.sq.py.f(c)))(c)
       for c in ["revenue", "operating_income", "net_income", "net_income_parent", "operating_cash_flow"]},
    "gross_profit_derived_standalone_yoy": lambda r: yoy(gp(r.sq), gp(r.sq.py)),
    **{f"{c}_qoq": (lambda c: lambda r: yoy(r.sq.f(c), r.sq.pq.f(c)))(c)
       for c in ["revenue", "operating_income", "net_income", "net_income_parent", "operating_cash_flow"]},
    "gross_profit_derived_qoq": lambda r: yoy(gp(r.sq), gp(r.sq.pq)),
    **{f"{c}_ttm_yoy": (lambda c: lambda r: yoy(r.ttm.f(c), r.ttm.py.f(c)))(c)
       for c in ["revenue", "net_income_parent", "operating_cash_flow"]},
    **{f"{c}_vs_year_start": (lambda c: lambda r: yoy(r.s(c), r.ytd.B.s(c)))(c)
       for c in ["total_assets", "equity_parent", "total_liabilities"]},
    "revenue_yoy_change": lambda r: r.f("revenue") - r.py.f("revenue"),
    "net_income_parent_yoy_change": lambda r: r.f("net_income_parent") - r.py.f("net_income_parent"),
    # efficiency
    "inventory_turnover": lambda r: turnover(r, "cost_of_revenue", "inventory"),
    "inventory_days": lambda r: days(r, "cost_of_revenue", "inventory"),
    "receivables_turnover": lambda r: turnover(r, "revenue", "accounts_receivable"),
    "receivables_days": lambda r: days(r, "revenue", "accounts_receivable"),
    "payables_turnover": lambda r: turnover(r, "cost_of_revenue", "accounts_payable"),
    "payables_days": lambda r: days(r, "cost_of_revenue", "accounts_payable"),
    "total_asset_turnover": lambda r: turnover(r, "revenue", "total_assets"),
    "total_asset_days": lambda r: days(r, "revenue", "total_assets"),
    "current_asset_turnover": lambda r: turnover(r, "revenue", "current_assets"),
    "current_asset_days": lambda r: days(r, "revenue", "current_assets"),
    "fixed_asset_turnover": lambda r: turnover(r, "revenue", "ppe_net"),
    "equity_turnover": lambda r: turnover(r, "revenue", "equity_parent"),
    "cash_turnover": lambda r: turnover(r, "revenue", "cash"),
    "net_asset_turnover": lambda r: r.f("revenue") * 2 / (r.B.s("total_assets") - r.B.s("total_liabilities") + r.s("total_assets") - r.s("total_liabilities")),
    "working_capital_turnover": lambda r: r.f("revenue") / ((wc(r.B) + wc(r)) / 2),
    "cash_conversion_cycle": lambda r: days(r, "cost_of_revenue", "inventory") + days(r, "revenue", "accounts_receivable") - days(r, "cost_of_revenue", "accounts_payable"),
    "operating_cycle": lambda r: days(r, "cost_of_revenue", "inventory") + days(r, "revenue", "accounts_receivable"),
    "inventory_turnover_annualized": lambda r: r.f("cost_of_revenue") * 12 / r.months / r.avg("inventory"),
    "receivables_turnover_annualized": lambda r: r.f("revenue") * 12 / r.months / r.avg("accounts_receivable"),
    "total_asset_turnover_annualized": lambda r: r.f("revenue") * 12 / r.months / r.avg("total_assets"),
    "inventory_turnover_ttm": lambda r: turnover(r.ttm, "cost_of_revenue", "inventory"),
    "receivables_turnover_ttm": lambda r: turnover(r.ttm, "revenue", "accounts_receivable"),
    "payables_turnover_ttm": lambda r: turnover(r.ttm, "cost_of_revenue", "accounts_payable"),
    "total_asset_turnover_ttm": lambda r: turnover(r.ttm, "revenue", "total_assets"),
    "capital_intensity": lambda r: r.s("total_assets") / r.f("revenue"),
    "inventory_days_end": lambda r: r.s("inventory") / r.f("cost_of_revenue") * r.days,
    "receivables_days_end": lambda r: r.s("accounts_receivable") / r.f("revenue") * r.days,
    # liquidity
    "working_capital": wc,
    "current_ratio": lambda r: r.s("current_assets") / r.s("current_liabilities"),
    "quick_ratio": lambda r: (r.s("current_assets") - r.s("inventory")) / r.s("current_liabilities"),
    "conservative_quick_ratio": lambda r: (r.s("cash") + r.s("short_term_investments") + r.s("accounts_receivable")) / r.s("current_liabilities"),
    "cash_ratio": lambda r: r.s("cash") / r.s("current_liabilities"),
    "cash_and_investments_ratio": lambda r: (r.s("cash") + r.s("short_term_investments")) / r.s("current_liabilities"),
    "cash_and_short_term_investments": lambda r: r.s("cash") + r.s("short_term_investments"),
    "operating_cash_flow_ratio": lambda r: r.f("operating_cash_flow") / r.s("current_liabilities"),
    "ocf_to_avg_current_liabilities": lambda r: r.f("operating_cash_flow") / r.avg("current_liabilities"),
    "working_capital_to_assets": lambda r: wc(r) / r.s("total_assets"),
    "cash_to_total_assets": lambda r: r.s("cash") / r.s("total_assets"),
    "current_assets_to_total_assets": lambda r: r.s("current_assets") / r.s("total_assets"),
    "inventory_to_current_assets": lambda r: r.s("inventory") / r.s("current_assets"),
    "receivables_to_current_assets": lambda r: r.s("accounts_receivable") / r.s("current_assets"),
    "current_liabilities_to_total_liabilities": lambda r: r.s("current_liabilities") / r.s("total_liabilities"),
    "noncurrent_assets_derived": lambda r: r.s("total_assets") - r.s("current_assets"),
    "noncurrent_liabilities_derived": lambda r: r.s("total_liabilities") - r.s("current_liabilities"),
    "working_capital_change": wc_change,
    "operating_working_capital": lambda r: r.s("accounts_receivable") + r.s("inventory") - r.s("accounts_payable"),
    "operating_working_capital_to_revenue": lambda r: (r.s("accounts_receivable") + r.s("inventory") - r.s("accounts_payable")) / r.f("revenue"),
    "defensive_interval_days": lambda r: (r.s("cash") + r.s("short_term_investments") + r.s("accounts_receivable"))
        / ((r.f("cost_of_revenue") + r.f("operating_expenses") - r.f("depreciation_amortization")) / r.days),
    # leverage
    "debt_to_assets": lambda r: r.s("total_liabilities") / r.s("total_assets"),
    "debt_to_equity": lambda r: r.s("total_liabilities") / r.s("total_equity"),
    "debt_to_equity_parent": lambda r: r.s("total_liabilities") / r.s("equity_parent"),
    "equity_multiplier": lambda r: r.s("total_assets") / r.s("total_equity"),
    "equity_multiplier_avg": lambda r: r.avg("total_assets") / r.avg("equity_parent"),
    "equity_ratio": lambda r: r.s("total_equity") / r.s("total_assets"),
    "financial_debt": fin_debt,
    "current_debt": lambda r: r.current_debt(),
    "noncurrent_debt": lambda r: r.noncurrent_debt(),
    "financial_debt_with_leases": lambda r: fin_debt(r) + r.o("lease_liabilities_current") + r.o("lease_liabilities")
    + r.o("finance_lease_liabilities_current") + r.o("finance_lease_liabilities") - r.flc_inside_debt(),
    "net_financial_debt": net_fin_debt,
    "financial_debt_to_equity": lambda r: fin_debt(r) / r.s("total_equity"),
    "debt_to_capital": lambda r: fin_debt(r) / (fin_debt(r) + r.s("total_equity")),
    "long_term_debt_to_equity": lambda r: r.noncurrent_debt() / r.s("total_equity"),  # issue 11: non-current debt, not one tag
    "financial_debt_to_ebitda": lambda r: fin_debt(r) / ebitda(r),
    "financial_debt_to_ebitda_ttm": lambda r: fin_debt(r) / ebitda(r.ttm),
    "net_debt_to_ebitda_ttm": lambda r: net_fin_debt(r) / ebitda(r.ttm),
    "interest_coverage": lambda r: ebit(r) / r.f("interest_expense"),
    "ebitda_interest_coverage": lambda r: ebitda(r) / r.f("interest_expense"),
    "minority_interest_share": lambda r: r.s("minority_interest") / r.s("total_equity"),
    "equity_parent_share": lambda r: r.s("equity_parent") / r.s("total_equity"),
    "ocf_to_total_liabilities": lambda r: r.f("operating_cash_flow") / r.s("total_liabilities"),
    "ocf_to_avg_liabilities": lambda r: r.f("operating_cash_flow") / r.avg("total_liabilities"),
    "ocf_to_financial_debt": lambda r: r.f("operating_cash_flow") / fin_debt(r),
    "lease_liabilities_total": lambda r: r.s("lease_liabilities_current") + r.s("lease_liabilities")
    + r.o("finance_lease_liabilities_current") + r.o("finance_lease_liabilities"),
    "goodwill_to_equity": lambda r: r.s("goodwill") / r.s("equity_parent"),
    "tangible_assets": lambda r: r.s("total_assets") - r.s("goodwill") - r.s("intangible_assets"),
    "liabilities_to_tangible_assets": lambda r: r.s("total_liabilities") / (r.s("total_assets") - r.s("goodwill") - r.s("intangible_assets")),
    "interest_bearing_debt": lambda r: r.ib(),
    "non_interest_bearing_liabilities_total": lambda r: r.s("total_liabilities") - r.ib(),
    "interest_bearing_debt_ratio": lambda r: r.ib() / r.s("total_liabilities"),
    "net_debt": lambda r: r.ib() - r.s("cash"),
    # cash flow
    "free_cash_flow": fcf,
    "fcff": fcff,
    "fcff_ttm": lambda r: fcff(r.ttm),
    "free_cash_flow_ttm": lambda r: fcf(r.ttm),
    "free_cash_flow_standalone": lambda r: fcf(r.sq),
    "fcf_margin": lambda r: fcf(r) / r.f("revenue"),
    "fcf_margin_ttm": lambda r: fcf(r.ttm) / r.ttm.f("revenue"),
    "fcf_conversion": lambda r: fcf(r) / r.f("net_income_parent"),
    "ocf_to_net_income": lambda r: r.f("operating_cash_flow") / r.f("net_income"),
    "ocf_margin": lambda r: r.f("operating_cash_flow") / r.f("revenue"),
    "ocf_margin_ttm": lambda r: r.ttm.f("operating_cash_flow") / r.ttm.f("revenue"),
    "capex_to_revenue": lambda r: r.f("capex") / r.f("revenue"),
    "capex_to_ocf": lambda r: r.f("capex") / r.f("operating_cash_flow"),
    "capex_to_da": lambda r: r.f("capex") / r.f("depreciation_amortization"),
    "net_cash_flow_total": lambda r: r.f("operating_cash_flow") + r.f("investing_cash_flow") + r.f("financing_cash_flow"),
    "investing_cash_flow_share": lambda r: r.f("investing_cash_flow") / (r.f("operating_cash_flow") + r.f("investing_cash_flow") + r.f("financing_cash_flow")),
    **{f"{c}_ttm": (lambda c: lambda r: r.ttm.f(c))(c) for c in ["operating_cash_flow", "capex", "investing_cash_flow"]},
    **{f"{c}_standalone": (lambda c: lambda r: r.sq.f(c))(c) for c in ["operating_cash_flow", "capex", "investing_cash_flow"]},
    "dividend_payout_ratio": lambda r: r.f("dividends_paid") / r.f("net_income_parent"),
    "total_shareholder_payout": lambda r: r.f("dividends_paid") + r.f("share_repurchase"),
    "total_payout_ratio": lambda r: (r.f("dividends_paid") + r.f("share_repurchase")) / r.f("net_income_parent"),
    "payout_to_fcf": lambda r: (r.f("dividends_paid") + r.f("share_repurchase")) / fcf(r),
    "cash_return_on_assets": lambda r: r.f("operating_cash_flow") / r.avg("total_assets"),
    "cash_return_on_equity": lambda r: r.f("operating_cash_flow") / r.avg("equity_parent"),
    "sbc_to_ocf": lambda r: r.f("stock_based_compensation") / r.f("operating_cash_flow"),
    "cash_flow_adequacy": lambda r: r.f("operating_cash_flow") / (r.f("capex") + r.f("dividends_paid")),
    # per share
    "eps_basic_computed": lambda r: first_flow(r, "net_income_common_basic", "net_income_parent") / r.f("shares_basic"),
    "eps_diluted_computed": lambda r: first_flow(r, "net_income_common_diluted", "net_income_common_basic", "net_income_parent")
    / r.f("shares_diluted"),
    "book_value_per_share": lambda r: r.s("equity_parent") / r.s("shares_outstanding"),
    "tangible_book_value_per_share": lambda r: (r.s("equity_parent") - r.s("goodwill") - r.s("intangible_assets")) / r.s("shares_outstanding"),
    "cash_per_share": lambda r: r.s("cash") / r.s("shares_outstanding"),
    "revenue_per_share": lambda r: r.f("revenue") / r.f("shares_diluted"),
    "ocf_per_share": lambda r: r.f("operating_cash_flow") / r.f("shares_diluted"),
    "fcf_per_share": lambda r: fcf(r) / r.f("shares_diluted"),
    "ebitda_per_share": lambda r: ebitda(r) / r.f("shares_diluted"),
    "dividends_per_share_computed": lambda r: r.f("dividends_paid") / r.f("shares_basic"),
    "retained_earnings_per_share": lambda r: r.s("retained_earnings") / r.s("shares_outstanding"),
    "eps_ttm_computed": lambda r: r.ttm.f("net_income_parent") / r.f("shares_diluted"),
    "revenue_per_share_ttm": lambda r: r.ttm.f("revenue") / r.f("shares_diluted"),
    "ocf_per_share_ttm": lambda r: r.ttm.f("operating_cash_flow") / r.f("shares_diluted"),
    "dilution_ratio": lambda r: r.f("shares_diluted") / r.f("shares_basic"),
    # valuation inputs
    "invested_capital_equity": ic,
    "invested_capital_financing": lambda r: r.s("total_equity") + r.ib(),
    "avg_invested_capital": lambda r: (ic(r.B) + ic(r)) / 2,
    "invested_capital_turnover": lambda r: r.f("revenue") / ((ic(r.B) + ic(r)) / 2),
    "capital_employed": lambda r: r.s("total_assets") - r.s("current_liabilities"),
    "book_enterprise_value": lambda r: r.s("total_equity") + r.ib() - r.s("cash"),
    "reinvestment": reinvest,
    "reinvestment_rate": lambda r: reinvest(r) / nopat(r),
    "ebitda_minus_capex": lambda r: ebitda(r) - r.f("capex"),
    "interest_bearing_debt_to_assets": lambda r: r.ib() / r.s("total_assets"),
    "interest_bearing_debt_to_invested_capital": lambda r: r.ib() / ic(r),
    "net_debt_to_equity": lambda r: (r.ib() - r.s("cash")) / r.s("equity_parent"),
    "retained_earnings_to_equity": lambda r: r.s("retained_earnings") / r.s("equity_parent"),
    "invested_capital_equity_yoy": growth(ic),
    "nopat_to_avg_invested_capital_annualized": lambda r: nopat(r) * 12 / r.months / ((ic(r.B) + ic(r)) / 2),
    # CAS-specific
    "operating_expenses_ttm": lambda r: three(r.ttm),
    "three_expenses": three,
    "three_expenses_ratio": lambda r: three(r) / r.f("revenue"),
    "three_expenses_ratio_ttm": lambda r: three(r.ttm) / r.ttm.f("revenue"),
    "period_expenses": period_exp,
    "period_expense_ratio": lambda r: period_exp(r) / r.f("revenue"),
    "period_expenses_ttm": lambda r: period_exp(r.ttm),
    "financial_expense_ratio": lambda r: r.f("financial_expense") / r.f("revenue"),
    "taxes_and_surcharges_ratio": lambda r: r.f("taxes_and_surcharges") / r.f("revenue"),
    "core_profit": core,
    "core_profit_margin": lambda r: core(r) / r.f("revenue"),
    "core_profit_to_pretax": lambda r: core(r) / r.f("pretax_income"),
    "core_profit_ttm": lambda r: core(r.ttm),
    "core_profit_yoy": growth(core),
    "investment_income_to_pretax": lambda r: r.f("investment_income") / r.f("pretax_income"),
    "tangible_net_assets": tangible_na,
    "tangible_net_assets_yoy": growth(tangible_na),
    "retained_earnings_total": lambda r: r.s("surplus_reserve") + r.s("retained_earnings"),
    "retained_earnings_total_per_share": lambda r: (r.s("surplus_reserve") + r.s("retained_earnings")) / r.s("shares_outstanding"),
    "capital_reserve_per_share": lambda r: r.s("capital_reserve") / r.s("shares_outstanding"),
    "surplus_reserve_per_share": lambda r: r.s("surplus_reserve") / r.s("shares_outstanding"),
    "notes_and_accounts_payable": lambda r: r.s("notes_payable") + r.s("accounts_payable"),
    "notes_and_accounts_receivable": lambda r: r.s("notes_receivable") + r.s("accounts_receivable"),
    "advances_and_contract_liabilities": lambda r: r.s("advances_from_customers") + r.s("contract_liabilities"),
    "advances_contract_liab_turnover_days": lambda r: r.days / (r.f("revenue") / ((r.B.s("advances_from_customers") + r.B.s("contract_liabilities") + r.s("advances_from_customers") + r.s("contract_liabilities")) / 2)),
    "notes_ar_turnover": lambda r: r.f("revenue") / ((r.B.s("notes_receivable") + r.B.s("accounts_receivable") + r.s("notes_receivable") + r.s("accounts_receivable")) / 2),
    "notes_ap_turnover": lambda r: r.f("cost_of_revenue") / ((r.B.s("notes_payable") + r.B.s("accounts_payable") + r.s("notes_payable") + r.s("accounts_payable")) / 2),
    "ebitda_cas": lambda r: ebitda(r) + r.f("interest_expense"),
    "ebitda_cas_ttm": lambda r: ebitda(r.ttm) + r.ttm.f("interest_expense"),
    "long_term_capital_debt_ratio": lambda r: r.s("noncurrent_liabilities") / (r.s("noncurrent_liabilities") + r.s("total_equity")),
    "long_term_asset_fit_ratio": lambda r: (r.s("total_equity") + r.s("noncurrent_liabilities")) / r.s("noncurrent_assets"),
    "payroll_and_taxes_payable": lambda r: r.s("payroll_payable") + r.s("taxes_payable"),
    "cash_to_interest_bearing_debt": lambda r: r.s("cash") / r.ib(),
    "interest_bearing_debt_yoy": growth(lambda r: r.ib()),
    "operating_expenses_ttm_ratio": lambda r: three(r.ttm) / r.ttm.f("revenue"),
}
