"""Registry conventions of issue 11 part B: accounting standards, period kinds, hints (en + zh), no-hint flag.

    python -m pytest tests/test_registry_applies_to.py -q

- `applies_to`: CAS-only indices (ebitda_cas adds interest to an operating profit that is already after
  financial expenses under CAS: double counting under US GAAP / IFRS) are refused for US-GAAP/IFRS filers with
  one line naming index, company and standard; synth never draws them for such filers.
- `periods`: QoQ / single-quarter indices only for standalone quarters, TTM indices only for TTM periods and
  fiscal years; compute refuses others naming index and period; synth never asks them.
- every index has a Chinese hint; every EBIT mention means pretax income + interest expense.
"""
from __future__ import annotations

import random
import re

import pandas as pd
import pytest

from ledgerlm.synth.indices.compute import compute
from ledgerlm.synth.indices.registry import (IndexNotApplicable, PERIOD_KINDS, STANDARDS, accounting_standard, load_registry,
                                             period_kind)
from ledgerlm.synth.statements.store import FactStore

REGISTRY = load_registry()


def _store(tag_prefix: str, unit: str = "USD") -> FactStore:
    rows = []
    for fy, start, end in ((2023, "2023-01-01", "2023-12-31"), (2024, "2024-01-01", "2024-12-31")):
        for concept, value in (("revenue", 100.0), ("operating_income", 20.0), ("depreciation_amortization", 5.0),
                               ("interest_expense", 2.0)):
            rows.append({"company": "X", "company_name": "X Co", "scope": "consolidated", "statement": "income",
                         "concept": concept, "label": concept, "value": value, "unit": unit, "start": start, "end": end,
                         "fiscal_year": fy, "fiscal_period": "FY", "form": "10-K", "filed": f"{fy + 1}-02-01",
                         "source": f"acc-{fy}", "tag": f"{tag_prefix}{concept}"})
    return FactStore(pd.DataFrame(rows))


def test_standard_is_read_from_the_tags():
    assert accounting_standard(_store("us-gaap:"), "X") == "us-gaap"
    assert accounting_standard(_store("ifrs-full:"), "X") == "ifrs"
    assert accounting_standard(_store("", unit="CNY"), "X") == "cas"


@pytest.mark.parametrize("prefix,unit,allowed", [("us-gaap:", "USD", False), ("ifrs-full:", "USD", False), ("", "CNY", True)])
def test_cas_only_index_refused_for_other_standards(prefix, unit, allowed):
    store = _store(prefix, unit)
    if allowed:
        assert compute(store, "X", "ebitda_cas", "FY2024").value == pytest.approx(27.0)
        return
    with pytest.raises(IndexNotApplicable) as err:
        compute(store, "X", "ebitda_cas", "FY2024")
    msg = str(err.value)
    assert "\n" not in msg and "ebitda_cas" in msg and "company X" in msg and "FY2024" in msg
    assert compute(store, "X", "ebitda", "FY2024").value == pytest.approx(25.0)  # the operating-income EBITDA applies


def test_period_kinds_declared_and_refused():
    assert REGISTRY["revenue_qoq"].periods == ("Q",)
    assert REGISTRY["gross_margin_standalone"].periods == ("Q",)
    assert REGISTRY["gross_margin_ttm"].periods == ("FY", "TTM")
    assert "TTM" not in REGISTRY["current_ratio"].periods  # balances: no trailing-twelve-month reading
    assert REGISTRY["revenue_yoy"].periods == PERIOD_KINDS
    store = _store("us-gaap:")
    with pytest.raises(IndexNotApplicable, match=r"revenue_qoq.*standalone quarters.*FY2024 is a fiscal year"):
        compute(store, "X", "revenue_qoq", "FY2024")
    assert [period_kind(p) for p in ("FY2024", "FY2024Q1", "FY2024H1", "FY2024Q3YTD", "FY2024Q2TTM")] == list(PERIOD_KINDS)


