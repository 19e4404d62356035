"""FactStore: canonical facts arranged by report, plus the exact period algebra over them.

    from ledgerlm.synth.statements.sources import load_facts
    from ledgerlm.synth.statements.store import FactStore
    store = FactStore(load_facts())
    store.value("NVDA", "operating_income", "FY2026Q4").value   # FY - nine-month YTD
    store.report_statement("AAPL", "FY2023", "income")          # DESIGN.md statement dict

Every value is derived from *reports* (one filing's year-to-date flows and period-end stocks), so a
store restricted to the reports a prompt shows (`restrict`) answers exactly what that prompt allows:
a missing report raises `NotDerivable` naming it (the deficiency trap rests on this).

The fiscal calendar is read from the facts: annual windows (350-380 days) are fiscal years, labelled
by the fiscal year the 10-K/20-F itself declares for its own latest period (Apple FY2023 ends
2023-09-30; NVIDIA FY2026 ends 2026-01-25); 52/53-week years need no special case because every
window is matched by its actual start and end dates.
"""
from __future__ import annotations

import copy
import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Iterable

import pandas as pd

from ledgerlm.errors import InputError, LedgerError, NotDerivable
from ledgerlm.synth.statements.companyfacts import ticker_map
from ledgerlm.synth.statements.periods import Period, ReportKey, parse_period, parse_report
from ledgerlm.synth.statements.taxonomy import concept_info
from ledgerlm.synth.statements.taxonomy import concepts as taxonomy_concepts

EPS_SHARES = {"eps_basic": "shares_basic", "eps_diluted": "shares_diluted"}  # EPS concept -> its denominator
QUARTER_COLUMNS = frozenset({*EPS_SHARES, *EPS_SHARES.values()})  # non-additive lines read from the 3-month column
_SPLIT_RE = re.compile(r"\d+(?:\.\d+)?-for-1 stock split \([^)]*\)")
_SPLIT_PARTS_RE = re.compile(r"(\d+(?:\.\d+)?)-for-1 stock split \(filings up to [\d-]+ on the old basis, from ([\d-]+) on the new\)")
_AS_FILED_RE = re.compile(r"as filed (-?[\d.]+) / ([\d.]+) =")  # a per-share figure rescaled for a split (splits.py)
ANNUAL_DAYS = (350, 380)
QUARTER_DAYS = (80, 100)
DAYS_PER_QUARTER = 365.25 / 4


@dataclass(frozen=True)
class FactRef:
    """One reported value a computation used."""

    concept: str
    report: str  # report label, e.g. FY2023Q3YTD
    value: float
    source: str  # accession number or file
    label: str = ""
    unit: str = ""
    tag: str = ""  # the taxonomy tag (or statement label) the value was reported under
    note: str = ""  # a correction applied to the filed value (split basis, scale slip, kept original line)


@dataclass
class Derived:
    """A value with its provenance: the facts it came from and the arithmetic in words."""

    value: float
    unit: str
    inputs: list[FactRef] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)

    @property
    def reports(self) -> set[str]:
        return {f.report for f in self.inputs}


@dataclass(frozen=True)
class FiscalYear:
    label: int
    start: dt.date
    end: dt.date | None  # None while the year is still in progress in the data


@dataclass
class _Cell:
    value: float
    unit: str
    source: str
    label: str
    filed: str
    statement: str
    tag: str
    note: str = ""


def forget_frames(err: Exception) -> Exception:
    """`err` without its traceback and context, to be remembered in a cache (and raised as copies): otherwise
    the cache keeps every frame of the raise alive, with the caller's locals (whole shards of synth rows)."""
    err.__traceback__ = err.__context__ = err.__cause__ = None
    return err


def _concept_meta(concept: str) -> tuple[str, str]:
    """(statement, kind) for a canonical concept, from the taxonomy data when it knows the key."""
    try:
        info = concept_info(concept)
    except KeyError:  # not a canonical key (e.g. a user's own concept): callers fall back on the facts
        return "", ""
    return info.statement, info.kind


