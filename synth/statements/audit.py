"""Fidelity audit: the product's values against figures the filers themselves report.

    ledgerlm validate --audit                         # every embedded company, counts by check
    ledgerlm validate --audit --company NVDA --audit-list 20
    ledgerlm validate --audit --data D                # also the sanity bounds over a synthesized dataset

Checks (each finding names company, period, concept, the filed figure and the product's figure):
- eps_reported   the store's EPS for a period (basic/diluted; 3-month, YTD, FY) vs every EPS the filings
                 tagged for that window (equal to the cent; a value on another split basis counts as equal
                 and is tallied as "other split basis").
- eps_computed   net income available to common (else to the parent) / weighted shares (the product's
                 eps_*_computed) vs the filed EPS
                 (within $0.015 or 1.5 %); a 1000x gap is reported as a scale slip (shares tagged in thousands).
- quarter_3m     derived standalone quarters (every amount flow: revenue, capex, ...) vs the 3-month figures the 10-Q reports
                 (within 1.5 x the rounding the filed figure shows: 1.5 M for 2,383 M, 150,000 for 47.4 M).
- ttm_4q         TTM flows (YTD + last FY - prior YTD) vs the sum of the four quarters' filed figures, where all
                 four are filed (Q1 its YTD report; Q2-Q4 three-month figures of the YTD figures' vintage and tag)
- debt           `financial_debt` as computed vs the borrowing lines of the balance sheet (DebtCurrent or
                 its components + non-current debt; bonds for IFRS; consolidated VIEs' borrowings), within 0.5 %.
- balance        total liabilities (+ temporary equity) + equity vs total assets, within 0.5 %.
Sanity bounds, listed for review (not failures): |YoY| > 500 % for revenue / net income / EPS; EPS jumps
between consecutive periods by a split factor; with --data, items whose answer rounds to zero.

A finding is "explained" when (check, company, period, concept) is in tests/data/audit_exceptions.csv
(filer inconsistencies, each with the filing figures); `--strict` exits 1 on any unexplained finding.
"""
from __future__ import annotations

import csv
import datetime as dt
import json
import math
from collections import Counter
from pathlib import Path

import pandas as pd

from ledgerlm.errors import LedgerError
from ledgerlm.synth.indices.compute import compute  # the audited answer
from ledgerlm.synth.statements.periods import Period
from ledgerlm.synth.statements.store import FactStore
from ledgerlm.synth.statements.validate import check_balance

_SINGLE_SPLITS = (2, 3, 4, 5, 7, 8, 10, 15, 20)
SPLIT_FACTORS = tuple(sorted({a * b for a in (1,) + _SINGLE_SPLITS for b in _SINGLE_SPLITS}))  # one or two splits apart
EPS_SHARES = {"eps_basic": "shares_basic", "eps_diluted": "shares_diluted"}
# the numerator of the product's eps_*_computed (registry per_share.yaml): net income available to common
# stockholders when the filer reports it (after preferred dividends), else net income to the parent
EPS_NUMERATORS = {"eps_basic": ("net_income_common_basic", "net_income_parent"),
                  "eps_diluted": ("net_income_common_diluted", "net_income_common_basic", "net_income_parent")}
CHECKS = ("eps_reported", "eps_computed", "quarter_3m", "ttm_4q", "debt", "balance")
DEFAULT_EXCEPTIONS = Path(__file__).resolve().parents[2] / "tests" / "data" / "audit_exceptions.csv"

# balance-sheet borrowing lines by original tag (the filer's own presentation, not the canonical mapping)
DEBT_CURRENT_TOTAL = ("us-gaap:DebtCurrent",)
DEBT_CURRENT_PARTS = ("us-gaap:ShortTermBorrowings", "us-gaap:ShortTermBankLoansAndNotesPayable", "us-gaap:OtherShortTermBorrowings", "us-gaap:CommercialPaper",
                      "us-gaap:NotesPayableCurrent", "us-gaap:LongTermDebtCurrent", "us-gaap:LongTermDebtAndCapitalLeaseObligationsCurrent",
                      "us-gaap:ConvertibleDebtCurrent", "us-gaap:ConvertibleNotesPayableCurrent", "ifrs-full:ShorttermBorrowings",
                      "ifrs-full:CurrentPortionOfLongtermBorrowings")
