"""Period grammar (DESIGN.md contract 2) and the reports that periods are read from.

    >>> from ledgerlm.synth.statements.periods import parse_period
    >>> p = parse_period("FY2023Q2TTM"); p.kind, p.quarter, p.months
    ('TTM', 2, 12)

Labels follow the company's own fiscal calendar:
`FY2023` annual · `FY2023Q1`…`FY2023Q4` standalone quarters · `FY2023H1` six-month YTD ·
`FY2023Q3YTD` nine-month YTD · `FY2023Q2TTM` trailing twelve months ending at Q2.

A *report* (`ReportKey`) is what one filing shows: flows year-to-date over `quarters` quarters
(4 = the annual report) and stocks at its end date. Every period value is derived from reports:
standalone Qn = YTD(n) - YTD(n-1); Q4 = FY - Q3YTD; TTM(n) = YTD(n) + FY(y-1) - YTD(y-1, n).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ledgerlm.errors import InputError

KINDS = ("FY", "Q", "YTD", "TTM")
_PERIOD_RE = re.compile(r"^FY(?P<year>\d{4})(?:(?P<half>H1)|Q(?P<q>[1-4])(?P<suffix>YTD|TTM)?)?$")


class _kept:
    """A computed attribute kept in the instance dict after its first read (fields, hash, eq and order are untouched).
    `functools.cached_property` without its per-property lock (Python 3.11 takes an RLock on every first read, which
    cost more than the label itself: compute makes new periods and reports at every operator); a race of two
    threads computes the same string twice, which is harmless."""

    def __init__(self, fn):
        self.fn, self.name = fn, fn.__name__
        self.__doc__ = fn.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


@dataclass(frozen=True, order=True)
class ReportKey:
    """One report: flows year-to-date over `quarters` quarters of `fiscal_year` (4 = annual)."""

    fiscal_year: int
    quarters: int

    def __post_init__(self) -> None:
        if self.quarters not in (1, 2, 3, 4):
            raise ValueError(f"ReportKey.quarters must be 1..4, got {self.quarters}")
        object.__setattr__(self, "_hash", hash((self.fiscal_year, self.quarters)))  # see __hash__

    def __hash__(self) -> int:
        """The dataclass's own hash (of the fields' tuple), computed once per key: every cell key holds a report, and
        a company's first visit builds dicts of thousands of them (the cache load, `FactIndex.by_company`, ...); the
        generated `__hash__` built and hashed a tuple at each of those (issue 17). Ints only: the value is the same in
        every process, so a pickled key keeps a right one."""
        return self._hash

    @_kept  # labels are read millions of times
    def label(self) -> str:
        return {4: f"FY{self.fiscal_year}", 1: f"FY{self.fiscal_year}Q1", 2: f"FY{self.fiscal_year}H1"}.get(
            self.quarters, f"FY{self.fiscal_year}Q{self.quarters}YTD"
        )

    @property
    def period(self) -> "Period":
        """The period whose flows this report shows (its year-to-date window)."""
        return Period(self.fiscal_year, "FY", 4) if self.quarters == 4 else Period(self.fiscal_year, "YTD", self.quarters).normalized()

    @property
    def is_annual(self) -> bool:
        return self.quarters == 4

    def previous(self) -> "ReportKey":
        """The report that ends where this one's last quarter begins."""
        return ReportKey(self.fiscal_year, self.quarters - 1) if self.quarters > 1 else ReportKey(self.fiscal_year - 1, 4)

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True, order=True)
class Period:
    """A fiscal period. kind FY (quarter 4), Q (standalone quarter), YTD (1..3 quarters), TTM (ends at quarter)."""

    fiscal_year: int
    kind: str
    quarter: int

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"period kind must be one of {KINDS}, got {self.kind!r}")
        if not 1 <= self.quarter <= 4:
            raise ValueError(f"period quarter must be 1..4, got {self.quarter}")

    # -- naming --------------------------------------------------------------------------
    @_kept  # as ReportKey.label
    def label(self) -> str:
        y = f"FY{self.fiscal_year}"
        if self.kind == "FY":
            return y
        if self.kind == "Q":
            return f"{y}Q{self.quarter}"
        if self.kind == "YTD":
            return f"{y}H1" if self.quarter == 2 else f"{y}Q{self.quarter}YTD"
        return f"{y}Q{self.quarter}TTM"

    def __str__(self) -> str:
        return self.label

    def normalized(self) -> "Period":
        """Identical windows get one name: YTD over 1 quarter is Q1, YTD over 4 is FY."""
        if self.kind == "YTD" and self.quarter == 1:
            return Period(self.fiscal_year, "Q", 1)
        if self.kind == "YTD" and self.quarter == 4:
            return Period(self.fiscal_year, "FY", 4)
        return self

    @property
    def months(self) -> int:
        """Length of the window in months (for annualisation of flows)."""
        return {"FY": 12, "Q": 3, "TTM": 12}.get(self.kind, 3 * self.quarter)

    # -- neighbours ------------------------------------------------------------------------
    def prior_year(self) -> "Period":
        """The same period one fiscal year earlier (prior-year same period, for YoY)."""
        return Period(self.fiscal_year - 1, self.kind, self.quarter)

    def prior_quarter(self) -> "Period":
        """The same kind of window shifted back one quarter (FY has no prior quarter)."""
        if self.kind == "FY":
            raise ValueError(f"{self.label} is annual: it has no prior quarter")
        if self.kind == "YTD":
            return Period(self.fiscal_year, "YTD", self.quarter - 1).normalized() if self.quarter > 1 else Period(self.fiscal_year - 1, "FY", 4)
        if self.quarter == 1:
            return Period(self.fiscal_year - 1, self.kind, 4)
        return Period(self.fiscal_year, self.kind, self.quarter - 1)

    # -- where stocks are read ---------------------------------------------------------------
    def end_report(self) -> ReportKey:
        """The report whose balance sheet gives this period's ending balance."""
        return ReportKey(self.fiscal_year, 4 if self.kind == "FY" else self.quarter)

    def begin_report(self) -> ReportKey:
        """The report whose balance sheet gives this period's beginning balance (previous period end)."""
        if self.kind == "FY":
            return ReportKey(self.fiscal_year - 1, 4)
        if self.kind == "YTD":
            return ReportKey(self.fiscal_year - 1, 4)
        if self.kind == "TTM":
            return ReportKey(self.fiscal_year - 1, self.quarter)
        return ReportKey(self.fiscal_year, self.quarter).previous()


