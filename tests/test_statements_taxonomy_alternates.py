"""Alternate US-GAAP/IFRS tags mapped to one canonical concept must mean the same amount.

    python -m pytest tests/test_statements_taxonomy_alternates.py -q

On the embedded SEC data (every filing, restatements kept), two different tags that map to the same
concept and are reported in the same filing for the same window must agree within 0.5%, unless the
(company, concept, tag pair) is a known filer difference listed with its reason in
tests/data/alternate_tag_exceptions.csv. Partial amounts (Depreciation, OtherNonoperatingIncomeExpense,
FiniteLivedIntangibleAssetsNet, ...) live under their own keys, see the table in us_gaap.yaml.
"""
from __future__ import annotations

import csv
from itertools import combinations
from pathlib import Path

import pytest

from ledgerlm.synth.statements.facts import INVENTORY_PARTS
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.taxonomy import concept_info, map_tag

TOLERANCE = 0.005
EXCEPTIONS = Path(__file__).parent / "data" / "alternate_tag_exceptions.csv"
KEYS = ["company", "scope", "concept", "start", "end", "unit", "source"]
# partial amounts that must never stand in for the total they are part of
MOVED = {
    "Depreciation": "depreciation", "OtherNonoperatingIncomeExpense": "other_nonoperating_income",
    "FiniteLivedIntangibleAssetsNet": "finite_lived_intangible_assets",
    "AllocatedShareBasedCompensationExpense": "sbc_expense", "DebtInstrumentCarryingAmount": "long_term_debt_principal",
}


@pytest.fixture(scope="module")
def disagreements() -> dict[tuple[str, str, str, str], list[tuple]]:
    """(company, concept, tag_a, tag_b) -> [(start, end, source, value_a, value_b)] beyond TOLERANCE."""
    facts = load_facts(latest_only=False)
    facts = facts[facts["concept"] != ""].drop_duplicates(KEYS + ["tag"])  # same-tag conflicts are another check
    out: dict[tuple, list] = {}
    for key, group in facts.groupby(KEYS):
        if group["tag"].nunique() < 2:
            continue
        rows = sorted(zip(group["tag"].str.split(":").str[-1], group["value"]))
        for (tag_a, a), (tag_b, b) in combinations(rows, 2):
            if tag_a in INVENTORY_PARTS or tag_b in INVENTORY_PARTS:  # parts, summed: test_inventory_parts_add_up
                continue
            if abs(a - b) > TOLERANCE * max(abs(a), abs(b), 1.0):
                out.setdefault((key[0], key[2], tag_a, tag_b), []).append((key[3], key[4], key[6], a, b))
    return out


def _exceptions() -> dict[tuple[str, str, str, str], str]:
    with open(EXCEPTIONS, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        assert row["reason"].strip(), f"{EXCEPTIONS.name}: {row} has no reason"
    return {(r["company"], r["concept"], *sorted((r["tag_a"], r["tag_b"]))): r["reason"] for r in rows}


def test_alternate_tags_agree_or_are_listed(disagreements):
    listed = _exceptions()
    unexplained = {k: v[:2] for k, v in disagreements.items() if k not in listed}
    assert not unexplained, f"alternate tags disagree by > {TOLERANCE:.1%} (fix the map or list them): {unexplained}"


def test_every_listed_exception_still_occurs(disagreements):
    stale = sorted(set(_exceptions()) - set(disagreements))
    assert not stale, f"{EXCEPTIONS.name} lists disagreements that no longer occur: {stale}"


def test_partial_tags_have_their_own_concepts():
    for tag, concept in MOVED.items():
        assert map_tag("us-gaap", tag)[0] == concept, tag
        concept_info(concept)  # a real canonical key
    assert map_tag("us-gaap", "InterestExpenseDebt") is None  # debt interest only: unmapped
    assert map_tag("us-gaap", "DepreciationDepletionAndAmortization")[0] == "depreciation_amortization"
    assert map_tag("ifrs-full", "CapitalReserve")[0] == "surplus_reserve"  # TSM's legal reserve, not capital surplus


def test_moved_tags_never_fill_the_total(disagreements):
    """Depreciation alone never becomes depreciation_amortization: an EBITDA input keeps one meaning."""
    facts = load_facts()
    da = facts[facts["concept"] == "depreciation_amortization"]
    assert len(da) > 0
    assert not da["tag"].str.endswith(":Depreciation").any()
    nonop = facts[facts["concept"] == "nonoperating_income"]
    assert not nonop["tag"].str.endswith(":OtherNonoperatingIncomeExpense").any()


def test_inventory_parts_add_up():
    """Where a filing tags its inventories line and its parts for one date (NVIDIA's inventory note, Texas Instruments'
    balance sheet), the parts add up to the line: they are a complete breakdown, so a filing that shows only the parts
    (Safeway, Kellogg's 10-Qs, Con Edison) has their sum as its inventory (facts.with_inventory_parts)."""
    facts = load_facts(latest_only=False)
    inventory = facts[facts["concept"] == "inventory"].assign(bare=lambda f: f["tag"].str.split(":").str[-1])
    inventory = inventory.drop_duplicates(KEYS + ["bare"])
    checked = set()
    for key, group in inventory.groupby(KEYS):
        whole = group[group["bare"] == "InventoryNet"]["value"]
        parts = group[group["bare"].isin(INVENTORY_PARTS)]["value"]
        if len(whole) and len(parts):
            assert abs(parts.sum() - whole.iloc[0]) <= TOLERANCE * abs(whole.iloc[0]), (key, parts.sum(), whole.iloc[0])
            checked.add(key[0])
    assert checked == {"NVDA", "TXN"}
    selected = load_facts()
    kept = selected[(selected["concept"] == "inventory") & (selected["scope"] == "consolidated")]
    # figures read off the balance sheets (FSDS num.txt; gap audit): Safeway "Merchandise inventories" at 2009-06-30 (FSDS dates),
    # Kellogg 223 + 610 M at 2009-06-30, Con Edison 39 + 164 + 152 M at 2009-12-31
    for company, end, value in (("SWY", "2009-06-30", 2_639_400_000), ("K", "2009-06-30", 833_000_000), ("ED", "2009-12-31", 355_000_000)):
        row = kept[(kept["company"] == company) & (kept["end"] == end)]
        assert row["value"].tolist() == [value], (company, end, row[["value", "tag", "adjustment"]].to_dict("records"))
    assert not kept[kept["company"].isin(["NVDA", "TXN"])]["tag"].str.endswith(INVENTORY_PARTS).any()
