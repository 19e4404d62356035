"""The same filings in another row order give the same cells, notes and answers.

    python -m pytest -q tests/test_fidelity_row_order.py

A row-order audit (2026-12-04: the embedded raw facts shuffled three times and reversed, every store cell and 484 k
computes compared) found two places where the input's order decided: a balance a few days off its report's end
against one filing's balance at that end, and the filing a same-line note names. Expected figures are read from the
filer's companyfacts JSON, not from the code under test.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ledgerlm.synth.statements.facts import select_latest
from ledgerlm.synth.statements.periods import ReportKey
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore

SEC = Path(__file__).resolve().parents[1] / "synth" / "data" / "sec" / "companyfacts"


def _orders(ticker: str, file: str):
    raw = load_facts([str(SEC / file)], latest_only=False)
    return {"as loaded": raw, "reversed": raw.iloc[::-1].reset_index(drop=True),
            "shuffled": raw.sample(frac=1, random_state=7).reset_index(drop=True)}


def test_a_balance_at_the_report_end_beats_one_a_few_days_off():
    """NVIDIA's FY2020 10-K (filed 2020-02-20) tags right-of-use assets 0 at 2019-01-27 (the FY2019 year end) and
    470 M at 2019-01-28 (the first day of FY2020, ASC 842 adopted): the FY2019 cell is the year end's figure."""
    doc = json.loads(gzip.decompress((SEC / "CIK0001045810_NVDA.json.gz").read_bytes()))
    filed = {f["end"]: f["val"] for f in doc["facts"]["us-gaap"]["OperatingLeaseRightOfUseAsset"]["units"]["USD"]
             if f["filed"] == "2020-02-20"}
    assert filed["2019-01-27"] == 0 and filed["2019-01-28"] == 470_000_000  # both in one filing
    cells = {}
    for name, raw in _orders("NVDA", "CIK0001045810_NVDA.json.gz").items():
        store = FactStore(raw)
        cells[name] = {k: (c.value, c.unit, c.source, c.filed, c.note) for k, c in store.index.cells.items()}
        cell = store.index.cells[("NVDA", "consolidated", "right_of_use_assets", ReportKey(2019, 4))]
        assert (cell.value, cell.filed) == (0.0, "2020-02-20"), name
    assert cells["as loaded"] == cells["reversed"] == cells["shuffled"]


def test_a_same_line_note_names_the_latest_filing_in_any_order():
    """TSMC's 2019 dividend income (417.3 M TWD) under the tag its 2019 20-F used for 16,606.7 M of finance income: the
    value as first filed stays, and the note names the latest later filing showing the other line, whatever the order."""
    notes = {}
    for name, raw in _orders("TSM", "CIK0001046179_TSM.json.gz").items():
        selected = select_latest(raw)
        row = selected[(selected["concept"] == "interest_income") & (selected["start"] == "2019-01-01")
                       & (selected["end"] == "2019-12-31") & (selected["unit"] == "TWD")]
        assert len(row) == 1 and row["value"].iloc[0] == pytest.approx(16_606_700_000)
        notes[name] = row["adjustment"].iloc[0]
    assert "the 2022-04-14 filing shows 417,300,000" in notes["as loaded"]
    assert notes["as loaded"] == notes["reversed"] == notes["shuffled"]
