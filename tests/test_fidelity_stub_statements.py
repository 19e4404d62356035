"""A line a stub balance sheet does not show is not a line of 0.

    python -m pytest -q tests/test_fidelity_stub_statements.py

Early XBRL filings tag a few lines of some balance sheets (Verizon FY2007: cash 1,153 M and equity 82,869 M only; the
FSDS 10-K 0001193125-10-041685 has no 2007 debt). Reading the absent debt lines as 0 gave net debt = -cash and
net debt / EBITDA = -0.04 for a filer with ~$28 B of debt (found by two independent audits of a seed-5 run: 8 such
items, VZ / K / ED / GE / F / SNOW / TSM). Only a full statement - one that shows a total (total assets, total
liabilities, or total liabilities and equity) - shows that a line is absent.
"""
from __future__ import annotations

from functools import lru_cache

import pytest

from ledgerlm.errors import NotDerivable
from ledgerlm.synth.indices.compute import compute
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore


@lru_cache(maxsize=1)
def store() -> FactStore:
    return FactStore(load_facts(), quarter_columns=False)


@pytest.mark.parametrize("company, index, period", [
    ("VZ", "net_debt_to_ebitda_ttm", "FY2007"),  # cash and equity only
    ("K", "net_debt_to_ebitda_ttm", "FY2007"),
    ("GE", "net_debt", "FY2008H1"),  # one line: cash
    ("F", "net_financial_debt", "FY2009Q1"),
    ("TSM", "book_enterprise_value", "FY2015"),  # cash, PP&E, intangibles, equity
])
def test_debt_on_a_stub_balance_sheet_is_not_derivable(company, index, period):
    with pytest.raises(NotDerivable, match="not a full statement") as err:
        compute(store(), company, index, period)
    assert err.value.missing  # a report is missing in substance: never counted as 0, never an answer


def test_an_absent_line_of_a_full_balance_sheet_still_counts_as_0():
    # NVIDIA's FY2016 balance sheet shows total assets and no short-term debt line: its interest-bearing debt is the
    # convertible notes (1,413 M) and finance leases (4 M + 10 M), short-term debt 0
    value = compute(store(), "NVDA", "interest_bearing_debt", "FY2016")
    assert value.value == 1_427_000_000
    assert any(step.get("value") == 0.0 and "is not shown in the FY2016 report" in step.get("arithmetic", "")
               for step in value.trace)
