"""FactStore: canonical facts arranged by report, plus the exact period algebra over them.

    from ledgerlm.synth.statements.sources import load_facts
    from ledgerlm.synth.statements.store import FactStore
    store = FactStore(load_facts())
    store.value("NVDA", "operating_income", "FY2026Q4").value   # FY - nine-month YTD
    store.report_statement("AAPL", "FY2023", "income")          # DESIGN.md statement dict

Every value is derived from *reports* (one filing's year-to-date flows and period-end stocks), so a
store restricted to the reports a prompt shows (`restrict`) answers exactly what that prompt allows:
a missing report raises `NotDerivable` naming it (the deficiency trap rests on this).

The store composes three parts (issue 13), and this module adds the period algebra:
- `store.calendar` (fiscal_calendar.Calendar): fiscal years read from the facts, report end dates, filing dates;
- `store.index` (factindex.FactIndex): one value per (company, scope, concept, report), vintage-selected, and the
  filed three-month values; its derived lookups are cached properties of the index itself;
- views (views.StoreViews, a mixin): `restrict`, `with_reported_values` (the same calendar, a visibility filter, a
  new index for other values) and the statement views (`statement`, `report_statement`). A view never inherits a
  cached property of the store (`_view` drops them all), so a new cache cannot go stale in a view;
- here: reading reported values through the view's visibility, and the period algebra (derived periods, per-share
  rules, split notes), remembered for the full store in the cached property `_value_memo`.
"""
from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # annotations only: indexing.py reads frames (a store restored from the synth store cache never does)
    import pandas as pd

from ledgerlm.errors import InputError, LedgerError, NotDerivable
from ledgerlm.synth.statements.factindex import Cell, FactIndex, FactRef, concept_meta
from ledgerlm.synth.statements.facts import rounding_of
from ledgerlm.synth.statements.fiscal_calendar import Calendar, FiscalYear
from ledgerlm.synth.statements.periods import Period, ReportKey, parse_period, parse_report
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.views import EPS_SHARES, StoreViews

# Calendar, FactIndex, FactRef and FiscalYear live in fiscal_calendar.py / factindex.py, the views in views.py;
# imported from here they keep working
__all__ = ["Calendar", "Derived", "FactIndex", "FactRef", "FactStore", "FiscalYear", "forget_frames", "fresh_copy"]

_SPLIT_RE = re.compile(r"\d+(?:\.\d+)?-for-1 stock split \([^)]*\)")
_SPLIT_PARTS_RE = re.compile(r"(\d+(?:\.\d+)?)-for-1 stock split \(filings up to [\d-]+ on the old basis, from ([\d-]+) on the new\)")
# lines a filer with leases reports in every balance sheet once it has them: absent between two reports that show them,
# they are untagged, not 0 (a debt line can be repaid and come back; a lease liability does not vanish for a quarter)
UNTAGGED_WHEN_BETWEEN = frozenset({"lease_liabilities", "lease_liabilities_current", "finance_lease_liabilities",
                                   "finance_lease_liabilities_current"})
FILED_EPS_NOTE = "states its three-month EPS"  # in the step of a quarter EPS rounded to its filing's cent
_AS_FILED_RE = re.compile(r"as filed (-?[\d.]+) / ([\d.]+) =")  # a per-share figure rescaled for a split (splits.py)
_SHARES_AS_FILED_RE = re.compile(r"as filed (-?[\d,.]+) x ([\d.]+) =")  # a share count rescaled for a split or slip
_meta = functools.lru_cache(maxsize=None)(concept_meta)  # (statement, kind) of a concept: taxonomy data, read at every derivation
_REPORT_KEYS: dict[tuple[int, int], ReportKey] = {}  # (fiscal year, quarters) -> the one key the period algebra uses
_BALANCE_REPORTS: dict[tuple[str, str], ReportKey] = {}  # (period label, end | begin) -> the report a balance is read at


def _report_key(fiscal_year: int, quarters: int) -> ReportKey:
    """One shared ReportKey per report (frozen, so sharing is safe): the period algebra names a report at every
    derivation, and a new key built its label again each time its first remembered read asked for it."""
    key = (fiscal_year, quarters)
    hit = _REPORT_KEYS.get(key)
    if hit is None:
        hit = _REPORT_KEYS[key] = ReportKey(fiscal_year, quarters)
    return hit


def _balance_report(p: Period, at: str) -> ReportKey:
    """`p.end_report()` (at == "end") or `p.begin_report()` as the shared key of `_report_key`."""
    key = (p.label, at)
    hit = _BALANCE_REPORTS.get(key)
    if hit is None:
        r = p.end_report() if at == "end" else p.begin_report()
        hit = _BALANCE_REPORTS[key] = _report_key(r.fiscal_year, r.quarters)
    return hit


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


def fresh_copy(err: Exception) -> Exception:
    """A new exception equal to `err` (same class, args and attributes; no traceback, context or cause), to raise a
    remembered error. What `copy.copy` makes, without its generic reduce/reconstruct path, which cost more than
    the lookup it served (copy.copy also calls `__init__` with the args, then overwrites every attribute it set)."""
    new = type(err).__new__(type(err), *err.args)
    new.__dict__.update(err.__dict__)
    return new


def forget_frames(err: Exception) -> Exception:
    """`err` without its traceback and context, to be remembered in a cache (and raised as copies): otherwise
    the cache keeps every frame of the raise alive, with the caller's locals (whole shards of synth rows)."""
    err.__traceback__ = err.__context__ = err.__cause__ = None
    return err


def _at_derived(concept: str, report: ReportKey, reported: tuple, what: str) -> Derived:
    """A balance read as `report` shows it (`reported`: the cell's (FactRef, shown text, note))."""
    ref, shown, note = reported
    return Derived(ref.value, ref.unit, [ref], [f"{concept} {what} = {shown} (from the {report.label} report){note}"])


def _ytd_derived(concept: str, report: ReportKey, reported: tuple) -> Derived:
    """A flow over a year or a year-to-date read as `report` shows it (`reported` as in `_at_derived`)."""
    ref, shown, note = reported
    what = "annual" if report.is_annual else "year-to-date"
    return Derived(ref.value, ref.unit, [ref], [f"{concept} {report.label} ({what}, as reported) = {shown}{note}"])