def test_cli_refusal_is_one_line(capsys):
    from ledgerlm.cli import main

    rc = main(["compute", "--company", "AAPL", "--index", "revenue_qoq", "--period", "FY2023"])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and err.count("\n") == 0 and "revenue_qoq" in err and "FY2023" in err and "Traceback" not in err


def test_every_index_has_chinese_hint_and_flags():
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for ix in REGISTRY.values():
        assert ix.periods and set(ix.periods) <= set(PERIOD_KINDS), ix.id
        assert ix.applies_to and set(ix.applies_to) <= set(STANDARDS), ix.id
        assert isinstance(ix.no_hint, bool), ix.id
        zh = ix.hint_text("zh")
        assert cjk.search(zh), (ix.id, zh)
        assert not re.search(r"\b[a-z]+_[a-z_]+\b", zh), (ix.id, zh)  # no raw concept keys left untranslated
    assert all(not REGISTRY[i].no_hint for i in ("ebitda_cas", "core_profit", "defensive_interval_days"))


def test_one_ebit_definition():
    """EBIT always means pretax income + interest expense; NOPAT/FCFF never call operating income EBIT."""
    for ix in REGISTRY.values():
        text = ix.hint_text("en")
        for m in re.finditer(r"\bEBIT\b(?!DA)\s*=\s*([^,;.]+)", text):
            assert m.group(1).strip().startswith(("Income before income taxes + Interest expense", "income before income taxes + interest expense")), (ix.id, m.group(0))
    assert "EBIT = income before income taxes + interest expense" in REGISTRY["interest_coverage"].hint_text("en")


def test_no_hint_prompts_state_the_share_and_net_debt_conventions():
    """Helper audits of a seed-31 run: no-hint per-share prompts never said which shares they divide by (diluted
    weighted 4.863 vs basic 4.924 for AAPL revenue per share), EPS YoY prompts stated no EPS rule at all, and net debt
    did not say whether short-term investments are deducted."""
    for i in ("revenue_per_share", "ocf_per_share", "fcf_per_share"):
        if i in REGISTRY:
            assert "diluted weighted-average shares" in REGISTRY[i].convention_text("en"), i
            assert "稀释加权平均股数" in REGISTRY[i].convention_text("zh"), i
    assert "basic weighted-average shares" in REGISTRY["eps_basic_computed"].convention_text("en")
    for i in ("eps_basic_yoy", "eps_diluted_yoy"):
        text = REGISTRY[i].convention_text("en")  # the shares note and, for formulas that read EPS, the EPS-quarter note
        assert "share counts themselves are never added or subtracted" in text and "EPS themselves are never added" in text, i
    assert "short-term investments are not deducted" in REGISTRY["net_debt"].convention_text("en")
    assert "- short-term investments" in REGISTRY["net_debt_to_ebitda_ttm"].convention_text("en")
    assert "平均" in REGISTRY["roe_total_equity_avg"].name_zh


def test_ttm_and_current_lease_conventions_are_stated_and_hold():
    """Helper audit of a seed-123 run: "TTM = YTD + last annual - prior YTD" left open whether TTM NOPAT is NOPAT of the TTM
    lines or the TTM of each period's NOPAT (GOOGL FY2019Q3 TTM 27,762.09 vs 27,734.38 M), and interest-bearing debt did not
    say whether a current finance lease shown beside a total short-term debt line is inside it (GOOGL FY2016Q1: 223 M beside
    3,221 M). Both are stated now, and the answers follow what is stated."""
    for i in ("nopat_ttm", "roic_ttm"):
        assert "applies its formula to the TTM values of its lines" in REGISTRY[i].convention_text("en"), i
        assert "先将各项目取 TTM 数" in REGISTRY[i].convention_text("zh"), i
    assert "already includes the current finance-lease obligations" in REGISTRY["interest_bearing_debt"].convention_text("en")
    store = FactStore.from_sources()
    period = "FY2019Q3TTM"
    lines = {c: store.value("GOOGL", c, period).value for c in ("operating_income", "income_tax", "pretax_income")}
    nopat = compute(store, "GOOGL", "nopat_ttm", period).value
    assert nopat == pytest.approx(lines["operating_income"] * (1 - lines["income_tax"] / lines["pretax_income"]), rel=1e-12)
    # (FY2016Q1, 3,221 M beside 223 M, where the audit found it, is not derivable since the FY2016Q1 10-Q leaves the
    # non-current finance lease untagged between two reports that tag it: the FY2015 year end shows the same layout)
    debt = compute(store, "GOOGL", "interest_bearing_debt", "FY2015")
    shown_total = store.value("GOOGL", "debt_current", "FY2015").value
    assert shown_total == 3_225_000_000 and store.value("GOOGL", "finance_lease_liabilities_current", "FY2015").value == 225_000_000
    assert not any(r.concept == "finance_lease_liabilities_current" for r in debt.facts)  # inside the 3,221 M line


