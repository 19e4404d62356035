"""Store cache v8 column kinds (issue 17 goal 3: a store load per company visit over thousands of filers): a column
with one value is written once ("k"), codes are packed as base64 uint16 ("h"), a table header holds its row count;
decoding (the one-pass hook and the tree walk) gives equal cells in the same order, and a damaged table is a
ValueError (the loader's InputError naming the company), never a silently shorter dict.

    python -m pytest -q tests/test_synth_storecache_packed.py
"""
from __future__ import annotations

import json

import pytest

from ledgerlm.synth.finindices import storecache
from ledgerlm.synth.statements.factindex import Cell
from ledgerlm.synth.statements.periods import ReportKey


def _cells(n: int) -> dict:
    """n cells of one company and scope (one-value columns) over varied concepts, reports and labels."""
    return {("ACME", "consolidated", f"concept_{i % 7}", ReportKey(2000 + i // 28, 1 + i // 7 % 4)):
            Cell(float(i) / 3, "USD", f"acc-{i % 5}", f"Label {i % 7}", "2024-03-01", "income", "us-gaap:X")
            for i in range(n)}


def test_one_value_columns_and_packed_codes_round_trip_in_order():
    types = storecache._codec_types()
    cells = _cells(200)
    encoded = storecache._encode(cells, types)
    tag, width, rows, columns = encoded["Y"]
    kinds = [kind for kind, _ in columns]
    assert (tag, width, rows) == ("C", 4, 200)
    assert kinds[:2] == ["k", "k"] and kinds[2:4] == ["h", "h"] and kinds[4] == "v"  # company, scope; concept, report
    data = json.dumps(encoded)
    for decoded in (storecache._loads(data), storecache._decode(json.loads(data), types)):
        assert decoded == cells and list(decoded) == list(cells)


def test_many_distinct_values_keep_plain_codes():
    column = [f"v{i}" for i in range(65_537)]
    kind, (shown, codes) = storecache._encode_column(column, storecache._codec_types())
    assert kind == "u" and codes[-1] == 65_536 and len(shown) == 65_537
    assert storecache._encode_column(column[:65_536], {})[0] == "h"


@pytest.mark.parametrize("damage", ["short column", "bad base64", "bad row count"])
def test_a_damaged_table_is_an_error_not_fewer_cells(damage):
    types = storecache._codec_types()
    encoded = storecache._encode(_cells(30), types)
    body = encoded["Y"]
    if damage == "short column":
        body[3][4][1] = body[3][4][1][:-1]  # the value column loses a row
    elif damage == "bad base64":
        body[3][2][1][1] = "***"
    else:
        body[2] = -1
    with pytest.raises(ValueError):
        storecache._loads(json.dumps(encoded))


def test_report_keys_hash_as_the_dataclass_did_in_every_process():
    """ReportKey keeps its hash (every cell key holds one): the same value as the generated dataclass hash, so dict and
    set orders are unchanged, and the same after pickling (a worker's keys)."""
    import dataclasses
    import pickle

    for key in (ReportKey(2023, 4), ReportKey(1999, 1), dataclasses.replace(ReportKey(2023, 4), quarters=2)):
        assert hash(key) == hash((key.fiscal_year, key.quarters))
        again = pickle.loads(pickle.dumps(key))
        assert again == key and hash(again) == hash(key) and {key: 1}[again] == 1
    assert ReportKey(2023, 2) == dataclasses.replace(ReportKey(2023, 4), quarters=2)
