"""Independent reader of raw SEC companyfacts JSON: own tag lists, own fiscal calendar, own period logic.

Nothing here imports ledgerlm (by design: this is the yardstick the store is measured against).

    python tests/independent/rawfacts.py NVDA eps_diluted FY2025Q1     # print one value and how it was found

Periods (DESIGN contract 2): FY2023, FY2023Q1..Q4 (3-month), FY2023H1 / FY2023Q3YTD (YTD), FY2023Q2TTM.
Fiscal years come from the annual filings' own 12-month windows (10-K / 20-F `fp=FY`), labelled by
the filing's `fy`; quarter windows are the 3/6/9-month windows the filer tagged.
Standalone quarter flows: the filer's 3-month figure when tagged, else YTD - prior YTD; Q4 = FY - 9M.
Per-share values and share counts are put on the latest split basis by split factors detected from
restated comparatives (the same cell reported in two filings at an integer ratio); a 1000x ratio is a
scale slip (shares tagged in thousands) and is corrected, never treated as a split.
"""
from __future__ import annotations

import datetime as dt
import gzip
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "synth" / "data" / "sec" / "companyfacts"
SPLIT_FACTORS = (2, 3, 4, 5, 7, 8, 10, 15, 20)
ANNUAL_FORMS = ("10-K", "10-K/A", "20-F", "20-F/A", "40-F", "10-KT")

