"""Period algebra and index definitions written from the textbook definitions, on top of rawfacts.py.

No ledgerlm import: formulas are hand-written Python here (not read from the registry YAML), so a wrong
registry formula, tag mapping or period rule shows up as a mismatch.

Conventions (DESIGN.md "Conventions every answer states", read as a spec):
- flows: FY / YTD windows as tagged; a standalone quarter is the filer's 3-month figure, else YTD - prior
  YTD; Q4 = FY - 9M YTD; TTM at Qq = YTD(q) + FY(prior) - YTD(q, prior year).
- balances at the period end; begin = prior FY end for FY/YTD, prior quarter end for a quarter, the
  same quarter a year earlier for TTM; avg = (begin + end) / 2.
- EPS: the filer's figure for FY / YTD / 3-month quarters; Q4 EPS = FY - 9M (EPSBench's rule); per-share
  values and share counts on the latest split basis. Alternate (the rule synth prompts state): every standalone
  quarter's EPS = its net income / its shares weighted by the days of the year-to-date windows, unrounded.
- days_in_period = 90 per quarter (360 a year); alternate 'actual' = calendar days of the window.
- financial debt = balance-sheet borrowings (current + non-current), finance leases excluded; the
  alternates add finance leases or all leases.
"""
from __future__ import annotations

import datetime as dt

from rawfacts import INSTANT, Company, Missing, parse_label

ONE = dt.timedelta(days=1)