def test_debt_prompts_state_that_a_line_not_shown_counts_as_zero():
    """Helper audit of a seed-789 run: GOOGL FY2017Q1 current debt is 0.0 (a full balance sheet with no current debt
    line), and the no-hint prompts of 13 debt rows never said that a line the balance sheet does not show counts as 0.
    Every index built on current / non-current debt states it now, in both languages."""
    from ledgerlm.synth.indices.conventions import closure

    store = FactStore.from_sources()
    zero = compute(store, "GOOGL", "current_debt", "FY2017Q1")
    assert zero.value == 0.0 and not zero.facts  # no line read: the count-as-zero rule decides the answer
    debt_indices = [i for i, ix in REGISTRY.items() if i in {"current_debt", "noncurrent_debt"}
                    or closure(ix, REGISTRY)[3] & {"current_debt", "noncurrent_debt"}]
    assert {"current_debt", "noncurrent_debt", "financial_debt", "net_debt", "interest_bearing_debt", "roic"} <= set(debt_indices)
    for i in debt_indices:
        assert "a debt line the balance sheet does not show counts as 0" in REGISTRY[i].convention_text("en"), i
        assert "资产负债表未列示的债务科目按 0 计" in REGISTRY[i].convention_text("zh"), i


def test_hints_define_the_indices_they_name():
    """Seed-2718 helper audit (recomputing every answer from its prompt alone): tangible net assets YoY never said that
    tangible net assets deduct deferred tax assets (TXN FY2009 4.605 % vs 3.300 % without them), and Chinese hints
    written from the formula name 净再投资 / 核心利润 / 三费合计 without their formulas. Every index a hint names is
    defined in it (or in a convention sentence), and the non-textbook one is stated in no-hint prompts too."""
    from ledgerlm.synth.indices.conventions import NOTES, _names_in_order

    noted = {key for key, _, _ in NOTES}
    for language, name_of, hint_of in (("en", lambda ix: ix.name_en, lambda ix: ix.hint),
                                       ("zh", lambda ix: ix.name_zh, lambda ix: ix.hint_zh)):
        for index_id, ix in REGISTRY.items():
            text = REGISTRY[index_id].hint_text(language)
            for ref in set(_names_in_order(ix.ast)) - {index_id} - noted:
                if ref not in REGISTRY or REGISTRY[ref].path == "<concept>":
                    continue
                name = name_of(REGISTRY[ref])
                if name in hint_of(ix):
                    assert re.search(re.escape(name) + r"\s*=", text), (language, index_id, ref, text)
    tna = REGISTRY["tangible_net_assets_yoy"]
    assert "deferred tax assets" in tna.hint_text("en") and "deferred tax assets" in tna.convention_text("en")
    assert "递延所得税资产" in tna.hint_text("zh") and "递延所得税资产" in tna.convention_text("zh")
    assert "Core profit = Revenue" in REGISTRY["core_profit_yoy"].hint_text("en")
    assert "其中净再投资 = " in REGISTRY["reinvestment_rate"].hint_text("zh")
    assert "其中三费合计 = 销售费用 + 管理费用 + 财务费用" in REGISTRY["three_expenses_ratio_ttm"].hint_text("zh")