class FactStore(StoreViews):
    """Canonical facts (contract 1) indexed by (company, scope, concept, report)."""

    quarter_columns = True  # standalone-quarter EPS / weighted shares from the filed 3-month column when there is one

    def __init__(self, facts: pd.DataFrame, *, as_of: str | None = None, _allowed: dict[str, set[ReportKey]] | None = None,
                 quarter_columns: bool = True, selected: bool = False):
        """`facts` may hold every filed version of a value (restatements): the latest filed wins per
        report cell, and `as_of` (YYYY-MM-DD) keeps only values filed on or before that date.

        quarter_columns=False (synth: prompts show year-to-date reports only): a standalone quarter's EPS
        and weighted shares are always derived from the YTD reports and kept unrounded (what the prompt gives), and a
        derived figure that misses the filed 3-month one (rounds to another cent on the filing's basis; 1 % for shares)
        raises LedgerError instead of giving an answer the filer contradicts. With quarter columns, a derived quarter
        EPS stands for the filed one and is rounded to its cent.

        selected=True: `facts` is already `select_latest`'s output (the store cache, `load_facts()`), which selecting
        again leaves as it is (every embedded company's store compared: the same state), so indexing skips it."""
        self.quarter_columns = quarter_columns
        missing = {"company", "scope", "concept", "value", "unit", "start", "end"} - set(facts.columns)
        if missing:
            raise InputError(f"facts table lacks columns {sorted(missing)}", field=",".join(sorted(missing)))
        if as_of is not None and "filed" in facts.columns:
            filed = facts["filed"].astype(str)
            facts = facts[(filed != "") & (filed <= str(as_of))]
        self.facts = facts
        self.as_of = as_of
        self._allowed = _allowed  # None: every report; else {company: reports} this view sees
        from ledgerlm.synth.statements.indexing import index_facts  # pandas: only a store built from facts needs it

        self.calendar, self.index = index_facts(facts, selected=selected and as_of is None)

    @classmethod
    def from_sources(cls, paths: list[str] | None = None, *, as_of: str | None = None,
                     company: str | None = None) -> "FactStore":
        """Load facts (default: the embedded SEC data) keeping every filed version, then index them. `company` (a
        code or exact entity name, any case): index only that company's facts — a store is per company throughout,
        so its answers are the same (every statement of the embedded data compared: 1,320 equal), and `ledgerlm
        statements` / `compute` index one company (0.2-1.1 s) instead of all 20 (4.6 s). A query it cannot place that
        way (a CIK, an unknown name) indexes everything, so the error names what the data holds."""
        if as_of is not None and not _is_date(as_of):
            raise InputError(f"as-of date {str(as_of)[:40]!r} is not a calendar date YYYY-MM-DD", field="as_of")
        facts = load_facts(paths, latest_only=False)
        if company is not None:
            mine = _one_company(facts, company)
            if mine is not facts:
                one = cls(mine, as_of=as_of)
                try:  # the store's own resolution decides (as_of may leave the company out): else index everything
                    one.resolve_company(company)
                    return one
                except InputError:
                    filed = mine.loc[mine["filed"] != "", "filed"]
                    if as_of is not None and len(filed) and filed.min() > str(as_of):
                        raise InputError(f"no filing of {mine['company'].iloc[0]} is dated on or before the as-of date {as_of} "
                                         f"(its earliest is filed {filed.min()})", field="as_of") from None
        if as_of is not None and len(facts) and not ((facts["filed"] != "") & (facts["filed"] <= str(as_of))).any():
            raise InputError(f"no filing in the sources is dated on or before the as-of date {as_of} (rows without a filing "
                             "date, from tables or a bare XBRL instance, are left out of an as-of view)", field="as_of")
        return cls(facts, as_of=as_of)

    @property
    def unplaced(self) -> int:
        """Facts whose window matched no fiscal period (e.g. 2-month stubs)."""
        return self.index.unplaced

    def _company_cells(self, company: str) -> dict[tuple[str, str, ReportKey], Cell]:
        """{(scope, concept, report): cell} for one company (indexed once; the scans are hot in synth)."""
        return self.index.company_cells(company)

    def _scope_index(self, company: str, scope: str) -> dict[str, set[ReportKey]]:
        """{concept: reports holding it} for one company and scope (never depends on `_allowed`)."""
        return self.index.scope_index(company, scope)

    # -- companies and calendars ---------------------------------------------------------------
    def companies(self) -> list[str]:
        return self.calendar.companies()

    def company_name(self, company: str) -> str:
        return self.calendar.names.get(self.resolve_company(company), company)

    def resolve_company(self, query: str) -> str:
        """A ticker, a CIK (with or without leading zeros) or the exact entity name -> the store's key."""
        return self.calendar.resolve(query)

    def fiscal_years(self, company: str) -> list[FiscalYear]:
        return list(self.calendar.years[self.resolve_company(company)])

    def period_end(self, company: str, period: Period | str) -> dt.date | None:
        p = parse_period(period)
        return self.calendar.report_ends.get((self.resolve_company(company), p.end_report()))

    def reports(self, company: str, scope: str = "consolidated") -> list[ReportKey]:
        company = self.resolve_company(company)
        keys = set().union(*self._scope_index(company, scope).values())
        return sorted(k for k in keys if self._visible(company, k))

    def scopes(self, company: str) -> list[str]:
        company = self.resolve_company(company)
        return sorted({k[0] for k in self._company_cells(company)})

    def _has_report(self, company: str, report: ReportKey, scope: str, statement: str = "") -> bool:
        """Does the data hold this report's `statement` (any statement when unknown)?"""
        return self.index.has_report(company, scope, report, statement)

    def report_filed(self, company: str, report: ReportKey | str, scope: str = "consolidated") -> str:
        """Filing date of the report (the earliest filing that showed its current-period values)."""
        return self.calendar.report_filed.get((self.resolve_company(company), scope, parse_report(report)), "")

    def concepts(self, company: str, scope: str = "consolidated") -> list[str]:
        company = self.resolve_company(company)
        index = self._scope_index(company, scope)
        if self._allowed is None:
            return sorted(index)
        return sorted(c for c, reports in index.items() if any(self._visible(company, r) for r in reports))

    # -- raw reported values ---------------------------------------------------------------------
    def reported(self, company: str, concept: str, report: ReportKey | str, scope: str = "consolidated") -> FactRef:
        """The value a report shows (YTD flow or period-end stock); NotDerivable when absent."""
        return self._read_cell(self.resolve_company(company), concept, parse_report(report), scope)

    @cached_property
    def _reported_memo(self) -> dict:
        """`_reported` per (company, scope, concept, report label): the store's (or view's) cells never change."""
        return {}

    def _reported(self, company: str, concept: str, report: ReportKey, scope: str) -> tuple[FactRef, str, str]:
        """`reported` for a resolved company and a ReportKey, with the value as a derivation step writes it and the
        cell's basis note, remembered for the period algebra: the derivations read one cell many times (a balance as
        one period's end and the next one's beginning, a YTD figure in the FY, the quarters and the TTMs around it:
        half the reads of --num 10000 repeat one), and a line a report does not show (the optional debt lines) raises
        the same error each time (remembered, raised as a copy, as in `shared_value`). `reported` itself is not
        remembered: a validation reads every cell once."""
        hit = self._reported_or_error(company, concept, report, scope)
        if isinstance(hit, Exception):
            raise fresh_copy(hit)
        return hit

    def _reported_or_error(self, company: str, concept: str, report: ReportKey, scope: str):
        """`_reported`, with the remembered NotDerivable returned instead of raised (the caller raises a `fresh_copy`,
        or remembers it as it is: `_value_or_error`)."""
        key = (company, scope, concept, report.label)
        hit = self._reported_memo.get(key)
        if hit is None:
            hit = self._cell_or_error(company, concept, report, scope)
            if type(hit) is not NotDerivable:
                hit = (hit, _fmt(hit.value), self._basis_note(company, concept, hit))
            self._reported_memo[key] = hit
        return hit

    def _read_cell(self, company: str, concept: str, report: ReportKey, scope: str) -> FactRef:
        """The reported value (see `reported`), not remembered."""
        ref = self._cell_or_error(company, concept, report, scope)
        if type(ref) is NotDerivable:
            raise ref
        return ref

    def _cell_or_error(self, company: str, concept: str, report: ReportKey, scope: str) -> FactRef | NotDerivable:
        """`_read_cell`, with its NotDerivable returned, never raised (so it has no frames): `_reported_or_error` only
        remembers the error, and 38,749 of the 93,091 cells the bulk stand-in's computes read first are lines a report
        does not show (its 45,299 computes replayed)."""
        visible = self._allowed is None or self._visible(company, report)
        cell = self.index.cells.get((company, scope, concept, report)) if visible else None
        if cell is not None:
            return cell.ref(concept, report.label)
        where = "" if scope == "consolidated" else f" ({scope})"
        withheld = self.index.withheld.get((company, scope, concept, report)) if visible else None
        if withheld is not None:  # a line of another presentation of this date (sheets.py): unknown here, never 0
            return NotDerivable(withheld, company=company, concept=concept, period=report.label, missing=[report.label])
        statement = _meta(concept)[0]
        if visible and self._has_report(company, report, scope, statement):
            if statement == "balance" and not self._full_balance_sheet(company, report, scope):
                # a stub (early XBRL filings that tag a few lines: Verizon's FY2007 cash and equity only) does not show
                # that a line is absent: a debt line it lacks is not a debt of 0
                return NotDerivable(f"{company}: the {report.label} balance sheet{where} shows no {concept} and no total: "
                                    f"not a full statement, so the line cannot be read as 0",
                                    company=company, concept=concept, period=report.label, missing=[report.label])
            if concept in UNTAGGED_WHEN_BETWEEN and self._reported_around(company, scope, concept, report):
                # a lease liability the filer reports before and after this report is not 0 here, only untagged (Apple
                # tags its lease liabilities in 10-Ks only: its half-year debt counted them as 0 beside full-year debt
                # that includes them, so averages and YoY mixed the two bases)
                return NotDerivable(f"{company}: the {report.label} report{where} shows no {concept}, which the filer reports "
                                    f"before and after it: untagged here, not 0",
                                    company=company, concept=concept, period=report.label, missing=[report.label])
            # The report is there but has no such line: nothing is missing that a reader could add.
            return NotDerivable(f"{company}: the {report.label} report{where} shows no {concept}",
                                company=company, concept=concept, period=report.label, missing=[])
        return NotDerivable(f"{company}: {concept} needs the {report.label} report{where}, which is not available",
                            company=company, concept=concept, period=report.label, missing=[report.label])

    def _reported_around(self, company: str, scope: str, concept: str, report: ReportKey) -> bool:
        """Does the company report `concept` in an earlier and in a later report than `report`?"""
        reports = self._scope_index(company, scope).get(concept)
        return bool(reports) and min(reports) < report < max(reports)

    def _full_balance_sheet(self, company: str, report: ReportKey, scope: str) -> bool:
        """Does the report's balance sheet show a total (total assets, total liabilities, or total liabilities and equity)?
        Only a full statement shows that a line it lacks is absent."""
        cells = self.index.cells
        return any((company, scope, total, report) in cells for total in ("total_assets", "total_liabilities", "liabilities_and_equity"))

    def reported_quarter(self, company: str, concept: str, period: Period | str, scope: str = "consolidated") -> FactRef | None:
        """A standalone three-month value as filed in a 10-Q (None when the filing did not show one)."""
        company, p = self.resolve_company(company), parse_period(period)
        cell = self.index.quarter_reported.get((company, scope, concept, p.fiscal_year, p.quarter))
        if cell is None or p.kind != "Q":
            return None
        return cell.ref(concept, p.label)

    def quarter_pairs(self) -> list[tuple[str, str, str, int, int]]:
        """Keys (company, scope, concept, fiscal_year, quarter) of every reported three-month value."""
        return sorted(self.index.quarter_reported)

    # -- period algebra ----------------------------------------------------------------------------
    def kind_of(self, concept: str, company: str | None = None) -> str:
        """flow | stock | per_share | shares (taxonomy first, else inferred from the facts' windows)."""
        kind = _meta(concept)[1]
        if kind:
            return kind
        cells = [c for k, c in self.index.cells.items() if k[2] == concept and (company is None or k[0] == company)]
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

    @cached_property
    def _value_memo(self) -> dict:
        """The full store's derivations, remembered (a view starts without: `_view` drops every cached property)."""
        return {}

    @cached_property
    def _index_memo(self) -> dict:
        """compute.py's recorded sub-index evaluations over the full store (a view starts without, as `_value_memo`)."""
        return {}

    def index_memo(self) -> dict | None:
        """Where compute() keeps the sub-index evaluations it recorded on this store; None for a view (which derives
        afresh: it is made for one question and sees other reports)."""
        return self._index_memo if self._allowed is None else None

    def value(self, company: str, concept: str, period: Period | str, scope: str = "consolidated", basis: str = "end") -> Derived:
        """The value of `concept` over (flows) or at (stocks) `period`, derived from reports.

        basis: for stocks, `end` (period-end balance), `begin` (previous period-end balance) or
        `avg` ((begin + end) / 2); flows ignore it except `avg`/`begin`, which are errors.
        """
        company, p = self.resolve_company(company), parse_period(period)
        if self._allowed is not None:
            return self._value(company, concept, p, scope, basis)  # a view derives afresh: already a copy
        d = self.shared_value(company, concept, p, scope, basis)
        return Derived(d.value, d.unit, list(d.inputs), list(d.steps))  # a copy goes out, so callers may edit it

    def shared_value(self, company: str, concept: str, p: Period, scope: str = "consolidated", basis: str = "end") -> Derived:
        """`value` for a resolved company key and a parsed period, without the copy: the remembered Derived itself,
        which the caller must only read. compute() reads every fact through here (a copy per read was a fifth of a
        cold compute)."""
        if self._allowed is not None:
            return self._value(company, concept, p, scope, basis)
        # the full store never changes: remember each derivation
        key = (company, concept, p.label, scope, basis)  # a label names one period (and hashes in C, a Period in Python)
        hit = self._value_memo.get(key)
        if hit is None:
            hit = self._value_memo[key] = self._value_or_error(company, concept, p, scope, basis)
        if isinstance(hit, Exception):
            raise fresh_copy(hit)  # a copy: a remembered error that is raised keeps its latest traceback and every frame on it
        return hit

    def shared_or_error(self, company: str, concept: str, p: Period, scope: str = "consolidated", basis: str = "end"):
        """`shared_value`, with the LedgerError it would raise returned instead (the remembered one on the full store:
        the caller raises a `fresh_copy`, never the object itself). compute() reads the lines a report may not show
        (`optional(...)`: the debt and lease lines a dozen indices read) without raising and catching each time."""
        if self._allowed is not None:
            return self._value_or_error(company, concept, p, scope, basis)
        key = (company, concept, p.label, scope, basis)
        hit = self._value_memo.get(key)
        if hit is None:
            hit = self._value_memo[key] = self._value_or_error(company, concept, p, scope, basis)
        return hit

    def derive_or_error(self, company: str, concept: str, p: Period, scope: str = "consolidated", basis: str = "end"):
        """`shared_or_error` without remembering the derivation, for a caller that keeps what it reads itself: compute()
        on a full store keeps each reading once per (concept, period, basis) in its own form (`compute._Evaluator._read`),
        so the store's copy was a second memo of every read, held until the store leaves memory (replaying the 45,299
        computes of the bulk stand-in's run, `--num 20000` over 100 companies, through `Builder.value` with its
        evictions, 12 interleaved runs each on a busy machine: min 4.69 -> 4.39 s CPU, median 5.53 -> 5.29 s). Each call
        gives a new Derived, whose lists the caller may keep."""
        return self._value_or_error(company, concept, p, scope, basis)

    def _value_or_error(self, company: str, concept: str, p: Period, scope: str, basis: str):
        """`_value`, or the LedgerError it raises, returned (without its frames). The derivations that read one cell as
        it is reported (a balance at a period's end or beginning; a flow over a year, a year-to-date or a first quarter:
        most reads of compute()) are made here, and a line the report does not show gives the cell's remembered error
        itself (`_reported_or_error`; a caller only ever raises copies) instead of a copy raised through `_value` and
        caught (~11k of --num 10000's 27k derivations): the same Derived or an equal error."""
        statement, kind = _meta(concept)
        kind = kind or self.kind_of(concept, company)
        if kind == "stock" or statement == "balance":
            if basis == "end" or basis == "begin":
                report = _balance_report(p, basis)
                hit = self._reported_or_error(company, concept, report, scope)
                if isinstance(hit, Exception):
                    return hit
                return _at_derived(concept, report, hit, f"{'ending' if basis == 'end' else 'beginning'} balance of {p.label}")
        elif basis == "end" and (p.kind == "FY" or p.kind == "YTD" or (p.kind == "Q" and p.quarter == 1)):
            report = _report_key(p.fiscal_year, 4 if p.kind == "FY" else p.quarter)
            hit = self._reported_or_error(company, concept, report, scope)
            if isinstance(hit, Exception):
                return hit
            return _ytd_derived(concept, report, hit)
        try:
            return self._value(company, concept, p, scope, basis)
        except LedgerError as err:
            return forget_frames(err)

    def _value(self, company: str, concept: str, p: Period, scope: str, basis: str) -> Derived:
        statement, kind = _meta(concept)
        kind = kind or self.kind_of(concept, company)
        if kind == "stock" or statement == "balance":  # balance-sheet share counts are read at dates too
            if basis == "end":
                return self._at(company, concept, _balance_report(p, "end"), scope, f"ending balance of {p.label}")
            if basis == "begin":
                return self._at(company, concept, _balance_report(p, "begin"), scope, f"beginning balance of {p.label}")
            if basis == "avg":
                self._one_line(company, concept, scope, p, (_balance_report(p, "begin"), _balance_report(p, "end")))
                begin = self._at(company, concept, _balance_report(p, "begin"), scope, f"beginning balance of {p.label}")
                end = self._at(company, concept, _balance_report(p, "end"), scope, f"ending balance of {p.label}")
                avg = (begin.value + end.value) / 2
                return Derived(avg, end.unit, begin.inputs + end.inputs, begin.steps + end.steps + [
                    f"average {concept} {p.label} = ({_fmt(begin.value)} + {_fmt(end.value)}) / 2 = {_fmt(avg)}"])
            raise LedgerError(f"unknown basis {basis!r} (end | begin | avg)")
        if basis != "end":
            raise LedgerError(f"{concept} is a flow: basis {basis!r} applies to balance-sheet items only")
        return self._flow(company, concept, p, scope, kind)

    def _at(self, company: str, concept: str, report: ReportKey, scope: str, what: str) -> Derived:
        return _at_derived(concept, report, self._reported(company, concept, report, scope), what)

    def _ytd(self, company: str, concept: str, report: ReportKey, scope: str) -> Derived:
        return _ytd_derived(concept, report, self._reported(company, concept, report, scope))

    def _basis_note(self, company: str, concept: str, ref: FactRef) -> str:
        """' [note]' for a corrected value; per-share values and share counts also name their share basis."""
        if ref.note:
            return f" [{ref.note}]"
        return f" [{self.share_basis(company)}]" if self.kind_of(concept, company) in ("per_share", "shares") else ""

    def share_basis(self, company: str) -> str:
        """The one share basis every per-share value and share count of `company` is stated on."""
        company = self.resolve_company(company)
        memo = self.index.share_basis
        if company not in memo:
            found = sorted({m for c in self._company_cells(company).values() if c.note for m in _SPLIT_RE.findall(c.note)},
                           key=lambda m: m.split("from ")[-1])
            memo[company] = ("share basis: the latest filing's (as filed, after " + "; ".join(found) + ")"
                                          if found else "share basis: as filed (no stock split in the data)")
        return memo[company]

    def splits(self, company: str) -> list[tuple[str, str]]:
        """(factor text, first filing date on the new basis) of every stock split the company's values were rescaled for,
        oldest first (read from the rescale notes; splits.py detects the splits)."""
        company = self.resolve_company(company)
        memo = self._restatement_memo
        if company not in memo:
            # only cells with a note can name a split (most have none: no regex call for them; a company's first visit)
            found = {m.group(1): m.group(2) for c in self._company_cells(company).values() if c.note
                     for m in _SPLIT_PARTS_RE.finditer(c.note)}
            memo[company] = sorted(found.items(), key=lambda kv: kv[1])
        return list(memo[company])

    @cached_property
    def _restatement_memo(self) -> dict:
        """splits() per company and the restated factors per (company, scope, statements) and report (a view starts without)."""
        return {}

    def _restated_by_report(self, company: str, scope: str, shown: frozenset | None) -> dict:
        """report -> split factors its shown per-share values / share counts are restated for (one scan of the cells)."""
        key, memo = (company, scope, shown), self._restatement_memo
        if key not in memo:
            splits, by_report = self.splits(company), {}
            for concept, report, cell in self._share_cells(company, scope):
                if shown is not None and (concept_meta(concept)[0] or cell.statement) not in shown:
                    continue
                filed = self.report_filed(company, report, scope) or cell.filed
                if filed:
                    by_report.setdefault(report, set()).update(k for k, first_new in splits if filed < first_new)
            memo[key] = by_report
        return memo[key]

    def _share_cells(self, company: str, scope: str) -> list[tuple[str, ReportKey, Cell]]:
        """(concept, report, cell) of every per-share value and share count of one company and scope, in cell order
        (one scan, each concept's kind looked up once; memoised beside the restatements it serves)."""
        key, memo = (company, scope, "share cells"), self._restatement_memo
        if key not in memo:
            kinds: dict[str, str] = {}
            out = []
            for (s, concept, report), cell in self._company_cells(company).items():
                if s != scope:
                    continue
                kind = kinds.get(concept)
                if kind is None:
                    kind = kinds[concept] = self.kind_of(concept, company)
                if kind in ("per_share", "shares"):
                    out.append((concept, report, cell))
            memo[key] = out
        return memo[key]

    def split_restatement(self, company: str, reports: Iterable[ReportKey | str], scope: str = "consolidated",
                          statements: Iterable[str] | None = None) -> tuple[list[str], str] | None:
        """(split factors, basis date) when a per-share value or share count these reports show (in `statements`) is
        restated for a stock split: the report was first filed before the split's first filing on the new basis, so
        its figures stand on the latest basis, not as its own filing showed them. None when no shown figure is."""
        company = self.resolve_company(company)
        splits = self.splits(company)
        if not splits:
            return None
        by_report = self._restated_by_report(company, scope, frozenset(statements) if statements is not None else None)
        restated: set[str] = set().union(*(by_report.get(parse_report(r), ()) for r in reports))
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
            d = self._ytd(company, concept, _report_key(y, 4), scope)
            if p.kind == "TTM":
                d.steps.append(f"{concept} {p.label} = annual value of FY{y} = {_fmt(d.value)}")
            return d
        if p.kind == "YTD" or (p.kind == "Q" and q == 1):
            return self._ytd(company, concept, _report_key(y, q), scope)
        if p.kind == "Q":
            cur = self._ytd(company, concept, _report_key(y, q), scope)
            prev = self._ytd(company, concept, _report_key(y, q - 1), scope)
            self._one_line(company, concept, scope, p, (_report_key(y, q), _report_key(y, q - 1)))
            cells = self._company_cells(company)
            cur_cell, prev_cell = cells.get((scope, concept, _report_key(y, q))), cells.get((scope, concept, _report_key(y, q - 1)))
            if cur_cell is not None and prev_cell is not None and cur_cell.filed and prev_cell.filed and prev_cell.filed > cur_cell.filed:
                # mixed vintages: the prior YTD is a later filing's restated comparative, this YTD the original (FSDS 2009Q2:
                # Ford H1 51,967 M original - Q1 24,390 M restated = 27,577 M vs the 10-Q's 27,189 M): the quarter's own
                # three-month figure, when filed, is the one consistent basis (issue 11); a synth store (quarter_columns
                # False: the prompt shows YTD reports only) refuses the quarter instead of answering across vintages
                if not self.quarter_columns:
                    raise NotDerivable(f"{company}: {concept} {p.label}: {_report_key(y, q - 1).label} is restated in a later filing "
                                       f"than {_report_key(y, q).label}; YTD - prior YTD would mix vintages",
                                       company=company, concept=concept, period=p.label, missing=[])
                three_months = self._shown_quarter(company, concept, p, scope)
                if three_months is not None:
                    three_months.steps.append(f"{concept} {p.label}: {_report_key(y, q - 1).label} is restated in a later filing "
                                              f"({prev_cell.filed}) than {_report_key(y, q).label} ({cur_cell.filed}); the "
                                              f"three-month figure as filed is used, not YTD - prior YTD across vintages")
                    return three_months
            val = _exact("+-", cur.value, prev.value)
            filed = _authoritative_quarter(self.index.quarter_reported.get((company, scope, concept, y, q)), cur_cell, prev_cell)
            if filed is None:  # else the filed quarter confirms the derivation or replaces it (below)
                self._one_basis(company, concept, scope, p, _report_key(y, q), _report_key(y, q - 1))
            if filed is not None and abs(val - filed.value) > _flow_slack(cur.value, prev.value, filed.value):
                # the year-to-date figures do not add up to the quarter the filer reports: two vintages (Alphabet FY2015
                # capex: 9M 7,848 M as restated in Nov 2016, H1 5,442 M as restated in Aug 2016 -> 2,406 M; the Nov 2016
                # filing's own quarter is 2,383 M) or a filer whose quarter and YTD disagree (NVIDIA FY2016Q2 operating
                # income: H1 250 M - Q1 176 M = 74 M, filed 76 M). The filed quarter is the answer where its report is
                # shown; a synth store (YTD reports only) refuses the quarter (seed-9191 cross-source audit)
                why = (f"{company}: {concept} {p.label}: {_report_key(y, q).label} - {_report_key(y, q - 1).label} = "
                       f"{_fmt(cur.value)} - {_fmt(prev.value)} = {_fmt(val)} misses the three-month figure the filer reports "
                       f"({_fmt(filed.value)}, filed {filed.filed})")
                three_months = self._shown_quarter(company, concept, p, scope) if self.quarter_columns else None
                if three_months is None:
                    raise NotDerivable(why + "; the year-to-date reports do not give the quarter", company=company,
                                       concept=concept, period=p.label, missing=[])
                three_months.steps.append(why + "; the three-month figure as filed is used")
                return three_months
            step = f"{concept} {p.label} = {_report_key(y, q).label} - {_report_key(y, q - 1).label} = {_fmt(cur.value)} - {_fmt(prev.value)} = {_fmt(val)}"
            return Derived(val, cur.unit, cur.inputs + prev.inputs, cur.steps + prev.steps + [step])
        # TTM ending at quarter q < 4: YTD(y, q) + FY(y-1) - YTD(y-1, q)
        cur = self._ytd(company, concept, _report_key(y, q), scope)
        last_fy = self._ytd(company, concept, _report_key(y - 1, 4), scope)
        prior = self._ytd(company, concept, _report_key(y - 1, q), scope)
        self._one_basis(company, concept, scope, p, _report_key(y - 1, 4), _report_key(y - 1, q))
        self._nested_restatement(company, concept, scope, p, y - 1, q)
        self._one_line(company, concept, scope, p, (_report_key(y, q), _report_key(y - 1, 4), _report_key(y - 1, q)))
        val = _exact("++-", cur.value, last_fy.value, prior.value)
        step = (f"{concept} {p.label} = {_report_key(y, q).label} + FY{y - 1} - {_report_key(y - 1, q).label} = "
                f"{_fmt(cur.value)} + {_fmt(last_fy.value)} - {_fmt(prior.value)} = {_fmt(val)}")
        return Derived(val, cur.unit, cur.inputs + last_fy.inputs + prior.inputs, cur.steps + last_fy.steps + prior.steps + [step])

    def _one_basis(self, company: str, concept: str, scope: str, p: Period, a: ReportKey, b: ReportKey) -> None:
        """Refuse combining two reports' figures when one was restated after the other was last filed and the other was
        never restated (`_restated_after`): Alphabet's FY2014 operating cash flow is 23,024 M as recast in 2016, its
        9M FY2014 the original 16,012 M, so TTM FY2015Q3 = 9M FY2015 + FY2014 - 9M FY2014 is on neither basis (26,975 M
        against 25,973 M from one vintage); Apple's FY2008 revenue restated for the 2009 revenue-recognition rules
        beside the original 9M FY2008 gave TTM FY2009Q3 revenue 43,605 M against 34,562 M (seed-5353 helper audit).
        A restated figure beside another restated one is one basis (Alphabet's 2019 reclassification of its 2018
        operating income in the 10-Q comparatives and the 10-K alike)."""
        cells = self._company_cells(company)
        ca, cb = cells.get((scope, concept, a)), cells.get((scope, concept, b))
        reason = self._two_bases(company, scope, concept, a, ca, b, cb) if ca is not None and cb is not None else None
        if reason is not None:
            raise NotDerivable(f"{company}: {concept} {p.label}: {reason}", company=company, concept=concept, period=p.label,
                               missing=[])

    def _two_bases(self, company: str, scope: str, concept: str, ra: ReportKey, ca: Cell, rb: ReportKey, cb: Cell) -> str | None:
        """Why one concept's cells at two reports are of two bases (one restated after the other was last filed, the
        other never restated), else None. The rule of `_one_basis` and `mixed_bases`."""
        for x, rx, y_, ry in ((ca, ra, cb, rb), (cb, rb, ca, ra)):
            old = _restated_after(x, y_.filed)
            if old is None or _was_restated(y_):
                continue
            three_months = self.index.quarter_reported.get((company, scope, concept, rx.fiscal_year, rx.quarters))
            if three_months is not None and not _differs(old, three_months.value):
                continue  # the earlier value is the quarter's own three months (NVIDIA's FY2018 H1 revenue first tagged
                # 2,230 M, its Q2): a mis-tagged window, not a restatement
            return (f"{rx.label} was restated ({_fmt(old)} -> {_fmt(x.value)}) after {ry.label} was last filed ({y_.filed}), "
                    f"which never was: the two are on different bases")
        return None

    def authoritative_quarter(self, company: str, concept: str, year: int, q: int, scope: str = "consolidated") -> Cell | None:
        """The filed three-month figure of quarter q of `year` where it can stand for YTD(q) - YTD(q-1) (same tag, filed
        no earlier than either: `_authoritative_quarter`), else None."""
        cells = self._company_cells(company)
        return _authoritative_quarter(self.index.quarter_reported.get((company, scope, concept, year, q)),
                                      cells.get((scope, concept, _report_key(year, q))),
                                      cells.get((scope, concept, _report_key(year, q - 1))) if q > 1 else None)

    def _nested_restatement(self, company: str, concept: str, scope: str, p: Period, year: int, q: int) -> None:
        """Refuse a TTM whose prior YTD(year, q), never restated, was last filed before a filing restated a window inside
        it (YTD(year, k), k < q) that the annual figure, filed after that restatement, includes (review of e6fa91c:
        Apple's H1 FY2013 dividends 5,000 M, filed 2013-04-24, predate the restatement of its Q1 2,500 -> 2,486 M on
        2013-07-24; FY2013 10,528 M is on the new basis, so TTM FY2014Q2 10,922 M mixes them; the four filed quarters
        give 10,946 M)."""
        cells = self._company_cells(company)
        prior, annual = cells.get((scope, concept, _report_key(year, q))), cells.get((scope, concept, _report_key(year, 4)))
        if prior is None or annual is None or _was_restated(prior):
            return
        for k in range(1, q):
            inner = cells.get((scope, concept, _report_key(year, k)))
            restated = _restated_on(inner) if inner is not None else None
            if restated is not None and restated[0] > (prior.filed or "") and (annual.filed or "") >= restated[0]:
                raise NotDerivable(f"{company}: {concept} {p.label}: {_report_key(year, k).label} was restated "
                                   f"({_fmt(restated[1])} -> {_fmt(inner.value)}, {restated[0]}) after {_report_key(year, q).label} "
                                   f"was last filed ({prior.filed}), which never was, and FY{year} came after: two bases",
                                   company=company, concept=concept, period=p.label, missing=[])

    def mixed_bases(self, company: str, scope: str, facts: Iterable[FactRef]) -> str | None:
        """Why the facts one computed value read are not of one basis, else None: for each concept read at several
        reports, two of them where one was restated after the other was last filed and the other never was
        (`_one_basis`'s rule, over every pair a formula combines: averages of two balances, YoY and prior-year values,
        YoY of ratios). Seed-6262 one-vintage audit: Apple's FY2016 10-K re-presents FY2015 total assets (-134 M) beside
        an FY2014 balance never re-presented, so avg and YoY of FY2015 read two bases (total_assets_yoy 25.24 vs 25.29
        from the FY2015 10-K alone); Verizon's FY2009 current assets re-presented by a 10-Q of 2010 (22,608 -> 21,745 M)
        beside FY2008 from the 10-K. Consecutive year-to-date flows whose difference the filed three-month figure
        confirms are one basis (`_flow`)."""
        by_concept: dict[str, list[FactRef]] = {}
        cells = self._company_cells(company)
        for f in facts:
            by_concept.setdefault(f.concept, []).append(f)
        for concept, refs in by_concept.items():
            if len(refs) < 2:
                continue
            placed, restated = [], False
            for f in refs:
                report = parse_report(f.report)
                cell = cells.get((scope, concept, report))
                if cell is not None and cell.value == f.value:  # a filed three-month figure is not the report's cell
                    placed.append((report, cell))
                    restated = restated or "@" in cell.alternates
            if not restated or len(placed) < 2:
                continue
            for i, (ra, ca) in enumerate(placed):
                for rb, cb in placed[i + 1:]:
                    if ra == rb or self._confirmed_quarter(company, scope, concept, ra, ca, rb, cb):
                        continue
                    reason = self._two_bases(company, scope, concept, ra, ca, rb, cb)
                    if reason is not None:
                        return f"{company}: {concept} {reason}"
        return None

    def _confirmed_quarter(self, company: str, scope: str, concept: str, ra: ReportKey, ca: Cell, rb: ReportKey, cb: Cell) -> bool:
        """Two consecutive year-to-date reports of one fiscal year whose difference is the quarter the filer files."""
        if ra.fiscal_year != rb.fiscal_year or abs(ra.quarters - rb.quarters) != 1:
            return False
        (_, c0), (r1, c1) = sorted(((ra, ca), (rb, cb)), key=lambda rc: rc[0].quarters)
        filed = self.authoritative_quarter(company, concept, r1.fiscal_year, r1.quarters, scope)
        return filed is not None and abs(c1.value - c0.value - filed.value) <= _flow_slack(c1.value, c0.value, filed.value)

    def _one_line(self, company: str, concept: str, scope: str, p: Period, reports: Iterable[ReportKey]) -> None:
        """Refuse a derivation whose reports hold the concept under two tags that the filer reports as different amounts
        for one of those windows (`Cell.alternates`: Duke's FY2009 Q1 net income is ProfitLoss, 349 M, beside
        NetIncomeLoss 344 M in the same 10-Q, and its H1 is NetIncomeLoss: H1 - Q1 would mix the two lines). Two tags
        with an equal value (within rounding) for a window are one line re-tagged (Apple's D&A cash-flow line moved
        from DepreciationAmortizationAndAccretionNet to DepreciationDepletionAndAmortization in FY2018) and combine."""
        cells = self._company_cells(company)
        used = [(r, cells.get((scope, concept, r))) for r in reports]
        used = [(r, c) for r, c in used if c is not None]
        tags = {c.tag for _, c in used}
        if len(tags) < 2:
            return
        for report, cell in used:
            others: dict[str, list[float]] = {}
            for item in cell.alternates.split(";") if cell.alternates else ():
                tag, _, text = item.rpartition("=")
                if tag in tags and tag != cell.tag:
                    others.setdefault(tag, []).append(float(text))
            for tag, values in others.items():
                if all(abs(v - cell.value) > max(rounding_of(v), rounding_of(cell.value)) for v in values):
                    mixed = ", ".join(f"{r.label} {c.tag}" for r, c in used)
                    raise NotDerivable(f"{company}: {concept} {p.label} would combine two lines ({mixed}): for {report.label} "
                                       f"the filer reports {cell.tag} {_fmt(cell.value)} and {tag} {_fmt(values[0])}",
                                       company=company, concept=concept, period=p.label, missing=[])

    # -- per-share values and share counts are not additive ---------------------------------------------
    def _shown_quarter(self, company: str, concept: str, p: Period, scope: str) -> Derived | None:
        """The three-month figure the quarter's own report (10-Q; 10-K for Q4) shows, when it is visible."""
        report = _report_key(p.fiscal_year, p.quarter)
        cell = self.index.quarter_reported.get((company, scope, concept, p.fiscal_year, p.quarter))
        if cell is None or not self._visible(company, report):
            return None
        ref = cell.ref(concept, report.label)
        return Derived(ref.value, ref.unit, [ref], [f"{concept} {p.label} (three months, as reported in the {report.label} report) = "
                                                    f"{_fmt(ref.value)}" + self._basis_note(company, concept, ref)])

    def _against_filed(self, company: str, concept: str, p: Period, scope: str, kind: str, d: Derived) -> Derived:
        """A derived standalone-quarter figure held against the three-month figure its own report files (10-Q; 10-K
        for Q4), when the filing has one. EPS is then rounded to the precision the filing reports it at (the cent):
        the derived quarter stands for the filed 3-month EPS, so it must equal it (SNOW FY2023Q2 basic EPS
        -222,806,000 / 318,356,771.74 time-weighted shares = -0.699863 -> -0.70, as filed; the YoY of unrounded quarters,
        (-0.699863 - -0.637246) / 0.637246 = -9.83 %, differs from the filed cents' (-0.70 - -0.64) / 0.64 = -9.375 %). LedgerError when the derived figure does not round to the filed one (shares: off by more than the rounding of the figures it combines):
        then the filer contradicts what the year-to-date reports give."""
        cell = self.index.quarter_reported.get((company, scope, concept, p.fiscal_year, p.quarter))
        if cell is None:
            return d
        if kind != "per_share":
            # the derivation is exact up to the rounding of the figures it combines (and of the filed count); beyond that,
            # the filer's year-to-date averages do not add up to its quarter: diluted shares by the treasury-stock method
            # are not additive (NVIDIA FY2015Q3 diluted: 555.8 M from the 9M and H1 averages, 558.2 M filed, so a dilution
            # ratio of 1.015 instead of the filed 1.019; Apple FY2023Q2 diluted 0.04 % off: OCF per share 1.803 vs 1.802)
            if abs(d.value - cell.value) > self._rounding_slack(company, concept, p, scope, cell):
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
        if not self.quarter_columns:
            # a synth store's reader sees year-to-date reports only: the filed cent is not in the prompt (and is the
            # original filing's, NVDA FY2023Q2 basic EPS 0.026 on the 10-for-1 basis from a filed 0.26), so the quarter
            # stays the unrounded derivation it can reproduce (YoY -72.36 %, not -72.63 % from the filed cents:
            # seed-4242 helper audit); the check above still refuses a quarter its filing contradicts
            return d
        value = float(round(rounded / k, 6))  # on the latest share basis, at the 6 decimals rescaled figures keep
        if k == 1:
            step = (f"{concept} {p.label} = {d.value:.6g} rounded to {places} decimals = {value:.{places}f} (EPS is reported to "
                    f"{'the cent' if places == 2 else f'{places} decimals'}; the {p.label} report " + FILED_EPS_NOTE + ")")
        else:
            step = (f"{concept} {p.label} = {d.value:.6g} = {d.value * float(k):.6g} / {k} on the basis of the {p.label} report, "
                    f"rounded to {places} decimals there = {rounded} / {k} = {_fmt(value)} (EPS is reported to "
                    f"{'the cent' if places == 2 else f'{places} decimals'}; the {p.label} report " + FILED_EPS_NOTE + ")")
        return Derived(value, d.unit, d.inputs, d.steps + [step])

    def _rounding_slack(self, company: str, concept: str, p: Period, scope: str, filed: Cell) -> float:
        """How far a standalone quarter's time-weighted shares can be from the filed three-month count by rounding alone:
        each year-to-date average's rounding, times its days, over the quarter's days, plus half the filed count's."""
        y, q = p.fiscal_year, p.quarter
        cells = self._company_cells(company)
        slack, days_q = 0.0, 0
        for sign, report in ((1, _report_key(y, q)), (-1, _report_key(y, q - 1))):
            days = self._report_days(company, report)
            days_q += sign * days
            cell = cells.get((scope, concept, report))
            slack += days * (_rounding(cell) if cell is not None else 0.0) / 2
        return slack / max(1, days_q) + _rounding(filed) / 2

    def _report_days(self, company: str, report: ReportKey) -> int:
        """Days the report's year-to-date window covers (fiscal-year start to the report's end date)."""
        return self.calendar.report_days(company, report)

    def _weighted_shares(self, company: str, concept: str, p: Period, scope: str) -> Derived:
        """Weighted-average shares of a standalone quarter or a TTM window, time-weighted from the reports.

        A weighted average over a window is share-days / days, so share-days add and subtract like flows:
        Qn = (YTDn x days(YTDn) - YTD(n-1) x days(YTD(n-1))) / days(Qn); TTM likewise from YTDq, FY(y-1) and
        YTD(y-1, q). (Never YTD - prior YTD, never YTD + FY - prior YTD.)"""
        y, q = p.fiscal_year, p.quarter
        if p.kind == "Q":
            parts = [(+1, _report_key(y, q)), (-1, _report_key(y, q - 1) if q > 1 else None)]
        else:  # TTM ending at quarter q < 4
            parts = [(+1, _report_key(y, q)), (+1, _report_key(y - 1, 4)), (-1, _report_key(y - 1, q))]
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


