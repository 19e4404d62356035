"""Fiscal calendar of each company, read from its facts: fiscal years, report end dates, first filing dates.

    python -c "from ledgerlm.synth.statements.store import FactStore; s = FactStore.from_sources(); print(s.calendar.years['NVDA'][-2:])"

Annual windows (350-380 days) are fiscal years, labelled by the fiscal year the 10-K/20-F itself declares for its
own latest period (Apple FY2023 ends 2023-09-30; NVIDIA FY2026 ends 2026-01-25); 52/53-week years need no special
case because every window is matched by its actual start and end dates. A report (`ReportKey`) ends where a
year-to-date window that starts on a fiscal-year start ends. Part of the FactStore split (issue 13): calendar here,
fact index in factindex.py, both read from a facts frame in indexing.py, views in views.py, period algebra in store.py.
Plain data: no pandas here, so a store restored from the synth store cache never imports it (issue 17).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: reading the calendar from a facts frame is indexing.py's (pandas)
    import pandas as pd

from ledgerlm.errors import InputError, NotDerivable
from ledgerlm.synth.statements.companyfacts import ticker_map
from ledgerlm.synth.statements.periods import ReportKey

ANNUAL_DAYS = (350, 380)
QUARTER_DAYS = (80, 100)
DAYS_PER_QUARTER = 365.25 / 4


@dataclass(frozen=True)
class FiscalYear:
    label: int
    start: dt.date
    end: dt.date | None  # None while the year is still in progress in the data


@dataclass
class Calendar:
    """Every company's fiscal years, report end dates and report filing dates (plain data: the store cache
    serialises it field by field)."""

    names: dict[str, str] = field(default_factory=dict)  # company -> entity name
    years: dict[str, list[FiscalYear]] = field(default_factory=dict)
    report_ends: dict[tuple[str, ReportKey], dt.date] = field(default_factory=dict)
    report_filed: dict[tuple[str, str, ReportKey], str] = field(default_factory=dict)  # (company, scope, report)

    def companies(self) -> list[str]:
        return sorted(self.years)

    def resolve(self, query: str) -> str:
        """A ticker, a CIK (with or without leading zeros) or the exact entity name -> the company key."""
        q = str(query).strip()
        if q in self.years:
            return q
        upper = {c.upper(): c for c in self.years}
        if q.upper() in upper:
            return upper[q.upper()]
        for company, name in self.names.items():
            if name.strip().lower() == q.lower():
                return company
        if q.isdigit():
            cik = int(q)
            for company in self.years:
                if company.isdigit() and int(company) == cik:
                    return company
            ticker = ticker_map().get(cik, ("", ""))[0].upper()
            if ticker in upper:
                return upper[ticker]
        raise InputError(f"unknown company {query!r}; known: {', '.join(self.companies())}", field="company")

    def report_days(self, company: str, report: ReportKey) -> int:
        """Days the report's year-to-date window covers (fiscal-year start to the report's end date: `window`)."""
        span = self.window(company, report.period)
        if span is None:
            raise NotDerivable(f"{company}: the {report.label} report's dates are unknown", company=company,
                               period=report.label, missing=[report.label])
        return (span[1] - span[0]).days + 1

    def window(self, company: str, period) -> tuple[dt.date, dt.date] | None:
        """First and last day of a period's window (`periods.Period`): a fiscal year or year-to-date report from its
        fiscal-year start, a standalone quarter from the day after the previous report, a TTM from the day after the
        same report a year earlier; None where a date is unknown. Statement headers show it, so a reader can count
        the days that time-weighted shares use (a 52/53-week quarter is 91 or 98 days, a calendar half year 181)."""
        def end(fiscal_year: int, quarters: int) -> dt.date | None:
            return self.report_ends.get((company, ReportKey(fiscal_year, quarters)))

        y, q = period.fiscal_year, 4 if period.kind == "FY" else period.quarter
        last = end(y, q)
        if last is None:
            return None
        if period.kind in ("FY", "YTD") or (period.kind == "Q" and q == 1):
            year = next((fy for fy in self.years.get(company, []) if fy.label == y), None)
            return (year.start, last) if year is not None else None
        before = end(y, q - 1) if period.kind == "Q" else end(y - 1, q)
        return (before + dt.timedelta(days=1), last) if before is not None else None

    def add_company(self, company: str, name: str, years: list[FiscalYear]) -> list[FiscalYear]:
        """Record `company`'s entity name and fiscal years (indexing.py reads them from the facts); returns the years."""
        self.names[company] = name
        self.years[company] = years
        return years

    def add_report_ends(self, company: str, ends: dict[dt.date, ReportKey]) -> None:
        for end, key in ends.items():
            self.report_ends[(company, key)] = end

    def add_first_filed(self, company: str, cdf: pd.DataFrame) -> None:
        """Each report's filing date: the earliest filing (of every version given) that showed any value dated at
        the report's end: the original 10-K/10-Q, not a later recast or comparative."""
        key_by_end = {end: key for (c, key), end in self.report_ends.items() if c == company}
        rows = cdf[cdf["filed"].astype(str) != ""]
        ends = rows["end"].dt.date
        for (scope, end), filed in rows.groupby([rows["scope"].astype(str), ends])["filed"].min().items():
            key = key_by_end.get(end)
            if key is not None:
                self.report_filed[(company, scope or "consolidated", key)] = str(filed)


def report_ends(years: list[FiscalYear], durations: pd.DataFrame) -> dict[dt.date, ReportKey]:
    """End date -> report: fiscal-year ends (annual reports) and the ends of year-to-date windows (1-3 quarters
    long, within 10 days) that start on a fiscal-year start."""
    starts = {fy.start: fy for fy in years}
    ends: dict[dt.date, ReportKey] = {fy.end: ReportKey(fy.label, 4) for fy in years if fy.end is not None}
    for start, end, days in zip(durations["start"], durations["end"], durations["days"]):
        fy = starts.get(start.date())
        if fy is None or days >= ANNUAL_DAYS[0]:
            continue
        q = round(days / DAYS_PER_QUARTER)
        if 1 <= q <= 3 and abs(days - q * DAYS_PER_QUARTER) <= 10:
            ends.setdefault(end.date(), ReportKey(fy.label, q))
    return ends


def report_for_instant(ends: dict[dt.date, ReportKey], day: dt.date) -> ReportKey | None:
    """The report a balance-sheet date belongs to (a few days' drift between the date and a window end tolerated)."""
    key = ends.get(day)
    if key is None:
        for delta in (1, -1, 2, -2, 3, -3):
            key = ends.get(day + dt.timedelta(days=delta))
            if key:
                break
    return key
