"""Chinese wording of synthesized prompts and worked solutions (Chinese analyst reading of zh prompts): units, debt and
invested-capital terms, line labels that match the convention text, no English left in the worked solutions.

    python -m pytest tests/test_synth_zh_wording.py -q
"""
from __future__ import annotations

import random

import pytest

from ledgerlm.synth.finindices import instructions
from ledgerlm.synth.statements.render import unit_header
from ledgerlm.synth.statements.tables import parse_unit_header

SCALES = {"units": (1, ""), "thousands": (1e3, "千"), "ten_thousands": (1e4, "万"), "millions": (1e6, "百万"),
          "hundred_millions": (1e8, "亿")}


def _choice(unit: str, language: str = "zh"):
    return instructions.choose(random.Random(1), language=language, paradigm="single", units=[unit], decimals=[1],
                               table_formats=["json"])


@pytest.mark.parametrize("currency,unit,expected", [
    ("USD", "hundred_millions", "金额单位为亿美元"), ("USD", "units", "金额单位为美元"), ("CNY", "millions", "金额单位为百万元"),
    ("TWD", "hundred_millions", "金额单位为新台币亿元"), ("TWD", "thousands", "金额单位为新台币千元"),
    ("TWD", "units", "金额单位为新台币元"), ("USD", "billions", "金额单位为十亿美元")])
def test_zh_amount_unit_puts_the_scale_word_where_chinese_does(currency, unit, expected):
    """"亿新台币元" / "万新台币元" read wrong: the scale goes before 元 / 美元 and after 新台币 (新台币千元, as Taiwan filers
    head their statements), in the question's unit sentence and in every statement's 单位 header alike."""
    text = instructions.constraint_text(_choice(unit), ["currency"], currency)
    assert text.startswith(expected + "，") and "新台币元" not in text.replace("金额单位为新台币元", "")
    scale, word = SCALES.get(unit, (None, None))
    if scale is not None:  # the statements are shown at the same scales (billions only as a question unit)
        header = unit_header(currency, scale, "zh")
        assert header.startswith("单位：" + expected[len("金额单位为"):])
        parsed = parse_unit_header(header)  # and the prompt reader still finds currency and scale
        assert parsed.currency == currency and parsed.scale == scale
    per_share = instructions.constraint_text(_choice(unit), ["per_share"], currency)
    assert per_share.startswith("每股金额以" + {"USD": "美元", "CNY": "元", "TWD": "新台币元"}[currency] + "/股表示")


def test_english_unit_sentences_are_unchanged():
    assert instructions.constraint_text(_choice("millions", "en"), ["currency"], "USD").startswith(
        "Express currency amounts in millions of US dollars")


def test_borrowings_are_one_term_not_the_cas_financial_liabilities():
    """金融负债 is CAS 22's "financial liabilities" (payables at amortised cost included), not the borrowings the
    convention means: the borrowings index, the convention text and every hint and name that reads it say 金融性负债."""
    from ledgerlm.synth.indices.registry import load_registry

    registry = load_registry()
    for ix in registry.values():
        for text in (ix.name_zh, ix.hint_text("zh"), *ix.convention_notes("zh")):
            assert "金融负债" not in text, (ix.id, text)
    debt = registry["financial_debt"]
    assert debt.name_zh.startswith("金融性负债")
    for key in ("financial_debt_to_ebitda_ttm", "net_debt_to_ebitda_ttm", "debt_to_capital", "interest_bearing_debt"):
        hint = registry[key].hint_text("zh")
        assert "金融性负债 = 流动债务" in hint or "金融性负债（借款" in hint, key  # the term of the question, defined
    assert registry["net_debt_to_ebitda_ttm"].name_zh.startswith("净金融性负债")  # its formula reads net financial debt


def test_invested_capital_is_named_by_its_approach_and_equity_basis():
    """"全部投入资本（权益法）" read as the equity method of accounting for investees: both invested capitals are
    financing-side sums (equity + interest-bearing debt) and differ in the equity they take; the name the question
    asks is the one its hint, the convention text and every index built on it use."""
    from ledgerlm.synth.indices.registry import load_registry

    registry = load_registry()
    parent, total = registry["invested_capital_equity"].name_zh, registry["invested_capital_financing"].name_zh
    assert parent == "投入资本（筹资法，归母权益）" and total == "投入资本（筹资法，全部权益）"
    for ix in registry.values():
        for text in (ix.name_zh, ix.hint_text("zh"), *ix.convention_notes("zh")):
            assert "权益法" not in text and "全部投入资本" not in text, (ix.id, text)
    assert any(n.startswith(parent + "= 归属于母公司所有者权益 + 带息债务")
               for n in registry["invested_capital_equity"].convention_notes("zh"))
    for key in ("roic", "invested_capital_turnover", "interest_bearing_debt_to_invested_capital", "invested_capital_equity_yoy"):
        assert parent in registry[key].hint_text("zh"), key


def test_current_portion_line_is_the_term_the_convention_uses():
    """The balance sheet showed 一年内到期的非流动负债 (CAS's wider line, leases and long-term payables included) while
    the debt convention and hints add 一年内到期的长期债务: one line, one term. A CAS statement's own label still reads."""
    from ledgerlm.synth.indices.registry import load_registry
    from ledgerlm.synth.statements.render import render_statement
    from ledgerlm.synth.statements.taxonomy import concept_info, label_conflicts, map_label

    label = concept_info("current_portion_long_term_debt").label_zh
    assert label == "一年内到期的长期债务"
    registry = load_registry()
    for key in ("current_debt", "financial_debt", "debt_to_capital"):
        assert label in registry[key].hint_text("zh"), key
    assert all("一年内到期的非流动负债" not in registry[k].hint_text("zh") for k in registry)
    stmt = {"company": "X", "period": "FY2024", "statement": "balance", "scope": "consolidated", "unit": "USD",
            "items": [{"concept": "current_portion_long_term_debt", "label": "Current maturities of long-term debt", "value": 5e6}]}
    assert f"| {label} | 5,000,000 |" in render_statement(stmt, "markdown", language="zh")
    assert map_label("一年内到期的非流动负债") == map_label(label) == "current_portion_long_term_debt" and not label_conflicts()