class FactStore:
    """Canonical facts (contract 1) indexed by (company, scope, concept, report)."""

    quarter_columns = True  # standalone-quarter EPS / weighted shares from the filed 3-month column when there is one

    def __init__(self, facts: pd.DataFrame, *, as_of: str | None = None, _allowed: dict[str, set[ReportKey]] | None = None,
                 quarter_columns: bool = True):
        """`facts` may hold every filed version of a value (restatements): the latest filed wins per
        report cell, and `as_of` (YYYY-MM-DD) keeps only values filed on or before that date.

        quarter_columns=False (synth: prompts show year-to-date reports only): a standalone quarter's EPS
        and weighted shares are always derived from the YTD reports, and a derived figure that misses
        the filed 3-month one (rounds to another cent on the filing's basis; 1 % for shares) raises LedgerError instead
        of giving an answer the filer contradicts."""
        self.quarter_columns = quarter_columns
        missing = {"company", "scope", "concept", "value", "unit", "start", "end"} - set(facts.columns)
        if missing:
            raise InputError(f"facts table lacks columns {sorted(missing)}", field=",".join(sorted(missing)))
        if as_of is not None and "filed" in facts.columns:
            filed = facts["filed"].astype(str)
            facts = facts[(filed != "") & (filed <= str(as_of))]
        self.facts = facts
        self.as_of = as_of
        self._allowed = _allowed
        if _allowed is None:
            self._build(facts)

    # -- construction ----------------------------------------------------------------------
    def _build(self, facts: pd.DataFrame) -> None:
        df = facts.copy()
        df["start"] = pd.to_datetime(df["start"].replace("", None), errors="coerce")
        df["end"] = pd.to_datetime(df["end"].replace("", None), errors="coerce")
        if df["end"].isna().any():
            bad = df[df["end"].isna()].iloc[0]
            raise InputError(
                f"fact without a valid end date: company {bad['company']}, concept {bad['concept']}",
                path=str(bad.get("source", "")) or None,
                field="end",
            )
        for col, default in (("filed", ""), ("source", ""), ("label", ""), ("statement", ""), ("tag", ""),
                             ("company_name", ""), ("fiscal_year", None), ("fiscal_period", ""), ("form", "")):
            if col not in df.columns:
                df[col] = default
        df["filed"] = df["filed"].astype(str)
        df = df.sort_values("filed", ascending=False, kind="stable")
        df["days"] = (df["end"] - df["start"]).dt.days

        self._names: dict[str, str] = {}
        self._calendars: dict[str, list[FiscalYear]] = {}
        self._cells: dict[tuple[str, str, str, ReportKey], _Cell] = {}
        self._quarter_reported: dict[tuple[str, str, str, int, int], _Cell] = {}
        self._report_ends: dict[tuple[str, ReportKey], dt.date] = {}
        self._report_filed: dict[tuple[str, str, ReportKey], str] = {}
        self.unplaced = 0  # facts whose window matched no fiscal period (e.g. 2-month stubs)

        for company, cdf in df.groupby("company", sort=True):
            company = str(company)
            names = cdf["company_name"].dropna().astype(str)
            self._names[company] = names.iloc[0] if len(names) else company
            years = self._fiscal_years(cdf)  # from every filed version: each filing labels its own year
            self._calendars[company] = years
            self._place(company, self._latest(cdf), years)
            self._first_filed(company, cdf)

    def _first_filed(self, company: str, cdf: pd.DataFrame) -> None:
        """Each report's filing date: the earliest filing (of every version given) that showed any
        value dated at the report's end: the original 10-K/10-Q, not a later recast or comparative."""
        key_by_end = {end: key for (c, key), end in self._report_ends.items() if c == company}
        rows = cdf[cdf["filed"].astype(str) != ""]
        ends = rows["end"].dt.date
        for (scope, end), filed in rows.groupby([rows["scope"].astype(str), ends])["filed"].min().items():
            key = key_by_end.get(end)
            if key is not None:
                self._report_filed[(company, scope or "consolidated", key)] = str(filed)

    @staticmethod
    def _fiscal_years(cdf: pd.DataFrame) -> list[FiscalYear]:
        annual = cdf[(cdf["days"] >= ANNUAL_DAYS[0]) & (cdf["days"] <= ANNUAL_DAYS[1])]
        windows = sorted({(s.date(), e.date()) for s, e in zip(annual["start"], annual["end"])}, key=lambda w: w[1])
        # One window per fiscal-year end (drop odd windows that share an end within a week).
        by_end: dict[dt.date, dt.date] = {}
        for start, end in windows:
            if not any(abs((end - e).days) <= 7 for e in by_end):
                by_end[end] = start
        # Label: the fiscal year each annual filing declares for its own latest period.
        offsets: Counter[int] = Counter()
        labelled = annual[annual["fiscal_year"].notna() & annual["fiscal_period"].astype(str).str.upper().eq("FY")]
        if len(labelled):
            # The filing's own year is the window that ended shortly before it was filed; older
            # windows in the same filing are comparatives that repeat the filing's fy label.
            filed = pd.to_datetime(labelled["filed"], errors="coerce")
            lag = (filed - labelled["end"]).dt.days
            latest = labelled[(lag >= 0) & (lag <= 120)]
            if latest.empty:
                latest = labelled.loc[labelled.groupby("source")["end"].transform("max") == labelled["end"]]
            for end, fy in zip(latest["end"], latest["fiscal_year"]):
                try:
                    offsets[int(float(fy)) - end.year] += 1
                except (TypeError, ValueError):
                    continue
        if offsets:
            offset = offsets.most_common(1)[0][0]
        else:  # 52/53-week years ending in the first days of January belong to the prior year
            ends = list(by_end)
            offset = -1 if ends and all(e.month == 1 and e.day <= 7 for e in ends) else 0
        years = [FiscalYear(end.year + offset, start, end) for end, start in sorted(by_end.items())]
        # Balance-sheet-only sources (e.g. one CAS table): annual instants outside every known year.
        instants = cdf[cdf["start"].isna() & cdf["fiscal_period"].astype(str).str.upper().isin(["", "FY", "NAN", "<NA>"])]
        for end in sorted({e.date() for e in instants["end"]}):
            if any(y.start - dt.timedelta(days=7) <= end <= y.end + dt.timedelta(days=7) for y in years):
                continue
            fys = instants.loc[instants["end"].dt.date == end, "fiscal_year"].dropna()
            label = int(fys.iloc[0]) if len(fys) else end.year + offset
            years.append(FiscalYear(label, end - dt.timedelta(days=364), end))
        years.sort(key=lambda y: y.end)
        # A year in progress: YTD windows that start the day after the last known year end.
        if years:
            nxt = years[-1].end + dt.timedelta(days=1)
            if ((cdf["start"].dt.date == nxt) & (cdf["days"] < ANNUAL_DAYS[0])).any():
                years.append(FiscalYear(years[-1].label + 1, nxt, None))
        return years

    @staticmethod
    def _latest(cdf: pd.DataFrame) -> pd.DataFrame:
        """One value per window: tag precedence, then the latest filing (see facts.select_latest)."""
        from ledgerlm.synth.statements.facts import select_latest

        out = select_latest(cdf.assign(start=cdf["start"].dt.strftime("%Y-%m-%d").fillna(""),
                                       end=cdf["end"].dt.strftime("%Y-%m-%d")).drop(columns="days"))
        out["start"] = pd.to_datetime(out["start"].replace("", None), errors="coerce")
        out["end"] = pd.to_datetime(out["end"])
        out["days"] = (out["end"] - out["start"]).dt.days
        return out.sort_values("filed", ascending=False, kind="stable")

    @classmethod
    def from_sources(cls, paths: list[str] | None = None, *, as_of: str | None = None) -> "FactStore":
        """Load facts (default: the embedded SEC data) keeping every filed version, then index them."""
        from ledgerlm.synth.statements.sources import load_facts

        return cls(load_facts(paths, latest_only=False), as_of=as_of)

    def _place(self, company: str, cdf: pd.DataFrame, years: list[FiscalYear]) -> None:
        starts = {fy.start: fy for fy in years}
        quarter_ends: dict[dt.date, ReportKey] = {}
        for fy in years:
            if fy.end is not None:
                quarter_ends[fy.end] = ReportKey(fy.label, 4)
        durations = cdf[cdf["start"].notna()]
        # Year-to-date windows: start on a fiscal-year start.
        for start, end, days in zip(durations["start"], durations["end"], durations["days"]):
            fy = starts.get(start.date())
            if fy is None or days >= ANNUAL_DAYS[0]:
                continue
            q = round(days / DAYS_PER_QUARTER)
            if 1 <= q <= 3 and abs(days - q * DAYS_PER_QUARTER) <= 10:
                quarter_ends.setdefault(end.date(), ReportKey(fy.label, q))
        for (end, key) in quarter_ends.items():
            self._report_ends[(company, key)] = end

        def report_for_instant(day: dt.date) -> ReportKey | None:
            key = quarter_ends.get(day)
            if key is None:  # tolerate a few days' drift between balance-sheet date and window end
                for delta in (1, -1, 2, -2, 3, -3):
                    key = quarter_ends.get(day + dt.timedelta(days=delta))
                    if key:
                        break
            return key

        for row in cdf.itertuples(index=False):
            cell = _Cell(float(row.value), str(row.unit), str(row.source or ""), str(row.label or ""),
                         str(row.filed or ""), str(row.statement or ""), str(row.tag or ""), str(getattr(row, "adjustment", "") or ""))
            scope = str(row.scope or "consolidated")
            end = row.end.date()
            if pd.isna(row.start):
                key = report_for_instant(end)
                if key is None:
                    self.unplaced += 1
                    continue
            else:
                start, days = row.start.date(), int(row.days)
                fy = starts.get(start)
                key = None
                if fy is not None and days >= ANNUAL_DAYS[0]:
                    key = ReportKey(fy.label, 4) if fy.end == end else None
                elif fy is not None:
                    ytd = quarter_ends.get(end)
                    key = ytd if ytd is not None and ytd.fiscal_year == fy.label and ytd.quarters < 4 else None
                elif QUARTER_DAYS[0] <= days <= QUARTER_DAYS[1] and end in quarter_ends:
                    ytd = quarter_ends[end]
                    qkey = (company, scope, str(row.concept), ytd.fiscal_year, ytd.quarters)
                    self._quarter_reported.setdefault(qkey, cell)
                    continue
                if key is None:
                    self.unplaced += 1
                    continue
            ckey = (company, scope, str(row.concept), key)
            if ckey not in self._cells:  # rows are sorted latest-filed first
                self._cells[ckey] = cell

    # -- views -----------------------------------------------------------------------------
    def restrict(self, allowed: dict[str, Iterable[ReportKey | str]]) -> "FactStore":
        """A view that only sees the given reports of the given companies (all scopes)."""
        view = FactStore.__new__(FactStore)
        view.__dict__.update(self.__dict__)
        view._allowed = {c: {parse_report(r) for r in reps} for c, reps in allowed.items()}
        return view

    def with_reported_values(self, company: str, values: dict[tuple[str, str, str], float], source: str = "prompt") -> "FactStore":
        """A view of `company` that sees only `values` {(scope, concept, report label): value}, on this
        store's fiscal calendar and units: e.g. the numbers parsed back out of a rendered prompt."""
        company = self.resolve_company(company)
        reports = {parse_report(r) for _, _, r in values}
        view = self.restrict({company: reports})
        currency = next((c.unit for k, c in self._cells.items() if k[0] == company and "/" not in c.unit and c.unit.lower() != "shares"), "")
        cells = {}
        for (scope, concept, report), value in values.items():
            key = (company, scope, concept, parse_report(report))
            original = self._cells.get(key)
            unit = original.unit if original is not None else currency
            cells[key] = _Cell(float(value), unit, source, concept, "", original.statement if original else "", "")
        view._cells = cells
        # three-month EPS and share counts of the shown reports stay visible (a 10-Q shows its quarter's column)
        view._quarter_reported = {k: c for k, c in self._quarter_reported.items() if k[0] == company and k[2] in QUARTER_COLUMNS
                                  and ReportKey(k[3], k[4]) in reports}
        for cached in ("_report_index", "_by_company", "_concept_reports", "_statement_order", "_value_memo"):
            view.__dict__.pop(cached, None)
        return view

    def _company_cells(self, company: str) -> dict[tuple[str, str, ReportKey], "_Cell"]:
        """{(scope, concept, report): cell} for one company (indexed once; the scans are hot in synth)."""
        if "_by_company" not in self.__dict__:
            index: dict[str, dict] = {}
            for (c, scope, concept, report), cell in self._cells.items():
                index.setdefault(c, {})[(scope, concept, report)] = cell
            self._by_company = index
        return self._by_company.get(company, {})

    def _scope_index(self, company: str, scope: str) -> dict[str, set[ReportKey]]:
        """{concept: reports holding it} for one company and scope (built once per store; restricted views
        share it and filter by visibility, so it never depends on `_allowed`)."""
        if "_concept_reports" not in self.__dict__:
            self._concept_reports = {}
        key = (company, scope)
        if key not in self._concept_reports:
            index: dict[str, set[ReportKey]] = {}
            for (s, concept, report) in self._company_cells(company):
                if s == scope:
                    index.setdefault(concept, set()).add(report)
            self._concept_reports[key] = index
        return self._concept_reports[key]

    def _visible(self, company: str, report: ReportKey) -> bool:
        return self._allowed is None or report in self._allowed.get(company, set())

    # -- companies and calendars ---------------------------------------------------------------
    def companies(self) -> list[str]:
        return sorted(self._calendars)

    def company_name(self, company: str) -> str:
        return self._names.get(self.resolve_company(company), company)

    def resolve_company(self, query: str) -> str:
        """A ticker, a CIK (with or without leading zeros) or the exact entity name -> the store's key."""
        q = str(query).strip()
        if q in self._calendars:
            return q
        upper = {c.upper(): c for c in self._calendars}
        if q.upper() in upper:
            return upper[q.upper()]
        for company, name in self._names.items():
            if name.strip().lower() == q.lower():
                return company
        if q.isdigit():
            cik = int(q)
            for company in self._calendars:
                if company.isdigit() and int(company) == cik:
                    return company
            ticker = ticker_map().get(cik, ("", ""))[0].upper()
            if ticker in upper:
                return upper[ticker]
        raise InputError(f"unknown company {query!r}; known: {', '.join(self.companies())}", field="company")

    def fiscal_years(self, company: str) -> list[FiscalYear]:
        return list(self._calendars[self.resolve_company(company)])

    def period_end(self, company: str, period: Period | str) -> dt.date | None:
        p = parse_period(period)
        return self._report_ends.get((self.resolve_company(company), p.end_report()))

    def reports(self, company: str, scope: str = "consolidated") -> list[ReportKey]:
        company = self.resolve_company(company)
        keys = set().union(*self._scope_index(company, scope).values())
        return sorted(k for k in keys if self._visible(company, k))

    def scopes(self, company: str) -> list[str]:
        company = self.resolve_company(company)
        return sorted({k[0] for k in self._company_cells(company)})

    def _has_report(self, company: str, report: ReportKey, scope: str, statement: str = "") -> bool:
        """Does the data hold this report's `statement` (any statement when unknown)?"""
        if "_report_index" not in self.__dict__:
            index: set[tuple] = set()
            for key, cell in self._cells.items():
                index.add((key[0], key[1], key[3], ""))
                index.add((key[0], key[1], key[3], cell.statement or _concept_meta(key[2])[0]))
            self._report_index = index
        return (company, scope, report, statement) in self._report_index

    def report_filed(self, company: str, report: ReportKey | str, scope: str = "consolidated") -> str:
        """Filing date of the report (the earliest filing that showed its current-period values)."""
        return self._report_filed.get((self.resolve_company(company), scope, parse_report(report)), "")

    def concepts(self, company: str, scope: str = "consolidated") -> list[str]:
        company = self.resolve_company(company)
        index = self._scope_index(company, scope)
        if self._allowed is None:
            return sorted(index)
        return sorted(c for c, reports in index.items() if any(self._visible(company, r) for r in reports))

    # -- raw reported values ---------------------------------------------------------------------
    def reported(self, company: str, concept: str, report: ReportKey | str, scope: str = "consolidated") -> FactRef:
        """The value a report shows (YTD flow or period-end stock); NotDerivable when absent."""
        company, report = self.resolve_company(company), parse_report(report)
        visible = self._visible(company, report)
        cell = self._cells.get((company, scope, concept, report)) if visible else None
        if cell is None:
            where = "" if scope == "consolidated" else f" ({scope})"
            if visible and self._has_report(company, report, scope, _concept_meta(concept)[0]):
                # The report is there but has no such line: nothing is missing that a reader could add.
                raise NotDerivable(
                    f"{company}: the {report.label} report{where} shows no {concept}",
                    company=company, concept=concept, period=report.label, missing=[],
                )
            raise NotDerivable(
                f"{company}: {concept} needs the {report.label} report{where}, which is not available",
                company=company, concept=concept, period=report.label, missing=[report.label],
            )
        return FactRef(concept, report.label, cell.value, cell.source, cell.label, cell.unit, cell.tag, cell.note)

    def reported_quarter(self, company: str, concept: str, period: Period | str, scope: str = "consolidated") -> FactRef | None:
        """A standalone three-month value as filed in a 10-Q (None when the filing did not show one)."""
        company, p = self.resolve_company(company), parse_period(period)
        cell = self._quarter_reported.get((company, scope, concept, p.fiscal_year, p.quarter))
        if cell is None or p.kind != "Q":
            return None
        return FactRef(concept, p.label, cell.value, cell.source, cell.label, cell.unit, cell.tag, cell.note)

    def quarter_pairs(self) -> list[tuple[str, str, str, int, int]]:
        """Keys (company, scope, concept, fiscal_year, quarter) of every reported three-month value."""
        return sorted(self._quarter_reported)

    # -- period algebra ----------------------------------------------------------------------------
    def kind_of(self, concept: str, company: str | None = None) -> str:
        """flow | stock | per_share | shares (taxonomy first, else inferred from the facts' windows)."""
        _, kind = _concept_meta(concept)
        if kind:
            return kind
        cells = [c for k, c in self._cells.items() if k[2] == concept and (company is None or k[0] == company)]
        if cells:
            unit = cells[0].unit
            if unit.lower() == "shares":
                return "shares"
            if "/" in unit:
                return "per_share"
            sub = self.facts[self.facts["concept"] == concept]
            instants = sub["start"].isna() | sub["start"].astype(str).isin(["", "NaT", "None"])
            return "stock" if instants.mean() > 0.5 else "flow"
        return "flow"

    def value(self, company: str, concept: str, period: Period | str, scope: str = "consolidated", basis: str = "end") -> Derived:
        """The value of `concept` over (flows) or at (stocks) `period`, derived from reports.

        basis: for stocks, `end` (period-end balance), `begin` (previous period-end balance) or
        `avg` ((begin + end) / 2); flows ignore it except `avg`/`begin`, which are errors.
        """
        company, p = self.resolve_company(company), parse_period(period)
        if self._allowed is not None:
            return self._value(company, concept, p, scope, basis)
        # the full store never changes: remember each derivation (a copy goes out, so callers may edit it)
        if "_value_memo" not in self.__dict__:
            self._value_memo = {}
        key = (company, concept, p, scope, basis)
        hit = self._value_memo.get(key)
        if hit is None:
            try:
                hit = self._value(company, concept, p, scope, basis)
            except LedgerError as err:
                hit = forget_frames(err)
            self._value_memo[key] = hit
        if isinstance(hit, Exception):
            raise copy.copy(hit)  # a copy: a remembered error that is raised keeps its latest traceback and every frame on it
        return Derived(hit.value, hit.unit, list(hit.inputs), list(hit.steps))

    def _value(self, company: str, concept: str, p: Period, scope: str, basis: str) -> Derived:
        kind = self.kind_of(concept, company)
        if kind == "stock" or self._is_balance(concept):  # balance-sheet share counts are read at dates too
            if basis == "end":
                return self._at(company, concept, p.end_report(), scope, f"ending balance of {p.label}")
            if basis == "begin":
                return self._at(company, concept, p.begin_report(), scope, f"beginning balance of {p.label}")
            if basis == "avg":
                begin = self._at(company, concept, p.begin_report(), scope, f"beginning balance of {p.label}")
                end = self._at(company, concept, p.end_report(), scope, f"ending balance of {p.label}")
                avg = (begin.value + end.value) / 2
                return Derived(avg, end.unit, begin.inputs + end.inputs, begin.steps + end.steps + [
                    f"average {concept} {p.label} = ({_fmt(begin.value)} + {_fmt(end.value)}) / 2 = {_fmt(avg)}"])
            raise LedgerError(f"unknown basis {basis!r} (end | begin | avg)")
        if basis != "end":
            raise LedgerError(f"{concept} is a flow: basis {basis!r} applies to balance-sheet items only")
        return self._flow(company, concept, p, scope, kind)

    @staticmethod
    def _is_balance(concept: str) -> bool:
        statement, _ = _concept_meta(concept)
        return statement == "balance"

    def _at(self, company: str, concept: str, report: ReportKey, scope: str, what: str) -> Derived:
        ref = self.reported(company, concept, report, scope)
        return Derived(ref.value, ref.unit, [ref], [f"{concept} {what} = {_fmt(ref.value)} (from the {report.label} report)"
                                                    + self._basis_note(company, concept, ref)])

    def _ytd(self, company: str, concept: str, report: ReportKey, scope: str) -> Derived:
        ref = self.reported(company, concept, report, scope)
        what = "annual" if report.is_annual else "year-to-date"
        return Derived(ref.value, ref.unit, [ref], [f"{concept} {report.label} ({what}, as reported) = {_fmt(ref.value)}"
                                                    + self._basis_note(company, concept, ref)])

    def _basis_note(self, company: str, concept: str, ref: FactRef) -> str:
        """' [note]' for a corrected value; per-share values and share counts also name their share basis."""
        parts = [ref.note] if ref.note else []
        if self.kind_of(concept, company) in ("per_share", "shares") and not ref.note:
            parts.append(self.share_basis(company))
        return f" [{'; '.join(parts)}]" if parts else ""

    def share_basis(self, company: str) -> str:
        """The one share basis every per-share value and share count of `company` is stated on."""
        company = self.resolve_company(company)
        if "_share_basis" not in self.__dict__:
            self._share_basis = {}
        if company not in self._share_basis:
            found = sorted({m for c in self._company_cells(company).values() for m in _SPLIT_RE.findall(c.note)},
                           key=lambda m: m.split("from ")[-1])
            self._share_basis[company] = ("share basis: the latest filing's (as filed, after " + "; ".join(found) + ")"
                                          if found else "share basis: as filed (no stock split in the data)")
        return self._share_basis[company]

    def splits(self, company: str) -> list[tuple[str, str]]:
        """(factor text, first filing date on the new basis) of every stock split the company's values were rescaled for,
        oldest first (read from the rescale notes; splits.py detects the splits)."""
        company = self.resolve_company(company)
        found = {m.group(1): m.group(2) for c in self._company_cells(company).values() for m in _SPLIT_PARTS_RE.finditer(c.note)}
        return sorted(found.items(), key=lambda kv: kv[1])

    def split_restatement(self, company: str, reports: Iterable[ReportKey | str], scope: str = "consolidated",
                          statements: Iterable[str] | None = None) -> tuple[list[str], str] | None:
        """(split factors, basis date) when a per-share value or share count these reports show (in `statements`) is
        restated for a stock split: the report was first filed before the split's first filing on the new basis, so
        its figures stand on the latest basis, not as its own filing showed them. None when no shown figure is."""
        company = self.resolve_company(company)
        splits = self.splits(company)
        if not splits:
            return None
        wanted = {parse_report(r) for r in reports}
        shown = set(statements) if statements is not None else None
        restated: set[str] = set()
        for (s, concept, report), cell in self._company_cells(company).items():
            if s != scope or report not in wanted or self.kind_of(concept, company) not in ("per_share", "shares"):
                continue
            if shown is not None and (_concept_meta(concept)[0] or cell.statement) not in shown:
                continue
            filed = self.report_filed(company, report, scope) or cell.filed
            if filed:
                restated |= {k for k, first_new in splits if filed < first_new}
        if not restated:
            return None
        factors = [k for k, _ in splits if k in restated]
        return factors, splits[-1][1]

    def _flow(self, company: str, concept: str, p: Period, scope: str, kind: str) -> Derived:
        y, q = p.fiscal_year, p.quarter
        as_reported = p.kind in ("FY", "YTD") or (p.kind == "TTM" and q == 4) or (p.kind == "Q" and q == 1)
        if kind in ("per_share", "shares") and p.kind == "Q" and not as_reported and self.quarter_columns:
            three_months = self._shown_quarter(company, concept, p, scope)
            if three_months is not None:
                return three_months
        if (kind == "per_share" and concept in EPS_SHARES or kind == "shares") and not as_reported:
            d = self._eps(company, concept, p, scope) if kind == "per_share" else self._weighted_shares(company, concept, p, scope)
            if p.kind == "Q":
                d = self._against_filed(company, concept, p, scope, kind, d)
            return d
        if p.kind == "FY" or (p.kind == "TTM" and q == 4):
            d = self._ytd(company, concept, ReportKey(y, 4), scope)
            if p.kind == "TTM":
                d.steps.append(f"{concept} {p.label} = annual value of FY{y} = {_fmt(d.value)}")
            return d
        if p.kind == "YTD" or (p.kind == "Q" and q == 1):
            return self._ytd(company, concept, ReportKey(y, q), scope)
        if p.kind == "Q":
            cur = self._ytd(company, concept, ReportKey(y, q), scope)
            prev = self._ytd(company, concept, ReportKey(y, q - 1), scope)
            cells = self._company_cells(company)
            cur_cell, prev_cell = cells.get((scope, concept, ReportKey(y, q))), cells.get((scope, concept, ReportKey(y, q - 1)))
            if cur_cell is not None and prev_cell is not None and cur_cell.filed and prev_cell.filed and prev_cell.filed > cur_cell.filed:
                # mixed vintages: the prior YTD is a later filing's restated comparative, this YTD the original (FSDS 2009Q2:
                # Ford H1 51,967 M original - Q1 24,390 M restated = 27,577 M vs the 10-Q's 27,189 M): the quarter's own
                # three-month figure, when filed, is the one consistent basis (issue 11); a synth store (quarter_columns
                # False: the prompt shows YTD reports only) refuses the quarter instead of answering across vintages
                if not self.quarter_columns:
                    raise NotDerivable(f"{company}: {concept} {p.label}: {ReportKey(y, q - 1).label} is restated in a later filing "
                                       f"than {ReportKey(y, q).label}; YTD - prior YTD would mix vintages",
                                       company=company, concept=concept, period=p.label, missing=[])
                three_months = self._shown_quarter(company, concept, p, scope)
                if three_months is not None:
                    three_months.steps.append(f"{concept} {p.label}: {ReportKey(y, q - 1).label} is restated in a later filing "
                                              f"({prev_cell.filed}) than {ReportKey(y, q).label} ({cur_cell.filed}); the "
                                              f"three-month figure as filed is used, not YTD - prior YTD across vintages")
                    return three_months
            val = _exact("+-", cur.value, prev.value)
            step = f"{concept} {p.label} = {ReportKey(y, q).label} - {ReportKey(y, q - 1).label} = {_fmt(cur.value)} - {_fmt(prev.value)} = {_fmt(val)}"
            return Derived(val, cur.unit, cur.inputs + prev.inputs, cur.steps + prev.steps + [step])
        # TTM ending at quarter q < 4: YTD(y, q) + FY(y-1) - YTD(y-1, q)
        cur = self._ytd(company, concept, ReportKey(y, q), scope)
        last_fy = self._ytd(company, concept, ReportKey(y - 1, 4), scope)
        prior = self._ytd(company, concept, ReportKey(y - 1, q), scope)
        val = _exact("++-", cur.value, last_fy.value, prior.value)
        step = (f"{concept} {p.label} = {ReportKey(y, q).label} + FY{y - 1} - {ReportKey(y - 1, q).label} = "
                f"{_fmt(cur.value)} + {_fmt(last_fy.value)} - {_fmt(prior.value)} = {_fmt(val)}")
        return Derived(val, cur.unit, cur.inputs + last_fy.inputs + prior.inputs, cur.steps + last_fy.steps + prior.steps + [step])

    # -- per-share values and share counts are not additive ---------------------------------------------
    def _shown_quarter(self, company: str, concept: str, p: Period, scope: str) -> Derived | None:
        """The three-month figure the quarter's own report (10-Q; 10-K for Q4) shows, when it is visible."""
        report = ReportKey(p.fiscal_year, p.quarter)
        cell = self._quarter_reported.get((company, scope, concept, p.fiscal_year, p.quarter))
        if cell is None or not self._visible(company, report):
            return None
        ref = FactRef(concept, report.label, cell.value, cell.source, cell.label, cell.unit, cell.tag, cell.note)
        return Derived(ref.value, ref.unit, [ref], [f"{concept} {p.label} (three months, as reported in the {report.label} report) = "
                                                    f"{_fmt(ref.value)}" + self._basis_note(company, concept, ref)])

    def _against_filed(self, company: str, concept: str, p: Period, scope: str, kind: str, d: Derived) -> Derived:
        """A derived standalone-quarter figure held against the three-month figure its own report files (10-Q; 10-K
        for Q4), when the filing has one. EPS is then rounded to the precision the filing reports it at (the cent):
        the derived quarter stands for the filed 3-month EPS, so it must equal it (SNOW FY2023Q2 basic EPS
        -222,806,000 / 318,356,771.74 time-weighted shares = -0.699863 -> -0.70, as filed; the YoY of unrounded quarters,
        (-0.699863 - -0.637246) / 0.637246 = -9.83 %, differs from the filed cents' (-0.70 - -0.64) / 0.64 = -9.375 %). LedgerError when the derived figure does not round to the filed one (shares: > 1 % off):
        then the filer contradicts what the year-to-date reports give."""
        cell = self._quarter_reported.get((company, scope, concept, p.fiscal_year, p.quarter))
        if cell is None:
            return d
        if kind != "per_share":
            if abs(d.value - cell.value) > 0.01 * abs(cell.value):
                raise LedgerError(f"{company}: {concept} {p.label} derived from the year-to-date reports ({d.value:.6g}) misses the "
                                  f"filed three-month figure ({cell.value:.6g}): not derivable from what the reports show")
            return d
        k, filed = _filed_basis(cell)
        places = _decimal_places(filed)
        quantum = Decimal(1).scaleb(-places)
        rounded = (Decimal(repr(d.value)) * k).quantize(quantum, rounding=ROUND_HALF_UP)
        if rounded != Decimal(repr(filed)).quantize(quantum, rounding=ROUND_HALF_UP):
            raise LedgerError(f"{company}: {concept} {p.label} derived from the year-to-date reports ({d.value:.6g}) misses the "
                              f"filed three-month figure ({cell.value:.6g}): not derivable from what the reports show")
        value = float(round(rounded / k, 6))  # on the latest share basis, at the 6 decimals rescaled figures keep
        if k == 1:
            step = (f"{concept} {p.label} = {d.value:.6g} rounded to {places} decimals = {value:.{places}f} (EPS is reported to "
                    f"{'the cent' if places == 2 else f'{places} decimals'}; the {p.label} report states its three-month EPS)")
        else:
            step = (f"{concept} {p.label} = {d.value:.6g} = {d.value * float(k):.6g} / {k} on the basis of the {p.label} report, "
                    f"rounded to {places} decimals there = {rounded} / {k} = {_fmt(value)} (EPS is reported to "
                    f"{'the cent' if places == 2 else f'{places} decimals'}; the {p.label} report states its three-month EPS)")
        return Derived(value, d.unit, d.inputs, d.steps + [step])

    def _report_days(self, company: str, report: ReportKey) -> int:
        """Days the report's year-to-date window covers (fiscal-year start to the report's end date)."""
        end = self._report_ends.get((company, report))
        year = next((fy for fy in self._calendars.get(company, []) if fy.label == report.fiscal_year), None)
        if end is None or year is None:
            raise NotDerivable(f"{company}: the {report.label} report's dates are unknown", company=company,
                               period=report.label, missing=[report.label])
        return (end - year.start).days + 1

    def _weighted_shares(self, company: str, concept: str, p: Period, scope: str) -> Derived:
        """Weighted-average shares of a standalone quarter or a TTM window, time-weighted from the reports.

        A weighted average over a window is share-days / days, so share-days add and subtract like flows:
        Qn = (YTDn x days(YTDn) - YTD(n-1) x days(YTD(n-1))) / days(Qn); TTM likewise from YTDq, FY(y-1) and
        YTD(y-1, q). (Never YTD - prior YTD, never YTD + FY - prior YTD.)"""
        y, q = p.fiscal_year, p.quarter
        if p.kind == "Q":
            parts = [(+1, ReportKey(y, q)), (-1, ReportKey(y, q - 1) if q > 1 else None)]
        else:  # TTM ending at quarter q < 4
            parts = [(+1, ReportKey(y, q)), (+1, ReportKey(y - 1, 4)), (-1, ReportKey(y - 1, q))]
        parts = [(sign, r) for sign, r in parts if r is not None]
        got = [(sign, r, self._ytd(company, concept, r, scope), self._report_days(company, r)) for sign, r in parts]
        days = sum(sign * d for sign, _, _, d in got)
        share_days = float(sum(Decimal(repr(d.value)) * dd * sign for sign, _, d, dd in got))
        val = share_days / days
        terms = " ".join(f"{'+' if sign > 0 else '-'} {_fmt(d.value)} x {dd} days" for sign, _, d, dd in got).lstrip("+ ")
        step = (f"{concept} {p.label} = ({terms}) / {days} days = {_fmt(val)} (weighted-average shares are time-weighted: "
                f"share-days of the year-to-date reports over the days of {p.label})")
        inputs = [f for _, _, d, _ in got for f in d.inputs]
        steps = [s for _, _, d, _ in got for s in d.steps]
        return Derived(val, got[0][2].unit, inputs, steps + [step])

    def _eps(self, company: str, concept: str, p: Period, scope: str) -> Derived:
        """EPS of a standalone quarter (Q2-Q4) or a TTM window: net income / weighted-average shares of it.

        EPS is not additive (YTD EPS - prior YTD EPS mixes two share counts): the quarter's EPS is the
        quarter's net income attributable to the parent (YTD difference) over the quarter's time-weighted
        shares; Q4 = (FY - 9M net income) / Q4 shares; TTM = TTM net income / TTM time-weighted shares."""
        try:
            ni = self.value(company, "net_income_parent", p, scope)
        except NotDerivable as err:
            if err.missing:
                raise
            ni = self.value(company, "net_income", p, scope)
        shares = self.value(company, EPS_SHARES[concept], p, scope)
        if shares.value == 0:
            raise NotDerivable(f"{company}: {EPS_SHARES[concept]} is 0 for {p.label}", company=company, concept=concept,
                               period=p.label, missing=[])
        val = ni.value / shares.value
        numerator = ni.inputs[0].concept if ni.inputs else "net_income_parent"
        step = (f"{concept} {p.label} = {numerator} / {EPS_SHARES[concept]} = {_fmt(ni.value)} / {_fmt(shares.value)} = {val:.6g} "
                f"(EPS is not additive: {p.label} net income over {p.label} weighted-average shares)")
        return Derived(val, f"{ni.unit}/share" if ni.unit else "", ni.inputs + shares.inputs, ni.steps + shares.steps + [step])

    # -- statements ----------------------------------------------------------------------------------
    def statement(self, company: str, period: Period | str, statement: str, scope: str = "consolidated") -> dict:
        """One statement for any period (derived by the algebra), in DESIGN.md's machine-readable shape."""
        company, p = self.resolve_company(company), parse_period(period)
        if statement not in ("income", "balance", "cashflow", "equity"):
            raise InputError(f"unknown statement {statement!r} (income | balance | cashflow | equity)", field="statement")
        candidates = self._statement_concepts(company, scope, statement)
        items, units = [], Counter()
        for concept in candidates:
            try:
                d = self.value(company, concept, p, scope)
            except NotDerivable:
                continue
            label = next((f.label for f in d.inputs if f.label), concept)
            items.append({"concept": concept, "label": label, "value": d.value, "unit": d.unit})
            units[d.unit] += 1
        if not items:
            raise NotDerivable(
                f"{company}: no {scope} {statement} statement can be derived for {p.label}",
                company=company, period=p.label, missing=[p.end_report().label],
            )
        currency = next((u for u, _ in units.most_common() if "/" not in u and u.lower() != "shares"), "")
        return {"company": company, "period": p.label, "statement": statement, "scope": scope, "unit": currency, "items": items}

    def report_statement(self, company: str, report: ReportKey | str, statement: str, scope: str = "consolidated") -> dict:
        """What one report shows for one statement: year-to-date flows, period-end stocks."""
        return self.statement(company, parse_report(report).period, statement, scope)

    def _statement_concepts(self, company: str, scope: str, statement: str) -> list[str]:
        """Concepts of `statement` the company reports in `scope`, in taxonomy order (cached per store)."""
        if "_statement_order" not in self.__dict__:
            self._statement_order = {}
        key = (company, scope, statement)
        if key not in self._statement_order:
            self._statement_order[key] = self._find_statement_concepts(company, scope, statement)
        return self._statement_order[key]

    def _find_statement_concepts(self, company: str, scope: str, statement: str) -> list[str]:
        cells = self._company_cells(company)
        present = sorted({k[1] for k in cells if k[0] == scope})
        order = {c: i for i, c in enumerate(taxonomy_concepts())}
        reported_statement = {k[1]: c.statement for k, c in cells.items() if k[0] == scope and c.statement}
        ordered = []
        for concept in present:
            stmt = _concept_meta(concept)[0] or reported_statement.get(concept, "")
            if stmt == statement:
                ordered.append(concept)
        return sorted(ordered, key=lambda c: (order.get(c, len(order)), c))


