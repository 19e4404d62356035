"""Views of a FactStore (issue 13): what a store *shows*, over the calendar and fact index it composes.

    nice -n 10 python -m pytest -q tests/test_statements_store_parts.py

- visibility views: `restrict` (only some reports: the ones a prompt shows) and `with_reported_values` (other values
  on the same fiscal calendar and units: the numbers parsed back out of a rendered prompt, in a new FactIndex);
- statement views: `statement` / `report_statement`, one statement in DESIGN.md's machine-readable shape.

`StoreViews` is a mixin of `store.FactStore` (which holds `calendar`, `index`, `_allowed` and the period algebra
`value`); it imports nothing from store.py. A view is a new store object that shares the calendar and (unless given
another) the index, and starts with none of the store's `functools.cached_property` values: `_view` drops every one
of them by reflection (`_cached_names`), so a cache added to FactStore later cannot go stale in a view without
being listed anywhere. The index's own caches are cached properties of the index they are derived from (factindex.py).
"""
from __future__ import annotations

from collections import Counter
from functools import cache, cached_property
from typing import Iterable

from ledgerlm.errors import InputError, NotDerivable
from ledgerlm.synth.statements.factindex import Cell, FactIndex, concept_meta
from ledgerlm.synth.statements.periods import Period, ReportKey, parse_period, parse_report
from ledgerlm.synth.statements.taxonomy import concepts as taxonomy_concepts

EPS_SHARES = {"eps_basic": "shares_basic", "eps_diluted": "shares_diluted"}  # EPS concept -> its denominator
QUARTER_COLUMNS = frozenset({*EPS_SHARES, *EPS_SHARES.values()})  # non-additive lines read from the 3-month column


class StoreViews:
    """Visibility and statement views of a FactStore (mixin: needs `calendar`, `index`, `_allowed`, `resolve_company`,
    `share_basis` and `value` from store.FactStore)."""

    _allowed: dict[str, set[ReportKey]] | None  # None: every report; else {company: reports} this view sees

    # -- visibility views -----------------------------------------------------------------------
    def _view(self, allowed: dict[str, set[ReportKey]], index: FactIndex | None = None) -> StoreViews:
        """A store over the same calendar (and `index`, default the same) that sees only `allowed`. The view's own
        derived caches (cached properties of FactStore) start empty; other attributes are shared."""
        view = type(self).__new__(type(self))
        cached = _cached_names(type(self))
        view.__dict__.update({k: v for k, v in self.__dict__.items() if k not in cached})
        view._allowed = allowed
        if index is not None:
            view.index = index
        return view

    def restrict(self, allowed: dict[str, Iterable[ReportKey | str]]) -> StoreViews:
        """A view that only sees the given reports of the given companies (all scopes)."""
        return self._view({c: {parse_report(r) for r in reps} for c, reps in allowed.items()})

    def with_reported_values(self, company: str, values: dict[tuple[str, str, str], float], source: str = "prompt") -> StoreViews:
        """A view of `company` that sees only `values` {(scope, concept, report label): value}, on this
        store's fiscal calendar and units: e.g. the numbers parsed back out of a rendered prompt."""
        company = self.resolve_company(company)
        reports = {parse_report(r) for _, _, r in values}
        own = self.index.company_cells(company)
        currency = next((c.unit for c in own.values() if "/" not in c.unit and c.unit.lower() != "shares"), "")
        cells = {}
        for (scope, concept, report), value in values.items():
            original = own.get((scope, concept, parse_report(report)))
            unit = original.unit if original is not None else currency
            # a figure the prompt shows exactly keeps its filing's note (split basis, filed rounding): the check that a
            # derived quarter agrees with the filed three-month figure then allows the same rounding as on the store
            # (NVDA FY2022Q2 diluted shares, filed in millions before a 4-for-1 and a 10-for-1 split: seed-2718 run)
            note = original.note if original is not None and float(value) == original.value else ""
            cells[(company, scope, concept, parse_report(report))] = Cell(float(value), unit, source, concept, "",
                                                                          original.statement if original else "", "", note)
        # three-month EPS and share counts of the shown reports stay visible (a 10-Q shows its quarter's column)
        quarters = {k: c for k, c in self.index.quarter_reported.items() if k[0] == company and k[2] in QUARTER_COLUMNS
                    and ReportKey(k[3], k[4]) in reports}
        index = self.index.replace(cells=cells, quarter_reported=quarters)
        index.share_basis[company] = self.share_basis(company)  # the company's basis (its split notes are in this store's cells)
        return self._view({company: reports}, index)

    def _visible(self, company: str, report: ReportKey) -> bool:
        return self._allowed is None or report in self._allowed.get(company, set())

    # -- statement views ------------------------------------------------------------------------------
    def statement(self, company: str, period: Period | str, statement: str, scope: str = "consolidated") -> dict:
        """One statement for any period (derived by the algebra), in DESIGN.md's machine-readable shape."""
        company, p = self.resolve_company(company), parse_period(period)
        _check_statement(statement)
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
        return _statement_dict(company, p, statement, scope, items, units, self.calendar.window(company, p))

    def report_statement(self, company: str, report: ReportKey | str, statement: str, scope: str = "consolidated") -> dict:
        """What one report shows for one statement: year-to-date flows, period-end stocks.

        The same dict as `statement(company, report.period, ...)`, read straight from the report's cells: at a
        report's own period every line is "as reported" (a stock at the period end is the report's balance, a flow,
        per-share value or share count over the report's window is its year-to-date figure), so the period algebra
        (`value`, with its worded steps) would only copy each cell. Many filers make this cold work per company
        (issue 17); `tests/test_statements_report_view.py` holds it equal to `statement` on every report."""
        company, r = self.resolve_company(company), parse_report(report)
        _check_statement(statement)
        items, units = [], Counter()
        if self._visible(company, r):
            cells = self.index.cells
            for concept in self._statement_concepts(company, scope, statement):
                cell = cells.get((company, scope, concept, r))
                if cell is not None:
                    items.append({"concept": concept, "label": cell.label or concept, "value": cell.value, "unit": cell.unit})
                    units[cell.unit] += 1
        return _statement_dict(company, r.period, statement, scope, items, units, self.calendar.window(company, r.period))

    def _statement_concepts(self, company: str, scope: str, statement: str) -> list[str]:
        """Concepts of `statement` the company reports in `scope`, in taxonomy order (cached per store)."""
        memo, key = self.index.statement_order, (company, scope, statement)
        if key not in memo:
            memo[key] = self._find_statement_concepts(company, scope, statement)
        return memo[key]

    def _find_statement_concepts(self, company: str, scope: str, statement: str) -> list[str]:
        cells = self._company_cells(company)
        present = sorted({k[1] for k in cells if k[0] == scope})
        order = _taxonomy_order()
        reported_statement = {k[1]: c.statement for k, c in cells.items() if k[0] == scope and c.statement}
        ordered = []
        for concept in present:
            stmt = concept_meta(concept)[0] or reported_statement.get(concept, "")
            if stmt == statement:
                ordered.append(concept)
        return sorted(ordered, key=lambda c: (order.get(c, len(order)), c))