def _filed_basis(cell: Cell) -> tuple[Decimal, float]:
    """(split factor k, the figure as its filing showed it) of a per-share cell: a rescaled cell's note reads
    "as filed 5.98 / 10 = 0.598 on the latest share basis (...)"; k = 1 for a cell on its own filing's basis."""
    m = _AS_FILED_RE.search(cell.note)
    if m is None:
        return Decimal(1), cell.value
    return Decimal(m.group(2)), float(m.group(1))


def _rounding(cell: Cell) -> float:
    """The rounding of a share count as its filing showed it (`facts.rounding_of`), on the latest basis: a count rescaled
    for a split or a scale slip (note "as filed 555,035,000 x 40 = ...") keeps its filed rounding times k."""
    m = _SHARES_AS_FILED_RE.search(cell.note)
    filed, k = (float(m.group(1).replace(",", "")), float(m.group(2))) if m else (cell.value, 1.0)
    return rounding_of(filed) * k


def _restatements(cell: Cell) -> list[tuple[str, float]]:
    """(filed, value) of each value the cell's tag was first filed with, oldest first (`facts._restatements`; none when
    every filing gave one value)."""
    if "@" not in cell.alternates:
        return []
    out = []
    for item in cell.alternates.split(";"):
        if item.startswith("@"):
            filed, _, text = item[1:].rpartition("=")
            out.append((filed, float(text)))
    return out