def _filed_basis(cell: _Cell) -> tuple[Decimal, float]:
    """(split factor k, the figure as its filing showed it) of a per-share cell: a rescaled cell's note reads
    "as filed 5.98 / 10 = 0.598 on the latest share basis (...)"; k = 1 for a cell on its own filing's basis."""
    m = _AS_FILED_RE.search(cell.note)
    if m is None:
        return Decimal(1), cell.value
    return Decimal(m.group(2)), float(m.group(1))


def _decimal_places(filed: float) -> int:
    """Decimals a filed per-share figure is reported to: at least 2 (the cent; -0.7 is -0.70), more when it shows more."""
    exponent = Decimal(repr(float(filed))).normalize().as_tuple().exponent
    return max(2, min(6, -int(exponent)))


def _exact(expr: str, *terms: float) -> float:
    """Evaluate a +/- combination in decimal so reported figures combine without float noise.

    `expr` is a string of signs, one per term ("+-" = a - b); used for YTD differences and TTM sums.
    """
    total = Decimal(0)
    for sign, term in zip(expr, terms):
        total += Decimal(repr(float(term))) * (1 if sign == "+" else -1)
    return float(total)


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) >= 1000 else f"{x:,.6g}" if abs(x) < 1000 else f"{x:,.2f}"