def test_no_hint_prompts_state_growth_averages_and_name_the_debt():
    """Seed-9001 analyst audit of no-hint prompts: growth never said the denominator is |prior| (a negative prior year
    flips the sign: 864.3 vs -864.3) nor that a ratio's growth is a relative change (OCF / net income YoY 52.51 % vs
    58.73 points); turnover items never said they average the balances (a deficiency trap removing the beginning
    balance read as computable from the ending one); "Debt-to-equity" was total liabilities / equity (0.5 vs 0.2 with
    financial debt); operating working capital and ROCE have no single textbook definition."""
    from ledgerlm.synth.finindices.instructions import Choice, constraint_text

    for i in ("net_income_yoy", "ocf_to_net_income_yoy"):
        assert "/ |prior|" in REGISTRY[i].convention_text("en") and "not a difference in percentage points" in REGISTRY[i].convention_text("en")
        assert "/ |上期|" in REGISTRY[i].convention_text("zh"), i
    assert "Balance sheet lines are averaged" in REGISTRY["receivables_turnover"].convention_text("en")
    assert "平均余额" in REGISTRY["receivables_turnover"].convention_text("zh")
    assert REGISTRY["debt_to_equity"].name_en == "Total liabilities to equity"
    assert REGISTRY["debt_to_capital"].name_en == "Financial debt to capital"
    assert not REGISTRY["operating_working_capital"].no_hint and not REGISTRY["roce"].no_hint
    # a table asking two ways of expressing its values says which index takes which
    choice = Choice(language="en", system="", intro="", question="", decimals=2, currency_unit="millions", answer_format="json")
    text = constraint_text(choice, ["percent", "ratio", "percent"], "USD", ["Debt to capital", "Capex to D&A", "ROA"])
    assert "percentages (without the % sign) (Debt to capital, ROA)" in text and "plain number (Capex to D&A)" in text
    assert "(" not in constraint_text(choice, ["percent", "percent"], "USD", ["A", "B"]).replace("(without", "").replace("(half", "")
    zh = constraint_text(Choice("zh", "", "", "", 1, "millions", "json"), ["percent", "ratio"], "USD", ["甲", "乙"])
    assert "比率以百分数表示（不带%号）（甲）" in zh and "比率以数值表示（乙）" in zh


def test_balance_per_share_and_cash_content_conventions():
    """Seed-27182 analyst audit: no-hint cash per share never said which cash (GOOGL 2.0 vs 8.7 with marketable securities)
    nor which shares, while other per-share prompts said "not shares outstanding at the period end"; 每股有形净资产
    reused the name of 有形净资产 (which deducts deferred tax assets) for a figure that does not; net profit cash content
    did not say which net income; Q1 EPS is the reported figure while the rule said "unrounded"; cash per share was
    asked "for FY2010Q1TTM"."""
    cash = REGISTRY["cash_per_share"]
    assert "shares outstanding at the period end" in cash.convention_text("en") and "short-term investments" in cash.convention_text("en")
    assert "期末流通股数" in cash.convention_text("zh")
    assert "TTM" not in cash.periods and "TTM" not in REGISTRY["book_value_per_share"].periods
    assert "TTM" in REGISTRY["eps_basic_computed"].periods
    tbv = REGISTRY["tangible_book_value_per_share"]
    assert tbv.name_zh == "每股有形账面价值" and "deferred tax assets are not deducted" in tbv.convention_text("en")
    assert "consolidated net income, noncontrolling interests included" in REGISTRY["ocf_to_net_income_yoy"].convention_text("en")
    assert "此处净利润取归属于母公司" in REGISTRY["fcf_conversion"].convention_text("zh")
    eps = REGISTRY["eps_basic_yoy"].convention_text("en")
    assert "Q2-Q4 quarter's EPS is its net income / those shares, unrounded" in eps and "Q1, a report of its own" in eps
    assert "第一季度本身即一期报告" in REGISTRY["eps_basic_yoy"].convention_text("zh")


