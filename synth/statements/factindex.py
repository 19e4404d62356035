"""Fact index: canonical facts placed into reports, one value per (company, scope, concept, report).

    python -c "from ledgerlm.synth.statements.store import FactStore; s = FactStore.from_sources(); print(len(s.index.cells))"

`indexing.index_facts(facts)` reads every filed version of the facts, builds the fiscal calendar (fiscal_calendar.py)
and places each window into a report: year-to-date flows and period-end stocks under the report's key, standalone
three-month values (10-Q columns) apart in `quarter_reported`. Vintage selection: one value per window by tag
precedence, then the latest filing (facts.select_latest). Part of the FactStore split (issue 13).

Derived lookups (per-company cells, concept -> reports, which reports hold which statement, statement order,
share basis) are `functools.cached_property` of the FactIndex they are derived from: an index is never changed
after it is built (a view with other values gets a new FactIndex), so no cache can go stale. Plain data: no pandas
here, so a store restored from the synth store cache never imports it (issue 17).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

from ledgerlm.synth.statements.periods import ReportKey
from ledgerlm.synth.statements.taxonomy import concept_info

CellKey = tuple[str, str, str, ReportKey]  # (company, scope, concept, report)
QuarterKey = tuple[str, str, str, int, int]  # (company, scope, concept, fiscal year, quarter)


def currency_of(unit) -> str | None:
    """The ISO currency of an amount or per-share unit (TWD, TWD/share, iso4217:twd -> TWD); None for shares, ratios
    and the rest (a canonical CSV's units are not normalised: `usd` is USD too)."""
    if not isinstance(unit, str):  # a missing unit (NaN / None) is no currency
        return None
    head = unit.split("/", 1)[0].strip()
    if head[:8].lower() == "iso4217:":
        head = head[8:]
    return head.upper() if len(head) == 3 and head.isascii() and head.isalpha() and head.upper() != "NAN" else None


@dataclass(frozen=True, slots=True)
class FactRef:
    """One reported value a computation used (slots: a cold read makes one, kept until its store leaves memory; no
    instance dict to allocate, fill and free)."""

    concept: str
    report: str  # report label, e.g. FY2023Q3YTD
    value: float
    source: str  # accession number or file
    label: str = ""
    unit: str = ""
    tag: str = ""  # the taxonomy tag (or statement label) the value was reported under
    note: str = ""  # a correction applied to the filed value (split basis, scale slip, kept original line)


@dataclass(slots=True)
class Cell:
    """One placed value and where it was filed (slots: a store holds thousands, and a cache load builds them all)."""

    value: float
    unit: str
    source: str
    label: str
    filed: str
    statement: str
    tag: str
    note: str = ""
    alternates: str = ""  # what the concept's other tags report for this window (facts.with_alternates)

    def ref(self, concept: str, report_label: str) -> FactRef:
        return FactRef(concept, report_label, self.value, self.source, self.label, self.unit, self.tag, self.note)


def concept_meta(concept: str) -> tuple[str, str]:
    """(statement, kind) for a canonical concept, from the taxonomy data when it knows the key."""
    try:
        info = concept_info(concept)
    except KeyError:  # not a canonical key (e.g. a user's own concept): callers fall back on the facts
        return "", ""
    return info.statement, info.kind


@dataclass
class FactIndex:
    """Placed values: `cells` (YTD flows, period-end stocks) and `quarter_reported` (filed three-month values).
    Built once and never changed: derived lookups are cached properties of the instance."""

    cells: dict[CellKey, Cell] = field(default_factory=dict)
    quarter_reported: dict[QuarterKey, Cell] = field(default_factory=dict)
    unplaced: int = 0  # facts whose window matched no fiscal period (e.g. 2-month stubs)
    withheld: dict[CellKey, str] = field(default_factory=dict)  # balance lines of another presentation (sheets.py): why

    def replace(self, **changes) -> "FactIndex":
        """A new index with some fields replaced (and, being new, no derived cache)."""
        return dataclasses.replace(self, **changes)

    @cached_property
    def by_company(self) -> dict[str, dict[tuple[str, str, ReportKey], Cell]]:
        """company -> {(scope, concept, report): cell} (the scans are hot in synth)."""
        index: dict[str, dict] = {}
        for (c, scope, concept, report), cell in self.cells.items():
            index.setdefault(c, {})[(scope, concept, report)] = cell
        return index

    def company_cells(self, company: str) -> dict[tuple[str, str, ReportKey], Cell]:
        return self.by_company.get(company, {})

    @cached_property
    def concept_reports(self) -> dict[tuple[str, str], dict[str, set[ReportKey]]]:
        """(company, scope) -> {concept: reports holding it} (views filter by visibility, so it never depends on it)."""
        index: dict[tuple[str, str], dict[str, set[ReportKey]]] = {}
        for (company, scope, concept, report) in self.cells:
            index.setdefault((company, scope), {}).setdefault(concept, set()).add(report)
        return index

    def scope_index(self, company: str, scope: str) -> dict[str, set[ReportKey]]:
        return self.concept_reports.get((company, scope), {})

    @cached_property
    def report_statements(self) -> set[tuple[str, str, ReportKey, str]]:
        """(company, scope, report, statement) for every statement a report holds, and statement '' for any."""
        index: set[tuple] = set()
        for key, cell in self.cells.items():
            index.add((key[0], key[1], key[3], ""))
            index.add((key[0], key[1], key[3], cell.statement or concept_meta(key[2])[0]))
        return index

    def has_report(self, company: str, scope: str, report: ReportKey, statement: str = "") -> bool:
        """Does the data hold this report's `statement` (any statement when '')?"""
        return (company, scope, report, statement) in self.report_statements

    @cached_property
    def statement_order(self) -> dict[tuple[str, str, str], list[str]]:
        """Memo (company, scope, statement) -> concepts in taxonomy order, filled by the store's statement view."""
        return {}

    @cached_property
    def share_basis(self) -> dict[str, str]:
        """Memo company -> the share basis sentence, filled by the store (it reads the cells' split notes)."""
        return {}