_PARSED: dict[str, Period] = {}  # label -> Period (frozen, so shared): synth parses the same few labels millions of times


def parse_period(text: "str | Period", *, field: str = "period") -> Period:
    """Parse a contract-2 label (`FY2023`, `FY2023Q1`, `FY2023H1`, `FY2023Q3YTD`, `FY2023Q2TTM`)."""
    if isinstance(text, Period):
        return text
    if type(text) is str:
        hit = _PARSED.get(text)
        if hit is None:
            if len(_PARSED) > 100_000:
                _PARSED.clear()
            hit = _PARSED[text] = _parse_period(text, field)
        return hit
    return _parse_period(text, field)


def _parse_period(text, field: str) -> Period:
    match = _PERIOD_RE.match(str(text).strip().upper())
    if not match:
        raise InputError(
            f"bad period {text!r}: expected FY2023, FY2023Q1..Q4, FY2023H1, FY2023Q3YTD or FY2023Q2TTM", field=field
        )
    year = int(match["year"])
    if match["half"]:
        return Period(year, "YTD", 2)
    if not match["q"]:
        return Period(year, "FY", 4)
    q, suffix = int(match["q"]), match["suffix"]
    if suffix == "YTD":
        return Period(year, "YTD", q).normalized()
    if suffix == "TTM":
        return Period(year, "TTM", q)
    return Period(year, "Q", q)


def parse_report(text: "str | ReportKey", *, field: str = "report") -> ReportKey:
    """Parse a report label: FY2023 (annual), FY2023Q1, FY2023H1, FY2023Q3YTD."""
    if isinstance(text, ReportKey):
        return text
    p = parse_period(text, field=field)
    if p.kind == "FY":
        return ReportKey(p.fiscal_year, 4)
    if p.kind == "YTD" or (p.kind == "Q" and p.quarter == 1):
        return ReportKey(p.fiscal_year, p.quarter)
    raise InputError(f"{text!r} is not a report: reports are FY2023, FY2023Q1, FY2023H1 or FY2023Q3YTD", field=field)