class Engine:
    def __init__(self, company: Company, *, pick: str = "latest", leases: str = "none", days: str = "360", quarter: str = "reported",
                 eps_q4: str = "fy_minus_9m", eps_q: str = "filed", shown: int | None = None):
        self.c, self.pick, self.leases, self.days_rule, self.quarter, self.eps_q4 = company, pick, leases, days, quarter, eps_q4
        self.eps_q = eps_q  # "ni_over_shares": a Q2 / Q3 EPS is its net income / day-weighted shares, unrounded
        self.shown = shown  # decimals a rescaled per-share figure is shown to (None: exact)
        self.used: list[dict] = []

    # ---- periods ---------------------------------------------------------------------------------
    def end(self, P) -> dt.date:
        y, kind, q = P
        return self.c.fy_end(y) if kind == "FY" else self.c.quarter_end(y, q)

    def start(self, P) -> dt.date:
        y, kind, q = P
        if kind in ("FY", "YTD"):
            return self.c.fy_end(y - 1) + ONE
        if kind == "Q":
            return (self.c.fy_end(y - 1) if q == 1 else self.c.quarter_end(y, q - 1)) + ONE
        return self.c.quarter_end(y - 1, q) + ONE  # TTM

    def begin(self, P) -> dt.date:
        return self.start(P) - ONE

    @staticmethod
    def months(P) -> int:
        _y, kind, q = P
        return {"FY": 12, "TTM": 12, "Q": 3}.get(kind, 3 * q)

    def days(self, P) -> float:
        if self.days_rule == "actual":
            return float((self.end(P) - self.start(P)).days + 1)
        return 30.0 * self.months(P)

    # ---- values ----------------------------------------------------------------------------------
    def _cell(self, concept, start, end):
        if concept == "capex":
            return self._capex(start, end)
        v, how = self.c.cell(concept, start, end, self.pick, shown=self.shown)
        self.used.append({"concept": concept, **how})
        return v

    def _capex(self, start, end):
        """Capex = the PP&E purchases line plus, where the same filing shows it, the construction-expenditures line
        (a utility's main capex; Con Edison 2009: 9 M + 2,184 M); the construction line alone when it is the only one."""
        try:
            v, how = self.c.cell("capex", start, end, self.pick)
        except Missing:
            v, how = self.c.cell("construction_in_process", start, end, self.pick)
            self.used.append({"concept": "capex", **how})
            return v
        self.used.append({"concept": "capex", **how})
        try:
            extra, how2 = self.c.cell("construction_in_process", start, end, self.pick, accn=how["accn"])
        except Missing:
            return v
        self.used.append({"concept": "construction_in_process", **how2})
        return v + extra

    def stock_at(self, concept: str, d: dt.date) -> float:
        if concept == "financial_debt":
            return self.debt(d)
        if concept == "total_equity" and not any(t in self.c.facts for t in ("StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest", "ifrs:Equity")):
            parent = self._cell("equity_parent", None, d)
            return parent + (self._cell("minority_interest", None, d) if self.c.has("minority_interest") else 0.0)
        if concept == "intangible_assets" and self.c.has("licences"):  # licences + the other intangibles line
            return self._cell("licences", None, d) + (self._opt("intangible_assets", d) or 0.0)
        try:
            return self._cell(concept, None, d)
        except Missing:
            if concept == "total_liabilities":  # derived only when the filer tags no total
                return self._cell("liabilities_and_equity", None, d) - self.stock_at("total_equity", d)
            raise

    def _opt(self, concept: str, d: dt.date) -> float | None:
        try:
            return self._cell(concept, None, d)
        except Missing:
            return None

    def _line(self, concept: str, d: dt.date) -> float | None:
        """A borrowing line of the balance sheet at d, read from one filing (a later filing's re-tagged comparative,
        e.g. Apple's commercial paper re-tagged OtherShortTermBorrowings, must not add to the original line)."""
        accn = self.c.balance_filing(d, self.pick)
        if accn is None:  # no filing shows a balance sheet with total assets at d: an untagged line is unknown, not 0
            raise Missing(f"{self.c.ticker}: no balance sheet with total assets at {d}")
        try:
            v, how = self.c.cell(concept, None, d, self.pick, accn=accn, shown=self.shown)
        except Missing:
            return None
        self.used.append({"concept": concept, **how})
        return v

    def current_debt(self, d: dt.date) -> float:
        cur = self._line("debt_current_total", d)
        if cur is None:
            parts = [self._line(c, d) for c in ("short_term_borrowings", "commercial_paper", "notes_payable_current", "ltd_current",
                                               "convertible_current")]
            cur = sum(p for p in parts if p is not None)
        return cur

    def debt(self, d: dt.date) -> float:
        """Borrowings on the balance sheet at d: current + non-current (my reading of the tags)."""
        self._cell("total_assets", None, d)  # the balance sheet must exist
        cur = self.current_debt(d)
        non = self._line("ltd_noncurrent", d)
        if non is not None and self.used[-1].get("tag") == "LongTermDebtAndCapitalLeaseObligations":
            # the combined line includes finance leases (Alphabet 2019-12-31: 4,554 M = notes 3,958 M + leases), which
            # _leases_beside_debt adds again: where the filer reports the debt-only line for this date (its FY2019 10-K),
            # that line is the borrowings; the combined line is taken as presented only when it is the only one
            only = self._opt("ltd_noncurrent_debt_only", d)
            if only is not None:
                non = only
        if non is None and self._line("bonds_noncurrent", d) is not None:
            non = 0.0
        if non is None:
            total = self._line("ltd_total", d)
            if total is not None:
                non = total - (self._line("ltd_current", d) or 0.0)
            else:
                non = self._line("convertible_noncurrent", d) or 0.0
        debt = cur + non + (self._line("bonds_noncurrent", d) or 0.0)  # IFRS: bonds payable are presented apart from loans
        debt += (self._line("vie_debt_current", d) or 0.0) + (self._line("vie_debt_noncurrent", d) or 0.0)  # consolidated VIEs' borrowings
        only_total = self._line("debt_total_only", d)
        if debt == 0 and only_total is not None:  # the balance sheet's one debt line, taken as presented
            return only_total
        if self.leases in ("finance", "all"):
            debt += (self._opt("finance_lease_current", d) or 0.0) + (self._opt("finance_lease_noncurrent", d) or 0.0)
        if self.leases == "all":
            debt += (self._opt("operating_lease_current", d) or 0.0) + (self._opt("operating_lease_noncurrent", d) or 0.0)
        return debt

    def stock(self, concept: str, P) -> float:
        return self.stock_at(concept, self.end(P))

    def flow(self, concept: str, P) -> float:
        if concept in INSTANT:
            raise ValueError(f"{concept} is a balance")
        y, kind, q = P
        if concept in ("eps_basic", "eps_diluted", "shares_basic", "shares_diluted"):
            return self.per_share(concept, P)
        if kind in ("FY", "YTD") or (kind == "Q" and q == 1):
            return self._cell(concept, self.start(P), self.end(P))
        if kind == "Q":
            try:
                if self.quarter == "derived" and q > 1:
                    raise Missing("derive")
                return self._cell(concept, self.start(P), self.end(P))
            except Missing:
                prev = (y, "YTD", q - 1)
                whole = (y, "FY", 4) if q == 4 else (y, "YTD", q)
                return self.flow(concept, whole) - self.flow(concept, prev)
        # TTM
        return self.flow(concept, (y, "YTD", q)) + self.flow(concept, (y - 1, "FY", 4)) - self.flow(concept, (y - 1, "YTD", q))

    def per_share(self, concept: str, P) -> float:
        y, kind, q = P
        if kind == "TTM":
            if self.eps_q4 != "ni_over_shares":
                raise Missing(f"{concept} over a TTM window: no single filer figure (convention-dependent)")
            # weighted shares over the TTM window: YTD + last FY - prior YTD averages, each weighted by its days
            sh = "shares_basic" if concept in ("eps_basic", "shares_basic") else "shares_diluted"
            parts = [((y, "YTD", q), 1), ((y - 1, "FY", 4), 1), ((y - 1, "YTD", q), -1)]
            days = [(self.end(p) - self.start(p)).days + 1 for p, _ in parts]
            shares = sum(sign * d * self.per_share(sh, p) for (p, sign), d in zip(parts, days)) / (days[0] + days[1] - days[2])
            return shares if concept.startswith("shares") else self.flow("net_income_parent", P) / shares
        if kind == "Q" and q > 1 and self.eps_q == "ni_over_shares":
            # the quarter from the year-to-date reports a prompt shows (Q4: the FY and nine-month reports, even where the
            # 10-K has a Q4 column): shares weighted by each window's days
            sh = "shares_basic" if concept in ("eps_basic", "shares_basic") else "shares_diluted"
            cur, prev = ((y, "FY", 4) if q == 4 else (y, "YTD", q)), (y, "YTD", q - 1)
            d_cur, d_prev = (self.end(cur) - self.start(cur)).days + 1, (self.end(prev) - self.start(prev)).days + 1
            q_shares = (d_cur * self.per_share(sh, cur) - d_prev * self.per_share(sh, prev)) / (d_cur - d_prev)
            return q_shares if concept.startswith("shares") else self.flow("net_income_parent", P) / q_shares
        if kind == "Q" and q == 4:
            try:
                v = self._cell(concept, self.start(P), self.end(P))
            except Missing:
                if concept.startswith("shares") or self.eps_q4 == "ni_over_shares":
                    # weighted shares of Q4 from the FY and 9-month averages, weighted by their actual days (53-week years)
                    sh = "shares_basic" if concept in ("eps_basic", "shares_basic") else "shares_diluted"
                    fy, nine = (y, "FY", 4), (y, "YTD", 3)
                    d_fy, d_9 = (self.end(fy) - self.start(fy)).days + 1, (self.end(nine) - self.start(nine)).days + 1
                    q4_shares = (d_fy * self.per_share(sh, fy) - d_9 * self.per_share(sh, nine)) / (d_fy - d_9)
                    if concept.startswith("shares"):
                        if self.eps_q4 != "ni_over_shares":
                            raise Missing(f"{concept} for a Q4: the 10-K reports no 3-month weighted count")
                        return q4_shares
                    return self.flow("net_income_parent", P) / q4_shares
                return self.per_share(concept, (y, "FY", 4)) - self.per_share(concept, (y, "YTD", 3))
        else:
            v = self._cell(concept, self.start(P), self.end(P))
        if concept.startswith("shares"):  # scale slip: shares tagged in thousands (NI / shares ~ 1000 x EPS)
            eps_concept = "eps_basic" if concept == "shares_basic" else "eps_diluted"
            try:
                eps, how = self.c.cell(eps_concept, self.start(P), self.end(P), self.pick, shown=self.shown)
                ni, _ = self.c.cell("net_income_parent", self.start(P), self.end(P), self.pick)
                # the filed EPS is rounded to the cent on the basis it was filed on (a cent / k on the latest basis)
                k = 1 if self.pick in ("as_filed", "latest_raw") else self.c.basis_factor(how["filed"])  # (rescaled or not)
                tol = max(0.0051 / k, 0.05 * abs(eps))
                if abs(ni / (v * 1000) - eps) <= tol and abs(ni / v - eps) > 100 * tol:
                    v *= 1000
                    self.used.append({"note": f"{concept} {P}: tagged in thousands (NI/shares = 1000 x EPS), x1000"})
            except Missing:
                pass
        return v


