"""Per-row writing shortcuts of issue 17 (goal 2): an item's hint variants share one prompt head (written once, its JSON
escaped once), answer texts are memoised. Each shortcut must give the text the plain path gives.

    python -m pytest tests/test_synth_finindices_writing.py -q
"""
from __future__ import annotations

import os
import random

import pytest

from ledgerlm.synth.finindices import instructions
from ledgerlm.synth.finindices.answers import answer_text


def _choice(language: str, paradigm: str):
    return instructions.choose(random.Random(7), language=language, paradigm=paradigm, units=["millions"], decimals=[2],
                               table_formats=["json"])


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("names", [["Capex"], ["Capex", "Net margin"]])
def test_variants_share_the_head_and_differ_only_in_the_formula_block(language, names):
    """`user_messages` writes the head once: each variant is the prompt `user_message` writes for it alone, the
    hint variant names the formulas, the no-hint one the conventions, and nothing else differs."""
    choice = _choice(language, "single" if len(names) == 1 else "table")
    common = dict(company="X", company_name="X Co", blocks=["block one\n\nrows", "block two"], index_names=names,
                  periods=["FY2024", "FY2023Q3YTD"], kinds=["currency"] * len(names), currency="USD", scope_note=True,
                  split_text="Restated for a 4-for-1 split.")
    hints = [f"HINT-{n}" for n in names]
    conventions = [f"CONVENTION-{n}" for n in names]
    shared, both = instructions.user_messages(choice, variants=[(hints, None), (None, conventions)], **common)
    assert both == [instructions.user_message(choice, hints=hints, **common),
                    instructions.user_message(choice, hints=None, conventions=conventions, **common)]
    hinted, plain = both
    assert hinted.startswith(shared + "\n") and plain.startswith(shared + "\n")  # the head the writer escapes once
    assert all(h in hinted and h not in plain for h in hints)
    assert all(c in plain and c not in hinted for c in conventions)
    head = os.path.commonprefix([hinted, plain])
    tail = os.path.commonprefix([hinted[::-1], plain[::-1]])[::-1]
    assert "block one\n\nrows" in head and "Restated for a 4-for-1 split." in head
    assert instructions.constraint_text(choice, common["kinds"], "USD") in tail
    assert "HINT-" not in head + tail and "CONVENTION-" not in head + tail


@pytest.mark.parametrize("kind", ["currency", "percent", "ratio"])
def test_memoised_answer_text_is_the_text_of_its_key(kind):
    """Keys that compare equal (1 and 1.0, 0.0 and -0.0) share a memo entry: their texts must be equal."""
    plain = answer_text.__wrapped__
    for a, b in ((1, 1.0), (0.0, -0.0), (-0.004, -0.004)):
        answer_text.cache_clear()
        assert answer_text(a, kind, "millions", 2) == plain(a, kind, "millions", 2) == plain(b, kind, "millions", 2)
        assert answer_text(b, kind, "millions", 2) == plain(b, kind, "millions", 2)
    assert plain(-0.004, "currency", "units", 2) == "0.00"  # never '-0.00'


def test_generated_variants_hand_their_shared_head_to_the_writer():
    """A generated row carries `_shown`: the head str object its item's other variant starts with too (a row without
    a sibling variant: nothing). The shard writer takes it out before the contract check and writes the bytes of
    `sample_line` for the row without it."""
    from ledgerlm.synth.finindices import shards
    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats

    rows = Builder.from_config(SynthConfig(seed=5)).many(range(12), Stats())
    by_item: dict = {}
    for row in rows:
        by_item.setdefault(row["id"][:-2], []).append(row)
    pairs = [variants for variants in by_item.values() if len(variants) == 2]
    assert pairs
    for hinted, plain in pairs:
        (head,) = hinted["_shown"]
        assert plain["_shown"][0] is head
        assert all(r["messages"][-1]["content"].startswith(head + "\n") for r in (hinted, plain))
    pieces, _ = shards.encoded_lines(rows)
    assert all("_shown" not in row for row in rows)
    assert b"".join(pieces) == "".join(shards.sample_line(row) + "\n" for row in rows).encode("utf-8")
