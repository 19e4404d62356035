"""`report_statement` reads a report's cells directly (issue 17: cold per-company work over many filers); it must
equal the general statement view (`statement` at the report's period, through the period algebra) everywhere.

    nice -n 19 python -m pytest -q tests/test_statements_report_view.py
"""
from __future__ import annotations

from functools import lru_cache

import pytest

from ledgerlm.errors import InputError, NotDerivable
from ledgerlm.synth.finindices.storecache import build_stores
from ledgerlm.synth.statements.sources import load_facts

STATEMENTS = ("income", "balance", "cashflow", "equity")


@lru_cache(maxsize=1)
def stores() -> dict:
    return build_stores(load_facts())


def _both(store, company, report, statement, scope):
    """(outcome of report_statement, outcome of statement at the report's period): a dict or the error's text."""
    out = []
    for call in (lambda: store.report_statement(company, report, statement, scope),
                 lambda: store.statement(company, report.period, statement, scope)):
        try:
            out.append(call())
        except NotDerivable as err:
            out.append(("NotDerivable", str(err), err.missing))
    return out


@pytest.mark.parametrize("company", sorted(stores()))
def test_report_statement_equals_the_period_algebra(company):
    store = stores()[company]
    checked = 0
    for scope in store.scopes(company):
        reports = store.reports(company, scope)
        # a restricted view (every other report) too: hidden reports must fail the same way
        view = store.restrict({company: reports[::2]})
        for report in reports + [type(reports[0])(reports[-1].fiscal_year + 1, 4)]:
            for statement in STATEMENTS:
                for s in (store, view):
                    fast, slow = _both(s, company, report, statement, scope)
                    assert fast == slow, (company, scope, report.label, statement)
                    checked += isinstance(fast, dict)
    assert checked > 20  # real statements were compared, not only errors


def test_report_statement_bad_statement_is_one_input_error():
    company = sorted(stores())[0]
    store = stores()[company]
    with pytest.raises(InputError, match="unknown statement 'notes'"):
        store.report_statement(company, store.reports(company)[0], "notes")