# ---- index definitions ---------------------------------------------------------------------------
def Fl(c):
    return lambda e, P: e.flow(c, P)


def first_fl(*cs):
    def f(e, P):
        for c in cs[:-1]:
            try:
                return e.flow(c, P)
            except Missing:
                pass
        return e.flow(cs[-1], P)
    return f


def St(c):
    return lambda e, P: e.stock(c, P)


def Avg(c):
    return lambda e, P: (e.stock_at(c, e.begin(P)) + e.stock(c, P)) / 2


def at_shift(f, shift):
    return lambda e, P: f(e, shift(P))


def prior_year(P):
    return (P[0] - 1, P[1], P[2])


def to_ttm(P):
    y, kind, q = P
    return (y, "FY", 4) if (kind == "FY" or q == 4) else (y, "TTM", q)


def to_q(P):
    y, _k, q = P
    return (y, "Q", q)


def prior_quarter(P):
    y, _k, q = P
    return (y - 1, "Q", 4) if q == 1 else (y, "Q", q - 1)


def ttm(f):
    return at_shift(f, to_ttm)


def sa(f):
    return at_shift(f, to_q)


def div(a, b):
    def f(e, P):
        d = b(e, P)
        if d == 0:
            raise Missing("division by zero")
        return a(e, P) / d
    return f


def sub(a, b):
    return lambda e, P: a(e, P) - b(e, P)


def add(*xs):
    return lambda e, P: sum(x(e, P) for x in xs)