@cache
def _cached_names(cls: type) -> frozenset[str]:
    """Names of every functools.cached_property of `cls` (and its bases): what a view must not inherit."""
    return frozenset(name for klass in cls.__mro__ for name, attr in vars(klass).items() if isinstance(attr, cached_property))


@cache
def _taxonomy_order() -> dict[str, int]:
    """concept -> its position in concepts.yaml (built once: every company's statements are ordered by it)."""
    return {c: i for i, c in enumerate(taxonomy_concepts())}


def _check_statement(statement: str) -> None:
    if statement not in ("income", "balance", "cashflow", "equity"):
        raise InputError(f"unknown statement {statement!r} (income | balance | cashflow | equity)", field="statement")


# a note's breakdown line -> the balance line it is part of: shown only where that line is not (a sheet whose lines
# add up): NVIDIA's, Alphabet's, Snowflake's and Apple's finite-lived intangibles (their intangible-assets note) sat
# below "Intangible assets, net" as if a line of its own, and Verizon's 6,764 M below its 78,831 M (licences included)
NOTE_BREAKDOWN_OF = {"finite_lived_intangible_assets": "intangible_assets"}


def _statement_dict(company: str, p, statement: str, scope: str, items: list[dict], units: Counter, window=None) -> dict:
    """The statement result shared by `statement` and `report_statement` (NotDerivable when no line is there); with
    the period's `window` (first, last day) a balance sheet gets its date (`end`), other statements `start` and `end`."""
    shown = {item["concept"] for item in items}
    items = [item for item in items if NOTE_BREAKDOWN_OF.get(item["concept"]) not in shown]
    if not items:
        raise NotDerivable(
            f"{company}: no {scope} {statement} statement can be derived for {p.label}",
            company=company, period=p.label, missing=[p.end_report().label],
        )
    currency = next((u for u, _ in units.most_common() if "/" not in u and u.lower() != "shares"), "")
    out = {"company": company, "period": p.label, "statement": statement, "scope": scope, "unit": currency}
    if window is not None:
        out.update({"end": window[1].isoformat()} if statement == "balance" else
                   {"start": window[0].isoformat(), "end": window[1].isoformat()})
    out["items"] = items
    return out