def _differs(a: float, b: float) -> bool:
    return abs(a - b) > max(rounding_of(a), rounding_of(b))


def _restated_after(cell: Cell, when: str) -> float | None:
    """The value the cell's figure had before a filing after `when` (a filing date) restated it to the cell's value,
    else None: a figure last filed at `when` and never restated is on the basis before that restatement (Apple's
    9M FY2008 revenue, 24,584 M, filed 2009-07-22; its FY2008, first filed 2009-10-27 as 32,479 M, restated to 37,491 M
    on 2010-01-25)."""
    restated = _restated_on(cell)
    return restated[1] if restated is not None and when and restated[0] > when else None


def _restated_on(cell: Cell) -> tuple[str, float] | None:
    """(the filing date that first gave the cell's value, the value before it) where a filing restated it, else None;
    trailing values within rounding of the kept one are the same value."""
    runs = _restatements(cell)
    i = len(runs) - 1
    while i > 0 and not _differs(runs[i - 1][1], cell.value):
        i -= 1
    return (runs[i][0], runs[i - 1][1]) if i > 0 else None


def _was_restated(cell: Cell) -> bool:
    return any(_differs(value, cell.value) for _, value in _restatements(cell))


def _authoritative_quarter(filed: Cell | None, cur: Cell | None, prev: Cell | None) -> Cell | None:
    """The filed three-month figure where it can stand for the quarter of the two year-to-date figures: the same tag,
    filed no earlier than either (review of 054563e: Apple's FY2017Q2 dividends 2,988 M filed 2017-05-03 before both
    YTD figures were restated, 3,004 M from them; its Q3 / Q4 filed under PaymentsOfDividendsCommonStock beside
    PaymentsOfDividends YTD figures; NVIDIA's FY2014Q2 net change in cash from a 2013 filing beside 2014 comparatives).
    None otherwise: the derivation then stands on its own (`_one_basis`)."""
    if filed is None or cur is None or prev is None:
        return None
    if filed.tag != cur.tag or (filed.filed or "") < max(cur.filed or "", prev.filed or ""):
        return None
    return filed