def yoy(f):
    py = at_shift(f, prior_year)
    return lambda e, P: (f(e, P) - py(e, P)) / abs(py(e, P)) if py(e, P) else _zero()


def qoq(f):
    pq = at_shift(f, prior_quarter)
    return lambda e, P: (f(e, to_q(P)) - pq(e, to_q(P))) / abs(pq(e, to_q(P))) if pq(e, to_q(P)) else _zero()


def _zero():
    raise Missing("division by zero")


def annualize(f):
    return lambda e, P: f(e, P) * 12 / e.months(P)


def days(e, P):
    return e.days(P)


def const(x):
    return lambda e, P: x


def mul(a, b):
    return lambda e, P: a(e, P) * b(e, P)


def Bal(fn):
    """A balance-sheet expression evaluated at a date: fn(e, date)."""
    return fn


def bal_at(b):
    return lambda e, P: b(e, e.end(P))


def bal_avg(b):
    return lambda e, P: (b(e, e.begin(P)) + b(e, e.end(P))) / 2


def begin_ytd(b):
    return lambda e, P: b(e, e.c.fy_end(P[0] - 1))


def _leases(e, d):
    return sum(e._opt(c, d) or 0.0 for c in ("operating_lease_current", "operating_lease_noncurrent", "finance_lease_current",
                                              "finance_lease_noncurrent"))


def _leases_beside_debt(e, d):
    """Leases to add to borrowings: a current capital lease inside a one-line short-term debt total (Alphabet 10-K 2015:
    short-term debt 3,225 M = paper + current notes + 225 M capital leases) is counted once."""
    inside = e._line("debt_current_total", d) is not None
    return _leases(e, d) - ((e._opt("finance_lease_current", d) or 0.0) if inside else 0.0)


rev, cor, opi, pti, tax, ni, nip = (Fl(c) for c in ("revenue", "cost_of_revenue", "operating_income", "pretax_income", "income_tax",
                                                    "net_income", "net_income_parent"))
ocf, icf, fcf_, capex, da = Fl("operating_cash_flow"), Fl("investing_cash_flow"), Fl("financing_cash_flow"), Fl("capex"), Fl("depreciation_amortization")
fcf = sub(ocf, capex)
ebitda = add(opi, da)
ebit = add(pti, Fl("interest_expense"))
nopat = lambda e, P: opi(e, P) * (1 - tax(e, P) / pti(e, P)) if pti(e, P) else _zero()  # noqa: E731
wc_b = Bal(lambda e, d: e.stock_at("current_assets", d) - e.stock_at("current_liabilities", d))
debt_b = Bal(lambda e, d: e.stock_at("financial_debt", d))
# interest-bearing liabilities (the stated convention, README "Conventions: debt"): borrowings + lease liabilities
# (operating and finance, current and non-current); the lease alternates then add finance / all leases to borrowings again
ib_b = Bal(lambda e, d: e.debt(d) + (_leases_beside_debt(e, d) if e.leases == "none" else 0.0))
nib_b = Bal(lambda e, d: e.stock_at("total_liabilities", d) - ib_b(e, d))
ic_b = Bal(lambda e, d: e.stock_at("equity_parent", d) + ib_b(e, d))  # equity_parent + total_liab - non-IB liab
net_assets_b = Bal(lambda e, d: e.stock_at("total_assets", d) - e.stock_at("total_liabilities", d))
wc_change = lambda e, P: wc_b(e, e.end(P)) - wc_b(e, e.begin(P))  # noqa: E731
tangible_na_b = Bal(lambda e, d: e.stock_at("equity_parent", d) - e.stock_at("intangible_assets", d) - e.stock_at("goodwill", d))
sti = St("short_term_investments")

