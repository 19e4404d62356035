"""Leakage and ladder tests on the fixture panel (real SEC filing dates gate the text)."""
import re

import pandas as pd
import pytest

from ledgerlm.evaluate.macrolens import data as D
from ledgerlm.evaluate.macrolens.fixture import cached_fixture_dir
from ledgerlm.evaluate.macrolens.instances import DEFAULT_BUDGETS, TaskConfig, build
from ledgerlm.evaluate.macrolens.prompts import LADDER, context_blocks, build_messages
from ledgerlm.evaluate.macrolens.schema import load_schema


@pytest.fixture(scope="module")
def release():
    return D.load_release(cached_fixture_dir(), "daily")


@pytest.fixture(scope="module")
def prompts(release):
    cfg = TaskConfig(horizon=21, budgets={**DEFAULT_BUDGETS, "T1": 60, "T4": 60})
    out = {}
    for task in ("T1", "T2", "T4", "T5"):
        insts, _ = build(task, release, cfg)
        out[task] = [(i, build_messages(i, "E")[-1]["content"]) for i in insts]
    return out


def test_no_filing_news_or_scenario_published_after_anchor(release, prompts):
    seen_filings = 0
    for task, pairs in prompts.items():
        for inst, text in pairs:
            t = pd.Timestamp(inst["anchor"])
            for acc in re.findall(r"\[filing ([0-9-]+)\]", text):
                filed = release.filings.loc[release.filings["accession"] == acc, "filing_date"].iloc[0]
                assert filed <= t, f"{inst['id']}: filing {acc} filed {filed:%Y-%m-%d} after t"
                seen_filings += 1
            later = release.filings[(release.filings["ticker"] == inst["ticker"]) & (release.filings["filing_date"] > t)]
            assert not any(f"[filing {a}]" in text for a in later["accession"])
            for nid in re.findall(r"\[news ([A-Z]+-\d+)\]", text):
                pub = release.news.loc[release.news["headline"].str.contains(f"[news {nid}]", regex=False), "published"].iloc[0]
                assert pub <= t
            for sid in re.findall(r"\[scenario (\d+)\]", text):
                assert release.scenarios.loc[release.scenarios["event_id"] == f"EV{sid}", "event_date"].iloc[0] <= t
    assert seen_filings > 50  # the gate is exercised, not vacuous


def test_fundamentals_come_from_filings_visible_at_t(release, prompts):
    for inst, _ in prompts["T1"]:
        row = release.panel[(release.panel["ticker"] == inst["ticker"]) & (release.panel["date"] == inst["anchor"])].iloc[0]
        assert row["filing_date"] <= pd.Timestamp(inst["anchor"])


def _shown_keys(text: str) -> set[str]:
    return set(re.findall(r"^\s+([A-Za-z_0-9]+): ", text, flags=re.M))


def test_valuation_prompts_hide_market_cap_columns_and_t5_hides_ratios(prompts):
    schema = load_schema()
    banned = set(schema.group("market_cap_blacklist")) | set(schema.group("market_cap_blacklist").values())
    ratios = set(schema.group("derived_ratios")) | set(schema.group("derived_ratios").values())
    assert prompts["T2"] and prompts["T5"]
    for task in ("T2", "T5"):
        for inst, text in prompts[task]:
            shown = _shown_keys(text)
            assert not shown & banned, (inst["id"], shown & banned)
            assert f"{inst['target']:,.0f}" not in text  # the target value itself never appears
            if task == "T5":
                assert not shown & ratios
            else:
                assert shown & ratios  # T2 does carry the ratio block (the contrast is real)


def test_ladder_is_strictly_nested(prompts):
    inst = prompts["T1"][0][0]
    texts = ["\n\n".join(context_blocks("T1", inst["context"], lv)) for lv in LADDER]
    for shorter, longer in zip(texts, texts[1:]):
        assert longer.startswith(shorter) and len(longer) > len(shorter)
    assert "Fundamentals" not in texts[0] and "Macroeconomic" in texts[2] and "Scenario flags" in texts[3] and "SEC filing" in texts[4]


def test_ladder_steps_as_the_paper(prompts):
    """A = summary statistics (no raw OHLCV rows); T4's scenario text only from D; E = filing excerpt, no news."""
    inst = prompts["T1"][0][0]
    a = build_messages(inst, "A")[-1]["content"]
    assert "last_close:" in a and "mean_close:" in a and "open, high, low" not in a
    assert len(re.findall(r"^\d{4}-\d{2}-\d{2},", a, flags=re.M)) == 0  # no raw dated rows
    t4 = prompts["T4"][0][0]
    desc = t4["context"]["event"]["description"]
    assert desc not in build_messages(t4, "C")[-1]["content"] and desc in build_messages(t4, "D")[-1]["content"]
    e = build_messages(inst, "E")[-1]["content"]
    assert "SEC filing" in e and "news" not in e.lower()