DEBT_NONCURRENT = ("us-gaap:LongTermDebtNoncurrent", "us-gaap:LongTermDebtAndCapitalLeaseObligations")
DEBT_NONCURRENT_PARTS = ("us-gaap:ConvertibleDebtNoncurrent", "us-gaap:ConvertibleLongTermNotesPayable", "ifrs-full:LongtermBorrowings",
                         "ifrs-full:NoncurrentPortionOfNoncurrentBondsIssued")
# consolidated variable-interest entities' borrowings: lines of their own beside the company's debt (Duke 2009-12-31: 381 M)
# (and GE's own element for its securitization entities' borrowings from 2010: 36,780 M at 2010-03-31)
DEBT_VIE = ("us-gaap:NonrecourseNotesPayableOfVariableInterestEntitiesCurrent",
            "us-gaap:NonrecourseLongTermDebtOfVariableInterestEntitiesNoncurrent",
            "ext:GE:Non-recourseBorrowingsOfConsolidatedSecuritizationEntities")


def _near_factor(ratio: float, factors=SPLIT_FACTORS, tol: float = 0.02) -> int | None:
    for k in factors:
        for r in (k, 1 / k):
            if abs(ratio - r) <= tol * r:
                return k
    return None


def _shown_rounding(value: float) -> float:
    """The rounding a filed amount shows (its own rule, not the store's): the largest power of ten up to 1e6 dividing
    it (47,400,000 -> 100,000; 2,383,000,000 -> 1,000,000; 1 for a fraction or 0)."""
    if not value or not float(value).is_integer():
        return 1.0
    quantum = 1
    while quantum < 10 ** 6 and int(abs(value)) % (quantum * 10) == 0:  # filers round to millions at most
        quantum *= 10
    return float(quantum)