INDEX = {
    # currency
    "free_cash_flow": fcf, "free_cash_flow_ttm": ttm(fcf), "free_cash_flow_standalone": sa(fcf),
    "operating_cash_flow_ttm": ttm(ocf), "operating_cash_flow_standalone": sa(ocf), "capex_ttm": ttm(capex),
    "capex_standalone": sa(capex), "investing_cash_flow_ttm": ttm(icf), "investing_cash_flow_standalone": sa(icf),
    "ebitda": ebitda, "ebitda_ttm": ttm(ebitda), "ebit_ttm": ttm(ebit), "nopat": nopat, "nopat_ttm": ttm(nopat),
    "ebitda_minus_capex": sub(ebitda, capex), "gross_profit_derived": sub(rev, cor),
    "financial_debt": bal_at(debt_b), "interest_bearing_debt": bal_at(ib_b), "net_debt": bal_at(Bal(lambda e, d: ib_b(e, d) - e.stock_at("cash", d))),
    "non_interest_bearing_liabilities_total": bal_at(nib_b), "invested_capital_equity": bal_at(ic_b),
    "avg_invested_capital": bal_avg(ic_b), "working_capital_change": wc_change,
    "noncurrent_liabilities_derived": sub(St("total_liabilities"), St("current_liabilities")),
    "noncurrent_assets_derived": sub(St("total_assets"), St("current_assets")),
    "tangible_assets": bal_at(Bal(lambda e, d: e.stock_at("total_assets", d) - e.stock_at("goodwill", d) - e.stock_at("intangible_assets", d))),
    "capital_employed": sub(St("total_assets"), St("current_liabilities")),
    "net_cash_flow_total": add(ocf, icf, fcf_), "revenue_yoy_change": sub(rev, at_shift(rev, prior_year)),
    "net_income_parent_yoy_change": sub(nip, at_shift(nip, prior_year)),
    "operating_working_capital": add(St("accounts_receivable"), St("inventory"), lambda e, P: -e.stock("accounts_payable", P)),
    "fcff": lambda e, P: nopat(e, P) + da(e, P) - capex(e, P) - wc_change(e, P),
    "reinvestment": lambda e, P: capex(e, P) - da(e, P) + wc_change(e, P),
    "total_shareholder_payout": add(Fl("dividends_paid"), Fl("share_repurchase")),
    # growth
    "revenue_yoy": yoy(rev), "cost_of_revenue_yoy": yoy(cor), "gross_profit_derived_yoy": yoy(sub(rev, cor)),
    "operating_income_yoy": yoy(opi), "pretax_income_yoy": yoy(pti), "net_income_yoy": yoy(ni), "net_income_parent_yoy": yoy(nip),
    "eps_diluted_yoy": yoy(Fl("eps_diluted")), "eps_basic_yoy": yoy(Fl("eps_basic")), "operating_cash_flow_yoy": yoy(ocf),
    "rd_expense_yoy": yoy(Fl("rd_expense")), "operating_expenses_yoy": yoy(Fl("operating_expenses")),
    "total_assets_yoy": yoy(St("total_assets")), "total_liabilities_yoy": yoy(St("total_liabilities")),
    "equity_parent_yoy": yoy(St("equity_parent")), "total_equity_yoy": yoy(St("total_equity")), "inventory_yoy": yoy(St("inventory")),
    "accounts_receivable_yoy": yoy(St("accounts_receivable")), "cash_yoy": yoy(St("cash")), "capex_yoy": yoy(capex),
    "free_cash_flow_yoy": yoy(fcf), "ebitda_yoy": yoy(ebitda), "ocf_to_net_income_yoy": yoy(div(ocf, ni)),
    "interest_bearing_debt_yoy": yoy(bal_at(ib_b)), "invested_capital_equity_yoy": yoy(bal_at(ic_b)),
    "tangible_net_assets_yoy": yoy(bal_at(tangible_na_b)),
    "revenue_standalone_yoy": yoy(sa(rev)), "gross_profit_derived_standalone_yoy": yoy(sa(sub(rev, cor))),
    "operating_income_standalone_yoy": yoy(sa(opi)), "net_income_standalone_yoy": yoy(sa(ni)),
    "net_income_parent_standalone_yoy": yoy(sa(nip)), "operating_cash_flow_standalone_yoy": yoy(sa(ocf)),
    "revenue_qoq": qoq(rev), "gross_profit_derived_qoq": qoq(sub(rev, cor)), "operating_income_qoq": qoq(opi),
    "net_income_qoq": qoq(ni), "net_income_parent_qoq": qoq(nip), "operating_cash_flow_qoq": qoq(ocf),
    "revenue_ttm_yoy": yoy(ttm(rev)), "net_income_parent_ttm_yoy": yoy(ttm(nip)), "operating_cash_flow_ttm_yoy": yoy(ttm(ocf)),
    "total_assets_vs_year_start": lambda e, P: (e.stock("total_assets", P) - begin_ytd(lambda e2, d: e2.stock_at("total_assets", d))(e, P)) / abs(begin_ytd(lambda e2, d: e2.stock_at("total_assets", d))(e, P)),
    "equity_parent_vs_year_start": lambda e, P: (e.stock("equity_parent", P) - e.stock_at("equity_parent", e.c.fy_end(P[0] - 1))) / abs(e.stock_at("equity_parent", e.c.fy_end(P[0] - 1))),
    "total_liabilities_vs_year_start": lambda e, P: (e.stock("total_liabilities", P) - e.stock_at("total_liabilities", e.c.fy_end(P[0] - 1))) / abs(e.stock_at("total_liabilities", e.c.fy_end(P[0] - 1))),
    # margins and ratios of flows
    "gross_margin": div(sub(rev, cor), rev), "gross_margin_standalone": sa(div(sub(rev, cor), rev)), "gross_margin_ttm": ttm(div(sub(rev, cor), rev)),
    "operating_margin": div(opi, rev), "operating_margin_standalone": sa(div(opi, rev)), "operating_margin_ttm": ttm(div(opi, rev)),
    "net_margin": div(ni, rev), "net_margin_standalone": sa(div(ni, rev)), "net_margin_ttm": ttm(div(ni, rev)),
    "net_margin_parent": div(nip, rev), "pretax_margin": div(pti, rev), "cost_of_revenue_ratio": div(cor, rev),
    "rd_expense_ratio": div(Fl("rd_expense"), rev), "selling_expense_ratio": div(Fl("selling_expense"), rev),
    "admin_expense_ratio": div(Fl("admin_expense"), rev), "operating_expense_ratio": div(Fl("operating_expenses"), rev),
    "ebitda_margin": div(ebitda, rev), "ebitda_margin_ttm": ttm(div(ebitda, rev)), "ebit_margin": div(ebit, rev),
    "nopat_margin": div(nopat, rev), "fcf_margin": div(fcf, rev), "fcf_margin_ttm": ttm(div(fcf, rev)),
    "ocf_margin": div(ocf, rev), "ocf_margin_ttm": ttm(div(ocf, rev)), "fcf_conversion": div(fcf, nip),
    "ocf_to_net_income": div(ocf, ni), "capex_to_revenue": div(capex, rev), "capex_to_ocf": div(capex, ocf),
    "capex_to_da": div(capex, da), "da_to_revenue": div(da, rev), "effective_tax_rate": div(tax, pti), "tax_burden": div(ni, pti),
    "interest_burden": div(pti, ebit), "operating_income_to_pretax": div(opi, pti), "parent_share_of_net_income": div(nip, ni),
    "minority_share_of_net_income": div(sub(ni, nip), ni), "investing_cash_flow_share": div(icf, add(ocf, icf, fcf_)),
    "dividend_payout_ratio": div(Fl("dividends_paid"), nip), "interest_coverage": div(ebit, Fl("interest_expense")),
    "ebitda_interest_coverage": div(ebitda, Fl("interest_expense")), "sbc_to_revenue": div(Fl("stock_based_compensation"), rev),
    # returns
    "roe_avg": div(nip, Avg("equity_parent")), "roe_end": div(nip, St("equity_parent")), "roe_total_equity_avg": div(ni, Avg("total_equity")),
    "roe_annualized": div(annualize(nip), Avg("equity_parent")), "roe_standalone_quarter": sa(div(nip, Avg("equity_parent"))),
    "roe_ttm": ttm(div(nip, Avg("equity_parent"))), "roa_avg": div(ni, Avg("total_assets")), "roa_end": div(ni, St("total_assets")),
    "roa_annualized": div(annualize(ni), Avg("total_assets")), "roa_ttm": ttm(div(ni, Avg("total_assets"))),
    "ebit_to_avg_assets": div(ebit, Avg("total_assets")), "roic": div(nopat, bal_avg(ic_b)), "roic_ttm": ttm(div(nopat, bal_avg(ic_b))),
    "roce": div(opi, sub(St("total_assets"), St("current_liabilities"))),
    "nopat_to_avg_invested_capital_annualized": div(annualize(nopat), bal_avg(ic_b)),
    "cash_return_on_assets": div(ocf, Avg("total_assets")), "cash_return_on_equity": div(ocf, Avg("equity_parent")),
    # turnover and days (90 days a quarter)
    "inventory_turnover": div(cor, Avg("inventory")), "receivables_turnover": div(rev, Avg("accounts_receivable")),
    "payables_turnover": div(cor, Avg("accounts_payable")), "total_asset_turnover": div(rev, Avg("total_assets")),
    "current_asset_turnover": div(rev, Avg("current_assets")), "fixed_asset_turnover": div(rev, Avg("ppe_net")),
    "equity_turnover": div(rev, Avg("equity_parent")), "cash_turnover": div(rev, Avg("cash")),
    "net_asset_turnover": div(rev, bal_avg(net_assets_b)), "working_capital_turnover": div(rev, bal_avg(wc_b)),
    "invested_capital_turnover": div(rev, bal_avg(ic_b)),
    "inventory_days": div(days, div(cor, Avg("inventory"))), "receivables_days": div(days, div(rev, Avg("accounts_receivable"))),
    "payables_days": div(days, div(cor, Avg("accounts_payable"))), "total_asset_days": div(days, div(rev, Avg("total_assets"))),
    "current_asset_days": div(days, div(rev, Avg("current_assets"))),
    "operating_cycle": add(div(days, div(cor, Avg("inventory"))), div(days, div(rev, Avg("accounts_receivable")))),
    "cash_conversion_cycle": lambda e, P: INDEX["operating_cycle"](e, P) - INDEX["payables_days"](e, P),
    "inventory_turnover_annualized": div(annualize(cor), Avg("inventory")),
    "receivables_turnover_annualized": div(annualize(rev), Avg("accounts_receivable")),
    "total_asset_turnover_annualized": div(annualize(rev), Avg("total_assets")),
    "inventory_turnover_ttm": ttm(div(cor, Avg("inventory"))), "receivables_turnover_ttm": ttm(div(rev, Avg("accounts_receivable"))),
    "payables_turnover_ttm": ttm(div(cor, Avg("accounts_payable"))), "total_asset_turnover_ttm": ttm(div(rev, Avg("total_assets"))),
    "capital_intensity": div(St("total_assets"), rev),
    "inventory_days_end": lambda e, P: e.stock("inventory", P) / cor(e, P) * e.days(P),
    "receivables_days_end": lambda e, P: e.stock("accounts_receivable", P) / rev(e, P) * e.days(P),
    # balance-sheet structure
    "debt_to_assets": div(St("total_liabilities"), St("total_assets")), "debt_to_equity": div(St("total_liabilities"), St("total_equity")),
    "debt_to_equity_parent": div(St("total_liabilities"), St("equity_parent")), "equity_multiplier": div(St("total_assets"), St("total_equity")),
    "equity_multiplier_avg": div(Avg("total_assets"), Avg("equity_parent")), "equity_ratio": div(St("total_equity"), St("total_assets")),
    "equity_parent_share": div(St("equity_parent"), St("total_equity")), "financial_debt_to_equity": div(bal_at(debt_b), St("total_equity")),
    "debt_to_capital": div(bal_at(debt_b), add(bal_at(debt_b), St("total_equity"))),
    "financial_debt_to_ebitda": div(bal_at(debt_b), ebitda), "financial_debt_to_ebitda_ttm": div(bal_at(debt_b), ttm(ebitda)),
    "ocf_to_financial_debt": div(ocf, bal_at(debt_b)), "ocf_to_total_liabilities": div(ocf, St("total_liabilities")),
    "ocf_to_avg_liabilities": div(ocf, Avg("total_liabilities")), "goodwill_to_equity": div(St("goodwill"), St("equity_parent")),
    "liabilities_to_tangible_assets": div(St("total_liabilities"), lambda e, P: INDEX["tangible_assets"](e, P)),
    "interest_bearing_debt_ratio": div(bal_at(ib_b), St("total_liabilities")), "interest_bearing_debt_to_assets": div(bal_at(ib_b), St("total_assets")),
    "interest_bearing_debt_to_invested_capital": div(bal_at(ib_b), bal_at(ic_b)),
    "net_debt_to_equity": div(lambda e, P: INDEX["net_debt"](e, P), St("equity_parent")),
    "cash_to_interest_bearing_debt": div(St("cash"), bal_at(ib_b)), "retained_earnings_to_equity": div(St("retained_earnings"), St("equity_parent")),
    "working_capital": bal_at(wc_b), "current_ratio": div(St("current_assets"), St("current_liabilities")),
    "quick_ratio": div(sub(St("current_assets"), St("inventory")), St("current_liabilities")), "cash_ratio": div(St("cash"), St("current_liabilities")),
    "operating_cash_flow_ratio": div(ocf, St("current_liabilities")), "ocf_to_avg_current_liabilities": div(ocf, Avg("current_liabilities")),
    "working_capital_to_assets": div(bal_at(wc_b), St("total_assets")), "cash_to_total_assets": div(St("cash"), St("total_assets")),
    "current_assets_to_total_assets": div(St("current_assets"), St("total_assets")), "inventory_to_current_assets": div(St("inventory"), St("current_assets")),
    "receivables_to_current_assets": div(St("accounts_receivable"), St("current_assets")),
    "current_liabilities_to_total_liabilities": div(St("current_liabilities"), St("total_liabilities")),
    "operating_working_capital_to_revenue": div(lambda e, P: INDEX["operating_working_capital"](e, P), rev),
    "long_term_capital_debt_ratio": div(St("noncurrent_liabilities"), add(St("noncurrent_liabilities"), St("total_equity"))),
    "net_debt_to_ebitda_ttm": None,  # needs short-term investments: not covered (tag choice not independent enough)
    # per share
    # numerator: net income available to common stockholders when the filer tags it (after preferred dividends), else to the parent
    "eps_basic_computed": div(first_fl("net_income_common_basic", "net_income_parent"), Fl("shares_basic")),
    "eps_diluted_computed": div(first_fl("net_income_common_diluted", "net_income_common_basic", "net_income_parent"), Fl("shares_diluted")),
    "revenue_per_share": div(rev, Fl("shares_diluted")), "ocf_per_share": div(ocf, Fl("shares_diluted")),
    "fcf_per_share": div(fcf, Fl("shares_diluted")), "ebitda_per_share": div(ebitda, Fl("shares_diluted")),
    "dividends_per_share_computed": div(Fl("dividends_paid"), Fl("shares_basic")), "dilution_ratio": div(Fl("shares_diluted"), Fl("shares_basic")),
    "book_value_per_share": div(St("equity_parent"), St("shares_outstanding")), "cash_per_share": div(St("cash"), St("shares_outstanding")),
    "retained_earnings_per_share": div(St("retained_earnings"), St("shares_outstanding")),
    "capital_reserve_per_share": div(St("capital_reserve"), St("shares_outstanding")),
    "retained_earnings_total": add(St("surplus_reserve"), St("retained_earnings")),
    "retained_earnings_total_per_share": div(add(St("surplus_reserve"), St("retained_earnings")), St("shares_outstanding")),
    "surplus_reserve_per_share": div(St("surplus_reserve"), St("shares_outstanding")),
    "eps_diluted": Fl("eps_diluted"), "eps_basic": Fl("eps_basic"),
}
def _noncurrent_debt(e, d):
    return e.debt(d) - e.current_debt(d)


