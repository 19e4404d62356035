"""Chinese wording of synthesized prompts and worked solutions (Chinese analyst reading of zh prompts): units, debt and
invested-capital terms, line labels that match the convention text, no English left in the worked solutions.

    python -m pytest tests/test_synth_zh_wording.py -q
"""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    # the English names and hints alike: "equity method" is the accounting for investees, not an invested capital
    assert registry["invested_capital_equity"].name_en == "Total invested capital (financing approach, parent equity)"
    for ix in registry.values():
        for text in (ix.name_en, ix.hint_text("en"), *ix.convention_notes("en")):
            assert "equity method" not in text.lower(), (ix.id, text)


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


def test_zh_trace_lines_read_in_chinese_with_the_same_figures():
    """Chinese worked solutions showed the trace's English: concept keys, `ttm(...)` / `optional(...)` syntax and
    phrases such as "(year-to-date, as reported)". Each line is now written with the Chinese names (the hints' formula
    writer) and Chinese phrases; every figure of the line is kept as it was."""
    import re

    from ledgerlm.synth.finindices.solutions import zh_line

    cases = {
        "  optional(short_term_bank_loans) = short_term_bank_loans is not shown in the FY2009H1 report: 0 = 0":
            "  短期银行借款及应付票据款 = 短期银行借款及应付票据款在FY2009H1报告中未列示，按 0 计 = 0",
        "  prior_year(free_cash_flow) = free_cash_flow at FY2009Q1 = -655,000,000": "  上年同期自由现金流 = 自由现金流（FY2009Q1） = -655,000,000",
        "  abs(prior_year(free_cash_flow)) = abs(-655,000,000) = 655,000,000": "  |上年同期自由现金流| = |-655,000,000| = 655,000,000",
        "operating_cash_flow FY2010Q1 (year-to-date, as reported) = -242,000,000": "经营活动产生的现金流量净额 FY2010Q1（年初至今累计，按报告数） = -242,000,000",
        "  annualize(revenue) = 3,318,000,000 x 12 / 3 = 13,272,000,000": "  年化营业收入 = 3,318,000,000 × 12 / 3 = 13,272,000,000",
        "  first_of(debt_and_lease_total, current_debt + noncurrent_debt) = current_debt + noncurrent_debt (debt_and_lease_total not shown) = 15,733,000,000": None,
        "equity_parent beginning balance of FY2010 = -5 (from the FY2009 report)": "归属于母公司所有者权益合计 FY2010期初余额 = -5（取自FY2009报告）",
        "eps_diluted FY2010 (annual, as reported) = 0.5 [as filed 2.5 / 5 = 0.5 on the latest share basis (5-for-1 stock split "
        "(filings up to 2010-01-01 on the old basis, from 2011-02-02 on the new))]": None,
        # the rounding note and share counts (x k) of a split rescale were left in English (seed-4242 zh run)
        "eps_diluted FY2010 (annual, as reported) = 0.541071 [as filed 15.15 / 28 = 0.541071 (to 6 decimals) on the latest "
        "share basis (7-for-1 stock split (filings up to 2014-04-24 on the old basis, from 2014-07-23 on the new))]":
            "稀释每股收益 FY2010（全年，按报告数） = 0.541071 [报告原数 15.15 / 28 = 0.541071（保留6位小数），按最新拆股口径"
            "（1拆7股票拆分（2014-04-24及以前提交的文件为拆分前口径，2014-07-23起为拆分后口径））]",
        # two splits: joined with a Chinese semicolon (was "; ")
        "eps_diluted FY2020 (annual, as reported) = 0.1 [as filed 4 / 40 = 0.1 on the latest share basis (4-for-1 stock split "
        "(filings up to 2021-05-26 on the old basis, from 2021-08-20 on the new); 10-for-1 stock split (filings up to "
        "2024-05-29 on the old basis, from 2024-08-28 on the new))]":
            "稀释每股收益 FY2020（全年，按报告数） = 0.1 [报告原数 4 / 40 = 0.1，按最新拆股口径（1拆4股票拆分（2021-05-26及以前提交的文件为"
            "拆分前口径，2021-08-20起为拆分后口径）；1拆10股票拆分（2024-05-29及以前提交的文件为拆分前口径，2024-08-28起为拆分后口径））]",
        "shares_diluted FY2010 (annual, as reported) = 28,000 [as filed 1,000 x 28 = 28,000 on the latest share basis "
        "(7-for-1 stock split (filings up to 2014-04-24 on the old basis, from 2014-07-23 on the new))]": None,
    }
    for line, expected in cases.items():
        text = zh_line(line)
        if expected is not None:
            assert text == expected
        assert not re.search(r"[a-z]{2,}", text), text  # no key, function or English word left
        figures = re.findall(r"\d[\d,.]*", line.replace("-for-1", ""))  # the split factor is written 1拆k
        assert figures == re.findall(r"\d[\d,.]*", text.replace("1拆", "")), text