class Audit:
    """Runs the checks for a set of companies over all filed facts (`facts`: every filing, restated duplicates kept)."""

    def __init__(self, facts: pd.DataFrame, store: FactStore | None = None):
        self.facts = facts
        self.store = store or FactStore(facts)  # as the product builds it (FactStore.from_sources): every filed version
        self.findings: list[dict] = []
        self.counts: Counter = Counter()  # (check, outcome) -> n

    # -- helpers ---------------------------------------------------------------------------------
    def _periods_by_window(self, company: str) -> dict[tuple[dt.date, int], Period]:
        """(end date, months) -> Period, from the store's own calendar."""
        out = {}
        for report in self.store.reports(company):
            end = self.store.period_end(company, report.period)
            if end is None:
                continue
            end = pd.Timestamp(end).date()
            out[(end, 3 * report.quarters)] = report.period
            out[(end, 3)] = Period(report.fiscal_year, "Q", report.quarters)
        return out

    def _record(self, check: str, ok: bool, company: str, period: str, concept: str, reported, computed, detail: str = "", outcome: str = "") -> None:
        self.counts[(check, outcome or ("ok" if ok else "finding"))] += 1
        if not ok:
            self.findings.append({"check": check, "company": company, "period": period, "concept": concept,
                                  "reported": reported, "computed": computed, "detail": detail})

    def _value(self, company: str, concept: str, period) -> float | None:
        try:
            return self.store.value(company, concept, period).value
        except LedgerError:
            return None

    # -- EPS ---------------------------------------------------------------------------------------
    def check_eps(self, company: str) -> None:
        windows = self._periods_by_window(company)
        cf = self.facts[(self.facts["company"].astype(str) == company) & (self.facts["scope"] == "consolidated")
                        & self.facts["concept"].isin(list(EPS_SHARES))]
        filed: dict[tuple[str, Period], set[float]] = {}
        for r in cf.itertuples(index=False):
            if pd.isna(r.start) or str(r.start) in ("", "NaT", "None"):
                continue
            start, end = pd.Timestamp(r.start).date(), pd.Timestamp(r.end).date()
            months = round((end - start).days / 30.44)
            period = windows.get((end, months))
            if period is None:
                continue
            filed.setdefault((r.concept, period), set()).add(round(float(r.value), 4))
        for (concept, period), values in sorted(filed.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            label = period.label
            mine = self._value(company, concept, period)
            basis = 1.0  # filed figure / store figure (a split factor when the store is on a later basis)
            if mine is not None:
                same = any(abs(mine - v) <= 0.0051 for v in values)
                k = None if same else next((f for f in (_near_factor(v / mine, tol=0.01) for v in values if v and mine) if f), None)
                if k:
                    ratio = next(v / mine for v in values if v and mine and _near_factor(v / mine, tol=0.01))
                    basis = float(round(ratio)) if ratio >= 1 else 1 / round(1 / ratio)
                self._record("eps_reported", same or bool(k), company, label, concept, sorted(values), mine,
                             "store value differs from every filed figure", outcome="ok (other split basis)" if k else "")
            ni_concept = next((c for c in EPS_NUMERATORS[concept] if self._value(company, c, period) is not None), "net_income_parent")
            ni, shares = self._value(company, ni_concept, period), self._value(company, EPS_SHARES[concept], period)
            if ni is None or not shares:
                self.counts[("eps_computed", "not derivable")] += 1
                continue
            computed = ni / shares * basis  # on the filed basis
            note = "" if basis == 1 else f" (x{basis:g}: store on a later split basis)"
            if any(abs(computed - v) <= max(0.015, 0.015 * abs(v)) for v in values):
                self._record("eps_computed", True, company, label, concept, sorted(values), computed,
                             outcome="ok (other split basis)" if note else "")
                continue
            if any(v and _near_factor(computed / v, factors=(1000,), tol=0.05) for v in values):
                self._record("eps_computed", False, company, label, concept, sorted(values), round(computed, 4),
                             f"scale slip: net income / {EPS_SHARES[concept]} = 1000 x the filed EPS (shares tagged in thousands?){note}")
                continue
            self._record("eps_computed", False, company, label, concept, sorted(values), round(computed, 4),
                         f"{ni_concept} {ni:,.0f} / {EPS_SHARES[concept]} {shares:,.0f}{note}")

    # -- standalone quarters -------------------------------------------------------------------------
    def check_quarters(self, company: str) -> None:
        """A standalone quarter as the reports give it (YTD(q) - YTD(q-1), FY - Q3YTD; Q1 as reported) vs the three-month
        figure filed for it. Where the filer's own figures disagree beyond rounding, the store's answer must be the filed
        quarter (the full store; a synth store refuses it): tallied as "ok (filer's YTD contradict its quarter)"."""
        for key in self.store.quarter_pairs():
            comp, scope, concept, year, q = key
            if comp != company or scope != "consolidated" or self.store.kind_of(concept, company) != "flow":
                continue
            period = Period(year, "Q", q)
            ref = self.store.reported_quarter(company, concept, period)
            if ref is not None and q > 1 and self.store.authoritative_quarter(company, concept, year, q) is None:
                # filed before the YTD figures were (re)filed, or under another tag: not the same line of one vintage
                self.counts[("quarter_3m", "not comparable (earlier filing or other tag)")] += 1
                continue
            mine = self._value(company, concept, period)
            cur = self._value(company, concept, Period(year, "FY" if q == 4 else "YTD", q))
            prev = self._value(company, concept, Period(year, "YTD", q - 1)) if q > 1 else 0.0
            if ref is None or mine is None or cur is None or prev is None:
                self.counts[("quarter_3m", "not derivable")] += 1
                continue
            rep, derived = ref.value, cur - prev
            # three figures (two YTD, the quarter) each off by half the filing's rounding (a filed 0 shows none: the derivation's)
            tol = 1.5 * _shown_rounding(rep if rep else derived) * 1.0001
            if abs(derived - rep) > tol and abs(mine - rep) <= tol:
                self._record("quarter_3m", True, company, period.label, concept, rep, mine, outcome="ok (filer's YTD contradict its quarter)")
                continue
            self._record("quarter_3m", abs(mine - rep) <= tol and abs(derived - rep) <= tol, company, period.label, concept,
                         rep, mine, f"answer {mine:,.0f}, YTD derivation {derived:,.0f} vs 3-month {rep:,.0f} in {ref.source}")

    def check_ttm(self, company: str) -> None:
        """A TTM flow (YTD + last FY - prior YTD) vs the sum of the four three-month figures the filer reports for its
        quarters (Q1 its year-to-date report; Q2-Q4 the filed three-month figures), where all four are filed; within
        the rounding of the figures combined (4 x 1.5 x the coarsest). A TTM the store refuses counts as not derivable."""
        filed: dict[tuple[str, int, int], float] = {}
        for comp, scope, concept, year, q in self.store.quarter_pairs():
            if comp == company and scope == "consolidated":
                cell = self.store.authoritative_quarter(company, concept, year, q) if q > 1 else None
                if cell is not None:  # a quarter of the YTD figures' own vintage and tag
                    filed[(concept, year, q)] = cell.value
        for (concept, year, q) in sorted(filed):
            if q == 4 or self.store.kind_of(concept, company) != "flow":
                continue
            quarters = [(year - 1, k) for k in range(q + 1, 5)] + [(year, k) for k in range(1, q + 1)]
            parts = []
            for y, k in quarters:
                if k == 1:
                    parts.append(self._value(company, concept, Period(y, "YTD", 1)))
                else:
                    parts.append(filed.get((concept, y, k)))
            if any(v is None for v in parts):
                continue
            period = Period(year, "TTM", q)
            mine = self._value(company, concept, period)
            if mine is None:
                self.counts[("ttm_4q", "not derivable")] += 1
                continue
            total = sum(parts)
            tol = 4 * 1.5 * max(_shown_rounding(v) for v in parts if v) if any(parts) else 1.0
            self._record("ttm_4q", abs(mine - total) <= tol * 1.0001, company, period.label, concept, total, mine,
                         f"TTM {mine:,.0f} vs the four filed quarters {' + '.join(f'{v:,.0f}' for v in parts)} = {total:,.0f}")

    # -- debt ----------------------------------------------------------------------------------------
    def _balance_lines(self, company: str) -> dict[dt.date, dict[str, float]]:
        """Balance-sheet lines by tag at each date, all from ONE filing (the latest showing total assets at that date),
        in the reporting currency: a later filing's re-tagged comparative never adds to an earlier line."""
        cf = self.facts[(self.facts["company"].astype(str) == company) & (self.facts["scope"] == "consolidated")]
        inst = cf[cf["start"].isna() | cf["start"].astype(str).isin(["", "NaT", "None"])]
        money = inst[~inst["unit"].astype(str).str.contains("/") & (inst["unit"].astype(str).str.lower() != "shares")]
        if money.empty:
            return {}
        currency = money["unit"].astype(str).value_counts().index[0]
        inst = money[money["unit"].astype(str) == currency]
        ends = inst["end"].map(lambda x: pd.Timestamp(x).date())
        out: dict[dt.date, dict[str, float]] = {}
        for end, grp in inst.groupby(ends):
            assets = grp[grp["concept"] == "total_assets"].sort_values(["filed", "source"])
            if assets.empty:
                continue
            source = assets["source"].iloc[-1]
            out[end] = {str(r.tag): float(r.value) for r in grp[grp["source"] == source].itertuples(index=False)}
        return out

    @staticmethod
    def balance_sheet_debt(lines: dict[str, float]) -> float | None:
        """Borrowings the balance sheet presents: current (total or parts) + non-current; None without a debt line."""
        tags = set(lines)
        if not tags & set(DEBT_CURRENT_TOTAL + DEBT_CURRENT_PARTS + DEBT_NONCURRENT + DEBT_NONCURRENT_PARTS + DEBT_VIE + ("us-gaap:LongTermDebt",)):
            return None
        cur_total = [lines[t] for t in DEBT_CURRENT_TOTAL if t in lines]
        current = cur_total[0] if cur_total else sum(lines.get(t, 0.0) for t in DEBT_CURRENT_PARTS)
        non = next((lines[t] for t in DEBT_NONCURRENT if t in lines), None)
        if non is None and "us-gaap:LongTermDebt" in lines:  # a total that includes the current portion and convertibles
            non = lines["us-gaap:LongTermDebt"] - lines.get("us-gaap:LongTermDebtCurrent", 0.0)
        if non is None:
            non = sum(lines.get(t, 0.0) for t in DEBT_NONCURRENT_PARTS if t.startswith("us-gaap:"))
        non += sum(lines.get(t, 0.0) for t in DEBT_NONCURRENT_PARTS if t.startswith("ifrs-full:"))
        return current + non + sum(lines.get(t, 0.0) for t in DEBT_VIE)

    def check_debt(self, company: str) -> None:
        lines = self._balance_lines(company)
        for report in self.store.reports(company):
            end = self.store.period_end(company, report.period)
            if end is None:
                continue
            reference = self.balance_sheet_debt(lines.get(pd.Timestamp(end).date(), {}))
            if reference is None:
                continue
            try:
                mine = compute(self.store, company, "financial_debt", report.period).value
            except LedgerError as err:
                self._record("debt", False, company, report.label, "financial_debt", reference, None, f"not computed: {err}")
                continue
            ok = abs(mine - reference) <= 0.005 * max(abs(reference), 1.0)
            self._record("debt", ok, company, report.label, "financial_debt", reference, mine,
                         "computed financial debt vs the balance sheet's borrowing lines")

    # -- balance ---------------------------------------------------------------------------------------
    def check_balance(self, company: str) -> None:
        for b in check_balance(self.store, company):
            if b.get("skipped") or b["scope"] != "consolidated":
                continue
            reported = b["assets"]
            computed = b.get("liabilities_and_equity", (b.get("liabilities") or 0) + (b.get("equity") or 0))
            self._record("balance", b["ok"], company, b["report"], "total_assets", reported, computed, f"gap {b['gap']:,.0f} ({b['how']})")

    # -- sanity bounds -----------------------------------------------------------------------------------
    def sanity(self, company: str) -> list[dict]:
        out = []
        annual = [r for r in self.store.reports(company) if r.is_annual]
        for concept in ("revenue", "net_income", "eps_diluted"):
            prev = None
            for report in annual:
                v = self._value(company, concept, report.period)
                if v is not None and prev is not None and prev[1]:
                    yoy = (v - prev[1]) / abs(prev[1])
                    if abs(yoy) > 5:
                        out.append({"company": company, "period": report.label, "concept": concept, "what": f"|YoY| {yoy:+.0%} > 500 %"})
                    k = _near_factor(v / prev[1], tol=0.03) if concept.startswith("eps") and v else None
                    if k:
                        out.append({"company": company, "period": report.label, "concept": concept,
                                    "what": f"per-share value {v} vs {prev[1]} the year before: a {k}x jump (split basis?)"})
                prev = (report, v) if v is not None else None
        return out

    def run(self, companies: list[str] | None = None, checks: tuple[str, ...] = CHECKS) -> dict:
        chosen = [self.store.resolve_company(c) for c in companies] if companies else self.store.companies()
        sanity = []
        for company in chosen:
            if "eps_reported" in checks or "eps_computed" in checks:
                self.check_eps(company)
            if "quarter_3m" in checks:
                self.check_quarters(company)
            if "ttm_4q" in checks:
                self.check_ttm(company)
            if "debt" in checks:
                self.check_debt(company)
            if "balance" in checks:
                self.check_balance(company)
            sanity += self.sanity(company)
        return {"companies": chosen, "counts": dict(self.counts), "findings": self.findings, "sanity": sanity}


def load_exceptions(path: Path = DEFAULT_EXCEPTIONS) -> dict[tuple[str, str, str, str], str]:
    """(check, company, period, concept) -> reason."""
    if not Path(path).exists():
        return {}
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for n, r in enumerate(rows, 2):
        if not (r.get("reason") or "").strip():
            raise LedgerError(f"{path}:{n}: an audit exception needs a reason")
    return {(r["check"], r["company"], r["period"], r["concept"]): r["reason"] for r in rows}


def split_findings(report: dict, exceptions: dict) -> tuple[list[dict], list[dict]]:
    explained, new = [], []
    for f in report["findings"]:
        (explained if (f["check"], f["company"], f["period"], f["concept"]) in exceptions else new).append(f)
    return explained, new


def dataset_sanity(data: Path) -> list[dict]:
    """Cells (single and table items) whose answer rounds to zero while the unrounded value does not, and |YoY| > 500 %."""
    out = []
    data = Path(data)
    splits = [data / f"{s}.jsonl" for s in ("train", "dev", "test") if (data / f"{s}.jsonl").exists()]
    files = [data] if data.is_file() else (splits or sorted(data.glob("*.jsonl")))
    if not files:
        raise LedgerError(f"{data}: no dataset here (expected a JSONL file or a folder with train/dev/test.jsonl)")
    for f in files:
        for n, line in enumerate(f.open(encoding="utf-8"), 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise LedgerError(f"{f}:{n}: not JSON ({err.msg})")
            ans, raw = row.get("answer"), row.get("value_unrounded")
            if row.get("paradigm") == "single":
                ans, raw = [[ans]], [[raw]]
            if not (isinstance(ans, list) and isinstance(raw, list)):
                continue
            for i, (a_row, r_row) in enumerate(zip(ans, raw)):
                for j, (a, r) in enumerate(zip(a_row or [], r_row or [])):
                    if not isinstance(a, (int, float)) or not isinstance(r, (int, float)) or math.isinf(r):
                        continue
                    index, period = row["indices"][i], row["target_periods"][j]
                    if a == 0 and r != 0:
                        out.append({"id": row.get("id"), "what": f"{index} {period}: answer 0 at {row.get('unit')}/{row.get('decimals')} dp, value {r:.6g}"})
                    if index.endswith("_yoy") and abs(r) > 5:
                        out.append({"id": row.get("id"), "what": f"{index} {period} = {r:+.0%} (|YoY| > 500 %)"})
    return out


def render(report: dict, exceptions: dict, *, limit: int = 10, data_sanity: list[dict] | None = None) -> str:
    explained, new = split_findings(report, exceptions)
    lines = [f"fidelity audit over {len(report['companies'])} companies: {', '.join(report['companies'])}", "", "check          checked  ok  findings (explained / NEW)"]
    counts = report["counts"]
    for check in CHECKS:
        done = {k[1]: v for k, v in counts.items() if k[0] == check}
        if not done:
            continue
        n_find = done.get("finding", 0)
        ok = sum(v for k, v in done.items() if k.startswith("ok"))
        n_exp = sum(1 for f in explained if f["check"] == check)
        extra = "; ".join(f"{k}: {v}" for k, v in done.items() if k not in ("ok", "finding"))
        lines.append(f"{check:14s} {ok + n_find:7d} {ok:4d}  {n_find} ({n_exp} / {n_find - n_exp})" + (f"   [{extra}]" if extra else ""))
    lines.append("")
    lines.append(f"unexplained findings: {len(new)} (exceptions file explains {len(explained)})")
    for f in new[:limit]:
        lines.append(f"  {f['check']:12s} {f['company']} {f['period']} {f['concept']}: filed {f['reported']} vs computed {f['computed']}  {f['detail']}")
    if len(new) > limit:
        lines.append(f"  ... {len(new) - limit} more (--audit-list N)")
    lines.append(f"sanity bounds, for review: {len(report['sanity'])}")
    for s in report["sanity"][:limit]:
        lines.append(f"  {s['company']} {s['period']} {s['concept']}: {s['what']}")
    if data_sanity is not None:
        lines.append(f"dataset items for review (answer rounds to zero / |YoY| > 500 %): {len(data_sanity)}")
        for s in data_sanity[:limit]:
            lines.append(f"  {s['id']}: {s['what']}")
    return "\n".join(lines)


balance_sheet_debt_of = Audit.balance_sheet_debt  # module-level name for callers and tests