# canonical concept -> tags in priority order (us-gaap, then ifrs-full); my own reading of the taxonomies
TAGS: dict[str, list[str]] = {
    "revenue": ["Revenues", "RevenueFromContractWithCustomerExcludingAssessedTax", "SalesRevenueNet",
                "RevenueFromContractWithCustomerIncludingAssessedTax", "SalesRevenueGoodsNet", "RegulatedAndUnregulatedOperatingRevenue",
                "SalesRevenueServicesNet",  # eBay's "Net revenues" (a services-only filer; others file Revenues beside it)
                "ifrs:Revenue"],
    "cost_of_revenue": ["CostOfRevenue", "CostOfGoodsAndServicesSold", "CostOfGoodsSold", "ifrs:CostOfSales"],
    "operating_income": ["OperatingIncomeLoss", "ifrs:ProfitLossFromOperatingActivities"],
    "pretax_income": ["IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest",
                      "IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethodInvestments",
                      "ifrs:ProfitLossBeforeTax",
                      # filers' own elements for their "Income before income taxes" line (Duke, eBay, Verizon 10-Qs; Verizon's
                      # 10-K; Ford, spelt IncomeLosse in one 10-Q; Honeywell)
                      "custom:IncomeLossFromContinuingOperationsBeforeIncomeTaxes",
                      "custom:IncomeLossBeforeProvisionForIncomeTaxesDiscontinuedOperationsAndExtraordinaryItem",
                      "custom:IncomeLossBeforeIncomeTaxes", "custom:IncomeLosseBeforeIncomeTaxes", "custom:IncomeBeforeTaxes"],
    "income_tax": ["IncomeTaxExpenseBenefit", "ifrs:IncomeTaxExpenseContinuingOperations"],
    "net_income": ["ProfitLoss", "NetIncomeLoss", "ifrs:ProfitLoss"],
    "net_income_parent": ["NetIncomeLoss", "ifrs:ProfitLossAttributableToOwnersOfParent"],
    "net_income_common_basic": ["NetIncomeLossAvailableToCommonStockholdersBasic"],  # after preferred dividends
    "net_income_common_diluted": ["NetIncomeLossAvailableToCommonStockholdersDiluted"],
    "rd_expense": ["ResearchAndDevelopmentExpense", "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost",
                   "ifrs:ResearchAndDevelopmentExpense"],
    "selling_expense": ["SellingAndMarketingExpense", "ifrs:SellingExpense"],
    "admin_expense": ["GeneralAndAdministrativeExpense", "ifrs:AdministrativeExpense", "ifrs:GeneralAndAdministrativeExpense"],
    "operating_expenses": ["OperatingExpenses", "ifrs:OperatingExpense"],
    "sga_expense": ["SellingGeneralAndAdministrativeExpense", "ifrs:SellingGeneralAndAdministrativeExpense"],
    "interest_expense": ["InterestExpense", "InterestExpenseNonoperating", "InterestExpenseDebt", "ifrs:InterestExpense"],
    "eps_basic": ["EarningsPerShareBasic", "EarningsPerShareBasicAndDiluted", "ifrs:BasicEarningsLossPerShare"],
    "eps_diluted": ["EarningsPerShareDiluted", "EarningsPerShareBasicAndDiluted", "ifrs:DilutedEarningsLossPerShare"],
    "shares_basic": ["WeightedAverageNumberOfSharesOutstandingBasic", "ifrs:WeightedAverageShares"],
    "shares_diluted": ["WeightedAverageNumberOfDilutedSharesOutstanding", "WeightedAverageNumberOfShareOutstandingBasicAndDiluted",
                       "ifrs:AdjustedWeightedAverageShares"],
    "shares_outstanding": ["CommonStockSharesOutstanding"],
    "operating_cash_flow": ["NetCashProvidedByUsedInOperatingActivities", "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations",
                            "ifrs:CashFlowsFromUsedInOperatingActivities"],
    "investing_cash_flow": ["NetCashProvidedByUsedInInvestingActivities", "NetCashProvidedByUsedInInvestingActivitiesContinuingOperations",
                            "ifrs:CashFlowsFromUsedInInvestingActivities"],
    "financing_cash_flow": ["NetCashProvidedByUsedInFinancingActivities", "NetCashProvidedByUsedInFinancingActivitiesContinuingOperations",
                            "ifrs:CashFlowsFromUsedInFinancingActivities"],
    "capex": ["PaymentsToAcquirePropertyPlantAndEquipment", "PaymentsToAcquireProductiveAssets", "ifrs:PurchaseOfPropertyPlantAndEquipmentClassifiedAsInvestingActivities"],
    "construction_in_process": ["PaymentsForConstructionInProcess"],  # utilities' second capex line (added to capex)
    # the cash-flow line first: Apple FY2012 tagged its cash-flow D&A (3,277 M) DepreciationAmortizationAndAccretionNet and a
    # note's PP&E figure (2,600 M) DepreciationAndAmortization
    # DepreciationAmortizationAndAccretionNet is a cash-flow element; Apple's FY2017 10-K uses DDA for a notes figure (FY2015 9.2 B)
    "depreciation_amortization": ["DepreciationAmortizationAndAccretionNet", "DepreciationDepletionAndAmortization",
                                  "DepreciationAndAmortization", "ifrs:DepreciationAndAmortisationExpense"],
    "dividends_paid": ["PaymentsOfDividends", "PaymentsOfDividendsCommonStock", "ifrs:DividendsPaidClassifiedAsFinancingActivities"],
    "share_repurchase": ["PaymentsForRepurchaseOfCommonStock"],
    "stock_based_compensation": ["ShareBasedCompensation", "AllocatedShareBasedCompensationExpense"],
    "total_assets": ["Assets", "ifrs:Assets"],
    "current_assets": ["AssetsCurrent", "ifrs:CurrentAssets"],
    "noncurrent_assets": ["AssetsNoncurrent", "NoncurrentAssets", "ifrs:NoncurrentAssets"],
    "cash": ["CashAndCashEquivalentsAtCarryingValue", "ifrs:CashAndCashEquivalents"],
    "inventory": ["InventoryNet", "ifrs:Inventories"],
    "accounts_receivable": ["AccountsReceivableNetCurrent", "ReceivablesNetCurrent", "AccountsNotesAndLoansReceivableNetCurrent", "ifrs:CurrentTradeReceivables", "ifrs:TradeAndOtherCurrentReceivables"],
    "accounts_payable": ["AccountsPayableCurrent", "ifrs:TradeAndOtherCurrentPayablesToTradeSuppliers", "ifrs:TradeAndOtherCurrentPayables"],
    "ppe_net": ["PropertyPlantAndEquipmentNet", "ifrs:PropertyPlantAndEquipment"],
    "goodwill": ["Goodwill", "ifrs:Goodwill"],
    "intangible_assets": ["IntangibleAssetsNetExcludingGoodwill", "OtherIntangibleAssetsNet", "FiniteLivedIntangibleAssetsNet",
                          "ifrs:IntangibleAssetsOtherThanGoodwill"],
    # my reading: indefinite-lived licences are intangible assets too (ASC 350); Verizon shows "Wireless licenses" as its
    # own balance-sheet line beside "Other intangible assets, net"
    "licences": ["IndefiniteLivedLicenseAgreements"],
    "total_liabilities": ["Liabilities", "ifrs:Liabilities"],
    "current_liabilities": ["LiabilitiesCurrent", "ifrs:CurrentLiabilities"],
    "noncurrent_liabilities": ["LiabilitiesNoncurrent", "ifrs:NoncurrentLiabilities"],
    "total_equity": ["StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest", "ifrs:Equity"],
    "equity_parent": ["StockholdersEquity", "ifrs:EquityAttributableToOwnersOfParent"],
    "minority_interest": ["MinorityInterest", "ifrs:NoncontrollingInterests"],
    "retained_earnings": ["RetainedEarningsAccumulatedDeficit", "ifrs:RetainedEarnings"],
    "capital_reserve": ["AdditionalPaidInCapital", "AdditionalPaidInCapitalCommonStock", "ifrs:SharePremium"],
    # statutory surplus reserve (盈余公积); TSMC tags its legal capital reserve (276,034 M TWD at 2018-12-31) ifrs:CapitalReserve
    "surplus_reserve": ["ifrs:CapitalReserve"],
    "liabilities_and_equity": ["LiabilitiesAndStockholdersEquity", "ifrs:EquityAndLiabilities"],
    # balance-sheet borrowings (my reading: what a balance sheet presents as debt)
    "debt_current_total": ["DebtCurrent"],
    # eBay's "Borrowings from credit agreement" (LinesOfCreditCurrent, 1,000 M at 2008-12-31 on its balance sheet)
    "short_term_borrowings": ["ShortTermBorrowings", "ShortTermBankLoansAndNotesPayable", "OtherShortTermBorrowings", "LinesOfCreditCurrent",
                              "ifrs:ShorttermBorrowings", "ifrs:CurrentBorrowings"],
    "notes_payable_current": ["NotesPayableCurrent"],
    "commercial_paper": ["CommercialPaper"],
    "ltd_current": ["LongTermDebtCurrent", "LongTermDebtAndCapitalLeaseObligationsCurrent", "ifrs:CurrentPortionOfLongtermBorrowings"],
    "convertible_current": ["ConvertibleNotesPayableCurrent", "ConvertibleDebtCurrent"],
    "bonds_noncurrent": ["ifrs:NoncurrentPortionOfNoncurrentBondsIssued"],
    "ltd_noncurrent": ["LongTermDebtNoncurrent", "LongTermDebtAndCapitalLeaseObligations", "ifrs:LongtermBorrowings"],
    "ltd_total": ["LongTermDebt"],
    "ltd_noncurrent_debt_only": ["LongTermDebtNoncurrent"],  # notes only, without the capital/finance leases of the combined line
    "convertible_noncurrent": ["ConvertibleDebtNoncurrent", "ConvertibleLongTermNotesPayable"],
    "finance_lease_current": ["FinanceLeaseLiabilityCurrent", "CapitalLeaseObligationsCurrent"],  # capital = finance lease before ASC 842
    "finance_lease_noncurrent": ["FinanceLeaseLiabilityNoncurrent", "CapitalLeaseObligationsNoncurrent"],
    "debt_total_only": ["DebtAndCapitalLeaseObligations"],  # one total line (Ford 2009: automotive + financial services)
    # borrowings of consolidated variable-interest entities, a balance-sheet line of their own (Duke 2010: 350 M + 379 M)
    "vie_debt_current": ["NonrecourseNotesPayableOfVariableInterestEntitiesCurrent"],
    "vie_debt_noncurrent": ["NonrecourseLongTermDebtOfVariableInterestEntitiesNoncurrent",
                            "custom:Non-recourseBorrowingsOfConsolidatedSecuritizationEntities"],  # GE from 2010 (SFAS 167)
    "operating_lease_current": ["OperatingLeaseLiabilityCurrent", "ifrs:CurrentLeaseLiabilities"],
    "operating_lease_noncurrent": ["OperatingLeaseLiabilityNoncurrent", "ifrs:NoncurrentLeaseLiabilities"],
}
OUTFLOWS = {"capex", "construction_in_process", "dividends_paid", "share_repurchase"}
KIND = {"eps_basic": "per_share", "eps_diluted": "per_share", "shares_basic": "shares", "shares_diluted": "shares",
        "shares_outstanding": "shares"}