@pytest.mark.parametrize("style", ["full", "compact"])
def test_zh_solutions_of_real_items_show_no_keys_or_formula_syntax(style):
    """Whole Chinese solutions of real items: no concept key, index id or `name(...)` call (period labels, the
    required answer text and the answer table's header aside), and the final answer is still the last line."""
    import re

    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats

    builder = Builder.from_config(SynthConfig(seed=5, languages=["zh"], solution_style=style))
    stats, rows = Stats(), []
    for slot in range(40):
        rows += builder.slot(slot, stats)
    assert len(rows) > 20
    for row in rows:
        text = row["solution"]
        assert not re.search(r"[a-z]+_[a-z_]+|\b(optional|first_of|prior_year|standalone|ttm|avg|annualize|abs)\(", text), text
        assert not re.search(r"\b(the|report|shown|reported|year-to-date)\b", text), text
        answer = row["answer"]
        assert text.endswith(answer if isinstance(answer, str) else text.splitlines()[-1])


def _zh_rows(seed: int, slots: int, **cfg) -> list[dict]:
    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats

    builder = Builder.from_config(SynthConfig(seed=seed, languages=["zh"], **cfg))
    stats, rows = Stats(), []
    for slot in range(slots):
        rows += builder.slot(slot, stats)
    return rows


def test_zh_json_statements_label_their_lines_in_chinese():
    """A zh prompt's JSON statements show the line labels every other format shows in Chinese (keys such as "items",
    "label", "value" stay the format's English field names); English labels in a Chinese prompt were left over."""
    import json
    import re

    rows = [r for r in _zh_rows(11, 60, formats=["json"]) if '"items"' in r["messages"][1]["content"]]
    assert len(rows) > 10
    for row in rows:
        labels = re.findall(r'"label": ("(?:[^"\\]|\\.)*")', row["messages"][1]["content"])
        assert labels and all(re.search(r"[\u4e00-\u9fff]", json.loads(label)) for label in labels), labels[:5]


def test_split_note_only_where_an_index_reads_shares():
    """The stock-split sentence explains restated per-share amounts and share counts: only an item whose index reads
    them says it (seed-4242 Chinese reading: 323 of 331 zh rows with the note asked no share-based index)."""
    rows = _zh_rows(3, 300, companies=["NVDA", "AAPL", "GOOGL"])
    from ledgerlm.synth.indices.registry import load_registry

    registry = load_registry()
    noted = [r for r in rows if "重述（以" in r["messages"][1]["content"]]
    assert noted, "no split note in 300 slots of three companies with splits"
    for row in noted:
        indices = [registry[i] for i in row["indices"]]
        assert any("shares" in ix.conventions or ix.result == "per_share" for ix in indices), row["indices"]


@pytest.mark.parametrize("line", ["max_of(1,000, 0) = 1,000", "sum_of(1,000,000, 3) = 1,000,003", "min_of(-2,500, 7) = -2,500",
                                  "revenue * 100.50 = 12.5"])