INDEX.update({
    "ebit": ebit, "sga_expense_ratio": div(Fl("sga_expense"), rev), "sbc_to_ocf": div(Fl("stock_based_compensation"), ocf),
    "minority_interest_share": div(St("minority_interest"), St("total_equity")),
    "fcff_ttm": ttm(lambda e, P: nopat(e, P) + da(e, P) - capex(e, P) - wc_change(e, P)),
    "payout_to_fcf": div(add(Fl("dividends_paid"), Fl("share_repurchase")), fcf),
    "lease_liabilities_total": bal_at(Bal(_leases)),
    "financial_debt_with_leases": bal_at(Bal(lambda e, d: e.debt(d) + _leases_beside_debt(e, d))),
    "book_enterprise_value": lambda e, P: e.stock("total_equity", P) + ib_b(e, e.end(P)) - e.stock("cash", P),
    "long_term_asset_fit_ratio": div(add(St("total_equity"), St("noncurrent_liabilities")), St("noncurrent_assets")),
    "long_term_debt_to_equity": div(bal_at(Bal(_noncurrent_debt)), St("total_equity")),
})
INDEX.update({
    "current_debt": bal_at(Bal(lambda e, d: (e.debt(d), e.current_debt(d))[1])),
    "noncurrent_debt": bal_at(Bal(lambda e, d: e.debt(d) - e.current_debt(d))),
    "invested_capital_financing": lambda e, P: e.stock("total_equity", P) + ib_b(e, e.end(P)),
    "revenue_per_share_ttm": div(ttm(rev), ttm(Fl("shares_diluted"))), "ocf_per_share_ttm": div(ttm(ocf), ttm(Fl("shares_diluted"))),
    "eps_ttm_computed": div(ttm(nip), ttm(Fl("shares_diluted"))),
    "cash_flow_adequacy": div(ocf, add(capex, Fl("dividends_paid"))),
    "total_payout_ratio": div(add(Fl("dividends_paid"), Fl("share_repurchase")), nip),
    "reinvestment_rate": div(lambda e, P: capex(e, P) - da(e, P) + wc_change(e, P), nopat),
    "tangible_book_value_per_share": div(bal_at(Bal(lambda e, d: e.stock_at("equity_parent", d) - e.stock_at("goodwill", d)
                                                    - e.stock_at("intangible_assets", d))), St("shares_outstanding")),
})
INDEX = {k: v for k, v in INDEX.items() if v is not None}
# plain canonical concepts asked as indices
for _c in ("revenue", "cost_of_revenue", "operating_income", "pretax_income", "income_tax", "net_income", "net_income_parent",
           "operating_cash_flow", "investing_cash_flow", "financing_cash_flow", "capex", "depreciation_amortization"):
    INDEX.setdefault(_c, Fl(_c))
for _c in ("total_assets", "current_assets", "cash", "inventory", "accounts_receivable", "accounts_payable", "total_liabilities",
           "current_liabilities", "total_equity", "equity_parent", "goodwill", "retained_earnings"):
    INDEX.setdefault(_c, St(_c))

NOT_COVERED = {  # index -> why the independent recomputation does not attempt it
    "tangible_net_assets": "needs deferred tax assets (tag choice not independent)",
    "tangible_net_assets_yoy": "needs deferred tax assets (tag choice not independent)",
    "net_debt_to_ebitda_ttm": "needs short-term investments (tag choice not independent)",
    "net_financial_debt": "needs short-term investments", "conservative_quick_ratio": "needs short-term investments",
    "cash_and_investments_ratio": "needs short-term investments", "cash_and_short_term_investments": "needs short-term investments",
    "defensive_interval_days": "needs short-term investments",
}


def evaluate(index: str, engine: Engine, label: str) -> float:
    if index not in INDEX:
        raise Missing(f"index {index} not implemented independently")
    return INDEX[index](engine, parse_label(label))