INSTANT = {"total_assets", "current_assets", "noncurrent_assets", "cash", "inventory", "accounts_receivable", "accounts_payable",
           "ppe_net", "goodwill", "intangible_assets", "licences", "total_liabilities", "current_liabilities", "noncurrent_liabilities",
           "total_equity", "equity_parent", "minority_interest", "retained_earnings", "capital_reserve", "surplus_reserve", "liabilities_and_equity",
           "shares_outstanding", "debt_current_total", "short_term_borrowings", "commercial_paper", "ltd_current",
           "convertible_current", "notes_payable_current", "debt_total_only", "bonds_noncurrent", "ltd_noncurrent", "ltd_total", "convertible_noncurrent", "finance_lease_current",
           "finance_lease_noncurrent", "ltd_noncurrent_debt_only", "operating_lease_current", "operating_lease_noncurrent",
           "vie_debt_current", "vie_debt_noncurrent"}


class Missing(Exception):
    """The filer's data has no value for this concept and window (recorded as 'not covered', never a pass)."""


def _d(s: str) -> dt.date:
    return dt.date.fromisoformat(s)


PERIOD_RE = re.compile(r"^FY(\d{4})(?:(Q[1-4])(TTM|YTD)?|(H1))?$")


def parse_label(label: str) -> tuple[int, str, int]:
    """'FY2023' -> (2023,'FY',4); 'FY2023Q2' -> (2023,'Q',2); 'FY2023H1' -> (2023,'YTD',2); 'FY2023Q3YTD' -> YTD 3; Q2TTM -> TTM 2."""
    m = PERIOD_RE.match(label)
    if not m:
        raise ValueError(f"period label {label!r} not understood")
    year = int(m.group(1))
    if m.group(4):
        return year, "YTD", 2
    if not m.group(2):
        return year, "FY", 4
    q = int(m.group(2)[1])
    suffix = m.group(3)
    if suffix == "TTM":
        return year, ("FY" if q == 4 else "TTM"), q
    if suffix == "YTD":
        return year, ("FY" if q == 4 else "YTD"), q
    return year, "Q", q


