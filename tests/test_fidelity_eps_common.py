"""eps_*_computed uses net income available to common stockholders when the filer reports it (issue 11).

    python -m pytest tests/test_fidelity_eps_common.py -q

Bank of America 10-K 2009: net income 6,276 M less preferred dividends 8,480 M = net loss applicable to common
shareholders -2,204 M (NetIncomeLossAvailableToCommonStockholdersBasic); weighted basic shares 7,728,570 k; filed
basic EPS -0.29. Filers that do not report that line keep net income to the parent (NVIDIA).
"""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def stores():
    from ledgerlm.synth.finindices.storecache import company_stores

    return company_stores(None)


def value(stores, company, index_id, period):
    from ledgerlm.synth.indices.compute import compute

    return compute(stores[company], company, index_id, period).value


def test_bac_eps_after_preferred_dividends(stores):
    assert value(stores, "BAC", "eps_basic_computed", "FY2009") == pytest.approx(-2_204e6 / 7_728_570e3)
    assert round(value(stores, "BAC", "eps_basic_computed", "FY2009"), 2) == -0.29  # the 10-K's basic EPS
    assert round(value(stores, "BAC", "eps_basic_computed", "FY2009Q1"), 2) == 0.44  # 10-Q Q1 2009, filed basic EPS 0.44


def test_parent_net_income_when_no_common_line(stores):
    ni = value(stores, "NVDA", "net_income_parent", "FY2017")
    assert value(stores, "NVDA", "eps_basic_computed", "FY2017") == pytest.approx(ni / value(stores, "NVDA", "shares_basic", "FY2017"))