def test_zh_line_never_changes_a_figure(line):
    """A trace part that parses as a formula is rewritten with Chinese names only when its figures survive unchanged
    (review: `max_of(1,000, 0)` became `max(1, 0, 0)`, `100.50` became `100.5`)."""
    import re

    from ledgerlm.synth.finindices.solutions import zh_line

    assert re.findall(r"\d+", zh_line(line)) == re.findall(r"\d+", line)



def _phrase_lines(index: int):
    """Lines holding a match of Chinese phrase pattern `index`: generated from the pattern (hypothesis), or for a
    pattern with look-arounds (which `from_regex` cannot satisfy) its known matches between random texts."""
    from ledgerlm.synth.finindices.solutions import _ZH_PHRASES

    pattern = _ZH_PHRASES[index][0]
    if "(?<=" not in pattern.pattern and "(?=" not in pattern.pattern:
        return st.from_regex(pattern, fullmatch=False)
    known = {"(?<=\\d) x (?=\\d)": ["1,000 x 28", "5 x 5"], "(?<=口径）); (?=1拆)": ["口径）; 1拆"]}[pattern.pattern]
    return st.tuples(st.text(max_size=8), st.sampled_from(known), st.text(max_size=8)).map("".join)


@pytest.mark.parametrize("index", range(19))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_zh_phrase_guard_is_in_every_match(index, data):
    """Each Chinese phrase pattern runs only on a line holding its guard (`_required_literal`, read off the parsed
    pattern); every match of the pattern holds the guard, so a line without it is one the pattern leaves unchanged."""
    from ledgerlm.synth.finindices.solutions import _ZH_GUARDED, _ZH_PHRASES

    assert len(_ZH_PHRASES) == 19
    guard, pattern, _repl = _ZH_GUARDED[index]
    line = data.draw(_phrase_lines(index))
    matches = [m.group(0) for m in pattern.finditer(line)]
    assert matches and guard and all(guard in m for m in matches), (guard, line)


def _phrase_fragments() -> list[str]:
    """Pieces the Chinese phrase patterns are made of (each guard whole and cut in two, figures, periods), for
    strings that come near a match without being one."""
    from ledgerlm.synth.finindices.solutions import _ZH_GUARDED

    pieces = ["FY2009", "FY2010H1", "2014-04-24", "1,000", "-655,000,000", "0.541071", "5", "1", "(", ")", "]", "[",
              " = ", "; ", " ", "口径）", "1拆", "x", " (to 6 decimals)", " report)", " not shown)", "revenue", "abs(-5)"]
    for guard, _pattern, _repl in _ZH_GUARDED:
        pieces += [guard, guard[: len(guard) // 2], guard[len(guard) // 2:]]
    return pieces


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_phrase_fragments()), max_size=12))
def test_zh_phrase_guards_change_nothing(parts):
    """Each Chinese phrase pattern runs only on a line holding its required literal (`_required_literal`, read off the
    parsed pattern); on any line that gives what running every pattern gives."""
    from ledgerlm.synth.finindices.solutions import _ZH_GUARDED, _ZH_PHRASES

    line = "".join(parts)
    plain = guarded = line
    for pattern, repl in _ZH_PHRASES:
        plain = pattern.sub(repl, plain)
    for guard, pattern, repl in _ZH_GUARDED:
        if guard in guarded:
            guarded = pattern.sub(repl, guarded)
    assert guarded == plain


def test_required_literal_of_phrase_patterns():
    """The guard is a literal every match holds; a pattern matching ignoring case gets none."""
    import re

    from ledgerlm.synth.finindices.solutions import _required_literal

    assert _required_literal(re.compile(r" \(three months, as reported in the (\S+) report\)")) == " (three months, as reported in the "
    assert _required_literal(re.compile(r"(?<=\d) x (?=\d)")) == " x "
    assert _required_literal(re.compile(r"\babs\((-?[\d,.]+)\)")) == "abs("
    assert _required_literal(re.compile(r"abc", re.IGNORECASE)) == ""
    assert _required_literal(re.compile(r"(a|b)+")) == ""
