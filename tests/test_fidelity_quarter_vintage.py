"""A standalone quarter is never YTD - prior YTD across filing vintages (issue 11).

    python -m pytest tests/test_fidelity_quarter_vintage.py -q

FSDS 2009Q2: Ford's H1 2009 revenue 51,967 M comes from the original 2009 Q2 10-Q, its Q1 24,390 M from the 2010
10-Q's restated comparative; 51,967 - 24,390 = 27,577 M, but the 10-Q's three-month figure is 27,189 M. The full
store answers with the filed three-month figure; a synth store (prompts show YTD reports only) refuses the quarter.
"""
from __future__ import annotations

import pytest


def test_ford_q2_2009_is_the_filed_three_month_figure():
    from ledgerlm.synth.indices.cli import load_store
    from ledgerlm.synth.indices.compute import compute

    store = load_store(None, None)
    assert compute(store, "F", "revenue", "FY2009Q2").value == 27_189e6
    assert compute(store, "GE", "revenue", "FY2009Q2").value == 39_082e6


def test_synth_store_refuses_a_mixed_vintage_quarter():
    from ledgerlm.errors import LedgerError
    from ledgerlm.synth.finindices.storecache import company_stores
    from ledgerlm.synth.indices.compute import compute

    with pytest.raises(LedgerError):
        compute(company_stores(None)["F"], "F", "revenue", "FY2009Q2")
