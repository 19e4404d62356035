"""A company's fiscal calendar and fact index, read from its facts frame: the part of a FactStore that needs pandas.

    python -c "from ledgerlm.synth.statements.store import FactStore; s = FactStore.from_sources(); print(len(s.index.cells))"

`index_facts(facts)` reads every filed version of the facts, builds the fiscal calendar (fiscal_calendar.Calendar) and
places each window into a report (factindex.FactIndex): year-to-date flows and period-end stocks under the report's
key, standalone three-month values (10-Q columns) apart in `quarter_reported`. Vintage selection: one value per window
by tag precedence, then the latest filing (facts.select_latest). Split from fiscal_calendar.py and factindex.py
(issue 17) so that those stay plain data: a store restored from the synth store cache (storecache.py) never imports
pandas; only `FactStore(facts)` (store.py) imports this module.
"""
from __future__ import annotations

import datetime as dt
from collections import Counter

import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.synth.statements.facts import select_latest
from ledgerlm.synth.statements.sheets import withhold_conflicting_fills
from ledgerlm.synth.statements.factindex import Cell, FactIndex, currency_of
from ledgerlm.synth.statements.fiscal_calendar import (ANNUAL_DAYS, QUARTER_DAYS, Calendar, FiscalYear, report_ends,
                                                       report_for_instant)
from ledgerlm.synth.statements.periods import ReportKey


def index_facts(facts: pd.DataFrame, selected: bool = False) -> tuple[Calendar, FactIndex]:
    """The calendar and the fact index of a facts table (contract 1; every filed version may be present, unless
    `selected`: then it is `select_latest`'s output already, one value per window, and is not selected again)."""
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

    calendar, index = Calendar(), FactIndex()
    for company, cdf in df.groupby("company", sort=True):
        company = str(company)
        # the years from every filed version: each filing labels its own year
        years = calendar.add_company(company, _name(cdf, company), fiscal_years(cdf))
        latest = cdf if selected else _latest(cdf)  # (cdf is sorted latest filed first, as _latest returns it)
        ends = report_ends(years, latest[latest["start"].notna()])
        calendar.add_report_ends(company, ends)
        _place(index, company, reporting_currency_first(latest), years, ends)
        calendar.add_first_filed(company, cdf)
    withhold_conflicting_fills(index)
    return calendar, index


def _name(cdf: pd.DataFrame, company: str) -> str:
    """The company's entity name: the first one its facts give, else its code."""
    names = cdf["company_name"].dropna().astype(str)
    return names.iloc[0] if len(names) else company


def _latest(cdf: pd.DataFrame) -> pd.DataFrame:
    """One value per window: tag precedence, then the latest filing (see facts.select_latest)."""
    out = select_latest(cdf.assign(start=cdf["start"].dt.strftime("%Y-%m-%d").fillna(""),
                                   end=cdf["end"].dt.strftime("%Y-%m-%d")).drop(columns="days"))
    out["start"] = pd.to_datetime(out["start"].replace("", None), errors="coerce")
    out["end"] = pd.to_datetime(out["end"])
    out["days"] = (out["end"] - out["start"]).dt.days
    return out.sort_values("filed", ascending=False, kind="stable")


def reporting_currency(units) -> str | None:
    """The currency most of a company's amounts are in (ties: the first by code); None when none is."""
    return _most_used(map(currency_of, units))


def _most_used(currencies) -> str | None:
    counts = Counter(c for c in currencies if c is not None)
    return min(counts, key=lambda c: (-counts[c], c)) if counts else None


