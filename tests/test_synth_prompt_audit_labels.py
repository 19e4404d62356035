"""Seed-6262 prompt audit (helper, prompt text only, own parser): what a reader of the prompt could take two ways.

    python -m pytest tests/test_synth_prompt_audit_labels.py -q

- "growth since fiscal year start" said "at the previous fiscal year end" in its formula and, in the general
  beginning-balance sentence beside it, "at the previous quarter end for a standalone quarter" (15 table cells read
  either way); its Chinese hint read 期初年初至今累计资产总计, and its worked solution printed the year's opening
  balance as "ytd(total_assets) = total_assets at FY2017Q1";
- cash-flow lines were named "Net cash used in investing / financing activities" beside inflows (Duke FY2009H1
  financing +836 M) where the filer's label does not name the line;
- "Long-term investments" (marketable securities) was 长期股权投资 (equity-method investments) in Chinese prompts;
- one current liability showed twice (Contract liabilities and Deferred revenue, one tag, one value: GOOGL, AAPL);
- FSDS labels kept their layout: Honeywell's "- additional paid-in capital", Texas Instruments' trailing colons.
"""
from __future__ import annotations

import pytest

from ledgerlm.synth.indices.compute import compute, default_registry
from ledgerlm.synth.statements.taxonomy import concept_info, map_label, tag_concepts

YEAR_START = ("total_assets_vs_year_start", "equity_parent_vs_year_start", "total_liabilities_vs_year_start")


@pytest.mark.parametrize("index_id", YEAR_START)
def test_year_start_growth_states_one_beginning_balance(index_id):
    registry = default_registry()
    ix = registry[index_id]
    assert "begin_year_start" in ix.conventions and "begin" not in ix.conventions
    en, zh = ix.hint_text("en"), ix.hint_text("zh")
    assert "previous quarter end" not in en and "previous fiscal year end for every period" in en
    assert "上季末" not in zh and "年初至今累计" not in zh and "上年末" in zh and "单季度与 TTM 期间亦同" in zh
    assert ix.convention_notes("en") == [n for n in ix.convention_notes("en") if "quarter end" not in n]


def test_an_average_balance_keeps_the_general_beginning_sentence():
    registry = default_registry()
    averaged = [ix for ix in registry.values() if "avg" in ix.conventions]
    assert averaged and all("begin" in ix.conventions and "begin_year_start" not in ix.conventions for ix in averaged)
    assert any("previous quarter end" in n for n in averaged[0].convention_notes("en"))


def test_year_start_trace_names_the_opening_balance(tmp_path):
    """NVIDIA FY2024Q2 (a standalone quarter): the beginning is the FY2023 year-end balance, 41,182 M, named as such."""
    from ledgerlm.synth.statements.store import FactStore

    store = FactStore.from_sources(None, company="NVDA")
    value = compute(store, "NVDA", "total_assets_vs_year_start", "FY2024Q2")
    year_end = compute(store, "NVDA", "total_assets", "FY2023").value
    quarter_end = compute(store, "NVDA", "total_assets", "FY2024H1").value
    assert year_end == 41_182_000_000 and value.value == pytest.approx((quarter_end - year_end) / year_end)
    lines = [s.get("arithmetic", "") for s in value.trace if s["kind"] == "calc"]
    assert "total_assets at the beginning of FY2024H1" in lines
    assert not any(line == "total_assets at FY2024H1" for line in lines)


def test_chinese_solution_line_names_the_opening_balance():
    from ledgerlm.synth.finindices.solutions import zh_line

    line = zh_line("ytd(total_assets) = total_assets at the beginning of FY2009H1 = 797,769,000,000")
    assert "FY2009H1期初" in line and "797,769,000,000" in line
    assert "（FY2009H1）" in zh_line("ytd(total_assets) = total_assets at FY2009H1 = 778,168,000,000")


def test_cash_flow_lines_are_named_without_a_direction():
    for concept in ("operating_cash_flow", "investing_cash_flow", "financing_cash_flow"):
        label = concept_info(concept).label_en
        assert label.startswith("Net cash provided by (used in)"), label
        assert map_label(label) == concept
    # a filer's own "used in" label still names its line (it prints an outflow in parentheses)
    assert map_label("Net cash used in investing activities") == "investing_cash_flow"
    assert map_label("Net cash used in financing activities") == "financing_cash_flow"


def test_long_term_investments_is_not_equity_method_investments_in_chinese():
    assert concept_info("long_term_investments").label_zh == "长期投资"


def test_a_contract_liability_tag_is_one_balance_line():
    assert tag_concepts("us-gaap", "ContractWithCustomerLiabilityCurrent") == [("deferred_revenue", 1)]


def test_fsds_labels_lose_list_dashes_and_heading_colons():
    from ledgerlm.synth.statements.fsds import load_fsds
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "synth" / "data" / "sec" / "fsds" / "2010q1"
    facts = load_fsds(folder)
    hon = set(facts.loc[facts["company"] == "HON", "label"])
    assert "Additional paid-in capital" in hon and not any(label.startswith("-") for label in hon)
    assert not facts["label"].str.contains(r"^[-–—]|:$", regex=True).any()
    txn = facts[(facts["company"] == "TXN") & (facts["concept"] == "financing_cash_flow")]
    assert set(txn["label"]) == {"Net cash used in financing activities"}
