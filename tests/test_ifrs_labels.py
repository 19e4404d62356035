"""IFRS filers read like statements: human labels, common IFRS tags mapped, coverage listed.

    python -m pytest -q tests/test_ifrs_labels.py
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from ledgerlm import cli
from ledgerlm.synth.statements.ifrs_coverage import coverage, ifrs_filers, report
from ledgerlm.synth.statements.tag_labels import ifrs_labels, split_camel, tag_label

REPO = Path(__file__).resolve().parents[1]
RAW_TAG = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z]+)+$")  # FinanceCosts, IssuedCapital: a tag, not a label


def test_every_mapped_ifrs_tag_has_a_human_label():
    mapping = yaml.safe_load((REPO / "synth/statements/taxonomy_data/ifrs.yaml").read_text())
    tags = {t for ts in mapping.values() for t in ts}
    missing = sorted(tags - set(ifrs_labels()))
    assert not missing, f"add labels to ifrs_labels.yaml for {missing}"
    assert not [t for t, label in ifrs_labels().items() if RAW_TAG.match(label)]


def test_tsm_statements_show_no_raw_tags(capsys):
    for statement in ("income", "balance", "cashflow"):
        assert cli.main(["statements", "--company", "TSM", "--period", "FY2023", "--statement", statement, "--as", "json"]) == 0
        items = json.loads(capsys.readouterr().out)["items"]
        raw = [i["label"] for i in items if RAW_TAG.match(i["label"])]
        assert items and not raw, f"{statement}: raw tags shown as labels {raw}"
        labels = {i["concept"]: i["label"] for i in items}
        if statement == "income":
            assert labels["financial_expense"] == "Finance costs"
        if statement == "balance":
            assert labels["share_capital"] == "Issued capital" and labels["total_assets"] == "Total assets"


def test_common_ifrs_tags_map_and_the_coverage_doc_is_current():
    filers = ifrs_filers()
    assert [name for name, _ in filers] == ["CIK0001046179_TSM.json.gz"]  # the embedded data's only IFRS filer
    mapped, unmapped = coverage(filers[0][1])
    concepts = {t: c for t, c, _, _ in mapped}
    assert concepts["CashFlowsFromUsedInOperatingActivities"] == ["operating_cash_flow"]
    assert concepts["DepreciationExpense"] == ["depreciation"]
    assert concepts["AdjustmentsForSharebasedPayments"] == ["stock_based_compensation"]
    why = {t: w for t, _, w in unmapped}
    assert "before* interest and income taxes paid" in why["CashFlowsFromUsedInOperations"]
    assert (REPO / "docs" / "ifrs_coverage.md").read_text() == report(), \
        "regenerate: python -m ledgerlm.synth.statements.ifrs_coverage > docs/ifrs_coverage.md"


def test_unlisted_tags_are_split_into_words():
    assert split_camel("ProceedsFromIssuingShares") == "Proceeds from issuing shares"
    assert tag_label("ifrs-full", "FinanceCosts") == "Finance costs"
    assert tag_label("us-gaap", "EBITDAMargin") == "EBITDA margin"