def test_no_hint_restates_its_own_name():
    """A hint 'X = X' (the Chinese hint of single-quarter FCF, written from `standalone(free_cash_flow)`, read
    '单季度自由现金流 = 单季度自由现金流': seed-123 helper audit) tells the reader nothing."""
    for index_id, ix in REGISTRY.items():
        for hint in (ix.hint, ix.hint_zh):
            left, eq, right = hint.partition("=")
            assert not eq or left.strip() != right.strip().rstrip("。.").strip(), (index_id, hint)


def test_synth_never_asks_unfit_periods_or_standards():
    """Draw many targets from a builder over the embedded data: every (index, period) accepted, every standard fits."""
    from ledgerlm.errors import LedgerError
    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Drop

    cfg = SynthConfig(companies=["NVDA", "TSM"], num=10)
    b = Builder.from_config(cfg)
    rng, drawn = random.Random(7), 0
    for _ in range(150):
        try:
            item = b.draw_target(rng, rng.choice(["single", "table"]), rng.choice(sorted(b.by_axis)))
        except (Drop, LedgerError):
            continue
        drawn += 1
        std = accounting_standard(b.stores[item.company], item.company)
        for ix in item.indices:
            assert std in ix.applies_to, (ix.id, item.company)
            assert all(ix.accepts(p) for p in item.periods), (ix.id, item.periods)
    assert drawn > 50


def test_sums_of_optional_lines_are_asked_only_when_grounded():
    """A filer whose debt sits under one total (Ford) or nowhere is not asked a debt figure that would read 0."""
    from ledgerlm.synth.indices.registry import may_derive

    ford = {"debt_and_lease_total", "total_equity", "cash", "total_liabilities"}
    assert may_derive(REGISTRY["financial_debt"], REGISTRY, ford)
    assert not may_derive(REGISTRY["long_term_debt_to_equity"], REGISTRY, ford)  # its non-current part is unknown
    assert not may_derive(REGISTRY["financial_debt"], REGISTRY, {"total_equity", "cash"})
    snow = {"long_term_debt", "total_equity", "cash"}  # convertible notes only: current debt is a legitimate 0
    assert may_derive(REGISTRY["financial_debt"], REGISTRY, snow) and may_derive(REGISTRY["debt_to_capital"], REGISTRY, snow)
    assert not may_derive(REGISTRY["gross_margin"], REGISTRY, {"revenue"})  # a required line missing


def test_no_hint_tables_state_shared_conventions_once_and_the_rest_per_index():
    """Seed-31415 audit: a no-hint table said "This index uses average balances" once for indices of which some use ending
    balances (NVDA OCF ratio 3.19 vs 4.09), and repeated the sentences its indices shared (seed-27182)."""
    from ledgerlm.synth.finindices.instructions import _conventions_block, templates

    pool = templates("en")
    ixs = [REGISTRY[i] for i in ("receivables_turnover", "operating_cash_flow_ratio", "ocf_to_net_income")]
    names = [ix.name_en for ix in ixs]
    lines = _conventions_block(pool, names, [ix.convention_notes("en") for ix in ixs])
    text = "\n".join(lines)
    averaged = next(x for x in REGISTRY["receivables_turnover"].convention_notes("en") if x.startswith("Balance sheet lines are averaged"))
    assert text.count(averaged) == 1 and f"- {names[0]}: " in text
    own = next(line for line in lines if line.startswith(f"- {names[0]}: "))
    assert averaged in own and not any(averaged in line for line in lines if line.startswith(f"- {names[1]}: "))
    assert len(text.split(". ")) == len(set(text.split(". ")))  # no sentence twice
    single = _conventions_block(pool, names[:1], [ixs[0].convention_notes("en")])
    assert len(single) == 1 and single[0].startswith("Conventions: ")