def _flow_slack(cur: float, prev: float, filed: float) -> float:
    """How far YTD - prior YTD can be from the filed three-month figure by rounding alone: half the rounding each of
    the three figures shows (`rounding_of`: 1,000,000 for 2,383,000,000), each at least the filed quarter's own. A
    coarser filing's quarter is the difference of its own rounded year-to-date figures, or the plug that makes its
    rounded quarters add up: NVIDIA's FY2016 10-K gives FY2015 Q4 cost of revenue as 552 M (quarters forced to sum to
    the rounded 2,083 M) where FY - 9M as first filed in thousands is 550,911 k, the original 10-K's own Q4 (Q4 audit,
    helper: the quarter read 552 M beside its gross profit of the originals)."""
    floor = rounding_of(filed)
    return sum(max(rounding_of(v), floor) for v in (cur, prev, filed)) / 2 * 1.0001


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


def _is_date(text: str) -> bool:
    """A real calendar date written YYYY-MM-DD ('2023-13-01' is not one)."""
    try:
        return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(text))) and dt.date.fromisoformat(str(text)) is not None
    except ValueError:
        return False


def _one_company(facts: pd.DataFrame, query: str) -> pd.DataFrame:
    """The rows of the company `query` names by its code or exact entity name (case-insensitive); all rows when it
    names none of them (resolve_company then places a CIK or names the companies the data holds)."""
    q = str(query).strip().lower()
    names = facts.sort_values("filed", ascending=False, kind="stable").drop_duplicates("company")  # each one's latest name
    hit = names[(names["company"].str.lower() == q) | (names["company_name"].str.strip().str.lower() == q)]["company"]
    if len(hit) != 1:
        return facts
    return facts[facts["company"] == hit.iloc[0]].reset_index(drop=True)