class Company:
    """All facts of one companyfacts file, indexed by tag and window."""

    def __init__(self, ticker: str, path: Path | None = None):
        self.ticker = ticker
        # facts[tag] = list of (start|None, end, val, filed, accn, form, unit, fy, fp)
        self.facts: dict[str, list[tuple]] = defaultdict(list)
        path = path or next(DATA.glob(f"CIK*_{ticker}.json.gz"), None)
        instances = sorted((DATA.parent / "xbrl").glob(f"{ticker.lower()}-*_htm.xml.gz"))
        if path is not None:
            self._load_companyfacts(path)
        elif instances:
            for inst in instances:
                self._load_xbrl(inst)
        else:
            self._load_fsds(ticker)
        money = Counter(r[6] for rows in self.facts.values() for r in rows if "/" not in r[6] and r[6] not in ("shares", "pure"))
        self.currency = money.most_common(1)[0][0]  # the reporting currency (20-F filers add USD convenience figures)
        self._calendar()
        self._splits()

    def _load_fsds(self, ticker: str) -> None:
        """SEC Financial Statement Data Sets (sub/num): consolidated registrant rows only (no segments, no co-registrant).

        num.txt has the period end (ddate, month-end) and its length in quarters (qtrs); the start is the first day
        of the month qtrs x 3 months earlier."""
        tickers = json.loads((DATA.parent / "company_tickers.json").read_text(encoding="utf-8"))
        cik = next((str(v["cik_str"]) for v in tickers.values() if v["ticker"] == ticker), None)
        if cik is None:
            raise FileNotFoundError(f"{ticker}: neither a companyfacts file nor a CIK in company_tickers.json")
        per_share = {t for c, kind in KIND.items() if kind == "per_share" for t in TAGS[c]}
        read_tags = {t for tags in TAGS.values() for t in tags}
        subs, plain, entity_rows = {}, set(), {}
        for folder in sorted((DATA.parent / "fsds").glob("20*q*")):
            with gzip.open(folder / "sub.txt.gz", "rt", encoding="utf-8") as fh:
                head = fh.readline().rstrip("\n").split("\t")
                for line in fh:
                    row = dict(zip(head, line.rstrip("\n").split("\t")))
                    if row["cik"] == cik:
                        subs[row["adsh"]] = row
            with gzip.open(folder / "num.txt.gz", "rt", encoding="utf-8") as fh:
                head = fh.readline().rstrip("\n").split("\t")
                for line in fh:
                    row = dict(zip(head, line.rstrip("\n").split("\t")))
                    sub = subs.get(row["adsh"])
                    if sub is None or row["value"] == "":
                        continue
                    # multi-registrant filings (Con Edison, Sempra) tag the registrant's own consolidated statements
                    # LegalEntity=ParentCompany (coreg ParentCompany): used only where the filing has no plain row
                    segments, coreg = row.get("segments") or "", row.get("coreg") or ""
                    if (segments, coreg) not in (("", ""), ("LegalEntity=ParentCompany;", "ParentCompany"), ("LegalEntity=ParentCompany;", "")):
                        continue
                    end = dt.datetime.strptime(row["ddate"], "%Y%m%d").date()
                    q = int(row["qtrs"])
                    start = None
                    if q:
                        y, m = end.year, end.month - 3 * q + 1
                        while m < 1:
                            y, m = y - 1, m + 12
                        start = dt.date(y, m, 1)
                    # an element the filer defined itself (version = its accession) under the name of a US-GAAP element
                    # read here is that element (Duke's 2009 10-Qs on the 2008 taxonomy define ProfitLoss themselves)
                    standard = row["version"].startswith("us-gaap") or (row["version"] == row["adsh"] and row["tag"] in read_tags)
                    tag = row["tag"] if standard else "custom:" + row["tag"]
                    unit = row["uom"] + ("/shares" if tag in per_share and "/" not in row["uom"] else "")
                    filed = f"{sub['filed'][:4]}-{sub['filed'][4:6]}-{sub['filed'][6:8]}"
                    fy = int(float(sub["fy"])) if sub.get("fy") else None
                    key = (tag, row["adsh"], row["ddate"], row["qtrs"], row["uom"])
                    if segments:
                        entity_rows[key] = (start, end, float(row["value"]), filed, row["adsh"], sub["form"], unit, fy, sub.get("fp"))
                        continue
                    plain.add(key)
                    self.facts[tag].append((start, end, float(row["value"]), filed, row["adsh"], sub["form"], unit, fy, sub.get("fp")))
        for key, fact in entity_rows.items():
            if key not in plain:
                self.facts[key[0]].append(fact)
        if not self.facts:
            raise FileNotFoundError(f"{ticker} (CIK {cik}): no FSDS rows in {DATA.parent / 'fsds'}")
        self.name = next(iter(subs.values()))["name"]

    def _load_xbrl(self, path: Path) -> None:
        """One XBRL instance (10-K / 10-Q): undimensioned contexts only. An instance carries no filing date, so its
        document period end date stands in for it (a later report counts as filed later)."""
        import xml.etree.ElementTree as ET

        root = ET.parse(gzip.open(path)).getroot()
        xbrli, dei_ns = "{http://www.xbrl.org/2003/instance}", None
        contexts, units, meta = {}, {}, {}
        for ctx in root.iter(xbrli + "context"):
            if ctx.find(f"{xbrli}entity/{xbrli}segment") is not None or ctx.find(xbrli + "scenario") is not None:
                continue
            per = ctx.find(xbrli + "period")
            inst = per.find(xbrli + "instant")
            if inst is not None:
                contexts[ctx.get("id")] = (None, _d(inst.text.strip()))
            else:
                contexts[ctx.get("id")] = (_d(per.find(xbrli + "startDate").text.strip()), _d(per.find(xbrli + "endDate").text.strip()))
        for unit in root.iter(xbrli + "unit"):
            measures = [m.text.split(":")[-1] for m in unit.iter(xbrli + "measure")]
            units[unit.get("id")] = "/".join(measures)
        for el in root:
            ns, _, local = el.tag[1:].partition("}")
            if "xbrl.sec.gov/dei" in ns and local in ("DocumentType", "DocumentPeriodEndDate", "DocumentFiscalYearFocus",
                                                       "DocumentFiscalPeriodFocus", "EntityRegistrantName"):
                meta[local] = (el.text or "").strip()
        self.name = meta.get("EntityRegistrantName", self.ticker)
        filed, form = meta["DocumentPeriodEndDate"], meta.get("DocumentType", "")
        fy, fp = int(meta["DocumentFiscalYearFocus"]), meta.get("DocumentFiscalPeriodFocus")
        for el in root:
            ns, _, local = el.tag[1:].partition("}")
            ctx = contexts.get(el.get("contextRef"))
            if ctx is None or el.get("unitRef") is None or not (el.text or "").strip():
                continue
            tag = local if "fasb.org/us-gaap" in ns else f"{ns.rsplit('/', 1)[-1]}:{local}"
            self.facts[tag].append((ctx[0], ctx[1], float(el.text), filed, path.name, form, units.get(el.get("unitRef"), ""), fy, fp))

    def _load_companyfacts(self, path: Path) -> None:
        raw = json.load(gzip.open(path))
        self.name = raw.get("entityName", "")
        for taxonomy, tags in raw["facts"].items():
            for tag, body in tags.items():
                key = tag if taxonomy == "us-gaap" else ("ifrs:" + tag if taxonomy == "ifrs-full" else f"{taxonomy}:{tag}")
                for unit, rows in body["units"].items():
                    for r in rows:
                        start = _d(r["start"]) if r.get("start") else None
                        self.facts[key].append((start, _d(r["end"]), float(r["val"]), r["filed"], r["accn"], r.get("form", ""),
                                                unit, r.get("fy"), r.get("fp")))

    # ---- fiscal calendar -------------------------------------------------------------------------
    def _calendar(self) -> None:
        """Fiscal year ends: 12-month windows tagged in annual filings, labelled from the filing's own fy."""
        doc_end: dict[str, dt.date] = {}
        doc_fy: dict[str, int] = {}
        annual_windows = Counter()
        for rows in self.facts.values():
            for start, end, _v, _f, accn, form, _u, fy, fp in rows:
                if form in ANNUAL_FORMS and start and 350 <= (end - start).days <= 380:
                    doc_end[accn] = max(doc_end.get(accn, end), end)  # the filing's own fiscal year: its latest 12-month window
                    if fy:
                        doc_fy[accn] = fy
                    annual_windows[end] += 1
        anchors = sorted((doc_end[a], doc_fy[a]) for a in doc_end if a in doc_fy)
        if not anchors:
            raise ValueError(f"{self.ticker}: no annual filing to anchor the fiscal calendar")
        self.fye: dict[int, dt.date] = {}
        votes: dict[int, Counter] = defaultdict(Counter)
        # label = calendar year of the (week-shifted) year end + the offset most filings use (a few carry a wrong fy)
        offset = Counter(a_fy - (a_end - dt.timedelta(days=7)).year for a_end, a_fy in anchors).most_common(1)[0][0]
        for end in annual_windows:
            year = (end - dt.timedelta(days=7)).year + offset
            votes[year][end] += annual_windows[end]
        for year, c in votes.items():
            self.fye[year] = c.most_common(1)[0][0]
        self.ends = Counter(end for rows in self.facts.values() for (_s, end, *_rest) in rows)

    def fy_end(self, year: int) -> dt.date:
        if year in self.fye:
            return self.fye[year]
        known = min(self.fye, key=lambda y: abs(y - year))
        guess = self.fye[known] + dt.timedelta(days=round(365.25 * (year - known)))
        near = [e for e in self.ends if abs((e - guess).days) <= 7]
        return max(near, key=lambda e: self.ends[e]) if near else guess

    def quarter_end(self, year: int, q: int) -> dt.date:
        if q == 4:
            return self.fy_end(year)
        start = self.fy_end(year - 1)
        guess = start + dt.timedelta(days=round(91.3 * q))
        near = [e for e in self.ends if abs((e - guess).days) <= 10]
        if not near:
            raise Missing(f"no tagged date near the end of FY{year}Q{q}")
        return max(near, key=lambda e: (self.ends[e], -abs((e - guess).days)))

    # ---- split basis -----------------------------------------------------------------------------
    def _splits(self) -> None:
        """Split events (date of the first filing on the new basis, factor), from restated per-share comparatives."""
        events = []
        for concept in ("eps_basic", "eps_diluted"):
            for tag in TAGS[concept]:
                cells = defaultdict(list)
                for start, end, v, filed, accn, *_ in self.facts.get(tag, []):
                    cells[(start, end)].append((filed, v))
                for vals in cells.values():
                    vals.sort()
                    for (f0, v0), (f1, v1) in zip(vals, vals[1:]):
                        if v1 == 0 or v0 == 0 or (v0 > 0) != (v1 > 0) or abs(v0) < 0.05:
                            continue
                        r = v0 / v1
                        for k in SPLIT_FACTORS:
                            if abs(r - k) <= 0.03 * k and abs(v0 - k * v1) <= 0.011 * k + 0.01:
                                events.append((f1, k))
        self.split_events: list[tuple[str, int]] = []
        for f1, k in sorted(events):
            if not any(k == k2 and abs((_d(f1) - _d(d2)).days) < 400 for d2, k2 in self.split_events):
                self.split_events.append((f1, k))

    def basis_factor(self, filed: str) -> int:
        """Product of split factors of splits after `filed` (1 for a filing on the latest basis)."""
        f = 1
        for when, k in self.split_events:
            if filed < when:
                f *= k
        return f

    # ---- raw lookups -----------------------------------------------------------------------------
    def balance_filing(self, end: dt.date, pick: str = "latest") -> str | None:
        """The filing (accession) whose balance sheet at `end` is read: the latest (or, for 'original', the first)
        filing that reports total assets at that date."""
        rows = sorted((r[3], r[4]) for t in TAGS["total_assets"] for r in self.facts.get(t, []) if r[1] == end and r[0] is None)
        if not rows:
            return None
        return rows[0][1] if pick in ("original", "as_filed") else rows[-1][1]

    def cell(self, concept: str, start: dt.date | None, end: dt.date, pick: str = "latest", accn: str | None = None,
             shown: int | None = None) -> tuple[float, dict]:
        """One reported value: the first tag in priority order with a fact for this window (from filing `accn` if given)."""
        kind = KIND.get(concept)
        unit = {"per_share": self.currency + "/shares", "shares": "shares"}.get(kind, self.currency)
        # a balance comes from a filing whose balance sheet shows that date (total assets there) when any filing has one:
        # a later equity statement's opening balance (TSMC's 2020 20-F: equity at 2017-12-31 after IFRS 9/15) is no sheet
        sheets = {r[4] for t in TAGS["total_assets"] for r in self.facts.get(t, []) if r[1] == end and r[0] is None} \
            if start is None and accn is None else set()
        candidates = [(tag, only) for only in ((sheets, None) if sheets else (None,)) for tag in TAGS[concept]]
        for tag, only in candidates:
            rows = [r for r in self.facts.get(tag, []) if r[1] == end and r[6] == unit and (accn is None or r[4] == accn) and (
                (start is None and r[0] is None) or (start is not None and r[0] is not None and abs((r[0] - start).days) <= 7))
                and (only is None or r[4] in only)]
            if not rows:
                continue
            rows.sort(key=lambda r: (r[3], r[4]))
            if concept == "net_income" and tag == "ProfitLoss":
                rows = self._without_parent_share(rows, start, end, unit)
            if pick == "finer" and start is not None:  # README conventions: a later flow figure that only repeats an
                # earlier one more coarsely gives way to it (balance sheets are read as the latest filing presents them)
                rows = [r for i, r in enumerate(rows) if not any(self._coarser(r, e, kind) for e in rows[:i])] or rows
            if pick in ("original", "as_filed"):
                row = rows[0]
            else:  # latest filed; several tagged values in that filing: the one whose start is closest
                last = [r for r in rows if r[3] == rows[-1][3] and r[4] == rows[-1][4]]
                row = min(last, key=lambda r: abs((r[0] - start).days) if start else 0)
            value = row[2]
            if concept == "net_income" and tag == "NetIncomeLoss":
                value += self._nci_share(start, end, unit, row[4])
            if concept == "shares_outstanding":
                value *= self._thousands_slip(value, row[4])
            if concept in OUTFLOWS and value < 0:  # a Payments... element is a positive outflow; some filers tag it negative
                value = -value  # (Kellogg 2009 10-Q/A capex -179 M, Honeywell and Texas Instruments 2009 filings)
            if kind == "per_share" and pick not in ("as_filed", "latest_raw"):
                value = value / self.basis_factor(row[3])
                if shown is not None and self.basis_factor(row[3]) != 1:  # a rescaled figure as the prompt shows it
                    value = round(value, shown)
            elif kind == "shares" and pick not in ("as_filed", "latest_raw"):
                value = value * self.basis_factor(row[3])
            return value, {"tag": tag, "start": str(row[0]) if row[0] else "", "end": str(end), "value": row[2],
                           "filed": row[3], "accn": row[4]}
        raise Missing(f"{self.ticker}: {concept} for {start or ''}..{end} not tagged")

    def _same_window(self, tag: str, start, end, unit: str, accn: str | None = None) -> list[tuple]:
        return [r for r in self.facts.get(tag, []) if r[1] == end and r[6] == unit and (accn is None or r[4] == accn)
                and r[0] is not None and start is not None and abs((r[0] - start).days) <= 7]

    def _nci_share(self, start, end, unit: str, accn: str) -> float:
        """Consolidated net income where a filing tags no ProfitLoss: NetIncomeLoss + the noncontrolling interests'
        share the same filing reports for the window (GAAP: ProfitLoss = NetIncomeLoss + NCI; README fidelity audit)."""
        for tag in ("NetIncomeLossAttributableToNoncontrollingInterest", "MinorityInterestInNetIncomeLossOfConsolidatedEntities"):
            rows = self._same_window(tag, start, end, unit, accn)
            if rows:
                return rows[-1][2]
        return 0.0

    def _without_parent_share(self, rows: list[tuple], start, end, unit: str) -> list[tuple]:
        """ProfitLoss rows without a filing's figure that equals its own NetIncomeLoss while that filing shows a non-zero
        noncontrolling share for the window and another filing reports the window's ProfitLoss apart from NetIncomeLoss
        (the parent's share tagged as the total). Equal figures in a filing without such a share are a restatement: Ford's
        8-K of 2010-05-07 recasts FY2009 after deconsolidating entities (SFAS 167), 2,717 M with no noncontrolling share,
        where its 10-K showed 2,962 M with 245 M (seed-5151 run: this checker alone still took the 10-K's)."""
        parent = {r[4]: r[2] for r in self._same_window("NetIncomeLoss", start, end, unit)}
        if not any(r[4] in parent and r[2] != parent[r[4]] for r in rows):
            return rows
        shares = {r[4] for t in ("NetIncomeLossAttributableToNoncontrollingInterest", "MinorityInterestInNetIncomeLossOfConsolidatedEntities")
                  for r in self._same_window(t, start, end, unit) if r[2] != 0}
        return [r for r in rows if not (r[4] in parent and r[2] == parent[r[4]] and r[4] in shares)] or rows

    def _thousands_slip(self, value: float, accn: str) -> float:
        """1000 where a filing's shares outstanding are ~1/1000 of the weighted basic shares it reports (a count tagged
        in thousands: Apple's FY2014 Q2 10-Q), else 1."""
        weighted = [r[2] for r in self.facts.get("WeightedAverageNumberOfSharesOutstandingBasic", []) if r[4] == accn and r[2]]
        return 1000.0 if value and weighted and 0.5 < value * 1000 / weighted[-1] < 2 else 1.0

    def _coarser(self, later: tuple, earlier: tuple, kind: str | None) -> bool:
        """Is `later` only `earlier` at a coarser rounding? Per-share: on the latest split basis, `earlier` carries more
        digits (a larger rescale factor) and `later` is within half a cent on the basis it was filed on. Amounts and share
        counts on one basis: `later` is rounded to a larger power of ten (at most millions) and less than one unit of
        that rounding away from `earlier`."""
        if later[3] <= earlier[3]:
            return False
        if kind == "per_share":
            f_later, f_earlier = self.basis_factor(later[3]), self.basis_factor(earlier[3])
            return f_earlier > f_later and abs(later[2] / f_later - earlier[2] / f_earlier) <= 0.005 / f_later + 1e-12
        if self.basis_factor(later[3]) != self.basis_factor(earlier[3]):
            return False

        def rounding(v: float) -> int:
            q = 1
            while q < 1_000_000 and v and float(v).is_integer() and int(abs(v)) % (q * 10) == 0:
                q *= 10
            return q

        a, b = later[2], earlier[2]
        if not a or not b or not float(a).is_integer() or not float(b).is_integer():
            return False
        return rounding(b) < rounding(a) and abs(a - b) < rounding(a)

    def has(self, concept: str) -> bool:
        return any(t in self.facts for t in TAGS[concept])


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from recompute import Engine  # noqa: E402

    ticker, concept, label = sys.argv[1:4]
    eng = Engine(Company(ticker))
    print(eng.concept_value(concept, label))