def reporting_currency_first(cdf: pd.DataFrame) -> pd.DataFrame:
    """One company's facts (sorted latest filed first) with, among the rows of one filing date, those in another
    currency after the rest: a report cell then holds the figure in the reporting currency wherever the latest filing
    that gives the cell gives one (a later filing still wins: a company that changed its currency shows the restated
    comparatives of its latest filing). A foreign private issuer tags most figures twice in the same filing (TSMC: TWD
    and a USD convenience translation); the first row reaching a cell won, so the currency of a cell followed the
    input's row order, and an index could divide a USD figure by a TWD one (the TSM facts with their USD rows first:
    FY2024 revenue growth -95.9 % instead of +33.9 %, review 2026-12-04)."""
    currencies = [currency_of(unit) for unit in cdf["unit"].tolist()]
    currency = _most_used(currencies)
    if currency is None:
        return cdf
    foreign = [c is not None and c != currency for c in currencies]
    if not any(foreign):
        return cdf
    return (cdf.assign(_foreign=foreign).sort_values(["filed", "_foreign"], ascending=[False, True], kind="stable")
            .drop(columns="_foreign"))


def _place(index: FactIndex, company: str, cdf: pd.DataFrame, years: list[FiscalYear], ends: dict) -> None:
    """Put each of one company's (latest-selected) facts into its report cell (latest filed first wins)."""
    starts = {fy.start: fy for fy in years}
    names = ["value", "unit", "source", "label", "filed", "statement", "tag", "adjustment", "alternates", "scope", "end",
             "start", "days", "concept"]
    # the columns as object arrays (the values itertuples would give: str, NaN / None, Timestamp / NaT), not iterated
    # element by element through pyarrow-backed strings (0.84 s of a 17 s ten-company cache build)
    columns = [cdf[c].to_numpy(dtype=object) if c in cdf.columns else [""] * len(cdf) for c in names]
    drifted: set = set()  # cells placed from a balance dated a few days off their report's end
    for (value, unit, source, label, filed, statement, tag, adjustment, alternates, scope, end, start, days,
         concept) in zip(*columns):
        cell = Cell(float(value), str(unit), str(source or ""), str(label or ""), str(filed or ""), str(statement or ""),
                    str(tag or ""), str(adjustment or ""), str(alternates or ""))
        scope = str(scope or "consolidated")
        end = end.date()
        exact = True
        if pd.isna(start):
            key = ends.get(end)
            if key is None:  # a balance a few days off a report's end (`report_for_instant`)
                key, exact = report_for_instant(ends, end), False
            if key is None:
                index.unplaced += 1
                continue
        else:
            start, days = start.date(), int(days)
            fy = starts.get(start)
            key = None
            if fy is not None and days >= ANNUAL_DAYS[0]:
                key = ReportKey(fy.label, 4) if fy.end == end else None
            elif fy is not None:
                ytd = ends.get(end)
                key = ytd if ytd is not None and ytd.fiscal_year == fy.label and ytd.quarters < 4 else None
            elif QUARTER_DAYS[0] <= days <= QUARTER_DAYS[1] and end in ends:
                ytd = ends[end]
                index.quarter_reported.setdefault((company, scope, str(concept), ytd.fiscal_year, ytd.quarters), cell)
                continue
            if key is None:
                index.unplaced += 1
                continue
        ckey = (company, scope, str(concept), key)
        held = index.cells.get(ckey)
        if held is None:  # rows are sorted latest-filed first
            index.cells[ckey] = cell
            if not exact:
                drifted.add(ckey)
        elif exact and ckey in drifted and (held.filed, held.unit) == (cell.filed, cell.unit):
            # one filing's balance at the report's own end beats its balance a few days off (NVIDIA's FY2020 10-K: right-
            # of-use assets 0 at 2019-01-27, the FY2019 end, and 470 M at 2019-01-28, the opening balance of FY2020 under
            # ASC 842: the input's row order chose; row-order audit 2026-12-04)
            index.cells[ckey] = cell
            drifted.discard(ckey)


def fiscal_years(cdf: pd.DataFrame) -> list[FiscalYear]:
    """The fiscal years of one company's facts (`start`/`end` as datetimes, `days` = end - start)."""
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
