"""Question wording of issue 11 part B: consolidated scope beside parent statements, conventions in no-hint
prompts, answers never rounding to 0 (re-drawn at a smaller unit, then more decimals).

    python -m pytest tests/test_synth_wording.py -q
"""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from ledgerlm.synth.finindices import instructions
from ledgerlm.synth.finindices.answers import answer_text, rounds_to_zero
from ledgerlm.synth.finindices.pipeline import Drop

UNITS = ["units", "thousands", "ten_thousands", "millions", "hundred_millions", "billions"]


def _choice(language="en", unit="billions", decimals=1):
    c = instructions.choose(random.Random(1), language=language, paradigm="single", units=[unit], decimals=[decimals],
                            table_formats=["json"])
    assert c.currency_unit == unit and c.decimals == decimals
    return c


def _msg(choice, **kw):
    return instructions.user_message(choice, company="X", company_name="X Co", blocks=["b"], index_names=["Capex"],
                                     periods=["FY2024"], kinds=["currency"], currency="USD", **kw)


@pytest.mark.parametrize("language,needle", [("en", "consolidated group"), ("zh", "合并报表口径")])
def test_scope_is_stated_when_parent_statements_are_shown(language, needle):
    c = _choice(language)
    assert needle in _msg(c, hints=None, scope_note=True)
    assert needle not in _msg(c, hints=None, scope_note=False)


def test_no_hint_prompt_states_conventions_but_not_the_formula():
    c = _choice()
    text = _msg(c, hints=None, conventions=["Days in period = 90 per quarter."])
    assert "Conventions: Days in period = 90 per quarter." in text and "Formula" not in text
    assert "Conventions" not in _msg(c, hints=["Capex = purchases of PP&E"], conventions=None)


def test_capex_of_11_million_is_not_asked_in_billions_to_one_decimal():
    """The issue's example: $11 M of capex asked in billions to 1 dp would be 0.0."""
    v = SimpleNamespace(value=11e6, result="currency")
    assert rounds_to_zero(v.value, v.result, "billions", 1)
    c = instructions.showing(_choice(unit="billions", decimals=1), [v], UNITS)
    assert c.currency_unit == "hundred_millions" and answer_text(v.value, v.result, c.currency_unit, c.decimals) == "0.1"
    assert not rounds_to_zero(0.0, "currency", "billions", 1)  # a true zero stays as asked


def test_tiny_ratio_gets_more_decimals_or_is_dropped():
    c = instructions.showing(_choice(decimals=1), [SimpleNamespace(value=0.00004, result="percent")], UNITS)
    assert c.decimals == 3 and answer_text(0.00004, "percent", c.currency_unit, c.decimals) == "0.004"
    with pytest.raises(Drop, match="rounds_to_zero"):
        instructions.showing(_choice(decimals=1), [SimpleNamespace(value=1e-12, result="ratio")], UNITS)


def test_debt_with_leases_states_how_absent_lease_lines_and_one_line_totals_count():
    """Seed-5150 helper audit (every answer recomputed from its prompt): financial debt with leases counted absent lease
    lines as 0 while the prompt said so only of debt lines, and Ford's one "debt and capital lease obligations" total
    was financial debt while the prompt said lease liabilities are not."""
    from ledgerlm.synth.indices.registry import load_registry

    registry = load_registry()
    with_leases = registry["financial_debt_with_leases"]
    for language, zero, total in (("en", "a lease line the balance sheet does not show counts as 0", "debt and capital lease obligations"),
                                  ("zh", "资产负债表未列示的租赁科目按 0 计", "债务及资本租赁负债合计")):
        assert zero in with_leases.hint_text(language) and total in with_leases.hint_text(language)
        assert total in registry["net_financial_debt"].hint_text(language)
    # lease_liabilities_total reads no total short-term debt line: it is not told one holds the finance leases
    assert "lease_in_short_term_debt" in with_leases.conventions
    assert "lease_in_short_term_debt" not in registry["lease_liabilities_total"].conventions


def test_computed_eps_is_not_told_to_take_q1_as_reported():
    """Seed-777 analyst audit: every computed-EPS prompt said Q1 "is the EPS its report shows" while its answer is net
    income to common / shares (UNH FY2009Q1 0.821 vs the reported 0.82), and said net income was the parent's share."""
    from ledgerlm.synth.indices.registry import load_registry

    registry = load_registry()
    for language, q1, common in (("en", "Q1, a report of its own, is the EPS its report shows", "available to common"),
                                 ("zh", "取其报告列示的每股收益；", "归属于普通股股东的净利润")):
        computed = registry["eps_basic_computed"].hint_text(language)
        assert q1 not in computed and common in computed and "归属于母公司所有者的净利润，而非" not in computed
        assert q1 in registry["eps_basic_yoy"].hint_text(language)  # an index that reads the filed EPS keeps the rule


def test_a_balance_index_asks_for_the_period_end_not_a_window():
    """Seed-777 analyst audit: retained earnings per share "in the standalone quarter Q1 of fiscal 2010" (单季) named a
    window for a point-in-time figure; balance-only indices now name the period's end."""
    from ledgerlm.synth.indices.registry import load_registry

    registry = load_registry()
    assert registry["debt_to_assets"].point_in_time and registry["retained_earnings_total_per_share"].point_in_time
    assert not registry["ocf_to_net_income"].point_in_time and not registry["inventory_turnover"].point_in_time
    assert instructions.describe_period("FY2010Q1", "zh", at_end=True) == "2010财年第1季度末（FY2010Q1）"
    assert instructions.describe_period("FY2010Q1", "zh") == "2010财年第1季度单季（FY2010Q1）"
    assert instructions.describe_period("FY2023Q3YTD", "en", at_end=True) == "the end of the third quarter of fiscal 2023 (FY2023Q3YTD)"


def test_one_decimal_place_is_singular():
    """Seed-777 analyst audit: 'round to 1 decimal places'."""
    pool = instructions.templates("en")
    assert pool.get("decimals_1", "").startswith("and round to 1 decimal place (") and "{decimals} decimal places" in pool["decimals"]
